"""Commands that analyse randomized survey data with covariates: regress."""

from __future__ import annotations

import argparse
import math
import os
from typing import Any

from .._internal.render import fmt, json_number, render_csv, render_json, render_table
from ._common import (
    EXIT_FIT,
    CommandError,
    add_format,
    add_group_arguments,
    add_survey_arguments,
    int_arg,
    level_arg,
    mechanism_files,
    open_mechanism,
    parse_allocation,
    share_line,
    share_output,
    with_status,
)


def _read_data(path: str, answers: str) -> Any:
    """The whole data file (a small one, :func:`~designer.cli.regress_data.in_chunks`: regress fits it in memory):
    the separator sniffed, the answers as text, empty cells and R's ``NA`` missing."""
    import pandas as pd

    from .._internal.io import opening_errors
    from ..estimation.survey_files import ColumnarFile, is_columnar, is_qualtrics_export, parquet_answers, sniff

    if is_columnar(path):
        import pyarrow as pa

        try:
            table = ColumnarFile(path).read_table()
        except (pa.ArrowInvalid, OSError, ValueError) as exc:
            raise CommandError(f"{path}: not a readable Parquet or Arrow file ({' '.join(str(exc).split())[:200]})"
                               ) from None
        data = table.to_pandas()
        data.columns = [str(c).strip() for c in data.columns]
        if answers in table.column_names:  # as CSV text: integers as 1, not 1.0; a null is missing
            data[answers] = parquet_answers(table.column(answers))
        if len(data) == 0:
            raise CommandError(f"{path}: no rows")
        return data
    _, sep = sniff(path, "a CSV table with the answers and the covariates (a header row, one row per "
                              "respondent)")
    try:
        with opening_errors(path, CommandError):
            head = pd.read_csv(path, sep=sep, dtype=str, encoding="utf-8-sig", nrows=2, keep_default_na=False)
            skip = [1, 2] if is_qualtrics_export(head) else None  # a Qualtrics export's two extra header rows
            data = pd.read_csv(path, sep=sep, dtype={answers: str}, encoding="utf-8-sig", skipinitialspace=True,
                               skiprows=skip)
            data.attrs["first_line"] = 4 if skip else 2
    except pd.errors.EmptyDataError:
        raise CommandError(f"{path}: the file is empty; expected a header row and one row per respondent") from None
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as exc:
        raise CommandError(f"{path}: not a readable CSV file ({' '.join(str(exc).split())[:200]})") from None
    data.columns = [str(c).strip() for c in data.columns]
    if len(data) == 0:
        raise CommandError(f"{path}: no rows after the header")
    if answers in data.columns:
        data[answers] = data[answers].str.strip()
    return data


def cmd_regress(args: argparse.Namespace) -> str:
    from ..regression import RegressionError, regress, sensitivity

    if args.manifest:  # the channel the release was drawn from (docs/theory.md section 7.6)
        from .manifest_input import manifest_mechanism

        column = args.formula.split("~", 1)[0].strip()
        args.mechanism = [manifest_mechanism(args.manifest, column, args.mechanism)]
    if not args.mechanism:
        raise CommandError("give --mechanism FILE (the design the answers were drawn with) or --manifest "
                           "FILE (randomize's release manifest)")
    files = mechanism_files(args.mechanism)
    grouped = len(files) > 1 or "" not in files or args.noncompliance is not None or args.unrelated is not None
    opened = {name: open_mechanism(path) for name, path in files.items()}
    mechs = {name: file.mechanism for name, file in opened.items()}
    mech: Any = mechs if grouped else mechs[""]
    args.mechanism = ", ".join(f"{name}={path}" if name else path for name, path in files.items())
    answers = args.formula.split("~", 1)[0].strip() if "~" in args.formula else ""
    if not answers:
        raise CommandError(f"--formula {args.formula!r} must read 'response ~ x1 + x2' (answers column ~ covariates)")
    words = {word: labels for file in opened.values() for word, labels in file.words.items()}
    from .regress_data import in_chunks

    if in_chunks(args.data, args.chunk_rows, args.scheduler):
        return _render_fit(args, _regress_in_chunks(args, mech, answers, words))
    data = _read_data(args.data, answers)
    try:
        if args.semantics == "wldp" and args.allocation is None:
            if args.penalty:
                raise CommandError("--penalty applies to one fit; with --semantics wldp give --allocation to fit "
                                   "one credal member")
            table = sensitivity(args.formula, data, mech, reference=args.reference, level=args.level,
                                answers=words, missing=args.missing)
            return _render_sensitivity(args, table, int(table.attrs["n"]), int(table.attrs["dropped"]))
        allocation = parse_allocation(args.allocation or "uniform")
        fit = regress(args.formula, data, mech, reference=args.reference, semantics=args.semantics,
                      allocation=allocation, level=args.level, method=args.method, answers=words,
                      missing=args.missing, penalty=args.penalty, weights=args.weights,
                      weight_kind=args.weight_kind, cluster=args.cluster, cov=args.cov, group=args.group,
                      noncompliance=args.noncompliance, noncompliance_model=args.noncompliance_model,
                      unrelated=args.unrelated, share_groups=args.share_groups)
    except RegressionError as exc:  # a data row is the file's line: the header is line 1
        where = f"line {exc.row + data.attrs.get('first_line', 2)}: " if exc.row is not None else ""
        raise CommandError(f"{args.data}: {where}{exc.reason}") from None
    return _render_fit(args, fit)


