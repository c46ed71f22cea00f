"""Power and its arguments against Warner's closed form (Eq 1), written here independently.

For Warner's mechanism with truth probability ``p`` the MLE's variance per respondent at share ``pi`` is
``V(pi) = pi (1 - pi) + p (1 - p) / (2p - 1)^2`` (Eq 1 times n). A two-sided Wald test at ``alpha`` of
``null`` against ``null + detect`` with ``n`` respondents has power ``Phi((D sqrt(n) - z s0) / s1)``, with
``s0 = sqrt(V(null))``, ``s1 = sqrt(V(null + D))`` (one sample) or ``s0 = sqrt(2 V(mean))``,
``s1 = sqrt(V(null) + V(null + D))`` (two groups, per group); the sample size is the least ``n`` reaching the
power. Every argument's domain is checked at its edges, naming the argument.
"""

from __future__ import annotations

import math
from pathlib import Path
from statistics import NormalDist

import pytest

from designer import Q_WRR
from designer.exceptions import DesignerError
from designer.planning import accuracy_of, power_at, power_sample_size

P = math.e / (1 + math.e)  # Warner at eps = 1
N01 = NormalDist()


def _v(pi: float) -> float:
    return pi * (1 - pi) + P * (1 - P) / (2 * P - 1) ** 2


def _power(n: int, detect: float, alpha: float, null: float, groups: int, alternative: str = "two-sided",
           null_variance: str = "pooled", null_difference: float = 0.0) -> float:
    """The Wald test's power from Eq 1 with NormalDist: both tails when two-sided."""
    z = N01.inv_cdf(1 - alpha / 2) if alternative == "two-sided" else N01.inv_cdf(1 - alpha)
    q0 = null + null_difference
    p1 = q0 - detect if alternative == "less" else q0 + detect
    if groups == 1:
        s0, s1 = math.sqrt(_v(null)), math.sqrt(_v(p1))
    else:
        s0 = math.sqrt(2 * _v((null + p1) / 2)) if null_variance == "pooled" else math.sqrt(_v(null) + _v(q0))
        s1 = math.sqrt(_v(null) + _v(p1))
    power = N01.cdf((detect * math.sqrt(n) - z * s0) / s1)
    if alternative == "two-sided":
        power += N01.cdf((-detect * math.sqrt(n) - z * s0) / s1)
    return power


def _accuracy(prior=(0.3, 0.7)):
    return accuracy_of(Q_WRR(1.0), "sldp", list(prior))  # eps = 1: truth with probability P


@pytest.mark.parametrize("groups", [1, 2])
@pytest.mark.parametrize("null", [None, 0.1, 0.55])
@pytest.mark.parametrize("detect, alpha", [(0.05, 0.05), (0.12, 0.01), (0.2, 0.1)])
def test_power_and_sample_size_are_the_wald_formulas(groups, null, detect, alpha):
    acc = _accuracy()
    base = 0.3 if null is None else null
    for n in (50, 400, 3000):
        assert power_at(acc, n, detect, alpha, null=null, groups=groups) == pytest.approx(
            _power(n, detect, alpha, base, groups), rel=1e-9)
    for target in (0.5, 0.8, 0.95):
        n = power_sample_size(acc, detect, target, alpha, null=null, groups=groups)
        assert _power(n, detect, alpha, base, groups) >= target - 1e-12
        assert n == 1 or _power(n - 1, detect, alpha, base, groups) < target


def test_the_null_defaults_to_the_accuracy_prior_of_the_share():
    acc = _accuracy((0.2, 0.8))
    assert power_at(acc, 500, 0.1) == pytest.approx(_power(500, 0.1, 0.05, 0.2, 1), rel=1e-9)
    assert power_at(acc, 500, 0.1, share=1, null=0.6) == pytest.approx(_power(500, 0.1, 0.05, 0.6, 1), rel=1e-9)


@pytest.mark.parametrize("call, name", [
    (lambda acc: power_at(acc, 100, 0.0), "detect"),
    (lambda acc: power_at(acc, 100, -0.1), "detect"),
    (lambda acc: power_at(acc, 100, 0.1, alpha=0.0), "alpha"),
    (lambda acc: power_at(acc, 100, 0.1, alpha=1.0), "alpha"),
    (lambda acc: power_at(acc, 100, 0.1, alpha=-0.5), "alpha"),
    (lambda acc: power_at(acc, 100, 0.1, alpha=1.5), "alpha"),
    (lambda acc: power_at(acc, 100, 0.1, null=-0.1), "null"),
    (lambda acc: power_at(acc, 100, 0.1, null=1.5), "null"),
    (lambda acc: power_sample_size(acc, 0.1, power=0.0), "power"),
    (lambda acc: power_sample_size(acc, 0.1, power=1.0), "power"),
    (lambda acc: power_sample_size(acc, 0.1, power=-0.2), "power"),
    (lambda acc: power_sample_size(acc, 0.1, power=1.2), "power"),
    (lambda acc: power_at(acc, 100, 0.1, null=0.9), "leaves"),
    (lambda acc: power_at(acc, 100, 0.5, null=0.5), "leaves"),
    (lambda acc: power_at(acc, 100, 0.1, groups=3), "groups"),
    (lambda acc: power_at(acc, 0, 0.1), "n"),
])
def test_arguments_out_of_their_domain_are_refused_by_name(call, name):
    with pytest.raises(DesignerError, match=rf"\b{name}\b"):
        call(_accuracy())


def test_arguments_at_the_edge_of_their_domain_are_accepted():
    acc = _accuracy()
    assert 0 < power_at(acc, 100, 1e-9) < 1  # the smallest detect
    assert power_at(acc, 100, 0.1, alpha=1e-9) < power_at(acc, 100, 0.1, alpha=1 - 1e-9)
    assert power_at(acc, 100, 0.1, null=0.0) == pytest.approx(_power(100, 0.1, 0.05, 0.0, 1), rel=1e-9)
    assert power_at(acc, 100, 0.5, null=0.5 - 1e-9) > 0  # p1 just below 1
    assert power_sample_size(acc, 0.1, power=1e-6) >= 1 and power_sample_size(acc, 0.1, power=1 - 1e-6) > 1


