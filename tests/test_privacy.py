import math

import numpy as np
import pytest
from hypothesis import given, settings

import designer as d
from designer import Mechanism

from .conftest import brute_loss, mass_matrices

LOSS_FUNCS = {"shafer": d.eps_shafer, "bel": d.eps_bel, "pl": d.eps_pl, "walley": d.eps_walley}


def same_loss(a, b):
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= 1e-9 * max(1.0, abs(b))


@settings(max_examples=150, deadline=None)
@given(mass_matrices(k_max=4, l_max=5))
def test_losses_match_pairwise_enumeration(m):
    mech = Mechanism(m)
    for kind, func in LOSS_FUNCS.items():
        assert same_loss(func(mech), brute_loss(m, kind)), kind


@settings(max_examples=150, deadline=None)
@given(mass_matrices(k_max=4, l_max=6))
def test_loss_orderings(m):
    mech = Mechanism(m)
    s, b, p, w = (f(mech) for f in LOSS_FUNCS.values())
    assert s >= max(b, p) - 1e-12  # Lemma 3.2
    assert w >= max(b, p) - 1e-12  # docs/theory.md section 2
    if mech.is_bayesian:
        assert same_loss(s, b) and same_loss(s, p) and same_loss(s, w)


@pytest.mark.parametrize("p,q", [(0.6, 0.2), (0.7, 0.1), (0.5, 0.5), (0.45, 0.3), (0.9, 0.05)])
def test_q2x3_closed_forms(p, q):
    mech = d.Q_2x3(p, q)
    assert d.eps_shafer(mech) == pytest.approx(math.log(p / q), abs=1e-12)
    assert d.eps_walley(mech) == pytest.approx(math.log((1 - q) / q), abs=1e-12)


@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 2.0, 5.0])
def test_bayesian_mechanisms_have_one_epsilon(eps):
    for mech in (d.Q_WRR(eps), d.Q_kRR(eps, 5)):
        for func in LOSS_FUNCS.values():
            assert func(mech) == pytest.approx(eps, abs=1e-12)
        assert d.is_private(mech, eps, semantics="sldp")
        assert d.is_private(mech, eps, semantics="wldp")
        assert not d.is_private(mech, eps * 0.99)


def test_zero_conventions():
    # A set used by one input only: a/0 is an infinite loss.
    mech = Mechanism([[0, 0.5, 0, 0.5], [0, 0.5, 0.5, 0]])
    assert d.eps_shafer(mech) == math.inf
    assert not d.is_private(mech, 50.0)
    # 0/0 is skipped: the set {y1} unused by both inputs.
    mech = Mechanism([[0, 0.75, 0, 0.25], [0, 0.25, 0, 0.75]])
    assert d.eps_shafer(mech) == pytest.approx(math.log(3))
    # a single input has no pair to distinguish
    assert d.eps_walley(Mechanism([[0, 0.3, 0.7, 0]])) == 0.0


def test_walley_excludes_the_self_pair():
    # pl_x(E) / bel_x(E) can be infinite for one row alone; only x != x' counts (docs/theory.md section 2).
    mech = d.Q_2x3(0.0, 0.0)  # pure don't-know: both rows identical
    assert d.eps_walley(mech) == math.inf  # bel_x'({yes}) = 0 < pl_x({yes}) = 1
    same = Mechanism([[0, 0.5, 0.5, 0], [0, 0.5, 0.5, 0]])
    assert d.eps_walley(same) == 0.0


def test_witness_points_at_the_worst_pair():
    w = d.worst_case(d.Q_2x3(0.6, 0.2), "walley")
    assert (w.x, w.x2) in {("yes", "no"), ("no", "yes")}
    assert w.event in {("yes",), ("no",)}
    assert w.eps == pytest.approx(math.log(4))
    assert "pl_" in w.describe()


def test_exact_mode_has_no_tolerance():
    import decimal
    from fractions import Fraction

    mech = d.Q_WRR(1.0)
    a, b = mech.matrix[0]
    r = Fraction(a) / Fraction(b)
    with decimal.localcontext(decimal.Context(prec=80)):
        e = Fraction(decimal.Decimal(1).exp())
    # The stored float ratio differs from e by about an ulp: exact mode decides which side.
    assert d.is_private(mech, 1.0, exact=True) == (r <= e)
    assert d.is_private(mech, 1.0)  # the float check has its stated tolerance
    assert d.is_private(mech, 1.0 + 1e-12, exact=True)
    assert not d.is_private(mech, 1.0 - 1e-12, exact=True)


