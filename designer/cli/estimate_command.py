"""The estimate command: shares from randomized answers, with several designs, non-compliance, weights and
clusters (docs/theory.md section 8)."""

from __future__ import annotations

import argparse
import math
import os
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._internal.render import fmt, json_value, render_csv, render_json, render_table
from ..estimation.survey_files import answer_codes, dataset_parts, read_chunks
from ..mechanism import Mechanism
from ._common import (
    EXIT_FIT,
    CommandError,
    add_format,
    add_group_arguments,
    add_survey_arguments,
    level_arg,
    mechanism_files,
    open_mechanism,
    share_output,
    vocabulary_of,
    with_status,
)

#: Cells that mean "no answer" in an answers file (empty, R's NA, spreadsheet and database spellings).
MISSING_CELLS = ("", "NA", "N/A", "NaN", "nan", "NULL", "null", "#N/A")


def _absent_rows(path: str, line: int, chunk: Any, names: list[str], answers: str, missing: str
                 ) -> NDArray[np.bool_]:
    """The rows of a chunk (its first at file ``line``) without a value in one of ``names``; with
    ``missing="error"`` the first such row is an error naming its line and column (an answer, or a value)."""
    absent = np.zeros(len(chunk), dtype=bool)
    for name in names:
        gap = chunk[name].isin(MISSING_CELLS).to_numpy()
        if gap.any() and missing == "error":
            what = "answer" if name == answers else "value"
            raise CommandError(f"{path}: line {line + int(np.flatnonzero(gap)[0])}: no {what} in column {name!r} "
                               f"({int(gap.sum())} such row(s) in this part of the file); fill them in, or drop "
                               "them (--missing drop)")
        absent |= gap
    return absent


def _count(path: str, column_name: str, mech: Mechanism, vocabulary: Any, missing: str = "error"
           ) -> tuple[NDArray[np.float64], int]:
    """Answers per focal set (SLDP) or per frame label (WLDP, ``vocabulary.precise``), counted chunk by chunk,
    and the rows without an answer dropped (``missing="drop"``; with ``"error"`` the first is an error)."""
    counts = np.zeros(mech.l if vocabulary.precise else len(mech.focal))
    dropped = 0
    for line, chunk in read_chunks(path, [column_name]):
        absent = _absent_rows(path, line, chunk, [column_name], column_name, missing)
        dropped += int(absent.sum())
        codes = answer_codes(path, chunk[column_name], line, vocabulary, skip=absent)
        counts += np.bincount(codes, minlength=counts.size)
    return counts, dropped


def partition_counts(path: str, column: str, mechanism: str, precise: bool, missing: str
                     ) -> tuple[NDArray[np.float64], int]:
    """Answers per column of one part of a dataset, and the rows dropped: what each worker computes (the
    counts are sufficient for the shares, so the parts' sums give the whole file's estimate exactly)."""
    file = open_mechanism(mechanism)
    return _count(path, column, file.mechanism, vocabulary_of(file, precise=precise), missing)


def _counts_of(args: argparse.Namespace, mech: Mechanism, vocabulary: Any, *, precise: bool
               ) -> tuple[NDArray[np.float64], int]:
    """The answer counts of one file, or summed over the Parquet parts of a folder (on a Dask cluster with
    ``--scheduler``, one part a task; the same counts as one machine's, exactly)."""
    if not os.path.isdir(args.responses):
        return _count(args.responses, args.column, mech, vocabulary, args.missing)
    parts = dataset_parts(args.responses)
    task = (args.column, args.mechanism, precise, args.missing)
    if args.scheduler:
        results = _on_cluster(args.scheduler, parts, task)
    else:
        results = [partition_counts(part, *task) for part in parts]
    return np.sum([r[0] for r in results], axis=0), sum(r[1] for r in results)


def _on_cluster(scheduler: str, parts: list[str], task: tuple[Any, ...]) -> list[tuple[Any, int]]:
    """``partition_counts`` of every part on the Dask cluster at ``scheduler``."""
    from ._cluster import map_on_cluster

    return map_on_cluster(scheduler, partition_counts, [(part, *task) for part in parts])


