"""Regression on data of any size: the fit from sufficient statistics gathered chunk by chunk
(docs/theory.md section 9.3).

Two exact reductions, tried in this order:

1. **Counted rows.** Respondents with the same recorded answer and the same values of the formula's variables
   (and of the group and cluster columns) add the same term to the log-likelihood, the score and the Hessian.
   One pass counts the distinct rows; while there are at most ``max_patterns`` of them the counted table is
   fitted in memory by :func:`~designer.regression.model.regress` with the counts as frequency weights, which
   is the fit of every row (estimates, standard errors under every variance choice, log-likelihood, status).
2. **Streamed Newton.** Otherwise (continuous covariates, sampling weights) the log-likelihood, score and
   Hessian are sums over rows: each Newton step reads the data once, chunk by chunk, and adds them up, so
   memory is bounded by one chunk and the parameters, not by the rows. The start is the fit of a systematic
   sample of at most :data:`SAMPLE_ROWS` rows taken in the first pass, so a few passes suffice.

Both give the in-memory fit's answer (to the optimiser's tolerance); :func:`regress_chunks` takes the data as
a function returning an iterator of ``(first_row, chunk)`` pairs, so the chunks may come from a CSV file, a
Parquet dataset, or the partitions of a Dask cluster (:func:`count_rows` is what each worker computes).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..exceptions import RegressionError
from ..mechanism import Mechanism
from ..vocabulary import WeightKind
from .data import formula_columns, prepare, split_formula
from .model import RegressionResult, regress
from .passes import _frequency, _located
from .streamed import streamed_fit

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["COUNT", "FIRST", "MAX_LEVELS", "MAX_PATTERNS", "SAMPLE_ROWS", "ChunkSource", "count_options", "count_rows",
           "merge_counts", "regress_chunks", "scan_part"]

#: What :func:`regress_chunks` reads: a function returning an iterator of ``(first_row, chunk)``, ``first_row``
#: the 0-based position of the chunk's first row in the data (errors name it), ``chunk`` a DataFrame.
ChunkSource = Callable[[], Iterable[tuple[int, "pd.DataFrame"]]]

#: Column of the counted table holding each distinct row's count (its frequency weight).
COUNT = "__designer_count__"
#: Column of the counted table holding the first row where each distinct row occurs (for error messages).
FIRST = "__designer_first_row__"
#: Most distinct rows kept for the counted fit; above, the streamed Newton fit.
MAX_PATTERNS = 500_000
#: Most rows of the systematic sample whose in-memory fit starts the streamed Newton iterations.
SAMPLE_ROWS = 100_000
#: Most values of one text column carried to a cluster's workers (more: the passes run on the client).
MAX_LEVELS = 10_000


@dataclass
class _Scan:
    """What the first pass over the data found."""

    rows: int = 0
    dropped: int = 0
    parts: list[Any] = field(default_factory=list)  # counted chunks, merged as they come
    distinct: int = 0
    counting: bool = True
    sample: list[Any] = field(default_factory=list)
    stride: int = 1
    seen: int = 0
    levels: dict[str, set[Any]] | None = field(default_factory=dict)  # text columns' values (None: too many)


def count_rows(chunk: Any, first: int, *, lhs: str, rhs: str, keys: Sequence[str], missing: str,
               weights: str | None, weight_kind: WeightKind, extra: Sequence[str]) -> tuple[Any, int]:
    """One chunk's distinct rows of ``keys`` with their count (:data:`COUNT`; the sum of frequency weights) and
    first row (:data:`FIRST`), and the rows dropped for a missing value: what a Dask worker computes for its
    partition (the counts of several chunks add up: :func:`merge_counts`)."""
    try:
        data, _, rows = prepare(rhs, lhs, chunk, missing, extra=extra)
    except RegressionError as exc:
        raise _located(exc, first) from None
    w = _frequency(data, weights, weight_kind, first, rows)
    table = data[list(keys)].copy()
    table[COUNT] = 1.0 if w is None else w
    table[FIRST] = first + rows
    counted = table.groupby(list(keys), dropna=False, sort=False, observed=True).agg(
        {COUNT: "sum", FIRST: "min"}).reset_index()
    return counted, len(chunk) - len(data)


def count_options(formula: str, columns: Sequence[str], *, missing: str = "error", weights: str | None = None,
                  weight_kind: str = "sampling", cluster: str | None = None, group: str | None = None
                  ) -> dict[str, Any]:
    """The keyword arguments of :func:`count_rows` for a fit of ``formula`` on data with ``columns``: the
    distinct rows are keyed by the answers, the formula's variables, the group and the cluster."""
    lhs, rhs = split_formula(formula, [str(c) for c in columns])
    names = formula_columns(rhs, [str(c) for c in columns])
    keys = list(dict.fromkeys([lhs, *names, *[c for c in (group, cluster) if c is not None]]))
    return {"lhs": lhs, "rhs": rhs, "keys": keys, "missing": missing, "weights": weights,
            "weight_kind": WeightKind.parse(weight_kind, "weight_kind"),
            "extra": [c for c in (weights, cluster, group) if c is not None]}


