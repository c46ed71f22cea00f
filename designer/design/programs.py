"""The design programs of DESIGN.md 5 as sparse linear programs.

Every program is ``maximise c.z subject to A_ub z <= b_ub, A_eq z == b_eq, lb <= z <= ub`` with the
mechanism ``M`` (``k x F`` over the focal family, row-major) as the first ``k F`` variables. Each
constraint family is assembled as one ``scipy.sparse`` block by index arithmetic (no loop emitting one
constraint per subset, no dense ``2**l x 2**l`` inclusion matrix).

* eps-SLDP (Def 3.1): envelopes ``lo_E <= M[x, E] <= hi_E``, ``hi_E <= e^eps lo_E`` (``2kF + F`` rows).
* eps-WLDP (Def 3.13, Lemma 3.14): ``pl_x(E) <= e^eps bel_x'(E)`` for ``x != x'`` and proper ``E``,
  written ``1 - B[x, Y \\ E] - e^eps B[x', E] <= 0`` with belief variables ``B = Inc M`` where ``Inc``
  is the inclusion of the focal family in the subsets (``3**l`` nonzeros at most).
* The estimation objective is the "staircase" LP (Kairouz, Oh & Viswanath 2016) over columns
  ``s in {1, e^eps}^k`` (:func:`staircase_program`).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from ..exceptions import InvalidProblemError
from .problem import DesignProblem

__all__ = ["LinearProgram", "SolverOutcome", "WarmStart", "linear_program", "objective_matrix", "solve",
           "staircase_program"]

#: Largest input count of the staircase LP (2**k columns).
MAX_STAIRCASE_INPUTS = 20


@dataclass
class LinearProgram:
    """``max c.z  s.t.  A_ub z <= b_ub,  A_eq z == b_eq,  lb <= z <= ub``; ``z[:k*F]`` is ``M`` row-major."""

    c: NDArray[np.float64]
    A_ub: sp.csr_matrix
    b_ub: NDArray[np.float64]
    A_eq: sp.csr_matrix
    b_eq: NDArray[np.float64]
    lb: NDArray[np.float64]
    ub: NDArray[np.float64]
    k: int
    family: NDArray[np.int64]
    blocks: dict[str, int] = field(default_factory=dict)
    #: Whether a :class:`WarmStart` session may start it from a previous basis (see there).
    warm_start: bool = True

    @property
    def n(self) -> int:
        return self.c.size

    def mechanism(self, z: NDArray[np.float64]) -> NDArray[np.float64]:
        """The ``(k, F)`` mechanism part of a solution vector."""
        return z[: self.k * self.family.size].reshape(self.k, self.family.size)

    def size(self) -> str:
        return (f"{self.n} variables, {self.A_ub.shape[0]} inequalities, {self.A_eq.shape[0]} equalities, "
                f"{self.A_ub.nnz + self.A_eq.nnz} nonzeros")


@dataclass(frozen=True)
class SolverOutcome:
    """What the solver said: status, claimed objective, solution and timings."""

    status: str
    objective: float
    z: NDArray[np.float64] | None
    solver: str
    setup_seconds: float
    solve_seconds: float


def objective_matrix(problem: DesignProblem, family: NDArray[np.int64]) -> NDArray[np.float64]:
    """Linear objective ``G[x, j]`` (prior-weighted) of the linear objectives (DESIGN.md 5)."""
    pi = problem.prior[:, None]
    if problem.objective == "truthful":
        truth = problem.truth()
        return pi * (family[None, :] == (1 << truth)[:, None])
    if problem.objective == "gain":
        assert problem.gain is not None
        return pi * problem.gain[:, family]
    if problem.objective in ("worst_case_utility", "best_case_utility"):
        assert problem.utility is not None
        members = ((family[:, None] >> np.arange(problem.l)[None, :]) & 1).astype(bool)  # (F, l)
        u = problem.utility[:, None, :]  # (k, 1, l)
        if problem.objective == "worst_case_utility":
            vals = np.where(members[None], u, np.inf).min(axis=2)
        else:
            vals = np.where(members[None], u, -np.inf).max(axis=2)
        return pi * vals
    raise InvalidProblemError(f"objective {problem.objective!r} is not linear")  # pragma: no cover


def _stack(blocks: list[sp.spmatrix], n: int) -> sp.csr_matrix:
    if not blocks:
        return sp.csr_matrix((0, n))
    return sp.vstack(blocks, format="csr")


def inclusion(family: NDArray[np.int64], l: int, sets: NDArray[np.int64]) -> sp.csr_matrix:
    """Sparse ``Inc[i, j] = [family[j] subset of sets[i]]`` (rows: sets, columns: focal family)."""
    rows, cols = [], []
    chunk = max(1, 4_000_000 // max(1, family.size))
    for start in range(0, sets.size, chunk):
        block = sets[start:start + chunk]
        r, c = np.nonzero((block[:, None] & family[None, :]) == family[None, :])
        rows.append(r + start)
        cols.append(c)
    r = np.concatenate(rows) if rows else np.zeros(0, np.int64)
    c = np.concatenate(cols) if cols else np.zeros(0, np.int64)
    return sp.csr_matrix((np.ones(r.size), (r, c)), shape=(sets.size, family.size))


def linear_program(problem: DesignProblem, *, privacy: bool = True) -> LinearProgram:
    """Assemble the LP of a problem with a linear objective.

    Parameters
    ----------
    problem : DesignProblem
    privacy : bool, default True
        Include the privacy constraints (False: only the structure, to diagnose infeasibility).
    """
    k, l = problem.k, problem.l
    family = problem.family()
    F = family.size
    nm = k * F
    e = math.exp(problem.epsilon)
    full = (1 << l) - 1
    truth = problem.truth()
    ub_blocks: list[tuple[sp.spmatrix, NDArray[np.float64]]] = []
    eq_blocks: list[tuple[sp.spmatrix, NDArray[np.float64]]] = []
    blocks: dict[str, int] = {"M": 0}
    n = nm

    def mcol(x: NDArray[np.int64], j: NDArray[np.int64]) -> NDArray[np.int64]:
        return x * F + j

    # Rows sum to 1.
    rows = np.repeat(np.arange(k), F)
    eq_blocks.append((sp.csr_matrix((np.ones(nm), (rows, np.arange(nm))), shape=(k, nm)), np.ones(k)))

    # Structure.
    if problem.dont_know is not None or problem.dont_know_max is not None:
        jy = np.flatnonzero(family == full)
        if jy.size:
            a = sp.csr_matrix((np.ones(k), (np.arange(k), mcol(np.arange(k), np.full(k, jy[0])))), shape=(k, nm))
            if problem.dont_know is not None:
                eq_blocks.append((a, np.full(k, problem.dont_know)))
            else:
                ub_blocks.append((a, np.full(k, problem.dont_know_max)))
    if problem.lie_max is not None:
        lies = ((family[None, :] >> truth[:, None]) & 1) == 0  # (k, F): set without the true answer
        x, j = np.nonzero(lies)
        a = sp.csr_matrix((np.ones(x.size), (x, mcol(x, j))), shape=(k, nm))
        ub_blocks.append((a, np.full(k, problem.lie_max)))

    sldp = privacy and problem.semantics in ("sldp", "both")
    wldp = privacy and problem.semantics in ("wldp", "both")
    if sldp and k > 1:
        lo, hi = n, n + F
        blocks["sldp_envelope"] = n
        n += 2 * F
        x = np.repeat(np.arange(k), F)
        j = np.tile(np.arange(F), k)
        r = np.arange(nm)
        upper = sp.csr_matrix((np.r_[np.ones(nm), -np.ones(nm)], (np.r_[r, r], np.r_[mcol(x, j), hi + j])),
                              shape=(nm, n))
        lower = sp.csr_matrix((np.r_[-np.ones(nm), np.ones(nm)], (np.r_[r, r], np.r_[mcol(x, j), lo + j])),
                              shape=(nm, n))
        jj = np.arange(F)
        ratio = sp.csr_matrix((np.r_[np.ones(F), -e * np.ones(F)], (np.r_[jj, jj], np.r_[hi + jj, lo + jj])),
                              shape=(F, n))
        ub_blocks += [(upper, np.zeros(nm)), (lower, np.zeros(nm)), (ratio, np.zeros(F))]
    if wldp and k > 1 and l > 1:
        proper = np.arange(1, full, dtype=np.int64)  # proper nonempty subsets E
        P = proper.size
        b0 = n
        blocks["wldp_bel"] = n
        n += k * P
        inc = inclusion(family, l, proper)  # (P, F)
        bel_map = sp.kron(sp.eye(k), inc, format="csr")  # (kP, kF): B = Inc M, per input
        define = sp.hstack([-bel_map, sp.csr_matrix((k * P, n - nm - k * P)), sp.eye(k * P)], format="csr")
        eq_blocks.append((define, np.zeros(k * P)))
        xs, x2s = np.nonzero(~np.eye(k, dtype=bool))
        npairs = xs.size
        E = np.tile(proper, npairs)
        X = np.repeat(xs, P)
        X2 = np.repeat(x2s, P)
        comp_col = b0 + X * P + ((full ^ E) - 1)
        e_col = b0 + X2 * P + (E - 1)
        r = np.arange(E.size)
        pairs = sp.csr_matrix((np.r_[-np.ones(E.size), -e * np.ones(E.size)], (np.r_[r, r], np.r_[comp_col, e_col])),
                              shape=(E.size, n))
        ub_blocks.append((pairs, -np.ones(E.size)))

    def widen(a: sp.spmatrix) -> sp.csr_matrix:
        a = sp.csr_matrix(a)
        if a.shape[1] < n:
            a = sp.hstack([a, sp.csr_matrix((a.shape[0], n - a.shape[1]))], format="csr")
        return a

    A_ub = _stack([widen(a) for a, _ in ub_blocks], n)
    b_ub = np.concatenate([b for _, b in ub_blocks]) if ub_blocks else np.zeros(0)
    A_eq = _stack([widen(a) for a, _ in eq_blocks], n)
    b_eq = np.concatenate([b for _, b in eq_blocks])
    c = np.zeros(n)
    if problem.objective != "chi2":
        c[:nm] = objective_matrix(problem, family).ravel()
    lb = np.zeros(n)
    ub = np.full(n, np.inf)
    # Warm starts skip HiGHS's presolve, which this program needs (SLDP k = l = 12, ten budgets: 25 s cold,
    # 29 s warm); a session still solves it without cvxpy's compilation.
    return LinearProgram(c, A_ub, b_ub, A_eq, b_eq, lb, ub, k, family, blocks, warm_start=False)


# ---------------------------------------------------------------------------- staircase (chi2)
def staircase_patterns(k: int) -> NDArray[np.int64]:
    """Bit patterns ``s`` of the non-constant staircase columns: bit ``x`` set means entry ``e^eps``."""
    return np.arange(1, (1 << k) - 1, dtype=np.int64)


def chi2_weights(values: NDArray[np.float64], prior: NDArray[np.float64]) -> NDArray[np.float64]:
    """``mu(v) = sum_x pi_x (v_x - pi.v)^2 / (pi.v)`` of each column of ``values`` (k, n)."""
    mean = prior @ values
    return (prior[:, None] * (values - mean) ** 2).sum(axis=0) / mean


@dataclass
class Staircase:
    """The staircase LP and how its columns map to focal sets."""

    lp: LinearProgram
    patterns: NDArray[np.int64]
    sets: NDArray[np.int64]
    values: NDArray[np.float64]  # (k, S): column entries 1 or e^eps
    constant: bool  # last variable is the constant ("don't know") column


def staircase_program(problem: DesignProblem) -> Staircase:
    """The estimation-optimal SLDP program (DESIGN.md 5): columns ``s in {1, e^eps}^k``.

    Column ``s`` is reported as the focal set ``T(s) = {y(x) : s_x = e^eps}``; the constant column is
    the whole frame ("don't know"), with zero information. Maximise ``sum_s mu(s) theta_s`` subject to
    ``sum_s s theta_s + t 1 = 1`` (rows), the don't-know mass ``t``, the lying bound and the focal family.
    """
    k, l = problem.k, problem.l
    if k > MAX_STAIRCASE_INPUTS:
        raise InvalidProblemError(
            f"the staircase LP has 2**{k} columns; k = {k} is above its limit of {MAX_STAIRCASE_INPUTS}"
        )
    truth = problem.truth()
    if np.any(truth < 0):
        raise InvalidProblemError(
            f"objective 'chi2' reports sets of true answers; inputs {problem.missing_truth()} have no frame "
            "label of the same name"
        )
    full = (1 << l) - 1
    patterns = staircase_patterns(k)
    bits = (patterns[None, :] >> np.arange(k)[:, None]) & 1  # (k, S)
    sets = (bits * (1 << truth)[:, None]).sum(axis=0).astype(np.int64)
    allowed = set(problem.family().tolist())
    keep = np.array([s in allowed for s in sets.tolist()], dtype=bool)
    patterns, sets, bits = patterns[keep], sets[keep], bits[:, keep]
    e = math.exp(problem.epsilon)
    values = np.where(bits == 1, e, 1.0)
    S = patterns.size
    constant = full in allowed and (problem.dont_know is not None or problem.dont_know_max is not None
                                    or problem.lie_max is not None)
    n = S + (1 if constant else 0)
    c = np.zeros(n)
    c[:S] = chi2_weights(values, problem.prior)
    eq_rows = [sp.csr_matrix(np.hstack([values, np.ones((k, 1))]) if constant else values)]
    b_eq = [np.ones(k)]
    ub_rows: list[sp.spmatrix] = []
    b_ub: list[NDArray[np.float64]] = []
    if constant:
        t = sp.csr_matrix(([1.0], ([0], [S])), shape=(1, n))
        if problem.dont_know is not None:
            eq_rows.append(t)
            b_eq.append(np.array([problem.dont_know]))
        elif problem.dont_know_max is not None:
            ub_rows.append(t)
            b_ub.append(np.array([problem.dont_know_max]))
    elif problem.dont_know:
        raise InvalidProblemError("dont_know > 0 needs the whole frame among the focal sets")
    if problem.lie_max is not None:
        lie = np.where(bits == 0, 1.0, 0.0)  # entry 1 on inputs whose answer is outside T(s)
        ub_rows.append(sp.csr_matrix(np.hstack([lie, np.zeros((k, n - S))])))
        b_ub.append(np.full(k, problem.lie_max))
    lp = LinearProgram(
        c=c,
        A_ub=_stack(ub_rows, n),
        b_ub=np.concatenate(b_ub) if b_ub else np.zeros(0),
        A_eq=sp.vstack(eq_rows, format="csr"),
        b_eq=np.concatenate(b_eq),
        lb=np.zeros(n),
        ub=np.full(n, np.inf),
        k=k,
        family=sets,
    )
    return Staircase(lp, patterns, sets, values, constant)


def staircase_mechanism(st: Staircase, z: NDArray[np.float64], l: int) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """Mechanism columns ``(k, F)`` and their focal masks from a staircase solution."""
    S = st.patterns.size
    theta = np.clip(z[:S], 0.0, None)
    cols = st.values * theta[None, :]
    masks = st.sets.copy()
    if st.constant:
        cols = np.hstack([cols, np.full((st.values.shape[0], 1), max(0.0, float(z[S])))])
        masks = np.r_[masks, (1 << l) - 1]
    return cols, masks


# ---------------------------------------------------------------------------- solving
_STATUS = {
    "optimal": "optimal",
    "optimal_inaccurate": "optimal_inaccurate",
    "infeasible": "infeasible",
    "infeasible_inaccurate": "infeasible",
    "unbounded": "unbounded",
    "unbounded_inaccurate": "unbounded",
    "infeasible_or_unbounded": "infeasible",
}


class WarmStart:
    """Solve a sequence of LPs of one shape with HiGHS, each from the previous optimal basis.

    A sweep over epsilon changes only the coefficients ``e^eps`` of the privacy rows, so the optimal basis
    of one budget is a good start for the next: simplex then needs few pivots. A warm start skips HiGHS's
    presolve, though, so it pays only where presolve matters little: the staircase LP (chi2; 3.4x over ten
    budgets at k = 12) and the size-class programs. The general programs (``LinearProgram.warm_start =
    False``) and programs solved by interior point (WLDP) are solved cold. A warm solve may pivot at most
    as often as the first cold solve of its shape did; at that limit it is finished cold and the shape is
    solved cold from then on (decided on iteration counts, not time, so every run of a sweep decides
    alike). The session calls HiGHS directly (highspy), without cvxpy's compilation.

    Attributes
    ----------
    warm_solves, cold_solves : int
        How many solves started from a stored basis, and how many did not.
    """

    def __init__(self) -> None:
        self._bases: dict[tuple[int, ...], Any] = {}
        self._cold_iterations: dict[tuple[int, ...], int] = {}
        self._give_up: set[tuple[int, ...]] = set()
        self.warm_solves = 0
        self.cold_solves = 0

    @staticmethod
    def _key(lp: LinearProgram) -> tuple[int, ...]:
        return (lp.n, lp.A_ub.shape[0], lp.A_eq.shape[0], lp.A_ub.nnz, lp.A_eq.nnz)

    def solve(self, lp: LinearProgram, solver_args: dict[str, Any] | None = None) -> SolverOutcome:
        """Solve ``lp`` (maximise); ``solver_args["highs_options"]`` are set on HiGHS."""
        import highspy

        t0 = time.perf_counter()
        h = highspy.Highs()
        h.silent()
        options = dict((solver_args or {}).get("highs_options", {}))
        for name, value in options.items():
            h.setOptionValue(name, value)
        inf = highspy.kHighsInf
        a = sp.vstack([lp.A_ub, lp.A_eq], format="csc")
        model = highspy.HighsLp()
        model.num_col_, model.num_row_ = lp.n, a.shape[0]
        model.col_cost_ = -lp.c
        model.col_lower_ = lp.lb
        model.col_upper_ = np.where(np.isfinite(lp.ub), lp.ub, inf)
        model.row_lower_ = np.r_[np.full(lp.A_ub.shape[0], -inf), lp.b_eq]
        model.row_upper_ = np.r_[lp.b_ub, lp.b_eq]
        model.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        model.a_matrix_.start_ = a.indptr
        model.a_matrix_.index_ = a.indices
        model.a_matrix_.value_ = a.data
        h.passModel(model)
        key = self._key(lp)
        basis = self._bases.get(key)
        warm = (basis is not None and lp.warm_start and options.get("solver") != "ipm"
                and key not in self._give_up)
        if warm:
            h.setBasis(basis)
            # No more pivots than the cold solve needed: past that, presolve + cold is the better bet.
            h.setOptionValue("simplex_iteration_limit", max(100, self._cold_iterations.get(key, 0)))
            self.warm_solves += 1
        else:
            self.cold_solves += 1
        t1 = time.perf_counter()
        h.run()
        if warm and h.getModelStatus() == highspy.HighsModelStatus.kIterationLimit:
            self._give_up.add(key)
            h.clearSolver()
            h.setOptionValue("simplex_iteration_limit", highspy.kHighsIInf)
            h.run()
        t2 = time.perf_counter()
        status = h.getModelStatus()
        ok = status == highspy.HighsModelStatus.kOptimal
        if ok:
            z = np.asarray(h.getSolution().col_value, dtype=float)
            self._bases[key] = h.getBasis()
            if not warm:
                self._cold_iterations.setdefault(key, int(h.getInfo().simplex_iteration_count))
            return SolverOutcome("optimal", -float(h.getInfo().objective_function_value), z, "HIGHS (warm start)",
                                 t1 - t0, t2 - t1)
        infeasible = status in (highspy.HighsModelStatus.kInfeasible,
                                highspy.HighsModelStatus.kUnboundedOrInfeasible)
        name = "infeasible" if infeasible else h.modelStatusToString(status).lower()
        return SolverOutcome(name, math.nan, None, "HIGHS (warm start)", t1 - t0, t2 - t1)


def solve(lp: LinearProgram, *, solver: str | None = None, solver_args: dict[str, Any] | None = None,
          warm: WarmStart | None = None) -> SolverOutcome:
    """Solve ``lp`` with cvxpy (HiGHS by default); ``solver_args`` go to the solver unchanged.

    With ``warm`` (and HiGHS), the LP goes to the session's warm-started HiGHS instead (:class:`WarmStart`).
    """
    if warm is not None and (solver is None or solver.upper() == "HIGHS"):
        return warm.solve(lp, solver_args)
    import cvxpy as cp

    name = (solver or "HIGHS").upper()
    t0 = time.perf_counter()
    z = cp.Variable(lp.n)
    cons = [z >= lp.lb]
    if lp.A_eq.shape[0]:
        cons.append(lp.A_eq @ z == lp.b_eq)
    if lp.A_ub.shape[0]:
        cons.append(lp.A_ub @ z <= lp.b_ub)
    finite = np.isfinite(lp.ub)
    if finite.any():
        cons.append(z[np.flatnonzero(finite)] <= lp.ub[finite])
    prob = cp.Problem(cp.Maximize(lp.c @ z), cons)
    t1 = time.perf_counter()
    try:
        prob.solve(solver=name, **(solver_args or {}))
    except cp.error.SolverError as exc:
        return SolverOutcome(f"solver_error: {' '.join(str(exc).split())}", math.nan, None, name,
                             t1 - t0, time.perf_counter() - t1)
    t2 = time.perf_counter()
    status = _STATUS.get(str(prob.status), str(prob.status))
    value = z.value if status.startswith("optimal") else None
    objective = float(prob.value) if status.startswith("optimal") else math.nan
    return SolverOutcome(status, objective, None if value is None else np.asarray(value, dtype=float), name,
                         t1 - t0, t2 - t1)