def _regress_in_chunks(args: argparse.Namespace, mech: Any, answers: str, words: dict[str, Any]) -> Any:
    """``regress`` on a large CSV file or Parquet dataset: counted distinct rows or streamed Newton steps
    (:mod:`designer.regression.chunked`), the counting on a Dask cluster with ``--scheduler``."""
    from ..regression import RegressionError
    from ..regression.chunked import MAX_PATTERNS, count_options, regress_chunks
    from .regress_data import CHUNK_ROWS, chunk_source, cluster_plan, columns_of

    if args.semantics == "wldp" and args.allocation is None:
        raise CommandError(f"{args.data}: data read in chunks is fitted once; with --semantics wldp give "
                           "--allocation (the range over credal members refits the data for each)")
    columns = columns_of(args.data)
    rows = args.chunk_rows or CHUNK_ROWS
    try:
        options = count_options(args.formula, columns, missing=args.missing, weights=args.weights,
                                weight_kind=args.weight_kind, cluster=args.cluster, group=args.group)
        needed = list(dict.fromkeys([*options["keys"], *options["extra"]]))
        plan = cluster_plan(args.scheduler, args.data, needed, answers, rows) if args.scheduler else None
        return regress_chunks(args.formula, chunk_source(args.data, needed, answers, rows), mech, columns=columns,
                              reference=args.reference, semantics=args.semantics,
                              allocation=parse_allocation(args.allocation or "uniform"), level=args.level,
                              method=args.method, answers=words, missing=args.missing, penalty=args.penalty,
                              weights=args.weights, weight_kind=args.weight_kind, cluster=args.cluster, cov=args.cov,
                              group=args.group, noncompliance=args.noncompliance, plan=plan,
                              noncompliance_model=args.noncompliance_model, unrelated=args.unrelated,
                              share_groups=args.share_groups,
                              max_patterns=args.max_distinct or MAX_PATTERNS)
    except RegressionError as exc:
        where = ""
        if exc.row is not None:
            where = f"row {exc.row + 1} of the dataset: " if os.path.isdir(args.data) else f"line {exc.row + 2}: "
        raise CommandError(f"{args.data}: {where}{exc.reason}") from None


def _dropped_note(dropped: int) -> str:
    return f"; {dropped} row(s) with a missing value dropped" if dropped else ""


def _coefficient(v: Any) -> Any:
    """A coefficient cell for JSON: ``null`` when absent (NaN: no standard error), ``"inf"`` when diverging."""
    if isinstance(v, float) and math.isnan(v):
        return None
    return json_number(v) if isinstance(v, float) else v


#: Why a fit with a sandwich variance has no likelihood-ratio test.
NO_LR_TEST = "a sandwich variance: the weighted pseudo-likelihood, or correlated answers, is not a likelihood"


def _lr_test(fit: Any) -> dict[str, Any]:
    if not math.isfinite(fit.lr_statistic):
        return {"statistic": None, "df": fit.lr_df, "pvalue": None, "note": f"no test under {NO_LR_TEST}"}
    return {"statistic": json_number(fit.lr_statistic), "df": fit.lr_df, "pvalue": json_number(fit.lr_pvalue)}


