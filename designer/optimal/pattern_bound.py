"""A proved bound on the price of every staircase pattern at once, without enumerating them: the semidefinite
relaxation of a binary quadratic program (docs/theory.md, section 5.11).

Past 20 inputs the ``2**k`` patterns of a variance design cannot be priced one by one. What the certificate of
section 5.7 needs is weaker than the best pattern: row multipliers ``y`` under which *no* pattern has a positive
reduced price. For a pattern ``v in {0, 1}^k`` (scaled column ``a + b v``, answer probability
``q(v) = a + b pi . v > 0``) the reduced price is ``|Z'v|^2 / q(v) - (a + b v) . y``; multiplied by ``q(v)`` it is the
quadratic ``phi(v) = v'Qv - (a + b pi . v)(a 1 . y + b y . v)`` with ``Q = Z Z'``. Writing ``v = (1 + s) / 2`` with
``s in {-1, 1}^k`` and one more sign for the linear part, ``phi(v) = s'Ls`` over ``{-1, 1}^(k+1)``, and for every
``d``, ``s'Ls <= sum(d) + (k + 1) max(0, lambda_max(L - Diag d))`` (the eigenvalue form of Shor's relaxation, exact
for any ``d``: no solver accuracy enters the bound). :func:`binary_quadratic_bound` minimises it over ``d`` by a
primal-dual interior-point method for the max-cut relaxation (Helmberg, Rendl, Vanderbei and Wolkowicz 1996) and
returns the value at its last ``d``. Up to 32 inputs no relaxation is needed: :func:`exact_shift` finds, by
branch and bound over all ``2**k`` patterns, the least shift of the row multipliers that prices every one out.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

__all__ = ["binary_quadratic_bound", "exact_shift", "lift"]

#: Iterations of the interior-point method at most, and its relative stopping gap.
MAX_ITER = 60
GAP = 1e-9
#: Tree nodes bounded at once by :func:`exact_shift` (memory: this times ``2**EXHAUSTIVE_INPUTS`` floats).
EXACT_CHUNK = 256
#: :func:`exact_shift` enumerates at most this many inputs whole (the least likely); the others form its tree.
EXHAUSTIVE_INPUTS = 13
#: The multiply-adds :func:`exact_shift`'s tree may spend (about 3 s on one core), unless the whole tree costs at
#: most an eighth of it (every tree up to 24 inputs: it is then never cut short).
EXACT_WORK = 4e9
#: Dinkelbach's steps of :func:`exact_shift` at most (two to four in practice).
DINKELBACH_STEPS = 200


def lift(A: NDArray[np.float64], a: NDArray[np.float64], a0: float) -> NDArray[np.float64]:
    """The ``(n + 1) x (n + 1)`` matrix ``L`` with ``v'Av + a.v + a0 = s'Ls`` for ``s = (s_0, s_1, .., s_n)`` in
    ``{-1, 1}^(n+1)`` and ``v_i = (1 + s_0 s_i) / 2`` (``s'Ls`` is even in ``s``, so its maximum over
    ``{-1, 1}^(n+1)`` is that of the quadratic over ``{0, 1}^n``).

    Examples
    --------
    >>> import numpy as np
    >>> from designer.optimal.pattern_bound import lift
    >>> A, a = np.array([[1.0, 2.0], [2.0, -1.0]]), np.array([0.5, -3.0])
    >>> s = np.array([1.0, 1.0, -1.0])  # v = (1, 0)
    >>> float(s @ lift(A, a, 0.25) @ s), 1.0 + 0.5 + 0.25
    (1.75, 1.75)
    """
    A = (A + A.T) / 2
    n = A.shape[0]
    L = np.zeros((n + 1, n + 1))
    L[1:, 1:] = A / 4
    linear = (A.sum(axis=1) + a) / 4
    L[0, 1:] = linear
    L[1:, 0] = linear
    L[0, 0] = float(A.sum()) / 4 + float(a.sum()) / 2 + a0
    return L


def binary_quadratic_bound(L: NDArray[np.float64]) -> float:
    """A proved upper bound on ``max s'Ls`` over ``s in {-1, 1}^n``.

    ``s'Ls = s'(L - Diag d)s + sum(d) <= n lambda_max(L - Diag d) + sum(d)`` for every ``d``; ``d`` is the dual
    point of the max-cut relaxation ``max <L, X>, diag X = 1, X >= 0``, found by the primal-dual interior-point
    method of Helmberg et al. (1996). The bound is evaluated at the final ``d`` from an eigenvalue, so it holds
    whatever the method's accuracy.

    Examples
    --------
    >>> import itertools
    >>> import numpy as np
    >>> from designer.optimal.pattern_bound import binary_quadratic_bound
    >>> L = np.random.default_rng(0).normal(size=(8, 8))
    >>> best = max(np.array(s) @ L @ np.array(s) for s in itertools.product([-1, 1], repeat=8))
    >>> bool(best <= binary_quadratic_bound(L) <= 1.2 * best)
    True
    """
    L = (np.asarray(L, dtype=np.float64) + np.asarray(L, dtype=np.float64).T) / 2
    n = L.shape[0]
    scale = max(float(np.abs(L).max(initial=0.0)), 1e-300)
    X = np.eye(n)
    d = np.abs(L).sum(axis=1) * 1.1 + 1e-9 * scale
    Z = np.diag(d) - L
    mu = float(np.sum(Z * X)) / (2 * n)
    for _ in range(MAX_ITER):
        primal, dual = float(np.sum(L * X)), float(d.sum())
        if dual - primal <= GAP * max(abs(dual), abs(primal), 1e-12 * scale):
            break
        try:
            Zi = np.linalg.inv(Z)
        except np.linalg.LinAlgError:
            break
        Zi = (Zi + Zi.T) / 2
        try:
            dd = np.linalg.solve(Zi * X, mu * np.diag(Zi) - 1.0)
        except np.linalg.LinAlgError:
            break
        dX = -Zi @ (dd[:, None] * X) + mu * Zi - X
        dX = (dX + dX.T) / 2
        a_p = _psd_step(X, dX)
        a_d = _psd_step(Z, np.diag(dd))
        X = X + a_p * dX
        d = d + a_d * dd
        Z = np.diag(d) - L
        mu = float(np.sum(X * Z)) / (2 * n)
        if a_p + a_d > 1.8:
            mu /= 2
    top = float(np.linalg.eigvalsh(L - np.diag(d))[-1])
    return float(d.sum()) + n * max(0.0, top)


def _psd_step(M: NDArray[np.float64], dM: NDArray[np.float64]) -> float:
    """The longest step in ``(0, 1]`` (shrunk by 0.8, then 0.95) that keeps ``M + a dM`` positive definite."""
    a = 1.0
    while a > 1e-12:
        try:
            np.linalg.cholesky(M + a * dM)
            break
        except np.linalg.LinAlgError:
            a *= 0.8
    return a * 0.95 if a < 1.0 else a


def _bits(n: int) -> NDArray[np.float64]:
    """Every ``v in {0, 1}^n`` as the rows of a ``(2**n, n)`` array (row ``i`` holds the bits of ``i``)."""
    return ((np.arange(1 << n)[:, None] >> np.arange(n)) & 1).astype(np.float64)


def exact_shift(Q: NDArray[np.float64], prior: NDArray[np.float64], y: NDArray[np.float64], u: NDArray[np.float64],
                a: float, b: float) -> float | None:
    """The least ``rho >= 0`` under which no pattern has a positive price for the row multipliers ``y + rho u``
    (``u > 0``), over all ``2**k`` patterns (docs/theory.md 5.11) by branch and bound, with a margin for the float
    evaluation.

    The price times ``q(v)`` is ``phi(v) = v'Qv - p(v) (a 1.y + b y.v)`` with ``p(v) = a + b pi.v > 0``, and
    ``y + rho u`` subtracts ``rho g(v)``, ``g(v) = p(v) (a 1.u + b u.v) >= a^2 1.u > 0``: so ``rho`` must be at least
    ``max_v phi(v) / g(v)``. Dinkelbach's iteration finds it: for ``w = y + rho u`` the price times ``q(v)`` is
    ``f(v) = phi(v) - rho g(v)``; while some pattern has ``f(v)`` above the rounding tolerance, ``rho`` becomes
    ``rho + f(v) / g(v)`` (that pattern's ratio), and it stops when none has. Whether one has is decided by
    :func:`_positive_leaves`. The margin covers the rounding of each ``f`` (at most ``1e-12`` of the sum of its
    terms' sizes) divided by the least ``g``.

    None when the tree would cost more than :data:`EXACT_WORK` multiply-adds (its bounds are loose at flat priors:
    k = 32 at a Zipf prior, eps 1, kept 29% of the leaves): the caller then bounds the price by the relaxation.
    A tree that costs at most an eighth of it whole (up to 24 inputs) is never cut short.

    Examples
    --------
    >>> import itertools
    >>> import numpy as np
    >>> from designer.optimal.pattern_bound import exact_shift
    >>> rng = np.random.default_rng(0)
    >>> Z = rng.normal(size=(6, 5)); Q = Z @ Z.T
    >>> prior, y, u = np.full(6, 1 / 6), rng.normal(size=6), np.ones(6)
    >>> rho = exact_shift(Q, prior, y, u, 0.5, 0.5)
    >>> prices = [v @ Q @ v - (0.5 + 0.5 * prior @ v) * (0.5 * (y + rho * u).sum() + 0.5 * (y + rho * u) @ v)
    ...           for v in map(np.array, itertools.product([0.0, 1.0], repeat=6))]
    >>> bool(max(prices) <= 0.0)
    True
    """
    k = Q.shape[0]
    # the least likely inputs are enumerated whole (the lower half); the tree fixes the likeliest first: a node's
    # free inputs then move the price least, and its bound is close (k = 32, geometric prior, eps 2: 2.5 s, and
    # 55 s with the inputs in the prior's order reversed)
    order = np.argsort(prior, kind="stable")
    Q, prior, y, u = Q[np.ix_(order, order)], prior[order], y[order], u[order]
    n_low = min(k // 2, EXHAUSTIVE_INPUTS)
    low, high = np.arange(n_low), np.arange(n_low, k)
    V_low, V_high = _bits(n_low), _bits(k - n_low)
    quad_low = np.einsum("ij,jk,ik->i", V_low, Q[np.ix_(low, low)], V_low)
    quad_high = np.einsum("ij,jk,ik->i", V_high, Q[np.ix_(high, high)], V_high)
    cross = 2.0 * (V_high @ Q[np.ix_(high, low)])  # gamma's quadratic part: (2**(k - n_low), n_low)
    p_low, p_high = b * (V_low @ prior[low]), a + b * (V_high @ prior[high])
    u_low, u_high = b * (V_low @ u[low]), a * float(u.sum()) + b * (V_high @ u[high])
    least_g = a * a * float(u.sum())
    rho = 0.0
    whole = 2.0 * V_high.shape[0] * V_low.shape[0] * max(n_low, 1)  # every node of the tree, once
    work = [math.inf if whole <= EXACT_WORK / 8 else EXACT_WORK]
    for _ in range(DINKELBACH_STEPS):
        w = y + rho * u
        size = float(np.abs(Q).sum()) + (a + b * float(np.abs(prior).sum())) * (a + b) * float(np.abs(w).sum())
        w_low, w_high = b * (V_low @ w[low]), a * float(w.sum()) + b * (V_high @ w[high])
        alpha = quad_high - p_high * w_high
        beta = quad_low - p_low * w_low
        gamma = cross - b * (p_high[:, None] * w[low][None, :] + w_high[:, None] * prior[low][None, :])
        leaves = _positive_leaves(alpha, beta, gamma, V_low, 1e-12 * size, work)
        if leaves is None:
            return rho + 2e-12 * size / least_g
        if not leaves:
            return None  # past the work allowed
        h, l = leaves
        f = alpha[h] + beta[l] + np.einsum("ij,ij->i", gamma[h], V_low[l])
        g = (p_high[h] + p_low[l]) * (u_high[h] + u_low[l])
        rho += float(np.max(f / g))
    raise ArithmeticError(f"exact_shift: Dinkelbach's iteration did not settle in {DINKELBACH_STEPS} steps")


def _positive_leaves(alpha: NDArray[np.float64], beta: NDArray[np.float64], gamma: NDArray[np.float64],
                     V_low: NDArray[np.float64], tol: float, work: list[float]
                     ) -> tuple[NDArray[np.int64], NDArray[np.int64]] | tuple[()] | None:
    """The upper halves ``h`` with ``alpha(h) + max_l (beta(l) + gamma(h) . l) > tol`` and each one's best lower half
    ``l``; None when there is none.

    With ``v = (h, l)`` the price times ``q(v)`` is ``alpha(h) + beta(l) + gamma(h) . l``. The upper halves form a
    binary tree (a node: those agreeing on the likeliest inputs), and over a node's set ``S``
    ``max f <= max_S alpha + max_l (beta(l) + gamma_S . l)``, ``gamma_S`` the entrywise maximum of ``gamma`` over
    ``S`` (``l >= 0``). A node whose bound is at most ``tol`` is not split; at the leaves (one upper half) the bound
    is the price of its best pattern. The maxima of every node are taken level by level, from the leaves up.
    ``work[0]``, the multiply-adds left, is spent: ``()`` when a level would overspend it."""
    depth = alpha.size.bit_length() - 1  # alpha holds 2**depth upper halves
    tops, gammas = [alpha], [gamma]
    for _ in range(depth):  # level d - 1 from level d: the pairs of siblings (node c's children are 2c and 2c + 1)
        tops.append(tops[-1].reshape(-1, 2).max(axis=1))
        gammas.append(gammas[-1].reshape(gammas[-1].shape[0] // 2, 2, gamma.shape[1]).max(axis=1))
    tops.reverse()
    gammas.reverse()
    start = min(depth, 6)
    nodes = np.arange(1 << start)
    for d in range(start, depth + 1):
        work[0] -= float(nodes.size) * V_low.shape[0] * max(V_low.shape[1], 1)
        if work[0] < 0:
            return ()
        best, where = _inner(beta, gammas[d][nodes], V_low)
        bound = tops[d][nodes] + best
        keep = bound > tol
        if d == depth:
            return (nodes[keep], where[keep]) if keep.any() else None
        nodes = (2 * nodes[keep][:, None] + np.arange(2)[None, :]).ravel()
        if not nodes.size:
            return None
    return None


def _inner(beta: NDArray[np.float64], gamma: NDArray[np.float64], V_low: NDArray[np.float64]
           ) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """``max_l (beta(l) + gamma_i . l)`` for each row ``gamma_i``, and the ``l`` reaching it, in chunks of
    :data:`EXACT_CHUNK` rows."""
    best = np.empty(gamma.shape[0])
    where = np.empty(gamma.shape[0], dtype=np.int64)
    for start in range(0, gamma.shape[0], EXACT_CHUNK):
        values = V_low @ gamma[start:start + EXACT_CHUNK].T + beta[:, None]
        where[start:start + EXACT_CHUNK] = np.argmax(values, axis=0)
        best[start:start + EXACT_CHUNK] = values[where[start:start + EXACT_CHUNK], np.arange(values.shape[1])]
    return best, where
