"""Variance-optimal designs: the variances of the estimated shares, minimised as convex programs over staircase
pattern weights, with a certificate of optimality (docs/theory.md, section 5.7).

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
from ..exceptions import InvalidProblemError
from .problem import DesignProblem
from .share_variance import Pieces, pieces
from .variance_master import (
    Master,
    Patterns,
    _linear_rows,
    _solve_master_newton,
    candidate_patterns,
    solve_master,
)

__all__ = ["OPTIMALITY_GAP", "VarianceSolution", "solve_variance"]

#: A released design is called optimal when its objective is proved within this (relative) of the optimum.
OPTIMALITY_GAP = 1e-6
#: Column generation stops when the proved gap of the restricted optimum is below this (leaving room for the
#: cleaning and exact certification of the released mechanism within ``OPTIMALITY_GAP``).
TARGET_GAP = 1e-8
#: Reduced costs (relative) below which the rounds at loose solver tolerances stop bringing in patterns.
LOOSE_GAP = 1e-6
#: A round whose objective improves by less than this (relative) has stalled: the duals are made accurate.
STALL = 1e-8
#: At most this many rounds at the solver's full accuracy.
MAX_FINAL_ROUNDS = 8
#: At most this many rounds of column generation.
MAX_ROUNDS = 80
#: Patterns brought in per round, at most (the best priced ones).
NEW_COLUMNS = 48
#: Patterns are priced in blocks of this many (bounds the scratch memory at k = 20).
PRICE_BLOCK = 1 << 16


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
    """The proved lower bound on the optimum over every pattern (docs/theory.md, 5.7), in the program's scale.

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
        (docs/theory.md, 5.7); ``-inf`` when none was found.
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
    """Minimise the problem's variance objective over staircase pattern weights (SLDP; docs/theory.md 5.7).

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
        When no eps-SLDP design meets the structure (e.g. a don't-know mass and a lying bound that exclude each
        other at this budget; :func:`~designer.optimal.infeasible.class_refusal`).
    InvalidProblemError
        When designs exist but none identifies what the objective asks (too few answer sets, only "don't know")
        or none lies in the class solved over.
    SolverError
        When the conic solver stops without an answer.
    """
    parts = pieces(problem)
    pats = candidate_patterns(problem) if patterns is None else patterns
    if (problem.dont_know or 0.0) >= 1.0:  # designs exist (all "don't know"); none estimates: the problem's fault
        raise InvalidProblemError(
            f"'{problem.name or 'the problem'}' fixes the don't-know mass at 1: those answers carry no information, "
            "and no design estimates the shares; lower dont_know")
    if pats.size == 0 or not np.any(pats.bits != 0):
        raise InvalidProblemError(
            f"no answer set of '{problem.name or 'the problem'}' separates any two inputs (the focal sets or the "
            "lying bound leave only \"don't know\"): no design estimates the shares; allow more answer sets")
    _check_separates(problem, parts, pats)
    use_clarabel = solver is None or solver.upper() == "CLARABEL"
    options = dict(options or {})
    index = _start(problem, pats, warm)
    index = np.union1d(index, _check_feasible(problem, pats))
    final, rounds, bound, previous, tol, final_rounds = False, 0, -math.inf, math.inf, 1e-4, 0
    start: NDArray[np.float64] | None = None
    while True:
        rounds += 1
        final_rounds += final
        loose = {"tol_gap_abs": tol, "tol_gap_rel": tol, "tol_feas": min(tol, 1e-8)}
        # one piece from a feasible start: Newton steps (fast, and accurate to rounding); else the conic program
        master = (_solve_master_newton(problem, parts, pats, index, start)
                  if use_clarabel and start is not None and len(parts.R) == 1 else None)
        if master is None:
            master = solve_master(problem, parts, pats, index, solver, {**({} if final else loose), **options},
                                  options)
        value = float(np.max(_piece_values(parts, pats, index, master.w)))
        if not math.isfinite(value):
            break
        scaled = value * pats.kappa  # the program's own scale, in which prices are measured
        h = _prices(parts, pats, master)
        reduced = h - _row_prices(problem, pats, master)
        # every conic dual gives a valid bound: keep the best
        bound = max(bound, _bound(problem, parts, master, reduced) / pats.kappa)
        if value - bound <= TARGET_GAP * abs(value) or rounds >= MAX_ROUNDS or final_rounds >= MAX_FINAL_ROUNDS:
            break
        inside = np.zeros(pats.size, dtype=bool)
        inside[index] = True
        candidates = np.flatnonzero(~inside & (reduced > (TARGET_GAP if final else LOOSE_GAP) * abs(scaled)))
        stalled = previous - value <= STALL * abs(value)
        # the early programs need little accuracy: the solver's tolerance follows the progress
        tol = float(np.clip((previous - value) / abs(value) / 100, 1e-8, 1e-4)) if math.isfinite(previous) else tol
        previous = value
        if final and not candidates.size and problem.k <= PRIMAL_PRICING_INPUTS:
            # the conic dual prices nothing in but leaves a gap (a singular optimum: its dual is inaccurate):
            # price at the primal point instead, on the range of the information
            primal_bound, entering = _primal_pricing(problem, parts, pats, master.w, index, master.mu)
            bound = max(bound, primal_bound / pats.kappa)
            if value - bound <= TARGET_GAP * abs(value) or not entering.size:
                break
            candidates = entering
            stalled = False
        if not candidates.size or stalled:
            if final and not candidates.size:
                break  # nothing left to price in: the gap is what it is (reported)
            final = True  # from here on, the solver's full accuracy
            if not candidates.size:
                start = master.w
                continue
        best = candidates[np.argsort(-reduced[candidates], kind="stable")[:max(NEW_COLUMNS, 4 * problem.k)]]
        # a vertex keeps the early programs small; the final ones only grow (no cycling through equal optima)
        kept, weights = (index, master.w) if final else _support(problem, parts, pats, index, master.w)
        index = np.union1d(kept, best)
        start = np.zeros(index.size)
        start[np.searchsorted(index, kept)] = weights
    index, master, value = _polish(problem, parts, pats, index, master, value, solver, options)
    cols = pats.columns(index)
    # a column whose largest mass is below MIN_MASS is residue: its low entries would fall under the cleaning's
    # zero and leave an infinite ratio (the rows lose at most its mass, restored by the release's cleaning)
    used = master.w > MIN_MASS
    return VarianceSolution(cols[:, used] * master.w[used][None, :], pats.sets[index][used], value, bound,
                            rounds, int(index.size), pats.bits[index][used],
                            "CLARABEL" if use_clarabel else str(solver).upper())


