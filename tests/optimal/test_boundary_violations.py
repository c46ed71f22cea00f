"""Every exact checker against inputs that break it by the smallest amount.

Each decision that can release a mechanism is given a case just inside and just outside its budget (1e-12
relative), in every place a check could be skipped: each size class of the compact Shafer check, each
loss of a device certificate under ``both``, the last candidate denominator of the grid bound, and the
rounds of Walley row generation. The expected verdicts come from independent arithmetic: ``Decimal``
exponentials at 50 digits (not :mod:`designer._internal.exact`), Fractions and brute-force enumeration.
"""

from __future__ import annotations

import importlib.util
import math
from decimal import Decimal, getcontext
from fractions import Fraction
from statistics import NormalDist

import numpy as np
import pytest

from designer import Mechanism, eps_walley
from designer.devices.program import certify_counts, grid_bound
from designer.exceptions import CertificationError
from designer.optimal import DesignProblem, compact_exact
from designer.optimal.symmetric import SymmetricMechanism

from .test_release_rule import independent_lp

getcontext().prec = 60
RELATIVE = 1e-12


def _exp(eps: float) -> Decimal:
    return Decimal(eps).exp()


def _at_most_exp(num: Fraction, eps: float) -> bool:
    """``num <= e^eps`` with a 60-digit exponential (the ratios here are 1e-12 away, far above its error)."""
    return Decimal(num.numerator) / Decimal(num.denominator) <= _exp(eps)


# ---------------------------------------------------------------------------- compact Shafer check
def _compact_with_one_bad_class(k: int, s_bad: int, ratio: float, inside: bool) -> SymmetricMechanism:
    """Per-set masses 1 everywhere (ratio 1) but class ``s_bad``, whose per-set ratio a/b (or b/a) is ``ratio``."""
    a = np.ones(k - 1)
    b = np.ones(k - 1)
    if inside:
        a[s_bad - 1] = ratio
    else:
        b[s_bad - 1] = ratio
    A = np.array([a[s - 1] * math.comb(k - 1, s - 1) for s in range(1, k)] + [1.0])
    B = np.array([b[s - 1] * math.comb(k - 1, s) for s in range(1, k)] + [0.0])
    total = A.sum() + B.sum()
    return SymmetricMechanism(tuple(f"v{i}" for i in range(k)), A / total, B / total)


def _brute_shafer_private(mech: SymmetricMechanism, eps: float) -> bool:
    """Def 3.1 over every pair of rows and focal set, by enumeration of the sets, in Fractions."""
    k = mech.k
    for f in range(1, (1 << k) - 1):
        s = f.bit_count()
        per_in = Fraction(float(mech.A[s - 1])) / math.comb(k - 1, s - 1)
        per_out = Fraction(float(mech.B[s - 1])) / math.comb(k - 1, s)
        masses = [per_in if (f >> x) & 1 else per_out for x in range(k)]
        for m1 in masses:
            for m2 in masses:
                if m1 > 0 and (m2 == 0 or not _at_most_exp(m1 / m2, eps)):
                    return False
    return True


@pytest.mark.parametrize("k", [3, 4, 6])
def test_compact_shafer_check_sees_one_class_over_by_1e12(k):
    eps = 1.0
    for s_bad in range(1, k):
        for inside in (True, False):
            for factor, expected in ((1 + 1e-9, False), (1 - 1e-9, True)):
                mech = _compact_with_one_bad_class(k, s_bad, math.e * factor, inside)
                assert _brute_shafer_private(mech, eps) is expected, (s_bad, inside, factor)
                assert compact_exact.shafer_private(mech, eps) is expected, (k, s_bad, inside, factor)
            # and on the stored floats, the budget placed at the class's own ratio +- 1e-12 relative
            mech = _compact_with_one_bad_class(k, s_bad, 2.0, inside)
            loss = math.log(2.0)
            assert compact_exact.shafer_private(mech, loss * (1 + RELATIVE)) is _brute_shafer_private(
                mech, loss * (1 + RELATIVE)) is True
            assert compact_exact.shafer_private(mech, loss * (1 - RELATIVE)) is _brute_shafer_private(
                mech, loss * (1 - RELATIVE)) is False


