"""Shares at or near the edge of the simplex: the boundary status and its profile-likelihood intervals
(docs/fits.md, "On the boundary").

A share at 0 held there by the constraint ``pi_x >= 0`` (:func:`at_boundary`) has no interior maximum to build a
Wald interval on; the profile likelihood with the unified approach's critical values (:func:`unified_critical`,
Feldman and Cousins 1998) gives intervals that keep their level at and near the edge (:func:`profile_intervals`,
:func:`near_edge_intervals`).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from .._internal.numeric import two_sided_z
from .mle import share_functionals, tangent_form

__all__ = ["BOUNDARY_TOL", "NEAR_EDGE", "at_boundary", "boundary_warning", "critical_value", "near_edge_intervals",
           "profile_intervals", "profile_statistic", "unified_critical"]


#: A share at 0 whose KKT multiplier ``1 - g_x`` exceeds this is on the boundary: the likelihood would rise by
#: moving it below 0 (docs/fits.md).
BOUNDARY_TOL = 1e-8


def at_boundary(m: NDArray[np.float64], counts: NDArray[np.float64], pi: NDArray[np.float64]) -> NDArray[np.bool_]:
    """The shares at 0 whose ``g_x = sum_E f_E m_x(E) / (pi . m(E))`` is below ``1 - BOUNDARY_TOL``, ``(k,)`` bool:
    the maximum lies on the simplex's edge, held there by the constraint ``pi_x >= 0`` (not by a flat likelihood,
    where ``g_x = 1``). A Wald interval assumes the maximum is interior; these fits get profile-likelihood
    intervals (:func:`profile_intervals`).

    Examples
    --------
    >>> from designer.estimation.boundary import at_boundary
    >>> import numpy as np
    >>> warner = np.array([[0.75, 0.25], [0.25, 0.75]])  # Warner's design, p = 0.75
    >>> at_boundary(warner, np.array([20.0, 80.0]), np.array([0.0, 1.0])).tolist()  # 20% 'yes' is below 1 - p
    [True, False]
    """
    used = counts > 0
    q = pi @ m[:, used]
    if m.shape[0] < 2 or np.any(q <= 0):
        return np.zeros(m.shape[0], dtype=bool)
    g = m[:, used] @ (counts[used] / counts[used].sum() / q)
    return np.asarray((pi <= 0) & (g < 1 - BOUNDARY_TOL))


def unified_critical(distance: float, level: float) -> float:
    """The critical value of the likelihood-ratio statistic of a parameter ``distance`` standard errors inside its
    range's edge (Feldman and Cousins 1998, the unified approach, for a normal estimate held at the edge): the
    ``c`` with ``P(LR <= c) = level`` when the estimate is ``max(X, 0)``, ``X ~ N(distance, 1)``. Then ``LR =
    (X - d)^2`` for ``X >= 0`` and ``d^2 - 2 X d`` below, so ``P(LR <= c) = Phi(sqrt c) - Phi(-(d^2 + c) / (2 d))``
    once ``sqrt c > d`` (else the two-sided ``chi2_1``). It runs from ``chi2_1(2 level - 1)`` at the edge (2.71 at
    0.95: the one-sided interval) to ``chi2_1(level)`` (3.84) from ``d >= z``; intervals with it cover at ``level``
    near the edge, where the constant ``chi2_1(level)`` covers up to ``(1 + level) / 2``.

    Examples
    --------
    >>> from designer.estimation.boundary import unified_critical
    >>> round(unified_critical(0.0, 0.95), 4), round(unified_critical(3.0, 0.95), 4)  # chi2_1(0.90), chi2_1(0.95)
    (2.7055, 3.8415)
    """
    from scipy.optimize import brentq
    from scipy.special import ndtr

    z = two_sided_z(level)
    d = max(float(distance), 0.0)
    if d >= z:
        return z * z

    def shortfall(c: float) -> float:  # P(LR <= c) - level, increasing in c
        root = math.sqrt(c)
        if root <= d and d > 0:  # (at the edge, the estimate's atom at 0: the second form, Phi(sqrt c))
            return float(ndtr(root) - ndtr(-root)) - level
        return float(ndtr(root) - (ndtr(-(d * d + c) / (2 * d)) if d > 0 else 0.0)) - level

    # at the edge P(LR <= c) = Phi(sqrt c): chi2_1(2 level - 1) there; below 0.5 the atom at LR = 0 alone exceeds the
    # level, and 0 is the least critical value (the bracket's lower end)
    lower = two_sided_z(2 * level - 1) ** 2 * (1 - 1e-12) if level > 0.5 else 0.0
    if shortfall(lower) >= 0:
        return lower
    return float(brentq(shortfall, lower, z * z * (1 + 1e-12), xtol=1e-12))


def _share_variance(m: NDArray[np.float64], n: float, pi: NDArray[np.float64], s: int) -> float:
    """Share ``s``'s variance from the Fisher information of ``n`` answers at ``pi`` (inf where it is singular)."""
    q = pi @ m
    used = q > 0
    info = tangent_form((m[:, used] / q[used]) @ m[:, used].T)
    functional = share_functionals(m.shape[0])[:, s]
    try:
        return float(functional @ np.linalg.solve(info, functional)) / n
    except np.linalg.LinAlgError:
        return math.inf


