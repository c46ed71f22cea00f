"""The randomize command: true answers in, randomized answers out, drawn exactly from certified integer tables with
the operating system's cryptographic generator, one or several variables, with a release manifest
(docs/theory.md section 7.5)."""

from __future__ import annotations

import argparse
import math
import sys
from fractions import Fraction
from typing import Any

import numpy as np

from .._internal.render import render_csv, render_json
from ..release.sources import design_of
from ._common import CommandError, add_format, check_out, int_arg, parse_allocation, seed_arg, with_status
from .randomize_manifest import Release, write_release
from .randomize_parts import Drawn, Stratified, categories_table, epsilon_of, folder_out
from .randomize_priors import DEFAULT_MIN_STRATUM, exact_budget_arg

SEED_WARNING = ("designer: warning: --seed makes this draw reproducible: anyone who knows the seed can undo it "
                "and recover the true answers; never release it")


def _variables(args: argparse.Namespace) -> list[tuple[str, str]]:
    """``(column, mechanism file)`` of every variable to randomize."""
    if args.variable:
        if args.mechanism or args.column:
            raise CommandError("give either --variable COLUMN=MECHANISM (repeatable) or --mechanism with --column, "
                               "not both")
        out: list[tuple[str, str]] = []
        for item in args.variable:
            column, sep, path = item.partition("=")
            if not sep or not column.strip() or not path.strip():
                raise CommandError(f"--variable {item!r} must read COLUMN=MECHANISM (a mechanism file or a problem)")
            if column.strip() in [c for c, _ in out]:
                raise CommandError(f"--variable: column {column.strip()!r} is given twice")
            out.append((column.strip(), path.strip()))
        return out
    if not (args.mechanism and args.column):
        raise CommandError("give --mechanism and --column (one variable) or --variable COLUMN=MECHANISM")
    return [(args.column, args.mechanism)]


#: A drawn table whose masses differ from the design's by at most this is the design: the rounding to counts over
#: 2^53 and the smallest certifying mixes (2^-48 of a shared row, doubled a few times) move a mass by about 1e-14;
#: a larger change is refused, or released with --repair (docs/theory.md section 7.6).
DRAWN_TOLERANCE = 1e-9


def _table(path: str, semantics: str, allocation: str, data_prior: Any = None, *, repair: bool = False) -> Drawn:
    """The certified exact table of one variable's design. A table that draws from anything but the design (a
    WLDP allocation beyond the budget, a rounding that needed a mix) is refused unless ``repair``: what is
    released is what the analyst estimates with."""
    from ..estimation.sampling import precise_distributions
    from ..exceptions import CertificationError, InvalidArgumentError
    from ..mechanism import Mechanism
    from ..privacy import worst_case
    from ..release.exact_table import exact_table

    found = design_of(path, data_prior)
    mech, epsilon, basis, exact, prior, detail = found[:6]
    if exact is not None:
        return Drawn(categories_table(mech, epsilon, exact), mech, basis, prior, detail)
    member = None
    if semantics == "wldp":
        probs = precise_distributions(mech, parse_allocation(allocation))
        member = Mechanism(probs, inputs=mech.inputs, frame=mech.frame, focal=[1 << j for j in range(mech.l)])
    witness = worst_case(member if member is not None else mech, "shafer")
    own = witness.eps
    if epsilon is None and not np.isfinite(own):
        raise CommandError(f"{path}: {witness.describe()} is infinite (a mass of 0 for one input where another has a "
                           "positive one): no budget covers it; give every answer a positive mass for every input, "
                           "or design the mechanism (designer design)")
    try:
        if member is not None:
            table = exact_table(mech, epsilon=epsilon, semantics="wldp", probabilities=member.matrix,
                                outputs=tuple(mech.frame))
        else:
            table = exact_table(mech, epsilon=epsilon, semantics="sldp")
    except (CertificationError, InvalidArgumentError) as exc:
        raise CommandError(f"{path}: {exc}") from None
    if table.mix_weight == 0 or table.max_change <= DRAWN_TOLERANCE:
        return Drawn(table, mech, basis, None, detail)
    stated = epsilon if epsilon is not None else own
    why = (f"its {allocation} allocation's precise answers have Shafer loss {own:.6g} > the budget {stated:g}"
           if member is not None else f"its masses exceed eps = {stated:g} once written as integer counts over 2^53")
    if not repair:
        fix = ("design the mechanism for WLDP (designer design PROBLEM --semantics wldp), choose an --allocation "
               "within the budget" if member is not None else "design it again (designer design)")
        raise CommandError(f"{path}: {why}: drawing within the budget would mix in {table.mix_weight:.3g} of a "
                           f"uniform row (masses moving by up to {table.max_change:.3g}), so the answers would not "
                           f"follow {path} and estimates made with it would be biased; {fix}, or pass --repair to "
                           "release the mixed channel (written beside the output; estimate and regress use it with "
                           "--manifest)")
    violation = own - stated  # the float loss of what would be drawn unmixed, minus the budget
    return Drawn(table, mech, basis, None, detail, {"why": why, "violation": violation})


