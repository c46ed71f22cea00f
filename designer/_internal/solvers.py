"""The one place that calls a linear-programming solver (docs/theory.md, section 6).

Every linear program of the package (design programs, minimax tests, identified sets, credal
extreme points) is a :class:`LinearProgram` solved by :func:`solve_lp`:

* by default HiGHS, called directly through ``highspy`` (no modelling layer), in a thread that a
  Ctrl-C cancels, optionally from the optimal basis of the previous program of the same shape
  (:class:`WarmStart`);
* any other solver that cvxpy knows (``"CLARABEL"``, ``"GUROBI"``, ``"MOSEK"``, ...) through cvxpy, when
  the caller names it.

The outcome carries a :class:`Status`; a point reported optimal is checked against the program's rows
(residual) before it is returned. :func:`require_solution` turns every status but optimal or
infeasible into a :class:`SolverError` naming the solver, its status and the remedy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from ..exceptions import InvalidArgumentError, SolverError
from .native import silenced

__all__ = ["DEFAULT_SOLVER", "LinearProgram", "SolverError", "SolverOutcome", "Status", "WarmStart",
           "require_solution", "solve_lp"]

DEFAULT_SOLVER = "HIGHS"

#: A point the solver calls optimal must meet every row within this (relative to the row's scale).
RESIDUAL_TOL = 1e-6

#: HiGHS feasibility tolerances: tighter than its defaults (1e-7), so that solutions need little repair.
HIGHS_TOLERANCES = {"primal_feasibility_tolerance": 1e-9, "dual_feasibility_tolerance": 1e-9}


class Status(StrEnum):
    """How a solve ended."""

    OPTIMAL = "optimal"
    INFEASIBLE = "infeasible"
    UNBOUNDED = "unbounded"
    ITERATION_LIMIT = "iteration limit"
    TIME_LIMIT = "time limit"
    INACCURATE = "inaccurate"
    ERROR = "error"


@dataclass
class LinearProgram:
    """``max (or min) c.z  s.t.  A_ub z <= b_ub,  A_eq z == b_eq,  lb <= z <= ub``.

    Attributes
    ----------
    c : (n,) ndarray
    A_ub, A_eq : sparse matrices with ``n`` columns
    b_ub, b_eq : ndarrays
    lb, ub : (n,) ndarrays (``ub`` may hold ``inf``)
    maximize : bool, default True
    warm_start : bool, default True
        Whether a :class:`WarmStart` session may start it from a stored basis.
    """

    c: NDArray[np.float64]
    A_ub: sp.csr_matrix
    b_ub: NDArray[np.float64]
    A_eq: sp.csr_matrix
    b_eq: NDArray[np.float64]
    lb: NDArray[np.float64]
    ub: NDArray[np.float64]
    maximize: bool = True
    warm_start: bool = True

    @property
    def n(self) -> int:
        """Number of variables."""
        return int(self.c.size)

    def residual(self, z: NDArray[np.float64]) -> float:
        """Largest violation of a row or bound by ``z``, relative to the row's scale (0 when feasible)."""
        worst = 0.0
        scale = max(1.0, float(np.max(np.abs(z), initial=0.0)))
        for a, b, equality in ((self.A_ub, self.b_ub, False), (self.A_eq, self.b_eq, True)):
            if a.shape[0] == 0:
                continue
            r = a @ z - b
            r = np.abs(r) if equality else np.maximum(r, 0.0)
            largest = float(np.max(np.abs(a.data), initial=1.0))  # the scale of the largest coefficient
            worst = max(worst, float(np.max(r / (largest * scale + np.abs(b)))))
        worst = max(worst, float(np.max(self.lb - z, initial=0.0)), float(np.max(z - self.ub, initial=0.0)))
        return worst


