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

from .._internal.native import native_output_silenced
from ..exceptions import InvalidMechanismError

__all__ = ["KKT_TOL", "LOGLIK_TOL", "at_maximum", "em", "gap_tolerance", "kkt_violation", "loglik_gap", "mle_convex",
           "mle_newton", "share_functionals", "tangent_form"]

#: Largest relative KKT violation of a converged estimate.
KKT_TOL = 1e-10
#: Largest bound on how far the log-likelihood (natural log, summed over the answers) at a converged estimate
#: may lie below its maximum (:func:`loglik_gap`): on a flat likelihood (many answers through inputs whose
#: answer distributions barely differ) a relative KKT violation of 1e-10 still leaves shares far from the
#: maximum, so both tests must hold.
LOGLIK_TOL = 1e-9


def loglik_gap(m: NDArray[np.float64], counts: NDArray[np.float64], pi: NDArray[np.float64]) -> float:
    """An upper bound on ``max loglik - loglik(pi)`` over the simplex: ``n (max_x g_x - 1)`` (``inf`` where an
    observed answer has probability 0).

    The log-likelihood is concave with gradient ``n g`` and ``pi . g = 1``, so for its maximizer ``pi*``,
    ``loglik(pi*) <= loglik(pi) + n g . (pi* - pi) <= loglik(pi) + n (max_x g_x - 1)`` (the Frank-Wolfe gap):
    an absolute test, in log-likelihood units, that a relative KKT test cannot give when ``g`` is nearly 1
    everywhere.

    Examples
    --------
    30 answers ``{yes}``, 50 ``{no}`` and 20 "don't know" through ``Q_2x3(0.6, 0.2)``; the MLE is Eq 2's
    ``(50 * 0.2 - 30 * 0.6) / (80 * (0.2 - 0.6)) = 0.25``:

    >>> import numpy as np
    >>> import designer
    >>> M = designer.Q_2x3(0.6, 0.2).matrix
    >>> counts = np.array([30.0, 50.0, 20.0])

    At the uniform prior the log-likelihood is at most ``100 * 0.1`` below its maximum:

    >>> from designer.estimation.mle import loglik_gap
    >>> loglik_gap(M, counts, np.array([0.25, 0.75])), round(loglik_gap(M, counts, np.array([0.5, 0.5])), 9)
    (0.0, 10.0)
    """
    used = counts > 0
    n = float(counts[used].sum())
    q = pi @ m[:, used]
    if np.any(q <= 0):
        return float("inf")
    g = m[:, used] @ (counts[used] / n / q)
    return float(n * max(float(g.max()) - 1.0, 0.0))


def gap_tolerance(n: float) -> float:
    """:data:`LOGLIK_TOL` plus the rounding of ``n (max g - 1)`` in double precision (``n`` answers).

    Examples
    --------
    >>> from designer.estimation.mle import gap_tolerance
    >>> bool(1e-9 <= gap_tolerance(100.0) < 1.1e-9)
    True
    """
    return LOGLIK_TOL + 16 * np.finfo(float).eps * n


def at_maximum(m: NDArray[np.float64], counts: NDArray[np.float64], pi: NDArray[np.float64], *,
               tol: float = KKT_TOL) -> bool:
    """Both tests of a converged estimate: :func:`kkt_violation` ``<= tol`` (relative) and :func:`loglik_gap`
    within :func:`gap_tolerance` (absolute).

    Examples
    --------
    >>> import numpy as np
    >>> import designer
    >>> M = designer.Q_2x3(0.6, 0.2).matrix
    >>> counts = np.array([30.0, 50.0, 20.0])
    >>> from designer.estimation.mle import at_maximum
    >>> at_maximum(M, counts, np.array([0.25, 0.75])), at_maximum(M, counts, np.array([0.5, 0.5]))
    (True, False)
    """
    return bool(kkt_violation(m, counts, pi) <= tol and loglik_gap(m, counts, pi) <= gap_tolerance(
        float(counts[counts > 0].sum())))


