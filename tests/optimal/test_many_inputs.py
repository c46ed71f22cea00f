"""Variance designs past 20 inputs (designer/optimal/many_inputs.py, docs/theory.md 5.11): the relaxation's bound
against brute force, the certified bound against an independent reference optimum (small k) and against closed forms
written here (k-RR, subset selection, OUE; large k), and the refusals. Large-k timings are in benchmarks/variance.py.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import designer
from designer.exceptions import InvalidProblemError
from designer.optimal.dense_qp import solve_dense_qp
from designer.optimal.many_inputs import solve_many_inputs
from designer.optimal.pattern_bound import binary_quadratic_bound, exact_shift, lift
from tests.optimal.variance_reference import optimal_variance


# ---------------------------------------------------------------------------- the exact largest price, by brute force
@settings(max_examples=60, deadline=None)
@given(k=st.integers(1, 9), seed=st.integers(0, 10**6), eps=st.sampled_from([0.1, 1.0, 2.0, 5.0]),
       scale=st.sampled_from([1e-6, 1.0, 1e4]), ones=st.booleans())
def test_exact_shift_is_the_least_that_prices_every_pattern_out(k, seed, eps, scale, ones):
    """Every pattern's price ``v'Qv - (a + b pi.v)(a 1.y' + b y'.v)`` at ``y' = y + rho u`` is at most 0 (brute force
    over the 2**k patterns, written here), and ``rho`` is the least such shift but for its rounding margin."""
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(k, max(k - 1, 1))) * scale
    Q = Z @ Z.T
    prior = rng.dirichlet(np.ones(k))
    y = rng.normal(size=k) * scale * scale
    u = np.ones(k) if ones else rng.uniform(0.01, 1.0, k)
    a = math.exp(-eps)
    b = 1.0 - a
    rho = exact_shift(Q, prior, y, u, a, b)

    def largest(shift: float) -> float:
        ys = y + shift * u
        return max(float(v @ Q @ v - (a + b * prior @ v) * (a * ys.sum() + b * ys @ v))
                   for v in map(np.array, itertools.product([0.0, 1.0], repeat=k)))

    assert largest(rho) <= 0.0
    tight = max(0.0, max(float((v @ Q @ v - (a + b * prior @ v) * (a * y.sum() + b * y @ v))
                               / ((a + b * prior @ v) * (a * u.sum() + b * u @ v)))
                         for v in map(np.array, itertools.product([0.0, 1.0], repeat=k))))
    assert rho >= tight
    assert rho - tight <= 1e-9 * max(tight, 1.0) + 1e-9 * (np.abs(Q).sum() + np.abs(y).sum()) / (a * a * u.sum())


@settings(max_examples=25, deadline=None)
@given(k=st.integers(10, 16), seed=st.integers(0, 10**6), eps=st.sampled_from([0.5, 1.0, 2.0, 4.0]),
       prior_kind=st.sampled_from(["flat", "geometric", "dirichlet"]), ones=st.booleans())
def test_the_tree_finds_the_least_shift_of_every_pattern_at_sixteen_inputs(k, seed, eps, prior_kind, ones):
    """Past the tree's first levels (13 inputs enumerated whole, the rest branched on, likeliest first): the shift is
    the largest ratio over all 2**k patterns, computed here by enumerating them as the rows of one matrix."""
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(k, k - 1)) * (0.8 ** np.arange(k))[:, None]
    Q = Z @ Z.T
    prior = {"flat": np.full(k, 1.0 / k), "geometric": 0.8 ** np.arange(k) / (0.8 ** np.arange(k)).sum(),
             "dirichlet": rng.dirichlet(np.full(k, 0.5))}[prior_kind]
    perm = rng.permutation(k)  # the function sorts the inputs itself: hand them over in any order
    Q, prior = Q[np.ix_(perm, perm)], prior[perm]
    y = rng.normal(size=k) * 0.1
    u = np.ones(k) if ones else rng.uniform(0.01, 1.0, k)
    a = math.exp(-eps)
    b = 1.0 - a
    rho = exact_shift(Q, prior, y, u, a, b)
    assert rho is not None
    V = ((np.arange(1 << k)[:, None] >> np.arange(k)) & 1).astype(float)
    p = a + b * V @ prior
    phi = np.einsum("ij,jk,ik->i", V, Q, V) - p * (a * y.sum() + b * V @ y)
    tight = max(0.0, float(np.max(phi / (p * (a * u.sum() + b * V @ u)))))
    margin = 1e-9 * max(tight, 1.0) + 1e-9 * (np.abs(Q).sum() + np.abs(y).sum()) / (a * a * u.sum())
    assert tight <= rho <= tight + margin


def test_a_tree_past_its_work_hands_over_to_the_relaxation(monkeypatch):
    """With no work allowed the tree gives no shift (None) and the certified bound is the relaxation's: still below
    the design's value and above 0; a solve tries each direction's tree once, not at every certificate."""
    import designer.optimal.pattern_bound as pattern_bound

    rng = np.random.default_rng(3)
    Z = rng.normal(size=(8, 7))
    assert exact_shift(Z @ Z.T, np.full(8, 1 / 8), rng.normal(size=8), np.ones(8), 0.3, 0.7) is not None
    monkeypatch.setattr(pattern_bound, "EXACT_WORK", 0.0)
    assert exact_shift(Z @ Z.T, np.full(8, 1 / 8), rng.normal(size=8), np.ones(8), 0.3, 0.7) is None
    import designer.optimal.many_inputs as many_inputs

    calls: list[int] = []

    def counted(*args, **kwargs):
        calls.append(1)
        return pattern_bound.exact_shift(*args, **kwargs)

    monkeypatch.setattr(many_inputs, "exact_shift", counted)
    certified: list[int] = []
    real_bound = many_inputs.certified_bound

    def counted_bound(*args, **kwargs):
        certified.append(1)
        return real_bound(*args, **kwargs)

    monkeypatch.setattr(many_inputs, "certified_bound", counted_bound)
    raw = 0.8 ** np.arange(22)
    sol = solve_many_inputs(_problem(raw / raw.sum(), 2.0, name="geometric-22"), time_budget=5)
    assert 0 < sol.bound <= sol.value
    # a tree that ran out is not run again in the same solve: once per direction, however many certificates
    assert len(certified) >= 2 and len(calls) == 2


# ---------------------------------------------------------------------------- the relaxation, by brute force
@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 8), seed=st.integers(0, 10**6), scale=st.sampled_from([1e-6, 1.0, 1e4]))
def test_binary_quadratic_bound_is_above_the_maximum(n, seed, scale):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n, n)) * scale
    a, a0 = rng.normal(size=n) * scale, float(rng.normal()) * scale
    best = max(np.array(v) @ A @ np.array(v) + a @ np.array(v) + a0 for v in itertools.product([0, 1], repeat=n))
    L = lift(A, a, a0)
    # the lift is exact on every sign vector
    for s in itertools.product([-1, 1], repeat=n + 1):
        s = np.array(s, dtype=float)
        v = (1 + s[0] * s[1:]) / 2
        assert s @ L @ s == pytest.approx(v @ A @ v + a @ v + a0, rel=1e-9, abs=1e-9 * scale)
    bound = binary_quadratic_bound(L)
    assert bound >= best - 1e-9 * scale * (1 + n)
    # and it is a relaxation, not a blind number: within the trivial bound sum |L|
    assert bound <= float(np.abs(L).sum()) * (1 + 1e-6)


def test_dense_qp_against_the_kkt_conditions():
    rng = np.random.default_rng(3)
    n, p, r = 40, 5, 3
    J = rng.normal(size=(20, n))
    K, c = J.T @ J, rng.normal(size=n)
    E, G = rng.random((p, n)), rng.random((r, n))
    e, h = E @ rng.random(n), G @ rng.random(n) + 0.1
    res = solve_dense_qp(K, c, E, e, G, h)
    assert res.converged
    assert np.all(res.x >= -1e-12) and np.all(res.z >= -1e-12) and np.all(res.lam >= -1e-12)
    np.testing.assert_allclose(K @ res.x + c + E.T @ res.y + G.T @ res.lam - res.z, 0, atol=1e-8)
    np.testing.assert_allclose(E @ res.x, e, atol=1e-9)
    assert np.all(G @ res.x <= h + 1e-9)
    assert res.x @ res.z + (h - G @ res.x) @ res.lam <= 1e-8


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_warm_newton_step_reaches_the_cold_steps_minimum(seed):
    # the warm start (near w) changes the interior-point path, not the quadratic program it solves
    from designer.optimal.dense_qp import newton_step

    rng = np.random.default_rng(seed)
    n, p = 60, 6
    J = rng.normal(size=(15, n))  # rank 15 < n: a degenerate Hessian, as the steps' are
    hess, grad = J.T @ J, rng.normal(size=n)
    w = np.where(rng.random(n) < 0.5, rng.random(n), 0.0)
    E = rng.random((p, n))
    e = E @ w
    none = np.zeros((0, n))
    cold = newton_step(hess, grad, w, E, e, none, np.zeros(0))
    warm = newton_step(hess, grad, w, E, e, none, np.zeros(0), warm=True)
    assert cold.status == warm.status == "Solved"

    def model(d):
        return float(grad @ d + d @ hess @ d / 2)

    for step in (cold, warm):
        np.testing.assert_allclose(E @ (w + step.x), e, atol=1e-9)
        assert np.all(w + step.x >= -1e-10)
    assert model(warm.x) == pytest.approx(model(cold.x), rel=1e-7, abs=1e-9)


# ---------------------------------------------------------------------------- against an independent optimum
def _problem(prior, eps, **kw):
    k = len(prior)
    return designer.DesignProblem(inputs=tuple(f"v{i}" for i in range(k)), epsilon=eps, prior=np.asarray(prior), **kw)


priors = st.one_of(
    st.lists(st.floats(0.005, 1.0), min_size=3, max_size=6),  # skewed, near-zero shares
    st.integers(3, 6).map(lambda k: [1.0] * k),  # ties
    st.integers(3, 6).map(lambda k: [0.6 * (k - 1) / 0.4] + [1.0] * (k - 1)),  # one large share, the rest equal
)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raw=priors, eps=st.sampled_from([0.5, 1.0, 2.0, 4.0]))
def test_bound_below_the_reference_optimum_and_value_above(raw, eps):
    prior = np.asarray(raw) / np.sum(raw)
    ref = optimal_variance(prior, eps, "variance").value
    sol = solve_many_inputs(_problem(prior, eps), target_gap=1e-4, time_budget=20)
    assert sol.bound <= ref * (1 + 1e-9)
    assert sol.value >= ref * (1 - 1e-9)
    assert sol.value - sol.bound <= max(1e-4 * sol.value, sol.gap * sol.value + 1e-12)
    # the columns are an eps-SLDP mechanism whose rows sum to 1
    cols = sol.columns
    np.testing.assert_allclose(cols.sum(axis=1), 1.0, atol=1e-9)
    assert np.all(cols.max(axis=0) <= math.exp(eps) * cols.min(axis=0) * (1 + 1e-12))


# ---------------------------------------------------------------------------- many inputs: closed forms
def _krr_mle(prior, eps):
    """Mean share variance of k-RR's MLE, per respondent, written out (Kairouz et al. 2016)."""
    k, e = len(prior), math.exp(eps)
    p, q = e / (e + k - 1), 1 / (e + k - 1)
    P = q + prior * (p - q)
    return float(np.mean(P * (1 - P) / (p - q) ** 2))