def _estimate_groups(args: argparse.Namespace) -> str:
    """``estimate`` with several mechanisms (``--mechanism NAME=FILE``, ``--group COLUMN``) or non-compliance."""
    from ..estimation.groups import estimate_groups, stack_mechanisms
    from ..exceptions import DesignerError

    if args.semantics == "wldp":
        raise CommandError("several mechanisms, --noncompliance and --unrelated apply to set answers "
                           "(--semantics sldp)")
    files = mechanism_files(args.mechanism)
    if len(files) > 1 and not args.group:
        raise CommandError("several mechanisms need --group COLUMN: the column naming each respondent's mechanism")
    opened = {name: open_mechanism(path) for name, path in files.items()}
    mechanisms = {name: file.mechanism for name, file in opened.items()}
    vocabularies = {name: vocabulary_of(file) for name, file in opened.items()}
    try:
        stacked, offsets = stack_mechanisms(mechanisms, None)
    except DesignerError as exc:
        raise CommandError(str(exc)) from None
    counts, dropped = _read_survey(args, mechanisms, vocabularies, offsets, len(stacked.focal))
    try:
        if args.unrelated is not None and args.noncompliance is not None:
            raise CommandError("--unrelated and --noncompliance are two models of the design's one unknown share; "
                               "give one")
        if args.unrelated is not None or args.share_groups is not None:
            from ..estimation.groups import Noncompliance
            from ..regression.constant_share import estimate_share
            from ..vocabulary import NoncomplianceScope

            if args.unrelated is None and args.noncompliance is None:
                raise CommandError("--share-groups names the groups of an unknown share: give --noncompliance or "
                                   "--unrelated")
            rule = (Noncompliance(NoncomplianceScope.UNRELATED, args.unrelated.strip()) if args.unrelated is not None
                    else Noncompliance.parse(args.noncompliance))
            est = estimate_share(mechanisms, counts, rule, groups=args.share_groups, cov=args.cov, level=args.level)
        else:
            est = estimate_groups(mechanisms, counts, noncompliance=args.noncompliance, cov=args.cov,
                                  level=args.level)
    except DesignerError as exc:
        raise CommandError(f"{args.responses}: {exc}") from None
    return _render_groups(args, est, files, dropped)


def _weights(path: str, values: Any, lines: NDArray[np.int64], name: str) -> NDArray[np.float64]:
    """A weights column as positive floats; a bad cell is one error naming its line."""
    from ..estimation.survey_design import first_bad_weight

    out = pd_numeric(values)
    bad = first_bad_weight(out)
    if bad is not None:
        raise CommandError(f"{path}: line {lines[bad]}: weight {values.iloc[bad]!r} in column {name!r} is not "
                           "a positive number; every weight must be > 0")
    return out