# ---------------------------------------------------------------------------- device certificate
def _dk_problem(eps: float, semantics: str) -> DesignProblem:
    return DesignProblem(objective="truthful", inputs=("yes", "no"), epsilon=eps, semantics=semantics)


def _counts(problem: DesignProblem, rows: list[dict[int, int]]) -> np.ndarray:
    family = [int(m) for m in problem.family()]
    return np.array([[row.get(m, 0) for m in family] for row in rows], dtype=np.int64)


@pytest.mark.parametrize("semantics", ["sldp", "wldp", "both"])
def test_device_certificate_checks_each_loss_at_the_boundary(semantics):
    """Identical rows (Shafer loss 0) with Walley loss ln 5; then rows whose Shafer loss is ln 2 and Walley ln 3."""
    same = [{1: 1, 2: 1, 3: 4}, {1: 1, 2: 1, 3: 4}]  # {yes}, {no}, {yes,no} out of 6
    for eps, ok_walley in ((math.log(5) * (1 + RELATIVE), True), (math.log(5) * (1 - RELATIVE), False)):
        problem = _dk_problem(eps, semantics)
        counts = _counts(problem, same)
        if semantics == "sldp" or ok_walley:
            certify_counts(problem, counts, 6)
        else:
            with pytest.raises(CertificationError, match="Walley"):
                certify_counts(problem, counts, 6)
    # Shafer loss ln 2 ({yes}: 2 vs 1), Walley loss ln 5 (pl_yes({yes}) = 5/6 over m_no({yes}) = 1/6)
    rows = [{1: 2, 2: 1, 3: 3}, {1: 1, 2: 2, 3: 3}]
    for eps in (math.log(2) * (1 - RELATIVE), math.log(2) * (1 + RELATIVE), math.log(5) * (1 - RELATIVE),
                math.log(5) * (1 + RELATIVE)):
        problem = _dk_problem(eps, semantics)
        counts = _counts(problem, rows)
        shafer_ok = _at_most_exp(Fraction(2), eps)
        walley_ok = _at_most_exp(Fraction(5), eps)
        ok = {"sldp": shafer_ok, "wldp": walley_ok, "both": shafer_ok and walley_ok}[semantics]
        if ok:
            certify_counts(problem, counts, 6)
        else:
            which = "Shafer" if semantics != "wldp" and not shafer_ok else "Walley"
            with pytest.raises(CertificationError, match=f"^the grid design breaks the {which} budget"):
                certify_counts(problem, counts, 6)


# ---------------------------------------------------------------------------- grid bound
def _brute_grid_bound(eps: float, d: int) -> Fraction:
    e = _exp(eps)
    best = Fraction(0)
    for b in range(1, d + 1):
        a = int((e * b).to_integral_value(rounding="ROUND_FLOOR"))
        best = max(best, Fraction(a, b))
    return best


@pytest.mark.parametrize("d", [2, 6, 7, 12, 36, 100])
def test_grid_bound_is_the_best_fraction_up_to_the_full_denominator(d):
    rng = np.random.default_rng(d)
    for eps in [*rng.uniform(0.05, 4.0, size=25), 0.5, 1.0, 2.0]:
        assert grid_bound(float(eps), d) == _brute_grid_bound(float(eps), d)
    # budgets whose best fraction has denominator d itself (a/d in lowest terms, just below e^eps)
    for a in range(d + 1, 3 * d):
        if math.gcd(a, d) != 1:
            continue
        eps = math.log(a / d) * (1 + RELATIVE)
        assert grid_bound(eps, d) == _brute_grid_bound(eps, d) == Fraction(a, d)


# ---------------------------------------------------------------------------- Walley row generation
def _walley_violation(m: np.ndarray, family: np.ndarray, l: int, eps: float) -> float:
    """Largest ``pl_x(E) - e^eps bel_x'(E)`` over ordered pairs and proper events, by enumeration."""
    e = math.exp(eps)
    worst = -math.inf
    full = (1 << l) - 1
    for ev in range(1, full):
        meets = [(int(f) & ev) != 0 for f in family]
        within = [(int(f) & ~ev & full) == 0 for f in family]
        pl = m[:, meets].sum(axis=1)
        bel = m[:, within].sum(axis=1)
        for x in range(m.shape[0]):
            for y in range(m.shape[0]):
                if x != y:
                    worst = max(worst, pl[x] - e * bel[y])
    return worst


