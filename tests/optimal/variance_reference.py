"""An independent reference for the variance-optimal eps-SLDP designs: the best mean, and the best largest, share
variance over ALL eps-SLDP mechanisms at a prior, certified by a Lagrange-dual bound.

Written apart from ``designer.optimal`` (nothing here imports it, nor cvxpy): a barrier (interior-point) method
written out in numpy, Newton steps on the equality-constrained barrier problem, and a dual certificate computed at
the end from the returned point alone. It is meant for k = 2..8 (at most 256 patterns).

The quantity
------------
A mechanism ``M`` (k inputs x answers, rows summing to 1) at the prior ``pi`` gives answer probabilities
``q = pi'M`` and Fisher information ``F = M diag(1/q) M'`` (answers with ``q = 0`` dropped). Rows summing to 1 give
``F pi = M 1 = 1``, so when ``F`` is invertible the asymptotic covariance of the MLE of ``pi`` per respondent (the
inverse of ``F`` on the tangent space ``{d : 1'd = 0}``) is ``C = F^-1 - F^-1 1 1'F^-1 / (1'F^-1 1) = F^-1 - pi pi'``.
Objectives: ``variance`` = ``mean_x C_xx``, ``max_variance`` = ``max_x C_xx``.

Why the program below bounds every eps-SLDP mechanism
------------------------------------------------------
1. *Every eps-SLDP column is a conic combination of staircase columns.* Under Shafer's semantics (Def 3.1) an
   answer set ``E`` is private iff its column ``v = M[:, E]`` satisfies ``v_x <= e^eps v_x'`` for all ``x, x'``.
   Those ``v`` form the polyhedral cone ``K = {v >= 0 : v_x <= e^eps v_x'}``. Write ``v = a u`` with
   ``a = min_x v_x`` (if ``a = 0`` then ``v = 0``), so ``u`` has ``min u = 1``, ``max u <= e^eps``: ``u`` lies in
   the box ``[1, e^eps]^k``, whose vertices are the staircase patterns ``s in {1, e^eps}^k``, so ``u`` (and ``v``)
   is a nonnegative combination of patterns.
2. *Splitting an answer adds information.* The map ``(v, t) -> v v'/t`` (t > 0) is jointly convex in the Loewner
   order (its epigraph ``[[X, v], [v', t]] >= 0`` is a Schur complement) and positively homogeneous, hence
   subadditive: for ``v = sum_j v_j``, ``v v'/(pi'v) <= sum_j v_j v_j'/(pi'v_j)``. So replacing each answer of
   ``M`` by its staircase pieces (distinct answers) gives a mechanism whose information is at least ``F``, and
   whose rows still sum to 1.
3. *The relaxation.* Pattern weights ``w_s >= 0`` with ``sum_s w_s s = 1`` (rows sum to 1) define the mechanism
   with columns ``w_s s`` (one answer per pattern: it is eps-SLDP by construction) and information
   ``F(w) = sum_s w_s s s'/(pi's)``, affine in ``w``. By 1 and 2 every eps-SLDP mechanism ``M`` has
   ``F_M <= F(w)`` for some feasible ``w``, and ``F -> e_x'F^-1 e_x`` is decreasing in the Loewner order, so every
   share variance of ``M`` is at least that of ``w``: the minimum over ``w`` is the minimum over all eps-SLDP
   mechanisms, and it is attained (by the pattern mechanism).
4. *Convexity.* ``w -> tr(D F(w)^-1)`` (``D >= 0``) is convex on ``{w >= 0 : F(w) > 0}`` (the matrix inverse is
   operator convex) and ``+inf`` elsewhere; the mean is ``tr F^-1 / k - |pi|^2 / k`` and the worst share a maximum
   of convex functions.

The certificate
---------------
For convex ``h_j`` and any ``w`` with ``F(w) > 0``, any ``zeta`` in the simplex and any ``lam`` with
``A'lam <= g := sum_j zeta_j grad h_j(w)`` (``A`` the ``k x N`` matrix of patterns):
``max_j h_j(w') >= sum_j zeta_j h_j(w') >= sum_j zeta_j h_j(w) + g'(w' - w) >= sum_j zeta_j h_j(w) - g'w + 1'lam``
for every feasible ``w'`` (the last step is LP weak duality: ``g'w' >= lam'A w' = 1'lam``). That is the lower bound;
the upper bound is the objective of the pattern mechanism itself (its rows renormalised to 1 exactly). The barrier
method supplies ``zeta`` and ``lam`` (its multipliers); ``lam`` is then shifted by a multiple of ``1`` to satisfy
``A'lam <= g`` exactly, so the bound does not depend on the method's accuracy, only its tightness does.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

__all__ = ["Reference", "mle_covariance", "optimal_variance", "patterns"]


def patterns(k: int, eps: float) -> np.ndarray:
    """All staircase patterns ``s in {1, e^eps}^k`` as rows of an ``(2^k, k)`` array; row ``m`` has ``e^eps``
    where bit ``x`` of ``m`` is set (so the answer it stands for is the set ``T(s)`` with mask ``m``)."""
    e = math.exp(eps)
    masks = np.arange(1 << k)
    return np.where((masks[:, None] >> np.arange(k)) & 1, e, 1.0)


def mle_covariance(matrix: np.ndarray, prior: np.ndarray) -> np.ndarray:
    """``C = F^-1 - pi pi'`` with ``F = M diag(1/q) M'``, ``q = pi'M`` (answers no input reaches dropped)."""
    q = prior @ matrix
    used = q > 0
    m = matrix[:, used]
    info = (m / q[used]) @ m.T
    return np.linalg.inv(info) - np.outer(prior, prior)


