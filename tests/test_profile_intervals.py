"""Profile-likelihood interval ends against an independent maximiser (issue 55 item 2).

The oracle here shares no code with designer: the log-likelihood, its maximum over the simplex (SLSQP from several
starts), the profile with one share held, the Fisher information on the tangent space and the unified approach's
critical value are all written below. Every end strictly inside (0, 1) must have its likelihood-ratio statistic
within 1e-4 of the critical value there; an end at 0 or 1 a statistic at most the critical value.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.linalg import null_space
from scipy.optimize import brentq, minimize
from scipy.stats import norm

import designer
from designer.estimation.boundary import profile_intervals
from designer.estimation.shares import estimate_sldp


def _loglik(m: np.ndarray, counts: np.ndarray, pi: np.ndarray) -> float:
    q = pi @ m
    used = counts > 0
    if np.any(q[used] <= 0):
        return -math.inf
    return float(counts[used] @ np.log(q[used]))


def _oracle_max(m: np.ndarray, counts: np.ndarray, fixed: tuple[int, float] | None = None) -> float:
    """The largest log-likelihood over the simplex (with ``pi[s] = v`` when ``fixed = (s, v)``), SLSQP."""
    k = m.shape[0]
    free = [j for j in range(k) if fixed is None or j != fixed[0]]
    mass = 1.0 if fixed is None else 1.0 - fixed[1]
    if len(free) == 1 or mass <= 0:
        pi = np.zeros(k)
        pi[free] = mass / len(free)
        if fixed is not None:
            pi[fixed[0]] = fixed[1]
        return _loglik(m, counts, pi)
    n = counts.sum()

    def full(x: np.ndarray) -> np.ndarray:
        pi = np.zeros(k)
        pi[free] = np.clip(x, 0, None)
        if fixed is not None:
            pi[fixed[0]] = fixed[1]
        return pi

    def negative(x: np.ndarray) -> float:
        value = _loglik(m, counts, full(x))
        return -value / n if math.isfinite(value) else 1e6

    rng = np.random.default_rng(1)
    best = -math.inf
    starts = [np.full(len(free), mass / len(free))] + [mass * rng.dirichlet(np.ones(len(free))) for _ in range(3)]
    for x0 in starts:
        out = minimize(negative, x0, method="SLSQP", bounds=[(0, mass)] * len(free),
                       constraints=[{"type": "eq", "fun": lambda x: x.sum() - mass}],
                       options={"ftol": 1e-15, "maxiter": 1000})
        x = np.clip(out.x, 0, None)
        x *= mass / x.sum()
        best = max(best, _loglik(m, counts, full(x)))
    return best


def _oracle_critical(m: np.ndarray, n: float, pi: np.ndarray, s: int, level: float) -> float:
    """Feldman-Cousins for a normal estimate held at an edge ``d`` standard errors away: ``P(LR <= c) = level``."""
    q = pi @ m
    used = q > 0
    info = n * (m[:, used] / q[used]) @ m[:, used].T
    basis = null_space(np.ones((1, m.shape[0])))
    reduced = basis.T @ info @ basis
    try:
        var = float((basis @ np.linalg.inv(reduced) @ basis.T)[s, s])
    except np.linalg.LinAlgError:
        var = math.inf
    se = math.sqrt(max(var, 0.0))
    d = min(pi[s], 1 - pi[s]) / se if se > 0 else math.inf
    z = norm.ppf(0.5 + level / 2)
    if d >= z:
        return z * z

    def coverage(c: float) -> float:
        r = math.sqrt(c)
        if r <= d:
            return norm.cdf(r) - norm.cdf(-r) - level
        return norm.cdf(r) - (norm.cdf(-(d * d + c) / (2 * d)) if d > 0 else 0.0) - level

    return brentq(coverage, 1.0, z * z + 1e-9, xtol=1e-13)


def _oracle_point(m: np.ndarray, counts: np.ndarray, s: int, v: float) -> np.ndarray:
    """The constrained maximiser itself (for the critical value's standard error), SLSQP from equal shares."""
    k = m.shape[0]
    free = [j for j in range(k) if j != s]
    mass = 1.0 - v
    n = counts.sum()

    def full(x: np.ndarray) -> np.ndarray:
        pi = np.zeros(k)
        pi[free] = np.clip(x, 0, None)
        pi[s] = v
        return pi

    def negative(x: np.ndarray) -> float:
        value = _loglik(m, counts, full(x))
        return -value / n if math.isfinite(value) else 1e6

    out = minimize(negative, np.full(len(free), mass / len(free)), method="SLSQP", bounds=[(0, mass)] * len(free),
                   constraints=[{"type": "eq", "fun": lambda x: x.sum() - mass}], options={"ftol": 1e-15})
    return full(out.x)


def check_ends(m: np.ndarray, counts: np.ndarray, pi: np.ndarray, low: np.ndarray, high: np.ndarray,
               shares: list[int], level: float = 0.95) -> None:
    best = max(_oracle_max(m, counts), _loglik(m, counts, pi))
    assert _loglik(m, counts, pi) >= best - 1e-6  # designer's estimate is the maximum
    n = float(counts.sum())
    for s in shares:
        for end in (float(low[s]), float(high[s])):
            if end == float(pi[s]):
                continue
            lr = 2 * (best - _oracle_max(m, counts, (s, end)))
            critical = _oracle_critical(m, n, _oracle_point(m, counts, s, end), s, level)
            if 0.0 < end < 1.0:
                assert abs(lr - critical) <= 1e-4, (s, end, lr, critical)
            else:
                assert lr <= critical + 1e-4, (s, end, lr, critical)


def _reproduction() -> tuple[designer.Mechanism, np.ndarray]:
    problem = designer.DesignProblem(inputs=("v00", "v01", "v02", "v03"), epsilon=0.5,
                                     prior=np.array([0.6, 0.4 / 3, 0.4 / 3, 0.4 / 3]))
    mech = designer.design(problem).mechanism
    assert mech is not None
    wanted = {"{v00,v01}": 1906, "{v00,v02}": 1841, "{v01,v02}": 1510, "{v00,v03}": 1898, "{v01,v03}": 1422,
              "{v02,v03}": 1423}
    counts = np.array([float(wanted.get(c.replace(" ", ""), 0)) for c in mech.columns])
    assert counts.sum() == 10_000
    return mech, counts


@pytest.mark.parametrize("method", ["newton", "em", "convex"])
def test_issue_reproduction_fits_with_one_verdict(method: str) -> None:
    mech, counts = _reproduction()
    fit = estimate_sldp(mech, counts, method=method)
    assert str(fit.status) == "converged"
    newton = estimate_sldp(mech, counts)
    assert abs(fit.loglik - newton.loglik) <= 1e-8
    np.testing.assert_allclose(fit.ci_low, newton.ci_low, atol=1e-7)
    np.testing.assert_allclose(fit.ci_high, newton.ci_high, atol=1e-7)


def test_issue_reproduction_profile_ends_hold_their_critical_value() -> None:
    mech, counts = _reproduction()
    fit = estimate_sldp(mech, counts)
    low, high = profile_intervals(mech.matrix, counts, fit.estimate, 0.95)
    check_ends(mech.matrix, counts, fit.estimate, low, high, list(range(mech.k)))


def test_boundary_fit_ends_hold_their_critical_value() -> None:
    """Warner's design with fewer 'yes' than the lie rate: the maximum at 0, a one-sided-like end."""
    m = designer.Q_WRR(1.0).matrix
    counts = np.array([20.0, 80.0])
    fit = estimate_sldp(designer.Q_WRR(1.0), counts)
    assert str(fit.status) == "boundary"
    low, high = profile_intervals(m, counts, fit.estimate, 0.95)
    assert low[0] == 0.0 and 0.0 < high[0] < 1.0
    check_ends(m, counts, fit.estimate, low, high, [0, 1])


@pytest.mark.parametrize("seed", range(4))
def test_random_designs_with_a_rare_share(seed: int) -> None:
    """Designer's own designs, a share near 0, answers drawn multinomially (some answer sets unobserved)."""
    rng = np.random.default_rng(seed)
    k = int(rng.integers(3, 7))
    eps = float(rng.uniform(0.3, 3.0))
    labels = tuple(f"x{j}" for j in range(k))
    mech = designer.design(designer.DesignProblem(inputs=labels, epsilon=eps)).mechanism
    assert mech is not None
    truth = rng.dirichlet(np.ones(k))
    truth[0] = 0.003
    truth /= truth.sum()
    counts = rng.multinomial(int(rng.integers(200, 20_000)), truth @ mech.matrix).astype(float)
    fit = estimate_sldp(mech, counts)
    assert str(fit.status) in {"converged", "boundary", "not_identified"}
    low, high = profile_intervals(mech.matrix, counts, fit.estimate, 0.95)
    check_ends(mech.matrix, counts, fit.estimate, low, high, [0, k - 1])


def _exact_coverage(eps: float, share: float, n: int) -> float:
    """Coverage of the first share's reported interval for two inputs, summed over every count of the first answer
    (binomial weights computed here): exact, no Monte Carlo error."""
    mech = designer.design(designer.DesignProblem(inputs=("a", "b"), epsilon=eps)).mechanism
    assert mech is not None
    p = float(np.array([share, 1 - share]) @ mech.matrix[:, 0])
    total = 0.0
    for a in range(n + 1):
        fit = estimate_sldp(mech, np.array([a, n - a], dtype=float))
        if fit.ci_low[0] <= share <= fit.ci_high[0]:
            total += math.comb(n, a) * p**a * (1 - p) ** (n - a)
    return total


@pytest.mark.parametrize(("eps", "share", "n", "coverage"), [
    (4.0, 0.5, 50, 0.9351),   # the coverage grid's cell measured 0.930 +- 0.006 in 2,000 replications: the lattice
    (2.0, 0.5, 30, 0.9572),
    (1.0, 0.001, 50, 0.9421),
])
def test_coverage_of_a_small_two_input_survey_is_the_binomial_lattice(eps: float, share: float, n: int,
                                                                      coverage: float) -> None:
    """docs/theory.md 8.4's documented exception: with 50 respondents and two inputs the answer count takes 51 values,
    and no interval read from it covers exactly 0.95; at a share of 0.5 every interval designer reports (profile,
    Wald) covers 0.9351, as the Wald interval of a binomial proportion does at n = 50, p = 0.5. Pinned exactly
    here so that a change of the intervals shows."""
    assert _exact_coverage(eps, share, n) == pytest.approx(coverage, abs=5e-5)


def test_the_corner_misses_by_its_critical_value_not_by_its_ends() -> None:
    """docs/theory.md 8.4's documented exception, the corner (k = 3, eps 0.5, shares (0.988, 0.006, 0.006), 2,000
    respondents: 0.9065 +- 0.0065 in 2,000 replications). What the docs claim, checked on 150 seeded replications
    with this file's independent oracles: every miss has the truth above the upper end; at every miss the truth's
    own likelihood-ratio statistic (SLSQP) exceeds the critical value the construction holds it to (so the
    interval is what its statistic says, and the miss is the critical value's: the constrained maximum at the truth
    mostly puts a profiled-out share at 0, a corner the one-edge critical value 2.7055 does not describe); the plain
    clipped Wald interval covers at least the level there. Coverage is pinned below 0.94 so that a remedy shows here."""
    mech = designer.design(designer.DesignProblem(inputs=("x0", "x1", "x2"), epsilon=0.5)).mechanism
    m = np.asarray(mech.matrix, dtype=float)
    truth = np.array([0.988, 0.006, 0.006])
    rng = np.random.default_rng(20261207)
    reps, covered, wald, corners = 150, 0, 0, 0
    for _ in range(reps):
        counts = rng.multinomial(2000, truth @ m).astype(float)
        fit = estimate_sldp(mech, counts)
        assert str(fit.status) in {"converged", "boundary"}
        se = float(fit.stderr[0])
        wald += int(max(fit.estimate[0] - norm.ppf(0.975) * se, 0.0) <= truth[0]
                    <= min(fit.estimate[0] + norm.ppf(0.975) * se, 1.0))
        if fit.ci_low[0] <= truth[0] <= fit.ci_high[0]:
            covered += 1
            continue
        assert truth[0] > fit.ci_high[0]  # every miss above the upper end
        lr = 2.0 * (_oracle_max(m, counts) - _oracle_max(m, counts, (0, truth[0])))
        point = _oracle_point(m, counts, 0, truth[0])
        corners += int(min(point[1:]) < 1e-6)
        assert lr > _oracle_critical(m, counts.sum(), point, 0, 0.95) - 1e-6
    misses = reps - covered
    assert corners >= 0.8 * misses  # most misses: the constrained maximum at the truth is at a corner
    assert covered / reps < 0.94
    assert wald / reps >= 0.95