def test_row_generation_needs_and_counts_several_rounds():
    """Started from the complements alone, the generator must add singleton rows over two or more rounds
    and end at the optimum of the full program (independent dense LP), every Walley row met."""
    from designer.optimal.lazy import CUT_TOL, solve_walley_lazily

    rng = np.random.default_rng(20261124)
    rounds_seen = []
    for _ in range(6):
        l = 4
        k = int(rng.integers(2, 5))
        labels = tuple(f"a{i}" for i in range(l))
        problem = DesignProblem(inputs=labels[:k], frame=labels, epsilon=float(rng.uniform(0.3, 2.5)),
                                semantics="wldp", objective="gain", gain=rng.uniform(-1, 1, size=(k, 1 << l)))
        full = (1 << l) - 1
        complements = np.array([full ^ (1 << i) for i in range(l)])
        outcome, program, rounds, _rows = solve_walley_lazily(problem, None, None, start=complements)
        rounds_seen.append(rounds)
        m = program.mechanism(outcome.z)
        assert _walley_violation(m, program.family, l, problem.epsilon) <= 10 * CUT_TOL
        assert outcome.objective == pytest.approx(independent_lp(problem), rel=1e-9, abs=1e-10)
        # the default start (with the singletons) needs one round: every other row is implied
        assert solve_walley_lazily(problem, None, None).rounds == 1
    assert min(rounds_seen) >= 2, rounds_seen


def test_walley_loss_is_attained_at_a_singleton():
    """The lemma behind the one-round default: max over events of pl_x(E)/bel_x'(E) sits at a singleton."""
    rng = np.random.default_rng(7)
    for _ in range(40):
        k, l = int(rng.integers(2, 4)), int(rng.integers(2, 5))
        m = rng.random((k, (1 << l) - 1)) * (rng.random((k, (1 << l) - 1)) < 0.6)
        m[:, [(1 << i) - 1 for i in range(l)]] += 0.05  # every singleton has mass: a finite loss
        m /= m.sum(axis=1, keepdims=True)
        mech = Mechanism(np.c_[np.zeros(k), m])
        full = (1 << l) - 1
        single = max(m[x, [f - 1 for f in range(1, full + 1) if f >> i & 1]].sum() / m[y, (1 << i) - 1]
                     for x in range(k) for y in range(k) if x != y for i in range(l))
        assert eps_walley(mech) == pytest.approx(math.log(single), rel=1e-12)


# ---------------------------------------------------------------------------- intervals
@pytest.mark.parametrize("level", [0.8, 0.9, 0.95, 0.99])
def test_estimate_interval_ends_use_the_normal_quantile(level):
    from designer import Q_2x3
    from designer.estimation.shares import estimate_sldp

    mech = Q_2x3(0.6, 0.2)
    est = estimate_sldp(mech, [300, 260, 440], level=level)
    z = NormalDist().inv_cdf(0.5 + level / 2)
    # no clipping may hide a mutant
    assert np.all((est.estimate - z * est.stderr > 0) & (est.estimate + z * est.stderr < 1))
    np.testing.assert_allclose(est.ci_low, est.estimate - z * est.stderr, rtol=1e-12)
    np.testing.assert_allclose(est.ci_high, est.estimate + z * est.stderr, rtol=1e-12)


def test_regression_interval_ends_use_the_normal_quantile():
    import pandas as pd

    from designer import Q_2x3
    from designer.regression import regress

    rng = np.random.default_rng(3)
    n = 3000
    x = rng.normal(size=n)
    truth = rng.random(n) < 1 / (1 + np.exp(-(0.3 + 0.8 * x)))
    mech = Q_2x3(0.6, 0.2)
    rows = np.where(truth, 0, 1)
    draws = np.array([rng.choice(3, p=mech.matrix[r]) for r in rows])
    data = pd.DataFrame({"x": x, "response": [mech.columns[j] for j in draws]})
    for level in (0.9, 0.99):
        fit = regress("response ~ x", data, mech, level=level)
        table = fit.coefficients
        z = NormalDist().inv_cdf(0.5 + level / 2)
        np.testing.assert_allclose(table["ci_low"], table["estimate"] - z * table["stderr"], rtol=1e-10)
        np.testing.assert_allclose(table["ci_high"], table["estimate"] + z * table["stderr"], rtol=1e-10)