@pytest.mark.parametrize("semantics", ["sldp", "wldp", "bel", "pl"])
@settings(max_examples=40, deadline=None)
@given(m=mass_matrices(k_max=3, l_max=4))
def test_exact_agrees_with_float_away_from_the_boundary(semantics, m):
    mech = Mechanism(m)
    loss = d.worst_case(mech, semantics).eps
    if math.isinf(loss):
        assert not d.is_private(mech, 30.0, semantics=semantics, exact=True)
        return
    assert d.is_private(mech, loss + 1e-9, semantics=semantics, exact=True)
    if loss > 1e-6:
        assert not d.is_private(mech, loss - 1e-9, semantics=semantics, exact=True)


def test_bad_arguments():
    mech = d.Q_WRR(1.0)
    for bad in (0, -1, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="eps"):
            d.is_private(mech, bad)
    with pytest.raises(TypeError):
        d.is_private(mech, "1")
    with pytest.raises(ValueError, match="unknown semantics"):
        d.is_private(mech, 1.0, semantics="bayes")
    with pytest.raises(TypeError):
        d.eps_shafer(np.eye(2))


def test_privacy_losses_name_each_loss_with_its_witness_in_words():
    # Q_2x3(0.5, 0.2): m_yes = (0.5, 0.2, 0.3), m_no = (0.2, 0.5, 0.3); each loss worked out by hand.
    losses = d.privacy_losses(d.Q_2x3(0.5, 0.2))
    assert list(losses) == ["shafer", "bel", "pl", "walley"]
    expected = {"shafer": (math.log(0.5 / 0.2), "m", "m"), "bel": (math.log(0.5 / 0.2), "bel", "bel"),
                "pl": (math.log(0.8 / 0.5), "pl", "pl"), "walley": (math.log(0.8 / 0.2), "pl", "bel")}
    for name, (eps, f, g) in expected.items():
        w = losses[name]
        assert w.eps == pytest.approx(eps, rel=1e-12)
        assert w.describe() in {f"{f}_no({{no}}) / {g}_yes({{no}})", f"{f}_yes({{yes}}) / {g}_no({{yes}})"}
    single = d.worst_case(Mechanism([[0.0, 0.25, 0.75, 0.0]], inputs=["only"]), "shafer")
    assert (single.eps, single.x, single.event) == (0.0, None, None)
    assert single.describe() == "no pair of inputs"


def test_is_private_reads_the_semantics_it_is_given_on_both_paths():
    # Q_2x3(0.5, 0.2): Shafer loss ln 2.5 = 0.916, Walley loss ln 4 = 1.386
    mech = d.Q_2x3(0.5, 0.2)
    assert d.is_private(mech, 1.2, semantics="sldp") and not d.is_private(mech, 1.2, semantics="wldp")  # floats
    # GWRR meets its Shafer budget with equality (Cor 3.12): decided exactly, for the Shafer loss only
    gwrr = d.Q_GWRR(1.0, 0.8)
    assert d.eps_walley(gwrr) > 1.25  # 1.294
    assert d.is_private(gwrr, 1.0, semantics="sldp") and d.is_private(gwrr, 1.0, semantics="sldp", exact=True)
    assert not d.is_private(gwrr, 1.0, semantics="wldp")
    single = Mechanism([[0.0, 0.25, 0.75, 0.0]], inputs=["only"])
    assert all(d.is_private(single, 1e-9, semantics=s, exact=True) for s in ("sldp", "wldp", "bel", "pl"))


def test_is_private_with_a_tolerance_accepts_up_to_eps_plus_tol_and_checks_tol():
    mech = d.Q_2x3(0.5, 0.2)
    value = d.eps_shafer(mech)  # ln 2.5
    tol = value - 0.9
    assert 0.9 + tol == value  # the sum is the float loss exactly: the bound is inclusive
    assert d.is_private(mech, 0.9, tol=tol) and not d.is_private(mech, 0.9)
    assert d.is_private(mech, 0.5, tol=0.5) and not d.is_private(mech, 0.5, tol=0.4)
    for bad in (-0.1, -1.0):
        with pytest.raises(ValueError, match=r"^tol must lie in \[0, inf\)"):
            d.is_private(mech, 1.0, tol=bad)
    with pytest.raises(TypeError, match=r"^tol must be a real number"):
        d.is_private(mech, 1.0, tol="0.1")