def merge_counts(parts: Sequence[Any], keys: Sequence[str]) -> Any:
    """The counts of several chunks' distinct rows added up (first rows: the least)."""
    import pandas as pd

    joined = pd.concat(list(parts), ignore_index=True)
    return joined.groupby(list(keys), dropna=False, sort=False, observed=True).agg(
        {COUNT: "sum", FIRST: "min"}).reset_index()


def _scan(chunks: ChunkSource, *, lhs: str, rhs: str, keys: list[str], missing: str, weights: str | None,
          weight_kind: WeightKind, extra: list[str], count: bool, max_patterns: int,
          sample_rows: int | None = None) -> _Scan:
    """The first pass: rows, drops, the counted distinct rows (while at most ``max_patterns``), a systematic
    sample of at most ``sample_rows`` (default :data:`SAMPLE_ROWS`) rows (every ``stride``-th, ``stride``
    doubling) and the values of the text columns among ``keys`` (up to :data:`MAX_LEVELS` each)."""
    import pandas as pd

    limit = SAMPLE_ROWS if sample_rows is None else sample_rows
    scan = _Scan(counting=count)
    for first, chunk in chunks():
        if scan.levels is not None:
            for column in keys:
                if column != lhs and column in chunk.columns and not pd.api.types.is_numeric_dtype(chunk[column]):
                    seen = scan.levels.setdefault(column, set())
                    seen.update(chunk[column].dropna().unique().tolist())
                    if len(seen) > MAX_LEVELS:
                        scan.levels = None
                        break
        scan.rows += len(chunk)
        if scan.counting:
            counted, dropped = count_rows(chunk, first, lhs=lhs, rhs=rhs, keys=keys, missing=missing,
                                          weights=weights, weight_kind=weight_kind, extra=extra)
            scan.parts.append(counted)
            scan.distinct += len(counted)
            if scan.distinct > max_patterns:
                scan.parts = [merge_counts(scan.parts, keys)]
                scan.distinct = len(scan.parts[0])
                if scan.distinct > max_patterns:
                    scan.counting, scan.parts = False, []
        else:
            try:
                data, _, rows = prepare(rhs, lhs, chunk, missing, extra=extra)
            except RegressionError as exc:
                raise _located(exc, first) from None
            dropped = len(chunk) - len(data)
            _frequency(data, weights, weight_kind, first, rows)
        scan.dropped += dropped
        position = scan.seen + np.arange(len(chunk))
        keep = np.flatnonzero(position % scan.stride == 0)
        scan.sample.append(chunk.iloc[keep].set_axis(position[keep]))
        scan.seen += len(chunk)
        while sum(len(s) for s in scan.sample) > limit:  # every other sampled row goes
            scan.stride *= 2
            scan.sample = [s.loc[s.index.to_numpy() % scan.stride == 0] for s in scan.sample]
    if scan.rows == 0:
        raise RegressionError("the data has no rows")
    return scan