@dataclass(frozen=True)
class SolverOutcome:
    """What the solver said.

    Attributes
    ----------
    status : Status
    objective : float
        The claimed optimum (NaN unless optimal).
    z : (n,) ndarray or None
        The solution (None unless optimal).
    solver : str
        Which solver, e.g. ``"HIGHS"`` or ``"HIGHS (warm start)"``.
    detail : str
        The solver's own words for its status.
    row_dual, col_dual : ndarray or None
        HiGHS's duals of an optimal program in its minimisation form (the inequality rows first, then the
        equalities; a maximised program's costs negated): ``col_dual = cost - A' row_dual``. None otherwise.
    """

    status: Status
    objective: float
    z: NDArray[np.float64] | None
    solver: str
    detail: str = ""
    row_dual: NDArray[np.float64] | None = None
    col_dual: NDArray[np.float64] | None = None


def require_solution(outcome: SolverOutcome, what: str = "the program") -> SolverOutcome:
    """Return ``outcome`` when it is optimal or infeasible; raise :class:`SolverError` otherwise."""
    if outcome.status in (Status.OPTIMAL, Status.INFEASIBLE):
        return outcome
    other = "HIGHS" if outcome.solver.upper().startswith("CLARABEL") else "CLARABEL"
    remedy = {
        Status.ITERATION_LIMIT: f"raise the iteration limit (solver_options) or use another solver (solver='{other}')",
        Status.TIME_LIMIT: "raise the time limit (solver_options) or make the problem smaller",
        Status.UNBOUNDED: "check the objective table (gains and utilities must be finite)",
    }.get(outcome.status, f"try another solver (solver='{other}') or rescale the problem")
    detail = f" ({outcome.detail})" if outcome.detail and outcome.detail != outcome.status.value else ""
    raise SolverError(f"the solver {outcome.solver} stopped on {what} with status '{outcome.status.value}'"
                      f"{detail}; {remedy}")


# ---------------------------------------------------------------------------- HiGHS
_HIGHS_STATUS = {
    "kOptimal": Status.OPTIMAL,
    "kInfeasible": Status.INFEASIBLE,
    "kUnboundedOrInfeasible": Status.INFEASIBLE,
    "kUnbounded": Status.UNBOUNDED,
    "kIterationLimit": Status.ITERATION_LIMIT,
    "kTimeLimit": Status.TIME_LIMIT,
}


def _highs_model(lp: LinearProgram) -> Any:
    import highspy

    inf = highspy.kHighsInf
    ub, eq = _csr(lp.A_ub), _csr(lp.A_eq)  # rows of both, stacked without scipy's vstack
    start = np.concatenate([ub.indptr, ub.indptr[-1] + eq.indptr[1:]]).astype(np.int32)
    model = highspy.HighsLp()
    model.num_col_, model.num_row_ = lp.n, ub.shape[0] + eq.shape[0]
    model.col_cost_ = -lp.c if lp.maximize else lp.c
    model.col_lower_ = lp.lb
    model.col_upper_ = np.where(np.isfinite(lp.ub), lp.ub, inf)
    model.row_lower_ = np.concatenate([np.full(ub.shape[0], -inf), lp.b_eq])
    model.row_upper_ = np.concatenate([lp.b_ub, lp.b_eq])
    model.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
    model.a_matrix_.start_ = start
    model.a_matrix_.index_ = np.concatenate([ub.indices, eq.indices]).astype(np.int32)
    model.a_matrix_.value_ = np.concatenate([ub.data, eq.data]).astype(np.float64)
    return model


def _csr(a: Any) -> Any:
    """``a`` in CSR form, without a copy when it already is."""
    return a if sp.issparse(a) and a.format == "csr" else sp.csr_matrix(a)


#: After a Ctrl-C, how long to wait for HiGHS to stop before leaving its thread behind (presolve and
#: crossover do not look at the interrupt flag; the thread is a daemon and ends with the process).
CANCEL_WAIT = 1.0


