"""Regression with one unknown share common to every respondent (docs/theory.md section 9.4).

The two-group designs of the field estimate, besides the prevalence, one more number that the design leaves
unknown: the share of carriers who answer regardless (the stochastic lie detector; RRreg's honesty ``t`` is one
minus it), the share of everyone who does (cheater detection), or the prevalence of an unrelated question
(the unrelated-question design with an unknown prevalence). In each, group ``g``'s mechanism is a mixture
``M_g(s) = M_g^0 + s D_g`` of two known mechanisms, linear in the unknown share ``s``, and the prevalence
follows the (multinomial) logit of section 9 with covariates while ``s`` is one constant: RRreg's ``RRlog``
model. The log-likelihood of respondent ``i`` is ``log sum_x P(x | z_i) (A[x, i] + s D[x, i])``; its score and
Hessian in ``(beta, s)`` are those of section 9 with the channel ``A + s D`` plus the derivatives in ``s``
(:class:`ShareLikelihood`). The share is fitted on the log-odds scale (``s = expit(phi)``) and reported with
the observed information in ``s`` itself (the two agree at the maximum, where the score vanishes).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.special import expit, logit

from .._internal.numeric import wald_interval
from ..estimation.groups import (
    GroupEstimate,
    Noncompliance,
    PrevalenceBounds,
    answers_per_group,
    everyone_warning,
    prevalence_bounds,
    share_record,
    stack_mechanisms,
    stacking_constant,
)
from ..estimation.survey_design import SurveyCounts, variance_words
from ..exceptions import RegressionError
from ..mechanism import Mechanism
from ..vocabulary import Covariance, NoncomplianceScope, WeightKind
from .design import column_norms, constant_columns, weighted_gram
from .fit_result import RegressionResult, fit_statistics
from .likelihood import Likelihood, decrement_tolerance, fit_newton, softmax_columns
from .status import Diagnosis, diagnose
from .variance import SurveyDesign, sandwich

__all__ = ["ShareLikelihood", "estimate_share", "fit_share", "regress_share", "share_channels"]

#: Start values of the share tried before the joint fit (the best log-likelihood wins).
START_SHARES = (0.05, 0.2, 0.4, 0.6, 0.8, 0.95)


def share_channels(mechanisms: Mapping[str, Mechanism], rule: Noncompliance, groups: Sequence[str] | None = None
                   ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``(A, D)``, each ``(k, F)`` over the stacked columns of :func:`designer.estimation.groups.stack_mechanisms`
    (scaled by
    ``1/G`` like them): group ``g`` answers through ``A_g + s D_g``.

    - ``carriers:a``: the trait's row moves to the point mass on ``{a}`` as ``s`` goes from 0 to 1;
    - ``everyone:a``: every row does;
    - ``unrelated:a`` (two inputs named like the two answers, each group's matrix ``p I + (1 - p) 1 f'``): the
      part ``1 - p`` that answers the unrelated question says ``a`` with probability ``s``, the other answer
      otherwise, whatever ``f`` the file was written with.

    ``groups`` (default: every group) names the groups the share applies to; the others answer through their
    own mechanism (RRreg's convention for a group asked directly: its answers are taken as given).
    """
    names = list(mechanisms)
    base, _ = stack_mechanisms(mechanisms, None)
    chosen = names if groups is None else [str(g) for g in groups]
    unknown = [g for g in chosen if g not in names]
    if unknown or not chosen:
        raise RegressionError(f"the unknown share's groups {unknown or chosen} are not among the groups {names}")
    first = mechanisms[names[0]]
    k = first.k
    if rule.scope is NoncomplianceScope.CARRIERS and (k != 2 or rule.answer not in first.inputs):
        raise RegressionError("carriers:ANSWER needs two inputs, ANSWER one of them (the carriers hold the other); "
                              f"the inputs are {list(first.inputs)}")
    a_parts: list[NDArray[np.float64]] = []
    d_parts: list[NDArray[np.float64]] = []
    for name in names:
        mech = mechanisms[name]
        m = mech.matrix
        if rule.answer not in mech.frame:
            raise RegressionError(f"answer {rule.answer!r} is not an answer of group {name!r} (its frame is "
                                  f"{list(mech.frame)})")
        single = [j for j, b in enumerate(mech.focal) if int(b) == 1 << mech.frame.index(rule.answer)]
        if not single:
            raise RegressionError(f"group {name!r} never answers {{{rule.answer}}} alone")
        point = np.zeros(m.shape[1])
        point[single[0]] = 1.0
        a, d = m.copy(), np.zeros_like(m)
        if name not in chosen:
            pass
        elif rule.scope is NoncomplianceScope.CARRIERS:
            trait = 1 - mech.inputs.index(rule.answer)
            d[trait] = point - m[trait]
        elif rule.scope is NoncomplianceScope.EVERYONE:
            d[:] = point[None, :] - m
        else:
            a, d = _unrelated(mech, name, single[0])
        a_parts.append(a)
        d_parts.append(d)
    scale = 1.0 / len(names)
    a_all, d_all = np.hstack(a_parts) * scale, np.hstack(d_parts) * scale
    assert a_all.shape == base.matrix.shape and k == a_all.shape[0]
    return a_all, d_all