def profile_statistic(m: NDArray[np.float64], counts: NDArray[np.float64], best: float, s: int, v: float, *,
                      fallback: NDArray[np.float64] | None = None) -> tuple[float, NDArray[np.float64], bool]:
    """``2 (best - max_{pi_s = v} l)`` (at least 0), the constrained maximum and its verdict: the likelihood-ratio
    statistic of ``pi_s = v`` given the maximum log-likelihood ``best``. The constrained maximum is the verified
    fit of :func:`~designer.estimation.share_tests.constrained_shares`, started cold (equal shares) and, when
    that fit is not verified, from ``fallback`` (the maximum's shares); the higher of the two is kept (a lower
    log-likelihood only makes the statistic larger; of two as high, the verified one) and its verdict returned.

    Examples
    --------
    >>> import numpy as np
    >>> from designer.estimation.boundary import profile_statistic
    >>> warner = np.array([[0.75, 0.25], [0.25, 0.75]])
    >>> lr, point, verified = profile_statistic(warner, np.array([60.0, 40.0]), 60 * np.log(0.6) + 40 * np.log(0.4),
    ...                                         0, 0.5)
    >>> round(float(lr), 6), verified  # 2 (60 log 0.6 + 40 log 0.4 - 100 log 0.5)
    (4.027103, True)
    """
    from .mle import _loglik
    from .share_tests import constrained_shares

    point, verified = constrained_shares(m, counts, s, v)
    if not verified and fallback is not None:
        other, other_verified = constrained_shares(m, counts, s, v, start=fallback)
        if (_loglik(m, counts, other), other_verified) > (_loglik(m, counts, point), verified):
            point, verified = other, other_verified  # higher, or as high and verified
    value = _loglik(m, counts, point)
    return (max(2.0 * (best - value), 0.0) if math.isfinite(value) else math.inf), point, bool(verified)


def critical_value(m: NDArray[np.float64], counts: NDArray[np.float64], point: NDArray[np.float64], s: int,
                   level: float) -> float:
    """The critical value an interval end ``v = point[s]`` is held to: :func:`unified_critical` at ``v``'s distance
    from the nearer end of [0, 1] in standard errors (the Fisher information of ``counts.sum()`` answers at the
    constrained maximum ``point``): ``chi2_1(2 level - 1)`` (2.7055 at 0.95) at the edge, ``chi2_1(level)``
    (3.8415) from ``z`` standard errors inside (docs/theory.md section 8.4).

    Examples
    --------
    >>> import numpy as np
    >>> from designer.estimation.boundary import critical_value
    >>> warner = np.array([[0.75, 0.25], [0.25, 0.75]])
    >>> round(critical_value(warner, np.array([60.0, 40.0]), np.array([0.5, 0.5]), 0, 0.95), 4)
    3.8415
    """
    v = float(point[s])
    se = math.sqrt(max(_share_variance(m, float(counts.sum()), point, s), 0.0))
    distance = min(v, 1.0 - v) / se if se > 0 else math.inf
    return unified_critical(distance, level)