#: Programs with fewer nonzeros than this are solved in the calling thread (a few milliseconds: a Ctrl-C
#: is seen as soon as they return); larger ones in a thread that a Ctrl-C cancels.
THREAD_NONZEROS = 20_000


def _run_highs(h: Any, nonzeros: int = THREAD_NONZEROS) -> None:
    """Run HiGHS in a thread of its own and poll it, so that Ctrl-C stops the solve at once.

    ``KeyboardInterrupt`` is raised again once HiGHS has stopped, or after ``CANCEL_WAIT`` seconds in a
    phase that does not look at the interrupt flag.
    """
    if nonzeros < THREAD_NONZEROS:
        h.run()
        return
    h.HandleUserInterrupt = True  # cancelSolve() is then seen by simplex and IPM at their interrupt checks
    thread = h.startSolve()
    try:
        done = False
        while not done:
            done, _ = h.wait(0.05)
    except KeyboardInterrupt:
        h.cancelSolve()
        thread.join(CANCEL_WAIT)
        if thread.is_alive():
            _ABANDONED.append(thread)
        raise


#: HiGHS threads left running after a Ctrl-C (see :func:`solver_threads_running`).
_ABANDONED: list[Any] = []


def solver_threads_running() -> bool:
    """Whether a cancelled HiGHS solve is still running in a thread of its own (then a program that is
    about to exit should leave with ``os._exit``: the interpreter cannot finalise under a running solver)."""
    return any(t.is_alive() for t in _ABANDONED)


class WarmStart:
    """Solve a sequence of programs of one shape with HiGHS, each from the previous optimal basis.

    A sweep over epsilon changes only the coefficients ``e^eps`` of the privacy rows, so the optimal basis
    of one budget is a good start for the next. A warm start skips HiGHS's presolve, so it pays only where
    presolve matters little: the staircase LP and the size-class programs (``LinearProgram.warm_start``).
    A warm solve may pivot at most as often as the first cold solve of its shape; at that limit it is
    finished cold and the shape is solved cold from then on (decided on iteration counts, not time, so
    every run of a sweep decides alike).
    """

    def __init__(self) -> None:
        self._bases: dict[tuple[int, ...], Any] = {}
        self._cold_iterations: dict[tuple[int, ...], int] = {}
        self._give_up: set[tuple[int, ...]] = set()
        #: What else a session carries from one design to the next, by its owner's key (the priced answer sets of
        #: designer.optimal.columns: the next budget's first program starts from them).
        self.extras: dict[tuple[Any, ...], Any] = {}

    @staticmethod
    def key(lp: LinearProgram) -> tuple[int, ...]:
        """The shape of a program: programs of one key share a basis."""
        return (lp.n, lp.A_ub.shape[0], lp.A_eq.shape[0], lp.A_ub.nnz, lp.A_eq.nnz)

    def usable(self, lp: LinearProgram, options: dict[str, Any]) -> Any:
        """The stored basis to start ``lp`` from, or None."""
        key = self.key(lp)
        if not lp.warm_start or options.get("solver") == "ipm" or key in self._give_up:
            return None
        return self._bases.get(key)

    def cold_iterations(self, lp: LinearProgram) -> int:
        return self._cold_iterations.get(self.key(lp), 0)

    def record(self, lp: LinearProgram, basis: Any, iterations: int, *, warm: bool) -> None:
        key = self.key(lp)
        self._bases[key] = basis
        if not warm:
            self._cold_iterations.setdefault(key, iterations)

    def give_up(self, lp: LinearProgram) -> None:
        self._give_up.add(self.key(lp))