#: Up to this many inputs a restricted optimum whose conic dual leaves a gap is priced at its primal point by a
#: linear program over every pattern (``2**k`` columns).
PRIMAL_PRICING_INPUTS = 14


def _primal_pricing(problem: DesignProblem, parts: Pieces, pats: Patterns, w: NDArray[np.float64],
                    index: NDArray[np.int64], mu: NDArray[np.float64]) -> tuple[float, NDArray[np.int64]]:
    """A bound and entering patterns from the primal point ``w`` over the patterns ``index`` (scaled units).

    For every ``X``, ``t' H^+ t >= 2 t . x - x' H x`` (``+inf`` off the range), so with ``X_p = H_p(w)^+ R_p`` and
    any ``mu`` in the simplex, every feasible ``w'`` over all patterns has
    ``f(w') >= sum_p mu_p (2 tr(X_p' R_p) - c_p) - max_{w' feasible} h . w'`` with
    ``h_b = sum_p mu_p |X_p' B'b_b|^2 / (pi_p . s_b)``: a linear program over every pattern. At a restricted
    optimum the bound meets the objective exactly when no pattern prices in (the program's optimality conditions);
    otherwise the linear program's support names the patterns to bring in. Returns the bound and those patterns.
    """
    cols, tang = pats.columns(index), pats.tangent(index)
    head = 0.0
    X: list[NDArray[np.float64]] = []
    for p, R in enumerate(parts.R):
        q = parts.priors[parts.scenario[p]] @ cols
        H = (tang * (w / q)) @ tang.T
        Xp = np.linalg.pinv((H + H.T) / 2, rcond=1e-12, hermitian=True) @ R
        X.append(Xp)
        head += float(mu[p]) * (2.0 * float(np.sum(Xp * R)) - float(parts.const[p]) * pats.kappa)
    every = np.arange(pats.size)
    all_cols, all_tang = pats.columns(every), pats.tangent(every)
    h = np.zeros(pats.size)
    for p, Xp in enumerate(X):
        q = parts.priors[parts.scenario[p]] @ all_cols
        h += float(mu[p]) * np.sum((Xp.T @ all_tang) ** 2, axis=0) / q
    A_eq, b_eq, A_ub, b_ub, _ = _linear_rows(problem, pats, every)
    out = solve_lp(LinearProgram(c=h, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq, lb=np.zeros(pats.size),
                                 ub=np.full(pats.size, np.inf), maximize=True))
    if out.status is not Status.OPTIMAL or out.z is None or out.objective is None:
        return -math.inf, np.zeros(0, dtype=np.int64)
    inside = np.zeros(pats.size, dtype=bool)
    inside[index] = True
    entering = np.flatnonzero((out.z > 1e-12) & ~inside)
    return head - float(out.objective), entering


