"""The randomize command: parses its flags, calls :func:`designer.verbs.randomize_verb.randomize` and renders the
release it returns (docs/theory.md section 7.5)."""

from __future__ import annotations

import argparse
import sys

from ..release.randomize_priors import DEFAULT_MIN_STRATUM, exact_budget_arg
from ._common import CommandError, add_format, int_arg, seed_arg


def _once(values: list[str] | None, flag: str) -> str | None:
    """A flag that names one variable's design or column, refused when repeated (several variables are given with
    --variable COLUMN=MECHANISM, each pair on one flag)."""
    if not values:
        return None
    if len(values) > 1:
        raise CommandError(f"{flag} is given {len(values)} times: it names one variable; randomize several with "
                           "--variable COLUMN=MECHANISM (repeatable, each column with its design)")
    return values[0]


def cmd_randomize(args: argparse.Namespace) -> str:
    from ..results import render
    from ..verbs.randomize_verb import randomize

    mechanism, column = _once(args.mechanism, "--mechanism"), _once(args.column, "--column")
    result = randomize(args.answers, mechanism, out=args.out, column=column, variable=args.variable,
                       keep=args.keep, invariant_prior=args.invariant_prior, prior_budget=args.prior_budget,
                       min_stratum=args.min_stratum, repair=args.repair, strata=args.strata, designs=args.designs,
                       budget=args.budget, manifest=args.manifest, seed=args.seed, simulation=args.simulation,
                       scheduler=args.scheduler, semantics=args.semantics, allocation=args.allocation,
                       keep_order=args.keep_order, ledger=args.ledger, budget_cap=args.budget_cap)
    for line in result.warnings:
        print(f"designer: warning: {line}", file=sys.stderr)
    return render(result, args.format)


def _configure_randomize(p: argparse.ArgumentParser) -> None:
    p.add_argument("answers", help="file of true answers, one respondent per row: CSV, Parquet, Arrow, SPSS (.sav), "
                                   "Stata (.dta) or SAS (.sas7bdat, .xpt), value labels read as words; or a Parquet "
                                   "dataset folder")
    p.add_argument("--mechanism", action="append",
                   help="mechanism CSV or JSON file (one variable, with --column; given once)")
    p.add_argument("--column", action="append", help="column of the true answers (never written out; given once)")
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
    p.add_argument("--ledger", metavar="PATH",
                   help="budget ledger recording the release (default designer-ledger.json beside the input): a "
                        "further release of the same data states the composed loss (the losses add)")
    p.add_argument("--budget-cap", type=exact_budget_arg, metavar="EPS",
                   help="refuse a release that would bring its data's composed loss in the ledger past EPS (nats, "
                        "compared exactly)")
    p.add_argument("--seed", type=seed_arg, help="with --simulation only: a reproducible draw (anyone with the seed "
                                                 "can undo it); default: the operating system's CSPRNG")
    p.add_argument("--simulation", action="store_true", help="this is a simulation, not a release (allows --seed)")
    p.add_argument("--keep-order", action="store_true",
                   help="write the rows in the input's order (default: a uniformly random order; the order of a file "
                        "is a function of its data, so this is warned about on stderr and in the manifest)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="a Dask scheduler (tcp://host:8786): randomize a Parquet dataset folder part by part on the "
                        "cluster into the new folder --out (a seeded simulation: one child of the seed per part)")
    p.add_argument("--semantics", choices=("sldp", "wldp"), default="sldp",
                   help="sldp: report focal sets; wldp: report precise answers (default sldp)")
    p.add_argument("--allocation", default="uniform",
                   help="wldp: member of the credal set, 'uniform' or lambda in [0, 1] (default uniform)")
    add_format(p)
