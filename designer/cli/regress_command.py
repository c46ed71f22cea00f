"""The regress command: parse the flags, call :func:`designer.regress` (designer/verbs/regress_verb.py) and render
its result (:func:`designer.results.render`)."""

from __future__ import annotations

import argparse

from ._common import (
    EXIT_FIT,
    add_format,
    add_group_arguments,
    add_survey_arguments,
    int_arg,
    level_arg,
    mechanism_files,
    with_status,
)


def cmd_regress(args: argparse.Namespace) -> str:
    from ..results import FitStatus, render
    from ..verbs.regress_verb import regress

    files = mechanism_files(args.mechanism or [])
    mechanism = files if len(files) > 1 or "" not in files else files[""]
    args.mechanism = ", ".join(f"{name}={path}" if name else path for name, path in files.items())  # error lines
    fit = regress(args.formula, args.data, mechanism or None, manifest=args.manifest, reference=args.reference,
                  semantics=args.semantics, allocation=args.allocation, method=args.method, level=args.level,
                  penalty=args.penalty, missing=args.missing, weights=args.weights, weight_kind=args.weight_kind,
                  cluster=args.cluster, cov=args.cov, group=args.group, noncompliance=args.noncompliance,
                  noncompliance_model=args.noncompliance_model, unrelated=args.unrelated,
                  share_groups=args.share_groups, chunk_rows=args.chunk_rows, max_distinct=args.max_distinct,
                  scheduler=args.scheduler)
    from ..regression.sensitivity_result import SensitivityResult

    # a fit whose estimates are not a unique maximum is not done: separation, not converged, not identified (the
    # WLDP range over a design's members is not_identified by construction: it is the answer asked for)
    failed = fit.status in (FitStatus.SEPARATION, FitStatus.NOT_CONVERGED) or (
        fit.status is FitStatus.NOT_IDENTIFIED and not isinstance(fit, SensitivityResult))
    return with_status(render(fit, args.format), EXIT_FIT if failed else 0)


def _configure_regress(p: argparse.ArgumentParser) -> None:
    p.add_argument("data", help="CSV, one row per respondent: the randomized answers and the covariates")
    p.add_argument("--mechanism", action="append",
                   help="mechanism CSV or JSON file that produced the answers; several designs in one survey: "
                        "NAME=FILE, repeated, with --group")
    add_group_arguments(p)
    p.add_argument("--manifest", metavar="FILE",
                   help="randomize's release manifest instead of --mechanism: the analysed column's design, or the "
                        "drawn channel of a repaired release (docs/theory.md section 7.6)")
    p.add_argument("--formula", required=True,
                   help="'response ~ x1 + x2' (patsy syntax, R habits welcome: dotted names such as cov.age, "
                        "I(x^2), C(region) for categories): the answers column, then the covariates")
    p.add_argument("--reference", help="input whose log-odds are 0 (default: the mechanism's last input)")
    p.add_argument("--semantics", choices=("sldp", "wldp"), default="sldp",
                   help="sldp: answers are focal sets; wldp: precise answers, coefficients over credal members")
    p.add_argument("--allocation", help="wldp: fit one member, 'uniform' or lambda in [0, 1] (default: the range "
                                        "over uniform and lambda = 0, 0.25, ..., 1)")
    p.add_argument("--method", choices=("newton", "em"), default="newton",
                   help="newton (trust-region, default) or em (slower, same optimum)")
    p.add_argument("--level", type=level_arg, default=0.95, help="confidence level in (0, 1) (default 0.95)")
    p.add_argument("--penalty", choices=("firth",),
                   help="firth: maximise Firth's penalized likelihood, finite under separation (no sampling weights)")
    p.add_argument("--missing", choices=("error", "drop"), default="error",
                   help="a row missing a value of the formula's variables: error (default, naming the line) or "
                        "drop (R's na.omit; the count is reported)")
    p.add_argument("--chunk-rows", type=int_arg(1_000, 10_000_000), metavar="N",
                   help="read the data in chunks of N rows and fit from sufficient statistics (the default for a "
                        "Parquet dataset folder, a Parquet file above 10^6 rows or a CSV file above 100 MB)")
    p.add_argument("--max-distinct", type=int_arg(1, 10**9), metavar="N",
                   help="data read in chunks: fit the counted distinct rows while there are at most N (default "
                        "500,000), else streamed Newton passes")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="a Dask scheduler (tcp://host:8786): run the passes over a Parquet dataset on the cluster, one "
                        "part a task (the same fit as one machine's)")
    add_survey_arguments(p)
    add_format(p)
