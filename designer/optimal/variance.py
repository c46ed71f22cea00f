"""Variance-optimal designs: the variances of the estimated shares, minimised as convex programs over staircase
pattern weights, with a certificate of optimality (docs/theory.md, section 5.5).

A survey estimates the shares ``pi`` by maximum likelihood; per respondent their asymptotic covariance is
``C = F^-1 - pi pi'`` with the Fisher information ``F = M diag(1/q) M'``, ``q = pi' M`` (Remark 3.8). Every
eps-SLDP column (Def 3.1) is a conic combination of *staircase* columns ``s in {1, e^eps}^k``, and splitting an
answer into finer answers only adds information, so over pattern weights ``w >= 0`` with ``sum_s w_s s = 1``

.. math:: F(w) = \\sum_s w_s \\frac{s s^\\top}{\\pi^\\top s}

is affine in ``w`` and the best ``F(w)`` bounds every eps-SLDP mechanism in the Loewner order. Each objective
below decreases in that order, so it is a convex program in ``w``:

* ``variance``: ``sum_j omega_j Var(t_j . pi_hat)`` (the mean of the share variances by default; A-optimal);
* ``max_variance``: ``max_j omega_j Var(t_j . pi_hat)`` (minimax);
* with prior scenarios, the worst of the scenarios' values.

All are the largest of *pieces* ``tr(R_p' F_p(w)^-1 R_p) - c_p`` (one ``F_p`` per scenario), each written as the
semidefinite constraint ``[[F_p(w), R_p], [R_p', U_p]] >= 0`` and minimised through ``tr U_p``. The ``2**k`` patterns
enter by column generation: a restricted program over some patterns (solved by Clarabel, or by any conic solver
cvxpy knows), then every pattern is priced by the objective's gradient, a quadratic form
``g_s = sum_p mu_p s' F_p^-1 R_p R_p' F_p^-1 s / (pi_p' s)``, against the multipliers of the linear rows. The
same gradient gives the certificate: for every feasible ``w`` (over *all* patterns),
``f(w) >= sum_p mu_p (2 tr(R_p' F_p^-1 R_p) - c_p) - max {g . w : w feasible}`` (convexity; the last term is a
linear program), so ``optimality_gap = (f - bound) / f`` is proved, not estimated.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from .._internal.solvers import LinearProgram, SolverError, Status, solve_lp
from ..exceptions import InfeasibleDesignError, InvalidProblemError
from ..mechanism import Mechanism
from ..vocabulary import Objective
from .problem import DesignProblem

__all__ = ["MAX_VARIANCE_INPUTS", "OPTIMALITY_GAP", "Pieces", "VarianceSolution", "pieces", "scenario_values",
           "share_covariance", "solve_variance", "target_variances", "variance_objective"]

#: Largest number of inputs of the pattern program at a prior that is not uniform (``2**k`` patterns priced).
MAX_VARIANCE_INPUTS = 20
#: A released design is called optimal when its objective is proved within this (relative) of the optimum.
OPTIMALITY_GAP = 1e-6
#: Column generation stops when the proved gap of the restricted optimum is below this (leaving room for the
#: cleaning and exact certification of the released mechanism within ``OPTIMALITY_GAP``).
TARGET_GAP = 1e-8
#: Reduced costs (relative) below which the rounds at loose solver tolerances stop bringing in patterns.
LOOSE_GAP = 1e-6
#: A round whose objective improves by less than this (relative) has stalled: the duals are made accurate.
STALL = 1e-8
#: At most this many rounds of column generation.
MAX_ROUNDS = 80
#: Patterns brought in per round, at most (the best priced ones).
NEW_COLUMNS = 48
#: Clarabel's tolerances for the restricted programs.
CLARABEL_SETTINGS = {"tol_gap_abs": 1e-12, "tol_gap_rel": 1e-12, "tol_feas": 1e-11, "tol_ktratio": 1e-9,
                     "max_iter": 400}
_TRACE: list[Any] | None = None
#: Patterns are priced in blocks of this many (bounds the scratch memory at k = 20).
PRICE_BLOCK = 1 << 16


# ---------------------------------------------------------------------------- what is minimised
@dataclass(frozen=True)
class Pieces:
    """A variance objective as the largest of pieces ``tr(R_p' F_p^-1 R_p) - c_p``.

    Attributes
    ----------
    priors : (P, k) ndarray
        The scenarios (the problem's prior when it gives none).
    scenario : (N,) int ndarray
        The scenario of each piece.
    R : list of (k - 1, m) ndarray
        ``R_p R_p' = sum_j omega_j (B't_j)(B't_j)'`` over the piece's targets, in tangent coordinates.
    const : (N,) ndarray
        Zeros (tangent coordinates need no correction ``- (t . pi)^2``).
    targets : (m, k) ndarray
        The linear functionals ``t_j`` (rows of the identity for the shares).
    weights : (m,) ndarray
        ``omega_j`` of the mean (``variance``) objective: the weights divided by their sum; for ``max_variance``
        each piece has one target weighted by ``weight / max weight``.
    kind : Objective
    """

    priors: NDArray[np.float64]
    scenario: NDArray[np.int64]
    R: list[NDArray[np.float64]]
    const: NDArray[np.float64]
    targets: NDArray[np.float64]
    weights: NDArray[np.float64]
    kind: Objective


def pieces(problem: DesignProblem) -> Pieces:
    """The pieces of ``problem``'s variance objective (see :class:`Pieces`), in the simplex's tangent coordinates:
    ``Var(t . pi_hat) = (B't)' H^-1 (B't)`` with ``H = B' F B`` and ``B = [I; -1']``, so every ``c_p`` is 0."""
    if not problem.objective.variance:
        raise InvalidProblemError(f"objective '{problem.objective}' is not a variance objective")
    k = problem.k
    priors = problem.prior[None, :] if problem.priors is None else np.asarray(problem.priors)
    if problem.contrasts is not None:
        targets = np.asarray(problem.contrasts, dtype=np.float64)
        raw = np.ones(targets.shape[0])
    else:
        raw = np.ones(k) if problem.variance_weights is None else np.asarray(problem.variance_weights, float)
        keep = raw > 0
        targets, raw = np.eye(k)[keep], raw[keep]
    reduced = targets[:, :-1] - targets[:, -1:]  # B't, one row per target
    scenario: list[int] = []
    R: list[NDArray[np.float64]] = []
    if problem.objective is Objective.VARIANCE:
        omega = raw / raw.sum()
        gram = (reduced.T * omega[None, :]) @ reduced  # sum_j omega_j (B't_j)(B't_j)'
        values, vectors = np.linalg.eigh(gram)
        keep = values > 1e-14 * values.max()
        factor = vectors[:, keep] * np.sqrt(values[keep])[None, :]  # R R' = gram, at most k - 1 columns
        for p in range(len(priors)):
            scenario.append(p)
            R.append(factor)
    else:
        omega = raw / raw.max()
        for p in range(len(priors)):
            for j in range(len(targets)):
                scenario.append(p)
                R.append(np.sqrt(omega[j]) * reduced[j][:, None])
    return Pieces(priors, np.asarray(scenario, dtype=np.int64), R, np.zeros(len(R)), targets, omega,
                  problem.objective)


def share_covariance(matrix: NDArray[np.float64], prior: NDArray[np.float64]
                     ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """The Fisher information on the simplex of a mechanism's answers, in eigen-form.

    With ``B = [I; -1']`` (coordinates ``d`` of ``pi = pi_0 + B d``), the information of ``d`` is
    ``H = B' F B = sum_E (B'm_E)(B'm_E)' / q_E`` (computed from the differences ``B'm_E``, which keeps the
    information of a small budget, about ``eps^2``, clear of the constant part); ``Var(t . pi_hat) =
    (B't)' H^-1 (B't)`` per respondent for ``t`` in its range (Remark 3.8).

    Returns
    -------
    values, vectors : ndarray
        ``H = V diag(values) V'``.
    scale : ndarray
        ``max(values)`` (0-d), the reference for "zero".
    """
    q = prior @ matrix
    used = q > 0
    diff = matrix[:-1, used] - matrix[-1:, used]
    values, vectors = np.linalg.eigh((diff / q[used]) @ diff.T)
    return values, vectors, np.asarray(max(float(values.max(initial=0.0)), 1e-300))


def target_variances(matrix: NDArray[np.float64], prior: NDArray[np.float64], targets: NDArray[np.float64]
                     ) -> NDArray[np.float64]:
    """``Var(t_j . pi_hat)`` per respondent for each row ``t_j`` of ``targets`` (``inf`` when not identified)."""
    values, vectors, scale = share_covariance(matrix, prior)
    reduced = targets[:, :-1] - targets[:, -1:]  # B' t
    coords = reduced @ vectors  # (m, k-1)
    small = values <= 1e-12 * scale
    out = np.sum(np.where(small[None, :], 0.0, coords**2 / np.where(small, 1.0, values)[None, :]), axis=1)
    norms = np.linalg.norm(reduced, axis=1)
    lost = np.any(small[None, :] & (np.abs(coords) > 1e-7 * np.maximum(norms, 1e-300)[:, None]), axis=1)
    return np.where(lost, np.inf, np.clip(out, 0.0, None))


def scenario_values(problem: DesignProblem, matrix: NDArray[np.float64]) -> NDArray[np.float64]:
    """The variance objective of a ``(k, F)`` mass matrix at each prior scenario (one value without scenarios):
    the weighted mean (``variance``) or the largest weighted (``max_variance``) target variance."""
    parts = pieces(problem)
    out = []
    for pi in parts.priors:
        v = target_variances(matrix, pi, parts.targets)
        if parts.kind is Objective.VARIANCE:
            out.append(float(parts.weights @ v) if np.all(np.isfinite(v[parts.weights > 0])) else math.inf)
        else:
            out.append(float(np.max(parts.weights * v)))
    return np.asarray(out)


def variance_objective(problem: DesignProblem, mech: Mechanism) -> float:
    """The variance objective of ``problem`` evaluated on a mechanism (the worst scenario; ``inf`` when a target
    is not identified). A mechanism of other answer sets is evaluated as it is: its answers are outputs."""
    return float(np.max(scenario_values(problem, np.asarray(mech.matrix, dtype=np.float64))))


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

    def _members(self, index: NDArray[np.int64] | None) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        bits = self.bits if index is None else self.bits[index]
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


# ---------------------------------------------------------------------------- pricing and the certificate
def _piece_values(parts: Pieces, pats: Patterns, index: NDArray[np.int64], w: NDArray[np.float64]
                  ) -> NDArray[np.float64]:
    """Each piece's value ``tr(R_p' H_p(w)^-1 R_p) / kappa`` (``inf`` where ``H_p`` does not reach a target)."""
    cols, tang = pats.columns(index), pats.tangent(index)
    out = np.empty(len(parts.R))
    for p, R in enumerate(parts.R):
        q = parts.priors[parts.scenario[p]] @ cols
        H = (tang * (w / q)) @ tang.T
        vals, vecs = np.linalg.eigh((H + H.T) / 2)
        keep = vals > 1e-13 * max(float(vals.max(initial=0.0)), 1e-300)
        coords = vecs.T @ R
        if np.any(np.abs(coords[~keep]) > 1e-8 * max(1.0, float(np.abs(R).max()))):
            out[p] = math.inf
        else:
            out[p] = float(np.sum(coords[keep] ** 2 / vals[keep, None])) / pats.kappa - parts.const[p]
    return out


def _prices(parts: Pieces, pats: Patterns, master: Master, index: NDArray[np.int64] | None = None
            ) -> NDArray[np.float64]:
    """``h_s = sum_p |Y_p' B'b_s|^2 / (mu_p pi_p . s)``: the (scaled) objective's gradient along each pattern at the
    conic dual (``Y_p = mu_p H_p^-1 R_p``), for the patterns ``index`` (all by default), in blocks."""
    idx = np.arange(pats.size) if index is None else index
    out = np.zeros(idx.size)
    for start in range(0, idx.size, PRICE_BLOCK):
        block = idx[start:start + PRICE_BLOCK]
        cols, tang = pats.columns(block), pats.tangent(block)
        for p, Y in enumerate(master.Y):
            if master.mu[p] <= 0.0:
                continue
            q = parts.priors[parts.scenario[p]] @ cols
            out[start:start + block.size] += np.sum((Y.T @ tang) ** 2, axis=0) / (master.mu[p] * q)
    return out


def _row_prices(problem: DesignProblem, pats: Patterns, master: Master, index: NDArray[np.int64] | None = None
                ) -> NDArray[np.float64]:
    """``a_s . y``: what the linear rows charge each pattern at the restricted program's multipliers."""
    idx = np.arange(pats.size) if index is None else index
    out = np.empty(idx.size)
    for start in range(0, idx.size, PRICE_BLOCK):
        block = idx[start:start + PRICE_BLOCK]
        price = master.y_eq[: problem.k] @ pats.columns(block)
        constant = pats.bits[block] == 0
        if master.y_eq.size > problem.k:
            price += np.where(constant, master.y_eq[problem.k], 0.0)
        price += np.where(constant, master.y_dk_max, 0.0)
        if master.y_lie.size:
            price += master.y_lie @ pats.lies(block)
        out[start:start + block.size] = price
    return out


def _bound(problem: DesignProblem, parts: Pieces, master: Master, reduced: NDArray[np.float64]) -> float:
    """The proved lower bound on the optimum over every pattern (docs/theory.md, 5.5), in the program's scale.

    For every feasible ``w``: ``f(w) >= sum_p (2 tr(Y_p' R_p) - mu_p c_p) - h . w`` (the conic dual's point), and
    ``h . w = sum_s w_s (a_s . y + r_s) <= b . y + k max(0, max_s r_s)`` with the reduced prices ``r`` (rows meet
    ``b``, the inequality multipliers are >= 0, and ``sum_s w_s <= k`` because every scaled column has an entry 1
    and the rows sum to 1).
    """
    k = problem.k
    rhs = float(np.sum(master.y_eq[:k]))
    if master.y_eq.size > k:
        rhs += float(master.y_eq[k]) * float(problem.dont_know or 0.0)
    rhs += max(master.y_dk_max, 0.0) * float(problem.dont_know_max or 0.0)
    if master.y_lie.size:
        rhs += float(np.sum(np.clip(master.y_lie, 0.0, None))) * float(problem.lie_max or 0.0)
    head = sum(2.0 * float(np.sum(Y * R)) - mu * c for Y, R, mu, c in zip(master.Y, parts.R, master.mu, parts.const))
    return float(head) - rhs - k * max(0.0, float(np.max(reduced, initial=0.0)))


# ---------------------------------------------------------------------------- the design
@dataclass
class VarianceSolution:
    """The solved program: the patterns used, their weights, the objective and its proved bound.

    Attributes
    ----------
    columns : (k, r) ndarray
        The mechanism's columns (pattern times weight), one per used pattern.
    sets : (r,) int ndarray
        The answer set of each column.
    value : float
        The objective of these columns (the worst piece).
    bound : float
        A proved lower bound on the optimum over every eps-SLDP mechanism of the problem's class
        (docs/theory.md, 5.5); ``-inf`` when none was found.
    rounds : int
        Rounds of column generation.
    priced : int
        Patterns the restricted programs held at the end.
    patterns : (r,) int ndarray
        The bit patterns used (a warm start for the next budget).
    """

    columns: NDArray[np.float64]
    sets: NDArray[np.int64]
    value: float
    bound: float
    rounds: int
    priced: int
    patterns: NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    solver: str = "CLARABEL"

    @property
    def gap(self) -> float:
        """``(value - bound) / value`` (0 when the bound meets the value)."""
        if not math.isfinite(self.bound) or not math.isfinite(self.value):
            return math.inf
        return max(0.0, (self.value - self.bound) / abs(self.value)) if self.value else 0.0


def _start(problem: DesignProblem, pats: Patterns, warm: Sequence[int] = ()) -> NDArray[np.int64]:
    """First columns: k-RR's singletons, their complements, the constant column and a warm start's patterns."""
    k = problem.k
    full = (1 << k) - 1
    wanted = {0, *(1 << x for x in range(k)), *(full ^ (1 << x) for x in range(k)), *(int(b) for b in warm)}
    return np.flatnonzero(np.isin(pats.bits, np.fromiter(wanted, dtype=np.int64)))


def solve_variance(problem: DesignProblem, *, solver: str | None = None, options: dict[str, Any] | None = None,
                   warm: Sequence[int] = (), patterns: Patterns | None = None) -> VarianceSolution:
    """Minimise the problem's variance objective over staircase pattern weights (SLDP; docs/theory.md 5.5).

    Parameters
    ----------
    problem : DesignProblem
        With objective ``variance`` or ``max_variance``.
    solver : str, optional
        ``None`` / ``"CLARABEL"`` (the restricted programs posed for Clarabel directly) or any conic solver cvxpy
        knows that takes semidefinite cones (``"SCS"``, ...).
    options : dict, optional
        Clarabel settings, or keyword arguments of cvxpy's ``solve``.
    warm : sequence of int
        Bit patterns to start from (a previous budget's, in a sweep).
    patterns : Patterns, optional
        The candidates (default :func:`candidate_patterns`).

    Returns
    -------
    VarianceSolution

    Raises
    ------
    InfeasibleDesignError
        When no weights meet the rows (e.g. a don't-know mass and a lying bound that exclude each other).
    SolverError
        When the conic solver stops without an answer.
    """
    parts = pieces(problem)
    pats = candidate_patterns(problem) if patterns is None else patterns
    if pats.size == 0 or not np.any(pats.bits != 0):
        raise InfeasibleDesignError(
            f"no answer set of '{problem.name or 'the problem'}' separates any two inputs (the focal sets or the "
            "lying bound leave only \"don't know\"): no design estimates the shares; allow more answer sets")
    use_clarabel = solver is None or solver.upper() == "CLARABEL"
    options = dict(options or {})
    index = _start(problem, pats, warm)
    _check_feasible(problem, pats)
    final, rounds, bound, previous, tol = False, 0, -math.inf, math.inf, 1e-4
    while True:
        rounds += 1
        loose = {"tol_gap_abs": tol, "tol_gap_rel": tol, "tol_feas": min(tol, 1e-8)}
        master = (_solve_master_clarabel(problem, parts, pats, index, {**({} if final else loose), **options})
                  if use_clarabel else _solve_master_cvxpy(problem, parts, pats, index, solver or "CLARABEL", options))
        value = float(np.max(_piece_values(parts, pats, index, master.w)))
        if not math.isfinite(value):
            break
        scaled = value * pats.kappa  # the program's own scale, in which prices are measured
        h = _prices(parts, pats, master)
        reduced = h - _row_prices(problem, pats, master)
        inside = np.zeros(pats.size, dtype=bool)
        inside[index] = True
        candidates = np.flatnonzero(~inside & (reduced > (TARGET_GAP if final else LOOSE_GAP) * abs(scaled)))
        stalled = previous - value <= STALL * abs(value)
        # the early programs need little accuracy: the solver's tolerance follows the progress
        tol = float(np.clip((previous - value) / abs(value) / 100, 1e-8, 1e-4)) if math.isfinite(previous) else tol
        previous = value
        if _TRACE is not None:
            _TRACE.append((rounds, index.size, value, candidates.size, final, stalled))
        if final or stalled or not candidates.size:
            # every conic dual gives a valid bound: keep the best
            bound = max(bound, _bound(problem, parts, master, reduced) / pats.kappa)
            if value - bound <= TARGET_GAP * abs(value) or rounds >= MAX_ROUNDS:
                break
            if not candidates.size and final:
                break  # nothing left to price in: the gap is what it is (reported)
            final = True  # from here on, the solver's full accuracy
            if not candidates.size:
                continue
        if rounds >= MAX_ROUNDS:
            break
        best = candidates[np.argsort(-reduced[candidates], kind="stable")[:max(NEW_COLUMNS, 4 * problem.k)]]
        index = np.union1d(_support(problem, parts, pats, index, master.w), best)
    index, master, value = _polish(problem, parts, pats, index, master, value, solver, options)
    cols = pats.columns(index)
    used = master.w > 0
    return VarianceSolution(cols[:, used] * master.w[used][None, :], pats.sets[index][used], value, bound,
                            rounds, int(index.size), pats.bits[index][used],
                            "CLARABEL" if use_clarabel else str(solver).upper())


def _check_feasible(problem: DesignProblem, pats: Patterns) -> None:
    """Refuse, with the reason, structure that no pattern weights meet (an LP over every candidate)."""
    index = np.arange(pats.size)
    A_eq, b_eq, A_ub, b_ub, _ = _linear_rows(problem, pats, index)
    out = solve_lp(LinearProgram(c=np.zeros(pats.size), A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq,
                                 lb=np.zeros(pats.size), ub=np.full(pats.size, np.inf)))
    if out.status is Status.INFEASIBLE:
        raise InfeasibleDesignError(
            f"no eps-SLDP design of '{problem.name or 'the problem'}' meets its structure at epsilon = "
            f"{problem.epsilon:g} with staircase answers (don't-know {problem.dont_know or problem.dont_know_max}, "
            f"lying bound {problem.lie_max}); raise epsilon, the lying bound or the don't-know mass")



def _support(problem: DesignProblem, parts: Pieces, pats: Patterns, index: NDArray[np.int64], w: NDArray[np.float64]
             ) -> NDArray[np.int64]:
    """The columns of a vertex with the same information matrices and linear rows as ``w`` (an LP, simplex):
    an interior-point optimum spreads its weight over the whole optimal face; a vertex holds at most about
    ``k (k + 1) / 2`` patterns per scenario, which keeps the next restricted program small."""
    cols, tang = pats.columns(index), pats.tangent(index)
    A_eq, _, A_ub, b_ub, _ = _linear_rows(problem, pats, index)
    iu, ju = np.triu_indices(problem.k - 1)
    info_rows = []
    for pi in parts.priors[np.unique(parts.scenario)]:
        q = pi @ cols
        info_rows.append(tang[iu] * tang[ju] / q[None, :])
    A = sp.vstack([A_eq, sp.csr_matrix(np.vstack(info_rows))], format="csr")
    lp = LinearProgram(c=np.zeros(index.size), A_ub=A_ub, b_ub=b_ub, A_eq=A, b_eq=A @ w, lb=np.zeros(index.size),
                       ub=np.full(index.size, np.inf), maximize=True, warm_start=False)
    out = solve_lp(lp, options={"solver": "simplex", "presolve": "off"})
    if out.status is not Status.OPTIMAL or out.z is None:
        return index[w > 1e-12 * max(1.0, float(w.max()))]
    return index[out.z > 1e-12 * max(1.0, float(out.z.max()))]


#: Weights below this share of the largest are solver residue: the polished design drops them when the objective
#: stays within ``POLISH_RTOL`` (relative) of the program's.
POLISH_DROP = 1e-7
POLISH_RTOL = 1e-9


def _polish(problem: DesignProblem, parts: Pieces, pats: Patterns, index: NDArray[np.int64], master: Master,
            value: float, solver: str | None, options: dict[str, Any]
            ) -> tuple[NDArray[np.int64], Master, float]:
    """The program again over the patterns of visible weight only, so that the released design carries no masses of
    the solver's residue (``1e-10`` on a set no respondent should see); kept when its objective is as good."""
    if not math.isfinite(value):
        return index, master, value
    keep = master.w > POLISH_DROP * float(master.w.max())
    if keep.all():
        return index, master, value
    small = index[keep]
    try:
        again = (_solve_master_clarabel(problem, parts, pats, small, options) if solver is None
                 or solver.upper() == "CLARABEL" else _solve_master_cvxpy(problem, parts, pats, small, solver, options))
    except SolverError:
        return index, master, value
    polished = float(np.max(_piece_values(parts, pats, small, again.w)))
    if polished <= value + POLISH_RTOL * abs(value):
        again.w = np.where(again.w > 1e-13 * float(again.w.max()), again.w, 0.0)
        return small, again, polished
    return index, master, value


# ---------------------------------------------------------------------------- precise designs (WLDP, both)
#: Pivots of the local search for a precise design with at most ``l`` outputs.
MAX_PIVOTS = 60


@dataclass
class PreciseVariance:
    """A precise (Bayesian) variance design: one output per pattern, and the SLDP program's bound."""

    columns: NDArray[np.float64]  # (k, r), r <= l
    value: float
    bound: float
    note: str


def solve_precise_variance(problem: DesignProblem, *, solver: str | None = None,
                           options: dict[str, Any] | None = None, warm: Sequence[int] = ()) -> PreciseVariance:
    """``variance`` / ``max_variance`` under WLDP or both: the best precise mechanism with at most ``l`` outputs
    that a local search finds, and the bound of the SLDP program (docs/theory.md, 5.5).

    Under Walley's semantics the analyst records precise answers, and the worst case over the credal sets of any
    eps-WLDP mechanism is an eps-LDP precise mechanism (Lemma 3.14), so the SLDP program's optimum bounds every
    eps-WLDP design. When that optimum uses at most ``l`` patterns it *is* a precise design with one output per
    pattern, hence optimal; otherwise ``l`` patterns are chosen (the heaviest, then pivots that bring in the best
    priced pattern and drop the lightest while the objective falls) and the gap to the bound is reported.
    """
    options = dict(options or {})
    relaxed = problem.replace(semantics="sldp", frame=problem.inputs, focal_sets=None, answers=())
    parts = pieces(relaxed)
    pats = candidate_patterns(relaxed)
    sol = solve_variance(relaxed, solver=solver, options=options, warm=warm, patterns=pats)
    l = problem.l
    if sol.patterns.size <= l:
        return PreciseVariance(sol.columns, sol.value, sol.bound,
                               f"the SLDP optimum uses {sol.patterns.size} patterns, one output each")
    use_clarabel = solver is None or solver.upper() == "CLARABEL"

    def solve(index: NDArray[np.int64]) -> tuple[float, Master | None]:
        try:
            master = (_solve_master_clarabel(relaxed, parts, pats, index, options) if use_clarabel
                      else _solve_master_cvxpy(relaxed, parts, pats, index, solver or "CLARABEL", options))
        except SolverError:
            return math.inf, None
        return float(np.max(_piece_values(parts, pats, index, master.w))), master

    order = np.argsort(-sol.columns.sum(axis=0), kind="stable")
    chosen = np.flatnonzero(np.isin(pats.bits, sol.patterns[order[:l]]))
    value, master = solve(chosen)
    if master is None or not math.isfinite(value):
        chosen = _start(relaxed, pats)[: l]  # k-RR's singletons first: always feasible
        chosen = np.flatnonzero(np.isin(pats.bits, [1 << x for x in range(min(l, problem.k))]))
        value, master = solve(chosen)
    if master is None or not math.isfinite(value):
        raise InfeasibleDesignError(
            f"no precise design with {l} outputs estimates what objective '{problem.objective}' asks of "
            f"'{problem.name or 'the problem'}' ({problem.k} inputs): a precise answer set of fewer outputs than "
            "inputs cannot separate them; use a frame of at least as many answers as inputs, or semantics \"sldp\"")
    pivots = 0
    while pivots < MAX_PIVOTS:
        pivots += 1
        reduced = _prices(parts, pats, master) - _row_prices(relaxed, pats, master)
        reduced[chosen] = -math.inf
        entering = int(np.argmax(reduced))
        if not reduced[entering] > 1e-9 * abs(value) * pats.kappa:
            break
        grown = np.union1d(chosen, [entering])
        _, wide = solve(grown)
        if wide is None:
            break
        leaving = grown[np.argsort(wide.w, kind="stable")[: grown.size - l]]
        trial = np.setdiff1d(grown, leaving)
        trial_value, trial_master = solve(trial)
        if trial_master is None or not trial_value < value * (1 - 1e-12):
            break
        chosen, value, master = trial, trial_value, trial_master
    cols = pats.columns(chosen) * master.w[None, :]
    used = master.w > 1e-13 * float(master.w.max())
    return PreciseVariance(cols[:, used], value, sol.bound,
                           f"the SLDP optimum uses {sol.patterns.size} patterns; {int(used.sum())} chosen for the "
                           f"{l} outputs ({pivots} pivots)")
