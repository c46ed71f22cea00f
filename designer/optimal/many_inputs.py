"""Variance designs past 20 inputs at any prior: column generation over a pool of staircase patterns, priced by
local search, with a bound proved by a semidefinite relaxation of the pricing problem (docs/theory.md, 5.11).

Up to 20 inputs every one of the ``2**k`` patterns is priced each round (:mod:`designer.optimal.variance_program`).
Past that the pool starts from structured designs (k-RR's singletons and their complements, the prefixes of the
inputs sorted by share, and cyclic blocks of the sizes near subset selection's best), the restricted program takes
one Newton step a round from the previous weights (the last one is solved to its optimum), and new patterns are
found by a batched one-flip local search of the reduced price from many starts. Nothing in that search is needed for
the bound: the certificate (:func:`certified_bound`) proves that under shifted row multipliers no pattern at all has
a positive reduced price (:mod:`designer.optimal.pattern_bound`), which bounds the optimum over every eps-SLDP
mechanism exactly as in section 5.7.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import linprog

from ..exceptions import InvalidProblemError
from .pattern_bound import binary_quadratic_bound, exact_shift, lift
from .problem import DesignProblem
from .share_variance import Pieces, pieces
from .variance_master import MIN_VARIANCE_EPSILON, Master, Patterns, _solve_master_newton
from .variance_program import MIN_MASS, VarianceSolution, _support

__all__ = ["TARGET_GAP", "TIME_BUDGET", "certified_bound", "check_many_inputs", "solve_many_inputs"]

#: Column generation stops once the proved gap is at most this (relative).
TARGET_GAP = 5e-3
#: ... or after this many seconds of the process's CPU time (the gap then proved is reported): one BLAS thread, so
#: on an idle machine about the wall time, and on a shared one the same design whatever the load.
TIME_BUDGET = 50.0
#: Rounds at most, and new patterns per round at most (a multiple of k).
MAX_ROUNDS = 200
NEW_PER_INPUT = 4
#: The certificate is computed every this many rounds (and when the search finds nothing).
CERTIFY_EVERY = 4
#: Random starts of the local search per round.
STARTS = 96
#: The support's patterns that start the search, at most, per input (a random sample of them each round: from all
#: of them, 1,500-1,900 at k = 64, the search was a sixth of a round).
SUPPORT_STARTS = 4
#: Newton steps of a round's restricted program at most (column generation needs its direction, not its last
#: digits; the last program is solved to its optimum).
ROUND_STEPS = 1
#: Relative tolerance of a round's Newton step (its quadratic program; the last program is solved to 1e-12): the
#: step's direction and multipliers are what a round needs, and 1e-8 takes about 7 interior-point iterations where
#: 1e-12 takes 11.
ROUND_TOL = 1e-8
#: Weights below this share of the largest are the Newton steps' interior-point residue: dropped from the next pool.
PRUNE = 1e-6
#: Patterns of the seeds (subset selection, OUE) in the first pool, per input.
SEED_PATTERNS = 4
#: Up to this many inputs the bound's largest price is found exactly, over all ``2**k`` patterns (:func:`exact_shift`,
#: branch and bound), instead of bounded by the semidefinite relaxation (loose at large budgets: k = 24 at eps 2, a
#: gap of 8.8%; k = 32, 13%). Past it the tree's leaves (``2**(k - 13)``) no longer fit in memory.
EXACT_PRICING_INPUTS = 32
_TRACE = False


@dataclass
class PatternPool(Patterns):
    """Staircase patterns held as a membership matrix (any number of inputs): ``members[x, i]`` is whether input
    ``x`` is high in pattern ``i``; ``bits`` are Python integers (0 for the constant column)."""

    members: NDArray[np.bool_] = field(default_factory=lambda: np.zeros((0, 0), dtype=bool))

    def _members(self, index: NDArray[np.int64] | None) -> tuple[NDArray[Any], NDArray[Any]]:
        bits = self.bits if index is None else self.bits[index]
        members = self.members if index is None else self.members[:, index]
        return bits, members.astype(np.int64)


def _pool(problem: DesignProblem, rows: NDArray[np.bool_]) -> PatternPool:
    """The pool of the patterns ``rows`` (one per row, ``(n, k)``), with the constant column first when allowed."""
    k = problem.k
    truth = problem.truth().astype(np.int64)
    rows = np.unique(rows[(rows.sum(axis=1) > 0) & (rows.sum(axis=1) < k)], axis=0)
    answers = np.zeros((rows.shape[0], problem.l), dtype=bool)
    for x in range(k):  # the answer set of a pattern: the truthful answers of its inputs
        answers[:, truth[x]] |= rows[:, x]
    bits, sets = _integers(rows), _integers(answers)
    members = rows.T
    if not (problem.dont_know_max == 0.0 or problem.dont_know == 0.0):
        bits, sets = [0, *bits], [(1 << problem.l) - 1, *sets]
        members = np.hstack([np.zeros((k, 1), dtype=bool), members])
    return PatternPool(k, problem.budget.lp_factor, np.array(bits, dtype=object), np.array(sets, dtype=object),
                       members=members)


def _integers(rows: NDArray[np.bool_]) -> list[int]:
    """Each row of bits as a Python integer (bit ``x`` is column ``x``)."""
    packed = np.packbits(rows, axis=1, bitorder="little")
    return [int.from_bytes(r.tobytes(), "little") for r in packed]


def _structured(problem: DesignProblem) -> NDArray[np.bool_]:
    """k-RR's singletons and their complements, the prefixes of the inputs by decreasing share (thresholded
    staircases) and cyclic blocks of sizes around subset selection's best ``k / (e^eps + 1)``."""
    k = problem.k
    eye = np.eye(k, dtype=bool)
    order = np.argsort(-problem.prior, kind="stable")
    prefixes = np.zeros((k - 1, k), dtype=bool)
    for j in range(1, k):
        prefixes[j - 1, order[:j]] = True
    best = k / (problem.budget.lp_factor + 1)
    blocks = []
    for d in {max(1, min(k - 1, math.floor(best) + s)) for s in (-1, 0, 1, 2)}:
        base = np.zeros(k, dtype=bool)
        base[:d] = True
        blocks += [np.roll(base, i) for i in range(k)]
    return np.vstack([eye, ~eye, prefixes, np.array(blocks)])


