"""Losses of mechanisms whose masses span 1e-300..1 agree with exact rational computation."""

import math
from fractions import Fraction
from itertools import product

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import designer as d


def exact_log(a: Fraction, b: Fraction) -> float:
    """ln(a / b) for positive rationals, accurate for ratios far beyond the float range."""
    return (math.log(a.numerator) - math.log(a.denominator)) - (math.log(b.numerator) - math.log(b.denominator))


def exact_losses(mech: d.Mechanism) -> dict[str, float]:
    k, l = mech.k, mech.l
    masses = [{int(m): Fraction(float(v)) for m, v in zip(mech.focal, row)} for row in mech.matrix]
    subsets = range(1, 1 << l)
    bel = [{e: sum((v for m, v in row.items() if m & ~e == 0), Fraction(0)) for e in subsets} for row in masses]
    pl = [{e: sum((v for m, v in row.items() if m & e), Fraction(0)) for e in subsets} for row in masses]
    mass = [{e: row.get(e, Fraction(0)) for e in subsets} for row in masses]

    def worst(num, den, events):
        best = 0.0
        for x, y, e in product(range(k), range(k), events):
            if x == y:
                continue
            a, b = num[x][e], den[y][e]
            if a == 0:
                continue
            if b == 0:
                return math.inf
            best = max(best, exact_log(a, b))
        return best

    proper = [e for e in subsets if e != (1 << l) - 1]
    return {"shafer": worst(mass, mass, subsets), "bel": worst(bel, bel, subsets), "pl": worst(pl, pl, subsets),
            "walley": worst(pl, bel, proper)}


@st.composite
def tiny_mechanisms(draw):
    k = draw(st.integers(2, 3))
    l = draw(st.integers(2, 3))
    rows = []
    for _ in range(k):
        exps = draw(st.lists(st.floats(min_value=-300, max_value=0), min_size=(1 << l) - 1, max_size=(1 << l) - 1))
        zero = draw(st.lists(st.booleans(), min_size=(1 << l) - 1, max_size=(1 << l) - 1))
        row = np.array([0.0 if z else 10.0**e for e, z in zip(exps, zero)])
        if row.max() == 0:
            row[-1] = 1.0
        row = row / row.sum()
        big = int(np.argmax(row))
        row[big] = 0.0
        row[big] = 1.0 - row.sum()  # the largest mass absorbs the rest: rows sum to 1 in floats
        rows.append(np.r_[0.0, row])
    return d.Mechanism(np.array(rows))


@settings(max_examples=100, deadline=None)
@given(tiny_mechanisms())
def test_audit_of_tiny_masses_agrees_with_exact_rationals(mech):
    exact = exact_losses(mech)
    for name, value in exact.items():
        got = d.worst_case(mech, name).eps
        if math.isinf(value):
            assert math.isinf(got), name
        else:
            assert got == pytest.approx(value, rel=1e-12, abs=1e-9), (name, got, value)


@pytest.mark.parametrize("tiny", [2e-14, 2e-17, 1e-300])
def test_the_issues_examples(tiny):
    """pl of an event that only a tiny mass meets: ln 2 exactly, not what total - bel(complement) gives."""
    mech = d.Mechanism([[0, tiny, 1 - tiny, 0], [0, 2 * tiny, 1 - 2 * tiny, 0]], frame=["a", "b"])
    assert d.eps_pl(mech) == pytest.approx(math.log(2), rel=1e-12)
    assert d.eps_walley(mech) == pytest.approx(exact_losses(mech)["walley"], rel=1e-12)


def test_the_smallest_subnormal_gives_a_finite_loss():
    mech = d.Mechanism([[0, 0.5, 0.5, 0], [0, 5e-324, 1 - 5e-324, 0]], frame=["a", "b"])
    assert d.eps_shafer(mech) == pytest.approx(math.log(0.5) - math.log(5e-324), rel=1e-12)  # 743.7


def test_is_private_is_exact_at_huge_budgets_and_refuses_bad_tolerances():
    q = d.Q_2x3(0.6, 0.2)
    assert d.is_private(q, 1e308, exact=True)
    with pytest.raises(ValueError, match="tol"):
        d.is_private(q, 1.0, tol=math.nan)
