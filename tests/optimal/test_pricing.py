"""Pricing answer sets under every semantics (designer.optimal.columns, docs/pricing.md).

Every problem here needs answer sets that the first program does not hold (asserted: the first program's optimum
is below the full one), so a pricing rule with a wrong sign, a wrong envelope factor or a wrong dual stops short of
the optimum and the comparison fails. The optimum is an independent dense LP written here (scipy's linprog:
pairwise Shafer rows ``M[x, S] <= e^eps M[x', S]`` instead of the library's envelopes, every Walley row through a
dense inclusion matrix instead of row generation, the objective's table computed here).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.optimize import linprog

from designer import design
from designer._internal.solvers import SolverError, Status, WarmStart, solve_lp
from designer.optimal import DesignProblem
from designer.optimal import columns as cg
from designer.optimal.programs import linear_program

SEMANTICS = ("sldp", "both", "wldp")
OBJECTIVES = ("truthful", "gain", "worst_case_utility", "best_case_utility")


def dense_optimum(p: DesignProblem) -> float | None:
    """The optimum of ``p``'s design LP over every allowed set, written densely (None when infeasible)."""
    k, l = p.k, p.l
    full = (1 << l) - 1
    sets = np.arange(1, full + 1) if p.focal_sets is None else np.array(p.focal_sets)
    F = sets.size
    member = (sets[:, None] >> np.arange(l)[None, :]) & 1  # (F, l)
    truth = [p.frame.index(name) for name in p.inputs] if p.objective.value == "truthful" or p.lie_max is not None \
        else None
    if p.objective.value == "truthful":
        table = np.array([[1.0 if s == 1 << truth[x] else 0.0 for s in sets] for x in range(k)])
    elif p.objective.value == "gain":
        table = np.asarray(p.gain)[:, sets]
    else:
        u = np.asarray(p.utility)
        pick = np.min if p.objective.value == "worst_case_utility" else np.max
        table = np.array([[pick(u[x][member[j] == 1]) for j in range(F)] for x in range(k)])
    c = -(np.asarray(p.prior)[:, None] * table).ravel()
    e = math.exp(p.epsilon)

    def var(x: int, j: int) -> int:
        return x * F + j

    a_eq, b_eq, a_ub, b_ub = [], [], [], []
    for x in range(k):
        row = np.zeros(k * F)
        row[x * F:(x + 1) * F] = 1
        a_eq.append(row)
        b_eq.append(1.0)
    jf = np.flatnonzero(sets == full)
    for x in range(k):
        if p.dont_know is not None or p.dont_know_max is not None:
            row = np.zeros(k * F)
            if jf.size:
                row[var(x, jf[0])] = 1
            (a_eq if p.dont_know is not None else a_ub).append(row)
            (b_eq if p.dont_know is not None else b_ub).append(p.dont_know if p.dont_know is not None
                                                               else p.dont_know_max)
        if p.lie_max is not None:
            row = np.zeros(k * F)
            for j in range(F):
                if not member[j, truth[x]]:
                    row[var(x, j)] = 1
            a_ub.append(row)
            b_ub.append(p.lie_max)
    pairs = [(x, y) for x, y in itertools.product(range(k), repeat=2) if x != y]
    if p.semantics.value in ("sldp", "both"):
        for (x, y), j in itertools.product(pairs, range(F)):
            row = np.zeros(k * F)
            row[var(x, j)], row[var(y, j)] = 1, -e
            a_ub.append(row)
            b_ub.append(0.0)
    if p.semantics.value in ("wldp", "both"):
        for (x, y), event in itertools.product(pairs, range(1, full)):
            row = np.zeros(k * F)  # -bel_x(E^c) - e bel_y(E) <= -1
            for j, s in enumerate(sets):
                if s & event == 0:
                    row[var(x, j)] -= 1
                if s & ~event == 0:
                    row[var(y, j)] -= e
            a_ub.append(row)
            b_ub.append(-1.0)
    res = linprog(c, A_ub=np.array(a_ub) if a_ub else None, b_ub=b_ub or None, A_eq=np.array(a_eq), b_eq=b_eq,
                  bounds=(0, None), method="highs")
    return None if res.status == 2 else -res.fun