#: A variable released above this loss (nats) is warned about: an answer may then be e^5 ~ 148 times likelier
#: under one true value than under another, and the randomization protects the respondent little.
HIGH_LOSS = 5.0


def variable_certificate(entry: Any, semantics: str) -> Any:
    """The certificate one variable is released with: its drawn table's (a stratified variable's: the stratum with
    the largest budget, as a respondent meets one stratum's design), its budget read as stated (a decimal as
    written: 0.1 is 1/10) and, for precise answers (``wldp``), both losses (a precise table's Walley loss is its
    Shafer loss)."""
    import dataclasses

    from ..release.noise import stated_budget
    from ..vocabulary import Loss

    table = max((d[0] for d in entry.designs.values()), key=lambda t: t.epsilon) if isinstance(entry, Stratified) \
        else entry[0]
    losses = (Loss.SHAFER, Loss.WALLEY) if semantics == "wldp" else (Loss.SHAFER,)
    return dataclasses.replace(table.certificate, losses=losses, budget=stated_budget(epsilon_of(entry)))


def variables_certificate(tables: list[Any], semantics: str) -> Any:
    """The composed certificate of a respondent's variables: each drawn independently from its own certified table,
    so the budgets add exactly (the product's certificate, Lemma 3.3 and Lemma 3.15, with no stored product to
    round)."""
    from ..release.certified import product_certificate

    return product_certificate(*(variable_certificate(entry, semantics) for entry in tables))