@dataclass(frozen=True)
class Reference:
    """The certified optimum: ``lower <= optimum <= value``.

    Attributes
    ----------
    value : float
        The objective of the returned mechanism (an upper bound on the optimum).
    lower : float
        The dual lower bound.
    share_variances : (k,) ndarray
        ``diag C`` of the returned mechanism.
    matrix : (k, N) ndarray
        The mechanism: one column ``w_s s`` per used pattern, rows renormalised to sum to 1.
    masks : (N,) ndarray
        The answer set of each column (bitmask ``T(s)``).
    """

    value: float
    lower: float
    share_variances: np.ndarray
    matrix: np.ndarray
    masks: np.ndarray

    @property
    def gap(self) -> float:
        """Relative gap ``(value - lower) / value``: the optimum is known to this relative accuracy."""
        return (self.value - self.lower) / self.value


class _Program:
    """Minimise ``max_j h_j(w)``, ``h_j(w) = d_j . diag(F(w)^-1) - c_j``, over ``w >= 0``, ``A w = 1``."""

    def __init__(self, prior: np.ndarray, eps: float, objective: str):
        self.prior = prior
        self.k = k = prior.size
        self.s = patterns(k, eps)  # (N, k)
        self.a = self.s.T  # (k, N): A w = 1
        self.cols = (self.s / np.sqrt(self.s @ prior)[:, None]).T  # c_s = s / sqrt(pi's), (k, N)
        if objective == "variance":
            self.d = np.full((1, k), 1.0 / k)
            self.c = np.array([prior @ prior / k])
        elif objective == "max_variance":
            self.d = np.eye(k)
            self.c = prior**2
        else:
            raise ValueError(objective)

    def parts(self, w: np.ndarray, hessian: bool = True):
        """``h (J,)``, ``grad h (J, N)`` and, if asked, ``Hess h (J, N, N)``; None if ``F(w)`` is not positive."""
        f = (self.cols * w) @ self.cols.T
        try:
            np.linalg.cholesky(f)
        except np.linalg.LinAlgError:
            return None
        inv = np.linalg.inv(f)
        inv = (inv + inv.T) / 2
        p = inv @ self.cols  # (k, N): F^-1 c_s
        h = self.d @ np.diag(inv) - self.c
        grad = -(self.d @ p**2)  # d/dw_s tr(D F^-1) = -c_s'F^-1 D F^-1 c_s
        if not hessian:
            return h, grad, None
        g1 = self.cols.T @ p  # c_s'F^-1 c_t
        hess = np.stack([2.0 * g1 * ((p.T * dj) @ p) for dj in self.d])
        return h, grad, hess