def test_a_share_moved_to_a_value_rescales_the_others():
    """The prior at which a share's variance is read: that share set, the others scaled to fill the rest, or
    spread evenly when the others had nothing (integer priors accepted)."""
    import numpy as np

    from designer.planning.sizes import _share_prior

    np.testing.assert_allclose(_share_prior(np.array([0.2, 0.3, 0.5]), 0, 0.6), [0.6, 0.15, 0.25], rtol=1e-15)
    np.testing.assert_allclose(_share_prior(np.array([0.0, 1.0, 0.0]), 0, 0.4), [0.4, 0.6, 0.0], rtol=1e-15)
    np.testing.assert_allclose(_share_prior([1, 0, 0], 0, 0.4), [0.4, 0.3, 0.3], rtol=1e-15)
    np.testing.assert_allclose(_share_prior([0, 0, 1, 0, 0], 2, 0.2), [0.2] * 5, rtol=1e-15)


@pytest.mark.parametrize("level, detect, alpha", [(0.95, None, 0.05), (0.9, 0.1, 0.05), (0.99, 0.15, 0.01)])
def test_simulation_check_is_the_warner_computation(level, detect, alpha):
    """check_by_simulation against the same surveys analysed here with Warner's closed-form MLE and Eq 1:
    the same seed draws the same answer counts, so coverage, half-width and power must agree exactly."""
    import numpy as np

    from designer.planning import check_by_simulation

    acc = _accuracy((0.3, 0.7))
    n, reps, seed = 400, 300, 17
    got = check_by_simulation(acc, n, reps, level, seed=seed, detect=detect, alpha=alpha)
    rng = np.random.default_rng(seed)

    def surveys(pi):
        yes = rng.multinomial(n, [pi * P + (1 - pi) * (1 - P), pi * (1 - P) + (1 - pi) * P], size=reps)[:, 0] / n
        est = np.clip((yes - (1 - P)) / (2 * P - 1), 0.0, 1.0)
        at = np.clip(np.c_[est, 1 - est], 1e-9, None)
        at = at[:, 0] / at.sum(axis=1)
        return est, np.sqrt(np.array([_v(a) for a in at]) / n)

    z = N01.inv_cdf(0.5 + level / 2)
    est, se = surveys(0.3)
    covered = np.abs(est - 0.3) <= z * se  # both shares share one interval width for two inputs
    assert got["reps"] == reps
    assert got["coverage"] == pytest.approx(covered.mean(), abs=1e-12)
    assert got["coverage_all_shares"] == pytest.approx(covered.mean(), abs=1e-12)
    assert got["mean_half_width"] == pytest.approx((z * se).mean(), rel=1e-6)
    if detect is None:
        assert "power" not in got
    else:
        est1, se1 = surveys(0.3 + detect)
        reject = np.abs(est1 - 0.3) > N01.inv_cdf(1 - alpha / 2) * se1
        assert got["power"] == pytest.approx(reject.mean(), abs=1e-12)


def test_simulation_check_refuses_bad_sizes_by_name():
    from designer.planning import check_by_simulation

    with pytest.raises(DesignerError, match="reps"):
        check_by_simulation(_accuracy(), 100, 1, seed=1)
    with pytest.raises(DesignerError, match="n"):
        check_by_simulation(_accuracy(), 0, 10, seed=1)
    assert check_by_simulation(_accuracy(), 1, 2, seed=1)["reps"] == 2


def test_sample_size_is_exact_when_the_formula_lands_on_an_integer():
    """A target power read off the formula at n: the answer is n itself, not n + 1 (float slack handled)."""
    acc = _accuracy()
    for n in (100, 2500, 10_000):  # powers from 0.06 to 0.96: the normal quantile keeps 1e-13
        for groups in (1, 2):
            target = _power(n, 0.05, 0.05, 0.3, groups)
            assert power_sample_size(acc, 0.05, target, 0.05, groups=groups) == n
    assert power_at(_accuracy(), 1, 0.1) == pytest.approx(_power(1, 0.1, 0.05, 0.3, 1), rel=1e-9)


def test_one_respondent_can_be_enough_and_an_unidentified_share_has_no_power():
    import numpy as np

    from designer import Q_WRR, Mechanism

    sharp = accuracy_of(Q_WRR(12.0), "sldp", [0.05, 0.95])  # truth with probability 1 - 6e-6
    assert power_sample_size(sharp, 0.9, 0.8) == 1
    blind = accuracy_of(Mechanism(np.array([[0, 0.5, 0.5, 0], [0, 0.5, 0.5, 0]])), "sldp", [0.3, 0.7])  # alike
    with pytest.raises(DesignerError, match="not identified"):
        power_sample_size(blind, 0.1)


def test_simulation_check_names_its_arguments_and_refuses_wldp_set_answers_only():
    from designer import Q_2x3
    from designer.planning import check_by_simulation

    with pytest.raises(DesignerError, match=r"^reps must be an integer >= 2, got 1$"):
        check_by_simulation(_accuracy(), 100, 1, seed=1)
    with pytest.raises(DesignerError, match=r"^n must be an integer >= 1, got 0$"):
        check_by_simulation(_accuracy(), 0, 10, seed=1)
    with pytest.raises(DesignerError, match=r"^check simulates set answers and their MLE: under WLDP the answers "
                                            r"come from an unknown credal member, so there is no interval to check; "
                                            r"plan under SLDP$"):
        check_by_simulation(accuracy_of(Q_2x3(0.5, 0.2), "wldp", [0.3, 0.7]), 100, 10, seed=1)
    # precise answers (Warner) have no credal freedom: the check runs under WLDP as under SLDP
    wldp = check_by_simulation(accuracy_of(Q_WRR(1.0), "wldp", [0.3, 0.7]), 200, 20, seed=3)
    assert wldp == check_by_simulation(_accuracy(), 200, 20, seed=3)