def _render_groups(args: argparse.Namespace, est: Any, files: dict[str, str], dropped: int) -> str:
    exit_status = EXIT_FIT if est.status == "not_converged" else 0
    nc = est.noncompliance
    if args.format == "json":
        cells = {key: {x: _share_cell(float(v)) for x, v in zip(est.inputs, values)} for key, values in
                 (("estimate", est.estimate), ("stderr", est.stderr), ("ci_low", est.ci_low),
                  ("ci_high", est.ci_high), ("low", est.low), ("high", est.high))}
        if est.bounds is not None:  # cheater detection: each bound with its interval (docs/fits.md)
            cells["bounds"] = {r["input"]: {k: v for k, v in r.items() if k != "input"} for r in est.bounds.records()}
        return with_status(render_json({
            "semantics": "sldp", "n": int(sum(est.group_sizes)), "dropped": dropped, "level": est.level,
            "groups": {name: {"mechanism": files[name], "n": size} for name, size in zip(est.groups, est.group_sizes)},
            "status": est.status, "warnings": list(est.warnings), "variance": est.variance,
            "loglik": json_value(est.loglik), **cells, **dict([share_output(nc)])}), exit_status)
    headers = ["input", "estimate", "stderr", "ci_low", "ci_high", "low", "high"]
    table = [[x, est.estimate[i], est.stderr[i], est.ci_low[i], est.ci_high[i], est.low[i], est.high[i]]
             for i, x in enumerate(est.inputs)]
    b = est.bounds
    if b is not None:  # cheater detection: each bound's interval, and the prevalence's (low's lower, high's upper)
        headers += ["low_ci_low", "low_ci_high", "high_ci_low", "high_ci_high"]
        for i, row in enumerate(table):
            row += [b.low_ci_low[i], b.low_ci_high[i], b.high_ci_low[i], b.high_ci_high[i]]
    if nc is not None:
        what = ("unrelated question" if nc["scope"] == "unrelated" else "non-compliant") + \
            f" ({nc['scope']}:{nc['answer']})"
        table.append([what, nc["share"], nc["stderr"], nc["ci_low"], nc["ci_high"], nc["share"], nc["share"]]
                     + [math.nan] * (len(headers) - 7))
    if args.format == "csv":
        return with_status(render_csv(["status", "variance", *headers], [[est.status, est.variance, *(
            "" if isinstance(v, float) and np.isnan(v) else v for v in r)] for r in table]), exit_status)
    groups = ", ".join(f"{name or 'all'}: {size} through {files[name]}" for name, size in zip(est.groups,
                                                                                             est.group_sizes))
    shown = [[r[0], *(("-" if np.isnan(float(v)) else fmt(float(v))) for v in r[1:])] for r in table]
    return with_status(
        f"{sum(est.group_sizes)} set-valued answers{_dropped(dropped)} in {len(est.groups)} group(s) ({groups}); "
        f"maximum likelihood, {est.level:g} intervals, standard errors from the {est.variance}\n"
        f"status: {est.status.replace('_', ' ')}" + "".join(f"\nwarning: {w}" for w in est.warnings) + "\n"
        + ("" if b is None else bounds_note(b.level)) + render_table(headers, shown), exit_status)


def bounds_note(level: float) -> str:
    """The line explaining the bound columns under cheater detection (docs/fits.md)."""
    return (f"bounds: each prevalence lies between low and high; low_ci and high_ci are their {level:g} intervals, "
            f"and low_ci_low to high_ci_high covers the prevalence with probability at least {level:g}\n")


def _read_survey(args: argparse.Namespace, mechanisms: dict[str, Mechanism], vocabularies: dict[str, Any],
                 offsets: list[int], n_columns: int) -> tuple[Any, int]:
    """Every row's answer column (group ``g``'s answers at ``offsets[g]`` on), weight and cluster, read chunk by
    chunk, as :class:`~designer.estimation.survey_design.SurveyCounts` over ``n_columns``; a row without an answer,
    group, weight or
    cluster is an error naming its line, or dropped (``--missing drop``)."""
    from ..estimation.survey_design import SurveyCounts
    from ..exceptions import DesignerError

    group = getattr(args, "group", None)
    offset = dict(zip(mechanisms, offsets))
    path = args.responses
    extra = [c for c in (group, args.weights, args.cluster) if c]
    first = next(iter(mechanisms))
    codes, weights, clusters, dropped = [], [], [], 0
    for line, chunk in read_chunks(path, [args.column, *extra]):
        absent = _absent_rows(path, line, chunk, [args.column, *extra], args.column, args.missing)
        dropped += int(absent.sum())
        kept = chunk.loc[~absent].reset_index(drop=True)
        lines = line + np.flatnonzero(~absent)
        names = kept[group].to_numpy(dtype=object) if group else np.full(len(kept), first, dtype=object)
        unknown = [i for i, g in enumerate(names) if g not in mechanisms]
        if unknown:
            raise CommandError(f"{path}: line {lines[unknown[0]]}: group {names[unknown[0]]!r} in column "
                               f"{group!r} has no mechanism; the groups are {list(mechanisms)}")
        column = np.zeros(len(kept), dtype=np.int64)
        for name in mechanisms:
            rows = np.flatnonzero(names == name)
            if rows.size:
                column[rows] = offset[name] + answer_codes(path, kept[args.column].iloc[rows], int(lines[rows[0]]),
                                                            vocabularies[name])
        codes.append(column)
        if args.weights:
            weights.append(_weights(path, kept[args.weights], lines, args.weights))
        if args.cluster:
            clusters.append(kept[args.cluster].to_numpy(dtype=object))
    all_codes = np.concatenate(codes) if codes else np.zeros(0, dtype=np.int64)
    if all_codes.size == 0:
        raise CommandError(f"{path}: no answers to estimate from")
    try:
        return SurveyCounts.from_rows(n_columns, all_codes, weights=np.concatenate(weights) if weights else None,
                                      weight_kind=args.weight_kind,
                                      cluster=np.concatenate(clusters) if clusters else None), dropped
    except DesignerError as exc:
        raise CommandError(f"{path}: {exc}") from None


