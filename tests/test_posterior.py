"""The small-sample estimator (designer/estimation/posterior.py) against the posterior computed here by quadrature:
the density ``prod_x pi_x^(alpha - 1) prod_E (sum_x pi_x M[x, E])^c_E`` on a fine grid of the simplex (two and
three inputs), its mean and equal-tailed quantiles. No code shared with designer."""

import numpy as np
import pytest

from designer.estimation.posterior import posterior_shares
from designer.exceptions import InvalidArgumentError

WARNER = np.array([[0.75, 0.25], [0.25, 0.75]])
#: three inputs, three answers and a "don't know" pair set
THREE = np.array([[0.6, 0.1, 0.1, 0.2], [0.1, 0.6, 0.1, 0.2], [0.1, 0.1, 0.6, 0.2]])


def _grid_posterior_2(matrix, counts, alpha, level=0.95):
    p = np.linspace(0, 1, 200_001)[1:-1]
    logd = (alpha - 1) * (np.log(p) + np.log1p(-p))
    for e, c in enumerate(counts):
        logd += c * np.log(p * matrix[0, e] + (1 - p) * matrix[1, e])
    d = np.exp(logd - logd.max())
    d /= d.sum()
    cdf = np.cumsum(d)
    tail = (1 - level) / 2
    return float(p @ d), float(p[np.searchsorted(cdf, tail)]), float(p[np.searchsorted(cdf, 1 - tail)])


def _grid_mean_3(matrix, counts, alpha):
    g = np.linspace(0, 1, 1201)[1:-1]
    a, b = np.meshgrid(g, g, indexing="ij")
    inside = a + b < 1 - 1e-9
    pi = np.stack([a[inside], b[inside], 1 - a[inside] - b[inside]])
    logd = (alpha - 1) * np.log(pi).sum(axis=0)
    for e, c in enumerate(counts):
        logd += c * np.log(matrix[:, e] @ pi)
    d = np.exp(logd - logd.max())
    return (pi * d).sum(axis=1) / d.sum()


@pytest.mark.parametrize("counts, alpha", [([3, 7], 1.0), ([1, 11], 0.5), ([40, 25], 1.0)])
def test_two_inputs_mean_and_interval_equal_the_quadrature(counts, alpha):
    post = posterior_shares(WARNER, counts, prior=alpha, draws=6000, seed=3)
    mean, low, high = _grid_posterior_2(WARNER, counts, alpha)
    assert abs(post.mean[0] - mean) < 5 * post.mcse[0] + 2e-3
    assert abs(post.ci_low[0] - low) < 0.03 and abs(post.ci_high[0] - high) < 0.03
    assert np.isclose(post.mean.sum(), 1.0)


def test_three_inputs_with_a_dont_know_equal_the_quadrature():
    counts = [4, 1, 0, 5]
    post = posterior_shares(THREE, counts, prior=1.0, draws=6000, seed=5)
    expected = _grid_mean_3(THREE, counts, 1.0)
    assert np.all(np.abs(post.mean - expected) < 5 * post.mcse + 3e-3)


def test_no_answers_give_the_prior_and_bad_counts_are_refused():
    post = posterior_shares(THREE, [0, 0, 0, 0], prior=2.0, draws=2000)
    assert np.all(np.abs(post.mean - 1 / 3) < 5 * post.mcse + 3e-3)
    with pytest.raises(InvalidArgumentError, match="whole"):
        posterior_shares(WARNER, [1.5, 2])
    with pytest.raises(InvalidArgumentError, match="prior"):
        posterior_shares(WARNER, [1, 2], prior=0)
