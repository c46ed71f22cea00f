"""Maximum likelihood of the input shares from counts of set-valued answers (Remark 3.8; docs/theory.md 8).

The log-likelihood ``sum_E n_E log(pi . m(E))`` is concave on the simplex. Its KKT conditions, with
``g_x = sum_E f_E m_x(E) / (pi . m(E))`` (``f`` the answer frequencies), are ``g_x = 1`` where ``pi_x > 0`` and
``g_x <= 1`` where ``pi_x = 0`` (the multiplier of ``sum pi = 1`` is 1 since ``sum_x pi_x g_x = 1``).
:func:`mle_newton` reaches them with Newton steps on the face of the simplex (active set), quadratically;
:func:`em` is the classical fixed point ``pi_x <- pi_x g_x`` (linear, slow near the boundary);
:func:`mle_convex` the conic program. :func:`kkt_violation` measures how far a point is from optimal.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ._native import native_output_silenced
from .exceptions import InvalidMechanismError

__all__ = ["KKT_TOL", "em", "kkt_violation", "mle_convex", "mle_newton"]

#: Largest relative KKT violation of a converged estimate.
KKT_TOL = 1e-10


def kkt_violation(m: NDArray[np.float64], counts: NDArray[np.float64], pi: NDArray[np.float64]) -> float:
    """``max(|g_x - 1| on the support, max(g_x - 1, 0) off it)`` (0 at the MLE; relative: the multiplier is 1)."""
    used = counts > 0
    freq = counts[used] / counts[used].sum()
    q = pi @ m[:, used]
    if np.any(q <= 0):
        return float("inf")
    g = m[:, used] @ (freq / q)
    on = pi > 0
    return float(max(np.abs(g[on] - 1).max(initial=0.0), np.clip(g[~on] - 1, 0, None).max(initial=0.0)))


def mle_newton(m: NDArray[np.float64], counts: NDArray[np.float64], *, tol: float = KKT_TOL, max_iter: int = 500
               ) -> tuple[NDArray[np.float64], int, bool]:
    """The MLE by Newton steps on the active face of the simplex, stopping on the KKT conditions.

    Returns ``(pi, iterations, converged)``; ``converged`` means :func:`kkt_violation` ``<= tol``. Shares
    leave the support when a step would make them negative and come back when their ``g_x`` exceeds 1.
    """
    used = counts > 0
    freq = counts[used] / counts[used].sum()
    a = np.ascontiguousarray(m[:, used])
    pi = em(m, counts, tol=1e-3, max_iter=30)[0]  # a positive, well-placed start
    pi = np.clip(pi, 1e-12, None)
    pi /= pi.sum()

    def loglik(p: NDArray[np.float64]) -> float:
        q = p @ a
        return float(freq @ np.log(q)) if np.all(q > 0) else -np.inf

    for iteration in range(1, max_iter + 1):
        q = pi @ a
        g = a @ (freq / q)
        on = pi > 0
        off_gain = np.where(~on, g - 1, -np.inf)
        violation = max(np.abs(g[on] - 1).max(initial=0.0), off_gain.max(initial=0.0))
        if violation <= tol:
            return pi, iteration, True
        if off_gain.max(initial=-np.inf) > max(tol, 10 * np.abs(g[on] - 1).max(initial=0.0)):
            x = int(np.argmax(off_gain))  # a share wrongly at 0: bring it back with a little mass
            pi = pi * (1 - 1e-6)
            pi[x] = 1e-6
            continue
        s = np.flatnonzero(on)
        h = -(a[s] * (freq / q**2)) @ a[s].T
        kkt = np.block([[h, np.ones((s.size, 1))], [np.ones((1, s.size)), np.zeros((1, 1))]])
        try:
            d = np.linalg.solve(kkt, np.r_[-g[s] + 1.0, 0.0])[: s.size]
        except np.linalg.LinAlgError:
            d = np.linalg.lstsq(kkt, np.r_[-g[s] + 1.0, 0.0], rcond=None)[0][: s.size]
        neg = d < 0
        t_max = float(np.min(-pi[s][neg] / d[neg])) if neg.any() else np.inf
        t, base = min(1.0, t_max), loglik(pi)
        while t > 1e-12:
            trial = pi.copy()
            trial[s] = np.clip(pi[s] + t * d, 0.0, None)
            if t == t_max:
                trial[s[neg][np.argmin(-pi[s][neg] / d[neg])]] = 0.0  # the blocking share leaves the support
            value = loglik(trial / trial.sum())
            if value >= base - 1e-15 * abs(base):
                break
            t /= 2
        else:
            return pi, iteration, kkt_violation(m, counts, pi) <= tol
        pi = trial / trial.sum()
    return pi, max_iter, kkt_violation(m, counts, pi) <= tol


def _loglik(m: NDArray[np.float64], counts: NDArray[np.float64], pi: NDArray[np.float64]) -> float:
    q = pi @ m
    used = counts > 0
    return float(np.sum(counts[used] * np.log(q[used])))


def em(m: NDArray[np.float64], counts: NDArray[np.float64], *, tol: float = 1e-13, max_iter: int = 200_000,
       start: NDArray[np.float64] | None = None) -> tuple[NDArray[np.float64], int]:
    """EM for the mixture weights ``pi`` of the rows of ``m`` (Remark 3.8), vectorised over replicates.

    Parameters
    ----------
    m : (k, F) ndarray
        Mass matrix (rows = inputs).
    counts : (F,) or (R, F) ndarray
        Answer counts per focal set (one row per replicate).

    Returns
    -------
    pi : (k,) or (R, k) ndarray
    iterations : int
    """
    c = np.atleast_2d(np.asarray(counts, dtype=np.float64))
    total = c.sum(axis=1, keepdims=True)
    k = m.shape[0]
    pi = np.full((c.shape[0], k), 1.0 / k) if start is None else np.atleast_2d(start).astype(float).copy()
    iterations = 0
    for iterations in range(1, max_iter + 1):  # noqa: B007 - the count is returned
        q = pi @ m
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(c > 0, c / q, 0.0)
        new = pi * (ratio @ m.T) / np.where(total > 0, total, 1.0)
        change = np.max(np.abs(new - pi))
        pi = new
        if change < tol:
            break
    return (pi[0] if np.ndim(counts) == 1 else pi), iterations


def mle_convex(m: NDArray[np.float64], counts: NDArray[np.float64]) -> NDArray[np.float64]:
    """The MLE of ``pi`` as the concave program ``max sum_E n_E log(pi . m(E))`` over the simplex (Clarabel)."""
    import cvxpy as cp

    used = counts > 0
    freq = counts[used] / counts.sum()  # frequencies, not counts: a well-scaled objective for the solver
    pi = cp.Variable(m.shape[0], nonneg=True)
    objective = cp.Maximize(freq @ cp.log(m[:, used].T @ pi))
    prob = cp.Problem(objective, [cp.sum(pi) == 1])
    with native_output_silenced():
        prob.solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    if pi.value is None:
        raise InvalidMechanismError(f"the likelihood program failed ({prob.status})")
    value = np.clip(np.asarray(pi.value, dtype=float), 0.0, None)
    return _newton_polish(m[:, used], freq, value / value.sum())


def _newton_polish(m: NDArray[np.float64], freq: NDArray[np.float64], pi: NDArray[np.float64],
                   steps: int = 30) -> NDArray[np.float64]:
    """Newton steps for ``max sum freq log(pi . m)`` on the face of the simplex where ``pi > 0``.

    Interior-point solvers stop about 1e-6 short on exponential cones; on the face the problem is a
    smooth concave program with one equality constraint, solved here to machine precision.
    """
    pi = pi.copy()
    support = pi > 1e-9
    pi[~support] = 0.0
    ms = m[support]
    p = pi[support] / pi[support].sum()
    s = p.size
    for _ in range(steps):
        q = p @ ms
        g = ms @ (freq / q)
        h = -(ms * (freq / q**2)) @ ms.T
        kkt = np.block([[h, np.ones((s, 1))], [np.ones((1, s)), np.zeros((1, 1))]])
        try:
            d = np.linalg.solve(kkt, np.r_[-g, 0.0])[:s]
        except np.linalg.LinAlgError:
            break
        neg = d < 0
        t = min(1.0, float(np.min(-p[neg] / d[neg])) * 0.99) if neg.any() else 1.0
        p = p + t * d
        if np.max(np.abs(t * d)) < 1e-15:
            break
    pi[support] = np.clip(p, 0.0, None) / np.clip(p, 0.0, None).sum()
    return pi


