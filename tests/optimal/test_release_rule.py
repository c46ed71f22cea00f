"""The release rule on random problems, against an independent dense LP written with scipy.

For every random problem (k, l <= 4; SLDP, WLDP and both; every objective; random structure) a released
design must be private in exact arithmetic, meet its structure exactly (checked here with fractions, not
with the package's checker), and reach the optimum of an LP written independently (per-pair rows, bel and
pl by enumeration) within 1e-6 relative. Infeasible problems must be infeasible for the independent LP too.
"""

import math
import warnings
from fractions import Fraction
from itertools import product

import numpy as np
import pytest
from scipy.optimize import linprog

import designer as d
from designer.optimal import DesignProblem, design

N_PROBLEMS = 1000
#: The problems are drawn in chunks (one seed each) so that parallel test workers share them.
CHUNKS = 8


def independent_lp(problem: DesignProblem) -> float | None:
    """Optimum of a linear-objective design problem, or None when infeasible (dense, scipy's HiGHS)."""
    k, l = problem.k, problem.l
    sets = [s for s in range(1, 1 << l) if problem.focal_sets is None or s in problem.focal_sets]
    F = len(sets)
    n = k * F
    e = math.exp(min(problem.epsilon, 30.0))
    truth = problem.truth()
    rows, rhs, eq_rows, eq_rhs = [], [], [], []

    def var(x, j):
        return x * F + j

    for x in range(k):
        r = np.zeros(n)
        r[[var(x, j) for j in range(F)]] = 1
        eq_rows.append(r)
        eq_rhs.append(1.0)
    full = (1 << l) - 1
    for x in range(k):
        if problem.dont_know is not None or problem.dont_know_max is not None:
            r = np.zeros(n)
            if full in sets:
                r[var(x, sets.index(full))] = 1
            if problem.dont_know is not None:
                eq_rows.append(r)
                eq_rhs.append(problem.dont_know)
            else:
                rows.append(r)
                rhs.append(problem.dont_know_max)
        if problem.lie_max is not None:
            r = np.zeros(n)
            for j, s in enumerate(sets):
                if not (s >> truth[x]) & 1:
                    r[var(x, j)] = 1
            rows.append(r)
            rhs.append(problem.lie_max)
    pairs = [(x, y) for x in range(k) for y in range(k) if x != y]
    if problem.semantics.value in ("sldp", "both"):
        for (x, y), j in product(pairs, range(F)):
            r = np.zeros(n)
            r[var(x, j)] += 1
            r[var(y, j)] -= e
            rows.append(r)
            rhs.append(0.0)
    if problem.semantics.value in ("wldp", "both") and l > 1:
        for (x, y), E in product(pairs, range(1, full)):
            r = np.zeros(n)
            for j, s in enumerate(sets):
                if s & E:
                    r[var(x, j)] += 1  # pl_x(E)
                if s & ~E & full == 0:
                    r[var(y, j)] -= e  # bel_y(E)
            rows.append(r)
            rhs.append(0.0)
    g = np.zeros((k, F))
    for x, (j, s) in product(range(k), enumerate(sets)):
        if problem.objective.value == "truthful":
            g[x, j] = float(s == 1 << truth[x])
        elif problem.objective.value == "gain":
            g[x, j] = problem.gain[x, s]
        else:
            members = [problem.utility[x, i] for i in range(l) if (s >> i) & 1]
            g[x, j] = min(members) if problem.objective.value == "worst_case_utility" else max(members)
    c = -(problem.prior[:, None] * g).ravel()
    res = linprog(c, A_ub=np.array(rows) if rows else None, b_ub=rhs or None, A_eq=np.array(eq_rows), b_eq=eq_rhs,
                  bounds=(0, None), method="highs")
    return None if res.status == 2 else -res.fun


def lie_masses_exact(mech, problem):
    truth = problem.truth()
    out = []
    for x in range(mech.k):
        lies = [Fraction(float(v)) for v, m in zip(mech.matrix[x], mech.focal) if not (int(m) >> int(truth[x])) & 1]
        out.append(sum(lies, Fraction(0)))
    return out


