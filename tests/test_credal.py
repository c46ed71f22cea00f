import itertools
import math

import numpy as np
import pytest

import designer as d
from designer import credal
from designer.estimation.hypothesis_tests import worst_case_fisher

from .conftest import brute_bel, brute_pl


def random_mechanisms(count, seed=7, k=2, l_max=4):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        l = int(rng.integers(1, l_max + 1))
        m = rng.random((k, 1 << l)) * (rng.random((k, 1 << l)) < 0.7)
        m[:, 0] = 0
        for i in range(k):
            if m[i].sum() == 0:
                m[i, -1] = 1.0
        yield d.Mechanism(m / m.sum(axis=1, keepdims=True)), rng


def test_lp_equals_choquet_and_bel_pl_on_200_mechanisms():
    for mech, rng in random_mechanisms(200):
        dense = mech.mass
        for x in range(mech.k):
            f = rng.normal(size=mech.l)
            lo_c = credal.lower_expectation(mech, x, f)
            up_c = credal.upper_expectation(mech, x, f)
            assert credal.lower_expectation(mech, x, f, method="lp") == pytest.approx(lo_c, abs=1e-8)
            assert credal.upper_expectation(mech, x, f, method="lp") == pytest.approx(up_c, abs=1e-8)
            assert lo_c <= up_c + 1e-12
            for event in range(1, 1 << mech.l):
                assert credal.lower_probability(mech, x, event, method="lp") == pytest.approx(
                    brute_bel(dense[x], event), abs=1e-8)
                assert credal.upper_probability(mech, x, event, method="lp") == pytest.approx(
                    brute_pl(dense[x], event), abs=1e-8)


def test_extreme_points_are_members_and_attain_the_bounds():
    for mech, rng in random_mechanisms(40, seed=3):
        for x in range(mech.k):
            verts = credal.extreme_points(mech, x)
            assert len(verts) <= math.factorial(mech.l)
            assert all(credal.contains(mech, x, v) for v in verts)
            f = rng.normal(size=mech.l)
            assert (verts @ f).min() == pytest.approx(credal.lower_expectation(mech, x, f), abs=1e-12)
            assert (verts @ f).max() == pytest.approx(credal.upper_expectation(mech, x, f), abs=1e-12)


def test_membership():
    q = d.Q_2x3(0.6, 0.2)
    assert credal.contains(q, "yes", [0.7, 0.3])
    assert credal.contains(q, "yes", [0.8, 0.2]) and credal.contains(q, "yes", [0.6, 0.4])
    assert not credal.contains(q, "yes", [0.5, 0.5])
    assert not credal.contains(q, "yes", [0.9, 0.2])  # not a distribution
    assert sorted(map(tuple, credal.extreme_points(q, "yes"))) == [(0.6, 0.4), (0.8, 0.2)]


def test_walley_ratio_lp_is_pl_over_bel():
    for mech, _ in random_mechanisms(60, seed=11, k=3):
        if mech.l < 2:
            continue
        for x, x2 in itertools.permutations(range(mech.k), 2):
            for event in range(1, (1 << mech.l) - 1):
                lp = credal.walley_ratio(mech, x, x2, event, method="lp")
                pl_bel = credal.walley_ratio(mech, x, x2, event, method="choquet")
                if math.isinf(pl_bel) or math.isnan(pl_bel):
                    assert (math.isinf(lp) and math.isinf(pl_bel)) or (math.isnan(lp) and math.isnan(pl_bel))
                else:
                    assert lp == pytest.approx(pl_bel, rel=1e-8)


def test_worst_case_pair_attains_the_walley_loss():
    q = d.Q_2x3(0.6, 0.2)
    pair = credal.worst_case_pair(q, "no", "yes")
    assert pair.eps == pytest.approx(d.eps_walley(q))
    assert credal.contains(q, "no", pair.pr_x) and credal.contains(q, "yes", pair.pr_x2)
    e = q.subset(pair.event)
    ind = np.array([(e >> i) & 1 for i in range(q.l)])
    assert (pair.pr_x @ ind) / (pair.pr_x2 @ ind) == pytest.approx(pair.ratio)


@pytest.mark.parametrize("p", [0.55, 0.6, 0.7, 0.8, 0.95])
@pytest.mark.parametrize("q", [0.0, 0.02, 0.1, 0.2])
@pytest.mark.parametrize("pi", [0.1, 0.5, 0.8])
def test_worst_case_fisher_is_nu_w(p, q, pi):
    if p + q > 1:
        return
    info, pr_x, pr_x2 = worst_case_fisher(d.Q_2x3(p, q), pi)
    assert credal.contains(d.Q_2x3(p, q), 0, pr_x) and credal.contains(d.Q_2x3(p, q), 1, pr_x2)
    nu_w = -((pi - 0.5) ** 2) + 1 / (4 * (2 * p - 1) ** 2)
    assert 1 / info == pytest.approx(nu_w, rel=1e-9)


def test_gamble_errors():
    q = d.Q_2x3(0.6, 0.2)
    assert credal.lower_expectation(q, "yes", {"yes": 1, "no": 0}) == pytest.approx(0.6)
    with pytest.raises(d.InvalidMechanismError, match="no value"):
        credal.lower_expectation(q, "yes", {"yes": 1})
    with pytest.raises(d.InvalidMechanismError, match="not in the frame"):
        credal.upper_expectation(q, "yes", {"yes": 1, "no": 0, "maybe": 2})
    with pytest.raises(d.InvalidMechanismError, match="unknown input"):
        credal.upper_expectation(q, "perhaps", [1, 0])