def test_price_of_privacy_rows_are_warners_sample_sizes_at_the_planning_prior():
    """Each budget's row against Eq 1 at the prior asked for (not the file's), and the reason of a row
    without n."""
    from designer.optimal import load_problem
    from designer.planning import price_of_privacy
    from designer.vocabulary import VarianceFormula

    problem = load_problem(Path(__file__).resolve().parents[1] / "problems" / "warner.toml")
    z = N01.inv_cdf(0.975)
    rows = price_of_privacy(problem, [0.5, 1.0, 2.0], 0.03, 0.95, prior=[0.2, 0.8])
    assert [r["epsilon"] for r in rows] == [0.5, 1.0, 2.0]
    for row in rows:
        p = math.exp(row["epsilon"]) / (1 + math.exp(row["epsilon"]))
        v = 0.2 * 0.8 + p * (1 - p) / (2 * p - 1) ** 2
        assert set(row) == {"epsilon", "variance", "n", "formula", "basis", "reason"}
        assert row["variance"] == pytest.approx(v, rel=1e-9)
        assert row["n"] == math.ceil(z**2 * v / 0.03**2 - 1e-9)
        assert (row["formula"], row["basis"], row["reason"]) == (VarianceFormula.WARNER, "file", "")
    (row,) = price_of_privacy(problem, [1.0], 1e-9, 0.95, prior=[0.2, 0.8])
    assert row["n"] is None and row["reason"].startswith("more than 1e+12 respondents would be needed")
    assert row["variance"] == pytest.approx(rows[1]["variance"]) and row["basis"] == "file"


def test_power_of_a_share_identified_at_the_null_only():
    """Q_2x3(0.4, 0) under WLDP: the share's variance is finite at 0 and infinite at 0.3 (worked out by
    share_variances); no sample size has power, and the power at any n is the test's level on one side."""
    import numpy as np

    from designer import Q_2x3
    from designer.optimal.objectives import share_variances
    from designer.vocabulary import Semantics

    mech = Q_2x3(0.4, 0.0)
    v = [float(share_variances(mech, np.array([p, 1 - p]), Semantics.WLDP)[0][0]) for p in (0.0, 0.3)]
    assert math.isfinite(v[0]) and v[1] == math.inf
    acc = accuracy_of(mech, "wldp", [0.5, 0.5])
    with pytest.raises(DesignerError, match=r"^the share is not identified by this mechanism \(variance inf\): "
                                            r"no test has power$"):
        power_sample_size(acc, 0.3, null=0.0)
    assert power_at(acc, 500, 0.3, 0.05, null=0.0) == 0.05


def test_a_share_moved_from_certainty_spreads_the_rest_evenly_without_warnings():
    import warnings

    import numpy as np

    from designer.planning.sizes import _share_prior

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _share_prior(np.array([1.0, 0.0, 0.0]), 0, 0.4).tolist() == [0.4, 0.3, 0.3]
        assert _share_prior(np.array([0.5, 0.25, 0.25]), 0, 0.2).tolist() == [0.2, 0.4, 0.4]


class _Counting:
    """An Accuracy that counts how often its variance at n is asked for (sample_size's work)."""

    def __init__(self, acc):
        self.acc, self.calls = acc, 0
        self.variance, self.formula = acc.variance, acc.formula

    def variance_at(self, n):
        self.calls += 1
        return self.acc.variance_at(n)


def test_sample_size_from_the_asymptotic_formula_is_read_off_it_and_exact_at_integers():
    from designer import Q_kRR
    from designer._internal.numeric import two_sided_z  # tested against NormalDist in test_numeric
    from designer.planning import sample_size
    from designer.vocabulary import VarianceFormula

    acc = accuracy_of(Q_kRR(1.0, 3), "sldp", [0.2, 0.3, 0.5])
    assert acc.formula is VarianceFormula.ASYMPTOTIC
    z = two_sided_z(0.95)
    assert z == pytest.approx(N01.inv_cdf(0.975), rel=1e-12)
    for n in (1, 7, 1000, 123_457):
        width = z * math.sqrt(acc.variance / n)  # the half-width at n, V / n as the asymptotic formula has it
        if width >= 0.5 or n == 1:
            continue
        spy = first = _Counting(acc)
        size = sample_size(spy, width, 0.95)
        # n itself when the half-width at n equals the target exactly (the bound is inclusive, no 1e-12 slack
        # upwards), n + 1 for the next float below it; read off the formula, not searched
        assert size.n == n and spy.calls <= 3
        spy = _Counting(acc)
        assert sample_size(spy, math.nextafter(width, 0.0), 0.95).n == n + 1 and spy.calls <= 4
        assert size.width == width and size.level == 0.95 and size.accuracy is first
        assert size.achieved_width == pytest.approx(z * math.sqrt(acc.variance / n), rel=1e-12)
        assert size.achieved_width <= width


@pytest.mark.parametrize(("eps", "pi"), [(0.5, 0.3), (1.0, 0.1), (3.0, 0.45), (20.0, 0.01)])
def test_sample_size_from_warners_exact_formula_is_the_smallest_n(eps, pi):
    """Eq 1: Var_n = (pi (1 - pi) + p (1 - p) / (2p - 1)^2) / n; the smallest n is checked at n and n - 1."""
    from designer.planning import sample_size

    acc = accuracy_of(Q_WRR(eps), "sldp", [pi, 1 - pi])
    p = math.exp(eps) / (1 + math.exp(eps))
    v1 = pi * (1 - pi) + p * (1 - p) / (2 * p - 1) ** 2
    z = N01.inv_cdf(0.975)
    for width in (0.49, 0.3, 0.1, 0.05, 0.021, 0.01, 0.003):
        n = max(1, math.ceil(z * z * v1 / width**2))
        while n > 1 and z * math.sqrt(v1 / (n - 1)) <= width * (1 + 1e-13):
            n -= 1
        size = sample_size(acc, width, 0.95)
        assert abs(size.n - n) <= 1 and (size.n == n or abs(z * math.sqrt(v1 / n) - width) < 1e-12 * width)
        assert z * math.sqrt(v1 / size.n) <= width * (1 + 1e-12)
        assert size.n == 1 or z * math.sqrt(v1 / (size.n - 1)) > width * (1 - 1e-12)
        assert (size.width, size.level, size.accuracy) == (width, 0.95, acc)
        assert size.achieved_width == pytest.approx(z * math.sqrt(v1 / size.n), rel=1e-9)