def _render_fit(args: argparse.Namespace, fit: Any) -> str:
    table = fit.coefficients
    headers = ["outcome", "term", "estimate", "stderr", "z", "pvalue", "ci_low", "ci_high"]
    rows = table[headers].to_numpy().tolist()
    status = EXIT_FIT if fit.status in ("separation", "not_converged") else 0
    bounds = [] if fit.noncompliance is None else fit.noncompliance.get("bounds", [])
    if args.format == "json":
        return with_status(render_json({
            "formula": args.formula, "mechanism": args.mechanism, "semantics": fit.semantics,
            "reference": fit.reference, "n": fit.n, "dropped": fit.dropped, "level": fit.level, "method": fit.method,
            "penalty": fit.penalty, "status": fit.status, "warnings": list(fit.warnings),
            "variance": fit.variance, "weights": args.weights, "group": args.group,
            **dict([share_output(fit.noncompliance)]),
            "weight_kind": args.weight_kind if args.weights else None, "cluster": args.cluster,
            "converged": fit.converged, "iterations": fit.iterations, "loglik": json_number(fit.loglik),
            "aic": json_number(fit.aic), "bic": json_number(fit.bic),
            "lr_test": _lr_test(fit),
            "coefficients": [{h: _coefficient(v) for h, v in zip(headers, r)} for r in rows]}), status)
    if args.format == "csv":  # cheater detection: each input's prevalence bounds, as rows of their own
        extra = [[b["input"], f"(prevalence {side})", b[side], b[f"{side}_stderr"], None, None, b[f"{side}_ci_low"],
                  b[f"{side}_ci_high"]] for b in bounds for side in ("low", "high")]
        return with_status(render_csv(["status", "variance", *headers], [[fit.status, fit.variance, *(
            "" if v is None or (isinstance(v, float) and math.isnan(v)) else v for v in r)] for r in rows + extra]),
            status)
    how = "Firth's penalized likelihood" if fit.penalty == "firth" else fit.method
    head = (f"{fit.n} respondents, {args.semantics} answers through {args.mechanism}; multinomial logit of the "
            f"true answer, log-odds against {fit.reference!r}; {fit.level:g} Wald intervals, standard errors from "
            f"the {fit.variance}"
            f"{_dropped_note(fit.dropped)}\n"
            f"log-likelihood {fit.loglik:.6g}   AIC {fit.aic:.6g}   LR test against the intercept-only model: "
            + (f"chi2({fit.lr_df}) = {fit.lr_statistic:.4g}, p = {fit.lr_pvalue:.3g}\n"
               if math.isfinite(fit.lr_statistic) else f"none ({NO_LR_TEST})\n") +
            f"status: {fit.status.replace('_', ' ')} after {fit.iterations} iterations ({how})"
            + "".join(f"\nwarning: {w}" for w in fit.warnings)
            + ("" if fit.noncompliance is None else "\n" + share_line(fit.noncompliance))
            + "".join("\n" + _bounds_line(b, fit.level) for b in bounds))
    cells = [[r[0], r[1], *("-" if isinstance(v, float) and math.isnan(v) else fmt(v) for v in r[2:])] for r in rows]
    return with_status(head + "\n" + render_table(headers, cells), status)


def _bounds_line(b: dict[str, Any], level: float) -> str:
    """One input's prevalence bounds under cheater detection, each with its interval (docs/fits.md)."""
    def num(v: Any) -> str:
        return "-" if v is None else fmt(float(v))

    return (f"prevalence of {b['input']!r} between low {num(b['low'])} ({num(b['low_ci_low'])} to "
            f"{num(b['low_ci_high'])}) and high {num(b['high'])} ({num(b['high_ci_low'])} to "
            f"{num(b['high_ci_high'])}); {num(b['ci_low'])} to {num(b['ci_high'])} covers it at {level:g} or more")


def _render_sensitivity(args: argparse.Namespace, table: Any, n: int, dropped: int) -> str:
    headers = [str(c) for c in table.columns]
    rows = table.to_numpy().tolist()
    if args.format == "json":
        coefficients = [{h: json_number(v) if isinstance(v, float) else v for h, v in zip(headers, r)} for r in rows]
        for c in coefficients:
            c["estimate"], c["stderr"] = c["estimate[uniform]"], None
        return render_json({"formula": args.formula, "mechanism": args.mechanism, "semantics": "wldp", "n": n,
                           "dropped": dropped, "level": args.level, "identified": False, "coefficients": coefficients})
    if args.format == "csv":
        return render_csv(headers, rows)
    head = (f"{n} precise answers (WLDP) through {args.mechanism}: the coefficients are not identified (the "
            f"member of each credal set that produced the answers is unknown){_dropped_note(dropped)}.\n"
            "Estimate under each named member "
            "(uniform split, lambda = share of the truth), their range, and the widest interval:")
    return head + "\n" + render_table(headers, [[r[0], r[1], *(fmt(v) for v in r[2:])] for r in rows])


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