def scan_part(source: str, *, reader: Callable[..., Any], reader_kwargs: Mapping[str, Any],
              options: Mapping[str, Any], count: bool, max_patterns: int, sample_rows: int) -> _Scan:
    """The first pass over one part of a dataset (a cluster worker's task), its counted rows merged; an error
    names the part and the row in it."""
    try:
        scan = _scan(lambda: reader(source, **reader_kwargs), count=count, max_patterns=max_patterns,
                     sample_rows=sample_rows, **{k: options[k] for k in ("lhs", "rhs", "keys", "missing", "weights",
                                                                          "weight_kind", "extra")})
    except RegressionError as exc:
        where = "" if exc.row is None else f"row {exc.row + 1}: "
        raise RegressionError(f"{source}: {where}{exc.reason}") from None
    if scan.counting and scan.parts:
        scan.parts = [merge_counts(scan.parts, options["keys"])]
    return scan


def _merged(scans: Sequence[_Scan], keys: list[str], max_patterns: int) -> _Scan:
    """The parts' first passes as one: rows and drops added, first rows offset by the parts' sizes, counted rows
    merged (while at most ``max_patterns``), samples joined (thinned to :data:`SAMPLE_ROWS`), levels united."""
    import pandas as pd

    out = _Scan(counting=all(s.counting for s in scans))
    offset = 0
    tables = []
    for scan in scans:
        if out.counting:
            for table in scan.parts:
                tables.append(table.assign(**{FIRST: table[FIRST] + offset}))
        offset += scan.rows
        out.rows, out.dropped = out.rows + scan.rows, out.dropped + scan.dropped
        if out.levels is not None:
            if scan.levels is None:
                out.levels = None
            else:
                for column, values in scan.levels.items():
                    out.levels.setdefault(column, set()).update(values)
    if out.counting and tables:
        merged = merge_counts(tables, keys)
        out.counting = len(merged) <= max_patterns
        out.parts = [merged] if out.counting else []
    sample = pd.concat([s for scan in scans for s in scan.sample], ignore_index=True)
    step = max(1, -(-len(sample) // SAMPLE_ROWS))
    out.sample = [sample.iloc[::step]]
    return out


def regress_chunks(formula: str, chunks: ChunkSource, mechanism: Mechanism | Mapping[str, Mechanism], *,
                   columns: Sequence[str], reference: str | None = None, semantics: str = "sldp",
                   allocation: str | float = "uniform", method: str = "newton", level: float = 0.95,
                   answers: Mapping[str, Sequence[str]] | None = None, missing: str = "error",
                   penalty: str | None = None, weights: str | None = None, weight_kind: str = "sampling",
                   cluster: str | None = None, cov: str | None = None, group: str | None = None,
                   noncompliance: str | None = None, max_patterns: int = MAX_PATTERNS,
                   plan: Any = None, noncompliance_model: str = "constant", unrelated: str | None = None,
                   share_groups: Sequence[str] | None = None) -> RegressionResult:
    """:func:`~designer.regression.model.regress` on data read in chunks (module docstring).

    Parameters
    ----------
    formula, mechanism, reference, semantics, allocation, method, level, answers, missing, penalty, weights,
    weight_kind, cluster, cov, group, noncompliance, noncompliance_model, unrelated, share_groups
        As for :func:`~designer.regression.model.regress`.
    chunks : ChunkSource
        Returns a fresh iterator of ``(first_row, chunk)`` each time it is called (a pass over the data).
    columns : sequence of str
        The data's column names (the formula is read against them).
    max_patterns : int
        Most distinct rows for the counted fit; above, the streamed Newton fit.
    plan : ClusterPlan, optional
        Run the passes on a cluster (:class:`~designer.regression.remote.ClusterPlan`: the dataset's parts, one a
        task): the first pass (counts, sample, text columns' levels) and, for the streamed fit, every Newton
        pass; ``chunks`` is then read here only when the formula has a stateful transform.

    Returns
    -------
    RegressionResult
        As the in-memory fit's; ``statsmodels`` is None (its object would hold every row) and ``dropped``
        counts the data's rows.
    """
    options = count_options(formula, columns, missing=missing, weights=weights, weight_kind=weight_kind,
                            cluster=cluster, group=group)
    lhs, rhs, keys, kind, extra = (options[k] for k in ("lhs", "rhs", "keys", "weight_kind", "extra"))
    countable = weights is None or kind is WeightKind.FREQUENCY  # Firth's fit too: counts are frequency weights
    common: dict[str, Any] = dict(reference=reference, semantics=semantics, allocation=allocation, method=method,
                                  level=level, answers=answers, cov=cov, group=group, noncompliance=noncompliance,
                                  cluster=cluster, noncompliance_model=noncompliance_model, unrelated=unrelated,
                                  share_groups=share_groups, penalty=penalty)
    survey: dict[str, Any] = {"weights": weights, "weight_kind": str(getattr(weight_kind, "value", weight_kind)),
                              "cluster": cluster, "group": group}
    if plan is not None:
        scans = plan.map(scan_part, [(part,) for part in plan.parts], reader=plan.reader,
                         reader_kwargs=dict(plan.reader_kwargs), options=options, count=countable,
                         max_patterns=max_patterns, sample_rows=-(-SAMPLE_ROWS // max(1, len(plan.parts))))
        scan = _merged(scans, keys, max_patterns)
    else:
        scan = _scan(chunks, lhs=lhs, rhs=rhs, keys=keys, missing=missing, weights=weights, weight_kind=kind,
                     extra=extra, count=countable, max_patterns=max_patterns)
    if scan.counting:
        table = scan.parts[0] if len(scan.parts) == 1 else merge_counts(scan.parts, keys)  # a cluster's: merged
        return dataclasses.replace(_counted_fit(formula, table, mechanism, scan.rows, scan.dropped, weights, common),
                                   **survey)
    if penalty is not None or method != "newton" or group is not None or noncompliance is not None \
            or unrelated is not None \
            or not isinstance(mechanism, Mechanism):
        raise RegressionError(
            f"the data has more than {max_patterns:,} distinct rows of the formula's variables, so it is fitted by "
            "streamed Newton steps, which do not cover --penalty, --method em, several mechanisms, "
            "non-compliance or an unrelated question; fit a sample in memory, or round continuous covariates so "
            "that rows repeat")
    import pandas as pd

    sample = pd.concat(scan.sample, ignore_index=True)
    levels = None if scan.levels is None else {c: sorted(v, key=str) for c, v in scan.levels.items()}
    fit = streamed_fit(formula, chunks, mechanism, sample, scan.dropped, lhs=lhs, rhs=rhs, extra=extra,
                       weights=weights, kind=kind, missing=missing, reference=reference, semantics=semantics,
                       allocation=allocation, level=level, answers=answers, cov=cov, cluster=cluster, plan=plan,
                       levels=levels if plan is not None else None)
    return dataclasses.replace(fit, **survey)


def _counted_fit(formula: str, table: Any, mechanism: Any, rows: int, dropped: int, weights: str | None,
                 common: dict[str, Any]) -> RegressionResult:
    """The in-memory fit of the counted distinct rows, with every field as the fit of all the rows. A column the
    chunks or parts gave different types (numbers in one, text in another) is refused, naming it: each was typed
    on its own, and their union is no type the design can read."""
    first = table[FIRST].to_numpy(dtype=np.int64)
    for column in table.columns:
        if table[column].dtype == object:
            kinds = {"text" if isinstance(v, str) else "true/false" if isinstance(v, bool | np.bool_) else "numbers"
                     for v in table[column].dropna().tolist()}
            if len(kinds) > 1:
                raise RegressionError(f"column {column!r} holds {' and '.join(sorted(kinds))} in different chunks or "
                                      "parts of the data, each read on its own: give the column one type in every "
                                      "part (or read the file whole, without --chunk-rows)")
    try:
        fit = regress(formula, table, mechanism, weights=COUNT, weight_kind="frequency", missing="error", **common)
    except RegressionError as exc:
        raise RegressionError(exc.reason, row=None if exc.row is None else int(first[exc.row])) from None
    variance = fit.variance if weights is not None else fit.variance.replace(", frequency weights", "")
    return dataclasses.replace(fit, dropped=dropped, statsmodels_factory=None, variance=variance)