def pd_numeric(values: Any) -> NDArray[np.float64]:
    """A text column as floats, NaN where a cell is not a number."""
    import pandas as pd

    return np.asarray(pd.to_numeric(values, errors="coerce"), dtype=np.float64)


def _dropped(dropped: int) -> str:
    return f" ({dropped} row(s) without an answer dropped)" if dropped else ""


def cmd_estimate(args: argparse.Namespace) -> str:
    from ..estimation.shares import estimate_sldp, identified_set
    from ..estimation.survey_design import estimate_survey

    if args.manifest:  # the channel the release was drawn from (docs/theory.md section 7.6)
        from .manifest_input import manifest_mechanism

        args.mechanism = [manifest_mechanism(args.manifest, args.column, args.mechanism)]
    if not args.mechanism:
        raise CommandError("give --mechanism FILE (the design the answers were drawn with) or --manifest "
                           "FILE (randomize's release manifest)")
    if len(args.mechanism) > 1 or "=" in args.mechanism[0] or args.group or args.noncompliance or args.unrelated:
        if args.test:
            raise CommandError("--test applies to one mechanism's shares; several mechanisms and --noncompliance "
                               "report their estimates with intervals")
        return _estimate_groups(args)
    args.mechanism = args.mechanism[0]
    file = open_mechanism(args.mechanism)
    mech = file.mechanism
    vocabulary = vocabulary_of(file, precise=args.semantics == "wldp")
    if args.semantics == "wldp":
        if args.weights or args.cluster or args.cov:
            raise CommandError("--weights, --cluster and --cov apply to set answers (--semantics sldp); the "
                               "identified set of precise answers has no standard errors")
        if args.test:
            raise CommandError("--test needs an estimate: precise answers (--semantics wldp) identify only a set of "
                               "shares")
        counts, dropped = _counts_of(args, mech, vocabulary, precise=True)
        result = identified_set(mech, counts, level=args.level)
        if args.format == "json":
            return render_json({"semantics": "wldp", "n": result.n, "dropped": dropped, "level": result.level,
                                "misfit": result.misfit,
                               "lower": dict(zip(mech.inputs, result.lower.tolist())),
                               "upper": dict(zip(mech.inputs, result.upper.tolist()))})
        rows_out = [[x, result.lower[i], result.upper[i]] for i, x in enumerate(mech.inputs)]
        if args.format == "csv":
            return render_csv(["input", "lower", "upper"], rows_out)
        return (f"{result.n} precise answers{_dropped(dropped)}; identified set of each share at level "
                f"{result.level:g} (misfit {result.misfit:.3g})\n"
                + render_table(["input", "lower", "upper"], [[r[0], fmt(r[1]), fmt(r[2])] for r in rows_out]))
    if args.scheduler and not os.path.isdir(args.responses):
        raise CommandError(f"--scheduler counts the parts of a partitioned Parquet dataset (a folder); "
                           f"{args.responses} is one file: drop --scheduler")
    if args.weights or args.cluster or args.cov:
        if os.path.isdir(args.responses):
            raise CommandError(f"{args.responses}: --weights, --cluster and --cov read one file (a folder of parts "
                               "is counted without them)")
        from ..vocabulary import Covariance

        Covariance.settle(args.cov, sampling_weights=bool(args.weights) and args.weight_kind == "sampling",
                          clusters=bool(args.cluster))  # a wrong choice is refused before the data are read
        survey, dropped = _read_survey(args, {"": mech}, {"": vocabulary}, [0], len(mech.focal))
        est = estimate_survey(mech, survey, cov=args.cov, level=args.level)
        test = _test(args, mech, None, est)
    else:
        counts, dropped = _counts_of(args, mech, vocabulary, precise=False)
        est = estimate_sldp(mech, counts, level=args.level)
        test = _test(args, mech, counts, est)
    exit_status = EXIT_FIT if est.status == "not_converged" else 0
    assert est.identified_low is not None and est.identified_high is not None
    if args.format == "json":
        return with_status(render_json({
            "semantics": "sldp", "n": est.n, "dropped": dropped, "level": est.level, "method": est.method,
            "status": est.status, "warnings": list(est.warnings), "iterations": est.iterations,
            "variance": est.variance, "weights": args.weights,
            "weight_kind": args.weight_kind if args.weights else None, "cluster": args.cluster,
            "converged": est.converged, "kkt_violation": json_value(est.kkt_violation),
            **{key: {x: _share_cell(float(v)) for x, v in zip(mech.inputs, values)} for key, values in
               (("estimate", est.estimate), ("stderr", est.stderr), ("ci_low", est.ci_low), ("ci_high", est.ci_high))},
            "identified": {x: [float(lo), float(hi)] for x, lo, hi in
                           zip(mech.inputs, est.identified_low, est.identified_high)},
            **({"test": test} if test is not None else {})}), exit_status)
    table = [[x, est.estimate[i], est.stderr[i], est.ci_low[i], est.ci_high[i], est.identified_low[i],
              est.identified_high[i]] for i, x in enumerate(mech.inputs)]
    headers = ["input", "estimate", "stderr", "ci_low", "ci_high", "identified_low", "identified_high"]
    if args.format == "csv":
        extra = ["test_null", "wald_statistic", "wald_pvalue", "lr_statistic", "lr_pvalue"] if test else []

        def tested(x: str) -> list[Any]:
            if test is None:
                return []
            if x != test["share"]:
                return [""] * 5
            cells = [test["null"], test["wald"]["statistic"], test["wald"]["pvalue"],
                     test["lr"]["statistic"] if test["lr"] else None, test["lr"]["pvalue"] if test["lr"] else None]
            return ["" if v is None else v for v in cells]
        return with_status(render_csv(["status", "variance", *headers, *extra], [[est.status, est.variance, *(
            "" if isinstance(v, float) and np.isnan(v) else v for v in r), *tested(r[0])] for r in table]),
            exit_status)
    state = (f"converged in {est.iterations} Newton steps (KKT violation {est.kkt_violation:.1e})" if est.converged
             else f"NOT converged (KKT violation {est.kkt_violation:.1e} after {est.iterations} iterations)")
    loose = est.status == "not_identified"
    shown = [[r[0], *(("-" if np.isnan(v) else fmt(v)) for v in r[1:5])]
             + ([f"[{fmt(r[5])}, {fmt(r[6])}]"] if loose else []) for r in table]
    return with_status(
        f"{est.n} set-valued answers{_dropped(dropped)}; maximum likelihood, {state}; {est.level:g} intervals, "
        f"standard errors from the {est.variance}"
        + (" (projected confidence bands where a share is not identified)" if loose else "") + "\n"
        f"status: {est.status.replace('_', ' ')}" + "".join(f"\nwarning: {w}" for w in est.warnings) + "\n"
        + render_table(headers[:5] + (["identified"] if loose else []), shown)
        + ("" if test is None else "\n" + _test_line(test)), exit_status)