def test_sample_size_refuses_what_no_sample_size_can_meet_in_words():
    from designer.planning import sample_size

    acc = _accuracy()
    for bad, message in ((0.0, r"^width must lie in \(0, inf\), got 0.0$"), (-0.1, r"^width must lie in")):
        with pytest.raises(DesignerError, match=message):
            sample_size(acc, bad)
    for level in (0.0, 1.0, 1.5):
        with pytest.raises(DesignerError, match=r"^level must lie in \(0, 1\), got"):
            sample_size(acc, 0.03, level)
    with pytest.raises(DesignerError, match=r"^more than 1e\+12 respondents would be needed \(variance 1\.131 per "
                                            r"respondent\); raise the budget or the width$"):
        sample_size(acc, 1e-9)
    from designer import Mechanism

    blind = accuracy_of(Mechanism([[0, 0.5, 0.5, 0], [0, 0.5, 0.5, 0]]), "sldp", [0.3, 0.7])
    with pytest.raises(DesignerError, match=r"^a share is not identified by this mechanism \(variance inf\): no "
                                            r"sample size gives it an interval; choose a design that separates "
                                            r"every input$"):
        sample_size(blind, 0.1)


@pytest.mark.parametrize(("n", "width"), [(2000, 0.03), (5000, 0.05), (400, 0.2), (30_000, 0.006)])
def test_smallest_budget_inverts_warners_formula(n, width):
    """Warner at prior 0.3: z sqrt(V(eps) / n) = width with p(1-p)/(2p-1)^2 = e/(e-1)^2, e = e^eps, solved in
    closed form; the search is exact to its tolerance (2e-4 nats)."""
    from designer.optimal import load_problem
    from designer.planning import smallest_budget

    z = N01.inv_cdf(0.975)
    r = n * width**2 / z**2 - 0.3 * 0.7
    e = ((2 * r + 1) + math.sqrt(4 * r + 1)) / (2 * r)
    problem = load_problem(Path(__file__).resolve().parents[1] / "problems" / "warner.toml")
    plan = smallest_budget(problem, n, width, 0.95, prior=[0.3, 0.7])
    assert plan.epsilon == pytest.approx(math.log(e), abs=2.5e-4) and plan.epsilon >= math.log(e) - 1e-9
    assert z * math.sqrt(plan.accuracy.variance_at(n)) <= width


def test_smallest_budget_where_the_structure_or_a_floor_decides():
    from designer.optimal import load_problem
    from designer.planning import accuracy_of as acc_of
    from designer.planning import smallest_budget

    root = Path(__file__).resolve().parents[1] / "problems"
    warner = load_problem(root / "warner.toml")
    # at most 5% lies: infeasible below ln 19 (a lie has probability 1/(1 + e^eps) at least)
    capped = warner.replace(lie_max=0.05)
    plan = smallest_budget(capped, 1000, 0.3, 0.95, prior=[0.3, 0.7])
    assert plan.epsilon == pytest.approx(math.log(19), abs=2.5e-4) and plan.epsilon >= math.log(19) - 1e-9
    # a fixed don't-know mass of 0.2 puts a floor under the variance: no budget meets 0.005 with 1000 answers
    gwrr = load_problem(root / "gwrr-dont-know.toml")
    from designer.optimal import design

    floor = acc_of(design(gwrr.replace(epsilon=20.0)).mechanism, "sldp", [0.3, 0.7]).variance
    z = N01.inv_cdf(0.975)
    needed = math.ceil(z**2 * floor / 0.005**2)
    with pytest.raises(DesignerError) as info:
        smallest_budget(gwrr, 1000, 0.005, 0.95, prior=[0.3, 0.7])
    assert str(info.value) == (f"no budget up to 20 reaches width 0.005 with n = 1000: the variance stays above "
                               f"{floor:.4g} per respondent even at eps = 20 (don't-know mass 0.2: those answers carry "
                               f"no information); at least {needed} respondents would be needed")
    for args, message in (((0, 0.1), r"^n must be an integer >= 1, got 0$"),
                          ((100, 0.0), r"^width must lie in \(0, inf\), got 0.0$")):
        with pytest.raises(DesignerError, match=message):
            smallest_budget(warner, *args)
    for level in (0.0, 1.0):
        with pytest.raises(DesignerError, match=r"^level must lie in \(0, 1\), got"):
            smallest_budget(warner, 100, 0.1, level)


def test_the_exact_finite_n_formula_is_used_exactly_where_the_paper_gives_one():
    """Warner (Eq 1) for a precise symmetric binary design under either semantics, Thm 3.10 for GWRR under SLDP,
    the asymptotic V / n for anything else (docs/theory.md section 10)."""
    from designer import Q_GWRR, Mechanism, Q_2x3, Q_kRR
    from designer.vocabulary import VarianceFormula as F

    def yn(rows):
        return Mechanism(rows, inputs=["yes", "no"], frame=["yes", "no"])

    def formula(mech, semantics="sldp"):
        acc = accuracy_of(mech, semantics, [0.3, 0.7] if mech.k == 2 else None)
        return acc.formula, acc._pq

    p = math.e / (1 + math.e)
    assert formula(Q_WRR(1.0)) == (F.WARNER, pytest.approx((p, 1 - p)))
    assert formula(Q_WRR(1.0), "wldp")[0] is F.WARNER
    assert formula(Q_2x3(0.6, 0.1)) == (F.THM_3_10, (0.6, 0.1))
    assert formula(Q_GWRR(1.0, 0.8), "wldp")[0] is F.ASYMPTOTIC
    asymmetric = yn([[0, 0.6, 0.3, 0.1], [0, 0.2, 0.6, 0.2]])
    assert formula(asymmetric)[0] is F.ASYMPTOTIC
    almost = yn([[0, 0.6, 0.3, 0.1], [0, 0.3 + 2e-12, 0.6 - 2e-12, 0.1]])
    assert formula(almost)[0] is F.ASYMPTOTIC
    assert formula(yn([[0, 0.6, 0.4, 0], [0, 0.4 + 1e-13, 0.6 - 1e-13, 0]]))[0] is F.WARNER
    assert formula(yn([[0, 0.4, 0.6, 0], [0, 0.6, 0.4, 0]]))[0] is F.ASYMPTOTIC  # p < q
    assert formula(yn([[0, 0.5, 0.5, 0], [0, 0.5, 0.5, 0]]))[0] is F.ASYMPTOTIC  # p = q: not identified
    assert formula(Q_kRR(1.0, 3))[0] is F.ASYMPTOTIC
    other_labels = Mechanism([[0, 0.7, 0.3, 0], [0, 0.3, 0.7, 0]], inputs=["u", "v"], frame=["yes", "no"])
    assert formula(other_labels)[0] is F.ASYMPTOTIC
    # a row that never says {no}: its missing entry is 0, the design is not symmetric
    one_sided = yn([[0, 0.8, 0, 0.2], [0, 0, 0.8, 0.2]])
    assert formula(one_sided)[0] is F.THM_3_10
    no_yes = yn([[0, 0, 0.8, 0.2], [0, 0.8, 0, 0.2]])
    assert formula(no_yes)[0] is F.ASYMPTOTIC
    three_labels = Mechanism([[0, 0.7, 0.3, 0, 0, 0, 0, 0], [0, 0.3, 0.7, 0, 0, 0, 0, 0]], inputs=["a", "b"],
                             frame=["a", "b", "c"])
    assert formula(three_labels)[0] is F.ASYMPTOTIC