def tangent_form(matrix: NDArray[np.float64]) -> NDArray[np.float64]:
    """A ``(k, k)`` quadratic form restricted to the simplex's tangent space ``{d : sum d = 0}``, in the
    coordinates ``d_1..d_{k-1}`` (``d_k = -sum``): ``B' A B`` with ``B = [I; -1']``, shape ``(k-1, k-1)``.

    Examples
    --------
    >>> import numpy as np
    >>> from designer.estimation.mle import tangent_form
    >>> tangent_form(np.eye(3)).tolist()  # B' I B with B = [I; -1']
    [[2.0, 1.0], [1.0, 2.0]]
    """
    column, row = matrix[:-1, -1], matrix[-1, :-1]
    return np.asarray(matrix[:-1, :-1] - column[:, None] - row[None, :] + matrix[-1, -1])


def share_functionals(k: int) -> NDArray[np.float64]:
    """``B'`` of :func:`tangent_form`: column ``j`` is share ``j`` in the tangent coordinates, ``(k-1, k)``.

    Examples
    --------
    >>> from designer.estimation.mle import share_functionals
    >>> share_functionals(3).tolist()  # share j of (d1, d2) with d3 = -d1 - d2
    [[1.0, 0.0, -1.0], [0.0, 1.0, -1.0]]
    """
    return np.hstack([np.eye(k - 1), -np.ones((k - 1, 1))])


def kkt_violation(m: NDArray[np.float64], counts: NDArray[np.float64], pi: NDArray[np.float64]) -> float:
    """``max(|g_x - 1| on the support, max(g_x - 1, 0) off it)`` (0 at the MLE; relative: the multiplier is 1).

    Examples
    --------
    >>> import numpy as np
    >>> import designer
    >>> M = designer.Q_2x3(0.6, 0.2).matrix
    >>> counts = np.array([30.0, 50.0, 20.0])
    >>> from designer.estimation.mle import kkt_violation
    >>> kkt_violation(M, counts, np.array([0.25, 0.75])), round(kkt_violation(M, counts, np.array([0.5, 0.5])), 12)
    (0.0, 0.1)
    """
    used = counts > 0
    freq = counts[used] / counts[used].sum()
    q = pi @ m[:, used]
    if np.any(q <= 0):
        return float("inf")
    g = m[:, used] @ (freq / q)
    on = pi > 0
    return float(max(np.abs(g[on] - 1).max(initial=0.0), np.clip(g[~on] - 1, 0, None).max(initial=0.0)))


def mle_newton(m: NDArray[np.float64], counts: NDArray[np.float64], *, tol: float = KKT_TOL, max_iter: int = 500,
               start: NDArray[np.float64] | None = None) -> tuple[NDArray[np.float64], int, bool]:
    """The MLE by Newton steps on the active face of the simplex, stopping on the KKT conditions.

    Returns ``(pi, iterations, converged)``; ``converged`` means :func:`kkt_violation` ``<= tol`` and
    :func:`loglik_gap` within :func:`gap_tolerance` (:func:`at_maximum`), both computed at the returned ``pi``
    (never carried over from ``start``). ``start`` (default: uniform) is where the first EM iterations begin: the
    verdict does not depend on it, only the work done.

    Every step raises the log-likelihood. On the face ``{pi_x > 0}`` the step solves the reduced Newton system
    with a Levenberg term proportional to the reduced gradient, so it is defined and ascending also where the
    shares are not identified (fewer answer sets than inputs: the Hessian is singular there) and still converges
    superlinearly. A share whose step would turn negative leaves the face; a share at 0 whose ``g_x`` exceeds 1
    comes back by an exact line search along ``e_x - pi``. When the steps stall above ``tol`` (rounding on a
    badly scaled problem), EM iterations and then the conic program (:func:`mle_convex`) take over and the
    point with the smallest violation is returned.

    Examples
    --------
    >>> import numpy as np
    >>> import designer
    >>> M = designer.Q_2x3(0.6, 0.2).matrix
    >>> counts = np.array([30.0, 50.0, 20.0])
    >>> from designer.estimation.mle import mle_newton
    >>> pi, iterations, converged = mle_newton(M, counts)
    >>> pi.round(8).tolist(), converged
    ([0.25, 0.75], True)
    """
    used = counts > 0
    freq = counts[used] / counts[used].sum()
    a = np.ascontiguousarray(m[:, used])
    first = None if start is None else np.clip(np.asarray(start, dtype=np.float64), 1e-9, None)
    start = em(m, counts, tol=1e-3, max_iter=30, start=None if first is None else first / first.sum())[0]
    start = np.clip(start, 1e-12, None)  # a positive, well-placed start
    total = float(counts[used].sum())
    pi, iterations, converged = _active_newton(a, freq, start / start.sum(), tol, max_iter, total)
    if converged:
        return pi, iterations, True

    def badness(point: NDArray[np.float64]) -> tuple[bool, float]:  # at the maximum first, then the violation
        return not at_maximum(m, counts, point, tol=tol), kkt_violation(m, counts, point)

    # stalled (rounding on a badly scaled problem): EM, then the conic program, each finished by Newton
    best, best_badness = pi, badness(pi)
    for other in (lambda: em(m, counts, tol=1e-15, max_iter=20_000, start=pi)[0], lambda: mle_convex(m, counts)):
        try:
            point, more, _ = _active_newton(a, freq, other(), tol, max_iter, total)
        except InvalidMechanismError:
            continue
        iterations += more
        found = badness(point)
        if found < best_badness:
            best, best_badness = point, found
        if not found[0]:
            break
    return best, iterations, not best_badness[0]