def _never_c():
    """Frame {a, b, c}; u: {a} 0.3, {b} 0.3, {a,b} 0.4; v: {a} 0.35, {b} 0.35, {a,b} 0.3 (not Bayesian)."""
    masses = np.zeros((2, 8))
    masses[0, [1, 2, 3]] = [0.3, 0.3, 0.4]
    masses[1, [1, 2, 3]] = [0.35, 0.35, 0.3]
    return Mechanism(masses, inputs=["u", "v"], frame=["a", "b", "c"])


def test_losses_of_masses_with_zeros_warn_nothing():
    import warnings

    # 0/0 cells, a/0 cells and 0/b cells in every loss's tables
    mechs = [Mechanism([[0, 1, 0, 0], [0, 1, 0, 0]]), Mechanism([[0, 0.5, 0.5, 0], [0, 1, 0, 0]]),
             d.Q_2x3(0.0, 0.0), Mechanism([[0, 0.2, 0.0, 0.8], [0, 0.0, 0.3, 0.7]]), _never_c()]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a RuntimeWarning of numpy (divide, invalid) fails the test
        for mech in mechs:
            for loss in ("shafer", "bel", "pl", "walley"):
                d.worst_case(mech, loss)


def test_a_witness_attains_its_loss_and_zero_over_zero_says_nothing():
    # every input always answers {a}: pl and bel of {b} are 0 for both, 0/0 says nothing: no loss
    constant = Mechanism([[0, 1, 0, 0], [0, 1, 0, 0]], inputs=["u", "v"], frame=["a", "b"])
    assert d.eps_walley(constant) == 0.0 and d.eps_pl(constant) == 0.0
    # nobody ever says c: pl({c}) = bel({c}) = 0 for both (0/0, no information); by hand the Walley loss is
    # pl_v({a}) / bel_u({a}) = 0.65 / 0.3
    assert d.eps_walley(_never_c()) == pytest.approx(math.log(0.65 / 0.3), rel=1e-12)
    # v never says a set with b while u does: the Walley loss is inf, attained at pl_u({b}) / bel_v({b}) (the
    # ratio pl_v({b}) / bel_u({b}) = 0 / 0.3 comes first in the table and is no witness)
    mech = Mechanism([[0, 0.3, 0.3, 0.4], [0, 1.0, 0, 0]], inputs=["u", "v"], frame=["a", "b"])
    w = d.worst_case(mech, "walley")
    assert w.eps == math.inf and (w.x, w.x2, w.event) == ("u", "v", ("b",))
    # one answer set for everyone: every ratio is 1, attained by the first pair
    one = Mechanism([[0, 0, 0, 1.0], [0, 0, 0, 1.0]], inputs=["yes", "no"], frame=["yes", "no"])
    w = d.worst_case(one, "shafer")
    assert w.eps == 0.0 and (w.x, w.x2, w.event) == ("no", "yes", ("yes", "no"))


def test_a_witness_names_the_largest_numerator_and_skips_columns_that_say_nothing():
    from designer.vocabulary import Loss

    # three inputs on {a}: 0.6, 0.3, 0.1 -> the Shafer loss is ln 6, m_u({a}) / m_w({a})
    mech = Mechanism([[0, 0.6, 0.2, 0.2], [0, 0.3, 0.5, 0.2], [0, 0.1, 0.6, 0.3]], inputs=["u", "v", "w"],
                     frame=["a", "b"])
    w = d.worst_case(mech)  # the default loss is Shafer's
    assert w.loss is Loss.SHAFER and (w.x, w.x2, w.event) == ("u", "w", ("a",))
    assert w.eps == pytest.approx(math.log(6), rel=1e-12)
    # identical rows: every ratio is 1; bel({a}) = 0 for both says nothing, so the witness is {b}'s 0.5 / 0.5
    same = Mechanism([[0, 0, 0.5, 0.5], [0, 0, 0.5, 0.5]], inputs=["yes", "no"], frame=["a", "b"])
    w = d.worst_case(same, "bel")
    assert w.eps == 0.0 and (w.x, w.x2, w.event) == ("no", "yes", ("b",))
    single = d.worst_case(Mechanism([[0.0, 0.25, 0.75, 0.0]], inputs=["only"]), "walley")
    assert single.loss is Loss.WALLEY and single.x is None
    with pytest.raises(TypeError, match=r"^expected a Mechanism, got list$"):
        d.worst_case([[0.5, 0.5]])
