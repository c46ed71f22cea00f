"""The staircase LP of chi2 under SLDP with its columns priced (designer.optimal.staircase_pricing): the optimum of
the full staircase LP, solved independently by scipy's linprog on the same table, on problems whose optimum needs
columns the first program lacks; the engine's path from 12 inputs."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linprog

from designer import design
from designer._internal.solvers import SolverError, Status, WarmStart
from designer.optimal import DesignProblem
from designer.optimal import staircase_pricing as spr
from designer.optimal.programs import staircase_program


def _problem(seed: int, k: int, structure: dict) -> DesignProblem:
    rng = np.random.default_rng(seed)
    return DesignProblem(inputs=[f"a{i}" for i in range(k)], frame=[f"a{i}" for i in range(k + 1)],
                         prior=rng.dirichlet(np.full(k, 0.5)), epsilon=float(rng.uniform(0.5, 3.0)),
                         semantics="sldp", objective="chi2", **structure)


def _linprog(st) -> float:
    lp = st.lp
    res = linprog(-lp.c, A_ub=lp.A_ub.toarray() if lp.A_ub.shape[0] else None, b_ub=lp.b_ub if lp.b_ub.size else None,
                  A_eq=lp.A_eq.toarray(), b_eq=lp.b_eq, bounds=(0, None), method="highs")
    assert res.status == 0
    return -res.fun


STRUCTURES = [{}, {"dont_know": 0.1}, {"dont_know_max": 0.2}, {"lie_max": 0.7}]


@pytest.mark.parametrize("case", range(len(STRUCTURES)))
@pytest.mark.parametrize("seed", range(2))
def test_priced_columns_reach_the_full_staircase_optimum(case, seed):
    p = _problem(seed, 8, STRUCTURES[case])
    st = staircase_program(p)
    best = _linprog(st)
    start = spr._start(st, p.k)
    first = spr.solve_lp(spr._restricted(st.lp, start))
    assert first.objective < best - 1e-4  # the optimum needs columns the start lacks
    out = spr.solve_staircase_priced(st, p.k)
    assert out.status is Status.OPTIMAL
    assert out.objective == pytest.approx(best, rel=1e-9)
    assert out.z.size == st.lp.n and st.lp.residual(out.z) < 1e-9
    assert float(st.lp.c @ out.z) == pytest.approx(best, rel=1e-9)


def test_no_column_enters_when_the_start_holds_the_optimum():
    """A uniform prior at a large budget: the optimum is k-RR (the one-entry columns), so no column may price in (a
    rule with the sign flipped adds columns here)."""
    k = 6
    p = DesignProblem(inputs=[f"a{i}" for i in range(k)], epsilon=3.0, semantics="sldp", objective="chi2")
    st = staircase_program(p)
    start = spr._start(st, k)
    assert spr.solve_lp(spr._restricted(st.lp, start)).objective == pytest.approx(_linprog(st), rel=1e-9)
    warm = WarmStart()
    spr.solve_staircase_priced(st, k, warm=warm)
    assert np.array_equal(warm.extras[("staircase columns", k, st.lp.n)], start)


def test_a_wrong_dual_is_refused(monkeypatch):
    p = _problem(1, 6, {"lie_max": 0.7})
    st = staircase_program(p)
    real = spr.solve_lp

    def shifted(lp, **kw):
        out = real(lp, **kw)
        return out if out.row_dual is None else spr.replace(out, row_dual=out.row_dual + 0.01)

    monkeypatch.setattr(spr, "solve_lp", shifted)
    with pytest.raises(SolverError, match="do not reproduce"):
        spr.solve_staircase_priced(st, p.k)


def test_the_engine_prices_the_staircase_from_12_inputs_certified():
    p = _problem(4, 12, {"dont_know_max": 0.1})
    result = design(p)
    assert result.path.startswith("staircase LP, columns priced") and result.certificate.method == "exact"
    assert result.solver_objective == pytest.approx(_linprog(staircase_program(p)), rel=1e-9)
    assert "priced" not in design(_problem(4, 11, {})).path


def test_chi2_under_sldp_takes_frames_beyond_16_answers():
    """The staircase's columns are patterns over the inputs, whatever the frame: 18 answers are designed (and the
    optimum is that of the same inputs over a frame of their own answers alone)."""
    rng = np.random.default_rng(2)
    prior = rng.dirichlet(np.ones(3))
    wide = DesignProblem(inputs=["a0", "a1", "a2"], frame=[f"a{i}" for i in range(18)], prior=prior, epsilon=1.0,
                         semantics="sldp", objective="chi2")
    narrow = wide.replace(frame=["a0", "a1", "a2"])
    result = design(wide)
    assert result.certificate.method == "exact" and result.mechanism.l == 18
    assert result.objective_value == pytest.approx(design(narrow).objective_value, rel=1e-9)
