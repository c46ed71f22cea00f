"""The randomize command: true answers in, randomized answers out, drawn exactly from certified integer tables with
the operating system's cryptographic generator, one or several variables, with a release manifest
(docs/theory.md section 7.5)."""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import sys
from typing import Any, NamedTuple

import numpy as np

from .._render import render_csv, render_json
from ._common import CommandError, add_format, check_out, epsilon_arg, parse_allocation, seed_arg, with_status
from ._stream import is_columnar, read_chunks
from .randomize_parts import Stratified, randomize_dataset, write_randomized

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


class Design(NamedTuple):
    """A design to draw from: the mechanism, the budget it states (None: none stated), where that budget comes
    from, and an invariant design's exact table (counts, per-row denominators; None for other designs)."""

    mechanism: Any
    epsilon: float | None
    basis: str
    exact: tuple[Any, Any] | None = None
    prior: tuple[Any, ...] | None = None


def design_of(path: str, data_prior: Any = None) -> Design:
    """The design a file or a TOML problem (designed on the fly; an invariant one keeping ``data_prior``, exact
    fractions, when given) gives."""
    from ..design import design
    from ..design.invariant import design_invariant
    from ..design.problem_toml import load_problem
    from ..release import open_mechanism_file

    if path.endswith(".toml"):
        problem = load_problem(path)
        result = design(problem) if data_prior is None else design_invariant(problem, prior=data_prior)
        if result.table is None:
            return Design(result.mechanism, problem.epsilon, f"the problem's budget ({path})")
        table = result.table
        return Design(result.mechanism, problem.epsilon, f"the problem's budget ({path})",
                      (table.counts, table.denominators), table.prior)
    file = open_mechanism_file(path)
    if file.release is not None:
        return Design(file.mechanism, file.release.epsilon, "the file's release", file.exact, file.prior)
    return Design(file.mechanism, None, "the mechanism's own loss", file.exact, file.prior)


def _table(path: str, semantics: str, allocation: str, data_prior: Any = None) -> tuple[Any, Any, str, Any]:
    """The certified exact table of one variable's design, its mechanism, where its budget comes from, and the
    prior an invariant design keeps (None for others). An invariant design releases the categories themselves
    (``b``, not ``{b}``: PRAM's microdata)."""
    from ..exact_table import exact_table
    from ..sampling import precise_distributions

    mech, epsilon, basis, exact, prior = design_of(path, data_prior)
    if exact is not None:
        return _categories_table(mech, epsilon, exact), mech, basis, prior
    if semantics == "wldp":
        probs = precise_distributions(mech, parse_allocation(allocation))
        return exact_table(mech, epsilon=epsilon, semantics="wldp", probabilities=probs,
                           outputs=tuple(mech.frame)), mech, basis, None
    return exact_table(mech, epsilon=epsilon, semantics="sldp"), mech, basis, None


def _categories_table(mech: Any, epsilon: float | None, exact: tuple[Any, Any]) -> Any:
    """An invariant design's certified table, releasing the categories themselves (``b``, not ``{b}``)."""
    from ..exact_table import exact_table

    table = exact_table(mech, epsilon=epsilon, semantics="sldp", exact=exact)
    return dataclasses.replace(table, outputs=tuple(s[0] for s in mech.focal_sets))


