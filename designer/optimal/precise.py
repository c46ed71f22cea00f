"""Precise (Bayesian) designs for estimation under WLDP: regular and cyclic designs (docs/theory.md, 5.4).

Under WLDP the analyst sees precise answers, so the chi2 objective asks for the most informative
*precise* mechanism within the budget. Its optimum is a staircase mechanism: every column takes one of
two values, ``e^eps theta`` on a set of inputs and ``theta`` elsewhere. For a symmetric problem the best
uniform pattern has the subset size ``d`` of subset selection; a ``k x k`` *regular design* (``d`` high
entries in every row and column, nonsingular) attains its chi-square information with ``k`` outputs.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._internal.solvers import SolverOutcome, Status, WarmStart, solve_lp
from ..budget import Budget
from ..constructors import within_budget
from ..exceptions import InvalidProblemError
from ..vocabulary import Semantics
from .problem import DesignProblem
from .programs import Solved, staircase_program
from .symmetric import chi2_class_information
from .symmetry import is_symmetric

__all__ = ["best_subset_size", "cyclic_design", "is_precise", "regular_design", "solve_precise"]

#: HiGHS options for the staircase LP (few rows, up to 2**k columns): primal simplex, which also returns
#: a vertex (hence at most k patterns).
STAIRCASE_OPTIONS = {"simplex_strategy": 4}


def best_subset_size(k: int, eps: float) -> tuple[int, float]:
    """The size ``d`` of the best uniform staircase pattern and its chi-square information (uniform prior).

    The argmax over ``d < k`` of :func:`~designer.optimal.symmetric.chi2_class_information` (the value of
    subset selection; docs/theory.md, 5.4).

    Returns
    -------
    d : int
        In ``1..k-1``.
    information : float
        Chi-square information of the optimum (per respondent).
    """
    info = chi2_class_information(k, eps)[: k - 1]
    best = int(np.argmax(info))
    return best + 1, float(info[best])


#: Random candidates tried by :func:`regular_design` besides the contiguous circulant.
DESIGN_CANDIDATES = 256


def _design_cost(high: NDArray[np.bool_]) -> float:
    """``sum 1/sigma**2`` over the singular values of the pattern on the complement of the constant vector.

    For a regular pattern the uniform-prior Fisher information of :func:`cyclic_design` is proportional to
    ``N N^T`` there, so this is proportional to the MLE variance (``inf`` when singular).
    """
    k = high.shape[0]
    centred = high - high.mean(axis=0, keepdims=True)
    centred = centred - centred.mean(axis=1, keepdims=True)
    sigma = np.linalg.svd(centred, compute_uv=False)[: k - 1]
    return math.inf if sigma.min() < 1e-9 * max(1.0, sigma.max()) else float(np.sum(1.0 / sigma**2))


#: Swaps tried by the local search of :func:`regular_design` (fewer for large k: each costs one FFT), and
#: how many trials in a row without a 1e-4 relative gain end it.
SWAP_BUDGET = 20_000_000
STALL_LIMIT = 2000


def _circulant_cost(indicator: NDArray[np.float64], d: int) -> float:
    """``sum_{m != 0} 1/|lambda_m|**2`` of the circulant with connection set ``indicator`` (``inf``: singular)."""
    power = np.abs(np.fft.fft(indicator)[1:]) ** 2
    return math.inf if power.min() < 1e-9 * d * d else float(np.sum(1.0 / power))


def _improve_connection_set(indicator: NDArray[np.float64], cost: float, rng: np.random.Generator
                            ) -> NDArray[np.float64]:
    """Local search on a circulant's connection set: swap a member for a non-member while the variance
    proxy ``sum_{m != 0} 1/|lambda_m|**2`` drops (its floor, all ``|lambda_m|`` equal, is a difference
    set's: ``(k-1)**2 / (k d - d**2)``). Seeded trials, ended by a budget or ``STALL_LIMIT`` trials without
    progress, so the result is reproducible. k = 1000, d = 269: MLE variance 14.9 -> 5.1 (subset selection
    3.7)."""
    k = indicator.size
    d = int(indicator.sum())
    if d in (0, k):
        return indicator
    floor = (k - 1) ** 2 / (k * d - d * d)
    members, others = np.flatnonzero(indicator > 0.5), np.flatnonzero(indicator < 0.5)
    stalled = 0
    for _ in range(min(20_000, SWAP_BUDGET // k)):
        if cost <= floor * (1 + 1e-9) or stalled >= STALL_LIMIT:
            break
        stalled += 1
        a, b = int(rng.integers(d)), int(rng.integers(k - d))
        i, j = members[a], others[b]
        indicator[i], indicator[j] = 0.0, 1.0
        trial = _circulant_cost(indicator, d)
        if trial < cost:
            if trial < cost * (1 - 1e-4):
                stalled = 0
            cost = trial
            members[a], others[b] = j, i
        else:
            indicator[i], indicator[j] = 1.0, 0.0
    return indicator


def regular_design(k: int, d: int) -> NDArray[np.bool_] | None:
    """A nonsingular ``k x k`` 0/1 pattern with ``d`` ones in every row and column, of small variance.

    Circulants first: their singular values are ``|lambda_m| = |sum_{s in S} w**(s m)|`` (one FFT per
    connection set ``S``); the contiguous set is singular when ``gcd(d, k) > 1``, so seeded random sets
    are tried as well, the one of least ``sum_{m != 0} 1/|lambda_m|**2`` wins and is improved by swaps
    (a cyclic difference set, where one exists, would attain the variance of subset selection). When
    every candidate is singular (e.g. ``d = 2`` and ``4 | k``), degree-preserving switches of random
    entries are tried; None when they fail too (``k = 4, d = 2`` has no nonsingular pattern at all).
    ``d = 1`` and ``d = k - 1`` always work.
    """
    rng = np.random.default_rng(20260101 + 7919 * k + d)
    best: NDArray[np.int64] | None = None
    best_cost = math.inf
    for trial in range(DESIGN_CANDIDATES + 1):
        offsets = np.arange(d) if trial == 0 else rng.choice(k, size=d, replace=False)
        indicator = np.zeros(k)
        indicator[offsets] = 1.0
        cost = _circulant_cost(indicator, d)
        if cost < best_cost * (1 - 1e-12):
            best, best_cost = offsets, cost
    diff = (np.arange(k)[:, None] - np.arange(k)[None, :]) % k
    if best is not None:
        indicator = np.zeros(k)
        indicator[best] = 1.0
        indicator = _improve_connection_set(indicator, best_cost, rng)
        return (indicator > 0.5)[diff]
    pattern_best = None
    pattern = diff < d  # singular circulant: switch entries (rows and columns keep d ones each)
    for _ in range(DESIGN_CANDIDATES):
        switched = pattern.copy()
        for _ in range(4 * k):
            r1, r2 = rng.choice(k, size=2, replace=False)
            only1, only2 = np.flatnonzero(switched[r1] & ~switched[r2]), np.flatnonzero(switched[r2] & ~switched[r1])
            if only1.size == 0 or only2.size == 0:
                continue
            c1, c2 = rng.choice(only1, size=1), rng.choice(only2, size=1)
            switched[r1, c1], switched[r1, c2], switched[r2, c2], switched[r2, c1] = False, True, False, True
        cost = _design_cost(switched)
        if cost < best_cost:
            best_cost, pattern_best = cost, switched
            if switched.shape[0] > 64:
                break
    return pattern_best if math.isfinite(best_cost) else None


def cyclic_design(k: int, d: int, eps: float, high: NDArray[np.bool_] | None = None) -> NDArray[np.float64]:
    """A ``k x k`` precise mechanism with the chi-square information of subset selection of size ``d``.

    Output ``j`` answers "the truth is among the inputs ``x`` with ``high[x, j]``": entry ``e^eps theta``
    there and ``theta = 1/(d e^eps + k - d)`` elsewhere. Every row and column holds ``d`` high entries,
    so each output is one staircase column of subset selection (``k`` columns instead of ``C(k, d)``).

    Parameters
    ----------
    k, d : int
        Inputs (= outputs) and subset size, ``1 <= d < k``.
    eps : float
        Budget (nats); the loss of the result is the ratio ``e^eps`` of its two entries.
    high : (k, k) bool array, optional
        The pattern (default :func:`regular_design`: circulant when possible, always nonsingular).

    Returns
    -------
    (k, k) ndarray
        Rows are inputs, columns outputs; rows sum to 1.
    """
    if high is None:
        high = regular_design(k, d)
        if high is None:
            raise InvalidProblemError(f"no nonsingular design of {k} outputs with subset size {d} exists or "
                                      "was found; use d = 1 or d = k - 1")
    e = Budget(eps).lp_factor
    theta = 1.0 / (d * e + k - d)
    # the high entry rounded down where needed so that the stored ratio is at most e^eps exactly
    return np.where(high, within_budget(e * theta, theta, eps), theta)


def is_precise(problem: DesignProblem) -> bool:
    """An estimation objective (chi2, variance, max_variance) under WLDP or both: a precise design over staircase
    patterns, never a table over ``2**l`` sets (docs/theory.md, 5.4 and 5.7)."""
    return problem.objective.estimation and problem.semantics is not Semantics.SLDP


def singletons(l: int) -> NDArray[np.object_]:
    """Bitmasks of the ``l`` singletons (Python ints: frames beyond 62 answers)."""
    return np.array([1 << i for i in range(l)], dtype=object)


def _symmetric_precise(problem: DesignProblem) -> Solved:
    k, l = problem.k, problem.l
    d, info = best_subset_size(k, problem.epsilon)
    note = ""
    high = regular_design(k, d)
    if high is None:
        # No nonsingular pattern of the best size fits k outputs (e.g. k = 4, d = 2): the optimum is then
        # not attained by any mechanism that identifies the prior. Take the best size that has one.
        values = chi2_class_information(k, problem.epsilon)[: k - 1]
        for size in np.argsort(-values, kind="stable") + 1:
            high = regular_design(k, int(size))
            if high is not None:
                note = (f"; size {d} has no nonsingular design with {k} outputs, so the optimum "
                        f"{info:.10g} is not attained")
                d, info = int(size), float(values[size - 1])
                break
    assert high is not None  # d = 1 always works
    cols = np.zeros((k, l))
    cols[:, problem.truth()] = cyclic_design(k, d, problem.epsilon, high)  # output j = the answer of input j
    outcome = SolverOutcome(Status.OPTIMAL, info, None, "closed form")
    return Solved(outcome, cols, singletons(l), f"regular design, subset size {d} (precise answers{note})")


def solve_precise(problem: DesignProblem, *, solver: str | None = None, options: dict[str, Any] | None = None,
                  warm: WarmStart | None = None) -> Solved:
    """chi2 under WLDP: the best Bayesian mechanism with at most ``l`` outputs.

    The staircase LP has ``k`` equality rows, so a vertex uses at most ``k`` patterns: each gets an
    output of its own (truth-preferring assignment). Symmetric problems get the cyclic design of the
    best subset size instead of an arbitrary vertex (equal variance for every input).
    """
    if is_symmetric(problem):
        return _symmetric_precise(problem)
    k, l = problem.k, problem.l
    st = staircase_program(problem.replace(frame=problem.inputs, semantics="sldp", focal_sets=None))
    if solver is None and options is None:
        options = STAIRCASE_OPTIONS
    out = solve_lp(st.lp, solver=solver, options=options, warm=warm)
    if out.z is None:
        return Solved(out, None, singletons(0), "staircase LP")
    theta = np.clip(out.z[: st.patterns.size], 0.0, None)
    used = np.flatnonzero(theta > 1e-12 * max(1.0, float(theta.max())))
    if used.size > l:
        raise InvalidProblemError(
            f"objective 'chi2' under {problem.semantics.value.upper()} needs a precise mechanism with "
            f"{used.size} distinct outputs, but the frame has only {l} answers; use a frame with at least "
            f"{problem.k} answers, semantics = \"sldp\", or objective truthful / gain / worst_case_utility"
        )
    cols_used = st.values[:, used] * theta[used][None, :]  # (k, m)
    from scipy.optimize import linear_sum_assignment

    truth = problem.truth()
    score = np.zeros((used.size, l))
    for x in range(k):
        if truth[x] >= 0:
            score[:, truth[x]] += cols_used[x]
    rows, outputs = linear_sum_assignment(score, maximize=True)
    cols = np.zeros((k, l))
    cols[:, outputs] = cols_used[:, rows]
    return Solved(out, cols, singletons(l), "staircase LP vertex, one output per pattern")