def _active_newton(a: NDArray[np.float64], freq: NDArray[np.float64], pi: NDArray[np.float64], tol: float,
                   max_iter: int, total: float) -> tuple[NDArray[np.float64], int, bool]:
    """Active-set Newton from ``pi`` on the used answer columns ``a`` with frequencies ``freq`` of ``total``
    answers, until the relative KKT violation is at most ``tol`` and the log-likelihood's possible rise
    (:func:`loglik_gap`) is within :func:`gap_tolerance`."""
    iteration = 0
    gap_tol = gap_tolerance(total)
    for iteration in range(1, max_iter + 1):
        q = pi @ a
        if not np.all(q > 0):
            return pi, iteration, False
        g = a @ (freq / q)
        on = pi > 0
        on_violation = float(np.abs(g[on] - 1).max(initial=0.0))
        off_gain = np.where(on, -np.inf, g - 1)
        if max(on_violation, off_gain.max(initial=0.0)) <= tol and total * max(float(g.max()) - 1, 0.0) <= gap_tol:
            return pi, iteration, True
        best_off = float(off_gain.max(initial=-np.inf))
        if best_off > on_violation and (best_off > tol or total * best_off > gap_tol):
            entered = _enter(a, freq, pi, int(np.argmax(off_gain)))  # a share wrongly at 0 comes back
            if np.array_equal(entered, pi):
                break
            pi = entered
            continue
        step = _face_step(a, freq, pi, g)
        if step is None:
            break
        pi = step
    return pi, iteration, False


def _face_step(a: NDArray[np.float64], freq: NDArray[np.float64], pi: NDArray[np.float64],
               g: NDArray[np.float64]) -> NDArray[np.float64] | None:
    """One damped Newton step on the face ``{pi_x > 0}``; None when no step raises the log-likelihood."""
    s = np.flatnonzero(pi > 0)
    if s.size < 2:
        return None
    q = pi @ a
    hess = (a[s] * (freq / q**2)) @ a[s].T  # minus the Hessian on the face, positive semidefinite
    # coordinates on the face: the last support share follows from the others (sum of the shares fixed)
    reduced_grad = g[s[:-1]] - g[s[-1]]
    reduced_hess = tangent_form(hess)
    mu = float(np.abs(reduced_grad).max())  # Levenberg term: solvable when the shares are not identified
    try:
        y = np.linalg.solve(reduced_hess + mu * np.eye(s.size - 1), reduced_grad)
    except np.linalg.LinAlgError:
        return None
    d = np.r_[y, -y.sum()]
    slope = float(g[s] @ d)
    if not slope > 0:
        return None
    neg = d < 0
    blocking = int(np.argmin(np.where(neg, -pi[s] / np.where(neg, d, -1.0), np.inf)))
    t_max = float(-pi[s][blocking] / d[blocking]) if neg.any() else np.inf
    base = _mean_loglik(a, freq, pi)
    noise = 1e-14 * max(1.0, abs(base))
    t = min(1.0, t_max)
    while t == t_max or t > 1e-14:
        trial = pi.copy()
        trial[s] = np.clip(pi[s] + t * d, 0.0, None)
        if t == t_max:
            trial[s[blocking]] = 0.0  # the blocking share leaves the face
        trial /= trial.sum()
        value = _mean_loglik(a, freq, trial)
        if value >= base + 1e-4 * t * slope or (t == t_max and value >= base - noise):
            return trial  # a rise, or a share leaving the face at no loss (active-set progress)
        if abs(value - base) <= noise and _face_violation(a, freq, trial) < _face_violation(a, freq, pi):
            return trial  # near the maximum the rise is below rounding: the gradient decides
        t /= 2
    return None