def cmd_randomize(args: argparse.Namespace) -> str:
    from ..release.exact_table import OsRandom, SeededRandom
    from ..vocabulary import Loss
    from .randomize_priors import data_priors, stratified

    if args.seed is not None and not args.simulation:
        raise CommandError("--seed lets anyone who knows the seed undo the draw: add --simulation to say this is a "
                           "simulation, or leave --seed out (the default draws from the operating system's CSPRNG)")
    if args.invariant_prior == "data" and args.prior_budget is None:
        raise CommandError("--invariant-prior data publishes a prior computed from the file being released: give "
                           "--prior-budget EPS0, the budget (nats) its noisy counts spend (added to the composed "
                           "loss), or keep the problem's prior (--invariant-prior problem)")
    if args.prior_budget is not None and args.invariant_prior != "data":
        raise CommandError("--prior-budget is the budget of a prior read from the file: give it with "
                           "--invariant-prior data")
    variables = _variables(args)
    if args.scheduler and not folder_out(args):
        raise CommandError("--scheduler randomizes a Parquet dataset part by part on the cluster: give the dataset's "
                           "folder and a new folder as --out (without .csv or .parquet)")
    manifest = args.manifest or f"{args.out}.manifest.json"
    designs_dir = args.designs or f"{args.out}.designs"
    inputs = [args.answers, *(p for _, p in variables)]
    check_out(args.out, inputs, force=False, advice="randomize never replaces a file (choose another name)")
    check_out(manifest, [*inputs, args.out], force=False, advice="randomize never replaces a file (--manifest)")
    if args.strata:
        check_out(designs_dir, [*inputs, args.out, manifest], force=False,
                  advice="randomize never replaces a file (--designs)")
    keep = [k.strip() for k in (args.keep or "").split(",") if k.strip()]
    randomized = [c for c, _ in variables]
    for k in keep:
        if k in randomized:
            raise CommandError(f"--keep names {k!r}, a column being randomized: its true values are never written out")
    prior_release = None
    strata_designs: dict[str, Stratified] = {}
    priors: dict[str, Any] = {}
    if args.strata:
        strata_designs, prior_release = stratified(args, variables)
    elif args.invariant_prior == "data":
        priors, prior_release = data_priors(args, variables)
    tables: list[Any] = [strata_designs.get(column) or _table(path, args.semantics, args.allocation,
                                                              priors.get(column), repair=args.repair)
                         for column, path in variables]
    drawn_files = _drawn_paths(args, variables, tables, [*inputs, args.out, manifest, designs_dir])
    composed_certificate = variables_certificate(tables, args.semantics)
    totals = {loss: composed_certificate.exact_budget if Loss(loss) in composed_certificate.losses else Fraction(0)
              for loss in ("shafer", "walley")}
    if prior_release is not None:
        for loss in totals:
            totals[loss] += prior_release.epsilon if (loss == "shafer" or args.semantics == "wldp") else 0
    composed = max(totals.values())
    if args.budget is not None and composed > args.budget:
        summands = [f"{epsilon_of(t):.4g}" for t in tables]
        if prior_release is not None:
            summands.append(f"the prior's {float(prior_release.epsilon):.4g}")
        raise CommandError(f"the release composes to {float(composed):.6g} nats per respondent (the sum of "
                           f"{', '.join(summands)}), above --budget {float(args.budget):g}")
    warnings = [f"column {c!r} is released at {epsilon_of(t):.4g} nats, above {HIGH_LOSS:g}: an answer may be "
                f"{math.exp(min(epsilon_of(t), 700)):.3g} times likelier under one true value than under another, "
                "so the randomization protects little"
                for (c, _), t in zip(variables, tables) if epsilon_of(t) > HIGH_LOSS]
    warnings += [f"column {c!r} is drawn from a repaired channel, not from {p}: {t.repair['why']}; the drawn "
                 f"channel is {drawn_files[c]} (estimate/regress --manifest {manifest} use it)"
                 for (c, p), t in zip(variables, tables) if isinstance(t, Drawn) and t.repair]
    for line in warnings:
        print(f"designer: warning: {line}", file=sys.stderr)
    if args.seed is not None:
        print(SEED_WARNING, file=sys.stderr)
        source: Any = SeededRandom(args.seed)
    else:
        source = OsRandom()
    written = [*keep, *([args.strata] if args.strata and args.strata not in keep else [])]
    names = [*written, *(("response",) if not args.variable else randomized)]
    columns = list(dict.fromkeys([*written, *randomized]))
    release = Release(args, variables, tables, totals, prior_release, warnings, drawn_files)
    n, files, source_name = write_release(args, manifest, designs_dir, release, source, columns=columns,
                                          written=written, names=names)
    summary = {"n": n, "out": args.out, "manifest": manifest, "random_source": source_name,
               "epsilon_total": float(composed), "epsilon_shafer_total": float(totals["shafer"]),
               "epsilon_walley_total": float(totals["walley"]) if args.semantics == "wldp" else None,
               "prior_budget": float(prior_release.epsilon) if prior_release is not None else None,
               "variables": {c: epsilon_of(t) for (c, _), t in zip(variables, tables)},
               "drawn_mechanisms": drawn_files or None, "warnings": warnings,
               "strata": {c: {"column": args.strata, "designs": f} for c, f in files.items()} or None}
    if args.format == "json":
        return render_json(summary)
    if args.format == "csv":
        return render_csv(["column", "stratum", "mechanism", "epsilon", "sha256"],
                          [[c, s, p if s == "" else files[c][s], t.epsilon, t.sha256]
                           for (c, p), entry in zip(variables, tables) for s, t in _each_table(entry)])
    lines = [f"randomized {n} rows into {args.out} ({source_name}); manifest {manifest}"]
    for (c, p), entry in zip(variables, tables):
        for s, t in _each_table(entry):
            where = f"{c}: {p}" if s == "" else f"{c} in stratum {s}: {files[c][s]}"
            lines.append(f"  {where}, within eps = {t.epsilon:.6g} ({t.arithmetic}, SHA-256 {t.sha256[:16]}...)")
        if c in drawn_files:
            lines.append(f"  {c}: drawn from the repaired channel {drawn_files[c]} (not {p})")
    if prior_release is not None:
        lines.append(f"  the invariant priors: the file's counts with discrete Laplace noise, within eps0 = "
                     f"{float(prior_release.epsilon):.6g} (manifest: prior_release, noisy_counts)")
    lines.append(f"composed loss per respondent: {float(composed):.6g} nats (losses add across variables and the "
                 "published prior, Lemma 3.3 and Lemma 3.15)")
    for column, paths in files.items():
        mechanisms = " ".join(f"--mechanism {s}={f}" for s, f in paths.items())
        lines.append(f"analyse {column} by stratum (each stratum its own distribution): designer regress {args.out} "
                     f"--formula '{column} ~ C({args.strata})' --group {args.strata} {mechanisms}")
    return with_status("\n".join(lines), 0)