def _stratified(args: argparse.Namespace, variables: list[tuple[str, str]]) -> dict[str, Stratified]:
    """``--strata COLUMN``: every invariant variable (a TOML problem with ``invariant = true``) designed once per
    stratum of the file, each stratum's prior from the problem's ``[strata]`` table or, with ``--invariant-prior
    data``, from that stratum's own rows (a warning). One pass over the file finds the strata (and counts)."""
    from fractions import Fraction

    from ..design.invariant import design_strata
    from ..design.problem_toml import load_problem
    from .survey_commands import _codes

    problems = {column: load_problem(path) for column, path in variables if path.endswith(".toml")}
    wanted = {column: problem for column, problem in problems.items() if problem.invariant}
    if not wanted:
        raise CommandError(f"--strata designs one invariant mechanism per stratum, but no variable is a TOML problem "
                           f"with invariant = true ({', '.join(p for _, p in variables)})")
    if args.strata in [c for c, _ in variables]:
        raise CommandError(f"--strata names {args.strata!r}, a column being randomized; name the stratum column")
    first: dict[str, int] = {}
    counts: dict[tuple[str, str], Any] = {}
    from_data = args.invariant_prior == "data"
    for line, chunk in read_chunks(args.answers, [args.strata, *(wanted if from_data else [])]):
        strata = chunk[args.strata].to_numpy(dtype=object)
        if np.any(strata == ""):
            row = int(np.flatnonzero(strata == "")[0])
            raise CommandError(f"{args.answers}: line {line + row}: no stratum in column {args.strata!r}; every "
                               "row needs one (its design is chosen by it)")
        values, where = np.unique(strata, return_index=True)  # each stratum's first row, not a loop over rows
        for value, i in sorted(zip(values.tolist(), where.tolist()), key=lambda pair: pair[1]):
            first.setdefault(value, line + i)
        for column, problem in (wanted.items() if from_data else ()):
            codes = _codes(chunk[column], problem.inputs, args.answers, line,
                           f"an input of the problem (column {column!r})")
            for value in first:
                tally = counts.setdefault((column, value), np.zeros(problem.k, dtype=np.int64))
                tally += np.bincount(codes[strata == value], minlength=problem.k)
    out = {}
    for column, problem in wanted.items():
        path = dict(variables)[column]
        if from_data:
            empty = {s: [x for x, n in zip(problem.inputs, counts[(column, s)]) if n == 0] for s in first}
            bad = next((s for s, e in empty.items() if e), None)
            if bad is not None:
                raise CommandError(f"--invariant-prior data: stratum {bad!r} has no {empty[bad]} in column "
                                   f"{column!r}; an invariant design needs every category present in every stratum "
                                   f"(give the strata's priors in {path}'s [strata] table)")
            priors: dict[str, Any] = {s: [Fraction(int(n), int(counts[(column, s)].sum()))
                                          for n in counts[(column, s)]] for s in first}
            basis = f"the problem's budget ({path}), each stratum's prior from the released file"
        else:
            known = dict(problem.strata)
            if not known:
                raise CommandError(f"{path} has no [strata] table: give each stratum's prior there (e.g. "
                                   f"{next(iter(first))} = [...]), or use --invariant-prior data")
            missing = [s for s in first if s not in known]
            if missing:
                raise CommandError(f"{args.answers}: column {args.strata!r} holds {missing[0]!r} (from line "
                                   f"{first[missing[0]]}), which {path} has no prior for; add it to its [strata] "
                                   "table, or use --invariant-prior data")
            priors = {s: known[s] for s in first}
            basis = f"the problem's budget ({path}), each stratum's prior from its [strata] table"
        designs = {}
        for stratum, result in design_strata(problem, priors).items():
            exact = (result.table.counts, result.table.denominators)
            designs[stratum] = (_categories_table(result.mechanism, problem.epsilon, exact), result.mechanism, basis,
                                result.table.prior, result)
        out[column] = Stratified(designs)
    if from_data:
        print(f"designer: warning: {DATA_PRIOR_WARNING} (each stratum's)", file=sys.stderr)
    return out


