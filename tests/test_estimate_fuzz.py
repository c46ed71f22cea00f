"""The estimate verifier over the input space (issue 55 item 5, the estimate side; the CI slice).

Problems (k 2-8, eps 0.1-5, several objectives), designer's own designs for them, and data (n 10..10^6 drawn
multinomially from truths with shares down to 1e-3, zero counts, a single answer set, non-integer frequency weights)
are drawn by hypothesis; every fit must

- raise nothing outside designer's documented error classes (:class:`designer.DesignerError`);
- when it says ``converged`` or ``boundary``, have a log-likelihood no more than 1e-6 below an independent maximum
  (SLSQP over the simplex from several starts, written here) and a KKT check of its own written here;
- have profile-likelihood ends whose statistic, recomputed by the independent maximiser, is the critical value
  (``tests/test_profile_intervals.py``'s oracle).

The full run (10^5 fits) is ``benchmarks/fuzz_estimate.py``.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import designer
from designer.estimation.boundary import profile_intervals
from designer.estimation.shares import estimate_sldp

from .test_profile_intervals import _loglik, _oracle_max, check_ends

OBJECTIVES = ("variance", "chi2", "truthful", "max_variance")


@functools.lru_cache(maxsize=64)
def _mechanism(k: int, eps: float, objective: str) -> designer.Mechanism:
    labels = tuple(f"x{j}" for j in range(k))
    mech = designer.design(designer.DesignProblem(inputs=labels, epsilon=eps), objective=objective).mechanism
    assert mech is not None
    return mech


def draw_case(rng: np.random.Generator, k: int, eps: float, objective: str, log_n: float, kind: str
              ) -> tuple[designer.Mechanism, np.ndarray]:
    """A design and counts: ``kind`` is 'plain', 'single' (one answer set) or 'weights' (frequency weights)."""
    mech = _mechanism(k, eps, objective)
    truth = rng.dirichlet(np.full(k, 0.5))
    truth = np.clip(truth, 1e-3, None)
    truth /= truth.sum()
    n = max(int(10**log_n), 10)
    counts = rng.multinomial(n, truth @ mech.matrix).astype(float)
    if kind == "single":
        counts = np.zeros_like(counts)
        counts[int(rng.integers(counts.size))] = n
    elif kind == "weights":
        counts = counts * rng.lognormal(0.0, 0.5, counts.size)
    return mech, counts


def own_kkt(m: np.ndarray, counts: np.ndarray, pi: np.ndarray) -> float:
    """The largest breach of the KKT conditions, written here: ``g = M (f / q)``."""
    used = counts > 0
    q = pi @ m[:, used]
    g = m[:, used] @ (counts[used] / counts[used].sum() / q)
    on = pi > 0
    return float(max(np.abs(g[on] - 1).max(initial=0.0), np.clip(g[~on] - 1, 0, None).max(initial=0.0)))


def verify(mech: designer.Mechanism, counts: np.ndarray, rng: np.random.Generator, *, ends: bool = True) -> str:
    """Fit and check one case; returns the status (raises AssertionError on a broken invariant)."""
    try:
        fit = estimate_sldp(mech, counts, method=str(rng.choice(["newton", "em", "convex"])))
    except designer.DesignerError:
        return "refused"
    m = mech.matrix
    status = str(fit.status)
    assert np.all(fit.estimate >= 0) and abs(fit.estimate.sum() - 1) < 1e-9
    assert np.all(fit.ci_low <= fit.estimate + 1e-12) and np.all(fit.estimate <= fit.ci_high + 1e-12)
    if status in {"converged", "boundary"}:
        assert fit.converged
        oracle = _oracle_max(m, counts)
        assert _loglik(m, counts, fit.estimate) >= oracle - 1e-6, (oracle, fit.loglik)
        assert own_kkt(m, counts, fit.estimate) <= 1e-8 or counts.sum() * own_kkt(m, counts, fit.estimate) < 1e-6
        if ends and mech.k <= 6:
            s = int(rng.integers(mech.k))
            low, high = profile_intervals(m, counts, fit.estimate, 0.95, shares=np.arange(mech.k) == s)
            check_ends(m, counts, fit.estimate, low, high, [s])
    elif status == "not_converged":
        assert not fit.converged
    return status


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(k=st.integers(2, 8), eps=st.sampled_from([0.1, 0.25, 0.5, 1.0, 2.0, 5.0]), objective=st.sampled_from(OBJECTIVES),
       log_n=st.floats(1.0, 6.0), kind=st.sampled_from(["plain", "plain", "single", "weights"]),
       seed=st.integers(0, 2**32 - 1))
def test_estimates_over_the_input_space(k: int, eps: float, objective: str, log_n: float, kind: str,
                                        seed: int) -> None:
    rng = np.random.default_rng(seed)
    mech, counts = draw_case(rng, k, eps, objective, log_n, kind)
    status = verify(mech, counts, rng)
    assert status in {"converged", "boundary", "not_identified", "not_converged", "refused"}
    assert status != "not_converged" or not math.isfinite(counts.sum())  # valid data always reaches the maximum