def _oue_textbook(prior, eps):
    """OUE's per-item estimator (Wang et al. 2017): p = 1/2, q = 1/(e + 1)."""
    p, q = 0.5, 1 / (math.exp(eps) + 1)
    P = q + prior * (p - q)
    return float(np.mean(P * (1 - P) / (p - q) ** 2))


def _subset_textbook(prior, eps, d):
    """d-subset selection's per-item estimator (Ye and Barg 2018; Wang et al. 2016)."""
    k, e = len(prior), math.exp(eps)
    total = d * e + k - d
    p = d * e / total  # P(x in the report | truth x)
    q = (d * e * (d - 1) / (k - 1) + (k - d) * d / (k - 1)) / total  # P(x in the report | truth not x)
    P = q + prior * (p - q)
    return float(np.mean(P * (1 - P) / (p - q) ** 2))


@pytest.mark.parametrize("kind", ["geometric", "one-large"])
def test_twenty_two_inputs_beat_krr_and_bound_every_closed_form(kind):
    k, eps = 22, 1.0
    raw = 0.8 ** np.arange(k) if kind == "geometric" else np.r_[0.6 * (k - 1) / 0.4, np.ones(k - 1)]
    prior = raw / raw.sum()
    sol = solve_many_inputs(_problem(prior, eps), target_gap=0.05, time_budget=4)
    krr = _krr_mle(prior, eps)
    assert sol.value <= krr * (1 + 1e-9)  # k-RR is the start, and the masters only descend
    assert sol.bound <= sol.value
    assert math.isfinite(sol.bound) and sol.bound > 0
    for figure in (krr, _oue_textbook(prior, eps), *(_subset_textbook(prior, eps, d) for d in range(1, k))):
        assert sol.bound <= figure  # the bound holds over every eps-SLDP mechanism