def _bad_highs_option(h: Any, name: str, value: Any) -> str:
    """Why HiGHS refused ``name = value``: an unknown name (with the close ones), or a value out of its type."""
    import difflib

    import highspy

    if h.getOptionType(name)[0] == highspy.HighsStatus.kError:
        known = [o for o in dir(h.getOptions()) if not o.startswith("_")]
        close = difflib.get_close_matches(name, known, n=3)
        hint = f"; did you mean {' or '.join(map(repr, close))}?" if close else "; see HiGHS's list of options"
        return f"solver option {name!r} is not a HiGHS option{hint}"
    return f"solver option {name!r}: HiGHS refuses the value {value!r} (wrong type or out of range)"


def _solve_highs(lp: LinearProgram, options: dict[str, Any], warm: WarmStart | None) -> SolverOutcome:
    import highspy

    h = highspy.Highs()
    h.silent()
    for name, value in {**HIGHS_TOLERANCES, **options}.items():
        if h.setOptionValue(name, value) == highspy.HighsStatus.kError:
            raise InvalidArgumentError(_bad_highs_option(h, name, value))
    h.passModel(_highs_model(lp))
    basis = warm.usable(lp, options) if warm is not None else None
    name = "HIGHS" if basis is None else "HIGHS (warm start)"
    if basis is not None:
        assert warm is not None
        h.setBasis(basis)
        # No more pivots than the cold solve needed: past that, presolve + cold is the better bet.
        h.setOptionValue("simplex_iteration_limit", max(100, warm.cold_iterations(lp)))
    _run_highs(h, lp.A_ub.nnz + lp.A_eq.nnz)
    status_name = h.modelStatusToString(h.getModelStatus())
    raw = str(h.getModelStatus()).rsplit(".", 1)[-1]
    if basis is not None and raw == "kIterationLimit":
        assert warm is not None
        warm.give_up(lp)
        h.clearSolver()
        h.setOptionValue("simplex_iteration_limit", options.get("simplex_iteration_limit", highspy.kHighsIInf))
        _run_highs(h, lp.A_ub.nnz + lp.A_eq.nnz)
        status_name = h.modelStatusToString(h.getModelStatus())
        raw = str(h.getModelStatus()).rsplit(".", 1)[-1]
    status = _HIGHS_STATUS.get(raw, Status.ERROR)
    if status is not Status.OPTIMAL:
        return SolverOutcome(status, math.nan, None, name, status_name)
    z = np.asarray(h.getSolution().col_value, dtype=float)
    if warm is not None:
        warm.record(lp, h.getBasis(), int(h.getInfo().simplex_iteration_count), warm=basis is not None)
    value = float(h.getInfo().objective_function_value)
    solution = h.getSolution()
    return SolverOutcome(status, -value if lp.maximize else value, z, name, status_name,
                         np.asarray(solution.row_dual, dtype=float), np.asarray(solution.col_dual, dtype=float))


# ---------------------------------------------------------------------------- cvxpy
_CVXPY_STATUS = {
    "optimal": Status.OPTIMAL,
    "optimal_inaccurate": Status.INACCURATE,
    "infeasible": Status.INFEASIBLE,
    "infeasible_inaccurate": Status.INFEASIBLE,
    "unbounded": Status.UNBOUNDED,
    "unbounded_inaccurate": Status.UNBOUNDED,
    "infeasible_or_unbounded": Status.INFEASIBLE,
    "user_limit": Status.ITERATION_LIMIT,
}


def _solve_cvxpy(lp: LinearProgram, solver: str, options: dict[str, Any]) -> SolverOutcome:
    import cvxpy as cp

    z = cp.Variable(lp.n)
    cons = [z >= lp.lb]
    if lp.A_eq.shape[0]:
        cons.append(lp.A_eq @ z == lp.b_eq)
    if lp.A_ub.shape[0]:
        cons.append(lp.A_ub @ z <= lp.b_ub)
    finite = np.isfinite(lp.ub)
    if finite.any():
        cons.append(z[np.flatnonzero(finite)] <= lp.ub[finite])
    goal = cp.Maximize(lp.c @ z) if lp.maximize else cp.Minimize(lp.c @ z)
    prob = cp.Problem(goal, cons)
    try:
        prob.solve(solver=solver, **options)
    except cp.error.SolverError as exc:
        return SolverOutcome(Status.ERROR, math.nan, None, solver, " ".join(str(exc).split()))
    status = _CVXPY_STATUS.get(str(prob.status), Status.ERROR)
    if status is not Status.OPTIMAL or z.value is None:
        return SolverOutcome(status, math.nan, None, solver, str(prob.status))
    return SolverOutcome(status, float(prob.value), np.asarray(z.value, dtype=float), solver, str(prob.status))