def _problem(seed: int, semantics: str, objective: str, structure: dict, k: int, l: int) -> DesignProblem:
    rng = np.random.default_rng(seed)
    kw: dict = dict(inputs=[f"a{i}" for i in range(k)], frame=[f"a{i}" for i in range(l)],
                    prior=rng.dirichlet(np.ones(k)), epsilon=float(rng.uniform(0.4, 2.5)), semantics=semantics,
                    objective=objective, **structure)
    if objective == "gain":
        kw["gain"] = rng.random((k, 1 << l))
    if objective.endswith("utility"):  # the true answer is the most useful one
        utility = 0.8 * rng.random((k, l))
        utility[np.arange(k), np.arange(k)] = 1.0
        kw["utility"] = utility
    return DesignProblem(**kw)


def _start_value(p: DesignProblem, start: np.ndarray) -> float:
    out = cg._solve_master(p, start, None, None).outcome
    return -math.inf if out.objective is None else out.objective


# A first program without the first input's true answer (under a lying bound, which needs it, without its
# singleton): the sets holding it must be priced in (every objective rewards reporting it), under every semantics.
# (Walley with a lying bound or a fixed don't-know mass needs every singleton at once, and the best case of a set
# that holds every true answer is already the best under a lying bound: the focal-set cases below.)
STRUCTURES = ({}, {"dont_know_max": 0.2}, {"lie_max": 0.3}, {"dont_know": 0.1})
CASES = [(sem, obj, s) for sem in SEMANTICS for obj in OBJECTIVES for s in range(len(STRUCTURES))
         if (sem == "sldp" or s < 2) and (sem, obj, s) != ("sldp", "best_case_utility", 2)]


@pytest.mark.parametrize(("semantics", "objective", "case"), CASES)
def test_sets_missing_from_the_start_are_priced_in(monkeypatch, semantics, objective, case):
    k, l = 3, 4 + case % 2
    p = _problem(100 + case + 7 * OBJECTIVES.index(objective), semantics, objective, STRUCTURES[case], k, l)
    t0, full = 1 << int(p.truth()[0]), (1 << l) - 1
    default = cg._seed

    def without_first_truth(problem, start=None):
        seed = default(problem, start)
        if problem.lie_max is not None:
            return seed[seed != t0]
        return seed[((seed & t0) == 0) | (seed == full)] if problem.dont_know else seed[(seed & t0) == 0]

    monkeypatch.setattr(cg, "_seed", without_first_truth)
    best = dense_optimum(p)
    assert best is not None
    assert _start_value(p, without_first_truth(p)) < best - 1e-4  # the optimum needs sets the start lacks
    found = cg.generate_columns(p)
    assert found.rows.outcome.status is Status.OPTIMAL and found.rounds >= 2
    assert found.rows.outcome.objective == pytest.approx(best, rel=1e-9, abs=1e-10)


def _restricted(seed: int, semantics: str, objective: str) -> DesignProblem:
    """Allowed sets: the singletons, the whole frame and about half of the others, never a complement of a
    singleton; the don't-know mass or the lies bounded (cases by seed)."""
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 5))
    l = int(rng.integers(max(k, 4), 7))
    full = (1 << l) - 1
    singles = [1 << i for i in range(l)]
    others = [m for m in range(1, full) if m not in singles and full ^ m not in singles and rng.random() < 0.6]
    structure: dict = {"focal_sets": tuple(sorted({*singles, full, *others}))}
    match seed % 4:
        case 0:
            structure["dont_know_max"] = 0.0
        case 1:
            structure.update(dont_know=0.0, lie_max=float(rng.uniform(0.05, 0.3)))
        case 2:
            structure.update(dont_know_max=float(rng.uniform(0, 0.1)), lie_max=float(rng.uniform(0.05, 0.3)))
        case _:
            structure["lie_max"] = float(rng.uniform(0.0, 0.2))
    kw: dict = dict(inputs=[f"a{i}" for i in range(k)], frame=[f"a{i}" for i in range(l)],
                    prior=rng.dirichlet(np.ones(k)), epsilon=float(rng.uniform(0.4, 2.5)), semantics=semantics,
                    objective=objective, **structure)
    if objective == "gain":
        kw["gain"] = rng.random((k, 1 << l))
    if objective.endswith("utility"):
        kw["utility"] = rng.random((k, l))
    return DesignProblem(**kw)


# Focal-set limits with the engine's own start (the problems whose optimum needs priced sets, found by a search)
RESTRICTED = [("sldp", "gain", 0), ("sldp", "gain", 1), ("sldp", "worst_case_utility", 5),
              ("sldp", "worst_case_utility", 7), ("sldp", "best_case_utility", 0), ("sldp", "best_case_utility", 1),
              ("both", "gain", 20), ("both", "gain", 21), ("both", "best_case_utility", 21),
              ("both", "best_case_utility", 25), ("wldp", "gain", 4), ("wldp", "gain", 20),
              ("wldp", "best_case_utility", 21), ("wldp", "best_case_utility", 34)]