# ---------------------------------------------------------------------------- compact structure
def test_compact_structure_check_sees_each_rule_broken_by_the_least():
    """The size-class form against each structure rule, just inside and just outside (compared with a
    reading of the class totals written here)."""
    from designer.optimal.certify import CompactForm
    _compact_structure_ok = CompactForm.structure_ok

    k = 4
    labels = tuple(f"v{i}" for i in range(k))

    def mech(a, b):
        a, b = np.array(a, dtype=float), np.array(b, dtype=float)
        return SymmetricMechanism(labels, a, b)

    singles_and_full = (*[1 << i for i in range(k)], (1 << k) - 1)
    ok_sizes = mech([0.5, 0, 0, 0.2], [0.3, 0, 0, 0])  # sizes 1 and 4
    problem = DesignProblem(objective="truthful", inputs=labels, epsilon=1.0, focal_sets=singles_and_full)
    assert _compact_structure_ok(problem, ok_sizes)
    for s in (2, 3):  # a little mass on a size the problem does not allow, as A or as B
        a, b = [0.5, 0, 0, 0.2], [0.3, 0, 0, 0]
        a[s - 1] = 1e-300
        assert not _compact_structure_ok(problem, mech(a, b)), s
        a[s - 1], b[s - 1] = 0.0, 1e-300
        assert not _compact_structure_ok(problem, mech(a, b)), s
    only_singles = DesignProblem(objective="truthful",
                                 inputs=labels, epsilon=1.0, focal_sets=tuple(1 << i for i in range(k)))
    assert not _compact_structure_ok(only_singles, ok_sizes)  # size 4 used, not allowed
    assert _compact_structure_ok(only_singles, mech([0.7, 0, 0, 0], [0.3, 0, 0, 0]))
    # don't-know mass (the whole frame: A[k-1]), exact and at most
    exact = DesignProblem(objective="truthful", inputs=labels, epsilon=1.0, dont_know=0.2)
    assert _compact_structure_ok(exact, ok_sizes)
    assert not _compact_structure_ok(exact, mech([0.5, 0, 0, math.nextafter(0.2, 1)], [0.3 - 1e-16, 0, 0, 0]))
    assert not _compact_structure_ok(exact, mech([0.5, 0, 0.2, 0], [0.3, 0, 0, 0]))  # mass on size 3, not 4
    at_most = DesignProblem(objective="truthful", inputs=labels, epsilon=1.0, dont_know_max=0.2)
    assert _compact_structure_ok(at_most, ok_sizes)
    assert _compact_structure_ok(at_most, mech([0.6, 0, 0, 0.1], [0.3, 0, 0, 0]))
    assert not _compact_structure_ok(at_most, mech([0.5, 0, 0, math.nextafter(0.2, 1)], [0.3, 0, 0, 0]))
    # lies: the mass of sets without the true answer (B) summed exactly against lie_max
    lies = DesignProblem(objective="truthful", inputs=labels, epsilon=1.0, lie_max=0.3)
    assert _compact_structure_ok(lies, mech([0.75, 0, 0, 0], [0.1, 0.15, 0, 0]))
    assert _compact_structure_ok(lies, mech([0.7, 0, 0, 0], [0.3, 0, 0, 0]))  # exactly at the bound
    # the doubles 0.1 + 0.2 add up to 1.7e-17 more than the double 0.3: refused, as exact arithmetic says
    assert Fraction(0.1) + Fraction(0.2) > Fraction(0.3)
    assert not _compact_structure_ok(lies, mech([0.7, 0, 0, 0], [0.1, 0.2, 0, 0]))