def _drawn_paths(args: argparse.Namespace, variables: list[tuple[str, str]], tables: list[Any], taken: list[str]
                 ) -> dict[str, str]:
    """With --repair, the new mechanism file each repaired variable's drawn channel goes to (``OUT.COLUMN.drawn.json``),
    refused before any work when it exists."""
    import re

    out: dict[str, str] = {}
    for (column, _), entry in zip(variables, tables):
        if isinstance(entry, Drawn) and entry.repair:
            stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", column).strip(".") or "column"
            path = f"{args.out}.{stem}.drawn.json"
            check_out(path, [*taken, *out.values()], force=False, advice="randomize never replaces a file")
            out[column] = path
    return out


def _each_table(entry: Any) -> list[tuple[str, Any]]:
    """``(stratum, table)`` of a variable: one pair with stratum ``""`` unless it is stratified."""
    if isinstance(entry, Stratified):
        return [(s, d[0]) for s, d in entry.designs.items()]
    return [("", entry[0])]


def _configure_randomize(p: argparse.ArgumentParser) -> None:
    p.add_argument("answers", help="file of true answers, one respondent per row: CSV, Parquet, Arrow, SPSS (.sav), "
                                   "Stata (.dta) or SAS (.sas7bdat, .xpt), value labels read as words; or a Parquet "
                                   "dataset folder")
    p.add_argument("--mechanism", help="mechanism CSV or JSON file (one variable, with --column)")
    p.add_argument("--column", help="column of the true answers (never written out)")
    p.add_argument("--variable", action="append", metavar="COLUMN=MECHANISM",
                   help="randomize COLUMN with MECHANISM (a mechanism file or a TOML problem, designed on the fly); "
                        "repeatable: the columns are replaced by their randomized values")
    p.add_argument("--out", required=True, help="new file of randomized responses, by its suffix CSV, Parquet, Arrow, "
                                               ".sav or .dta (kept columns keep their types and value labels; an "
                                               "existing file is refused); for a dataset folder, a new folder of "
                                               "parts (no suffix)")
    p.add_argument("--keep", help="comma-separated columns to copy to the output (not a randomized column)")
    p.add_argument("--invariant-prior", choices=("problem", "data"), default="problem",
                   help="invariant designs (a TOML problem with invariant = true): keep the problem's prior "
                        "(default), or a prior read from the file's counts with discrete Laplace noise (needs "
                        "--prior-budget; only the noisy counts are published, docs/theory.md section 7.7)")
    p.add_argument("--prior-budget", type=exact_budget_arg, metavar="EPS0",
                   help="with --invariant-prior data: the budget (nats) the noisy category counts spend, split "
                        "evenly over the invariant columns; added to the composed loss")
    p.add_argument("--min-stratum", type=int_arg(1, 10**12), default=DEFAULT_MIN_STRATUM, metavar="N",
                   help="with --invariant-prior data: refuse a stratum (or, without --strata, a file) of fewer rows "
                        f"(default {DEFAULT_MIN_STRATUM})")
    p.add_argument("--repair", action="store_true",
                   help="release a channel that differs from the design (a WLDP allocation beyond the budget, a "
                        "mix the rounding needed) instead of refusing: the drawn channel is written to "
                        "OUT.COLUMN.drawn.json and listed in the manifest (estimate/regress --manifest use it)")
    p.add_argument("--strata", metavar="COLUMN",
                   help="invariant designs: one design per stratum of COLUMN, each keeping its stratum's prior (the "
                        "problem's [strata] table, or the stratum's rows with --invariant-prior data); COLUMN is "
                        "written to the output and the stratum designs to --designs, for estimate --group")
    p.add_argument("--designs", metavar="FOLDER",
                   help="with --strata: new folder for the stratum designs (JSON; default OUT.designs)")
    p.add_argument("--budget", type=exact_budget_arg,
                   help="refuse a release whose composed loss per respondent exceeds this (nats; a decimal or a "
                        "fraction such as 7/3, compared exactly)")
    p.add_argument("--manifest", help="release manifest (JSON; default OUT.manifest.json)")
    p.add_argument("--seed", type=seed_arg, help="with --simulation only: a reproducible draw (anyone with the seed "
                                                 "can undo it); default: the operating system's CSPRNG")
    p.add_argument("--simulation", action="store_true", help="this is a simulation, not a release (allows --seed)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="a Dask scheduler (tcp://host:8786): randomize a Parquet dataset folder part by part on the "
                        "cluster into the new folder --out (a seeded simulation: one child of the seed per part)")
    p.add_argument("--semantics", choices=("sldp", "wldp"), default="sldp",
                   help="sldp: report focal sets; wldp: report precise answers (default sldp)")
    p.add_argument("--allocation", default="uniform",
                   help="wldp: member of the credal set, 'uniform' or lambda in [0, 1] (default uniform)")
    add_format(p)