def test_design_past_twenty_inputs_is_certified_and_states_its_gap():
    k = 21
    raw = 1.0 / np.arange(1, k + 1)
    problem = _problem(raw / raw.sum(), 2.0, name="zipf-21")
    import designer.optimal.many_inputs as many

    budget, many.TIME_BUDGET = many.TIME_BUDGET, 3.0
    try:
        result = designer.design(problem)
    finally:
        many.TIME_BUDGET = budget
    assert result.certificate.arithmetic == "rational arithmetic"
    assert result.eps_shafer <= 2.0 + 1e-12
    assert result.bound is not None and result.bound <= result.variance
    assert result.optimality_gap == pytest.approx((result.variance - result.bound) / result.variance)
    expected = designer.FitStatus.OPTIMAL if result.optimality_gap <= 1e-6 else designer.FitStatus.LOCAL
    assert result.status == expected
    assert result.variance <= _krr_mle(problem.prior, 2.0) * (1 + 1e-6)


@pytest.mark.parametrize("kw", [{"objective": "max_variance"}, {"lie_max": 0.5}])
def test_past_twenty_inputs_what_is_not_designed_is_refused(kw):
    raw = np.arange(1, 23, dtype=float)
    with pytest.raises(InvalidProblemError, match="past 20 inputs"):
        designer.design(_problem(raw / raw.sum(), 1.0, **kw))