# ---------------------------------------------------------------------------- device grid structure
def test_grid_structure_and_feasibility_at_one_count_over_each_rule():
    """Counts on a 12-outcome device against each structure rule and the grid privacy bound, one count
    inside and one count outside (expected verdicts read off the counts here)."""
    from designer.devices.program import GridProgram

    yes, no, dk = 1, 2, 3  # focal bitmasks {yes}, {no}, {yes,no}
    d = 12

    def counts(problem, rows):
        family = [int(m) for m in problem.family()]
        return np.array([[row.get(m, 0) for m in family] for row in rows], dtype=np.int64)

    exact = DesignProblem(objective="truthful", inputs=("yes", "no"), epsilon=2.0, dont_know=0.25)  # 3 of 12
    g = GridProgram(exact, d)
    good = counts(exact, [{yes: 6, no: 3, dk: 3}, {yes: 3, no: 6, dk: 3}])
    assert g.structure_ok(good) and g.feasible(good)
    assert not g.structure_ok(counts(exact, [{yes: 5, no: 3, dk: 4}, {yes: 3, no: 6, dk: 3}]))  # 4 != 3
    assert not g.structure_ok(counts(exact, [{yes: 6, no: 3, dk: 3}, {yes: 3, no: 5, dk: 3}]))  # row sum 11
    assert not g.structure_ok(counts(exact, [{yes: 10, no: -1, dk: 3}, {yes: 3, no: 6, dk: 3}]))  # negative
    cap = DesignProblem(objective="truthful", inputs=("yes", "no"), epsilon=2.0, dont_know_max=0.25)
    g = GridProgram(cap, d)
    assert g.structure_ok(counts(cap, [{yes: 6, no: 3, dk: 3}, {yes: 4, no: 6, dk: 2}]))
    assert not g.structure_ok(counts(cap, [{yes: 5, no: 3, dk: 4}, {yes: 4, no: 6, dk: 2}]))
    lie = DesignProblem(objective="truthful",
                        inputs=("yes", "no"), epsilon=2.0, lie_max=0.25)  # at most 3 of 12 on sets without the truth
    g = GridProgram(lie, d)
    assert g.structure_ok(counts(lie, [{yes: 6, no: 3, dk: 3}, {yes: 3, no: 6, dk: 3}]))
    assert not g.structure_ok(counts(lie, [{yes: 5, no: 4, dk: 3}, {yes: 3, no: 6, dk: 3}]))  # yes lies 4 times
    assert not g.structure_ok(counts(lie, [{yes: 6, no: 3, dk: 3}, {yes: 4, no: 5, dk: 3}]))  # no lies 4 times
    # privacy on the grid: e^1 lies between 19/7 and 30/11; the best fraction with b <= 12 is 19/7
    for semantics in ("sldp", "wldp", "both"):
        problem = DesignProblem(objective="truthful", inputs=("yes", "no"), epsilon=1.0, semantics=semantics)
        g = GridProgram(problem, d)
        assert g.bound == _brute_grid_bound(1.0, d)
        shafer_edge = counts(problem, [{yes: 8, no: 3, dk: 1}, {yes: 3, no: 8, dk: 1}])  # 8/3 < e, Walley 9/3 > e
        assert g.feasible(shafer_edge) is (semantics == "sldp")
        shafer_over = counts(problem, [{yes: 9, no: 3}, {yes: 3, no: 9}])  # 3 > e
        assert not g.feasible(shafer_over)
        walley_ok = counts(problem, [{yes: 8, no: 4}, {yes: 4, no: 8}])  # 2 <= e for both losses
        assert g.feasible(walley_ok)


def test_row_generation_under_both_semantics_keeps_every_shafer_row():
    """Under `both` the generated program holds every Shafer row from the start and Walley rows as needed: its
    optimum is the full program's (independent dense LP with both families of rows), from either start."""
    from designer.optimal.lazy import solve_walley_lazily

    rng = np.random.default_rng(11)
    for _ in range(5):
        problem = _lazy_problem(rng, "both")
        for start in (None, np.array([15 ^ (1 << i) for i in range(4)])):
            outcome = solve_walley_lazily(problem, None, None, start=start).outcome
            assert outcome.objective == pytest.approx(independent_lp(problem), rel=1e-9, abs=1e-10)


def _lazy_problem(rng, semantics="wldp", **structure):
    l = 4
    k = int(rng.integers(2, 5))
    labels = tuple(f"a{i}" for i in range(l))
    return DesignProblem(inputs=labels[:k], frame=labels, epsilon=float(rng.uniform(0.3, 2.0)), semantics=semantics,
                         objective="gain", gain=rng.uniform(-1, 1, size=(k, 1 << l)), **structure)