def _check_separates(problem: DesignProblem, parts: Pieces, pats: Patterns) -> None:
    """Refuse, naming the inputs, answer sets that cannot identify the objective's targets: when every allowed
    pattern treats some inputs alike (the same entry in every column), the information of every design over them
    leaves their split unidentified, and a target that depends on it has infinite variance whatever the design."""
    if np.count_nonzero(np.bitwise_count(pats.bits) == 1) == problem.k:
        return  # k-RR's singletons separate every input
    tang = pats.tangent(np.flatnonzero(pats.bits != 0))
    basis, sing, _ = np.linalg.svd(tang, full_matrices=False)
    span = basis[:, sing > 1e-9 * max(float(sing.max(initial=0.0)), 1e-300)]
    missing = [R - span @ (span.T @ R) for R in parts.R]
    if all(float(np.abs(m).max(initial=0.0)) <= 1e-9 * max(1.0, float(np.abs(R).max(initial=0.0)))
           for m, R in zip(missing, parts.R)):
        return
    _, members = pats._members(None)
    classes: dict[bytes, list[str]] = {}
    for x, name in enumerate(problem.inputs):
        classes.setdefault(members[x].tobytes(), []).append(name)
    alike = [names for names in classes.values() if len(names) > 1]
    named = "; ".join(", ".join(repr(n) for n in names) for names in alike) or "no two inputs alike, too few sets"
    raise InvalidProblemError(
        f"'{problem.name or 'the problem'}': no allowed answer set separates the inputs {named} (every set holding "
        "one holds the others), so no design identifies their shares and the variance is infinite; allow focal sets "
        "that separate them (structure.focal_sets), or weight only shares they leave identified")


def _check_feasible(problem: DesignProblem, pats: Patterns) -> NDArray[np.int64]:
    """Refuse, with the reason, structure that no pattern weights meet (an LP over every candidate); otherwise the
    patterns of a feasible point, which the first restricted program takes in (the start's columns alone may meet
    no row sums under focal sets). Without structure rows k-RR's singletons meet the row sums: nothing to check."""
    if (problem.dont_know is None and problem.dont_know_max is None and problem.lie_max is None
            and np.count_nonzero(np.bitwise_count(pats.bits) == 1) == problem.k):
        return np.zeros(0, dtype=np.int64)
    index = np.arange(pats.size)
    A_eq, b_eq, A_ub, b_ub, _ = _linear_rows(problem, pats, index)
    # the most weight the rows leave to columns that tell inputs apart (not the constant "don't know" column)
    informative = ((pats.bits != 0) & (pats.bits != (1 << problem.k) - 1)).astype(float)
    out = solve_lp(LinearProgram(c=informative, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq, lb=np.zeros(pats.size),
                                 ub=np.full(pats.size, np.inf), maximize=True))
    if out.status is Status.INFEASIBLE:
        from .infeasible import class_refusal  # the general program's explanation (infeasible imports programs)

        raise class_refusal(problem, "staircase answers assigned to the allowed sets")
    if out.status is Status.OPTIMAL and out.objective is not None and out.objective <= 1e-9:
        raise InvalidProblemError(
            f"'{problem.name or 'the problem'}': its lying bound, don't-know mass and focal sets leave the staircase "
            f"answers objective '{problem.objective}' is solved over (docs/theory.md 5.7-5.8) only the constant "
            f"\"don't know\" column at epsilon = {problem.epsilon:g}: every such design answers alike whatever the "
            "truth and identifies no share, and no assignment of the unrestricted optimum's columns meets the "
            "structure; relax lie_max or the focal sets, or use objective 'truthful' or 'gain', which are solved "
            "over every design")
    if out.z is None:
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(out.z > 0)



def _support(problem: DesignProblem, parts: Pieces, pats: Patterns, index: NDArray[np.int64], w: NDArray[np.float64]
             ) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """The columns and weights of a vertex with the same information matrices and linear rows as ``w`` (an LP,
    simplex): an interior-point optimum spreads its weight over the whole optimal face; a vertex holds at most
    about ``k (k + 1) / 2`` patterns per scenario, which keeps the next restricted program small."""
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

    def excess(v: NDArray[np.float64]) -> float:  # how far ``v`` breaks the bounds (lying, don't-know cap)
        return float(np.max(A_ub @ v - b_ub, initial=0.0)) if A_ub.shape[0] else 0.0

    # the simplex meets its rows to its feasibility tolerance (1e-7), coarser than the conic program's: a vertex
    # that breaks a bound by more than the conic point did is not taken (its repair would cost objective)
    if out.status is not Status.OPTIMAL or out.z is None or excess(np.clip(out.z, 0.0, None)) > excess(w) + 1e-13:
        keep = w > 1e-12 * max(1.0, float(w.max()))
        return index[keep], w[keep]
    keep = out.z > 1e-12 * max(1.0, float(out.z.max()))
    return index[keep], np.clip(out.z[keep], 0.0, None)


#: Weights below this share of the largest are solver residue: the polished design drops them when the objective
#: stays within ``POLISH_RTOL`` (relative) of the program's.
POLISH_DROP = 1e-7
POLISH_RTOL = 1e-8
#: Columns of a released design carry at least this much mass (a column's largest entry is its weight).
MIN_MASS = 1e-10


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
        again = solve_master(problem, parts, pats, small, solver, options, options)
    except SolverError:
        return index, master, value
    polished = float(np.max(_piece_values(parts, pats, small, again.w)))
    if polished <= value + POLISH_RTOL * abs(value):
        again.w = np.where(again.w > 1e-13 * float(again.w.max()), again.w, 0.0)
        return small, again, polished
    return index, master, value