def test_sample_size_at_its_edges():
    """The asymptotic formula at n = 1, at exactly N_MAX respondents (allowed) and one more (refused), and the
    rounding guard: a width the 1e-12 slack puts one respondent short is met at the next n."""
    from designer import Q_kRR
    from designer._internal.numeric import two_sided_z
    from designer.planning import sample_size
    from designer.planning.sizes import N_MAX

    acc = accuracy_of(Q_kRR(1.0, 3), "sldp", [0.2, 0.3, 0.5])
    z = two_sided_z(0.95)
    assert sample_size(acc, z * math.sqrt(acc.variance) * 2, 0.95).n == 1
    # z^2 V / width^2 = N_MAX + 0.5: the formula's n (with its 1e-12 slack) is N_MAX exactly, still allowed
    assert sample_size(acc, z * math.sqrt(acc.variance / (N_MAX + 0.5)), 0.95).n == N_MAX + 1
    with pytest.raises(DesignerError, match="more than 1e\\+12 respondents"):
        sample_size(acc, z * math.sqrt(acc.variance / (N_MAX + 2)), 0.95)
    m = 4321
    width = z * math.sqrt(acc.variance / (m * (1 + 5e-13)))  # ceil(m (1 + 5e-13)(1 - 1e-12)) = m, not met at m
    assert z * math.sqrt(acc.variance / m) > width
    assert sample_size(acc, width, 0.95).n == m + 1


def test_smallest_budget_floor_messages_without_dont_know_and_without_any_information():
    """A floor that no budget lifts, said in full: Warner's variance at eps = 20 is the prior's own
    pi (1 - pi) / n (no don't-know note); a design that says nothing has an infinite variance (no count of
    respondents)."""
    from designer.optimal import DesignProblem, design, load_problem
    from designer.planning import accuracy_of as acc_of
    from designer.planning import smallest_budget

    warner = load_problem(Path(__file__).resolve().parents[1] / "problems" / "warner.toml")
    with pytest.raises(DesignerError) as info:
        smallest_budget(warner, 100, 0.01, 0.95, prior=[0.3, 0.7])
    floor = acc_of(design(warner.replace(epsilon=20.0)).mechanism, "sldp", [0.3, 0.7]).variance
    needed = math.ceil(N01.inv_cdf(0.975) ** 2 * floor / 0.01**2)
    assert str(info.value) == (f"no budget up to 20 reaches width 0.01 with n = 100: the variance stays above "
                               f"{floor:.4g} per respondent even at eps = 20; at least {needed} respondents would be "
                               "needed")
    silent = DesignProblem(objective="truthful", inputs=("yes", "no"), epsilon=1.0, dont_know=1.0)
    with pytest.raises(DesignerError) as info:
        smallest_budget(silent, 100, 0.1, 0.95)
    message = str(info.value)
    assert message == ("no budget up to 20 reaches width 0.1 with n = 100: the variance stays above inf per "
                       "respondent even at eps = 20 (don't-know mass 1: those answers carry no information)")


def test_price_of_privacy_uses_the_level_asked_for():
    from designer.optimal import load_problem
    from designer.planning import price_of_privacy

    problem = load_problem(Path(__file__).resolve().parents[1] / "problems" / "warner.toml")
    z = N01.inv_cdf(0.95)  # level 0.9
    (row,) = price_of_privacy(problem, [1.0], 0.03, 0.9, prior=[0.2, 0.8])
    assert row["n"] == math.ceil(z**2 * row["variance"] / 0.03**2 - 1e-9)
    (default,) = price_of_privacy(problem, [1.0], 0.03, prior=[0.2, 0.8])  # level 0.95 by default
    assert default["n"] == math.ceil(N01.inv_cdf(0.975) ** 2 * default["variance"] / 0.03**2 - 1e-9)


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
@pytest.mark.parametrize("groups, null_variance, null_difference", [(1, "pooled", 0.0), (2, "pooled", 0.0),
                                                                     (2, "null", 0.0), (2, "null", 0.1),
                                                                     (2, "pooled", -0.05)])
def test_power_under_each_alternative_and_null_variance(alternative, groups, null_variance, null_difference):
    """One- and two-sided tests (two-sided counting both tails, as rr does), two groups with a null difference and
    the null variance pooled or at the stated null shares: power against NormalDist, and the smallest n whose power
    reaches the target (checked at n and n - 1)."""
    acc = _accuracy()
    kw = {"alternative": alternative, "null_variance": null_variance, "null_difference": null_difference}
    for n in (20, 400, 5000):
        assert power_at(acc, n, 0.08, 0.05, null=0.4, groups=groups, **kw) == pytest.approx(
            _power(n, 0.08, 0.05, 0.4, groups, **kw), rel=1e-9)
    for target in (0.5, 0.8, 0.9):
        n = power_sample_size(acc, 0.08, target, 0.05, null=0.4, groups=groups, **kw)
        assert _power(n, 0.08, 0.05, 0.4, groups, **kw) >= target
        assert n == 1 or _power(n - 1, 0.08, 0.05, 0.4, groups, **kw) < target


