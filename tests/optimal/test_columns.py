"""Column generation (designer.optimal.columns): the answer sets priced from the duals give the full program's
optimum on random problems (every linear objective, every structure), the engine takes that path for frames of
13 answers and more (today's optimum at 13), and designs frames of 20 answers, certified exactly."""

from __future__ import annotations

import numpy as np
import pytest

from designer import design
from designer.optimal import DesignProblem
from designer.optimal import columns as cg
from designer.optimal.lazy import solve_walley_lazily


def _problem(rng: np.random.Generator, k: int, l: int, objective: str, structure: dict) -> DesignProblem:
    kw: dict = dict(inputs=[f"a{i}" for i in range(k)], frame=[f"a{i}" for i in range(l)],
                    prior=rng.dirichlet(np.ones(k)), epsilon=float(rng.uniform(0.4, 2.5)), semantics="wldp",
                    objective=objective, **structure)
    if objective == "gain":
        kw["gain"] = rng.random((k, 1 << l))
    if objective in ("worst_case_utility", "best_case_utility"):
        kw["utility"] = rng.random((k, l))
    return DesignProblem(**kw)


@pytest.mark.parametrize("seed", range(12))
def test_priced_sets_reach_the_full_programs_optimum(seed):
    rng = np.random.default_rng(seed)
    k, l = int(rng.integers(2, 6)), int(rng.integers(3, 8))
    k = min(k, l)
    objective = ["truthful", "gain", "worst_case_utility", "best_case_utility"][seed % 4]
    structure = [{}, {"dont_know": 0.05}, {"dont_know_max": 0.3}, {"lie_max": 0.6}][seed // 4 % 4]
    problem = _problem(rng, k, l, objective, structure)
    full = solve_walley_lazily(problem, None, None)
    found = cg.generate_columns(problem)
    assert found.rows.outcome.status is full.outcome.status
    if full.outcome.status.value == "optimal":
        assert found.rows.outcome.objective == pytest.approx(full.outcome.objective, rel=1e-9, abs=1e-12)
        assert found.family.size <= (1 << l) - 1


@pytest.mark.parametrize("l", [8, 13])
def test_the_engine_prices_sets_from_8_answers_and_keeps_todays_optimum(l):
    rng = np.random.default_rng(4)
    problem = _problem(rng, 3, l, "truthful", {"dont_know_max": 0.2})
    result = design(problem)
    assert "answer sets priced" in result.path and cg.COLUMN_MIN_FRAME == 8
    full = solve_walley_lazily(problem, None, None)
    assert result.solver_objective == pytest.approx(full.outcome.objective, rel=1e-9)
    assert result.certificate.method == "exact"
    below = _problem(np.random.default_rng(4), 3, 7, "truthful", {})
    assert "priced" not in design(below).path


def test_a_frame_of_twenty_answers_is_designed_and_certified():
    """2**20 - 1 candidate sets per input, priced: the released design is certified exactly and is no worse than
    the design on the starting sets alone (singletons, complements, the whole frame)."""
    rng = np.random.default_rng(7)
    problem = _problem(rng, 3, 20, "truthful", {"dont_know_max": 0.1})
    result = design(problem)
    assert "answer sets priced" in result.path and result.certificate.method == "exact"
    assert result.mechanism.l == 20
    from designer import is_private

    assert is_private(result.mechanism, problem.epsilon, semantics="wldp", exact=True)
    seed = solve_walley_lazily(problem.replace(focal_sets=cg._seed(problem)), None, None)
    assert result.solver_objective >= seed.outcome.objective - 1e-12


def test_a_wrong_dual_layout_is_refused_not_trusted(monkeypatch):
    problem = _problem(np.random.default_rng(2), 3, 5, "truthful", {})

    def shifted(problem, rows, sets, superset, table=None):
        return np.zeros((problem.k, sets.size)) + 1.0

    monkeypatch.setattr(cg, "_reduced_costs", shifted)
    with pytest.raises(cg.SolverError, match="do not reproduce the solver's reduced costs"):
        cg.generate_columns(problem)