def _test(args: argparse.Namespace, mech: Mechanism, counts: Any, est: Any) -> dict[str, Any] | None:
    """``--test SHARE=VALUE``: the Wald test and, from the answer counts, the likelihood-ratio test (none under
    weights or clusters, whose pseudo-likelihood is not a likelihood)."""
    from ..estimation.share_tests import share_test, wald_test

    if not args.test:
        return None
    label, sep, value = args.test.partition("=")
    try:
        null = float(value)
        if not sep or not 0.0 < null < 1.0:
            raise ValueError
    except ValueError:
        raise CommandError(f"--test {args.test!r} must read SHARE=VALUE with VALUE strictly between 0 and 1, "
                           "e.g. --test yes=0.3") from None
    if label.strip() not in mech.inputs:
        raise CommandError(f"--test {args.test!r}: {label.strip()!r} is not an input; the inputs are "
                           f"{list(mech.inputs)}")
    s = mech.inputs.index(label.strip())
    wald, wald_p = wald_test(float(est.estimate[s]), float(est.stderr[s]), null)
    out: dict[str, Any] = {"share": mech.inputs[s], "null": null,
                           "wald": {"statistic": _share_cell(wald), "pvalue": _share_cell(wald_p)}}
    if counts is None:
        out["lr"] = None
        out["note"] = (f"no likelihood-ratio test with {est.variance}: the weighted or clustered answers give a "
                       "pseudo-likelihood")
        return out
    result = share_test(mech, counts, est.estimate, est.stderr, s, null)
    out["lr"] = {"statistic": result.lr_statistic, "pvalue": result.lr_pvalue,
                 "constrained": dict(zip(mech.inputs, result.constrained.tolist())), "converged": result.converged}
    return out


