"""Direct tests of designer._internal.exact, the base of every certificate."""

import decimal
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from designer._internal.exact import HUGE_EPSILON, exp_bounds, ratio_at_most_exp, to_integers


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
    with pytest.raises(ValueError, match=r"^exact arithmetic needs finite values$"):
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


# ---------------------------------------------------------------------------- from the mutation run (docs/mutation.md)
def test_to_integers_reads_every_float_width_as_float64():
    """float16 / int8 input is widened first (a float16 significand times 2**53 would overflow)."""
    for values in (np.array([3, 5, 0], dtype=np.int8), np.array([0.5, 3.0, 0.0], dtype=np.float16)):
        ints, shift = to_integers(values)
        assert [Fraction(int(i), 2**shift) for i in ints] == [Fraction(float(v)) for v in values]


def test_to_integers_of_zeros_is_python_zeros_without_shift():
    ints, shift = to_integers(np.zeros(3))
    assert shift == 0 and all(type(v) is int and v == 0 for v in ints)
    with pytest.raises(ValueError, match="finite values"):
        to_integers(np.array([1.0, np.inf]))


def test_exp_float_bounds_above_700_nats():
    import sys

    from designer._internal.exact import exp_float_bounds

    for eps in (700.0, 700.5, 1e4):
        assert exp_float_bounds(eps) == (sys.float_info.max, math.inf)
    lo, hi = exp_float_bounds(699.0)
    assert lo <= math.exp(699.0) <= hi and math.isfinite(hi)


def _ln_ratio(num: int, den: int) -> decimal.Decimal:
    with decimal.localcontext() as ctx:
        ctx.prec = 80
        return decimal.Decimal(num).ln() - decimal.Decimal(den).ln()


def test_huge_budgets_are_sound_and_decide_what_the_bit_lengths_can():
    """From HUGE_EPSILON on: True only for ratios truly below e^eps (sound), and True whenever the bit
    lengths place the ratio below e^eps (``num / den < 2**(bits(num) - bits(den) + 1)``)."""
    assert ratio_at_most_exp(1, 1, HUGE_EPSILON) is True  # the threshold itself is decided by bit lengths
    assert ratio_at_most_exp(2**2100, 1, 1456.5) is True  # e^1455.6 < 2**2101 = e^1456.3 < e^1456.5
    assert ratio_at_most_exp(2**2101 - 1, 1, 1455.5) is False  # about 2**2101 = e^1456.3: above e^1455.5
    rng = np.random.default_rng(11)
    for _ in range(400):
        bits_num, bits_den = int(rng.integers(2050, 2200)), int(rng.integers(1, 80))
        num = int(rng.integers(1, 2**62)) | (1 << (bits_num - 1))
        num &= (1 << bits_num) - 1
        den = (int(rng.integers(0, 2**62)) | (1 << (bits_den - 1))) & ((1 << bits_den) - 1)
        # budgets around the bit-length bounds, where a wrong bound decides differently
        b = num.bit_length() - den.bit_length()
        eps = max(HUGE_EPSILON, float(rng.uniform(b - 1.5, b + 1.5)) * math.log(2))
        decided = ratio_at_most_exp(num, den, eps)
        if decided:
            assert _ln_ratio(num, den) <= decimal.Decimal(eps), (num.bit_length(), den.bit_length(), eps)
        if (num.bit_length() - den.bit_length() + 1) * math.log(2) < eps * (1 - 1e-9):
            assert decided


@pytest.mark.parametrize("bits", [2100, 2500, 3000])
def test_huge_budgets_refuse_a_ratio_just_above_e_to_the_eps(bits):
    """From HUGE_EPSILON on the bit lengths decide, with a relative margin of 1e-12 towards refusing: a ratio
    2**bits - 1 (just under the bit-length bound) against a budget 5e-13 below its logarithm is over budget
    (60-digit Decimal logarithm), and must be refused; a margin turned the other way would accept it."""
    num = 2**bits - 1
    eps = bits * math.log(2) * (1 - 5e-13)
    assert eps >= HUGE_EPSILON
    over = decimal.Context(prec=60).ln(decimal.Decimal(num)) > decimal.Decimal(eps)
    assert over and ratio_at_most_exp(num, 1, eps) is False
    assert ratio_at_most_exp(2 ** (bits - 3), 1, eps) is True  # two bits of room: decided below


@pytest.mark.parametrize("eps", [0.5, 1.0, 3.7])
@pytest.mark.parametrize("side", [-1, 1])
def test_a_ratio_within_1e_200_of_e_to_the_eps_is_decided_with_more_digits(eps, side):
    """A ratio 1e-200 (relative) below or above e^eps sits inside the first 60-digit bracket: the answer needs
    the 240-digit one. Truth from a 400-digit Decimal exponential."""
    with decimal.localcontext(decimal.Context(prec=400)):
        exact = decimal.Decimal(eps).exp()
        den = 10**220
        num = int((exact * den).to_integral_value(rounding=decimal.ROUND_FLOOR)) + side * 10**20
        below = decimal.Decimal(num) / decimal.Decimal(den) <= exact
    assert below is (side < 0)
    assert ratio_at_most_exp(num, den, eps) is below


def test_a_ratio_clearly_off_e_to_the_eps_needs_only_the_first_bracket():
    """Precision grows only where it must: 3/1 and 2/1 against e^1 are decided by the 60-digit bracket alone
    (one exponential computed), not after computing ever wider ones."""
    exp_bounds.cache_clear()
    assert ratio_at_most_exp(3, 1, 1.0) is False and ratio_at_most_exp(2, 1, 1.0) is True
    assert exp_bounds.cache_info().misses == 1


def test_a_ratio_no_bracket_separates_from_e_to_the_eps_is_refused():
    """A ratio of 4,000-digit integers 1e-3950 above e^1 is closer than the widest bracket (3,840 digits) can
    tell: it is refused (counted over budget), never accepted."""
    with decimal.localcontext(decimal.Context(prec=4100)):
        den = 10**3950
        num = int((decimal.Decimal(1).exp() * den).to_integral_value(rounding=decimal.ROUND_CEILING)) + 1
        assert decimal.Decimal(num) / decimal.Decimal(den) > decimal.Decimal(1).exp()
    assert ratio_at_most_exp(num, den, 1.0) is False
