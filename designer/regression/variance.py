"""Standard errors of a regression fit under the survey's design: the observed information, the outer product
of the scores, and the sandwich (robust, cluster-robust, sampling weights). docs/theory.md section 9.1.

Every choice starts from the fit's :class:`~designer.regression.status.Diagnosis` covariance (the inverse
observed information of the well-conditioned terms; NaN rows for the others) and keeps its NaN pattern: a term
without a well-conditioned information has no standard error under any choice.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from ..estimation.survey_design import (
    cluster_correction,
    few_clusters,
    first_bad_weight,
    normalized_weights,
    variance_words,
)
from ..exceptions import InvalidArgumentError, RegressionError
from ..vocabulary import Covariance, WeightKind
from .likelihood import Likelihood, curvature
from .status import RCOND_TOL, Diagnosis, Spectrum

__all__ = ["SurveyDesign", "covariance", "identified_covariance", "on_terms", "sandwich", "score_meat", "survey_design"]


@dataclass(frozen=True)
class SurveyDesign:
    """Weights, clusters and the variance asked for, validated against the data.

    Attributes
    ----------
    weights : (n,) ndarray or None
        Positive weights of the rows kept, or None.
    weight_kind : WeightKind
    clusters : (n,) int ndarray or None
        Cluster index of each row (0..G-1), or None.
    n_clusters : int
        ``G`` (0 without clusters).
    cov : Covariance
        The variance to report.
    """

    weights: NDArray[np.float64] | None
    weight_kind: WeightKind
    clusters: NDArray[np.int64] | None
    n_clusters: int
    cov: Covariance

    @property
    def frequency(self) -> bool:
        """Whether the rows carry frequency weights (a row of weight ``f`` is ``f`` respondents)."""
        return self.weights is not None and self.weight_kind is WeightKind.FREQUENCY

    def respondents(self, rows: int) -> float:
        """``N``: the sum of the frequency weights, else the ``rows``."""
        return float(self.weights.sum()) if self.frequency and self.weights is not None else float(rows)

    def describe(self) -> str:
        """The choice in words, as the output names it."""
        return variance_words(self.cov, self.n_clusters, self.weight_kind if self.weights is not None else None)


def survey_design(data: Any, rows: NDArray[np.int64], *, weights: str | None, weight_kind: Any,
                  cluster: str | None, cov: Any) -> SurveyDesign:
    """Read ``weights`` and ``cluster`` (column names of ``data``, the rows kept for the fit) and settle the
    variance: ``cov=None`` is ``oim``, or ``robust`` under sampling weights or clusters, which admit nothing else.

    Raises :class:`RegressionError` naming the column and the row (0-based in the caller's data, via ``rows``).
    """
    kind = WeightKind.parse(weight_kind, "weight_kind")
    w = None
    if weights is not None:
        import pandas as pd

        if weights not in data.columns:
            raise RegressionError(f"weights column {weights!r} is not in the data (columns: {list(data.columns)})")
        w = pd.to_numeric(data[weights], errors="coerce").to_numpy(dtype=np.float64)
        i = first_bad_weight(w)
        if i is not None:
            raise RegressionError(f"weight {str(data[weights].iloc[i])!r} in column {weights!r} is not a positive "
                                  "number: every weight must be > 0 (leave out rows outside the population)",
                                  row=int(rows[i]))
        if kind is WeightKind.SAMPLING:  # a pseudo-likelihood: the weights' scale changes nothing, so it is 1
            w = normalized_weights(w)
    codes, groups = None, 0
    if cluster is not None:
        import pandas as pd

        if cluster not in data.columns:
            raise RegressionError(f"cluster column {cluster!r} is not in the data (columns: {list(data.columns)})")
        labels = data[cluster]
        if labels.isna().any():
            i = int(np.flatnonzero(labels.isna().to_numpy())[0])
            raise RegressionError(f"no value in the cluster column {cluster!r}", row=int(rows[i]))
        codes_, uniques = pd.factorize(labels.astype(str))
        codes, groups = np.asarray(codes_, dtype=np.int64), len(uniques)
        if groups < 2:
            raise RegressionError(f"cluster column {cluster!r} has {groups} cluster; a cluster-robust variance "
                                  "needs at least 2 (and is only trustworthy with many)")
    try:
        chosen = Covariance.settle(cov, sampling_weights=w is not None and kind is WeightKind.SAMPLING,
                                   clusters=codes is not None)
    except InvalidArgumentError as exc:
        raise RegressionError(str(exc)) from None
    return SurveyDesign(w, kind, codes, groups, chosen)


def score_meat(lik: Likelihood, params: NDArray[np.float64], clusters: NDArray[np.int64] | None = None,
               n_clusters: int = 0, *, frequency: bool = False) -> NDArray[np.float64]:
    """``B = sum_i s_i s_i'`` (or ``sum_g S_g S_g'`` with ``S_g`` the sum of the scores in cluster ``g``), the
    scores ``s_i`` including each row's weight; ``(P, P)`` in the parameters' order (outcome-major blocks).
    ``frequency``: the weights count respondents, and a row of weight ``f`` adds ``f`` unweighted scores'
    squares, ``f s s'``, not ``(f s)(f s)'`` (the meat of the replicated rows)."""
    r = lik.residuals(params)
    if clusters is None:
        if frequency and lik.weights is not None:
            f = lik.weights
            return curvature(lik.z, list(range(r.shape[0])), lambda j, m: r[j] * r[m] / f)
        return curvature(lik.z, list(range(r.shape[0])), lambda j, m: r[j] * r[m])
    n = lik.z.shape[0]
    member = sp.csr_matrix((np.ones(n), (clusters, np.arange(n))), shape=(n_clusters, n))
    blocks = []
    for j in range(r.shape[0]):
        z: Any = lik.z
        total = member @ (z.multiply(r[j][:, None]).tocsr() if sp.issparse(z) else z * r[j][:, None])
        blocks.append(total.toarray() if sp.issparse(total) else np.asarray(total))
    sums = np.hstack(blocks)  # (G, P)
    return np.asarray(sums.T @ sums)


def covariance(survey: SurveyDesign, fit: Diagnosis, lik: Likelihood,
               params: NDArray[np.float64]) -> tuple[NDArray[np.float64], str | None]:
    """The covariance ``survey.cov`` asks for on the fit's identified subspace (:func:`identified_covariance`, from
    ``fit.spectrum``; NaN where the fit has none), and a warning when the scores' outer product is not well
    conditioned."""
    if fit.spectrum is None:
        return np.full_like(fit.covariance, np.nan), None
    return identified_covariance(survey.cov, fit.spectrum, lambda: score_meat(
        lik, params, survey.clusters, survey.n_clusters, frequency=survey.frequency), survey.n_clusters,
        survey.respondents(lik.z.shape[0]))


def identified_covariance(cov: Covariance, spectrum: Spectrum, meat_of: Any, n_clusters: int, respondents: float
                          ) -> tuple[NDArray[np.float64], str | None]:
    """The covariance ``cov`` of every parameter on the identified subspace (``(P, P)``, finite; the caller gives a
    function of the parameters its variance only where ``spectrum.identified`` says so): ``oim`` the inverse
    information there, ``robust`` ``A B A`` with ``A`` that inverse and ``B = meat_of()`` (the scores' outer product,
    summed per cluster and scaled by the small-sample factor with ``n_clusters``), ``opg`` the inverse of ``B`` on
    the strong eigenvectors of the information (a warning when it is ill-conditioned)."""
    bread = spectrum.inverse()
    if cov is Covariance.OIM:
        return bread, None
    short = few_clusters(n_clusters, int(spectrum.strong.sum())) if n_clusters else None
    if short is not None:
        return np.full_like(bread, np.nan), short
    meat = np.asarray(meat_of(), dtype=np.float64)
    if n_clusters:  # statsmodels' and R sandwich's (vcovCL, HC1) small-sample factors
        meat = meat * cluster_correction(n_clusters, respondents, int(spectrum.strong.sum()))
    if cov is Covariance.ROBUST:
        return np.asarray(bread @ meat @ bread), None
    u = spectrum.vectors[:, spectrum.strong]  # the strong eigenvectors (scaled coordinates)
    inner = u.T @ (meat * spectrum.scale[:, None] * spectrum.scale[None, :]) @ u
    values = np.linalg.eigvalsh(inner) if inner.size else np.zeros(1)
    if not values[0] > RCOND_TOL * values[-1]:
        return np.full_like(bread, np.nan), ("the outer product of the scores is singular or ill-conditioned (too few "
                                             "respondents for rr's variance): no standard errors under cov opg; use "
                                             "cov oim")
    v = u @ np.linalg.inv(inner) @ u.T
    return np.asarray(v * spectrum.scale[:, None] * spectrum.scale[None, :]), None


def on_terms(full: NDArray[np.float64], fit: Diagnosis) -> NDArray[np.float64]:
    """``full`` with the rows and columns of the parameters without a standard error in ``fit`` set to NaN."""
    out = np.array(full, dtype=np.float64)
    bad = ~np.isfinite(np.diag(fit.covariance))
    out[bad, :] = np.nan
    out[:, bad] = np.nan
    return out


def sandwich(cov: Covariance, bread: NDArray[np.float64], meat_of: Any, n_clusters: int,
             respondents: float) -> tuple[NDArray[np.float64], str | None]:
    """The covariance ``cov`` from ``bread`` (the inverse observed information, NaN rows for terms without one)
    and the scores' outer product ``meat_of()`` (``(P, P)``; summed per cluster when ``n_clusters`` > 0, then
    scaled by the small-sample factor with ``respondents`` rows), with a warning when it is ill-conditioned."""
    if cov is Covariance.OIM:
        return bread, None
    good = np.flatnonzero(np.isfinite(np.diag(bread)))
    out = np.full_like(bread, np.nan)
    if good.size == 0:
        return out, None
    short = few_clusters(n_clusters, good.size) if n_clusters else None
    if short is not None:
        return out, short
    meat = np.asarray(meat_of())[np.ix_(good, good)]
    if n_clusters:  # statsmodels' and R sandwich's (vcovCL, HC1) small-sample factors
        meat = meat * cluster_correction(n_clusters, respondents, good.size)
    if cov is Covariance.OPG:
        values = np.linalg.eigvalsh(meat)
        if not values[0] > RCOND_TOL * values[-1]:
            return out, ("the outer product of the scores is singular or ill-conditioned (too few respondents "
                         "for rr's variance): no standard errors under cov opg; use cov oim")
        out[np.ix_(good, good)] = np.linalg.inv(meat)
        return out, None
    a = bread[np.ix_(good, good)]
    out[np.ix_(good, good)] = a @ meat @ a
    return out, None
