"""The route of many inputs (designer/optimal/many_inputs.py, docs/theory.md 5.11) is never worse than k-RR, the
best subset selection or OUE at the problem's prior: their variances are written here from the textbook formulas,
the design's from its own columns (the inverse Fisher information of the shares), with no code of designer's."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import designer
from designer.optimal.many_inputs import balanced_blocks, solve_many_inputs


def _per_item(prior: np.ndarray, p: float, q: float) -> float:
    """Mean variance of the per-item estimators ``(f_x - q)/(p - q)`` of a report holding the truth with
    probability ``p`` and any other item with ``q``, one respondent."""
    P = q + prior * (p - q)
    return float(np.mean(P * (1 - P))) / (p - q) ** 2


def _peers(prior: np.ndarray, eps: float) -> dict[str, float]:
    k, e = prior.size, math.exp(eps)
    out = {"k-RR": _per_item(prior, e / (e + k - 1), 1 / (e + k - 1)),
           "OUE": _per_item(prior, 0.5, 1 / (e + 1))}
    for d in range(1, k):
        total = d * e + k - d
        p = d * e / total
        q = (d * e * (d - 1) / (k - 1) + (k - d) * d / (k - 1)) / total
        out[f"SS d={d}"] = _per_item(prior, p, q)
    return out


def _mle_variance(Q: np.ndarray, prior: np.ndarray) -> float:
    """Mean share variance of the MLE from the mechanism ``Q`` (rows inputs, columns answers), one respondent:
    the inverse Fisher information in the first k - 1 shares, mapped to all k."""
    k = Q.shape[0]
    q = prior @ Q
    T = Q[:-1] - Q[-1:]
    J = (T / q) @ T.T
    B = np.vstack([np.eye(k - 1), -np.ones((1, k - 1))])
    return float(np.trace(B @ np.linalg.solve(J, B.T))) / k


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(k=st.integers(3, 7), eps=st.sampled_from([0.3, 0.7, 1.0, 2.0, 3.5]), seed=st.integers(0, 10**6),
       alpha=st.sampled_from([0.2, 0.5, 2.0, 50.0]))
def test_never_worse_than_krr_subset_selection_or_oue(k, eps, seed, alpha):
    prior = np.maximum(np.random.default_rng(seed).dirichlet(np.full(k, alpha)), 1e-3)
    prior /= prior.sum()
    problem = designer.DesignProblem(inputs=tuple(f"v{i}" for i in range(k)), epsilon=eps, prior=prior)
    sol = solve_many_inputs(problem, target_gap=1e-2, time_budget=0.5)
    cols = sol.columns
    np.testing.assert_allclose(cols.sum(axis=1), 1.0, atol=1e-9)
    assert np.all(cols.max(axis=0) <= math.exp(eps) * cols.min(axis=0) * (1 + 1e-12))
    mine = _mle_variance(cols, prior)
    assert mine == np.float64(sol.value) or abs(mine - sol.value) <= 1e-7 * mine
    for name, figure in _peers(prior, eps).items():
        assert mine <= figure * (1 + 1e-9), name


@settings(max_examples=30, deadline=None)
@given(k=st.integers(2, 40), data=st.data())
def test_balanced_blocks_cover_inputs_and_pairs_equally(k, data):
    m = data.draw(st.integers(1, k - 1))
    out = balanced_blocks(k, m, seed=data.draw(st.integers(0, 100)))
    assert out is not None
    rows, prob = out
    assert rows.shape[1] == k and np.all(rows.sum(axis=1) == m)
    assert np.all(prob >= 0) and abs(prob.sum() - 1) <= 1e-12
    pairs = (rows.T * prob) @ rows.astype(float)
    off = ~np.eye(k, dtype=bool)
    np.testing.assert_allclose(np.diag(pairs), m / k, atol=1e-12)
    np.testing.assert_allclose(pairs[off], m * (m - 1) / (k * (k - 1)), atol=1e-12)


def test_sixty_four_inputs_masks_and_peers():
    # the answer sets of 64 inputs need bit 63 (past int64's sign); one round, then the better of the search and
    # the seeds
    k, eps = 64, 1.0
    raw = 0.9 ** np.arange(k)
    prior = raw / raw.sum()
    problem = designer.DesignProblem(inputs=tuple(f"v{i:02d}" for i in range(k)), epsilon=eps, prior=prior)
    sol = solve_many_inputs(problem, time_budget=0.0)
    sets = [int(s) for s in sol.sets]
    assert all(0 < s < 1 << k for s in sets) and max(sets) >= 1 << 63
    assert len(set(sets)) == len(sets)
    cols = sol.columns
    np.testing.assert_allclose(cols.sum(axis=1), 1.0, atol=1e-9)
    assert np.all(cols.max(axis=0) <= math.exp(eps) * cols.min(axis=0) * (1 + 1e-12))
    # each column is high exactly on the inputs its set holds (the truth of input x is answer x)
    high = np.array([[(s >> x) & 1 for s in sets] for x in range(k)], dtype=bool)
    np.testing.assert_allclose(cols * np.where(high, 1.0, math.exp(eps)), np.broadcast_to(cols.max(axis=0), cols.shape),
                               rtol=1e-9)
    mine = _mle_variance(cols, prior)
    assert abs(mine - sol.value) <= 1e-7 * mine
    peers = _peers(prior, eps)
    assert mine <= min(peers.values()) * (1 + 1e-9)
    assert sol.bound <= mine