def balanced_blocks(k: int, m: int, seed: int = 0) -> tuple[NDArray[np.bool_], NDArray[np.float64]] | None:
    """``m``-subsets of ``k`` inputs with probabilities under which every input lies in the subset with probability
    ``m / k`` and every pair of inputs with probability ``m (m - 1) / (k (k - 1))``, as when every ``m``-subset is
    equally likely (a weighted 2-design; docs/theory.md, 5.11), from at most ``k // 2 + 1`` cyclic orbits.

    The orbit of a base block ``B`` under the shifts ``x -> x + i mod k`` (each shift weight ``1 / k``) covers every
    input equally and the pair ``{x, x + delta}`` as often as ``delta`` is a difference of two elements of ``B``; a
    linear program (HiGHS, simplex: a vertex) weights base blocks (the interval and random ones holding 0) so that
    every difference is covered equally. ``None`` when no weighting of those blocks is found.

    Examples
    --------
    >>> import numpy as np
    >>> from designer.optimal.many_inputs import balanced_blocks
    >>> rows, prob = balanced_blocks(10, 3)
    >>> pairs = (rows.T * prob) @ rows
    >>> bool(np.allclose(prob @ rows, 0.3)), bool(np.allclose(pairs, 0.3 * 2 / 9 + np.eye(10) * 0.3 * 7 / 9))
    (True, True)
    """
    if not 1 <= m <= k - 1:
        raise ValueError(f"a subset size m in 1..{k - 1}, not {m}")
    if 2 * m > k:  # the complements of a balanced family of (k - m)-subsets are balanced m-subsets
        smaller = balanced_blocks(k, k - m, seed)
        return None if smaller is None else (~smaller[0], smaller[1])
    for attempt in range(8):  # fresh random base blocks when a draw of them cannot be weighted
        out = _balanced_blocks(k, m, seed + 7919 * attempt)
        if out is not None:
            return out
    return None


