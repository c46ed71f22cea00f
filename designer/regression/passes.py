"""What one pass of the chunked regression adds up over chunks of rows, here or on a cluster's worker
(docs/theory.md section 9.3): the log-likelihood, score and Hessian at a parameter vector, and at the estimate
the column norms, respondents, answers per column and the scores' outer product."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..estimation.survey_design import first_bad_weight
from ..exceptions import RegressionError
from ..mechanism import Mechanism
from ..vocabulary import WeightKind
from .data import answer_columns, prepare
from .design import build_rows, weighted_gram
from .flat import LimitSearch
from .identify import Moments, Standardization, column_range, informative_rows
from .likelihood import Likelihood
from .variance import score_meat

__all__ = ["Final", "FinalParts", "Part", "RowSpec", "Sums", "design_moments", "final_parts", "local_sums",
           "merge_final"]


def _located(exc: RegressionError, first: int, rows: NDArray[np.int64] | None = None) -> RegressionError:
    """``exc`` with its row moved from a chunk's (or kept rows') position to the data's."""
    if exc.row is None:
        return exc
    row = int(rows[exc.row]) if rows is not None else int(exc.row)
    return RegressionError(exc.reason, row=first + row)


def _frequency(data: Any, weights: str | None, weight_kind: WeightKind, first: int, rows: NDArray[np.int64],
               scale: float = 1.0) -> NDArray[np.float64] | None:
    """The weights of a prepared chunk, refused (with the data's row) unless positive numbers; sampling weights
    divided by ``scale`` (one constant for every chunk: the sample's mean weight, so that their scale changes
    nothing)."""
    import pandas as pd

    if weights is None:
        return None
    w = pd.to_numeric(data[weights], errors="coerce").to_numpy(dtype=np.float64)
    bad = first_bad_weight(w)
    if bad is not None:
        raise RegressionError(f"weight {str(data[weights].iloc[bad])!r} in column {weights!r} is not a positive "
                              "number: every weight must be > 0 (leave out rows outside the population)",
                              row=first + int(rows[bad]))
    return w if weight_kind is WeightKind.FREQUENCY else w / scale


@dataclass
class Sums:
    """Sums over the data at one parameter vector."""

    loglik: float
    score: NDArray[np.float64]
    hessian: NDArray[np.float64]


#: One chunk as the streamed fit uses it: design rows, answer columns, weights (or None), cluster labels (or None).
Part = tuple[Any, NDArray[np.int64], Any, Any]


@dataclass(frozen=True)
class RowSpec:
    """How a chunk of the data becomes a :data:`Part`, here or on a worker: the formula's sides, the rule for
    missing values, the other columns a row needs (weights, cluster), the mechanism and how its answers read."""

    lhs: str
    rhs: str
    missing: str
    extra: tuple[str, ...]
    mechanism: Mechanism
    precise: bool
    answers: Mapping[str, Sequence[str]]
    weights: str | None
    kind: WeightKind
    cluster: str | None
    weight_scale: float = 1.0  # sampling weights are divided by it (:func:`_frequency`)

    def prepared(self, chunks: Iterable[tuple[int, Any]]) -> Iterator[tuple[int, Any, NDArray[np.int64]]]:
        """``(first_row, rows kept, their positions in the chunk)`` of every chunk; an error names the data's row."""
        for first, chunk in chunks:
            try:
                data, _, rows = prepare(self.rhs, self.lhs, chunk, self.missing, extra=list(self.extra))
            except RegressionError as exc:
                raise _located(exc, first) from None
            yield first, data, rows

    def parts(self, chunks: Iterable[tuple[int, Any]], info: Any) -> Iterator[Part]:
        """Every chunk's design rows (patsy's ``info``), answer columns, weights and cluster labels."""
        for first, data, rows in self.prepared(chunks):
            try:
                codes = answer_columns(self.mechanism, data[self.lhs].to_numpy(), precise=self.precise,
                                       words=self.answers)
            except RegressionError as exc:
                raise _located(exc, first, rows) from None
            labels = None if self.cluster is None else data[self.cluster].astype(str).to_numpy()
            yield (build_rows(info, data), codes, _frequency(data, self.weights, self.kind, first, rows,
                                                             self.weight_scale), labels)


def design_moments(parts: Callable[[], Iterator[Part]], channel: NDArray[np.float64], std: Standardization,
                   frequency: bool) -> tuple[Moments, Moments, float]:
    """One pass's sums of the standardized design rows (:class:`~designer.regression.identify.Moments`): over every
    row, and over the rows whose answer carries information (frequency weights count rows; sampling weights do
    not), and the sum of the weights (the rows' count without weights)."""
    total: Moments | None = None
    informative: Moments | None = None
    weight = 0.0
    for z, codes, w, _ in parts():
        u = std.apply(z)
        largest = column_range(z)
        weights = w if frequency else None
        here = Moments.of(u, weights, largest)
        told = Moments.of(u, weights, largest, rows=informative_rows(channel[:, codes]))
        total = here if total is None else total + here
        informative = told if informative is None else informative + told
        weight += float(codes.size if w is None else np.sum(w))
    if total is None or informative is None:
        raise RegressionError("no rows to fit")
    return total, informative, weight