@pytest.mark.parametrize(("semantics", "objective", "seed"), RESTRICTED)
def test_focal_set_limits_with_the_default_start(semantics, objective, seed):
    p = _restricted(seed, semantics, objective)
    best = dense_optimum(p)
    assert best is not None
    assert _start_value(p, cg._seed(p)) < best - 1e-3
    found = cg.generate_columns(p)
    assert found.rows.outcome.objective == pytest.approx(best, rel=1e-9, abs=1e-10)
    assert set(found.family.tolist()) <= set(p.focal_sets)


@pytest.mark.parametrize("semantics", SEMANTICS)
@pytest.mark.parametrize("structure", [{}, {"dont_know_max": 0.3}, {"lie_max": 0.6}])
def test_random_gains_on_every_set_reach_the_full_program(semantics, structure):
    """Gains on every set (seed 5, found by a search): the engine's own start misses sets the optimum needs."""
    p = _problem(5, semantics, "gain", structure, 3, 5)
    best = dense_optimum(p)
    assert best is not None
    assert _start_value(p, cg._seed(p)) < best - 1e-4
    assert cg.generate_columns(p).rows.outcome.objective == pytest.approx(best, rel=1e-9, abs=1e-10)


def test_set_prices_are_the_best_vertex_of_the_shafer_box():
    """``r(S)`` against brute force over the vertices ``{1, e}^k`` (the box's minimum sits at a vertex)."""
    rng = np.random.default_rng(3)
    for _ in range(50):
        k, e = int(rng.integers(1, 6)), float(np.exp(rng.uniform(0, 3)))
        d = rng.normal(size=(k, 4))
        vertices = np.array(list(itertools.product((1.0, e), repeat=k)))  # (2**k, k)
        assert np.allclose(cg.set_prices(d, e), (vertices @ d).min(axis=0), rtol=0, atol=1e-12)


def test_a_wrong_shafer_dual_layout_is_refused(monkeypatch):
    """The envelope rows' duals are added back before comparing with HiGHS: a program that says they sit one row
    lower than they do is refused, not priced."""
    p = _problem(5, "sldp", "gain", {}, 3, 4)

    def shifted(problem, **kw):
        program = linear_program(problem, **kw)
        program.shafer_start += 1
        return program

    monkeypatch.setattr(cg, "linear_program", shifted)
    with pytest.raises(SolverError, match="do not reproduce the solver's reduced costs"):
        cg.generate_columns(p)


@pytest.mark.parametrize("semantics", ["sldp", "both"])
def test_the_engine_prices_from_8_answers_certified_and_equal_to_the_full_program(semantics):
    rng = np.random.default_rng(11)
    k, l = 3, 13
    p = DesignProblem(inputs=[f"a{i}" for i in range(k)], frame=[f"a{i}" for i in range(l)],
                      prior=rng.dirichlet(np.ones(k)), epsilon=1.0, semantics=semantics,
                      objective="worst_case_utility", utility=rng.random((k, l)), dont_know_max=0.05)
    result = design(p)
    assert "answer sets priced" in result.path and result.certificate.method == "exact"
    if semantics == "sldp":
        full = solve_lp(linear_program(p)).objective
    else:
        from designer.optimal.lazy import solve_walley_lazily

        full = solve_walley_lazily(p, None, None).outcome.objective
    assert result.solver_objective == pytest.approx(full, rel=1e-9)
    assert result.objective_value == pytest.approx(full, rel=1e-6)
    below = p.replace(frame=p.frame[:7], utility=p.utility[:, :7])
    assert "priced" not in design(below).path


def test_a_frame_of_twenty_answers_under_sldp_is_designed_and_certified():
    rng = np.random.default_rng(7)
    p = DesignProblem(inputs=["a0", "a1", "a2"], frame=[f"a{i}" for i in range(20)], prior=rng.dirichlet(np.ones(3)),
                      epsilon=1.0, semantics="sldp", objective="truthful", lie_max=0.5)
    result = design(p)
    assert "answer sets priced" in result.path and result.certificate.method == "exact"
    from designer import is_private

    assert is_private(result.mechanism, p.epsilon, semantics="sldp", exact=True)


