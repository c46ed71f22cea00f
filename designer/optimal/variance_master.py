"""The restricted programs of a variance design: the candidate staircase patterns and the semidefinite program
over some of them, posed for Clarabel directly or written with cvxpy (docs/theory.md, section 5.7)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from .._internal.solvers import SolverError
from ..exceptions import InvalidProblemError
from .dense_qp import newton_step
from .problem import DesignProblem
from .share_variance import Pieces

__all__ = ["MAX_VARIANCE_INPUTS", "MIN_VARIANCE_EPSILON", "Master", "Patterns", "candidate_patterns"]

#: Largest number of inputs of the pattern program at a prior that is not uniform (``2**k`` patterns priced).
MAX_VARIANCE_INPUTS = 20
#: Clarabel's tolerances for the restricted programs.
CLARABEL_SETTINGS = {"tol_gap_abs": 1e-12, "tol_gap_rel": 1e-12, "tol_feas": 1e-11, "tol_ktratio": 1e-9,
                     "max_iter": 400}


# ---------------------------------------------------------------------------- patterns
@dataclass
class Patterns:
    """The candidate staircase patterns of a problem, scaled for the solver.

    ``bits[i]`` is pattern ``i``'s bit mask over the inputs (bit ``x`` set: the high entry), ``0`` the constant
    ("don't know") column; ``sets[i]`` the answer set it is reported as. A non-constant column is kept as
    ``s / e^eps`` (entries ``e^-eps`` and 1), whose tangent part is ``(1 - e^-eps) B'b``: the programs use ``B'b``
    (entries -1, 0, 1) and the factor ``kappa = (1 - e^-eps)^2`` scales their information, so a budget of 1e-6 nats
    and one of 30 nats give programs of the same conditioning.
    """

    k: int
    e: float
    bits: NDArray[np.int64]
    sets: NDArray[np.int64]

    @property
    def size(self) -> int:
        return int(self.bits.size)

    @property
    def kappa(self) -> float:
        """``(1 - e^-eps)^2``: the information of the scaled program times this is the information."""
        return float(-np.expm1(-math.log(self.e))) ** 2

    def _members(self, index: NDArray[np.int64] | None) -> tuple[NDArray[Any], NDArray[Any]]:
        if index is None:  # every pattern, priced every round: kept (k x 2**k small integers)
            if getattr(self, "_all", None) is None:
                self._all = ((self.bits[None, :] >> np.arange(self.k, dtype=np.int64)[:, None]) & 1).astype(np.int8)
            return self.bits, self._all
        bits = self.bits[index]
        return bits, (bits[None, :] >> np.arange(self.k, dtype=np.int64)[:, None]) & 1

    def columns(self, index: NDArray[np.int64] | None = None) -> NDArray[np.float64]:
        """The scaled columns (``(k, n)``: ``e^-eps`` and 1; the constant column 1) of the patterns ``index`` (all
        by default). A design's masses are these times the program's weights."""
        bits, members = self._members(index)
        return np.where((members == 1) | (bits[None, :] == 0), 1.0, 1.0 / self.e)

    def tangent(self, index: NDArray[np.int64] | None = None) -> NDArray[np.float64]:
        """``B'b`` (``(k - 1, n)``): the tangent part of each pattern, the constant column's 0."""
        _, members = self._members(index)
        return (members[:-1] - members[-1:]).astype(np.float64)

    def lies(self, index: NDArray[np.int64] | None = None) -> NDArray[np.float64]:
        """``(k, n)``: the scaled mass an input puts on a set without its true answer (``e^-eps`` where the pattern
        is low; the constant column never lies)."""
        bits, members = self._members(index)
        return np.where((members == 0) & (bits[None, :] != 0), 1.0 / self.e, 0.0)


#: Budgets below this are refused by the variance objectives: the information of a design is about ``eps^2``,
#: and its masses, stored as floats, carry it to about ``1e-16 / eps`` (relative), too coarse below it to certify
#: an objective within ``OPTIMALITY_GAP``.
MIN_VARIANCE_EPSILON = 1e-6


def candidate_patterns(problem: DesignProblem) -> Patterns:
    """Every pattern the problem allows: non-constant patterns whose set ``{y(x) : s_x = e^eps}`` is an allowed
    focal set, and the constant column when the whole frame ("don't know") is allowed (not with a don't-know cap of
    0). Under SLDP a set that leaves out an input's true answer gets a positive mass from that input (the ratio of
    a column is at most ``e^eps``), so ``lie_max = 0`` leaves only "don't know"."""
    k, l = problem.k, problem.l
    if k > MAX_VARIANCE_INPUTS:
        raise InvalidProblemError(
            f"a variance design at a prior that is not uniform prices all 2**{k} staircase patterns; k = {k} is "
            f"above its limit of {MAX_VARIANCE_INPUTS} (a uniform prior with inputs = frame takes the size-class "
            "route at any size)")
    if problem.epsilon < MIN_VARIANCE_EPSILON:
        raise InvalidProblemError(
            f"objective '{problem.objective}' at epsilon = {problem.epsilon:g}: a design's information is about "
            f"epsilon^2 and floating-point masses resolve it only to about 1e-16/epsilon, too coarse to certify "
            f"its variance; use epsilon >= {MIN_VARIANCE_EPSILON:g} or objective truthful")
    truth = problem.truth().astype(np.int64)
    bits = np.arange(0, (1 << k) - 1, dtype=np.int64)  # the all-high pattern is the constant column's direction
    sets = np.zeros(bits.size, dtype=np.int64)
    for x in range(k):
        sets |= ((bits >> x) & 1) << truth[x]
    sets[0] = (1 << l) - 1
    keep = np.isin(sets, problem.family()) if problem.focal_sets is not None else np.ones(bits.size, dtype=bool)
    if problem.dont_know_max == 0.0 or problem.dont_know == 0.0:
        keep[0] = False
    if problem.lie_max == 0.0:
        keep[1:] = False
    if problem.dont_know and not keep[0]:
        raise InvalidProblemError("dont_know > 0 needs the whole frame among the focal sets")
    return Patterns(k, problem.budget.lp_factor, bits[keep], sets[keep])


# ---------------------------------------------------------------------------- the restricted program
@dataclass
class Master:
    """A solved restricted program: weights of its columns, the multipliers of its linear rows and pieces."""

    w: NDArray[np.float64]
    y_eq: NDArray[np.float64]  # row sums (k), then the exact don't-know row when present
    y_dk_max: float
    y_lie: NDArray[np.float64]  # (k,) or empty
    mu: NDArray[np.float64]  # piece multipliers, summing to 1
    status: str
    #: Per piece ``Y_p = mu_p F_p^-1 R_p`` read from the conic dual (the block of the semidefinite cone's
    #: multiplier facing ``R_p``): the certificate's point, accurate to the solver's gap where ``F(w)`` is only
    #: accurate to its square root.
    Y: list[NDArray[np.float64]] = field(default_factory=list)


def _linear_rows(problem: DesignProblem, pats: Patterns, index: NDArray[np.int64]
                 ) -> tuple[sp.csr_matrix, NDArray[np.float64], sp.csr_matrix, NDArray[np.float64], int]:
    """The linear rows of the program over the columns ``index``: equalities (row sums, exact don't-know) and
    inequalities (at most that much don't-know, lying bound). Returns ``A_eq, b_eq, A_ub, b_ub, dk_max_rows``."""
    k = problem.k
    cols = pats.columns(index)
    constant = pats.bits[index] == 0
    A_eq = [sp.csr_matrix(cols)]
    b_eq = [np.ones(k)]
    A_ub: list[sp.spmatrix] = []
    b_ub: list[NDArray[np.float64]] = []
    dk_rows = 0
    if problem.dont_know is not None and problem.dont_know > 0:
        A_eq.append(sp.csr_matrix(constant.astype(float)[None, :]))
        b_eq.append(np.array([problem.dont_know]))
    elif problem.dont_know_max is not None and problem.dont_know_max > 0:
        A_ub.append(sp.csr_matrix(constant.astype(float)[None, :]))
        b_ub.append(np.array([problem.dont_know_max]))
        dk_rows = 1
    if problem.lie_max is not None and problem.lie_max > 0:
        A_ub.append(sp.csr_matrix(pats.lies(index)))
        b_ub.append(np.full(k, problem.lie_max))
    n = index.size
    return (sp.vstack(A_eq, format="csr"), np.concatenate(b_eq),
            sp.vstack(A_ub, format="csr") if A_ub else sp.csr_matrix((0, n)),
            np.concatenate(b_ub) if b_ub else np.zeros(0), dk_rows)


def _svec_index(d: int) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Row and column of each entry of Clarabel's scaled triangle (upper triangle, column by column)."""
    j, i = np.meshgrid(np.arange(d), np.arange(d))
    keep = i <= j
    return i.T[keep.T], j.T[keep.T]


def _solve_master_clarabel(problem: DesignProblem, parts: Pieces, pats: Patterns, index: NDArray[np.int64],
                           settings: dict[str, Any]) -> Master:
    """The restricted program over the columns ``index``, posed for Clarabel directly (scaled: its objective times
    ``1 / kappa`` is the variance objective, see :class:`Patterns`).

    Variables ``[w (n), U_1, ..., U_N (upper triangles), tau (N > 1)]``; cones: zero (row sums, exact
    don't-know), non-negative (don't-know cap, lying bound, epigraph rows ``tr U_p - tau <= c_p``, ``w >= 0``) and
    one semidefinite cone per piece (``[[H_p(w), R_p], [R_p', U_p]]``, ``H_p(w) = sum_s w_s (B'b_s)(B'b_s)' /
    (pi_p . s)``, the information in tangent coordinates).
    """
    import clarabel

    k = problem.k - 1  # tangent coordinates
    n = index.size
    cols = pats.columns(index)
    tang = pats.tangent(index)
    A_eq, b_eq, A_ub, b_ub, _ = _linear_rows(problem, pats, index)
    N = len(parts.R)
    sizes = [r.shape[1] for r in parts.R]
    u_start = np.cumsum([n, *[m * (m + 1) // 2 for m in sizes]])
    n_var = int(u_start[-1]) + (1 if N > 1 else 0)
    tau = n_var - 1
    c = np.zeros(n_var)
    blocks_A: list[sp.spmatrix] = []
    blocks_b: list[NDArray[np.float64]] = []
    cones: list[Any] = []

    def widen(a: sp.spmatrix) -> sp.csc_matrix:
        return sp.hstack([sp.csc_matrix(a), sp.csc_matrix((a.shape[0], n_var - n))], format="csc")

    blocks_A.append(widen(A_eq))
    blocks_b.append(b_eq)
    cones.append(clarabel.ZeroConeT(A_eq.shape[0]))
    ineq = [widen(A_ub)] if A_ub.shape[0] else []
    ineq_b = [b_ub] if A_ub.shape[0] else []
    diag_of = []
    for p, m in enumerate(sizes):
        iu, ju = np.triu_indices(m)
        diag_cols = u_start[p] + np.flatnonzero(iu == ju)
        diag_of.append(diag_cols)
        if N == 1:
            c[diag_cols] = 1.0
        else:
            row = sp.csc_matrix((np.r_[np.ones(m), -1.0], (np.zeros(m + 1, dtype=int), np.r_[diag_cols, tau])),
                                shape=(1, n_var))
            ineq.append(row)
            ineq_b.append(np.array([parts.const[p]]))
    if N > 1:
        c[tau] = 1.0
    ineq.append(sp.hstack([-sp.eye(n), sp.csc_matrix((n, n_var - n))], format="csc"))
    ineq_b.append(np.zeros(n))
    blocks_A.append(sp.vstack(ineq, format="csc"))
    blocks_b.append(np.concatenate(ineq_b))
    cones.append(clarabel.NonnegativeConeT(int(blocks_b[-1].size)))
    r2 = math.sqrt(2.0)
    for p, m in enumerate(sizes):
        d = k + m
        q = parts.priors[parts.scenario[p]] @ cols
        si, sj = _svec_index(d)
        scale = np.where(si == sj, 1.0, r2)
        rows, cc, vals = [], [], []
        b = np.zeros(si.size)
        # F block: both indices < k; entry (i, j) = sum_s w_s cols[i, s] cols[j, s] / q_s
        fb = np.flatnonzero(sj < k)
        coef = tang[si[fb]] * tang[sj[fb]] / q[None, :]  # (entries, n)
        rr, ss = np.nonzero(coef)
        rows.append(fb[rr])
        cc.append(ss)
        vals.append(-scale[fb][rr] * coef[rr, ss])
        # U block: both indices >= k
        ub = np.flatnonzero(si >= k)
        iu, ju = np.triu_indices(m)
        position = {(int(a), int(bb)): t for t, (a, bb) in enumerate(zip(iu, ju))}
        rows.append(ub)
        cc.append(np.array([u_start[p] + position[(int(si[t]) - k, int(sj[t]) - k)] for t in ub], dtype=np.int64))
        vals.append(-scale[ub])
        # R block: i < k <= j, constant
        rb = np.flatnonzero((si < k) & (sj >= k))
        b[rb] = scale[rb] * parts.R[p][si[rb], sj[rb] - k]
        A = sp.csc_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cc))), shape=(si.size, n_var))
        blocks_A.append(A)
        blocks_b.append(b)
        cones.append(clarabel.PSDTriangleConeT(d))
    A_all = sp.vstack(blocks_A, format="csc")
    b_all = np.concatenate(blocks_b)
    config = clarabel.DefaultSettings()
    config.verbose = False
    for key, value in {**CLARABEL_SETTINGS, **settings}.items():
        setattr(config, key, value)
    solution = clarabel.DefaultSolver(sp.csc_matrix((n_var, n_var)), c, A_all, b_all, cones, config).solve()
    status = str(solution.status)
    if "Solved" not in status:
        raise SolverError(f"Clarabel stopped on the restricted variance program ({status})")
    x, z = np.asarray(solution.x), np.asarray(solution.z)
    n_eq = A_eq.shape[0]
    y_eq = z[:n_eq]
    y_ub = z[n_eq:n_eq + A_ub.shape[0]]
    Y = []
    offset = int(sum(b.size for b in blocks_b[:2]))
    for m in sizes:
        d = k + m
        si, sj = _svec_index(d)
        dual = z[offset:offset + si.size]
        offset += si.size
        block = np.zeros((k, m))
        facing = (si < k) & (sj >= k)
        block[si[facing], sj[facing] - k] = -dual[facing] / r2
        Y.append(block)
    dk_max = problem.dont_know_max is not None and problem.dont_know_max > 0 and not (problem.dont_know or 0) > 0
    y_dk_max = float(y_ub[0]) if dk_max else 0.0
    y_lie = y_ub[1 if dk_max else 0:]
    if N > 1:
        mu = np.clip(z[n_eq + A_ub.shape[0]: n_eq + A_ub.shape[0] + N], 0.0, None)
        mu = mu / mu.sum() if mu.sum() > 0 else np.full(N, 1.0 / N)
    else:
        mu = np.ones(1)
    return Master(np.clip(x[:n], 0.0, None), y_eq, y_dk_max, y_lie, mu, status, Y)


def _solve_master_cvxpy(problem: DesignProblem, parts: Pieces, pats: Patterns, index: NDArray[np.int64],
                        solver: str, options: dict[str, Any]) -> Master:
    """The same restricted program written with cvxpy (``bmat`` blocks), for any conic solver it knows."""
    import cvxpy as cp

    k = problem.k - 1
    cols = pats.columns(index)
    tang = pats.tangent(index)
    A_eq, b_eq, A_ub, b_ub, _ = _linear_rows(problem, pats, index)
    w = cp.Variable(index.size, nonneg=True)
    eq = A_eq @ w == b_eq
    cons: list[Any] = [eq]
    ub = None
    if A_ub.shape[0]:
        ub = A_ub @ w <= b_ub
        cons.append(ub)
    traces = []
    cones: list[Any] = []
    for p, R in enumerate(parts.R):
        q = parts.priors[parts.scenario[p]] @ cols
        coef = np.einsum("is,js->ijs", tang, tang) / q
        F = cp.reshape(coef.reshape(k * k, -1) @ w, (k, k), order="C")
        U = cp.Variable((R.shape[1], R.shape[1]), symmetric=True)
        M = cp.bmat([[F, R], [R.T, U]])
        psd = (M + M.T) / 2 >> 0
        cons.append(psd)
        cones.append(psd)
        traces.append(cp.trace(U) - parts.const[p])
    epi = None
    if len(traces) == 1:
        objective = traces[0]
    else:
        t = cp.Variable()
        epi = [tr <= t for tr in traces]
        cons += epi
        objective = t
    program = cp.Problem(cp.Minimize(objective), cons)
    try:
        program.solve(solver=solver, **options)
    except cp.error.SolverError as exc:
        raise SolverError(f"{solver} failed on the restricted variance program: {exc}") from None
    if program.status not in ("optimal", "optimal_inaccurate") or w.value is None:
        raise SolverError(f"{solver} stopped on the restricted variance program ({program.status})")
    y_eq = -np.asarray(eq.dual_value, dtype=np.float64)
    y_ub = np.zeros(0) if ub is None else np.asarray(ub.dual_value, dtype=np.float64)
    dk_max = problem.dont_know_max is not None and problem.dont_know_max > 0 and not (problem.dont_know or 0) > 0
    y_dk_max = float(y_ub[0]) if dk_max else 0.0
    y_lie = y_ub[1 if dk_max else 0:]
    mu = np.ones(1) if epi is None else np.clip(np.array([float(c.dual_value) for c in epi]), 0.0, None)
    mu = mu / mu.sum() if mu.sum() > 0 else np.full(mu.size, 1.0 / mu.size)
    # the semidefinite multiplier's block facing R_p is -Y_p (Y_p = mu_p H_p^-1 R_p)
    Y = [-np.asarray(c.dual_value, dtype=np.float64)[:k, k:] for c in cones]
    return Master(np.clip(np.asarray(w.value), 0.0, None), y_eq, y_dk_max, y_lie, mu, program.status, Y)


#: The conic solver a restricted program falls back on when Clarabel stops on it (through cvxpy), and its options.
FALLBACK_SOLVER = "SCS"
FALLBACK_OPTIONS: dict[str, Any] = {"eps_abs": 1e-9, "eps_rel": 1e-9, "max_iters": 200_000}


def solve_master(problem: DesignProblem, parts: Pieces, pats: Patterns, index: NDArray[np.int64], solver: str | None,
                 settings: dict[str, Any], options: dict[str, Any], *, fallback: bool = True) -> Master:
    """The restricted program by the solver asked for: Clarabel directly (``settings`` added to its own), or any
    other conic solver through cvxpy (``options``). When Clarabel stops (a numerical error or its iteration limit on
    a nearly singular information matrix), the same program is solved through cvxpy by ``FALLBACK_SOLVER``; the
    design that results is certified and bounded like any other, so a less accurate master costs optimality, not
    privacy. ``fallback=False`` raises Clarabel's failure instead (a search that skips a candidate it cannot solve)."""
    if solver is not None and solver.upper() != "CLARABEL":
        return _solve_master_cvxpy(problem, parts, pats, index, solver, options)
    try:
        return _solve_master_clarabel(problem, parts, pats, index, settings)
    except SolverError as first:
        if not fallback:
            raise
        import warnings

        try:
            with warnings.catch_warnings():  # cvxpy's "may be inaccurate": the design is certified and bounded anyway
                warnings.simplefilter("ignore", UserWarning)
                return _solve_master_cvxpy(problem, parts, pats, index, FALLBACK_SOLVER, FALLBACK_OPTIONS)
        except SolverError:
            raise first from None


#: Newton steps of :func:`_solve_master_newton` at most, and its stopping rule (the Newton decrement, relative).
NEWTON_STEPS = 60
NEWTON_TOL = 1e-15
#: The Newton steps' quadratic programs are solved densely (:mod:`designer.optimal.dense_qp`; Clarabel's sparse
#: factorisation of their dense Hessian took 70% of a k = 12 design).
DENSE_STEPS = True


def _solve_master_newton(problem: DesignProblem, parts: Pieces, pats: Patterns, index: NDArray[np.int64],
                         start: NDArray[np.float64], steps: int = NEWTON_STEPS, warm: bool = False,
                         tol: float = 1e-12) -> Master | None:
    """:func:`_newton_steps`, None where the information turns singular on the way (an optimum that leaves
    directions the objective ignores unidentified: the conic program, which works on the range, decides). At most
    ``steps`` Newton steps (fewer: an inexact restricted optimum, as column generation may use); ``warm``: their
    quadratic programs start near the current weights (:func:`~designer.optimal.dense_qp.newton_step`); ``tol``:
    their tolerance (a looser one: the weights are then brought back onto the equality rows exactly, on their
    support; with inequality rows the steps are solved to 1e-12 whatever ``tol`` says)."""
    try:
        return _newton_steps(problem, parts, pats, index, start, steps, warm, tol)
    except np.linalg.LinAlgError:
        return None


def _newton_steps(problem: DesignProblem, parts: Pieces, pats: Patterns, index: NDArray[np.int64],
                  start: NDArray[np.float64], steps: int = NEWTON_STEPS, warm: bool = False,
                  tol: float = 1e-12) -> Master | None:
    """The restricted program of a one-piece objective by sequential quadratic programming from a feasible start.

    ``f(w) = tr(R' H(w)^-1 R)`` is smooth and convex where ``H(w)`` is nonsingular, with gradient
    ``-|X' B'b_s|^2 / q_s`` and Hessian ``2 (B'b_s' H^-1 B'b_t)(B'b_s' X X' B'b_t) / (q_s q_t)`` (``X = H^-1 R``).
    Each step minimises the quadratic model under the rows and ``w >= 0`` (a quadratic program, Clarabel) and takes
    the longest step of the Armijo rule. From the previous round's weights (a feasible start) it converges
    quadratically to the restricted optimum, far faster than the semidefinite program, and its weights, hence
    ``X``, are accurate to rounding (the certificate's point). None when it cannot proceed (the caller solves the
    semidefinite program instead).
    """
    import clarabel

    if len(parts.R) != 1:
        return None
    R = parts.R[0]
    cols, tang = pats.columns(index), pats.tangent(index)
    q = parts.priors[parts.scenario[0]] @ cols
    A_eq, b_eq, A_ub, b_ub, _ = _linear_rows(problem, pats, index)
    n = index.size
    w = np.clip(start, 0.0, None)
    if A_ub.shape[0]:
        tol = 1e-12  # inequality rows (a don't-know cap, a lying bound): no correction puts the steps back on them

    def value(weights: NDArray[np.float64]) -> tuple[float, NDArray[np.float64] | None]:
        H = (tang * (weights / q)) @ tang.T
        try:
            factor = np.linalg.cholesky((H + H.T) / 2)
        except np.linalg.LinAlgError:
            return math.inf, None
        Z = np.linalg.solve(factor, R)
        return float(np.sum(Z * Z)), H

    f, H = value(w)
    if H is None:
        return None
    config = clarabel.DefaultSettings()
    config.verbose = False
    config.tol_gap_abs = config.tol_gap_rel = 1e-13
    config.tol_feas = 1e-13
    cones = [clarabel.ZeroConeT(A_eq.shape[0]), clarabel.NonnegativeConeT(A_ub.shape[0] + n)]
    A = sp.vstack([A_eq, A_ub, -sp.eye(n)], format="csc")
    solution: Any = None
    for _ in range(steps):
        Hinv = np.linalg.inv(H)
        X = Hinv @ R
        proj = X.T @ tang  # (m, n)
        grad = -np.sum(proj**2, axis=0) / q
        inner = tang.T @ Hinv @ tang
        hess = 2.0 * inner * (proj.T @ proj) / np.outer(q, q)
        hess = (hess + hess.T) / 2
        # the step d: rows A_eq (w + d) = b_eq (a start off them by rounding is brought back), A_ub (w + d) <= b_ub,
        # w + d >= 0
        b = np.concatenate([b_eq - A_eq @ w, b_ub - A_ub @ w, w])
        solution = (newton_step(hess, grad, w, A_eq, b_eq, A_ub, b_ub, warm, tol) if DENSE_STEPS else
                    clarabel.DefaultSolver(sp.csc_matrix(np.triu(hess)), grad, A, b, cones, config).solve())
        if "Solved" not in str(solution.status):
            return None
        d = np.asarray(solution.x)
        decrement = -float(grad @ d)
        if decrement <= NEWTON_TOL * abs(f):
            break
        step = 1.0
        while step > 1e-10:
            trial = np.clip(w + step * d, 0.0, None)
            f_trial, H_trial = value(trial)
            if H_trial is not None and f_trial <= f - 1e-4 * step * decrement:
                w, f, H = trial, f_trial, H_trial
                break
            step /= 2
        else:
            break
    if tol > 1e-12 and np.any(w > 0):
        # an inexact step leaves the rows off by about tol: the least-norm correction on the support (weights above
        # 1e-6 of the largest, which a correction of that size cannot make negative) puts them back to rounding
        on = np.flatnonzero(w > 1e-6 * float(w.max()))
        E = A_eq[:, on].toarray() if hasattr(A_eq, "toarray") else np.asarray(A_eq)[:, on]
        moved = w[on] + E.T @ np.linalg.solve(E @ E.T, b_eq - A_eq @ w)
        if np.all(moved >= 0):
            w = w.copy()
            w[on] = moved
            f, H = value(w)
            if H is None:
                return None
    if solution is None or np.max(np.abs(A_eq @ w - b_eq)) > 1e-12 or (
            A_ub.shape[0] and np.max(A_ub @ w - b_ub) > 1e-12):
        return None  # not back on the rows: the conic program decides
    z = np.asarray(solution.z)
    # the step's multipliers are the program's at the optimum (the step is 0 there): the same signs as Clarabel's
    # semidefinite program (a row's price a_s . y = the gradient's magnitude on the support)
    n_eq = A_eq.shape[0]
    y_eq = z[:n_eq]
    y_ub = z[n_eq:n_eq + A_ub.shape[0]]
    dk_max = problem.dont_know_max is not None and problem.dont_know_max > 0 and not (problem.dont_know or 0) > 0
    y_dk_max = float(y_ub[0]) if dk_max else 0.0
    point = np.asarray(np.linalg.solve(H, R), dtype=np.float64)
    return Master(w, y_eq, y_dk_max, y_ub[1 if dk_max else 0:], np.ones(1), str(solution.status), [point])