def test_both_tails_make_a_small_effect_more_powerful():
    """rr's convention: at a small effect the second tail is not negligible (one tail alone understates it)."""
    acc = _accuracy()
    both = power_at(acc, 200, 0.02, 0.05, null=0.3)
    one = _power(200, 0.02, 0.05, 0.3, 1) - N01.cdf((-0.02 * math.sqrt(200) - N01.inv_cdf(0.975)
                                                      * math.sqrt(_v(0.3))) / math.sqrt(_v(0.32)))
    assert both > one + 0.004
    with pytest.raises(DesignerError, match="alternative must be one of 'two-sided', 'greater', 'less'"):
        power_at(acc, 200, 0.02, alternative="bigger")
    with pytest.raises(DesignerError, match="null_difference is the difference of two groups' shares"):
        power_at(acc, 200, 0.02, null_difference=0.1)


def test_the_finite_n_formula_is_read_only_off_symmetric_binary_mechanisms():
    """Warner's Eq 1 and Thm 3.10 apply to the symmetric binary mechanisms only: a row with no {yes} or no {no}
    mass, or a second row whose {no} is not the first row's {yes}, is planned by the asymptotic variance."""
    import numpy as np

    from designer import Mechanism
    from designer.planning.sizes import VarianceFormula

    def mech(rows: list[list[float]]) -> Mechanism:
        return Mechanism(np.array(rows), inputs=("yes", "no"), frame=("yes", "no"), focal=[1, 2, 3])

    asymptotic = [[[0.0, 0.0, 1.0], [0.0, 1.0, 0.0]],  # "yes" always "don't know": no {yes} mass in row 0
                  [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]],  # "no" always "don't know": no {no} mass in row 1
                  [[0.8, 0.2, 0.0], [0.2, 0.7, 0.1]],  # {yes} of row 1 is {no} of row 0, but not the converse
                  [[0.7, 0.2, 0.1], [0.3, 0.7, 0.0]]]  # {no} of row 1 is {yes} of row 0, but not the converse
    for rows in asymptotic:
        assert accuracy_of(mech(rows), "sldp").formula is VarianceFormula.ASYMPTOTIC, rows
    warner = accuracy_of(mech([[0.8, 0.2, 0.0], [0.2, 0.8, 0.0]]), "sldp")
    assert warner.formula is VarianceFormula.WARNER
    assert warner.variance_at(10) == pytest.approx(0.25 / 10 + 0.16 / 0.36 / 10, rel=1e-12)
    thm = mech([[0.6, 0.1, 0.3], [0.1, 0.6, 0.3]])
    assert accuracy_of(thm, "sldp").formula is VarianceFormula.THM_3_10
    assert accuracy_of(thm, "wldp").formula is VarianceFormula.ASYMPTOTIC


def test_the_design_cache_keeps_one_design_per_budget_to_twelve_digits():
    """Budgets that agree to 12 decimals are one design and one plan (a bisection over budgets asks for many
    neighbours): one solve, designed at the rounded budget."""
    from designer import DesignProblem
    from designer.planning.sizes import DesignCache

    cache = DesignCache(DesignProblem(objective="truthful", inputs=("yes", "no"), epsilon=1.0))
    first = cache(1.0 + 2e-13)
    assert cache(1.0) is first and cache(1.0 - 3e-13) is first
    assert cache.solved == 1 and len(cache.plans) == 1 and first.problem.epsilon == 1.0
    assert cache(1.0 + 2e-12).problem.epsilon == pytest.approx(1.0 + 2e-12, abs=1e-15) and cache.solved == 2


def test_the_fallback_is_the_max_variance_design_at_the_planning_prior():
    """A truthful 4-answer design at eps = 0.5 merges inputs (nothing identified); planned at prior (0.2, 0.25,
    0.25, 0.3), the fallback is the max_variance design at that prior (not at the file's own, which differs), two
    solves."""
    import warnings

    import numpy as np

    from designer import design
    from designer.exceptions import DesignWarning
    from designer.planning import parse_survey
    from designer.planning.sizes import DesignCache

    problem = parse_survey({"epsilon": 0.5, "question": [
        {"name": "q", "inputs": ["a", "b", "c", "d"], "prior": [0.093, 0.159, 0.179, 0.569],
         "objective": "truthful"}]}).questions[0]
    planning = np.array([0.2, 0.25, 0.25, 0.3])
    cache = DesignCache(problem, planning)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DesignWarning)
        assert not math.isfinite(accuracy_of(design(problem).mechanism, "sldp", planning).variance)
        at_prior = design(problem.replace(epsilon=0.5, objective="max_variance", prior=planning))
        own_prior = design(problem.replace(epsilon=0.5, objective="max_variance"))
    assert cache.basis(0.5) == "max_variance_prior" and cache.solved == 2
    assert cache(0.5).mechanism.allclose(at_prior.mechanism, atol=1e-9)
    assert not cache(0.5).mechanism.allclose(own_prior.mechanism, atol=1e-6)
    assert cache.accuracy(0.5).variance == pytest.approx(
        accuracy_of(at_prior.mechanism, "sldp", planning).variance, rel=1e-9)


@pytest.mark.parametrize(("prior", "solves"), [((0.5, 0.5), 1), ((0.5 + 1e-9, 0.5 - 1e-9), 1), ((0.3, 0.7), 1)])
def test_nothing_is_solved_twice_when_no_design_identifies(prior, solves):
    """Every answer "don't know" (dont_know = 1): no design identifies anything. The file's design is planned
    (infinite variance); the max_variance fallback at the planning prior is refused before any solve (a don't-know
    mass of 1 carries no information), so one design is solved whatever the prior."""
    from designer import DesignProblem
    from designer.planning.sizes import DesignCache

    cache = DesignCache(DesignProblem(objective="truthful", inputs=("yes", "no"), epsilon=1.0, dont_know=1.0), prior)
    assert cache.basis(1.0) == "file" and not math.isfinite(cache.accuracy(1.0).variance)
    assert cache.solved == solves