def _barrier(prog: _Program, tol: float):
    """Path-following barrier method, ``A w = 1`` kept by the Newton steps: for one function (the mean)
    ``t h(w) - sum_s log w_s``; for several (the worst share) over ``(w, tau)``,
    ``t tau - sum_j log(tau - h_j(w)) - sum_s log w_s``.

    Returns the final ``w``, ``zeta`` and ``lam`` (the multipliers the certificate starts from)."""
    n = prog.s.shape[0]
    jn = prog.d.shape[0]
    epi = jn > 1  # the epigraph variable tau, last in y
    w = np.full(n, 1.0 / prog.a.sum(axis=1)[0])  # every pattern equally: A w = 1 (each row of A sums alike)
    h, _, _ = prog.parts(w, hessian=False)
    tau = h.max() + max(1.0, abs(h.max()))
    size_y = n + epi
    big_a = np.hstack([prog.a, np.zeros((prog.k, 1))]) if epi else prog.a
    t = (n + jn) / max(abs(h.max()), 1e-3)
    nu = np.zeros(prog.k)

    def value(w, tau, t):
        if np.any(w <= 0):
            return math.inf
        part = prog.parts(w, hessian=False)
        if part is None:
            return math.inf
        if not epi:
            return t * part[0][0] - np.log(w).sum()
        delta = tau - part[0]
        if np.any(delta <= 0):
            return math.inf
        return t * tau - np.log(delta).sum() - np.log(w).sum()

    while True:
        for it in range(500):
            h, grad, hess = prog.parts(w)
            if epi:
                delta = tau - h
                gy = np.concatenate([(grad / delta[:, None]).sum(axis=0) - 1.0 / w, [t - (1.0 / delta).sum()]])
                dd = np.hstack([-grad, np.ones((jn, 1))])  # gradients of delta_j
                hy = (dd / delta[:, None] ** 2).T @ dd
                hy[:n, :n] += (hess / delta[:, None, None]).sum(axis=0)
            else:
                gy = t * grad[0] - 1.0 / w
                hy = t * hess[0]
            hy[:n, :n] += np.diag(1.0 / w**2)
            # Newton step in scaled variables y = S u, S = diag(w, 1): the barrier's 1/w^2 becomes 1
            scale = np.append(w, 1.0) if epi else w
            hs = hy * scale[:, None] * scale[None, :]
            as_ = big_a * scale[None, :]
            kkt = np.block([[hs, as_.T], [as_, np.zeros((prog.k, prog.k))]])
            rhs = np.concatenate([-gy * scale, 1.0 - prog.a @ w])
            sol = np.linalg.solve(kkt, rhs)
            step, nu = sol[:size_y] * scale, sol[size_y:]
            dec = float(sol[:size_y] @ hs @ sol[:size_y])  # the Newton decrement, squared
            if dec / 2 < 1e-10 or (it >= 30 and dec < 1e-3):  # converged, or at its rounding floor
                break
            f0 = value(w, tau, t)
            size = 1.0  # backtracking, staying strictly inside; near the centre (dec < 0.1) the full step
            while size > 1e-14:
                wn, taun = w + size * step[:n], tau + (size * step[n] if epi else 0.0)
                fn = value(wn, taun, t)
                if fn <= f0 + 0.25 * size * float(gy @ step) or (dec < 0.1 and fn < math.inf):
                    break
                size *= 0.5
            w = w + size * step[:n]
            if epi:
                tau = tau + size * step[n]
            if size <= 1e-14:
                break
        h, _, _ = prog.parts(w, hessian=False)
        zeta = 1.0 / (t * (tau - h)) if epi else np.ones(1)
        if (n + jn) / t < tol * abs(h.max()):
            return w, zeta / zeta.sum(), -nu / t
        t *= 8.0


