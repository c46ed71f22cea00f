"""A small dense convex quadratic program solved by a primal-dual interior-point method (Mehrotra's
predictor-corrector), for the Newton steps of the variance designs (docs/theory.md, section 5.7).

The Newton step of a variance design's restricted program (:func:`~designer.optimal.variance_master.
_solve_master_newton`) is a quadratic program whose Hessian is dense (every pattern's weight interacts with every
other's through the information matrix) and whose rows are few (one per input, and the structure rows). A sparse
conic solver spends most of its time on that dense block; LAPACK's Cholesky on the ``n x n`` matrix does not (a
hundred patterns: a millisecond a step).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.linalg as sla
from numpy.typing import NDArray

from ..setfunctions import _one_blas_thread as one_blas_thread

__all__ = ["DenseQPResult", "NewtonStep", "newton_step", "solve_dense_qp"]

#: Iterations at most.
MAX_ITER = 60


@dataclass(frozen=True)
class DenseQPResult:
    """The solution of :func:`solve_dense_qp`.

    Attributes
    ----------
    x : ndarray
        The minimiser.
    y : ndarray
        Multipliers of the equality rows.
    lam : ndarray
        Multipliers of the inequality rows (non-negative).
    z : ndarray
        Multipliers of ``x >= 0`` (non-negative): ``K x + c + E' y + G' lam - z = 0`` at the solution.
    converged : bool
        Whether the residuals and the complementarity gap met the tolerance.
    iterations : int
    """

    x: NDArray[np.float64]
    y: NDArray[np.float64]
    lam: NDArray[np.float64]
    z: NDArray[np.float64]
    converged: bool
    iterations: int


def _step_length(v: NDArray[np.float64], dv: NDArray[np.float64]) -> float:
    neg = dv < 0
    return min(1.0, float(np.min(-v[neg] / dv[neg]))) if neg.any() else 1.0


@dataclass(frozen=True)
class _System:
    """One iteration's factorised Newton system and point."""

    K: NDArray[np.float64]
    E: NDArray[np.float64]
    G: NDArray[np.float64]
    factor: Any
    schur_factor: Any
    Mi_Et: NDArray[np.float64]
    x: NDArray[np.float64]
    z: NDArray[np.float64]
    s: NDArray[np.float64]
    lam: NDArray[np.float64]
    r_d: NDArray[np.float64]
    r_e: NDArray[np.float64]
    r_g: NDArray[np.float64]

    def direction(self, comp_x: NDArray[np.float64], comp_s: NDArray[np.float64]) -> tuple[NDArray[np.float64], ...]:
        """The step for the complementarity rows ``X dz + Z dx = comp_x`` and ``S dlam + Lam ds = comp_s``."""
        rhs = -self.r_d + comp_x / self.x - self.G.T @ ((self.lam * self.r_g + comp_s) / self.s)
        Mi_rhs = sla.cho_solve(self.factor, rhs, check_finite=False)
        dy = (sla.cho_solve(self.schur_factor, self.E @ Mi_rhs + self.r_e, check_finite=False)
              if self.schur_factor is not None else np.zeros(0))
        dx = Mi_rhs - self.Mi_Et @ dy
        dz = (comp_x - self.z * dx) / self.x
        ds = -self.r_g - self.G @ dx
        dlam = (comp_s - self.lam * ds) / self.s
        return dx, dy, dz, ds, dlam