def _unrelated(mech: Mechanism, name: str, column: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The unrelated-question mixture of one group: ``p`` from the file's matrix, the forced part split by ``s``."""
    singles = [bin(int(b)).count("1") == 1 for b in mech.focal]
    if mech.k != 2 or len(mech.focal) != 2 or not all(singles) or set(mech.frame) != set(mech.inputs):
        raise RegressionError(f"an unrelated question needs two inputs answered by their own names; group {name!r} "
                              f"has inputs {list(mech.inputs)} and answers {list(mech.frame)}")
    masks = [int(b) for b in mech.focal]
    cols = [masks.index(1 << mech.frame.index(x)) for x in mech.inputs]  # each input's own answer column
    m = mech.matrix
    p = float(m[0, cols[0]] - m[1, cols[0]])
    if not p >= -1e-12:  # p = 0: a group asked only the unrelated question (it measures the share directly)
        raise RegressionError(f"group {name!r}: an input's own answer is less likely under it than under the "
                              f"other (p = {p:.6g}); the matrix is not an unrelated-question design")
    p = max(p, 0.0)
    other = cols[1] if column == cols[0] else cols[0]
    a = np.zeros_like(m)
    for x in range(2):
        a[x, cols[x]] += p
        a[x, other] += 1 - p
    d = np.zeros_like(m)
    d[:, column] += 1 - p
    d[:, other] -= 1 - p
    return a, d


class ShareLikelihood:
    """Log-likelihood, score and Hessian in ``(beta, s)`` (``s`` last) of the mixture ``A + s D``.

    ``z`` ``(n, q)``, ``a`` and ``d`` ``(k, n)`` (each respondent's answer column of ``A`` and ``D``),
    ``reference`` the input whose log-odds are 0, ``weights`` ``(n,)`` or None.
    """

    def __init__(self, z: Any, a: NDArray[np.float64], d: NDArray[np.float64], reference: int,
                 weights: NDArray[np.float64] | None = None) -> None:
        self.z, self.a, self.d, self.reference, self.weights = z, a, d, reference, weights
        self.k = a.shape[0]
        self.others = [j for j in range(self.k) if j != reference]

    def inner(self, s: float) -> Likelihood:
        """The likelihood of section 9 with the channel fixed at ``A + s D``."""
        return Likelihood(self.z, self.a + s * self.d, self.reference, self.weights)

    def loglike(self, params: NDArray[np.float64]) -> float:
        s = float(params[-1])
        if not 0.0 <= s <= 1.0:
            return -np.inf
        return self.inner(s).loglike(params[:-1])

    def _parts(self, params: NDArray[np.float64]) -> tuple[Likelihood, NDArray[np.float64], NDArray[np.float64],
                                                             NDArray[np.float64], NDArray[np.float64]]:
        """The likelihood at ``s``, the prior and posterior ``(k, n)``, ``q_i`` (inf where 0) and ``u_i``."""
        s = float(params[-1])
        lik = self.inner(s)
        p, w, _ = lik.posterior(params[:-1])
        q = np.add.reduce(list(p * lik.a))
        q = np.where(q > 0, q, np.inf)
        u = np.add.reduce(list(p * self.d)) / q  # d log q_i / d s
        return lik, p, w, q, u

    def row_scores(self, params: NDArray[np.float64]) -> NDArray[np.float64]:
        """``(n, P)``: each respondent's score, weight included, in the parameters' order."""
        lik, _, _, _, u = self._parts(params)
        r = lik.residuals(params[:-1])  # (k-1, n), weights included
        z = self.z.toarray() if hasattr(self.z, "toarray") else np.asarray(self.z)
        v = 1.0 if self.weights is None else self.weights
        return np.hstack([np.hstack([z * r[j][:, None] for j in range(r.shape[0])]), (u * v)[:, None]])

    def score(self, params: NDArray[np.float64]) -> NDArray[np.float64]:
        lik, _, _, _, u = self._parts(params)
        v = 1.0 if self.weights is None else self.weights
        return np.append(lik.score(params[:-1]), float(np.sum(u * v)))

    def hessian(self, params: NDArray[np.float64]) -> NDArray[np.float64]:
        lik, p, w, q, u = self._parts(params)
        v = 1.0 if self.weights is None else self.weights
        beta_block = lik.hessian(params[:-1])
        # d2 log q_i / d eta_j d s = p_ji D_ji / q_i - w_ji u_i
        cross = np.concatenate([np.asarray(self.z.T @ (v * (p[j] * self.d[j] / q - w[j] * u))).ravel()
                                for j in self.others])
        size = beta_block.shape[0] + 1
        out = np.empty((size, size))
        out[:-1, :-1] = beta_block
        out[:-1, -1] = out[-1, :-1] = cross
        out[-1, -1] = -float(np.sum(v * u * u))
        return out

    def meat(self, params: NDArray[np.float64], clusters: NDArray[np.int64] | None, n_clusters: int,
             frequency: bool) -> NDArray[np.float64]:
        """``sum_i s_i s_i'`` (a row of frequency weight ``f`` adds ``f s s'``), or over cluster sums."""
        scores = self.row_scores(params)
        if clusters is None:
            if frequency and self.weights is not None:
                return np.asarray((scores / self.weights[:, None]).T @ scores)
            return np.asarray(scores.T @ scores)
        sums = np.zeros((n_clusters, scores.shape[1]))
        np.add.at(sums, clusters, scores)
        return np.asarray(sums.T @ sums)


def fit_share(lik: ShareLikelihood, beta: NDArray[np.float64], share: float
              ) -> tuple[NDArray[np.float64], int, bool]:
    """Maximise over ``(beta, phi)``, ``s = expit(phi)``: a trust-region Newton method on the analytic derivatives,
    then Newton steps until the decrement is below :data:`~designer.regression.likelihood.DECREMENT_TOL`.
    Returns ``(beta, s)`` (``s`` last), the iterations and whether the decrement test passed."""
    from scipy.optimize import minimize

    n = lik.z.shape[0]

    def to_raw(x: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.append(x[:-1], expit(x[-1]))

    def value(x: NDArray[np.float64]) -> float:
        return -lik.loglike(to_raw(x)) / n

    def grad(x: NDArray[np.float64]) -> NDArray[np.float64]:
        s = float(expit(x[-1]))
        g = lik.score(to_raw(x))
        g[-1] *= s * (1 - s)
        return -g / n

    def hess(x: NDArray[np.float64]) -> NDArray[np.float64]:
        raw = to_raw(x)
        s = float(raw[-1])
        slope = s * (1 - s)
        h = lik.hessian(raw)
        g = lik.score(raw)
        h[:-1, -1] *= slope
        h[-1, :-1] *= slope
        h[-1, -1] = h[-1, -1] * slope**2 + g[-1] * slope * (1 - 2 * s)
        return -h / n

    start = np.append(beta, logit(min(max(share, 1e-3), 1 - 1e-3)))
    opt = minimize(value, start, jac=grad, hess=hess, method="trust-exact", options={"gtol": 1e-10, "maxiter": 500})
    x, iterations = np.asarray(opt.x, dtype=np.float64), int(opt.nit)
    for _ in range(20):
        g, info = -grad(x) * n, hess(x) * n
        try:
            step = np.linalg.solve(info, g)
            np.linalg.cholesky(info)
        except np.linalg.LinAlgError:
            return to_raw(x), iterations, False
        if float(g @ step) <= decrement_tolerance(value(x) * n):  # near the maximum the last step is exact...
            closer = x + step  # ...unless the information is (near) singular: then keep the point that fits better
            rounding = 1e-13 * max(1.0, abs(value(x)))  # below rounding the step decides, not the values' noise
            return to_raw(closer if value(closer) <= value(x) + rounding else x), iterations, True
        base, t = value(x), 1.0
        while t > 1e-6 and value(x + t * step) > base:
            t /= 2
        x, iterations = x + t * step, iterations + 1
    return to_raw(x), iterations, False


def _judge(lik: ShareLikelihood, params: NDArray[np.float64], decrement_ok: bool, labels: list[str],
           norms: NDArray[np.float64], gram: NDArray[np.float64] | None = None) -> Diagnosis:
    """:func:`~designer.regression.status.diagnose` on the log-odds of the share (where the fit runs, and where a
    share the answers do not identify is a curved ridge, not a straight run to the edge of [0, 1]); the
    covariance returned is in ``(beta, s)``, the delta method's (exact at the maximum). ``gram``: the
    parameters' covariate cross-products, for telling near-collinear terms from separation (``diagnose``)."""
    share = float(params[-1])
    slope = share * (1 - share)
    if not slope > 0:  # on the edge: the log-odds are infinite, judge in s itself
        return diagnose(lik.loglike, params, -lik.hessian(params), decrement_ok, labels, norms, gram=gram)
    jac = np.ones(params.size)
    jac[-1] = slope
    info = -lik.hessian(params) * jac[:, None] * jac[None, :]

    def loglike(x: NDArray[np.float64]) -> float:
        return lik.loglike(np.append(x[:-1], expit(x[-1])))

    fit = diagnose(loglike, np.append(params[:-1], logit(share)), info, decrement_ok, labels, norms, gram=gram)
    return dataclasses.replace(fit, covariance=fit.covariance * jac[:, None] * jac[None, :])


def _grid_start(lik: ShareLikelihood) -> tuple[NDArray[np.float64], float] | None:
    """Two inputs: the best ``(prevalence, share)`` of the intercept-only model on a 99 x 99 grid (the answers'
    distinct columns weighted), as the intercept and the share to start from, slopes 0; None when the design
    matrix has no intercept."""
    intercept = constant_columns(lik.z)
    if lik.k != 2 or not intercept.size:
        return None
    columns, inverse = np.unique(np.vstack([lik.a, lik.d]), axis=1, return_inverse=True)
    weights = np.bincount(inverse.ravel(), weights=lik.weights, minlength=columns.shape[1])
    grid = np.linspace(0.005, 0.995, 99)
    other = lik.others[0]
    a, d = columns[:2], columns[2:]
    q = (grid[:, None, None] * (a[other] + grid[None, :, None] * d[other])
         + (1 - grid[:, None, None]) * (a[lik.reference] + grid[None, :, None] * d[lik.reference]))
    with np.errstate(divide="ignore", invalid="ignore"):
        values = np.where(q > 0, np.log(np.where(q > 0, q, 1.0)), -np.inf) @ weights
    i, j = np.unravel_index(int(np.nanargmax(values)), values.shape)
    beta = np.zeros(lik.z.shape[1])
    beta[intercept[0]] = logit(grid[i]) / float(np.asarray(lik.z[0, intercept[0]]).ravel()[0])
    return beta, float(grid[j])


def _best_start(lik: ShareLikelihood) -> tuple[NDArray[np.float64], float]:
    """The logit at each of :data:`START_SHARES` held fixed (intercept from the answers, slopes 0), the best;
    for two inputs the intercept-only grid of :func:`_grid_start`."""
    grid = _grid_start(lik)
    if grid is not None:
        return grid
    best: tuple[float, NDArray[np.float64], float] | None = None
    for share in START_SHARES:
        inner = lik.inner(share)
        start = np.zeros(lik.z.shape[1] * (lik.k - 1))
        try:
            beta = fit_newton(inner, start)[0]
        except (np.linalg.LinAlgError, ValueError):
            continue
        value = inner.loglike(beta)
        if np.isfinite(value) and (best is None or value > best[0]):
            best = (value, beta, share)
    if best is None:
        raise RegressionError("no start value of the share gives the answers a positive likelihood")
    return best[1], best[2]


def _fit(lik: ShareLikelihood) -> tuple[NDArray[np.float64], int, bool]:
    beta, share = _best_start(lik)
    return fit_share(lik, beta, share)


def regress_share(z: Any, names: list[str], codes: NDArray[np.int64], mechanisms: Mapping[str, Mechanism],
                  rule: Noncompliance, reference: str, survey: SurveyDesign, level: float,
                  groups: Sequence[str] | None = None) -> RegressionResult:
    """The logit of the prevalence on ``z`` ``(n, q)`` (term ``names``) with one constant unknown share (module
    docstring), from the answers' stacked columns ``codes`` ``(n,)``. The caller fills in the fields about the
    formula, the data and the groups (``dataclasses.replace``); the share is ``noncompliance``."""
    a_all, d_all = share_channels(mechanisms, rule, groups)
    inputs = list(next(iter(mechanisms.values())).inputs)
    ref = inputs.index(reference)
    lik = ShareLikelihood(z, a_all[:, codes], d_all[:, codes], ref, survey.weights)
    params, iterations, decrement_ok = _fit(lik)
    n_rows = z.shape[0]
    norms = np.append(np.tile(column_norms(z, survey.weights if survey.frequency else None), lik.k - 1),
                      np.sqrt(survey.respondents(n_rows)))
    outcomes = [inputs[j] for j in lik.others]
    share_label = "(unrelated share)" if rule.scope is NoncomplianceScope.UNRELATED else "(non-compliant share)"
    labels = [f"{o}:{t}" if len(outcomes) > 1 else t for o in outcomes for t in names] + [share_label]
    row_counts = survey.weights if survey.frequency else None
    gram = np.zeros((params.size, params.size))  # the share is no covariate: its own entry, never collinear
    gram[:-1, :-1] = np.kron(np.eye(lik.k - 1), weighted_gram(z, np.ones(n_rows) if row_counts is None else row_counts))
    gram[-1, -1] = norms[-1] ** 2
    fit = _judge(lik, params, decrement_ok, labels, norms, gram)
    cov, cov_warning = sandwich(survey.cov, fit.covariance,
                                lambda: lik.meat(params, survey.clusters, survey.n_clusters, survey.frequency),
                                survey.n_clusters, survey.respondents(n_rows))
    shown = params[:-1].copy()
    for j, sign in fit.diverging.items():
        if j < shown.size:
            shown[j] = sign * np.inf
    intercept = constant_columns(z)
    null = ShareLikelihood(z[:, intercept[:1]] if intercept.size else np.ones((n_rows, 1)), lik.a, lik.d, ref,
                           survey.weights)
    null_loglik = null.loglike(_fit(null)[0]) if len(names) > 1 else lik.loglike(params)
    shift = stacking_constant(float(survey.weights.sum()) if survey.weights is not None else n_rows, len(mechanisms))
    loglik = lik.loglike(params)
    result = fit_statistics(params[:-1], cov[:-1, :-1], names, outcomes, level, shown, loglik=loglik + shift,
                            null_loglik=null_loglik + shift, n=survey.respondents(n_rows), k=lik.k,
                            sandwich=survey.cov is Covariance.ROBUST)
    extra = _share_summary(rule, float(params[-1]), float(cov[-1, -1]), level, mechanisms, groups)
    if rule.scope is NoncomplianceScope.EVERYONE:
        extra["bounds"] = _mean_bounds(lik, params, cov, inputs, survey.weights, level).records()
    return dataclasses.replace(result, noncompliance=extra, converged=fit.status == "converged",
                               iterations=iterations, status=fit.status,
                               warnings=fit.warnings + ((cov_warning,) if cov_warning else ()))


def _mean_bounds(lik: ShareLikelihood, params: NDArray[np.float64], cov: NDArray[np.float64], inputs: list[str],
                 weights: NDArray[np.float64] | None, level: float) -> PrevalenceBounds:
    """Cheater detection with covariates: each input's prevalence averaged over the respondents (weighted),
    ``low = (1 - s) mean_i p_xi`` and ``high = low + s``, with delta-method intervals from ``cov``
    ``(P + 1, P + 1)`` (the coefficients, then ``s``)."""
    share = float(params[-1])
    inner = Likelihood(lik.z, lik.a, lik.reference)
    p = inner.probabilities(params[:-1])  # (k, n)
    w = np.ones(p.shape[1]) if weights is None else weights
    w = w / w.sum()
    mean = p @ w
    grad = np.zeros((lik.k, params.size))
    for x in range(lik.k):
        grad[x, :-1] = np.concatenate([np.asarray(lik.z.T @ (w * p[x] * ((x == j) - p[j]))).ravel()
                                       for j in lik.others])
    low = (1 - share) * mean
    grad_low = np.hstack([grad[:, :-1] * (1 - share), -mean[:, None]])
    grad_high = grad_low.copy()
    grad_high[:, -1] += 1.0
    finite = cov if np.all(np.isfinite(cov)) else None
    return prevalence_bounds(tuple(inputs), low, low + share, grad_low, grad_high, finite, level)


def _share_summary(rule: Noncompliance, share: float, variance: float, level: float,
                   mechanisms: Mapping[str, Mechanism], groups: Sequence[str] | None) -> dict[str, Any]:
    """The JSON shape of the unknown share: scope, answer, share, stderr, interval, model and groups."""
    se = float(np.sqrt(variance)) if np.isfinite(variance) and variance >= 0 else float("nan")
    return share_record(rule, share, se, level, model="constant",
                        groups=list(mechanisms) if groups is None else [str(g) for g in groups])


def estimate_share(mechanisms: Mapping[str, Mechanism], counts: SurveyCounts, rule: Noncompliance, *,
                   groups: Sequence[str] | None = None, cov: Any = None, level: float = 0.95) -> GroupEstimate:
    """The shares and one constant unknown share (module docstring) from the answer counts of several groups.

    Parameters
    ----------
    mechanisms : mapping of str to Mechanism
        Each group's ``(k, F_g)`` mechanism (Def 3.1), over the same inputs.
    counts : SurveyCounts
        Over the stacked columns of :func:`designer.estimation.groups.stack_mechanisms` (weights and clusters as in
        :func:`designer.estimation.survey_design.estimate_survey`).
    rule : Noncompliance
        ``carriers:a``, ``everyone:a`` or ``unrelated:a``.
    groups : sequence of str, optional
        The groups the share applies to (default: all).
    cov : {None, "oim", "opg", "robust"}
    level : float

    Returns
    -------
    GroupEstimate
        Shares as :func:`designer.estimation.groups.estimate_groups` reports them (under ``everyone``: the compliant
        holders, ``high`` adding the non-compliant); ``noncompliance`` holds the unknown share; ``classes`` is
        None.
    """
    a_all, d_all = share_channels(mechanisms, rule, groups)
    if counts.weighted.size != a_all.shape[1]:
        raise RegressionError(f"counts must cover the {a_all.shape[1]} stacked columns, got {counts.weighted.size}")
    cells = np.flatnonzero(counts.weighted > 0)
    k = a_all.shape[0]
    z = np.ones((cells.size, 1))
    lik = ShareLikelihood(z, a_all[:, cells], d_all[:, cells], k - 1, counts.weighted[cells])
    params, _, decrement_ok = _fit(lik)
    chosen = Covariance.settle(cov, sampling_weights=counts.weight_kind is WeightKind.SAMPLING,
                               clusters=counts.clusters is not None)
    inputs = list(next(iter(mechanisms.values())).inputs)
    labels = [*inputs[:-1], "(share)"]
    norms = np.full(params.size, np.sqrt(counts.respondents))
    fit = _judge(lik, params, decrement_ok, labels, norms)
    scores = ShareLikelihood(z, lik.a, lik.d, k - 1).row_scores(params)  # one answer set's score, (cells, P)
    n_clusters = 0 if counts.clusters is None else counts.clusters.shape[0]

    def meat() -> NDArray[np.float64]:
        if counts.clusters is not None:
            sums = counts.clusters[:, cells] @ scores
            return np.asarray(sums.T @ sums)
        return np.asarray((scores * counts.squared[cells][:, None]).T @ scores)

    covariance, warning = sandwich(chosen, fit.covariance, meat, n_clusters, counts.respondents)
    share = float(params[-1])
    pi = softmax_columns(np.append(params[:-1], 0.0)[:, None])[:, 0]  # the reference input is the last
    jac = np.zeros((k, params.size))  # d pi_x / d (beta, s)
    jac[:, :-1] = (np.diag(pi) - np.outer(pi, pi))[:, :-1]
    estimate, low, high = pi.copy(), pi.copy(), pi.copy()
    warnings = list(fit.warnings) + ([warning] if warning else [])
    bounds = None
    if rule.scope is NoncomplianceScope.EVERYONE:
        jac = np.hstack([jac[:, :-1] * (1 - share), -pi[:, None]])
        estimate = low = (1 - share) * pi
        high = estimate + share
        warnings.append(everyone_warning(share, rule.answer))
        jac_high = jac.copy()
        jac_high[:, -1] += 1.0  # d high / d s = 1 - pi
        bounds = prevalence_bounds(tuple(inputs), low, high, jac, jac_high, covariance, level)
    with np.errstate(invalid="ignore"):
        stderr = np.sqrt(np.maximum(np.diag(jac @ covariance @ jac.T), 0.0))
    ci_low, ci_high = wald_interval(estimate, stderr, level, low=0.0, high=1.0)
    _, offsets = stack_mechanisms(mechanisms, None)
    loglik = lik.loglike(params) + stacking_constant(float(counts.weighted.sum()), len(mechanisms))
    words = variance_words(chosen, n_clusters, counts.weight_kind)
    return GroupEstimate(inputs=tuple(inputs), estimate=estimate, stderr=stderr, ci_low=np.asarray(ci_low),
                         ci_high=np.asarray(ci_high), low=np.asarray(low), high=np.minimum(high, 1.0),
                         noncompliance=_share_summary(rule, share, float(covariance[-1, -1]), level, mechanisms,
                                                      groups),
                         groups=tuple(mechanisms), group_sizes=answers_per_group(counts, offsets), classes=None,
                         loglik=loglik, status=fit.status, warnings=tuple(warnings), variance=words, level=level,
                         bounds=bounds)
