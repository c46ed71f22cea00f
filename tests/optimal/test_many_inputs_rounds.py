"""Column generation's rounds past 20 inputs (designer/optimal/many_inputs.py, docs/theory.md 5.11): a round's
Newton step solved to a loose tolerance (designer/optimal/dense_qp.py) against an independent quadratic program
(cvxpy), its weights back on the rows exactly (and a don't-know cap kept), the proved gap after a fixed number of
rounds, and the patterns of designs past 63 inputs read off the columns.
"""

from __future__ import annotations

import numpy as np
import pytest

import designer
from designer.optimal.dense_qp import newton_step
from designer.optimal.many_inputs import solve_many_inputs


@pytest.mark.parametrize("seed", [0, 1])
def test_loose_newton_step_reaches_the_quadratic_programs_minimum(seed):
    cp = pytest.importorskip("cvxpy")
    rng = np.random.default_rng(seed)
    n, p = 50, 5
    J = rng.normal(size=(12, n))  # rank 12 < n: a degenerate Hessian, as the rounds' are
    hess, grad = J.T @ J, rng.normal(size=n)
    w = np.where(rng.random(n) < 0.5, rng.random(n), 0.0)
    E = rng.random((p, n))
    e = E @ w
    step = newton_step(hess, grad, w, E, e, np.zeros((0, n)), np.zeros(0), warm=True, tol=1e-8)
    assert step.status == "Solved"
    d = cp.Variable(n)
    program = cp.Problem(cp.Minimize(grad @ d + 0.5 * cp.quad_form(d, cp.psd_wrap(hess))),
                         [E @ (w + d) == e, w + d >= 0])
    program.solve(solver="CLARABEL")
    best = program.value
    model = float(grad @ step.x + step.x @ hess @ step.x / 2)
    assert model == pytest.approx(best, rel=1e-6, abs=1e-7)
    np.testing.assert_allclose(E @ (w + step.x), e, atol=1e-6)
    assert np.all(w + step.x >= -1e-9)


def test_loose_rounds_stay_on_the_rows_and_reach_the_strict_masters_value():
    # a round's step to 1e-8 is put back onto the rows exactly (on its support); many such steps descend to the
    # optimum of the same restricted program as the strict steps (a variance written out here, from the weights)
    from designer.optimal.many_inputs import _pool, _start_weights, _structured
    from designer.optimal.share_variance import pieces
    from designer.optimal.variance_master import _solve_master_newton

    k, eps = 22, 1.0
    raw = 0.8 ** np.arange(k)
    problem = designer.DesignProblem(inputs=[f"v{i}" for i in range(k)], epsilon=eps, prior=raw / raw.sum())
    parts = pieces(problem)
    pool = _pool(problem, _structured(problem))
    index = np.arange(pool.size)
    w = _start_weights(problem, pool)
    for _ in range(12):
        master = _solve_master_newton(problem, parts, pool, index, w, 1, warm=True, tol=1e-8)
        assert master is not None
        w = master.w
        np.testing.assert_allclose(pool.columns() @ w, 1.0, atol=1e-12)
        assert np.all(w >= 0)
    strict = _solve_master_newton(problem, parts, pool, index, w)
    assert strict is not None

    def variance(weights):
        # the mean share variance of the design, from its columns: the inverse information on the simplex
        cols = pool.columns() * weights[None, :]  # P(answer column | input): rows sum to 1
        q = problem.prior @ cols
        keep = q > 0
        info = (cols[:, keep] / q[keep]) @ cols[:, keep].T  # Fisher information of the shares (per respondent)
        basis = np.vstack([np.eye(k - 1), -np.ones((1, k - 1))])  # shares' tangent space
        cov = np.linalg.inv(basis.T @ info @ basis)
        full = basis @ cov @ basis.T
        return float(np.trace(full)) / k

    assert variance(w) == pytest.approx(variance(strict.w), rel=1e-4)
    assert variance(strict.w) <= variance(w) * (1 + 1e-9)


def test_patterns_past_sixty_three_inputs_match_the_columns():
    # an input is high in a column's pattern exactly when the column is high there, and its answer set holds the
    # same inputs: on main the patterns were built with 1 << numpy.int64, which drops every input from the 65th on
    # (a pattern of those alone read as the constant column) and makes the 64th negative
    k = 66
    raw = 0.95 ** np.arange(k)
    problem = designer.DesignProblem(inputs=[f"v{i}" for i in range(k)], epsilon=1.0, prior=raw / raw.sum())
    sol = solve_many_inputs(problem, time_budget=0.2)
    cols = sol.columns
    assert cols.shape[0] == k
    for j in range(cols.shape[1]):
        high = set(np.flatnonzero(cols[:, j] > cols[:, j].min() * (1 + 1e-9)).tolist())
        pattern = int(sol.patterns[j])
        assert pattern >= 0
        assert {x for x in range(k + 8) if (pattern >> x) & 1} == high
        answers = {x for x in range(k + 8) if (int(sol.sets[j]) >> x) & 1}
        assert answers == (high if high else set(range(k)))  # the constant column answers every input's set


def test_twenty_rounds_at_forty_inputs_prove_a_gap_of_four_percent():
    # the search starts from a fresh sample of 4k support patterns a round (not all of them, whose one-flip
    # neighbours crowded the new columns): 20 rounds at k = 40, geometric prior, prove 3.0% (5.2% on main); the
    # bound stays below every closed form written out in tests/optimal/test_many_inputs.py
    import designer.optimal.many_inputs as many
    from tests.optimal.test_many_inputs import _krr_mle, _oue_textbook, _subset_textbook

    k, eps = 40, 1.0
    raw = 0.8 ** np.arange(k)
    prior = raw / raw.sum()
    problem = designer.DesignProblem(inputs=[f"v{i}" for i in range(k)], epsilon=eps, prior=prior)
    rounds, many.MAX_ROUNDS = many.MAX_ROUNDS, 20
    try:  # rounds, not CPU time, end the run: the same design on any machine
        sol = solve_many_inputs(problem, target_gap=1e-9, time_budget=1e6)
    finally:
        many.MAX_ROUNDS = rounds
    figures = [_krr_mle(prior, eps), _oue_textbook(prior, eps), *(_subset_textbook(prior, eps, d) for d in range(1, k))]
    assert 0 < sol.bound <= sol.value <= min(figures)
    assert sol.bound <= min(figures)
    assert (sol.value - sol.bound) / sol.value <= 0.04


def test_loose_rounds_keep_a_dont_know_cap():
    # with an inequality row (at most 0.1 of don't-know) the rounds' steps are solved strictly: the design stays
    # under the cap, its rows sum to 1, and it is no worse than k-RR's MLE (written out in test_many_inputs.py)
    from tests.optimal.test_many_inputs import _krr_mle

    k, eps = 22, 1.0
    raw = 0.8 ** np.arange(k)
    prior = raw / raw.sum()
    problem = designer.DesignProblem(inputs=[f"v{i}" for i in range(k)], epsilon=eps, prior=prior,
                                     dont_know_max=0.1)
    sol = solve_many_inputs(problem, target_gap=0.01, time_budget=3)
    cols = sol.columns
    np.testing.assert_allclose(cols.sum(axis=1), 1.0, atol=1e-9)
    constant = np.ptp(cols, axis=0) <= 1e-12 * cols.max(axis=0)  # the don't-know column: the same for every input
    assert float(cols[0, constant].sum()) <= 0.1 + 1e-12
    assert 0 < sol.bound <= sol.value <= _krr_mle(prior, eps) * (1 + 1e-9)
