"""The invariant program and its exact table (the post-randomization method, PRAM): the best mechanism among those that
keep a prior's distribution of the released variable, released as an exact integer table (docs/theory.md section 12).

The steps of the engine's invariant route (:data:`designer.optimal.engine.ROUTES`); the designs themselves are made
by :func:`designer.optimal.design` and :func:`designer.optimal.invariant.design_invariant`.

A released categorical variable keeps its distribution ``pi`` in expectation when ``sum_x pi_x P[x, y] = pi_y``
for every category ``y``: linear constraints, added to the design's linear program (singleton answers only; a
set is not a category of the released variable). The program is solved in floats; the release is integers. With
``pi = a / Q`` exactly (the prior as written, or a file's counts), row ``x`` becomes counts ``J[x, :]`` over
``a_x M`` (``M = floor(2^53 / max a)``: two 32-bit words per draw) whose column sums are ``a_y M``: then
``sum_x pi_x J[x, y] / (a_x M) = a_y / Q = pi_y`` exactly. ``P`` is mixed with the shared row ``pi`` by the smallest
weight ``2^-52 2^j`` whose table certifies (a shared row keeps the prior invariant and never raises a ratio), made
exactly row-stochastic and invariant in rational arithmetic, and ``J`` is ``a_x M P[x, y]`` rounded with its margins
kept (each entry down or up, the ups placed by a maximum flow). The table's objective is released only within
:data:`INVARIANT_RTOL` (``1e-9``, relative) of the program's optimum.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._internal.exact import ratio_at_most_exp
from ..certificate import Certificate
from ..exceptions import CertificationError, InfeasibleDesignError, InvalidProblemError
from ..guarantees.exact_table import invariance_holds
from ..mechanism import Mechanism
from ..privacy import eps_shafer
from .objectives import objective_matrix
from .problem import DesignProblem

__all__ = ["INVARIANT_RTOL", "InvariantRelease", "InvariantTable", "certify_table", "exact_prior", "invariant_problem",
           "invariant_program", "invariant_table"]

#: Largest row denominator ``a_x M`` (two 32-bit words per draw, rejection above the largest multiple below 2^64;
#: every count is a double exactly, so a design file's JSON and the exported JavaScript hold it exactly).
MAX_ROW_DENOMINATOR = 2**53
#: Fewest counts per unit of ``a_x`` (2^24): below it the table would be too coarse to keep the optimum to
#: :data:`INVARIANT_RTOL` (a prior written with too many digits, or a file of more than about 5 10^8 rows).
MIN_SCALE = 2**24
#: First weight of the shared row ``pi`` mixed in before rounding, doubled until the table certifies (the rows hold
#: ``2^53 pi_x / max pi`` counts, so a ratio at the budget moves by about ``1e-16 / (pi_x P[x, y])``).
FIRST_MIX = 2.0**-52
#: Bisection steps from the first passing doubled weight down towards the last failing one (each step keeps a
#: weight only if its table certifies).
REFINE_STEPS = 6
#: The release rule: an invariant table's objective may fall short of the program's optimum by at most this
#: (relative; docs/theory.md section 12.2); the shortfall is printed with every design.
INVARIANT_RTOL = 1e-9


#: HiGHS' tolerances for the invariant program: at large budgets its default 1e-7 (and designer's 1e-9) let a cell
#: of a rare column that the optimum holds at about 1e-11 come back as 0, which the table's mix would then pay for
#: with about 1e-8 of the objective.
INVARIANT_TOLERANCES = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}


#: A mass more than this (relative) below its column's largest times e^-eps is the solver's tolerance, not the
#: optimum: it is raised (:func:`_lift`) to the bound times ``1 + LIFT_MARGIN`` before the table is made.
LIFT_RTOL = 1e-7
LIFT_MARGIN = 1e-9


#: A prior share is read as the simplest fraction this close to its float (the float of 0.3, or of 1/3, or one a
#: normalisation moved by a unit in the last place).
PRIOR_MATCH = 1e-12


def _simplest(value: float) -> Fraction:
    for digits in range(1, 10):
        fraction = Fraction(value).limit_denominator(10**digits)
        if abs(fraction - Fraction(value)) <= PRIOR_MATCH:
            return fraction
    return Fraction(value)


def exact_prior(values: Sequence[float | Fraction] | NDArray[np.float64]) -> tuple[Fraction, ...]:
    """The prior kept, exactly: each float as the simplest fraction within :data:`PRIOR_MATCH` of it (``0.3`` is
    3/10, ``1/3`` is 1/3), Fractions as they are, divided by their sum."""
    parts = [v if isinstance(v, Fraction) else _simplest(float(v)) for v in values]
    total = sum(parts, Fraction(0))
    if total <= 0 or any(p <= 0 for p in parts):
        raise InvalidProblemError("an invariant prior needs positive shares")
    return tuple(p / total for p in parts)


def invariant_program(problem: DesignProblem, prior: Sequence[float] | NDArray[np.float64], *,
                      solver: str | None = None, options: dict[str, Any] | None = None
                      ) -> tuple[NDArray[np.float64], float, str]:
    """Solve the invariant program in floats: ``max sum pi_x G[x, y] P[x, y]`` over row-stochastic ``P``
    (``(k, l)``, columns in frame order) with ``P[x, y] <= e^eps P[x', y]`` (Def 3.1; for singleton answers every
    loss of the paper is this one) and ``sum_x pi_x P[x, y(z)] = pi_z``, through
    :func:`designer._internal.solvers.solve_lp`
    (``solver`` and ``options`` as in :func:`designer.optimal.design`). Returns ``P``, the optimum and the solver's
    name."""
    import scipy.sparse as sp

    from .._internal.solvers import LinearProgram, Status, require_solution, solve_lp

    k = problem.k
    column = [problem.frame.index(x) for x in problem.inputs]  # the category y(z) of input z
    family = np.array([1 << j for j in range(problem.l)], dtype=np.int64)
    gain = objective_matrix(problem, family)
    e = problem.budget.lp_factor
    # Privacy through each column's smallest and largest mass (as the design programs write it, docs/theory.md
    # section 5.1): P[x, y] <= hi_y, lo_y <= P[x, y], hi_y <= e^eps lo_y; e^eps stands in k rows, not k^2 - k.
    n = k * k + 2 * k
    lo, hi = k * k, k * k + k
    x_of = np.repeat(np.arange(k), k)
    y_of = np.tile(np.arange(k), k)
    r = np.arange(k * k)
    upper = sp.csr_matrix((np.r_[np.ones(k * k), -np.ones(k * k)], (np.r_[r, r], np.r_[x_of * k + y_of, hi + y_of])),
                          shape=(k * k, n))
    lower = sp.csr_matrix((np.r_[-np.ones(k * k), np.ones(k * k)], (np.r_[r, r], np.r_[x_of * k + y_of, lo + y_of])),
                          shape=(k * k, n))
    y = np.arange(k)
    ratio = sp.csr_matrix((np.r_[np.ones(k), -e * np.ones(k)], (np.r_[y, y], np.r_[hi + y, lo + y])), shape=(k, n))
    a_ub = sp.vstack([upper, lower, ratio]).tocsr()
    a_eq = np.zeros((2 * k, n))
    b_eq = np.zeros(2 * k)
    for x in range(k):
        a_eq[x, x * k:(x + 1) * k] = 1.0
        b_eq[x] = 1.0
    for z in range(k):
        for x in range(k):
            a_eq[k + z, x * k + column[z]] = prior[x]
        b_eq[k + z] = prior[z]
    c = np.r_[gain.ravel().astype(np.float64), np.zeros(2 * k)]
    program = LinearProgram(c=c, A_ub=a_ub, b_ub=np.zeros(a_ub.shape[0]), A_eq=sp.csr_matrix(a_eq), b_eq=b_eq,
                            lb=np.zeros(n), ub=np.full(n, np.inf))
    if (solver or "HIGHS").upper() == "HIGHS":  # HiGHS' tightest tolerances, unless the caller sets them
        options = {**INVARIANT_TOLERANCES, **(options or {})}
    outcome = require_solution(solve_lp(program, solver=solver, options=options), "the invariant program")
    if outcome.status is Status.INFEASIBLE or outcome.z is None:
        raise InfeasibleDesignError("no invariant design meets the problem")  # P = 1 pi^T always does
    return np.clip(outcome.z[:k * k].reshape(k, k), 0.0, None), float(outcome.objective), outcome.solver


@dataclass(frozen=True)
class InvariantTable:
    """An invariant design's exact table.

    Attributes
    ----------
    counts : (k, l) ndarray of int64
        Row ``x`` over ``denominators[x]``; columns in frame order.
    denominators : (k,) ndarray of int64
        ``a_x M``.
    prior : tuple of Fraction
        The prior kept, exactly.
    mix_weight : float
        Weight of the shared row ``pi`` mixed in before rounding.
    """

    counts: NDArray[np.int64]
    denominators: NDArray[np.int64]
    prior: tuple[Fraction, ...]
    mix_weight: float


def _rows_private(counts: NDArray[np.int64], denominators: NDArray[np.int64], eps: float) -> bool:
    """Every ratio ``(C[x, y] / d_x) / (C[x', y] / d_x')`` at most ``e^eps``, decided with integers."""
    k = counts.shape[0]
    return all(ratio_at_most_exp(int(counts[x, y]) * int(denominators[x2]), int(counts[x2, y]) *
                                 int(denominators[x]), eps)
               for y in range(counts.shape[1]) for x in range(k) for x2 in range(k) if x != x2)


def _round_with_margins(target: list[list[Fraction]], row_sums: NDArray[np.int64], col_sums: NDArray[np.int64]
                        ) -> NDArray[np.int64] | None:
    """Integers, each ``target`` entry (exact rationals whose margins are the given ones) rounded down or up, with
    exactly the given margins: the floors, then one more on as many cells with a fractional part as each row and
    column lacks, placed by a maximum flow (rows to columns through those cells; it exists because the fractional
    parts themselves are such a flow)."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import maximum_flow

    base = np.array([[math.floor(v) for v in row] for row in target], dtype=np.int64)
    short_rows = row_sums - base.sum(axis=1)
    short_cols = col_sums - base.sum(axis=0)
    if np.any(short_rows < 0) or np.any(short_cols < 0) or short_rows.sum() != short_cols.sum():
        return None
    k, l = base.shape
    source, sink = 0, k + l + 1
    edges = [(source, 1 + x, int(short_rows[x])) for x in range(k) if short_rows[x] > 0]
    edges += [(1 + x, 1 + k + y, 1) for x in range(k) for y in range(l) if target[x][y] > int(base[x, y])]
    edges += [(1 + k + y, sink, int(short_cols[y])) for y in range(l) if short_cols[y] > 0]
    if not edges or short_rows.sum() == 0:
        return base if short_rows.sum() == 0 else None
    u, v, c = (np.array(t, dtype=np.int32) for t in zip(*edges))
    graph = csr_matrix((c, (u, v)), shape=(k + l + 2, k + l + 2))
    flow = maximum_flow(graph, source, sink)
    if flow.flow_value != short_rows.sum():
        return None
    moved = flow.flow.toarray()[1:1 + k, 1 + k:1 + k + l]
    return base + np.clip(moved, 0, None).astype(np.int64)


def _exact_mix(matrix: NDArray[np.float64], prior: Sequence[Fraction], column: Sequence[int], weight: float
               ) -> list[list[Fraction]] | None:
    """``(1 - t) P + t 1 pi^T`` in rational arithmetic (``P`` the solver's floats, each exactly), then corrected
    to rows summing to 1 and ``sum_x pi_x P[x, y(z)] = pi_z`` exactly by ``r pi^T + 1 c^T`` (``r`` the rows'
    shortfalls, ``c`` what the columns then lack): a change of the order of the solver's residuals (about
    ``1e-16``), small beside the mix ``t pi_y`` in every cell. None when a cell would be negative."""
    k, l = matrix.shape
    t = Fraction(weight)
    shared = [Fraction(0)] * l
    for z in range(k):
        shared[column[z]] = prior[z]
    mixed = [[(1 - t) * Fraction(float(v)) + t * shared[y] for y, v in enumerate(row)] for row in matrix]
    short = [1 - sum(row, Fraction(0)) for row in mixed]
    mixed = [[v + short[x] * shared[y] for y, v in enumerate(row)] for x, row in enumerate(mixed)]
    lack = [Fraction(0)] * l
    for z in range(k):
        y = column[z]
        lack[y] = prior[z] - sum((prior[x] * mixed[x][y] for x in range(k)), Fraction(0))
    out = [[v + lack[y] for y, v in enumerate(row)] for row in mixed]
    return out if all(v >= 0 for row in out for v in row) else None


def _lift(matrix: NDArray[np.float64], pi: NDArray[np.float64], column: Sequence[int], eps: float
          ) -> NDArray[np.float64]:
    """The solver's ``P`` with the masses it left more than :data:`LIFT_RTOL` below their column's largest times
    ``e^-eps`` raised to just above that, then rows and columns scaled until the rows sum to 1 and ``pi P = pi``
    again (proportional fitting: a column's scaling keeps its ratios, the rows' factors stay within about the
    solver's residuals of 1). At large budgets the solver holds a rare column's smallest masses (about
    ``e^-eps``) only to its absolute tolerance, and mixing the shared row ``pi`` in to cover that would cost about
    the tolerance over ``pi_y`` of the objective; raising just those masses costs what the optimum itself pays."""
    p = np.clip(matrix, 0.0, None)
    floor = p.max(axis=0) * math.exp(-min(eps, 700.0))
    low = p < floor * (1 - LIFT_RTOL)
    if not low.any():
        return p
    p = np.where(low, floor * (1 + LIFT_MARGIN), p)
    for _ in range(1000):
        p /= p.sum(axis=1, keepdims=True)
        for z, y in enumerate(column):
            p[:, y] *= pi[z] / float(pi @ p[:, y])
        if np.abs(p.sum(axis=1) - 1).max() <= 1e-15:
            break
    return p


def invariant_table(problem: DesignProblem, matrix: NDArray[np.float64], prior: Sequence[Fraction]
                    ) -> InvariantTable:
    """The exact, certified table of a solved invariant program ``matrix`` (``(k, l)``, frame order) keeping
    ``prior`` (Fractions summing to 1). Raises :class:`CertificationError` when no mix below 1/2 certifies, and
    :class:`InvalidProblemError` when the prior's denominators leave no room for a table over two 32-bit words."""
    k = problem.k
    column = [problem.frame.index(x) for x in problem.inputs]
    q = math.lcm(*(p.denominator for p in prior))
    a = np.array([int(p * q) for p in prior], dtype=np.int64)
    scale = MAX_ROW_DENOMINATOR // int(a.max())
    if scale < MIN_SCALE:
        raise InvalidProblemError(
            f"the prior's exact shares have denominator {q}: a row of an exact table would get fewer than "
            f"2^{MIN_SCALE.bit_length() - 1} counts per unit; give the prior to fewer digits (e.g. rounded to 1e-6) "
            "in the problem")
    rows = a * scale
    cols = np.zeros(k, dtype=np.int64)
    cols[column] = a * scale  # column y(z) sums to a_z M
    clean = _lift(np.asarray(matrix, dtype=np.float64), np.array([float(p) for p in prior]), column,
                  problem.epsilon)

    def attempt(weight: float) -> NDArray[np.int64] | None:
        mixed = _exact_mix(clean, prior, column, weight)
        if mixed is None:
            return None
        target = [[int(rows[x]) * v for v in row] for x, row in enumerate(mixed)]  # margins a_x M and a_z M exactly
        joint = _round_with_margins(target, rows, cols)
        if joint is not None and _rows_private(joint, rows, problem.epsilon) \
                and invariance_holds(joint, rows, prior, column):
            return joint
        return None

    weight, failed = 0.0, 0.0
    while weight < 0.5:
        joint = attempt(weight)
        if joint is not None:
            for _ in range(REFINE_STEPS if weight > FIRST_MIX else 0):  # the least passing weight, by bisection
                middle = (failed + weight) / 2
                closer = attempt(middle)
                if closer is None:
                    failed = middle
                else:
                    weight, joint = middle, closer
            return InvariantTable(counts=joint, denominators=rows, prior=tuple(prior), mix_weight=weight)
        failed = weight
        weight = FIRST_MIX if weight == 0 else 2 * weight
    raise CertificationError(f"no exact table of the invariant design certifies within eps = {problem.epsilon:g}")


def invariant_problem(problem: DesignProblem,
                      prior: Sequence[float | Fraction] | NDArray[np.float64] | None = None
                      ) -> tuple[DesignProblem, tuple[Fraction, ...]]:
    """``problem`` keeping ``prior`` (default its own) invariant, its prior the floats of the exact prior
    (:func:`exact_prior`), and that exact prior. Raises :class:`InvalidProblemError` with
    :meth:`DesignProblem.invariant_refusal`'s reason (sets among the answers, chi2, a frame that is not the
    inputs, ...)."""
    exact = exact_prior(problem.prior if prior is None else prior)
    kept = problem.replace(prior=np.array([float(p) for p in exact]), invariant=True)
    why = kept.invariant_refusal()
    if why:
        raise InvalidProblemError(why)
    return kept, exact


@dataclass(frozen=True)
class InvariantRelease:
    """A certified invariant table: ``mechanism`` (its masses, the counts over their denominators as floats),
    ``table`` and ``value`` (the table's objective, summed exactly)."""

    mechanism: Mechanism
    table: InvariantTable
    value: float


def certify_table(matrix: NDArray[np.float64], problem: DesignProblem, prior: Sequence[Fraction], optimum: float
                  ) -> tuple[InvariantRelease, Certificate]:
    """The exact table of a solved invariant program ``matrix`` (``(k, l)``) and its certificate, under the release
    rule: its objective within :data:`INVARIANT_RTOL` of ``optimum`` (the program's optimum at the problem's
    budget). Raises :class:`CertificationError` when no table certifies or the rule refuses it."""
    table = invariant_table(problem, matrix, prior)
    focal = [1 << j for j in range(problem.l)]
    masses = np.array([[float(Fraction(int(c), int(d))) for c in row] for row, d in zip(table.counts,
                                                                                      table.denominators)])
    mech = Mechanism(masses, inputs=problem.inputs, frame=problem.frame, focal=focal)
    gain = objective_matrix(problem, np.asarray(focal, dtype=np.int64))
    value = float(sum(Fraction(float(gain[x, y])) * Fraction(int(table.counts[x, y]), int(table.denominators[x]))
                      for x in range(problem.k) for y in range(problem.l)))
    if value < optimum - INVARIANT_RTOL * abs(optimum) - 1e-13:  # the release rule (1e-13: an optimum of 0)
        raise CertificationError(
            f"the invariant design's exact table gives objective {value:.10g}, more than {INVARIANT_RTOL:g} "
            f"(relative) below the program's optimum {optimum:.10g} (mixed with the prior by {table.mix_weight:g} to "
            "certify); nothing is released: give the prior to fewer digits or a slightly larger budget")
    solved = Mechanism(matrix / matrix.sum(axis=1, keepdims=True), inputs=problem.inputs, frame=problem.frame,
                       focal=focal)
    certificate = Certificate(
        epsilon=problem.epsilon, losses=problem.semantics.losses, repaired=table.mix_weight > 0,
        mix_weight=table.mix_weight,
        reference="mechanism answering by the prior, which keeps the prior invariant" if table.mix_weight else "",
        violation=eps_shafer(solved) - problem.epsilon,
        arithmetic="integer counts over a_x M per row; invariance checked in rational arithmetic")
    return InvariantRelease(mech, table, value), certificate