def solve_dense_qp(K: NDArray[np.float64], c: NDArray[np.float64], E: NDArray[np.float64], e: NDArray[np.float64],
                   G: NDArray[np.float64] | None = None, h: NDArray[np.float64] | None = None, *,
                   tol: float = 1e-12, x0: NDArray[np.float64] | None = None,
                   z0: NDArray[np.float64] | None = None) -> DenseQPResult:
    """``min 1/2 x'Kx + c'x  s.t.  E x = e,  G x <= h,  x >= 0`` with ``K`` positive semidefinite and dense.

    Parameters
    ----------
    K : (n, n) ndarray
        Symmetric positive semidefinite.
    c : (n,) ndarray
    E : (p, n) ndarray
        Equality rows (full row rank).
    e : (p,) ndarray
    G, h : ndarray, optional
        Inequality rows.
    tol : float
        Relative tolerance of the residuals and of the complementarity gap.
    x0, z0 : ndarray, optional
        A strictly positive start of ``x`` and of the multipliers of ``x >= 0`` (ones by default).

    Returns
    -------
    DenseQPResult

    Examples
    --------
    >>> import numpy as np
    >>> from designer.optimal.dense_qp import solve_dense_qp
    >>> r = solve_dense_qp(np.eye(2), np.array([-1.0, 0.0]), np.ones((1, 2)), np.array([1.0]))
    >>> np.round(r.x, 6).tolist(), r.converged
    ([1.0, 0.0], True)
    """
    n = c.size
    G = np.zeros((0, n)) if G is None else np.asarray(G, dtype=np.float64)
    h = np.zeros(0) if h is None else np.asarray(h, dtype=np.float64)
    r_ineq = G.shape[0]
    K = (K + K.T) / 2
    scale = max(1.0, float(np.abs(c).max(initial=0.0)), float(np.abs(K).max(initial=0.0)))
    x = np.ones(n) if x0 is None else np.array(x0, dtype=np.float64)
    z = np.ones(n) if z0 is None else np.array(z0, dtype=np.float64)
    s, lam = np.ones(r_ineq), np.ones(r_ineq)
    y = np.zeros(E.shape[0])
    ridge = 1e-14 * scale
    converged = False
    iterations = 0
    while iterations < MAX_ITER:
        iterations += 1
        r_d = K @ x + c + E.T @ y + G.T @ lam - z
        r_e = E @ x - e
        r_g = G @ x + s - h
        mu = (x @ z + s @ lam) / (n + r_ineq)
        if (np.abs(r_d).max(initial=0.0) <= tol * scale and np.abs(r_e).max(initial=0.0) <= tol * max(1.0, float(
                np.abs(e).max(initial=0.0))) and np.abs(r_g).max(initial=0.0) <= tol * max(1.0, float(
                np.abs(h).max(initial=0.0))) and mu <= tol * scale):
            converged = True
            break
        d_x, d_s = z / x, lam / s
        M = K + (G.T * d_s) @ G if r_ineq else K.copy()
        M.flat[::n + 1] += d_x + ridge  # the diagonal in place (np.diag would build a second n x n matrix)
        try:
            factor = sla.cho_factor(M, lower=True, check_finite=False, overwrite_a=True)
        except np.linalg.LinAlgError:
            break
        Mi_Et = sla.cho_solve(factor, E.T, check_finite=False)
        schur = E @ Mi_Et
        schur_factor = sla.cho_factor(schur + 1e-15 * max(1.0, float(np.abs(schur).max(initial=0.0))) * np.eye(
            schur.shape[0]), lower=True, check_finite=False) if schur.size else None

        system = _System(K, E, G, factor, schur_factor, Mi_Et, x, z, s, lam, r_d, r_e, r_g)
        aff = system.direction(-x * z, -s * lam)
        a = min(_step_length(x, aff[0]), _step_length(s, aff[3]), _step_length(z, aff[2]), _step_length(lam, aff[4]))
        mu_aff = ((x + a * aff[0]) @ (z + a * aff[2]) + (s + a * aff[3]) @ (lam + a * aff[4])) / (n + r_ineq)
        sigma = (mu_aff / mu) ** 3 if mu > 0 else 0.0
        dx, dy, dz, ds, dlam = system.direction(sigma * mu - x * z - aff[0] * aff[2],
                                                sigma * mu - s * lam - aff[3] * aff[4])
        # one step for primal and dual: the dual residual holds K x
        a = 0.995 * min(_step_length(x, dx), _step_length(s, ds), _step_length(z, dz), _step_length(lam, dlam))
        x, s = x + a * dx, s + a * ds
        y, z, lam = y + a * dy, z + a * dz, lam + a * dlam
    return DenseQPResult(x, y, lam, z, converged, iterations)


@dataclass(frozen=True)
class NewtonStep:
    """A Newton step of a restricted variance program, in the layout Clarabel reports (``x`` the step, ``z`` the
    multipliers of the equality rows, then the inequality rows, then ``w + d >= 0``)."""

    x: NDArray[np.float64]
    z: NDArray[np.float64]
    status: str


def newton_step(hess: NDArray[np.float64], grad: NDArray[np.float64], w: NDArray[np.float64], A_eq: Any,
                b_eq: NDArray[np.float64], A_ub: Any, b_ub: NDArray[np.float64], warm: bool = False,
                tol: float = 1e-12) -> NewtonStep:
    """The step ``d`` minimising ``grad . d + d' hess d / 2`` subject to ``A_eq (w + d) = b_eq``,
    ``A_ub (w + d) <= b_ub`` and ``w + d >= 0``, solved densely in ``x = w + d`` (:func:`solve_dense_qp`).
    ``warm``: the interior-point method starts near ``w`` (``x = w`` plus a tenth of its mean positive entry, the
    multipliers of ``x >= 0`` the positive part of the gradient's component off the rows' span plus a tenth of its
    mean size) instead of at ones: about 10 iterations instead of 14 on the steps of column generation. ``tol``:
    the interior-point method's relative tolerance (:func:`solve_dense_qp`); a looser one serves a step whose
    direction is all that is needed (column generation's rounds: 7 iterations at 1e-8 instead of 11).

    Examples
    --------
    >>> import numpy as np
    >>> from designer.optimal.dense_qp import newton_step
    >>> step = newton_step(np.eye(2), np.array([-1.0, 1.0]), np.array([0.5, 0.5]), np.ones((1, 2)), np.ones(1),
    ...                    np.zeros((0, 2)), np.zeros(0))
    >>> np.round(step.x, 6).tolist(), step.status
    ([0.5, -0.5], 'Solved')
    """
    E = A_eq.toarray() if hasattr(A_eq, "toarray") else np.asarray(A_eq, dtype=np.float64)
    G = A_ub.toarray() if hasattr(A_ub, "toarray") else np.asarray(A_ub, dtype=np.float64)
    c = grad - hess @ w
    x0 = z0 = None
    if warm and np.any(w > 0):
        reduced = hess @ w + c  # = grad
        reduced = reduced + E.T @ np.linalg.lstsq(E.T, -reduced, rcond=None)[0]
        x0 = w + 0.1 * float(w[w > 0].mean())
        z0 = np.maximum(reduced, 0.0) + 0.1 * max(float(np.abs(reduced).mean()), 1e-300)
    with one_blas_thread():  # small dense factorizations: BLAS threads cost more than they save, worst when loaded
        res = solve_dense_qp(hess, c, E, b_eq, G, b_ub, tol=tol, x0=x0, z0=z0)
    return NewtonStep(res.x - w, np.concatenate([res.y, res.lam, res.z]),
                      "Solved" if res.converged else "NotConverged")