def local_sums(parts: Callable[[], Iterator[Part]], channel: NDArray[np.float64], reference: int,
               transform: Callable[[Any], Any] | None = None) -> Callable[[NDArray[np.float64]], Sums]:
    """The sums of :class:`~designer.regression.likelihood.Likelihood` over the chunks of ``parts``, one pass (each
    chunk's design rows through ``transform`` first: the fit's coordinates)."""
    def sums(params: NDArray[np.float64]) -> Sums:
        loglik, score, hessian = 0.0, np.zeros(params.size), np.zeros((params.size, params.size))
        for z, codes, w, _ in parts():
            lik = Likelihood(z if transform is None else transform(z), channel[:, codes], reference, w)
            loglik += lik.loglike(params)
            score += lik.score(params)
            hessian += lik.hessian(params)
        return Sums(loglik, score, hessian)
    return sums


def local_limits(parts: Callable[[], Iterator[Part]], channel: NDArray[np.float64], reference: int,
                 params: NDArray[np.float64], directions: NDArray[np.float64],
                 transform: Callable[[Any], Any] | None = None) -> NDArray[np.float64]:
    """The log-likelihood at infinity along each row of ``directions`` ``(m, P)`` from ``params``, summed over the
    chunks of ``parts`` in one pass (:meth:`~designer.regression.flat.LimitSearch.limits`)."""
    total = np.zeros(np.atleast_2d(directions).shape[0])
    for z, codes, w, _ in parts():
        lik = Likelihood(z if transform is None else transform(z), channel[:, codes], reference, w)
        with np.errstate(invalid="ignore"):
            total = total + LimitSearch(lik, params, np.zeros((params.size, params.size))).limits(directions)
    return np.where(np.isnan(total), -np.inf, total)


@dataclass
class Final:
    """What the last pass adds up at the estimate: column norms, respondents, answers per column, the scores'
    outer product (per cluster with clusters) and the number of clusters."""

    norms: NDArray[np.float64]
    respondents: float
    totals: NDArray[np.float64]
    meat: NDArray[np.float64] | None
    clusters: int
    gram: NDArray[np.float64] | None = None  # the covariates' Z'Z (frequency-weighted), (q, q)


@dataclass
class FinalParts:
    """One pass's sums at the estimate, before they are merged: squared column norms, respondents, weighted
    answers per column, the scores' outer product and, with clusters, the scores summed per cluster."""

    squares: NDArray[np.float64]
    rows: float
    totals: NDArray[np.float64]
    outer: NDArray[np.float64]
    clusters: dict[Any, NDArray[np.float64]]
    gram: NDArray[np.float64] | None = None


def final_parts(parts: Callable[[], Iterator[Part]], channel: NDArray[np.float64], reference: int,
                params: NDArray[np.float64], *, frequency: bool, meat: bool, clustered: bool,
                transform: Callable[[Any], Any] | None = None) -> FinalParts:
    """The last pass over the chunks of ``parts`` (see :class:`FinalParts`), the design rows through ``transform``."""
    p, f = params.size, channel.shape[1]
    squares, totals, rows = np.zeros(0), np.zeros(f), 0.0
    outer = np.zeros((p, p))
    sums: dict[Any, NDArray[np.float64]] = {}
    cross: NDArray[np.float64] | None = None
    for raw, codes, w, labels in parts():
        z = raw if transform is None else transform(raw)
        counts = w if frequency else None  # a frequency weight counts rows; a sampling weight does not
        block = np.asarray(weighted_gram(z, np.ones(codes.size) if counts is None else counts))
        cross = block if cross is None else cross + block
        squares = cross.diagonal().copy()
        rows += codes.size if counts is None else float(counts.sum())
        totals += np.bincount(codes, weights=w, minlength=f)
        if not meat:
            continue
        lik = Likelihood(z, channel[:, codes], reference, w)
        if not clustered:
            outer += score_meat(lik, params, frequency=frequency)
            continue
        r = lik.residuals(params)  # weighted, (k-1, n): a row's score is z_i times its column
        scores = np.hstack([np.asarray(z.multiply(r[j][:, None]).toarray() if hasattr(z, "multiply")
                                       else z * r[j][:, None]) for j in range(r.shape[0])])
        keys, inverse = np.unique(np.asarray(labels), return_inverse=True)
        block = np.zeros((keys.size, p))
        np.add.at(block, inverse, scores)
        for label, row in zip(keys.tolist(), block):
            sums[label] = sums[label] + row if label in sums else row
    return FinalParts(squares, rows, totals, outer, sums, cross)


def merge_final(pieces: Sequence[FinalParts], *, meat: bool, clustered: bool) -> Final:
    """The parts' last passes added up (in order), the clusters' score sums added by label across parts."""
    squares = np.sum([piece.squares for piece in pieces if piece.squares.size], axis=0)
    sums: dict[Any, NDArray[np.float64]] = {}
    for piece in pieces:
        for label, row in piece.clusters.items():
            sums[label] = sums[label] + row if label in sums else row
    outer = np.sum([piece.outer for piece in pieces], axis=0)
    if clustered and meat:
        stacked = np.vstack(list(sums.values()))
        outer = stacked.T @ stacked
    grams = [piece.gram for piece in pieces if piece.gram is not None]
    return Final(np.sqrt(np.maximum(squares, 0.0)), float(sum(piece.rows for piece in pieces)),
                 np.sum([piece.totals for piece in pieces], axis=0), outer if meat else None, len(sums),
                 np.sum(grams, axis=0) if grams else None)