def cmd_randomize(args: argparse.Namespace) -> str:
    from .._io import atomic_writer
    from ..exact_table import OsRandom, SeededRandom

    if args.seed is not None and not args.simulation:
        raise CommandError("--seed lets anyone who knows the seed undo the draw: add --simulation to say this is a "
                           "simulation, or leave --seed out (the default draws from the operating system's CSPRNG)")
    variables = _variables(args)
    if args.scheduler and not _folder_out(args):
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
    stratified = _stratified(args, variables) if args.strata else {}
    priors = _data_priors(args, variables) if args.invariant_prior == "data" and not args.strata else {}
    tables: list[Any] = [stratified.get(column) or _table(path, args.semantics, args.allocation, priors.get(column))
                         for column, path in variables]
    totals = {"shafer": 0.0, "walley": 0.0}
    for entry in tables:
        for loss in (("shafer", "walley") if args.semantics == "wldp" else ("shafer",)):
            totals[loss] += _epsilon(entry)
    composed = max(totals.values())
    if args.budget is not None and composed > args.budget:
        raise CommandError(f"the release composes to {composed:.6g} nats per respondent (the sum of "
                           f"{', '.join(f'{_epsilon(t):.4g}' for t in tables)}), above --budget {args.budget:g}")
    if args.seed is not None:
        print(SEED_WARNING, file=sys.stderr)
        source: Any = SeededRandom(args.seed)
    else:
        source = OsRandom()
    written = [*keep, *([args.strata] if args.strata and args.strata not in keep else [])]
    names = [*written, *(("response",) if not args.variable else randomized)]
    columns = list(dict.fromkeys([*written, *randomized]))
    parts: list[dict[str, Any]] | None = None
    if _folder_out(args):
        n, parts, source_name = randomize_dataset(
            args.answers, args.out, scheduler=args.scheduler, seed=args.seed, columns=columns, written=written,
            names=names, variables=variables, tables=tables, strata=args.strata)
        source = dataclasses.replace(source, name=source_name) if isinstance(source, SeededRandom) else source
    else:
        n = write_randomized(args.answers, args.out, source, columns=columns, written=written, names=names,
                             variables=variables, tables=tables, strata=args.strata)
    files = _write_stratum_designs(designs_dir, stratified) if stratified else {}
    record = _manifest(args, variables, tables, totals, source.name, n, files)
    if parts is not None:
        record["parts"] = parts
    with atomic_writer(manifest, overwrite=False) as binary:
        binary.write((json.dumps(record, indent=2) + "\n").encode())
    summary = {"n": n, "out": args.out, "manifest": manifest, "random_source": source.name,
               "epsilon_total": composed, "epsilon_shafer_total": totals["shafer"],
               "epsilon_walley_total": totals["walley"] if args.semantics == "wldp" else None,
               "variables": {c: _epsilon(t) for (c, _), t in zip(variables, tables)},
               "strata": {c: {"column": args.strata, "designs": f} for c, f in files.items()} or None}
    if args.format == "json":
        return render_json(summary)
    if args.format == "csv":
        return render_csv(["column", "stratum", "mechanism", "epsilon", "sha256"],
                          [[c, s, p if s == "" else files[c][s], t.epsilon, t.sha256]
                           for (c, p), entry in zip(variables, tables) for s, t in _each_table(entry)])
    lines = [f"randomized {n} rows into {args.out} ({source.name}); manifest {manifest}"]
    for (c, p), entry in zip(variables, tables):
        for s, t in _each_table(entry):
            where = f"{c}: {p}" if s == "" else f"{c} in stratum {s}: {files[c][s]}"
            lines.append(f"  {where}, within eps = {t.epsilon:.6g} ({t.arithmetic}, SHA-256 {t.sha256[:16]}...)")
    lines.append(f"composed loss per respondent: {composed:.6g} nats (losses add across variables, Lemma 3.3 "
                 "and Lemma 3.15)")
    for column, paths in files.items():
        mechanisms = " ".join(f"--mechanism {s}={f}" for s, f in paths.items())
        lines.append(f"analyse {column} by stratum (each stratum its own distribution): designer regress {args.out} "
                     f"--formula '{column} ~ C({args.strata})' --group {args.strata} {mechanisms}")
    return with_status("\n".join(lines), 0)