# ---------------------------------------------------------------------------- the bound's scaling, the seeds
def test_bound_is_invariant_to_rescaling_the_point_and_never_negative():
    # the reduced price is homogeneous of degree 2 in (Y, y'): the bound maximised over t of 2 t tr(Y'R) - t^2 c
    # is the same from (Y, y) as from (s Y, s^2 y); the plain bound 2 tr(Y'R) - c from the rescaled point is not
    # (at s = 3 it is negative, below the trivial 0)
    import designer.optimal.many_inputs as many

    k, eps = 22, 1.0
    raw = 1.0 / np.arange(1, k + 1)
    problem = _problem(raw / raw.sum(), eps)
    seen = []
    real = many.certified_bound

    def spy(problem, parts, pool, master, **kwargs):
        seen.append((parts, pool, master))
        return real(problem, parts, pool, master, **kwargs)

    many.certified_bound = spy
    try:
        solve_many_inputs(problem, target_gap=0.05, time_budget=2)
    finally:
        many.certified_bound = real
    parts, pool, master = seen[-1]
    reference = real(problem, parts, pool, master)
    assert reference > 0
    for s in (0.25, 3.0):
        moved = type(master)(master.w, master.y_eq * s * s, master.y_dk_max * s * s, master.y_lie, master.mu,
                             master.status, [master.Y[0] * s])
        assert real(problem, parts, pool, moved) == pytest.approx(reference, rel=1e-3)
    # the unscaled bound at s = 3: 2 s tr(Y'R) - s^2 c, with c from the reference point (c >= tr(Y'R) > 0)
    a = float(np.sum(master.Y[0] * parts.R[0]))
    assert 6 * a - 9 * (a * a / (reference * pool.kappa)) < 0 < reference


@pytest.mark.parametrize("kind", ["zipf", "one-large"])
def test_twenty_four_inputs_never_worse_than_the_best_subset_selection(kind):
    # the design past 20 inputs starts no worse than subset selection at its best size (and OUE, k-RR), and a short
    # run already improves on it with a positive bound below every closed form
    k, eps = 24, 1.0
    raw = 1.0 / np.arange(1, k + 1) if kind == "zipf" else np.r_[0.6 * (k - 1) / 0.4, np.ones(k - 1)]
    prior = raw / raw.sum()
    sol = solve_many_inputs(_problem(prior, eps), target_gap=0.01, time_budget=1.5)
    figures = [_krr_mle(prior, eps), _oue_textbook(prior, eps), *(_subset_textbook(prior, eps, d) for d in range(1, k))]
    assert sol.value <= min(figures) * (1 - 1e-3)
    assert 0 < sol.bound <= sol.value
    assert all(sol.bound <= f for f in figures)
    cols = sol.columns
    np.testing.assert_allclose(cols.sum(axis=1), 1.0, atol=1e-9)
    assert np.all(cols.max(axis=0) <= math.exp(eps) * cols.min(axis=0) * (1 + 1e-12))


def test_design_past_twenty_inputs_certifies_its_first_solve():
    # no column of residue mass (its low entries would be cleaned to 0, an infinite ratio): the first answer is
    # released (at most a repair within the objective's tolerance), not re-solved inside the budget
    import designer.optimal.many_inputs as many
    import designer.optimal.solve_steps as steps

    k = 32
    raw = 1.0 / np.arange(1, k + 1)
    problem = _problem(raw / raw.sum(), 1.0, name="zipf-32")
    calls = []
    real = steps.solve_many_inputs

    def counted(p, **kw):
        calls.append(p.epsilon)
        return real(p, **kw)

    budget, many.TIME_BUDGET = many.TIME_BUDGET, 20.0
    steps.solve_many_inputs = counted
    try:
        result = designer.design(problem)
    finally:
        steps.solve_many_inputs, many.TIME_BUDGET = real, budget
    assert calls == [1.0]
    assert result.certificate.arithmetic == "rational arithmetic"
    assert result.variance <= 3.4573  # the best subset selection's textbook variance
    assert result.bound is not None and 0 < result.bound <= result.variance