def test_row_generation_fails_loudly_at_its_cap(monkeypatch):
    """A generator stopped by its cap with Walley rows still violated must not hand its optimum on."""
    import designer.optimal.lazy as lazy
    from designer.exceptions import SolverError

    problem = _lazy_problem(np.random.default_rng(20261124))
    complements = np.array([15 ^ (1 << i) for i in range(4)])
    rounds = lazy.solve_walley_lazily(problem, None, None, start=complements).rounds
    assert rounds >= 2
    monkeypatch.setattr(lazy, "MAX_ROUNDS", rounds - 1)
    with pytest.raises(SolverError, match=f"cap of {rounds - 1} rounds"):
        lazy.solve_walley_lazily(problem, None, None, start=complements)
    monkeypatch.setattr(lazy, "MAX_ROUNDS", rounds)
    assert lazy.solve_walley_lazily(problem, None, None, start=complements).rounds == rounds


def test_row_generation_adds_the_most_violated_rows_when_many_are(monkeypatch):
    """With room for 2 rows a round, the generator still reaches the full program's optimum."""
    import designer.optimal.lazy as lazy

    monkeypatch.setattr(lazy, "ROWS_PER_ROUND", 2)
    rng = np.random.default_rng(5)
    for _ in range(3):
        problem = _lazy_problem(rng)
        complements = np.array([15 ^ (1 << i) for i in range(4)])
        outcome = lazy.solve_walley_lazily(problem, None, None, start=complements).outcome
        assert outcome.objective == pytest.approx(independent_lp(problem), rel=1e-9, abs=1e-10)


def test_row_generation_keeps_structure_rows_and_passes_solver_and_options():
    """Structure bounds (lying, don't-know) stay in the generated program (optimum of the full program), and the
    solver and its options reach every round: Clarabel is named, an iteration limit of 1 stops HiGHS."""
    from designer._internal.solvers import Status
    from designer.optimal.lazy import solve_walley_lazily

    rng = np.random.default_rng(8)
    for semantics in ("wldp", "both"):
        problem = _lazy_problem(rng, semantics, lie_max=0.3, dont_know_max=0.2)
        outcome = solve_walley_lazily(problem, None, None).outcome
        assert outcome.objective == pytest.approx(independent_lp(problem), rel=1e-9, abs=1e-10)
    problem = _lazy_problem(rng)
    if importlib.util.find_spec("clarabel"):
        assert solve_walley_lazily(problem, "CLARABEL", None).outcome.solver.startswith("CLARABEL")
    limited = solve_walley_lazily(problem, None, {"simplex_iteration_limit": 1, "presolve": "off",
                                                  "solver": "simplex"})[0]
    assert limited.status is Status.ITERATION_LIMIT


def test_a_generated_program_rescales_with_the_budget():
    """The generated program keeps its e^eps coefficients apart, like every design program: at another budget
    its rows are A_fixed + e^eps' A_exp (the Walley rows' e^eps entries change, the others do not)."""
    from designer.optimal.lazy import solve_walley_lazily

    problem = _lazy_problem(np.random.default_rng(3))
    program = solve_walley_lazily(problem, None, None).program
    moved = program.at_epsilon(problem.epsilon + 0.5)
    assert program.A_ub_fixed is not None and program.A_ub_exp is not None and program.A_ub_exp.nnz > 0
    expected = program.A_ub_fixed + math.exp(problem.epsilon + 0.5) * program.A_ub_exp
    assert abs(moved.A_ub - expected).max() < 1e-12 and abs(moved.A_ub - program.A_ub).max() > 0.1


def test_device_certificate_names_a_broken_structure_bound():
    """Private counts (identical rows) whose don't-know count differs from the problem's: refused, in words."""
    problem = DesignProblem(objective="truthful", inputs=("yes", "no"), epsilon=1.0, semantics="both", dont_know=4 / 6)
    counts = _counts(problem, [{1: 2, 2: 2, 3: 2}, {1: 2, 2: 2, 3: 2}])  # 2/6 don't know, the problem says 4/6
    with pytest.raises(CertificationError, match=r"^the grid design breaks a structure constraint of the problem$"):
        certify_counts(problem, counts, 6)