def _certify(prog: _Program, w: np.ndarray, zeta: np.ndarray, lam: np.ndarray) -> float:
    """The dual lower bound at ``w`` (module docstring), at the best of two multiplier choices: the barrier's
    own, and those of the small LP that maximises the bound over ``(zeta, lam)`` at this ``w`` (the barrier's
    ``zeta = 1 / (t (tau - h_j))`` loses digits when the shares' variances are all equal at the optimum).
    Either way ``zeta`` is put back in the simplex and ``lam`` shifted until ``A'lam <= g`` holds exactly."""
    from scipy.optimize import linprog

    h, grad, _ = prog.parts(w, hessian=False)
    jn = h.size
    # maximise sum_j zeta_j (h_j - grad_j.w) + 1'lam  s.t.  A'lam - grad' zeta <= 0, zeta >= 0, 1'zeta = 1
    cost = -np.concatenate([h - grad @ w, np.ones(prog.k)])
    lp = linprog(cost, A_ub=np.hstack([-grad.T, prog.a.T]), b_ub=np.zeros(w.size),
                 A_eq=np.concatenate([np.ones(jn), np.zeros(prog.k)])[None, :], b_eq=[1.0],
                 bounds=[(0, None)] * jn + [(None, None)] * prog.k, method="highs",
                 options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10})
    candidates = [(zeta, lam)]
    if lp.status == 0:
        candidates.append((lp.x[:jn], lp.x[jn:]))
    best = -math.inf
    for z, lm in candidates:
        z = np.clip(z, 0.0, None)
        z = z / z.sum()
        g = z @ grad
        excess = (prog.a.T @ lm - g) / prog.a.sum(axis=0)  # (A'lam - g)_s / (1's)
        lm = lm - (max(0.0, float(excess.max())) + 1e-15 * float(np.abs(lm).max()))  # the rounding of A'lam too
        assert np.all(prog.a.T @ lm <= g)
        best = max(best, float(z @ h - g @ w + lm.sum()))
    return best


def optimal_variance(prior, eps: float, objective: str = "variance", tol: float = 1e-10) -> Reference:
    """The smallest mean (``objective="variance"``) or largest (``"max_variance"``) share variance per respondent
    over every eps-SLDP mechanism at ``prior``, with a certified lower bound (see the module's docstring)."""
    pi = np.asarray(prior, dtype=float)
    if pi.ndim != 1 or pi.size < 2 or pi.size > 8 or np.any(pi <= 0) or abs(pi.sum() - 1) > 1e-12:
        raise ValueError("prior: 2..8 positive shares summing to 1")
    pi = pi / pi.sum()
    prog = _Program(pi, eps, objective)
    w, zeta, lam = _barrier(prog, tol)
    lower = _certify(prog, w, zeta, lam)
    # A w = 1 holds to the Newton steps' residual; the least-norm correction makes the rows sum to 1 to rounding,
    # so that renormalising them moves no column's ratio off e^eps by more than a few ulps
    for _ in range(2):
        w = np.clip(w + prog.a.T @ np.linalg.solve(prog.a @ prog.a.T, 1.0 - prog.a @ w), 0.0, None)
    keep = w > 1e-14 * w.max()
    matrix = (prog.s[keep] * w[keep][:, None]).T
    matrix = matrix / matrix.sum(axis=1, keepdims=True)
    shares = np.diag(mle_covariance(matrix, pi)).copy()
    value = float(shares.mean() if objective == "variance" else shares.max())
    if not (lower <= value and value - lower <= 1e-9 * value):
        raise RuntimeError(f"the reference did not certify its optimum: value {value!r}, lower bound {lower!r}")
    return Reference(value=value, lower=lower, share_variances=shares, matrix=matrix,
                     masks=np.flatnonzero(keep))


def brute_force_subset_selection(prior, eps: float) -> tuple[float, float]:
    """(mean, worst share) of the best d-subset selection at ``prior`` by this module's own formula: the columns
    ``e^eps`` or 1 over all d-subsets, MLE covariance ``F^-1 - pi pi'``; best over ``d`` for each figure apart."""
    pi = np.asarray(prior, dtype=float)
    k = pi.size
    e = math.exp(eps)
    means, worsts = [], []
    for d in range(1, k):
        sets = list(itertools.combinations(range(k), d))
        m = np.array([[e if x in c else 1.0 for c in sets] for x in range(k)])
        m /= m.sum(axis=1, keepdims=True)
        v = np.diag(mle_covariance(m, pi))
        means.append(v.mean())
        worsts.append(v.max())
    return min(means), min(worsts)
