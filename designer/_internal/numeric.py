"""Closed-form probabilities written so that every budget a float can hold works (no overflow of e^eps).

``e^eps`` overflows above 709.78 nats; the randomized-response probabilities it enters are ratios, and in
the form ``1 / (1 + m e^-eps)`` they are exact to rounding for every ``eps >= 0``.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Any

import numpy as np

from ..exceptions import InvalidArgumentError

__all__ = ["EXP_MAX", "chi2_sf", "exp_capped", "normal_cdf", "normal_quantile", "rr_probabilities", "two_sided_z",
           "wald_interval"]

_SQRT2 = math.sqrt(2.0)
_SQRT_2PI = math.sqrt(2.0 * math.pi)

#: Largest exponent whose ``exp`` is a finite float with room for a few products (e^700 ~ 1e304).
EXP_MAX = 700.0


def rr_probabilities(eps: float, m: float) -> tuple[float, float]:
    """``(e^eps / (e^eps + m), 1 / (e^eps + m))`` for ``m > 0``, without overflow at any ``eps >= 0``.

    The first is a respondent's probability of the favoured answer and the second of each of ``m``
    others in k-ary randomized response (``m = k - 1``) and its relatives.
    """
    t = math.exp(-eps)  # e^-eps: never overflows; 0.0 once below half the smallest subnormal
    denominator = 1.0 + m * t
    return 1.0 / denominator, t / denominator


def exp_capped(eps: float) -> float:
    """``e^min(eps, EXP_MAX)``: for bounds whose value no longer changes in double precision beyond it."""
    return math.exp(min(eps, EXP_MAX))


def normal_quantile(p: float) -> float:
    """The standard normal quantile ``Phi^-1(p)`` for ``p`` in (0, 1), from the standard library.

    :class:`statistics.NormalDist` gives a start within about 1e-15 (relative); one Newton step on the smaller
    tail, ``q = min(p, 1 - p)`` through :func:`math.erfc`, brings it within about one unit in the last place of
    the quantile of ``p`` (scipy's ``norm.ppf`` agrees to a few units; importing scipy.stats costs half a second).

    Parameters
    ----------
    p : float
        A probability in (0, 1).

    Returns
    -------
    float
        ``z`` with ``Phi(z) = p``; ``-z`` at ``1 - p``.
    """
    if not 0.0 < p < 1.0:
        raise InvalidArgumentError(f"a normal quantile needs a probability in (0, 1), got {p!r}")
    return _upper_quantile(1.0 - p) if p >= 0.5 else -_upper_quantile(p)


def _upper_quantile(q: float) -> float:
    """``z >= 0`` with ``P(Z > z) = q`` for ``q`` in (0, 0.5]: NormalDist's start and one Newton step."""
    z = -NormalDist().inv_cdf(q)
    density = math.exp(-0.5 * z * z) / _SQRT_2PI
    if density == 0.0:  # beyond z ~ 38.6 the density underflows; NormalDist's value stands
        return z
    return z + (0.5 * math.erfc(z / _SQRT2) - q) / density


def two_sided_z(level: float) -> float:
    """The normal quantile of a two-sided interval at ``level`` (1.96 at 0.95): ``Phi^-1(0.5 + level / 2)``,
    computed from the upper tail ``(1 - level) / 2`` (:func:`normal_quantile`'s accuracy, no scipy.stats).

    Parameters
    ----------
    level : float
        Confidence level in (0, 1).
    """
    if not 0.0 < level < 1.0:
        raise InvalidArgumentError(f"a confidence level must lie strictly between 0 and 1, got {level!r}")
    return _upper_quantile((1.0 - level) / 2)


def normal_cdf(x: float) -> float:
    """The standard normal distribution function ``Phi(x) = erfc(-x / sqrt 2) / 2`` (accurate in both tails, no
    scipy.stats)."""
    return 0.5 * math.erfc(-x / _SQRT2)


def chi2_sf(statistic: float, df: int) -> float:
    """The upper tail ``P(X > statistic)`` of a chi-square with ``df`` degrees of freedom (a test's p-value).

    One degree of freedom is ``erfc(sqrt(statistic / 2))`` from the standard library; more use
    ``scipy.special.chdtrc``, which scipy.optimize has loaded already (scipy.stats is not imported). NaN stays NaN.
    """
    if math.isnan(statistic):
        return math.nan
    if df == 1:
        return math.erfc(math.sqrt(max(statistic, 0.0) / 2.0))
    from scipy.special import chdtrc

    return float(chdtrc(df, statistic))


def wald_interval(estimate: Any, stderr: Any, level: float, *, low: float = -math.inf,
                  high: float = math.inf) -> tuple[Any, Any]:
    """The Wald interval ``estimate -+ z stderr`` at ``level`` (``z`` from :func:`two_sided_z`), clipped to
    ``[low, high]`` (``[0, 1]`` for a share).

    Parameters
    ----------
    estimate, stderr : float or array_like, the same shape
        Point estimates and their standard errors; a NaN standard error gives a NaN interval.
    level : float
        Confidence level in (0, 1).
    low, high : float, default -inf, inf
        The parameter's range.

    Returns
    -------
    ci_low, ci_high : float or ndarray
        Floats for float arguments, else arrays of the arguments' shape.
    """
    half = two_sided_z(level) * np.asarray(stderr, dtype=np.float64)
    centre = np.asarray(estimate, dtype=np.float64)
    ci_low, ci_high = np.clip(centre - half, low, high), np.clip(centre + half, low, high)
    if ci_low.ndim == 0:
        return float(ci_low), float(ci_high)
    return ci_low, ci_high