def _balanced_blocks(k: int, m: int, seed: int) -> tuple[NDArray[np.bool_], NDArray[np.float64]] | None:
    """:func:`balanced_blocks` from one draw of random base blocks (``None`` when the draw cannot be weighted)."""
    rng = np.random.default_rng(seed)
    interval = np.zeros(k, dtype=bool)
    interval[:m] = True
    if m in (1, k - 1):  # singletons and their complements: one orbit covers every pair equally
        bases = interval[None, :]
        u = np.ones(1)
    else:
        random = np.zeros((3 * k, k), dtype=bool)
        random[:, 0] = True
        for row in random:
            row[1 + rng.choice(k - 1, size=m - 1, replace=False)] = True
        bases = np.vstack([interval, random])
        half = np.arange(1, k // 2 + 1)
        counts = np.stack([np.sum(bases & np.roll(bases, -int(d), axis=1), axis=1) for d in half], axis=1
                          ).astype(np.float64)
        A_eq = np.vstack([counts.T, np.ones(len(bases))])
        b_eq = np.r_[np.full(half.size, m * (m - 1) / (k - 1)), 1.0]
        out = linprog(np.zeros(len(bases)), A_eq=A_eq, b_eq=b_eq, bounds=(0, None), method="highs-ds")
        if out.status != 0 or out.x is None:
            return None
        keep = out.x > 1e-12
        bases, u = bases[keep], out.x[keep] / out.x[keep].sum()
    rows = np.vstack([np.roll(b, i) for b in bases for i in range(k)])
    prob = np.repeat(u / k, k)
    return rows, prob


def _size_mixture_oue(k: int, e: float) -> dict[int, float]:
    """Weights ``W_m`` of balanced ``m``-subset classes (scaled columns, :func:`balanced_blocks`) with OUE's first
    moments (its true item reported with probability 1/2, another with ``1 / (e^eps + 1)``), on at most three sizes;
    the sizes 0 and ``k`` (constant answers, no information) are dropped and the rest rescaled to rows of sum 1."""
    m = np.arange(k + 1, dtype=np.float64)
    row = m / k + (1 - m / k) / e
    own = m / k
    other = m * (m - 1) / (k * (k - 1)) + m * (k - m) / (k * (k - 1)) / e
    out = linprog(np.zeros(k + 1), A_eq=np.vstack([row, own, other]), b_eq=[1.0, 0.5, 1.0 / (e + 1.0)],
                  bounds=(0, None), method="highs-ds")
    if out.status != 0 or out.x is None:
        return {}
    W = np.where(out.x > 1e-14, out.x, 0.0)
    W[0] = W[k] = 0.0
    total = float(W @ row)
    return {int(i): float(W[i]) / total for i in np.flatnonzero(W)} if total > 0 else {}


def _best_subset_size(k: int, e: float, prior: NDArray[np.float64]) -> int:
    """The ``d`` of subset selection whose textbook per-item estimators have the smallest mean variance."""
    best, arg = math.inf, 1
    for d in range(1, k):
        p = d * e / (d * e + k - d)
        q = (p * (d - 1) + (1 - p) * d) / (k - 1)
        P = q + prior * (p - q)
        v = float(np.mean(P * (1 - P))) / (p - q) ** 2
        if v < best:
            best, arg = v, d
    return arg


def _seeds(problem: DesignProblem) -> list[tuple[str, NDArray[np.bool_], NDArray[np.float64]]]:
    """Subset selection at its best size and OUE as pattern designs with the same first moments (hence textbook
    variances at least their MLE's): balanced classes of subsets (:func:`balanced_blocks`) with scaled weights."""
    k, e = problem.k, problem.budget.lp_factor
    out = []
    d = _best_subset_size(k, e, problem.prior)
    mixtures = [("subset selection", {d: 1.0 / (d / k + (1 - d / k) / e)}), ("OUE", _size_mixture_oue(k, e))]
    for name, mix in mixtures:
        rows, weights = [], []
        for m, W in mix.items():
            blocks = balanced_blocks(k, m)
            if blocks is None:
                break
            rows.append(blocks[0])
            weights.append(W * blocks[1])
        else:
            if rows:
                out.append((name, np.vstack(rows), np.concatenate(weights)))
    return out


def _on_pool(pool: PatternPool, rows: NDArray[np.bool_], weights: NDArray[np.float64]) -> NDArray[np.float64]:
    """The weights of the design ``rows`` (patterns, repeated ones summed) on ``pool`` (which holds them all)."""
    lookup: dict[bytes, float] = {}
    for r, wt in zip(rows, weights):
        lookup[r.tobytes()] = lookup.get(r.tobytes(), 0.0) + float(wt)
    return np.array([lookup.get(pool.members[:, i].tobytes(), 0.0) for i in range(pool.size)])


def _start_weights(problem: DesignProblem, pool: PatternPool) -> NDArray[np.float64]:
    """k-RR (with the fixed don't-know mass on the constant column): feasible, with nonsingular information."""
    k, e = problem.k, pool.e
    w = np.zeros(pool.size)
    dk = float(problem.dont_know or 0.0)
    sizes = pool.members.sum(axis=0)
    singles = np.flatnonzero(sizes == 1)
    w[singles] = (1.0 - dk) / (1.0 + (k - 1) / e)
    if dk > 0:
        w[0] = dk
    return w


def _reduced(pool: PatternPool, prior: NDArray[np.float64], Z: NDArray[np.float64], y: NDArray[np.float64],
             V: NDArray[np.bool_]) -> NDArray[np.float64]:
    """Reduced prices ``|Z'v|^2 / q(v) - col(v) . y`` of the patterns ``V`` (rows, not constant), scaled columns."""
    a, b = 1.0 / pool.e, 1.0 - 1.0 / pool.e
    Vf = V.astype(np.float64)
    s = Vf @ Z
    return np.sum(s * s, axis=1) / (a + b * (Vf @ prior)) - (a * y.sum() + b * (Vf @ y))


def _local_search(pool: PatternPool, prior: NDArray[np.float64], Z: NDArray[np.float64], y: NDArray[np.float64],
                  starts: NDArray[np.bool_], steps: int = 400) -> tuple[NDArray[np.bool_], NDArray[np.float64]]:
    """Batched best-improvement one-flip ascent of the reduced price from every start."""
    k = Z.shape[0]
    a, b = 1.0 / pool.e, 1.0 - 1.0 / pool.e
    V = starts.copy()
    zz = np.sum(Z * Z, axis=1)
    c = b * y
    for _ in range(steps):
        Vf = V.astype(np.float64)
        s = Vf @ Z
        num = np.sum(s * s, axis=1)
        den = a + b * (Vf @ prior)
        lin = Vf @ c
        now = num / den - lin
        sign = np.where(V, -1.0, 1.0)
        new = ((num[:, None] + 2 * sign * (s @ Z.T) + zz[None, :]) / (den[:, None] + sign * b * prior[None, :])
               - (lin[:, None] + sign * c[None, :]))
        size = V.sum(axis=1)[:, None] + sign
        new[(size <= 0) | (size >= k)] = -np.inf
        best = np.argmax(new, axis=1)
        gain = new[np.arange(V.shape[0]), best] - now
        move = gain > 1e-12 * max(1.0, float(np.abs(now).max(initial=0.0)))
        if not move.any():
            break
        V[np.flatnonzero(move), best[move]] ^= True
    return V, _reduced(pool, prior, Z, y, V)


def _starts(pool: PatternPool, master_w: NDArray[np.float64], Z: NDArray[np.float64], prior: NDArray[np.float64],
            y: NDArray[np.float64], rng: np.random.Generator) -> NDArray[np.bool_]:
    """The support's patterns, the best prefix along random and principal directions of ``Z``, random subsets."""
    k, m = Z.shape
    support = pool.members[:, master_w > 0].T
    if support.shape[0] > SUPPORT_STARTS * k:  # a random sample of them, fresh each round
        support = support[rng.choice(support.shape[0], size=SUPPORT_STARTS * k, replace=False)]
    directions = np.hstack([rng.normal(size=(m, STARTS // 2)), np.linalg.svd(Z, full_matrices=False)[2][:8].T])
    directions = np.hstack([directions, -directions[:, -8:]])
    order = np.argsort(-(Z @ directions), axis=0)
    a, b = 1.0 / pool.e, 1.0 - 1.0 / pool.e
    prefixes = []
    for j in range(order.shape[1]):
        o = order[:, j]
        s = np.cumsum(Z[o], axis=0)
        val = np.sum(s * s, axis=1) / (a + b * np.cumsum(prior[o])) - b * np.cumsum(y[o])
        val[-1] = -np.inf
        top = int(np.argmax(val))
        row = np.zeros(k, dtype=bool)
        row[o[:top + 1]] = True
        prefixes.append(row)
    size = max(1, round(k / (pool.e + 1)))
    random = rng.random((STARTS // 2, k)) < size / k
    return np.vstack([support, np.array(prefixes), random])


def _point(problem: DesignProblem, master: Master) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``Z`` (``Y`` with the last input's row ``-1'Y``: ``Y'B'v = Z'v``) and the row multipliers."""
    Y = master.Y[0] / math.sqrt(master.mu[0])
    return np.vstack([Y, -Y.sum(axis=0)]), master.y_eq[:problem.k]


def certified_bound(problem: DesignProblem, parts: Pieces, pool: PatternPool, master: Master, *,
                    ran_out: set[int] | None = None) -> float:
    """A proved lower bound on the variance objective over every eps-SLDP mechanism (docs/theory.md, 5.11).

    For row multipliers ``y' = y + rho u`` (``u >= 0``) under which no pattern has a positive reduced price,
    ``f >= 2 tr(Y'R) - 1 . y' - (don't-know term)`` (section 5.7). The smallest ``rho`` whose semidefinite bound
    (:func:`~designer.optimal.pattern_bound.binary_quadratic_bound`) on the largest price is at most 0 is found by
    bisection, for ``u`` the positive part of ``y`` and for ``u = 1``. The price being homogeneous of degree 2 in
    ``(Y, y')``, the multipliers ``(t Y, t^2 y')`` prove ``2 t tr(Y'R) - t^2 (1 . y' + ...)`` for every ``t > 0``;
    the best ``t`` (:func:`_scaled`) is taken, and the better of the two bounds is returned (never below 0).

    ``ran_out`` (a solve's own set, updated here) holds the directions (0: the positive part of ``y``, 1: ``u = 1``)
    for which the exact pricing's tree ran out of work before: a later certificate of the same solve goes straight
    to the relaxation for them instead of spending the tree's whole budget again.
    """
    Z, y = _point(problem, master)
    prior = parts.priors[0]
    a, b = 1.0 / pool.e, 1.0 - 1.0 / pool.e
    Q = Z @ Z.T
    head, extra, constant = _terms(problem, parts, master)
    best = -math.inf
    scale = max(abs(head), 1e-300)

    def worst(shift: NDArray[np.float64]) -> float:
        ys = y + shift
        c = b * ys
        A = Q - b * (np.outer(prior, c) + np.outer(c, prior)) / 2
        lin = -(a * c + a * ys.sum() * b * prior)
        L = lift(A, lin, -a * a * ys.sum())
        # a margin for the rounding of the bound's float evaluation (relative 1e-12 of L's size)
        return binary_quadratic_bound(L) + 1e-12 * float(np.abs(L).sum())

    ran_out = set() if ran_out is None else ran_out
    for direction, u in enumerate((np.clip(y, 1e-3 * float(np.abs(y).mean()), None), np.ones(problem.k))):
        need = max(0.0, -constant) / float(u.sum())
        shift = None
        if problem.k <= EXACT_PRICING_INPUTS and direction not in ran_out:
            shift = exact_shift(Q, prior, y, u, a, b)
            if shift is None:
                ran_out.add(direction)
        if shift is not None:
            rho = max(need, shift)
            best = max(best, _scaled(head, float((y + rho * u).sum()) + extra))
            continue
        lo, hi = need, max(need, scale / float(u.sum()))
        if worst(lo * u) <= 0.0:
            hi = lo
        else:
            while worst(hi * u) > 0.0 and hi <= 1e6 * scale / float(u.sum()):
                hi *= 4
            if worst(hi * u) > 0.0:
                continue  # no shift along u proved: no bound from it
            for _ in range(40):
                if hi - lo <= 1e-4 * scale / float(u.sum()):
                    break
                mid = (lo + hi) / 2
                lo, hi = (lo, mid) if worst(mid * u) <= 0.0 else (mid, hi)
        best = max(best, _scaled(head, float((y + hi * u).sum()) + extra))
    return max(best, 0.0) / pool.kappa  # a variance is never negative


def _terms(problem: DesignProblem, parts: Pieces, master: Master) -> tuple[float, float, float]:
    """``2 tr(Y'R)``, the don't-know terms of the bound, and the constant column's price ``1 . y`` plus its
    don't-know multipliers (which must not be negative)."""
    head = 2.0 * float(np.sum(master.Y[0] * parts.R[0])) - master.mu[0] * float(parts.const[0])
    fixed = float(master.y_eq[problem.k]) if master.y_eq.size > problem.k else 0.0
    extra = fixed * float(problem.dont_know or 0.0) + max(master.y_dk_max, 0.0) * float(problem.dont_know_max or 0.0)
    constant = float(master.y_eq[:problem.k].sum()) + fixed + max(master.y_dk_max, 0.0)
    return head, extra, constant


def _optimistic(problem: DesignProblem, parts: Pieces, pool: PatternPool, master: Master, V: NDArray[np.bool_],
                price: NDArray[np.float64]) -> float:
    """The bound :func:`certified_bound` would reach if the patterns ``V`` (reduced prices ``price``) were the
    most expensive ones: at least the certified bound, so a gap it leaves cannot be closed by certifying now."""
    head, extra, constant = _terms(problem, parts, master)
    y = master.y_eq[:problem.k]
    a, b = 1.0 / pool.e, 1.0 - 1.0 / pool.e
    best = 0.0
    for u in (np.clip(y, 1e-3 * float(np.abs(y).mean()), None), np.ones(problem.k)):
        rho = max(0.0, -constant / float(u.sum()), float(np.max(price / (a * u.sum() + b * (V @ u)), initial=0.0)))
        best = max(best, _scaled(head, float((y + rho * u).sum()) + extra))
    return best / pool.kappa


def _scaled(head: float, cost: float) -> float:
    """The best of the bounds ``2 t a - t^2 c`` over ``t > 0`` (``head = 2a``, ``cost = c``): the multipliers
    ``(t Y, t^2 y')`` price every pattern out whenever ``(Y, y')`` do, since the reduced price is homogeneous of
    degree 2 (docs/theory.md, 5.11). ``a^2 / c`` at ``t = a / c``; 0 (``t -> 0``) when ``a <= 0``."""
    a = head / 2
    if cost <= 0.0:  # cannot happen for multipliers that price every column out (f would be unbounded below)
        return head - cost
    return a * a / cost if a > 0 else 0.0


def check_many_inputs(problem: DesignProblem) -> None:
    """Refuse, with the reason, what the route of many inputs does not design (:class:`InvalidProblemError`).

    Examples
    --------
    >>> import designer
    >>> from designer.optimal.many_inputs import check_many_inputs
    >>> check_many_inputs(designer.DesignProblem(inputs=[f"v{i}" for i in range(30)], epsilon=1.0,
    ...                                          prior=[(i + 1) / 465 for i in range(30)]))
    """
    _check(problem, pieces(problem))


def _check(problem: DesignProblem, parts: Pieces) -> None:
    if len(parts.R) != 1:
        raise InvalidProblemError(
            f"'{problem.name or 'the problem'}': past 20 inputs at a prior that is not uniform, designer designs the "
            "objective 'variance' at one prior (weights and contrasts allowed); 'max_variance' and prior scenarios "
            "are designed up to 20 inputs")
    if problem.lie_max is not None or problem.focal_sets is not None:
        raise InvalidProblemError(
            f"'{problem.name or 'the problem'}': past 20 inputs a variance design takes no lie_max or focal_sets; "
            "use dont_know / dont_know_max, or at most 20 inputs")
    if problem.epsilon < MIN_VARIANCE_EPSILON:
        raise InvalidProblemError(f"objective '{problem.objective}' needs epsilon >= {MIN_VARIANCE_EPSILON:g}")


def solve_many_inputs(problem: DesignProblem, *, target_gap: float = TARGET_GAP, time_budget: float | None = None,
                      seed: int = 0) -> VarianceSolution:
    """A variance design for any number of inputs at any prior, with a proved bound (docs/theory.md, 5.11).

    Parameters
    ----------
    problem : DesignProblem
        Objective ``variance`` at one prior, no lying bound or focal sets.
    target_gap : float
        Stop once the proved gap ``(value - bound) / value`` is at most this.
    time_budget : float, optional
        Stop after about this many seconds of CPU time (default :data:`TIME_BUDGET`); the gap proved by then is
        reported.
    seed : int
        Seed of the search's random starts (the result is deterministic for a seed).

    Returns
    -------
    VarianceSolution

    Examples
    --------
    >>> import numpy as np
    >>> import designer
    >>> from designer.optimal.many_inputs import solve_many_inputs
    >>> prior = 0.8 ** np.arange(21)
    >>> problem = designer.DesignProblem(inputs=[f"v{i}" for i in range(21)], epsilon=2.0, prior=prior / prior.sum())
    >>> solution = solve_many_inputs(problem, time_budget=2)
    >>> bool(solution.bound <= solution.value), solution.value <= 0.8304  # k-RR's mean share variance: 0.8303
    (True, True)
    """
    t0 = time.process_time()
    time_budget = TIME_BUDGET if time_budget is None else time_budget
    parts = pieces(problem)
    _check(problem, parts)
    prior = parts.priors[0]
    rng = np.random.default_rng(seed)
    structured = _structured(problem)
    pool = _pool(problem, structured)
    w = _start_weights(problem, pool)
    start = (_value(pool, parts, w), "k-RR", pool, w)
    extra = []
    if not problem.dont_know:  # no fixed don't-know mass: subset selection and OUE are feasible designs
        for name, rows, weights in _seeds(problem):
            seeded = _pool(problem, np.vstack([structured, rows]))
            ws = _on_pool(seeded, rows, weights)
            start = min(start, (_value(seeded, parts, ws), name, seeded, ws), key=lambda t: t[0])
            # a sample of their patterns joins the first pool (all of them, up to k^2 / 2, make the masters slow)
            extra.append(rows[rng.choice(len(rows), size=min(len(rows), SEED_PATTERNS * problem.k), replace=False)])
    if extra:
        pool = _pool(problem, np.vstack([structured, *extra]))
        w = _start_weights(problem, pool)
    bound, rounds, master, value = -math.inf, 0, None, math.inf
    ran_out: set[int] = set()  # directions whose exact pricing ran out of work (certified_bound)
    solved_pool = pool
    while rounds < MAX_ROUNDS:
        rounds += 1
        index = np.arange(pool.size)
        solved = _solve_master_newton(problem, parts, pool, index, w, ROUND_STEPS, warm=True, tol=ROUND_TOL)
        if solved is None:
            break
        master, solved_pool = solved, pool
        w = master.w
        value = _value(pool, parts, w)
        Z, y = _point(problem, master)
        cand, price = _local_search(pool, prior, Z, y, _starts(pool, w, Z, prior, y, rng))
        hope = _optimistic(problem, parts, pool, master, cand, price)
        scale = value * pool.kappa / problem.k
        known = {r.tobytes() for r in pool.members.T}
        fresh = np.array([price[i] > 1e-9 * scale and cand[i].tobytes() not in known for i in range(len(cand))])
        cand, price = cand[fresh], price[fresh]
        cand, first = np.unique(cand, axis=0, return_index=True) if cand.size else (cand, np.zeros(0, dtype=int))
        price = price[first]
        late = time.process_time() - t0 > time_budget
        if _TRACE:
            print(f"round {rounds}: value {value:.8g} pool {pool.size} support {(w > 1e-9 * w.max()).sum()} "
                  f"{(w > 1e-6 * w.max()).sum()} {(w > 1e-4 * w.max()).sum()} "
                  f"new {len(cand)} best {price.max(initial=0) / scale:.3g} bound {bound:.8g} hope {hope:.8g} "
                  f"t {time.process_time() - t0:.1f}")
        if late:
            break  # the last program is solved to its optimum and certified below
        if not cand.size or (rounds % CERTIFY_EVERY == 0 and value - hope <= target_gap * value):
            bound = max(bound, certified_bound(problem, parts, pool, master, ran_out=ran_out))
            if value - bound <= target_gap * value or not cand.size:
                break
        top = cand[np.argsort(-price)[:NEW_PER_INPUT * problem.k]]
        w = _pruned(problem, parts, pool, w)
        constant = float(w[0]) if pool.bits[0] == 0 else 0.0
        keep = (w > 0) & (pool.members.any(axis=0))
        kept_rows = pool.members[:, keep].T
        pool = _pool(problem, np.vstack([kept_rows, top]))
        w = _carry(pool, kept_rows, w[keep], constant)
    if master is None:
        raise InvalidProblemError(f"'{problem.name or 'the problem'}': no design found from k-RR's start")
    pool = solved_pool  # the pool of the last program solved (a later one may have failed)
    final = _solve_master_newton(problem, parts, pool, np.arange(pool.size), master.w)  # its optimum, to rounding
    if final is not None and _value(pool, parts, final.w) <= _value(pool, parts, master.w):
        master = final
        bound = max(bound, certified_bound(problem, parts, pool, master, ran_out=ran_out))
    if not math.isfinite(bound):
        bound = certified_bound(problem, parts, pool, master, ran_out=ran_out)
    w = master.w
    value = _value(pool, parts, w)
    if not value <= start[0]:  # never worse than the start (k-RR, subset selection or OUE)
        value, _, pool, w = start
    # a column whose largest mass is below MIN_MASS is residue (the interior-point method's): its low entries would
    # fall under the release's cleaning zero and leave an infinite ratio (a repair, then re-solves, at k = 32)
    used = w > max(1e-12 * float(w.max()), MIN_MASS)
    cols = pool.columns()[:, used] * w[used][None, :]
    return VarianceSolution(cols, pool.sets[used], value, bound, rounds, pool.size, pool.bits[used], "NEWTON")


def _pruned(problem: DesignProblem, parts: Pieces, pool: PatternPool, w: NDArray[np.float64]
            ) -> NDArray[np.float64]:
    """``w`` without the weights below :data:`PRUNE` of the largest, moved back onto the row sums by the
    least-norm correction on the rest (the linear program to a vertex of the same information when that fails)."""
    keep = w > PRUNE * float(w.max())
    out = np.where(keep, w, 0.0)
    if problem.dont_know_max is None or problem.dont_know_max == 0.0 or pool.bits[0] != 0:
        A = pool.columns()[:, keep]
        if problem.dont_know and pool.bits[0] == 0:
            A = np.vstack([A, (pool.bits[keep] == 0).astype(np.float64)[None, :]])
            target = np.r_[np.ones(problem.k), problem.dont_know]
        else:
            target = np.ones(problem.k)
        fixed = out[keep] + A.T @ np.linalg.lstsq(A @ A.T, target - A @ out[keep], rcond=None)[0]
        if np.all(fixed >= 0) and np.max(np.abs(A @ fixed - target)) <= 1e-13:
            out[keep] = fixed
            return out
    kept, weights = _support(problem, parts, pool, np.arange(pool.size), w)
    out = np.zeros(pool.size)
    out[kept] = weights
    return out


def _value(pool: PatternPool, parts: Pieces, w: NDArray[np.float64]) -> float:
    cols, tang = pool.columns(), pool.tangent()
    q = parts.priors[0] @ cols
    H = (tang * (w / q)) @ tang.T
    return float(np.sum(parts.R[0] * np.linalg.solve(H, parts.R[0]))) / pool.kappa - float(parts.const[0])


def _carry(pool: PatternPool, rows: NDArray[np.bool_], weights: NDArray[np.float64], constant: float
           ) -> NDArray[np.float64]:
    """The previous weights on the new pool (new patterns at 0; ``constant`` on the constant column)."""
    lookup = {r.tobytes(): wt for r, wt in zip(rows, weights)}
    out = np.array([lookup.get(pool.members[:, i].tobytes(), 0.0) for i in range(pool.size)])
    if pool.size and pool.bits[0] == 0:
        out[0] = constant
    return out
