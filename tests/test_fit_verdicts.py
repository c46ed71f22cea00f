"""A boundary fit's survey variances against an independent sandwich, and one verdict for every method
(issue 55 items 1 and 3). The oracle differentiates the log-likelihood numerically in its own coordinates."""

from __future__ import annotations

import numpy as np
import pytest

import designer
from designer.estimation.shares import estimate_sldp
from designer.estimation.survey_design import SurveyCounts, estimate_survey

M = np.array([[0.8, 0.1, 0.1], [0.1, 0.8, 0.1], [0.1, 0.1, 0.8]])


def _mechanism() -> designer.Mechanism:
    return designer.Mechanism(M, inputs=("a", "b", "c"), focal=(1, 2, 4))


def _oracle_se(codes: np.ndarray, weights: np.ndarray, clusters: np.ndarray | None, pi: np.ndarray, kind: str
               ) -> np.ndarray:
    """Free shares b, c (a held at 0): theta = pi_b, pi_c = 1 - theta. Scores and Hessian by central differences."""
    def logp(theta: float) -> np.ndarray:
        return np.log(np.array([0.0, theta, 1 - theta]) @ M)

    theta, h = float(pi[1]), 1e-5
    score = (logp(theta + h) - logp(theta - h)) / (2 * h)  # per answer set
    second = (logp(theta + h) - 2 * logp(theta) + logp(theta - h)) / h**2
    rows = score[codes]
    hessian = -float(np.sum(weights * second[codes]))
    if clusters is not None:
        groups = np.unique(clusters)
        sums = np.array([np.sum(weights[clusters == g] * rows[clusters == g]) for g in groups])
        n = len(codes)
        meat = float(np.sum(sums**2)) * len(groups) / (len(groups) - 1) * (n - 1) / (n - 1)
    else:
        meat = float(np.sum((weights * rows) ** 2))
    var = 1 / meat if kind == "opg" else meat / hessian**2
    return np.array([np.nan, np.sqrt(var), np.sqrt(var)])


def _boundary_rows(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    codes = np.array([0] * 40 + [1] * 560 + [2] * 400)  # 4% 'a' answers: below the 10% lie rate, pi_a = 0
    rng.shuffle(codes)
    return codes, rng.lognormal(0, 0.5, codes.size), rng.integers(0, 25, codes.size)


@pytest.mark.parametrize(("cov", "use_weights", "use_clusters"),
                         [("robust", True, False), ("robust", False, True), ("robust", True, True),
                          ("opg", False, False), ("robust", False, False)])
def test_boundary_sandwich_agrees_with_an_independent_one(cov: str, use_weights: bool, use_clusters: bool) -> None:
    codes, weights, clusters = _boundary_rows(0)
    counts = SurveyCounts.from_rows(3, codes, weights=weights if use_weights else None,
                                    cluster=clusters if use_clusters else None)
    fit = estimate_survey(_mechanism(), counts, cov=cov)
    assert str(fit.status) == "boundary" and fit.estimate[0] == 0.0
    assert "on the free shares (boundary)" in fit.variance
    assert ("opg" in fit.variance or "outer product" in fit.variance) == (cov == "opg")
    scaled = counts.weighted.sum() / weights.sum() if use_weights else 1.0  # weights scaled to mean 1
    expected = _oracle_se(codes, weights * scaled if use_weights else np.ones(codes.size),
                          clusters if use_clusters else None, fit.estimate, cov)
    assert np.isnan(fit.stderr[0])
    np.testing.assert_allclose(fit.stderr[1:], expected[1:], rtol=1e-5)


def test_a_vertex_has_no_sandwich_and_says_why() -> None:
    codes = np.array([0] * 5 + [1] * 90 + [2] * 5)
    fit = estimate_survey(_mechanism(), SurveyCounts.from_rows(3, codes, cluster=np.arange(100) % 10), cov="robust")
    assert str(fit.status) == "boundary" and fit.estimate[1] == 1.0
    assert fit.variance.startswith("none (the maximum is a vertex")
    assert np.all(np.isnan(fit.stderr))


@pytest.mark.parametrize("method", ["em", "convex"])
def test_em_and_convex_give_newtons_verdict_at_a_boundary_maximum(method: str) -> None:
    counts = np.array([40.0, 560.0, 400.0])
    newton = estimate_sldp(_mechanism(), counts)
    other = estimate_sldp(_mechanism(), counts, method=method)
    assert str(newton.status) == "boundary"
    assert other.status == newton.status and other.converged
    assert abs(other.loglik - newton.loglik) <= 1e-8