def test_a_warm_session_starts_the_next_budget_from_the_last_sets():
    p = _problem(1, "sldp", "gain", {}, 3, 5)
    warm = WarmStart()
    first = cg.generate_columns(p, warm=warm)
    kept = warm.extras[cg._warm_key(p)]
    assert np.array_equal(kept, first.family)
    nxt = p.replace(epsilon=p.epsilon * 1.1)
    again = cg.generate_columns(nxt, warm=warm)
    assert set(kept.tolist()) <= set(cg._seed(nxt, kept).tolist())
    assert again.rows.outcome.objective == pytest.approx(dense_optimum(nxt), rel=1e-9, abs=1e-10)


@pytest.mark.parametrize("semantics", SEMANTICS)
@pytest.mark.parametrize("structure", [{}, {"dont_know_max": 0.2}])
def test_no_set_enters_when_the_start_holds_the_optimum(semantics, structure):
    """The truthful optimum uses the true answers' singletons and sets of the start only: no set may price in (a
    rule that lets in sets of positive price, or of a negative cost for one input alone, adds sets here)."""
    p = _problem(3, semantics, "truthful", structure, 3, 6)
    assert _start_value(p, cg._seed(p)) == pytest.approx(dense_optimum(p), rel=1e-9)
    found = cg.generate_columns(p)
    assert found.rounds == 1 and np.array_equal(found.family, cg._seed(p))


@pytest.mark.parametrize("semantics", SEMANTICS)
@pytest.mark.parametrize("bound", ["dont_know_max", "lie_max", "dont_know"])
def test_binding_structure_rows_are_priced_with_their_duals(semantics, bound):
    """Gains that pull mass onto the whole frame (or onto lies) beyond its bound: the bound's row binds with a
    nonzero dual, which the prices must subtract (a wrong sign there fails the check against HiGHS or the
    optimum)."""
    rng = np.random.default_rng(8)
    k, l = 3, 5
    full = (1 << l) - 1
    gain = rng.random((k, 1 << l))
    sets = np.arange(1 << l)
    if bound == "lie_max":
        gain[(sets[None, :] >> np.arange(k)[:, None]) & 1 == 0] += 1.0  # every lie pays
    else:
        gain[:, full] += 1.0 if bound == "dont_know_max" else -1.0
    p = DesignProblem(inputs=[f"a{i}" for i in range(k)], frame=[f"a{i}" for i in range(l)],
                      prior=rng.dirichlet(np.ones(k)), epsilon=1.2, semantics=semantics, objective="gain", gain=gain,
                      **{bound: 0.6 if bound == "lie_max" else 0.25})
    found = cg.generate_columns(p)
    rows = found.rows
    side, span = rows.program.bound_rows[bound]
    duals = rows.outcome.row_dual[span] if side == "ub" else rows.outcome.row_dual[rows.program.A_ub.shape[0]:][span]
    assert np.abs(duals).max() > 1e-3
    assert found.rows.outcome.objective == pytest.approx(dense_optimum(p), rel=1e-9, abs=1e-10)


def test_a_warm_sweep_over_budgets_gives_the_cold_designs():
    """design() with one session over three budgets (as sweep and compare run them) against fresh designs."""
    rng = np.random.default_rng(12)
    k, l = 3, 13
    p = DesignProblem(inputs=[f"a{i}" for i in range(k)], frame=[f"a{i}" for i in range(l)],
                      prior=rng.dirichlet(np.ones(k)), epsilon=1.0, semantics="sldp", objective="worst_case_utility",
                      utility=rng.random((k, l)), dont_know_max=0.05)
    warm = WarmStart()
    for eps in (0.5, 1.0, 2.0):
        hot, cold = design(p.replace(epsilon=eps), warm=warm), design(p.replace(epsilon=eps))
        assert "answer sets priced" in hot.path and hot.certificate.method == "exact"
        assert hot.solver_objective == pytest.approx(cold.solver_objective, rel=1e-9)
    assert cg._warm_key(p) in warm.extras


@pytest.mark.parametrize("objective", OBJECTIVES)
def test_the_objective_table_is_the_objective_matrix(objective):
    """The table priced from (built one answer at a time) against the objective of each set computed directly."""
    p = _problem(4, "sldp", objective, {}, 4, 7)
    sets = np.arange(1, 1 << p.l)
    from designer.optimal.objectives import objective_matrix

    assert np.array_equal(cg.objective_table(p)[:, sets], objective_matrix(p, sets))
    assert np.all(cg.objective_table(p)[:, 0] == 0)
