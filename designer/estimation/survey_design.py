"""The shares' estimate under a survey's design: weights, clusters and the choice of variance
(docs/theory.md section 8.1).

A survey reduces to sufficient statistics per answer set ``E``: the sum of the weights ``c_E``, of the squared
weights ``c2_E`` and, with clusters, the sum of the weights in each cluster ``c_gE``. The shares maximise the
weighted log-likelihood ``sum_E c_E log p_E`` (``p = pi M``; the ordinary likelihood for frequency weights, a
pseudo-likelihood for sampling weights); in the simplex's tangent coordinates the score of one answer ``E`` is
``g_E = B' m(E) / p_E`` and its Hessian ``-g_E g_E'``, so with ``I = sum_E c_E g_E g_E'``:

- ``oim``: ``I^-1`` (for two answers and no weights, the inverse Fisher information of :func:`estimate_sldp`);
- ``opg``: ``(sum_E c2_E g_E g_E')^-1``, equal to ``oim`` without weights or with frequency weights: the
  log-likelihood is the log of a linear function of the shares;
- ``robust``: ``I^-1 B I^-1`` with ``B = sum_E c2_E g_E g_E'`` (sampling weights: the Horvitz-Thompson
  sandwich), or with clusters ``B = G/(G-1) (N-1)/(N-P) sum_g S_g S_g'``, ``S_g = sum_E c_gE g_E``.

Def 3.1 and Thm 3.10 give the likelihood; the variance choices are those of :mod:`designer.regression` for an
intercept-only model, in the shares' coordinates.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._internal.numeric import wald_interval
from ..exceptions import InvalidArgumentError
from ..mechanism import Mechanism
from ..results import FitStatus
from ..vocabulary import Covariance, WeightKind
from .identification import _identified_by
from .mle import share_functionals
from .shares import Estimate, estimate_sldp

__all__ = ["SurveyCounts", "cluster_correction", "estimate_survey", "face_covariance", "few_clusters",
           "first_bad_weight", "fit_survey", "normalized_weights", "share_covariance", "variance_words"]


def first_bad_weight(weights: NDArray[np.float64]) -> int | None:
    """Position of the first weight that is not a finite number > 0 (NaN included), or None: the one rule for
    weights, in the Python API and in every command.

    Examples
    --------
    >>> import numpy as np
    >>> from designer.estimation.survey_design import first_bad_weight
    >>> first_bad_weight(np.array([1.0, 2.0, 0.0, np.nan])), first_bad_weight(np.array([1.0, 0.5]))
    (2, None)
    """
    bad = np.flatnonzero(~(np.isfinite(weights) & (weights > 0)))
    return int(bad[0]) if bad.size else None


def normalized_weights(weights: NDArray[np.float64]) -> NDArray[np.float64]:
    """Sampling weights scaled to mean 1 (first by their largest, so no square or sum overflows): the
    pseudo-likelihood's maximum and the sandwich variance do not depend on the weights' scale, and the numbers they
    are computed from then do not either (weights of 1e-300 or 1e300 give the fit of weights of 1). Frequency weights
    count respondents and are never scaled (docs/fits.md).

    Examples
    --------
    >>> from designer.estimation.survey_design import normalized_weights
    >>> import numpy as np
    >>> normalized_weights(np.array([1e300, 3e300])).tolist()  # the fit of weights 1 and 3
    [0.5, 1.5]
    """
    w = np.asarray(weights, dtype=np.float64)
    if w.size == 0:
        return w
    w = w / float(w.max())
    return np.asarray(w / float(w.mean()))


def cluster_correction(groups: int, rows: float, params: int) -> float:
    """``G/(G-1) (N-1)/(N-P)``: the small-sample factor of a cluster-robust meat (statsmodels' default and R
    sandwich's ``vcovCL`` with ``HC1``); ``(N-1)/(N-P)`` is left out (1) where there are no more respondents than
    parameters (frequency weights below 1 may total fewer), so the factor is never below ``G/(G-1)``.

    Examples
    --------
    >>> from designer.estimation.survey_design import cluster_correction
    >>> round(cluster_correction(10, 100, 1), 6)  # 10/9 * 99/99
    1.111111
    """
    return groups / (groups - 1) * ((rows - 1) / (rows - params) if rows > params else 1.0)


def few_clusters(groups: int, params: int) -> str | None:
    """Why ``groups`` clusters give no cluster-robust variance of ``params`` parameters, or None: their scores sum
    to 0 at the estimate, so the meat has rank at most ``groups - 1``; below ``params`` some combinations of the
    parameters get a variance of 0 (a saturated cluster fits its own answers exactly).

    Examples
    --------
    >>> from designer.estimation.survey_design import few_clusters
    >>> few_clusters(10, 2) is None, few_clusters(2, 2)[:38]
    (True, '2 clusters give a cluster-robust varia')
    """
    if groups - 1 >= params:
        return None
    return (f"{groups} clusters give a cluster-robust variance of rank at most {groups - 1}, fewer than the {params} "
            "parameters it is for: no standard errors (more clusters, or the observed information, cov oim)")


def variance_words(cov: Covariance, n_clusters: int, weight_kind: WeightKind | None) -> str:
    """How standard errors were computed, in the words every output uses (shares and coefficients alike).

    Examples
    --------
    >>> from designer.estimation.survey_design import variance_words
    >>> from designer.vocabulary import Covariance, WeightKind
    >>> variance_words(Covariance.OIM, 0, None)
    'observed information'
    >>> variance_words(Covariance.ROBUST, 10, WeightKind.SAMPLING)
    'cluster-robust sandwich over 10 clusters (G/(G-1) (N-1)/(N-P)), sampling weights'
    """
    words = {Covariance.OIM: "observed information", Covariance.OPG: "outer product of the scores (rr's)",
             Covariance.ROBUST: "robust sandwich (HC0)"}[cov]
    if n_clusters:
        words = f"cluster-robust sandwich over {n_clusters} clusters (G/(G-1) (N-1)/(N-P))"
    if weight_kind is not None:
        words += f", {weight_kind.value} weights"
    return words


@dataclass(frozen=True)
class SurveyCounts:
    """Sufficient statistics of a survey's answers for the shares.

    Attributes
    ----------
    weighted : (F,) ndarray
        Sum of the weights of the answers in each answer set (the counts without weights; sampling weights scaled
        to mean 1 first, :func:`normalized_weights`).
    squared : (F,) ndarray
        Sum of the squared weights under sampling weights (the counts without weights); under frequency weights
        the sum of the weights, since a row of weight ``f`` is ``f`` respondents, each adding its own score's
        square once (so ``opg`` and ``robust`` equal those of the replicated rows).
    clusters : (G, F) ndarray or None
        Sum of the weights per cluster and answer set.
    rows : int
        Respondents.
    weight_kind : WeightKind or None
        None without weights.
    answered : (F,) ndarray or None
        Respondents per answer set (the unweighted counts; None: ``weighted``).

    Examples
    --------
    The statistics of 100 answers coded by column (30 ``{yes}``, 50 ``{no}``, 20 "don't know"), without and with
    sampling weights (scaled to mean 1, :func:`normalized_weights`: 1 and 3 count as 0.5 and 1.5):

    >>> from designer.estimation.survey_design import SurveyCounts
    >>> codes = [0] * 30 + [1] * 50 + [2] * 20
    >>> SurveyCounts.from_rows(3, codes).weighted.tolist()
    [30.0, 50.0, 20.0]
    >>> SurveyCounts.from_rows(3, codes, weights=[1.0] * 50 + [3.0] * 50).weighted.round(9).tolist()
    [15.0, 55.0, 30.0]
    """

    weighted: NDArray[np.float64]
    squared: NDArray[np.float64]
    clusters: NDArray[np.float64] | None
    rows: int
    weight_kind: WeightKind | None
    answered: NDArray[np.int64] | None = None

    @property
    def respondents(self) -> float:
        """``N``: the rows, or the sum of the weights under frequency weights (each row that many respondents)."""
        return float(self.weighted.sum()) if self.weight_kind is WeightKind.FREQUENCY else float(self.rows)

    @classmethod
    def from_rows(cls, n_sets: int, codes: ArrayLike, *, weights: ArrayLike | None = None,
                  weight_kind: Any = "sampling", cluster: ArrayLike | None = None) -> SurveyCounts:
        """The statistics of respondents whose answers are the columns ``codes`` ``(n,)`` of a mechanism with
        ``n_sets`` columns, with optional ``weights`` ``(n,)`` (positive) and ``cluster`` labels ``(n,)``."""
        import pandas as pd

        c = np.asarray(codes, dtype=np.int64)
        if c.ndim != 1 or c.size == 0 or c.min() < 0 or c.max() >= n_sets:
            raise InvalidArgumentError(f"codes must be a non-empty 1-D array of column indices in [0, {n_sets})")
        kind = None
        w = np.ones(c.size)
        if weights is not None:
            kind = WeightKind.parse(weight_kind, "weight_kind")
            w = np.asarray(weights, dtype=np.float64)
            if w.shape != c.shape:
                raise InvalidArgumentError(f"weights must have one entry per answer ({c.size}), got shape {w.shape}")
            bad = first_bad_weight(w)
            if bad is not None:
                raise InvalidArgumentError(f"weight {float(w[bad])!r} of answer {bad + 1} is not a positive number: "
                                           "every weight must be > 0")
            if kind is WeightKind.SAMPLING:
                w = normalized_weights(w)
        table = None
        if cluster is not None:
            labels = pd.Series(np.asarray(cluster, dtype=object))
            if len(labels) != c.size or labels.isna().any():
                raise InvalidArgumentError(f"cluster must give a label for each of the {c.size} answers")
            index, uniques = pd.factorize(labels.astype(str))
            if len(uniques) < 2:
                raise InvalidArgumentError(f"{len(uniques)} cluster: a cluster-robust variance needs at least 2")
            table = np.zeros((len(uniques), n_sets))
            np.add.at(table, (index, c), w)
        weighted = np.bincount(c, weights=w, minlength=n_sets).astype(np.float64)
        squared = (weighted.copy() if kind is WeightKind.FREQUENCY
                   else np.bincount(c, weights=w * w, minlength=n_sets).astype(np.float64))
        return cls(weighted, squared, table, int(c.size), kind, np.bincount(c, minlength=n_sets))


def _answer_scores(m: NDArray[np.float64], pi: NDArray[np.float64]) -> NDArray[np.float64]:
    """``g_E = B' m(E) / p_E`` for every answer set, ``(F, k-1)`` (0 where ``p_E = 0``)."""
    p = pi @ m
    tangent = (m[:-1] - m[-1]).T  # (F, k-1): B' m(E)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(p[:, None] > 0, tangent / p[:, None], 0.0)


def estimate_survey(mech: Mechanism, counts: SurveyCounts, *, cov: Any = None, level: float = 0.95,
                    method: str = "newton") -> Estimate:
    """The shares from a survey with weights or clusters, and their standard errors by ``cov``.

    Parameters
    ----------
    mech : Mechanism
        The ``(k, F)`` mechanism that produced the answers (Def 3.1).
    counts : SurveyCounts
        The survey's statistics (:meth:`SurveyCounts.from_rows`).
    cov : {None, "oim", "opg", "robust"}
        None: ``oim``, or ``robust`` under sampling weights or clusters (the only valid choice there).
    level : float
        Level of the Wald intervals.
    method : str
        How the likelihood is maximised (:func:`designer.estimation.shares.estimate_sldp`).

    Returns
    -------
    Estimate
        With ``n`` the respondents (the sum of the weights under frequency weights) and ``variance`` naming the
        choice. Where a share is not identified the standard errors are absent and the intervals are those of
        :func:`estimate_sldp` from the weighted counts, as its warning says.

    Examples
    --------
    The answers of ``Q_2x3(0.6, 0.2)`` in ten clusters of ten: the same estimate, a cluster-robust variance:

    >>> import designer
    >>> from designer.estimation.survey_design import SurveyCounts, estimate_survey
    >>> counts = SurveyCounts.from_rows(3, [0] * 30 + [1] * 50 + [2] * 20, cluster=[i // 10 for i in range(100)])
    >>> fit = estimate_survey(designer.Q_2x3(0.6, 0.2), counts)
    >>> fit.estimate.round(6).tolist(), fit.variance
    ([0.25, 0.75], 'cluster-robust sandwich over 10 clusters (G/(G-1) (N-1)/(N-P))')
    """
    return fit_survey(mech, counts, cov=cov, level=level, method=method)[0]


def fit_survey(mech: Mechanism, counts: SurveyCounts, *, cov: Any = None, level: float = 0.95,
               method: str = "newton") -> tuple[Estimate, NDArray[np.float64] | None]:
    """:func:`estimate_survey`'s estimate and the ``(k, k)`` covariance of the shares behind its standard errors
    (None where they are not all identified), for callers that need functions of several shares.

    Examples
    --------
    Without weights the observed information's variance is the squared standard error of the plain fit (0.108253):

    >>> import designer
    >>> from designer.estimation.survey_design import SurveyCounts, fit_survey
    >>> counts = SurveyCounts.from_rows(3, [0] * 30 + [1] * 50 + [2] * 20)
    >>> fit, covariance = fit_survey(designer.Q_2x3(0.6, 0.2), counts, cov="oim")
    >>> fit.variance, covariance.round(8).tolist()
    ('observed information', [[0.01171875, -0.01171875], [-0.01171875, 0.01171875]])
    """
    chosen = Covariance.settle(cov, sampling_weights=counts.weight_kind is WeightKind.SAMPLING,
                               clusters=counts.clusters is not None)
    est = estimate_sldp(mech, counts.weighted, method=method, level=level)
    frequency = counts.weight_kind is WeightKind.FREQUENCY
    n = round(float(counts.weighted.sum())) if frequency else counts.rows
    words = variance_words(chosen, 0 if counts.clusters is None else counts.clusters.shape[0], counts.weight_kind)
    if est.status is FitStatus.BOUNDARY and chosen is Covariance.OIM:  # estimate_sldp's own fit stands
        return dataclasses.replace(est, n=n, variance=words), None
    short = None if counts.clusters is None or chosen is Covariance.OIM else few_clusters(
        counts.clusters.shape[0], int(np.count_nonzero(est.estimate > 0)) - 1)
    if short is not None:
        blank = np.full(est.estimate.shape, np.nan)
        return dataclasses.replace(est, n=n, stderr=blank, ci_low=blank, ci_high=blank, variance=words,
                                   warnings=(*est.warnings, short)), None
    if est.status is FitStatus.BOUNDARY:  # the sandwich on the face of the free shares, or a refusal
        return _boundary_survey(mech, counts, est, chosen, words, n, level), None
    cov_shares = share_covariance(mech.matrix, counts, est.estimate, chosen)
    if cov_shares is None:
        note = ("the shares are not all identified: no standard errors under a survey variance; the intervals "
                "are the projected bands of the weighted counts")
        return dataclasses.replace(est, n=n, variance=words, warnings=(*est.warnings, note)), None
    se = np.sqrt(np.maximum(np.diag(cov_shares), 0.0))
    if chosen is Covariance.OIM:  # estimate_sldp's own variance: keep its intervals (the profile's near an edge)
        return dataclasses.replace(est, n=n, stderr=se, variance=words), cov_shares
    ci_low, ci_high = wald_interval(est.estimate, se, level, low=0.0, high=1.0)
    return dataclasses.replace(est, n=n, stderr=se, ci_low=ci_low, ci_high=ci_high, variance=words), cov_shares


def face_covariance(m: NDArray[np.float64], counts: SurveyCounts, pi: NDArray[np.float64], cov: Covariance
                    ) -> NDArray[np.float64] | None:
    """The ``(k, k)`` covariance under ``cov`` of the free shares (those above 0) of a maximum on the simplex's
    edge, the shares at 0 held there (their rows and columns 0), or None where fewer than two shares are free (a
    vertex: no free coordinate) or the free shares' information is singular (docs/theory.md section 8.4).

    The shares at 0 are where the constraint holds them, so the estimating equations are those of the face
    ``{pi_x > 0}``: in its tangent coordinates (the last free share follows from the others) the score of an answer
    ``E`` is ``(m_x(E) - m_r(E)) / p_E`` over the free ``x`` but the last, ``r``, and the module's ``oim``, ``opg``
    and ``robust`` are built from it as in the interior.

    Examples
    --------
    >>> import numpy as np
    >>> from designer.estimation.survey_design import SurveyCounts, face_covariance
    >>> from designer.vocabulary import Covariance
    >>> m = np.array([[0.8, 0.1, 0.1], [0.1, 0.8, 0.1], [0.1, 0.1, 0.8]])
    >>> counts = SurveyCounts.from_rows(3, [0] * 5 + [1] * 60 + [2] * 35)
    >>> cov = face_covariance(m, counts, np.array([0.0, 0.6, 0.4]), Covariance.ROBUST)
    >>> bool(cov[0, 0] == 0.0 and cov[1, 1] > 0 and abs(cov[1, 1] - cov[2, 2]) < 1e-15)
    True
    """
    k = m.shape[0]
    free = np.flatnonzero(pi > 0)
    if free.size < 2:
        return None
    p = pi @ m
    with np.errstate(divide="ignore", invalid="ignore"):
        g = np.where(p[:, None] > 0, (m[free[:-1]] - m[free[-1]]).T / p[:, None], 0.0)
    info = (g * counts.weighted[:, None]).T @ g
    if np.linalg.matrix_rank(info) < free.size - 1:
        return None
    cov_t = _tangent_covariance(np.linalg.inv(info), g, counts, cov)
    functionals = np.zeros((free.size - 1, k))
    functionals[:, free] = share_functionals(free.size)
    return np.asarray(functionals.T @ cov_t @ functionals)


def _boundary_survey(mech: Mechanism, counts: SurveyCounts, est: Estimate, chosen: Covariance, words: str, n: int,
                     level: float) -> Estimate:
    """A boundary fit under a survey variance: the free shares' standard errors and Wald intervals from
    :func:`face_covariance`, the shares at 0 without a standard error and with the weighted pseudo-likelihood's
    profile interval (approximate); or, where the face has no covariance, no standard errors and a warning that
    says why."""
    at_zero = [x for x, v in zip(mech.inputs, est.estimate) if v <= 0]
    cov_face = face_covariance(mech.matrix, counts, est.estimate, chosen)
    if cov_face is None:
        why = ("the maximum is a vertex of the simplex (no free share to vary)" if np.sum(est.estimate > 0) < 2
               else "the free shares' information is singular")
        note = (f"no {words} variance on the boundary: {why}; the intervals are the profile likelihood's of the "
                "weighted counts (approximate under weights or clusters)")
        return dataclasses.replace(est, n=n, stderr=np.full(mech.k, np.nan), variance=f"none ({why})",
                                   warnings=(*est.warnings, note))
    free = est.estimate > 0
    se = np.where(free, np.sqrt(np.maximum(np.diag(cov_face), 0.0)), np.nan)
    wald_low, wald_high = wald_interval(est.estimate, np.where(free, se, 0.0), level, low=0.0, high=1.0)
    ci_low = np.where(free, wald_low, est.ci_low)
    ci_high = np.where(free, wald_high, est.ci_high)
    note = (f"on the boundary ({', '.join(map(repr, at_zero))} at 0): the {words} variance is computed on the free "
            "shares, those at 0 held there; their intervals are the weighted pseudo-likelihood's profile intervals "
            "(approximate)")
    return dataclasses.replace(est, n=n, stderr=se, ci_low=ci_low, ci_high=ci_high,
                               variance=f"{words}, on the free shares (boundary)", warnings=(*est.warnings, note))


def _tangent_covariance(bread: NDArray[np.floating[Any]], g: NDArray[np.float64], counts: SurveyCounts,
                        cov: Covariance) -> NDArray[np.float64]:
    """The covariance in tangent coordinates from the inverse information ``bread`` and the answers' scores ``g``
    (``(answers, d)``): ``oim`` the bread, ``opg`` the inverse of the scores' outer products (the meat), ``robust``
    the sandwich; with clusters the meat sums the scores within each cluster (module docstring)."""
    if counts.clusters is not None:
        sums = counts.clusters @ g  # (G, d)
        meat = sums.T @ sums * cluster_correction(counts.clusters.shape[0], counts.respondents, g.shape[1])
    else:
        meat = (g * counts.squared[:, None]).T @ g
    if cov is Covariance.OIM:
        return np.asarray(bread, dtype=np.float64)
    if cov is Covariance.OPG:
        return np.asarray(np.linalg.inv(meat))
    return np.asarray(bread @ meat @ bread)


def share_covariance(m: NDArray[np.float64], counts: SurveyCounts, pi: NDArray[np.float64], cov: Covariance
                     ) -> NDArray[np.float64] | None:
    """The ``(k, k)`` covariance of the shares' estimate ``pi`` under ``cov`` (module docstring), or None when
    the observed information does not identify every share.

    Examples
    --------
    >>> import numpy as np
    >>> import designer
    >>> from designer.estimation.survey_design import SurveyCounts, share_covariance
    >>> from designer.vocabulary import Covariance
    >>> counts = SurveyCounts.from_rows(3, [0] * 30 + [1] * 50 + [2] * 20)
    >>> cov = share_covariance(designer.Q_2x3(0.6, 0.2).matrix, counts, np.array([0.25, 0.75]), Covariance.OIM)
    >>> print(f"{cov[0, 0]:.10f}")
    0.0117187500
    """
    k = m.shape[0]
    if k < 2 or not _identified_by(m, counts.weighted, pi):
        return None
    g = _answer_scores(m, pi)
    cov_t = _tangent_covariance(np.linalg.inv((g * counts.weighted[:, None]).T @ g), g, counts, cov)
    functionals = share_functionals(k)
    return np.asarray(functionals.T @ cov_t @ functionals)