def _folder_out(args: argparse.Namespace) -> bool:
    """A dataset folder randomized into a new folder of parts (``--out`` without a CSV or Parquet suffix)."""
    import os

    return os.path.isdir(args.answers) and not (is_columnar(args.out) or args.out.lower().endswith(".csv"))


def _epsilon(entry: Any) -> float:
    return float(entry.epsilon if isinstance(entry, Stratified) else entry[0].epsilon)


def _each_table(entry: Any) -> list[tuple[str, Any]]:
    """``(stratum, table)`` of a variable: one pair with stratum ``""`` unless it is stratified."""
    if isinstance(entry, Stratified):
        return [(s, d[0]) for s, d in entry.designs.items()]
    return [("", entry[0])]


def _write_stratum_designs(folder: str, stratified: dict[str, Stratified]) -> dict[str, dict[str, str]]:
    """Each stratum's design as a JSON mechanism file (with its release and exact table) in a new ``folder``,
    made whole in a temporary folder beside it and renamed into place (nothing left when interrupted)."""
    import os
    import re

    from .._io import atomic_folder
    from ._common import write_mechanism

    names: dict[str, dict[str, str]] = {}
    with atomic_folder(folder, prefix=".designs-") as work:
        used: set[str] = set()
        for column, entry in stratified.items():
            for stratum, (_, mech, _, _, result) in entry.designs.items():
                stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{column}-{stratum}").strip(".") or "stratum"
                name, i = f"{stem}.json", 1
                while name.lower() in used:
                    i += 1
                    name = f"{stem}-{i}.json"
                used.add(name.lower())
                write_mechanism(mech, os.path.join(work, name), result.problem, result.certificate, False,
                                result.table)
                names.setdefault(column, {})[stratum] = os.path.join(folder, name)
    return names


#: What --invariant-prior data costs, on stderr and in the manifest.
DATA_PRIOR_WARNING = ("the invariant design keeps the distribution of the very file being released: its privacy "
                      "certificate holds given that marginal, which the release then reveals exactly in expectation")


def _data_priors(args: argparse.Namespace, variables: list[tuple[str, str]]) -> dict[str, Any]:
    """Each invariant variable's prior from the file (a TOML problem with ``invariant = true``; the others keep
    their designs): the column's counts per category, as exact fractions."""
    from fractions import Fraction

    from ..design.problem_toml import load_problem

    wanted = {}
    for column, path in variables:
        problem = load_problem(path) if path.endswith(".toml") else None
        if problem is not None and problem.invariant:
            wanted[column] = problem.inputs
    if not wanted:
        raise CommandError(f"--invariant-prior data: no variable is a TOML problem with invariant = true "
                           f"({', '.join(p for _, p in variables)}; a design file keeps the prior it was designed for)")
    counts = {column: dict.fromkeys(inputs, 0) for column, inputs in wanted.items()}
    for line, chunk in read_chunks(args.answers, list(wanted)):
        for column, tally in counts.items():
            for value, n in chunk[column].astype(str).str.strip().value_counts().items():
                if value not in tally:
                    raise CommandError(f"{args.answers}: column {column!r} holds {value!r} (from line {line}), "
                                       f"not an input of the problem {list(tally)}")
                tally[value] += int(n)
    print(f"designer: warning: {DATA_PRIOR_WARNING}", file=sys.stderr)
    out = {}
    for column, tally in counts.items():
        total = sum(tally.values())
        if total == 0 or min(tally.values()) == 0:
            empty = [x for x, n in tally.items() if n == 0]
            raise CommandError(f"--invariant-prior data: column {column!r} has no {empty or 'rows'}; an invariant "
                               "design needs every category present (give the prior in the problem)")
        out[column] = [Fraction(tally[x], total) for x in wanted[column]]
    return out