def test_a_file_design_that_is_infeasible_is_the_planners_error():
    """Half the mass on "don't know" with no lie allowed cannot be private: the file's own infeasibility is raised
    (not a fallback's), also for a chi2 problem at the uniform prior, whose fallbacks are all skipped."""
    from designer import DesignProblem
    from designer.exceptions import InfeasibleDesignError
    from designer.planning.sizes import DesignCache

    for objective in ("truthful", "chi2"):
        problem = DesignProblem(inputs=("yes", "no"), epsilon=1.0, dont_know=0.5, lie_max=0.0, objective=objective)
        with pytest.raises(InfeasibleDesignError):
            DesignCache(problem)(1.0)


def test_a_design_too_large_to_expand_cannot_be_planned():
    from designer import DesignProblem
    from designer.planning import PlanningError
    from designer.planning.sizes import DesignCache

    cache = DesignCache(DesignProblem(objective="truthful", inputs=tuple(f"c{i}" for i in range(17)), epsilon=1.0))
    assert cache(1.0).mechanism is None
    with pytest.raises(PlanningError) as info:
        cache.accuracy(1.0)
    assert str(info.value) == "the design is too large to expand for planning; plan a smaller problem"


def test_accuracy_defaults_to_shafer_and_names_its_variance():
    from designer.optimal.objectives import VARIANCE_KINDS

    mech = Q_WRR(0.8)
    default, sldp = accuracy_of(mech), accuracy_of(mech, "sldp")
    assert default.semantics is sldp.semantics and default.semantics.value == "sldp"
    assert list(default.per_share) == list(sldp.per_share)
    assert default.kind == sldp.kind and default.kind in VARIANCE_KINDS


def test_the_simulation_check_of_five_options_is_the_analysts_wald_interval_per_share():
    """check_by_simulation on k-RR with five options, 60 respondents, a skewed prior: re-analysed here from the
    same seed's surveys (EM to the boundary, each share's own variance at the estimate, a share estimated as 0
    read at 1e-9 so its interval stays finite), the coverage, the all-shares coverage, the half-width and the
    power are the same numbers. The skew puts some estimates on the boundary, where the clipping decides."""
    import numpy as np

    from designer import Q_kRR
    from designer.estimation.shares import em, estimator_variance
    from designer.planning import check_by_simulation

    mech = Q_kRR(1.0, 5)
    prior = np.array([0.02, 0.08, 0.2, 0.3, 0.4])
    acc = accuracy_of(mech, "sldp", prior)
    n, reps, seed = 60, 150, 3
    got = check_by_simulation(acc, n, reps, seed=seed, detect=0.1, share=1)
    rng = np.random.default_rng(seed)
    z = N01.inv_cdf(0.975)

    def analyse(p):
        counts = rng.multinomial(n, p @ mech.matrix, size=reps).astype(np.float64)
        est = em(mech.matrix, counts, tol=1e-12, max_iter=20_000)[0]
        se = np.empty_like(est)
        for r, e in enumerate(est):
            at = np.maximum(e, 1e-9)
            se[r] = np.sqrt(estimator_variance(mech, at / at.sum(), n, reduce="none"))
        return est, se

    est, se = analyse(prior)
    assert np.any(est < 1e-9)  # boundary estimates occur
    assert np.ptp(se, axis=1).min() > 0  # the shares' variances differ: one mean variance would not do
    covered = np.abs(est - prior) <= z * se
    assert got["coverage"] == covered.mean()
    assert got["coverage_all_shares"] == np.all(covered, axis=1).mean()
    assert got["mean_half_width"] == pytest.approx((z * se).max(axis=1).mean(), rel=1e-12)
    alt = prior.copy()
    alt[1] += 0.1
    alt[[0, 2, 3, 4]] *= (1 - alt[1]) / alt[[0, 2, 3, 4]].sum()
    est1, se1 = analyse(alt)
    assert got["power"] == (np.abs(est1[:, 1] - prior[1]) > z * se1[:, 1]).mean()


def _direct_power(n: int, detect: float, alpha: float, null: float, alternative: str) -> float:
    """One sample, no randomization (V(pi) = pi (1 - pi)): the Wald test's power with NormalDist."""
    z = N01.inv_cdf(1 - alpha / 2) if alternative == "two-sided" else N01.inv_cdf(1 - alpha)
    p1 = null - detect if alternative == "less" else null + detect
    s0, s1 = math.sqrt(null * (1 - null)), math.sqrt(p1 * (1 - p1))
    power = N01.cdf((detect * math.sqrt(n) - z * s0) / s1)
    if alternative == "two-sided":
        power += N01.cdf((-detect * math.sqrt(n) - z * s0) / s1)
    return power


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
@pytest.mark.parametrize(("null", "detect"), [(0.5, 0.03), (0.5, 0.45), (0.2, 0.3), (0.9, 0.08), (0.05, 0.01)])
def test_sample_size_without_randomization_is_the_least_n(alternative, null, detect):
    """Without randomization (the identity mechanism) the standard deviations are below 1, where a formula that
    divides by them, or squares a ratio below 2, would overshoot: the answer is the least n, found by brute force,
    at powers below and above one half and for effects so large that one to three respondents suffice."""
    import numpy as np

    from designer import Mechanism

    identity = Mechanism(np.eye(2), inputs=("yes", "no"), frame=("yes", "no"), focal=[1, 2])
    acc = accuracy_of(identity, "sldp", [null, 1 - null])
    if alternative == "less" and null - detect <= 0:
        return
    for target in (0.3, 0.5, 0.8, 0.95):
        n = power_sample_size(acc, detect, target, 0.05, alternative=alternative)
        least = next(m for m in range(1, 10**6) if _direct_power(m, detect, 0.05, null, alternative) >= target)
        assert n == least, (target, n, least)


def test_a_one_sided_power_read_off_the_formula_gives_its_n_back():
    """The power of n = 400 respondents, read off the one-tailed formula, asks for exactly 400 (not 401: the
    formula's value lands on the integer up to the last bits)."""
    acc = _accuracy()
    for alternative in ("greater", "less"):
        power = power_at(acc, 400, 0.08, 0.05, null=0.4, alternative=alternative)
        assert power_sample_size(acc, 0.08, power, 0.05, null=0.4, alternative=alternative) == 400


