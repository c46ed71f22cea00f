"""Exact arithmetic for certificates: floats as integers over a common power of two, and
rigorous rational bounds on ``exp(eps)``.

Every float is a dyadic rational, so a float matrix is exactly an integer matrix divided by ``2**s``.
Sums and comparisons of those integers are exact, and ``exp(eps)`` (irrational for rational
``eps != 0``) is bracketed by rationals from the ``decimal`` module, whose ``exp`` is correctly rounded.
"""

from __future__ import annotations

import decimal
import functools
import math
import sys
from fractions import Fraction

import numpy as np
from numpy.typing import NDArray

from ..exceptions import InvalidArgumentError


def to_integers(values: NDArray[np.float64]) -> tuple[NDArray[np.object_], int]:
    """Write finite non-negative floats exactly as ``ints / 2**shift``.

    Returns
    -------
    ints : object ndarray of Python int, same shape as ``values``
    shift : int
        The common exponent: ``values == ints / 2**shift`` exactly.
    """
    arr = np.asarray(values, dtype=np.float64)
    if not np.all(np.isfinite(arr)):
        raise InvalidArgumentError("exact arithmetic needs finite values")
    nonzero = arr[arr != 0]
    if nonzero.size == 0:
        return np.zeros(arr.shape, dtype=object), 0
    # x = frac * 2**exp with 0.5 <= |frac| < 1: frac * 2**53 is an exact integer (53-bit significand).
    frac, exps = np.frexp(arr)
    mant = np.ldexp(frac, 53).astype(np.int64)
    low = exps - 53
    shift = max(0, -int(low[arr != 0].min()))
    out = mant.astype(object) << (low + shift).clip(min=0).astype(object)
    out[arr == 0] = 0
    return out, shift


@functools.lru_cache(maxsize=256)
def exp_bounds(eps: float, digits: int = 60) -> tuple[Fraction, Fraction]:
    """Rationals ``lo < exp(eps) < hi`` about ``10**-digits`` apart (relative).

    ``decimal``'s ``exp`` is correctly rounded, so the true value lies within one unit in the last
    place of the computed one; widening by two units on each side is safe. Cached: a certificate asks
    for the same bounds once per ratio. ``eps`` must be below ``HUGE_EPSILON``.
    """
    if not 0 <= eps < HUGE_EPSILON:
        raise InvalidArgumentError(f"exp_bounds needs 0 <= eps < {HUGE_EPSILON:g}, got {eps!r}")
    ctx = decimal.Context(prec=digits, rounding=decimal.ROUND_HALF_EVEN)
    x = ctx.create_decimal_from_float(float(eps))
    value = ctx.exp(x)
    ulp = Fraction(10) ** (value.adjusted() - digits + 1)
    v = Fraction(value)
    return v - 2 * ulp, v + 2 * ulp


def exp_float_bounds(eps: float) -> tuple[float, float]:
    """Floats ``lo <= e^eps <= hi`` (up to one rounding each, which float filters absorb in their band).

    Above 700 nats ``e^eps`` overflows: ``lo`` is the largest float (a product with it that overflows
    stands for a value above any mass) and ``hi`` is infinite.
    """
    if eps >= 700:
        return sys.float_info.max, math.inf
    lo, hi = exp_bounds(eps)
    return float(lo), float(hi)


#: Budgets from here on are decided by bit lengths (``num / den < 2**(bits(num) - bits(den) + 1)``):
#: no ratio of two positive floats exceeds ``2**2098 < e**1455``.
HUGE_EPSILON = 1455.0


def ratio_at_most_exp(num: int, den: int, eps: float) -> bool:
    """Decide ``num / den <= exp(eps)`` exactly for non-negative integers.

    ``0 / 0`` counts as no information (True); ``a / 0`` with ``a > 0`` is an infinite ratio (False).
    From ``HUGE_EPSILON`` on the answer is decided by bit lengths (conservatively: a ratio that the bit
    lengths cannot place below ``e^eps`` counts as above it).
    """
    if num == 0:
        return True
    if den == 0:
        return False
    if eps >= HUGE_EPSILON:
        return (num.bit_length() - den.bit_length() + 1) * 0.6931471805599453 < eps * (1 - 1e-12)
    digits = 60
    while digits <= 4000:
        lo, hi = exp_bounds(eps, digits)
        if num * lo.denominator <= lo.numerator * den:
            return True
        if num * hi.denominator > hi.numerator * den:
            return False
        digits *= 4
    # exp(eps) is irrational for rational eps != 0, so this is unreachable in practice; refuse to
    # certify rather than guess.
    return False