def _invariance(args: argparse.Namespace, prior: Any, mech: Any) -> dict[str, Any]:
    """The manifest's record of an invariant design: the prior kept, exactly, and where it came from."""
    if prior is None:
        return {}
    record = {"invariant_prior": {x: f"{p.numerator}/{p.denominator}" for x, p in zip(mech.inputs, prior)},
              "invariant_prior_from": "the problem's [strata] table" if args.strata else "the problem"}
    if args.invariant_prior == "data":
        record.update(invariant_prior_from="the released file" + (" (the stratum's rows)" if args.strata else ""),
                      invariant_warning=DATA_PRIOR_WARNING)
    return record


def _manifest(args: argparse.Namespace, variables: list[tuple[str, str]], tables: list[Any], totals: dict[str, float],
              source: str, n: int, files: dict[str, dict[str, str]]) -> dict[str, Any]:
    from .. import __version__

    def variable(column: str, path: str, entry: Any) -> dict[str, Any]:
        if isinstance(entry, Stratified):
            return {"column": column, "design": path, "epsilon": entry.epsilon, "strata_column": args.strata,
                    "strata": [{"stratum": s, "design_file": files[column][s], "budget_from": basis,
                                "epsilon": t.epsilon, "sha256": t.sha256, "outputs": list(t.outputs),
                                "certificate": t.certificate_record(), **_invariance(args, prior, mech)}
                               for s, (t, mech, basis, prior, _) in entry.designs.items()]}
        t, mech, basis, prior = entry
        return {"column": column, "design": path, "budget_from": basis, "epsilon": t.epsilon, "sha256": t.sha256,
                "outputs": list(t.outputs), "certificate": t.certificate_record(), **_invariance(args, prior, mech)}

    return {
        "designer": __version__, "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "random_source": source, "rows": n, "semantics": args.semantics,
        "variables": [variable(c, p, entry) for (c, p), entry in zip(variables, tables)],
        "epsilon_total": max(totals.values()), "epsilon_shafer_total": totals["shafer"],
        "epsilon_walley_total": totals["walley"] if args.semantics == "wldp" else None,
        "note": "losses add across the variables of one respondent (Lemma 3.3, Lemma 3.15); a stratified variable "
                "randomizes each respondent by its stratum's design only; no seed is recorded",
    }


def _configure_randomize(p: argparse.ArgumentParser) -> None:
    p.add_argument("answers", help="CSV or Parquet file of true answers (one respondent per row), or a Parquet "
                                   "dataset folder")
    p.add_argument("--mechanism", help="mechanism CSV or JSON file (one variable, with --column)")
    p.add_argument("--column", help="column of the true answers (never written out)")
    p.add_argument("--variable", action="append", metavar="COLUMN=MECHANISM",
                   help="randomize COLUMN with MECHANISM (a mechanism file or a TOML problem, designed on the fly); "
                        "repeatable: the columns are replaced by their randomized values")
    p.add_argument("--out", required=True, help="new CSV or Parquet file of randomized responses (an existing file "
                                               "is refused); for a dataset folder, a new folder of parts (no suffix)")
    p.add_argument("--keep", help="comma-separated columns to copy to the output (not a randomized column)")
    p.add_argument("--invariant-prior", choices=("problem", "data"), default="problem",
                   help="invariant designs (a TOML problem with invariant = true): keep the problem's prior "
                        "(default), or the file's own distribution of the column (a warning: the certificate then "
                        "holds given that marginal, and the manifest says so)")
    p.add_argument("--strata", metavar="COLUMN",
                   help="invariant designs: one design per stratum of COLUMN, each keeping its stratum's prior (the "
                        "problem's [strata] table, or the stratum's rows with --invariant-prior data); COLUMN is "
                        "written to the output and the stratum designs to --designs, for estimate --group")
    p.add_argument("--designs", metavar="FOLDER",
                   help="with --strata: new folder for the stratum designs (JSON; default OUT.designs)")
    p.add_argument("--budget", type=epsilon_arg,
                   help="refuse a release whose composed loss per respondent exceeds this (nats)")
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
