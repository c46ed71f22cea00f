"""The closed-form probabilities and the capped exponential against 60-digit decimal arithmetic, at every
budget a float holds (no overflow, the subnormal tail rounded as the exact value would be)."""

import math
from decimal import Decimal, getcontext
from statistics import NormalDist

import numpy as np
import pytest

from designer._internal.numeric import EXP_MAX, exp_capped, rr_probabilities, two_sided_z, wald_interval

getcontext().prec = 60


def _exact(eps: float, m: float) -> tuple[float, float]:
    t = (-Decimal(eps)).exp()
    d = 1 + Decimal(m) * t
    return float(1 / d), float(t / d)


@pytest.mark.parametrize("m", [1.0, 2.0, 15.0, 1e6])
@pytest.mark.parametrize("eps", [0.0, 1e-12, 0.5, 1.0, 10.0, 700.0, 709.7, 710.0, 744.0, 744.5, 745.0, 745.1,
                                 745.2, 800.0, 1e4])
def test_rr_probabilities_match_decimal_arithmetic(eps, m):
    p, q = rr_probabilities(eps, m)
    ep, eq = _exact(eps, m)
    assert math.isclose(p, ep, rel_tol=4e-16)
    if eq < 1e-300:  # the subnormal tail: libm's exp rounds it, the reference rounds the exact value
        assert abs(q - eq) <= 5e-324 * max(1.0, m)
    else:
        assert math.isclose(q, eq, rel_tol=1e-15)
    assert p + m * q == pytest.approx(1.0, rel=1e-15)


def test_rr_probabilities_at_an_infinite_budget_are_the_truth():
    assert rr_probabilities(math.inf, 3.0) == (1.0, 0.0)


def test_exp_capped_stops_at_exp_max():
    assert exp_capped(1.0) == math.e and exp_capped(-2.0) == math.exp(-2.0)
    assert exp_capped(EXP_MAX) == exp_capped(800.0) == exp_capped(math.inf) == math.exp(700.0)
    assert math.isfinite(exp_capped(1e308))


def test_two_sided_z_is_the_normal_quantile():
    from statistics import NormalDist

    for level in (0.5, 0.9, 0.95, 0.99, 0.999):
        assert two_sided_z(level) == pytest.approx(NormalDist().inv_cdf(0.5 + level / 2), rel=1e-12)


@pytest.mark.parametrize("level", [0.5, 0.9, 0.95, 0.99])
def test_wald_interval_is_estimate_plus_minus_the_quantile_times_stderr(level):
    z = NormalDist().inv_cdf(0.5 + level / 2)
    low, high = wald_interval(0.3, 0.1, level)
    assert isinstance(low, float) and isinstance(high, float)
    assert math.isclose(low, 0.3 - z * 0.1, rel_tol=1e-12) and math.isclose(high, 0.3 + z * 0.1, rel_tol=1e-12)
    # unbounded by default (a logit coefficient), clipped to the range asked for (a share), per entry
    low, high = wald_interval(np.array([0.05, 0.5, 0.97, -4.0]), np.array([0.1, 0.01, 0.1, 1.0]), level)
    assert low[0] < 0 < low[1] and high[2] > 1 and low[3] < -4.0 < high[3]
    clipped = wald_interval(np.array([0.05, 0.5, 0.97]), np.array([0.1, 0.01, 0.1]), level, low=0.0, high=1.0)
    assert clipped[0][0] == 0.0 and clipped[1][2] == 1.0
    assert math.isclose(clipped[0][1], 0.5 - z * 0.01, rel_tol=1e-12)
    assert math.isclose(clipped[1][1], 0.5 + z * 0.01, rel_tol=1e-12)
    assert math.isclose(clipped[1][0], 0.05 + z * 0.1, rel_tol=1e-12)
    assert math.isclose(clipped[0][2], 0.97 - z * 0.1, rel_tol=1e-12)
    # no standard error, no interval
    nan_low, nan_high = wald_interval(np.array([0.2]), np.array([np.nan]), level, low=0.0, high=1.0)
    assert np.isnan(nan_low[0]) and np.isnan(nan_high[0])


def test_wald_interval_clips_both_ends_to_the_range():
    """Both ends lie in [low, high], also for an estimate outside it (each end clipped on both sides)."""
    assert wald_interval(1.2, 0.01, 0.95, low=0.0, high=1.0) == (1.0, 1.0)
    assert wald_interval(-0.2, 0.01, 0.95, low=0.0, high=1.0) == (0.0, 0.0)
    low, high = wald_interval([1, 0], [0, 0], 0.9)  # integer lists are numbers too
    assert (low.dtype, list(low), list(high)) == (np.float64, [1.0, 0.0], [1.0, 0.0])
