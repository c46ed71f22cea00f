"""Direct tests of designer._exact, the base of every certificate."""

import decimal
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from designer._exact import HUGE_EPSILON, exp_bounds, ratio_at_most_exp, to_integers


def decimal_exp(eps: float, digits: int = 80) -> decimal.Decimal:
    ctx = decimal.Context(prec=digits)
    return ctx.exp(ctx.create_decimal_from_float(eps))


@pytest.mark.parametrize("eps", [1e-12, 1e-9, 1e-6, 0.01, 0.5, 1.0, math.log(2), 5.0, 34.54, 100.0, 700.0])
def test_exp_bounds_bracket_exp_at_60_digits(eps):
    lo, hi = exp_bounds(eps)
    true = Fraction(decimal_exp(eps, 120))
    assert lo < true < hi
    assert (hi - lo) / true < Fraction(1, 10**57)  # about 60 digits apart


@settings(max_examples=200, deadline=None)
@given(st.floats(min_value=1e-12, max_value=700.0))
def test_exp_bounds_bracket_exp_everywhere(eps):
    lo, hi = exp_bounds(eps)
    true = Fraction(decimal_exp(eps, 120))
    assert lo < true < hi


def test_exp_bounds_refuse_out_of_range():
    with pytest.raises(ValueError, match="exp_bounds"):
        exp_bounds(-1.0)
    with pytest.raises(ValueError, match="exp_bounds"):
        exp_bounds(HUGE_EPSILON)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.floats(min_value=0, max_value=1e300, allow_subnormal=True), min_size=1, max_size=12))
def test_to_integers_is_exact(values):
    arr = np.array(values)
    ints, shift = to_integers(arr)
    for v, i in zip(values, ints):
        assert Fraction(int(i), 2**shift) == Fraction(v)


def test_to_integers_handles_the_smallest_subnormal_and_refuses_nan():
    ints, shift = to_integers(np.array([5e-324, 1.0]))
    assert Fraction(int(ints[0]), 2**shift) == Fraction(5e-324)
    with pytest.raises(ValueError, match="finite"):
        to_integers(np.array([math.nan]))


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 10**30), st.integers(0, 10**30), st.floats(min_value=1e-12, max_value=60.0))
def test_ratio_at_most_exp_agrees_with_high_precision(num, den, eps):
    got = ratio_at_most_exp(num, den, eps)
    if num == 0:
        assert got
    elif den == 0:
        assert not got
    else:
        assert got == (Fraction(num, den) <= Fraction(decimal_exp(eps, 200)))


def test_ratio_at_most_exp_at_the_boundary_of_a_float_ratio():
    eps = 1.0
    lo, hi = exp_bounds(eps)
    assert ratio_at_most_exp(lo.numerator, lo.denominator, eps)
    assert not ratio_at_most_exp(hi.numerator, hi.denominator, eps)


def test_huge_budgets_are_decided_by_bit_lengths():
    assert ratio_at_most_exp(2**2000, 1, 1500.0)
    assert not ratio_at_most_exp(1, 0, 1e300)
    assert not ratio_at_most_exp(2**3000, 1, 1500.0)  # e^1500 < 2**2165 < 2**3000