def test_a_two_sided_test_can_need_fewer_respondents_than_one_tail_does():
    """A rare null (0.001) against 0.5, no randomization: one respondent gives power 0.945 counting both tails,
    while the upper tail alone needs two; the two-sided answer is 1."""
    import numpy as np

    from designer import Mechanism

    identity = Mechanism(np.eye(2), inputs=("yes", "no"), frame=("yes", "no"), focal=[1, 2])
    acc = accuracy_of(identity, "sldp", [0.001, 0.999])
    assert _direct_power(1, 0.499, 0.05, 0.001, "two-sided") >= 0.9 > _direct_power(1, 0.499, 0.05, 0.001, "greater")
    assert power_sample_size(acc, 0.499, 0.9, 0.05, null=0.001) == 1
    # one-sided, one respondent: 0.05 against 0.95 has power 0.99 at n = 1
    one = accuracy_of(identity, "sldp", [0.05, 0.95])
    assert _direct_power(1, 0.9, 0.05, 0.05, "greater") > 0.95
    assert power_sample_size(one, 0.9, 0.95, 0.05, alternative="greater") == 1


@pytest.mark.parametrize(("null", "detect", "power", "expected"), [
    (0.8889330885124085, 0.07806666374042112, 0.4621650370505883, 42),
    (0.6390825514408208, 0.2575311823836968, 0.1832837586470027, 5),
    (0.9777032586253819, 0.011459203409895292, 0.2990997792716535, 271)])
def test_the_rounding_guard_climbs_where_the_formula_falls_short(null, detect, power, expected):
    """Powers chosen so that the one-tailed formula's n lands a hair above an integer m, without randomization
    (a large z s0 / s1): its n rounds to m, whose power is below the target by more than the 1e-12 slack; the
    answer is m + 1, the least n by NormalDist."""
    import numpy as np

    from designer import Mechanism

    identity = Mechanism(np.eye(2), inputs=("yes", "no"), frame=("yes", "no"), focal=[1, 2])
    acc = accuracy_of(identity, "sldp", [null, 1 - null])
    target = power * (1 - 1e-12)
    assert _direct_power(expected - 1, detect, 0.05, null, "greater") < target <= _direct_power(
        expected, detect, 0.05, null, "greater")
    assert power_sample_size(acc, detect, power, 0.05, alternative="greater") == expected


def test_power_arguments_are_refused_in_full_words():
    from designer.exceptions import InvalidArgumentError
    from designer.planning import PlanningError

    acc = _accuracy()
    cases = [
        (dict(groups=2, null=0.5, null_difference=1.5), InvalidArgumentError,
         "null_difference must lie in [-1, 1], got 1.5"),
        (dict(groups=2, null=0.5, null_difference=-1.5), InvalidArgumentError,
         "null_difference must lie in [-1, 1], got -1.5"),
        (dict(groups=1, null=0.5, null_difference=0.1), PlanningError,
         "null_difference is the difference of two groups' shares under the null: give groups=2"),
        (dict(alternative="both"), InvalidArgumentError,
         "alternative must be one of 'two-sided', 'greater', 'less', got 'both'"),
        (dict(groups=2, null_variance="mean"), InvalidArgumentError,
         "null_variance must be one of 'pooled', 'null', got 'mean'"),
        (dict(null=0.3, alternative="less", detect=0.3), PlanningError,
         "the share 0.3 - detect 0.3 leaves (0, 1); detect a smaller difference"),
        (dict(null=0.8, alternative="greater", detect=0.2), PlanningError,
         "the share 0.8 + detect 0.2 leaves (0, 1); detect a smaller difference"),
        (dict(groups=2, null=0.8, null_difference=0.3, alternative="less", detect=0.2), PlanningError,
         "the share 1.1 - detect 0.2 leaves (0, 1); detect a smaller difference"),
    ]
    for kw, error, words in cases:
        detect = kw.pop("detect", 0.1)
        for planner, args in ((power_at, (acc, 100, detect)), (power_sample_size, (acc, detect, 0.8))):
            with pytest.raises(error) as info:
                planner(*args, **kw)
            assert str(info.value) == words, (kw, str(info.value))
    # the second group's null share may be 1 exactly when the alternative is below it
    assert 0 < power_at(acc, 100, 0.1, groups=2, null=0.6, null_difference=0.4, alternative="less") < 1


def test_a_power_curve_is_warners_formula_at_every_n_and_effect(tmp_path, capsys):
    """plan --curve: the power at each n for each difference, from Warner's Eq 1 variance at the null and at the
    alternative (NormalDist, both tails), the row at the planned n equal to power_at_n, and the PNG written."""
    import json
    import math
    from statistics import NormalDist

    from designer.cli import main

    png = tmp_path / "curve.png"
    assert main(["plan", "problems/warner.toml", "--detect", "0.1", "--curve", "100:2100:5", "--curve-detect",
                 "0.05,0.2", "--curve-plot", str(png), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    p = math.e / (1 + math.e)

    def variance(pi: float) -> float:
        return pi * (1 - pi) + p * (1 - p) / (2 * p - 1) ** 2

    z = NormalDist().inv_cdf(0.975)
    rows = out["power_curve"]
    assert [(r["detect"], r["n"]) for r in rows] == [(d, n) for d in (0.1, 0.05, 0.2) for n in (100, 600, 1100, 1600,
                                                                                                 2100)]
    for r in rows:
        s0, s1 = math.sqrt(variance(0.5)), math.sqrt(variance(0.5 + r["detect"]))
        shift = r["detect"] * math.sqrt(r["n"])
        expected = NormalDist().cdf((shift - z * s0) / s1) + NormalDist().cdf((-shift - z * s0) / s1)
        assert r["power"] == pytest.approx(expected, abs=1e-9)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["plan", "problems/warner.toml", "--detect", "0.1", "--curve", str(out["n"]), "--format",
                 "json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["power_curve"][0]["power"] == again["power_at_n"]["power"]
    for argv, words in ((["--detect", "0.1", "--curve-plot", str(tmp_path / "x.png")], "add --curve"),
                        (["--width", "0.05", "--curve", "100,200"], "--curve has no effect on this plan"),
                        (["--detect", "0.1", "--curve", "0:10:3"], "every value must be in [1,"),
                        (["--detect", "0.1", "--curve", "100", "--curve-detect", "1.5"], "--curve-detect")):
        assert main(["plan", "problems/warner.toml", *argv]) == 2
        assert words in capsys.readouterr().err
    assert not (tmp_path / "x.png").exists()