@silenced
def solve_lp(lp: LinearProgram, *, solver: str | None = None, options: dict[str, Any] | None = None,
             warm: WarmStart | None = None) -> SolverOutcome:
    """Solve ``lp``.

    Parameters
    ----------
    lp : LinearProgram
    solver : str, optional
        ``None`` or ``"HIGHS"``: HiGHS through highspy (the default); any other name is a cvxpy solver.
    options : dict, optional
        HiGHS options (``{"solver": "ipm"}``, ``{"simplex_iteration_limit": 100}``) or, for a cvxpy
        solver, keyword arguments of ``Problem.solve``.
    warm : WarmStart, optional
        A session that starts HiGHS from the previous optimal basis of a program of the same shape.

    Returns
    -------
    SolverOutcome
        An ``OPTIMAL`` point has passed the residual check (else the status is ``INACCURATE``).
    """
    name = (solver or DEFAULT_SOLVER).upper()
    opts = dict(options or {})
    if name == DEFAULT_SOLVER:
        outcome = _solve_highs(lp, opts, warm)
    else:
        outcome = _solve_cvxpy(lp, name, opts)
    if outcome.status is Status.OPTIMAL and outcome.z is not None:
        residual = lp.residual(outcome.z)
        if residual > RESIDUAL_TOL:
            return SolverOutcome(Status.INACCURATE, math.nan, None, outcome.solver,
                                 f"claimed optimal, but a row is violated by {residual:.2g}")
    return outcome


@dataclass(frozen=True)
class LinprogResult:
    """The answer of :func:`minimize`: ``status`` 0 when optimal (as ``scipy.optimize.linprog``)."""

    status: int
    x: NDArray[np.float64]
    fun: float
    message: str


def minimize(c: Any, *, A_ub: Any = None, b_ub: Any = None, A_eq: Any = None, b_eq: Any = None,
             bounds: Any = (0, None)) -> LinprogResult:
    """``min c.z`` under ``linprog``-style arguments, solved by :func:`solve_lp` (HiGHS).

    ``bounds`` is one ``(low, high)`` pair for every variable or a list of pairs (``None``: unbounded).
    Any status but optimal is ``status != 0`` with the solver's words in ``message``.
    """
    c = np.asarray(c, dtype=np.float64)
    n = c.size
    pairs = [bounds] * n if isinstance(bounds, tuple) else list(bounds)
    lb = np.array([-np.inf if lo is None else lo for lo, _ in pairs], dtype=np.float64)
    ub = np.array([np.inf if hi is None else hi for _, hi in pairs], dtype=np.float64)

    def rows(a: Any, b: Any) -> tuple[sp.csr_matrix, NDArray[np.float64]]:
        if a is None:
            return sp.csr_matrix((0, n)), np.zeros(0)
        return _csr(a), np.asarray(b, dtype=np.float64).ravel()

    a_ub, bu = rows(A_ub, b_ub)
    a_eq, be = rows(A_eq, b_eq)
    outcome = solve_lp(LinearProgram(c, a_ub, bu, a_eq, be, lb, ub, maximize=False))
    if outcome.status is not Status.OPTIMAL or outcome.z is None:
        return LinprogResult(1, np.full(n, np.nan), math.nan, outcome.detail or outcome.status.value)
    return LinprogResult(0, outcome.z, outcome.objective, outcome.detail)