def profile_intervals(m: NDArray[np.float64], counts: NDArray[np.float64], pi: NDArray[np.float64], level: float,
                      shares: NDArray[np.bool_] | None = None) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Profile-likelihood intervals of the ``shares`` (bool ``(k,)``, default all; the others' entries are ``pi``),
    ``(k,)`` each, ``pi`` the verified maximum (docs/fits.md, "On the boundary"; docs/theory.md section 8.4):
    ``{v : LR(v) <= c(v)}`` with ``LR(v)`` the likelihood-ratio statistic of ``pi_s = v``
    (:func:`profile_statistic`) and ``c(v)`` the unified approach's critical value there (:func:`critical_value`).

    Each end is bracketed by two points whose statistics come from verified constrained maxima: ``pi_s`` itself
    (``LR = 0 < c``) and the end of [0, 1] (kept as the end when ``LR <= c`` there); between them Brent's method
    finds ``LR(v) = c(v)`` to 1e-12 in ``v``. Every evaluation is a fresh fit, so the two bracket values Brent's
    method starts from are the values computed here. The profile log-likelihood of a share is concave (the maximum
    of a concave function over the slices of a convex set), so ``LR`` rises away from ``pi_s``. Unlike a Wald
    interval it needs no curvature at the maximum, so it holds on the boundary.

    Examples
    --------
    >>> from designer.estimation.boundary import profile_intervals
    >>> import numpy as np
    >>> warner = np.array([[0.75, 0.25], [0.25, 0.75]])  # Warner's design, p = 0.75
    >>> low, high = profile_intervals(warner, np.array([20.0, 80.0]), np.array([0.0, 1.0]), 0.95)
    >>> low.round(4).tolist(), high.round(4).tolist()
    ([0.0, 0.9095], [0.0905, 1.0])
    """
    from scipy.optimize import brentq

    from .mle import _loglik

    best = _loglik(m, counts, pi)
    k = m.shape[0]
    low, high = pi.astype(np.float64).copy(), pi.astype(np.float64).copy()
    chosen = np.ones(k, dtype=bool) if shares is None else shares

    def excess(v: float, s: int) -> float:
        if v == float(pi[s]):
            return -unified_critical(0.0, level)  # LR = 0 at the maximum, below every critical value
        lr, point, _ = profile_statistic(m, counts, best, s, v, fallback=pi)
        return min(lr - critical_value(m, counts, point, s, level), 1e6)  # finite for Brent's interpolation

    for s in np.flatnonzero(chosen):
        for end, target in ((low, 0.0), (high, 1.0)):
            if pi[s] == target:
                end[s] = target
                continue
            at_target = excess(target, int(s))
            if at_target <= 0:
                end[s] = target
                continue
            end[s] = brentq(excess, float(pi[s]), target, args=(int(s),), xtol=1e-12, rtol=1e-12)
    return low, high


#: A share within its Wald half-width plus this many standard errors of 0 or 1 gets the profile likelihood's
#: interval with the unified approach's critical values (:func:`profile_intervals`):
#: there a Wald interval, clipped at the edge, covers more than its level (and one anchored at an estimate on the
#: edge far more); further in the two agree.
NEAR_EDGE = 2.0


def boundary_warning(names: list[str], level: float) -> str:
    """Why a fit on the simplex's edge has no standard errors, naming the shares at 0.

    Examples
    --------
    >>> from designer.estimation.boundary import boundary_warning
    >>> boundary_warning(["no"], 0.95)[:45]
    "the maximum lies on the boundary: 'no' at 0 ("
    """
    return (f"the maximum lies on the boundary: {', '.join(map(repr, names))} at 0 (the likelihood would rise "
            "further outside the simplex). A Wald interval assumes an interior maximum: the shares near the boundary "
            f"have the profile likelihood's interval at {level:g} (their standard errors, the curvature's there, are "
            "for reference)")


def near_edge_intervals(m: NDArray[np.float64], counts: NDArray[np.float64], pi: NDArray[np.float64],
                        se: NDArray[np.float64], edge: NDArray[np.bool_], level: float, ci_low: NDArray[np.float64],
                        ci_high: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``ci_low``, ``ci_high`` with the profile likelihood's interval (:func:`profile_intervals`) for every share on
    the ``edge``, at 1, without a standard error, or within its Wald half-width plus :data:`NEAR_EDGE` standard
    errors of 0 or 1.

    Examples
    --------
    >>> from designer.estimation.boundary import at_boundary, near_edge_intervals
    >>> import numpy as np
    >>> warner = np.array([[0.75, 0.25], [0.25, 0.75]])
    >>> counts, pi = np.array([20.0, 80.0]), np.array([0.0, 1.0])
    >>> edge = at_boundary(warner, counts, pi)
    >>> low, high = near_edge_intervals(warner, counts, pi, np.full(2, np.nan), edge, 0.95, np.zeros(2), np.ones(2))
    >>> high.round(4).tolist()
    [0.0905, 1.0]
    """
    reach = (two_sided_z(level) + NEAR_EDGE) * se
    near = edge | (pi >= 1.0) | np.isnan(se) | (pi - reach < 0.0) | (pi + reach > 1.0)
    if not near.any():
        return ci_low, ci_high
    low, high = profile_intervals(m, counts, pi, level, shares=near)
    return np.where(near, low, ci_low), np.where(near, high, ci_high)