def test_grid_feasibility_checks_structure_and_only_pairs_of_different_inputs():
    """`feasible` refuses counts off the grid's rows whatever their privacy, and under WLDP compares pl of one
    input with bel of *another*: an input whose own pl/bel ratio (9) exceeds the bound (7.9) is fine when every
    cross ratio (at most 7) is within it."""
    from designer.devices.program import GridProgram

    problem = DesignProblem(objective="truthful", inputs=("a", "b"), epsilon=math.log(7.95), semantics="wldp")
    program = GridProgram(problem, 10)
    rows = [{1: 1, 2: 1, 3: 8}, {1: 3, 2: 3, 3: 4}]  # a: pl_a({a}) = 9, bel_a({a}) = 1; b: 7 and 3
    counts = _counts(problem, rows)
    assert program.bound == Fraction(79, 10)
    assert program.feasible(counts)
    short = counts.copy()
    short[0, 0] -= 1  # a row of 9 outcomes out of 10: off the grid, though still private
    assert not program.feasible(short)


@pytest.mark.parametrize("d", [1, 6, 36])
def test_grid_bound_at_huge_budgets_and_a_single_outcome_grid(d):
    """From 40 nats on, no ratio of counts up to d can reach the bound (only "zero follows zero" remains), and a
    grid of one outcome still gets the best fraction with denominator 1."""
    for eps in (40.0, 45.0, 700.0):
        bound = grid_bound(eps, d)
        assert all(Fraction(c1, c2) < bound for c1 in range(d + 1) for c2 in range(1, d + 1))
    assert grid_bound(1.0, d) == _brute_grid_bound(1.0, d)


def test_the_compact_float_filter_is_sound_for_every_error_within_its_band():
    """``float_verdicts`` may be given any floats within a relative FILTER_BAND of the exact beliefs (its
    contract); a plausibility that cancels (``pl`` down to 1e-12 of the total) must keep the margin of both
    terms. Truth: exact Fractions against a 60-digit ``e^eps``, ratios 1e-14 to 1e-6 either side of it."""
    import itertools

    d = compact_exact.FILTER_BAND * (1 - 1e-6)  # within the band after the float rounding of the inputs
    decided = 0
    for eps, total, u, r in itertools.product([0.5, 1.0, 3.0, 10.0], [1.0, 0.37], [0, 1, 3, 6, 9, 12],
                                              [1e-14, 1e-10, 1e-8, 1e-6, -1e-14, -1e-10, -1e-8, -1e-6]):
        t = Fraction(total)
        pl = t / 10**u if u else t / 2
        den = pl / Fraction(_exp(eps) * (1 + Decimal(r)))
        above = not _at_most_exp(pl / den, eps)
        assert above == (r > 0)
        comp = t - pl
        for s_t, s_c, s_d in itertools.product((-1, 0, 1), repeat=3):
            sure_pass, sure_fail = compact_exact.float_verdicts(
                float(t * Fraction(1 + s_t * d)), np.array([float(comp * Fraction(1 + s_c * d))]),
                np.array([float(den * Fraction(1 + s_d * d))]), eps)
            assert not (sure_pass[0] and above), (eps, total, u, r, s_t, s_c, s_d)
            assert not (sure_fail[0] and not above), (eps, total, u, r, s_t, s_c, s_d)
            decided += bool(sure_pass[0] or sure_fail[0])
    assert decided > 1000  # most are decided by the floats: the filter is not vacuous
    # Near the smallest normal numbers the band is nothing and the absolute TINY (products that ran into
    # subnormals) is the whole margin: beliefs a few TINY large, each off by up to TINY (the total is an
    # exactly rounded sum, math.fsum: within the band, with no absolute error).
    tiny, a = Fraction(compact_exact.TINY), 1 - Fraction(1, 10**6)
    for eps, scale, share, r in itertools.product([0.5, 1.0, 3.0], [3, 8, 40], [Fraction(1, 2), Fraction(7, 8)],
                                                  [0.3, 0.05, -0.05, -0.3]):
        t = scale * tiny
        pl = t * share
        den = pl / Fraction(_exp(eps) * (1 + Decimal(r)))
        above = r > 0
        for s_t, s_c, s_d in itertools.product((-1, 0, 1), repeat=3):
            sure_pass, sure_fail = compact_exact.float_verdicts(
                float(t * (1 + s_t * Fraction(d))), np.array([float(t - pl + s_c * a * tiny)]),
                np.array([float(den + s_d * a * tiny)]), eps)
            assert not (sure_pass[0] and above), (eps, scale, share, r, s_t, s_c, s_d)
            assert not (sure_fail[0] and not above), (eps, scale, share, r, s_t, s_c, s_d)