def random_problem(rng: np.random.Generator) -> DesignProblem:
    k = int(rng.integers(2, 5))
    l = int(rng.integers(max(2, k), 5)) if rng.random() < 0.3 else k
    labels = [f"a{i}" for i in range(l)]
    inputs = tuple(labels[:k])
    semantics = ["sldp", "wldp", "both"][int(rng.integers(3))]
    objective = ["truthful", "gain", "worst_case_utility", "best_case_utility", "chi2"][int(rng.integers(5))]
    prior = rng.dirichlet(np.ones(k)) if rng.random() < 0.5 else None
    eps = float(np.exp(rng.uniform(np.log(0.05), np.log(5.0))))
    kw: dict = {}
    r = rng.random()
    if r < 0.25:
        kw["dont_know"] = float(rng.uniform(0, 0.4))
    elif r < 0.4:
        kw["dont_know_max"] = float(rng.uniform(0, 0.4))
    if rng.random() < 0.3:
        kw["lie_max"] = float(rng.uniform(0, 0.8))
    if rng.random() < 0.2:
        full = (1 << l) - 1
        fam = {1 << i for i in range(l)} | {int(s) for s in rng.integers(1, full + 1, size=3)}
        if "dont_know" in kw:
            fam.add(full)
        kw["focal_sets"] = tuple(sorted(fam))
    if objective == "gain":
        kw["gain"] = rng.uniform(-1, 1, size=(k, 1 << l))
    if objective.endswith("utility"):
        kw["utility"] = rng.uniform(0, 1, size=(k, l))
    if objective == "chi2" and semantics != "sldp":
        kw = {key: v for key, v in kw.items() if key not in ("dont_know", "dont_know_max", "lie_max", "focal_sets")}
    if objective == "gain" and "lie_max" not in kw and rng.random() < 0.5:
        inputs = tuple(f"u{i}" for i in range(k))  # inputs that are not frame labels: no truth, no lambda members
    return DesignProblem(inputs=inputs, frame=tuple(labels), epsilon=eps, semantics=semantics, objective=objective,
                         prior=prior if prior is not None else np.zeros(0), **kw)


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_random_problems_meet_budget_structure_and_optimum(chunk):
    rng = np.random.default_rng([20261122, chunk])
    released = infeasible = refused = outside = 0
    for _ in range(N_PROBLEMS // CHUNKS):
        problem = random_problem(rng)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", d.DesignWarning)
                result = design(problem)
        except d.InfeasibleDesignError:
            infeasible += 1
            if problem.objective.linear:
                assert independent_lp(problem) is None, problem.describe()
            continue
        except d.InvalidProblemError:
            refused += 1  # e.g. chi2 under WLDP needing more outputs than the frame has
            continue
        released += 1
        mech = result.mechanism
        if not set(problem.inputs) <= set(problem.frame):
            outside += 1
            assert result.variance is not None and result.variance_kind != "unavailable", problem.describe()
        for loss in problem.semantics.losses:
            assert d.is_private(mech, problem.epsilon, semantics=loss, exact=True), (problem.describe(), loss)
        if problem.focal_sets is not None:
            assert set(map(int, mech.focal)) <= set(problem.focal_sets), problem.describe()
        full = (1 << problem.l) - 1
        dk = [dict(zip(map(int, mech.focal), row)).get(full, 0.0) for row in mech.matrix]
        if problem.dont_know is not None:
            assert all(v == problem.dont_know for v in dk), problem.describe()
        if problem.dont_know_max is not None:
            assert all(v <= problem.dont_know_max for v in dk), problem.describe()
        if problem.lie_max is not None:
            assert all(v <= Fraction(problem.lie_max) for v in lie_masses_exact(mech, problem)), problem.describe()
        if problem.objective.linear:
            optimum = independent_lp(problem)
            assert optimum is not None, problem.describe()
            floor = optimum - 1e-6 * abs(optimum) - 1e-9  # 1e-6 relative (and the LP's own tolerance)
            assert result.objective_value >= floor, (problem.describe(), result.objective_value, optimum)
    assert released > N_PROBLEMS // (2 * CHUNKS) and infeasible > 0 and outside > 0, (released, infeasible, refused)
