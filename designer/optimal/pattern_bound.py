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
returns the value at its last ``d``. Up to 24 inputs no relaxation is needed: :func:`exact_shift` prices all
``2**k`` patterns in one pass and returns the least shift of the row multipliers that prices every one out.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["binary_quadratic_bound", "exact_shift", "lift"]

#: Iterations of the interior-point method at most, and its relative stopping gap.
MAX_ITER = 60
GAP = 1e-9
#: Patterns of the upper half priced at once by :func:`exact_shift` (memory: this times ``2**(k // 2)`` floats).
EXACT_CHUNK = 256


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
                a: float, b: float) -> float:
    """The least ``rho >= 0`` under which no pattern has a positive price for the row multipliers ``y + rho u``
    (``u > 0``), found over all ``2**k`` patterns (docs/theory.md 5.11), with a margin for the float evaluation.

    The price times ``q(v)`` is ``phi(v) = v'Qv - p(v) (a 1.y + b y.v)`` with ``p(v) = a + b pi.v > 0``, and
    ``y + rho u`` subtracts ``rho g(v)``, ``g(v) = p(v) (a 1.u + b u.v) >= a^2 1.u > 0``: so ``rho`` must be at least
    ``max_v phi(v) / g(v)``. The patterns are split into two halves of the inputs; the quadratic's cross term of
    every pair of halves is one matrix product per chunk of the upper half. The margin covers the rounding of each
    ``phi`` (at most ``1e-12`` of the sum of its terms' sizes, for k <= 24) divided by the least ``g``.

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
    low_n = k // 2
    low, high = np.arange(low_n), np.arange(low_n, k)
    V_low, V_high = _bits(low_n), _bits(k - low_n)
    quad_low = np.einsum("ij,jk,ik->i", V_low, Q[np.ix_(low, low)], V_low)
    quad_high = np.einsum("ij,jk,ik->i", V_high, Q[np.ix_(high, high)], V_high)
    cross = 2.0 * (V_high @ Q[np.ix_(high, low)])  # (2**(k - low_n), low_n): times V_low' per chunk
    p_low, p_high = b * (V_low @ prior[low]), a + b * (V_high @ prior[high])
    y_low, y_high = b * (V_low @ y[low]), a * float(y.sum()) + b * (V_high @ y[high])
    u_low, u_high = b * (V_low @ u[low]), a * float(u.sum()) + b * (V_high @ u[high])
    worst = 0.0
    for start in range(0, V_high.shape[0], EXACT_CHUNK):
        rows = slice(start, start + EXACT_CHUNK)
        p = p_high[rows, None] + p_low[None, :]
        phi = (quad_high[rows, None] + quad_low[None, :] + cross[rows] @ V_low.T
               - p * (y_high[rows, None] + y_low[None, :]))
        worst = max(worst, float(np.max(phi / (p * (u_high[rows, None] + u_low[None, :])))))
    size = float(np.abs(Q).sum()) + (a + b * float(np.abs(prior).sum())) * (a + b) * float(np.abs(y).sum())
    return worst + 2e-12 * size / (a * a * float(u.sum()))