def _test_line(test: dict[str, Any]) -> str:
    wald = test["wald"]
    line = (f"test of {test['share']} = {test['null']:g} (two-sided, chi-square 1 df): Wald "
            + ("-" if wald["statistic"] is None else f"{wald['statistic']:.4g}, p = {wald['pvalue']:.4g}"))
    if test["lr"] is None:
        return line + f"; {test['note']}"
    return line + f"; likelihood ratio {test['lr']['statistic']:.4g}, p = {test['lr']['pvalue']:.4g}"


def _share_cell(v: float) -> Any:
    """A share's figure for JSON: ``null`` when absent (a standard error the information does not give)."""
    return None if np.isnan(v) else json_value(v)


def _configure_estimate(p: argparse.ArgumentParser) -> None:
    p.add_argument("responses", help="CSV of randomized responses: {yes}, {yes,no}, a bare label (yes), the card's "
                                     "words (I don't know) or the mechanism JSON's 'answers' words")
    p.add_argument("--mechanism", action="append",
                   help="mechanism CSV or JSON file; several designs in one survey: NAME=FILE, repeated, with --group")
    p.add_argument("--manifest", metavar="FILE",
                   help="randomize's release manifest instead of --mechanism: the analysed column's design, or the "
                        "drawn channel of a repaired release (docs/theory.md section 7.6)")
    p.add_argument("--column", default="response", help="column of the responses (default response)")
    add_group_arguments(p)
    p.add_argument("--semantics", choices=("sldp", "wldp"), default="sldp",
                   help="sldp: MLE from set answers; wldp: identified set from precise answers")
    p.add_argument("--level", type=level_arg, default=0.95, help="confidence level in (0, 1) (default 0.95)")
    p.add_argument("--missing", choices=("error", "drop"), default="error",
                   help="a row without an answer (empty, NA): error (default, naming the line) or drop (counted)")
    add_survey_arguments(p)
    p.add_argument("--test", metavar="SHARE=VALUE",
                   help="test a share against a null value: the Wald test and the likelihood-ratio test (better "
                        "with few respondents), e.g. --test yes=0.3")
    p.add_argument("--scheduler", help="with a folder of Parquet parts: count them on the Dask cluster at this "
                                       "address (e.g. tcp://127.0.0.1:8786); without it the parts are counted here")
    add_format(p)
