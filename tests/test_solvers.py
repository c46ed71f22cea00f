"""The one solver path: statuses, errors, residual check, and every installed solver giving one optimum."""

import importlib.util

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog

import designer as d
from designer._internal.solvers import LinearProgram, SolverError, Status, minimize, require_solution, solve_lp
from designer.exceptions import InvalidArgumentError
from designer.optimal import DesignProblem, design

SOLVERS = ["HIGHS"] + (["CLARABEL"] if importlib.util.find_spec("clarabel") else [])


def lp(c, a_ub, b_ub, *, maximize=True, ub=None):
    n = len(c)
    return LinearProgram(np.array(c, float), sp.csr_matrix(np.array(a_ub, float)), np.array(b_ub, float),
                         sp.csr_matrix((0, n)), np.zeros(0), np.zeros(n),
                         np.full(n, np.inf) if ub is None else np.array(ub, float), maximize=maximize)


@pytest.mark.parametrize("solver", SOLVERS)
def test_statuses(solver):
    ok = solve_lp(lp([1, 1], [[1, 2]], [4]), solver=solver)
    assert ok.status is Status.OPTIMAL and ok.objective == pytest.approx(4.0, abs=1e-7)
    bad = solve_lp(lp([1, 1], [[1, 1], [-1, -1]], [1, -2]), solver=solver)
    assert bad.status is Status.INFEASIBLE and bad.z is None
    assert require_solution(bad) is bad  # infeasible is an answer, not an error
    unbounded = solve_lp(lp([1, 1], [[1, -1]], [1]), solver=solver)
    assert unbounded.status in (Status.UNBOUNDED, Status.INFEASIBLE)


def test_an_iteration_limit_is_a_solver_error_not_infeasibility():
    problem = DesignProblem(objective="truthful", inputs=tuple("abcd"), epsilon=1.0, semantics="wldp")
    with pytest.raises(SolverError, match=r"CLARABEL .*'iteration limit'.*raise the iteration limit.*HIGHS"):
        design(problem, solver="CLARABEL", solver_options={"max_iter": 1})
    with pytest.raises(SolverError, match=r"HIGHS .*'iteration limit'"):
        design(problem, solver_options={"simplex_iteration_limit": 1, "presolve": "off", "solver": "simplex"})


def test_a_misspelled_highs_option_is_refused_with_the_close_names():
    problem = DesignProblem(objective="truthful", inputs=("yes", "no"), epsilon=1.0)
    with pytest.raises(InvalidArgumentError, match=r"'simplex_iteraton_limit' is not a HiGHS option; did you mean "
                                                     r"'simplex_iteration_limit'"):
        design(problem, solver_options={"simplex_iteraton_limit": 10})
    with pytest.raises(InvalidArgumentError, match=r"'presolve': HiGHS refuses the value 3"):
        design(problem, solver_options={"presolve": 3})


def test_sweep_rows_carry_the_solvers_status():
    from designer.optimal.sweep import design_point

    row = design_point(DesignProblem(objective="truthful", inputs=("yes", "no"), epsilon=1.0))
    assert row["status"] == "optimal"


def test_residual_check_refuses_a_point_that_breaks_a_row():
    program = lp([1, 1], [[1, 2]], [4])
    assert program.residual(np.array([4.0, 0.0])) == 0.0
    assert program.residual(np.array([4.1, 0.0])) > 1e-3


def test_minimize_matches_scipy_linprog_on_random_programs():
    rng = np.random.default_rng(7)
    for _ in range(30):
        n, m = int(rng.integers(2, 6)), int(rng.integers(1, 5))
        c = rng.normal(size=n)
        a = rng.normal(size=(m, n))
        b = rng.uniform(0.5, 2, size=m)
        bounds = [(0, 1)] * n
        ours = minimize(c, A_ub=a, b_ub=b, bounds=bounds)
        ref = linprog(c, A_ub=a, b_ub=b, bounds=bounds, method="highs")
        assert ours.status == (0 if ref.status == 0 else 1)
        if ref.status == 0:
            assert ours.fun == pytest.approx(ref.fun, abs=1e-8)


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("problem", [
    DesignProblem(objective="truthful", inputs=("yes", "no"), epsilon=1.0, dont_know=0.2),
    DesignProblem(objective="truthful", inputs=("yes", "no"), epsilon=0.7, semantics="wldp", dont_know=0.1),
    DesignProblem(objective="truthful",
                  inputs=tuple("abc"), epsilon=1.0, semantics="both", prior=[0.5, 0.3, 0.2], lie_max=0.5),
    DesignProblem(inputs=tuple("abcd"), epsilon=1.0, objective="chi2"),
], ids=["gwrr", "wldp-binary", "both-lie", "chi2-4"])
def test_every_installed_solver_gives_the_same_certified_optimum(solver, problem):
    reference = design(problem)
    result = design(problem, solver=solver)
    assert result.objective_value == pytest.approx(reference.objective_value, rel=1e-6, abs=1e-7)
    for loss in problem.semantics.losses:
        assert d.is_private(result.mechanism, problem.epsilon, semantics=loss, exact=True)