def _face_violation(a: NDArray[np.float64], freq: NDArray[np.float64], pi: NDArray[np.float64]) -> float:
    q = pi @ a
    if not np.all(q > 0):
        return np.inf
    on = pi > 0
    return float(np.abs(a[on] @ (freq / q) - 1).max())


def _enter(a: NDArray[np.float64], freq: NDArray[np.float64], pi: NDArray[np.float64], x: int
           ) -> NDArray[np.float64]:
    """``pi + t (e_x - pi)`` at the ``t`` in [0, 1] that maximizes the log-likelihood (concave in ``t``)."""
    q = pi @ a
    dq = a[x] - q  # the answer distribution moves along dq
    lo, hi = 0.0, 1.0
    end = q + dq
    if np.all(end > 0) and float(freq @ (dq / end)) >= 0:
        t = 1.0  # the likelihood rises all the way to pi = e_x
    else:
        for _ in range(200):  # bisection on the derivative, decreasing in t
            t = 0.5 * (lo + hi)
            if float(freq @ (dq / (q + t * dq))) > 0:
                lo = t
            else:
                hi = t
            if hi - lo < 1e-16:
                break
        t = lo
    out = (1 - t) * pi
    out[x] += t
    return out


def _mean_loglik(a: NDArray[np.float64], freq: NDArray[np.float64], pi: NDArray[np.float64]) -> float:
    q = pi @ a
    return float(freq @ np.log(q)) if np.all(q > 0) else -np.inf


def _loglik(m: NDArray[np.float64], counts: NDArray[np.float64], pi: NDArray[np.float64]) -> float:
    q = pi @ m
    used = counts > 0
    with np.errstate(divide="ignore"):  # an observed answer of probability 0: -inf
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

    Examples
    --------
    >>> import numpy as np
    >>> import designer
    >>> M = designer.Q_2x3(0.6, 0.2).matrix
    >>> counts = np.array([30.0, 50.0, 20.0])
    >>> from designer.estimation.mle import em
    >>> pi, iterations = em(M, counts)
    >>> pi.round(8).tolist()
    [0.25, 0.75]
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
    """The MLE of ``pi`` as the concave program ``max sum_E n_E log(pi . m(E))`` over the simplex (Clarabel).

    Examples
    --------
    >>> import numpy as np
    >>> import designer
    >>> M = designer.Q_2x3(0.6, 0.2).matrix
    >>> counts = np.array([30.0, 50.0, 20.0])
    >>> from designer.estimation.mle import mle_convex
    >>> mle_convex(M, counts).round(6).tolist()
    [0.25, 0.75]
    """
    import cvxpy as cp

    used = counts > 0
    freq = counts[used] / counts.sum()  # frequencies, not counts: a well-scaled objective for the solver
    pi = cp.Variable(m.shape[0], nonneg=True)
    objective = cp.Maximize(freq @ cp.log(m[:, used].T @ pi))
    prob = cp.Problem(objective, [cp.sum(pi) == 1])
    import warnings

    with native_output_silenced(), warnings.catch_warnings():
        # cvxpy's "may be inaccurate": the point is polished below and its verdict read from the KKT conditions
        warnings.simplefilter("ignore", UserWarning)
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


