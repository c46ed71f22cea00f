import math

import numpy as np
import pytest
from hypothesis import given, settings

import designer as d
from designer import InvalidMechanismError, Mechanism

from .conftest import mass_matrices


@settings(max_examples=60, deadline=None)
@given(mass_matrices(k_min=2, k_max=3, l_max=3), mass_matrices(k_min=2, k_max=3, l_max=3))
def test_product_loss_is_at_most_the_sum(m1, m2):
    k = min(m1.shape[0], m2.shape[0])
    a, b = Mechanism(m1[:k]), Mechanism(m2[:k])
    both = d.product(a, b)
    assert np.allclose(both.matrix.sum(axis=1), 1.0)
    for loss in (d.eps_shafer, d.eps_walley, d.eps_bel, d.eps_pl):
        total = loss(a) + loss(b)
        assert loss(both) <= total + 1e-9 or math.isinf(total)
    # With itself the worst pair and set repeat: the Shafer loss doubles exactly (Lemma 3.3 is tight).
    assert d.eps_shafer(d.product(a, a)) == pytest.approx(2 * d.eps_shafer(a), abs=1e-9)


def test_product_masses_are_rectangles():
    a = d.Q_2x3(0.6, 0.2)
    both = d.product(a, a)
    assert both.frame == ("yes|yes", "no|yes", "yes|no", "no|no")
    row = both.row("yes")
    assert row[("yes|yes",)] == pytest.approx(0.36)
    assert row[("yes|yes", "yes|no")] == pytest.approx(0.6 * 0.2)  # {yes} x {yes,no}
    assert row[("yes|yes", "no|yes", "yes|no", "no|no")] == pytest.approx(0.04)


@pytest.mark.parametrize("p,q", [(0.6, 0.2), (0.5, 0.3), (0.8, 0.1)])
def test_corollary_3_6_table(p, q):
    """Two answers of Q_2x3 post-processed by the number of "no" answers: the table in the proof of Cor 3.6."""
    two = d.product(d.Q_2x3(p, q), d.Q_2x3(p, q))
    count_no = {f"{a}|{b}": str([a, b].count("no")) for a in ("yes", "no") for b in ("yes", "no")}
    z = d.image(two, count_no, frame=["0", "1", "2"])
    r = 1 - p - q
    expected_x = {("0",): p * p, ("1",): 2 * p * q, ("2",): q * q, ("0", "1"): 2 * p * r,
                  ("1", "2"): 2 * q * r, ("0", "1", "2"): r * r}
    expected_x2 = {("0",): q * q, ("1",): 2 * p * q, ("2",): p * p, ("0", "1"): 2 * q * r,
                   ("1", "2"): 2 * p * r, ("0", "1", "2"): r * r}
    for x, expected in (("yes", expected_x), ("no", expected_x2)):
        row = z.row(x)
        assert set(row) == set(expected)
        for s, v in expected.items():
            assert row[s] == pytest.approx(v, abs=1e-15)


@settings(max_examples=60, deadline=None)
@given(mass_matrices(k_max=3, l_max=4))
def test_post_processing_never_increases_losses(m):
    mech = Mechanism(m)
    rng = np.random.default_rng(int(m.sum() * 1e6) % 2**32)
    f = {y: f"z{rng.integers(0, 3)}" for y in mech.frame}
    out = d.image(mech, f)
    for loss in (d.eps_shafer, d.eps_walley):
        assert loss(out) <= loss(mech) + 1e-9


def test_power():
    w = d.Q_WRR(0.5)
    three = d.power(w, 3)
    assert three.l == 8 and len(three.focal) == 8
    assert d.eps_shafer(three) == pytest.approx(1.5)
    assert d.eps_walley(three) == pytest.approx(1.5)
    assert d.power(w, 1) is w
    with pytest.raises(ValueError):
        d.power(w, 0)


def test_errors():
    with pytest.raises(InvalidMechanismError, match="same inputs"):
        d.product(d.Q_WRR(1.0), d.Q_kRR(1.0, 3))
    with pytest.raises(InvalidMechanismError, match="no value"):
        d.image(d.Q_WRR(1.0), {"yes": "a"})
    with pytest.raises(InvalidMechanismError, match="not in the frame"):
        d.image(d.Q_WRR(1.0), {"yes": "a", "no": "b", "maybe": "c"})
