"""Closed-form probabilities written so that every budget a float can hold works (no overflow of e^eps).

``e^eps`` overflows above 709.78 nats; the randomized-response probabilities it enters are ratios, and in
the form ``1 / (1 + m e^-eps)`` they are exact to rounding for every ``eps >= 0``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["EXP_MAX", "exp_capped", "rr_probabilities", "two_sided_z", "wald_interval"]

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


def two_sided_z(level: float) -> float:
    """The normal quantile of a two-sided interval at ``level`` (1.96 at 0.95): ``Phi^-1(0.5 + level / 2)``."""
    from scipy.stats import norm

    return float(norm.ppf(0.5 + level / 2))


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
