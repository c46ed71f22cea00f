"""WLDP design programs by column generation on top of row generation: the candidate answer sets are priced
from the duals instead of enumerated (docs/theory.md section 5.10).

A frame of ``l`` answers has ``2**l - 1`` candidate sets per input. The program here starts with the
singletons, their complements and the whole frame, solves it by row generation
(:func:`~designer.design.lazy.solve_walley_lazily`), and prices every other set from the optimal duals. In the
program's minimisation form a mass ``M[x, S]`` enters the row sum of ``x``, the structure rows (the whole
frame's don't-know row; the lying row of ``x`` when ``S`` misses ``x``'s true answer) and, with coefficient
``-1``, the belief definition ``B_x(E) - sum_{F within E} M[x, F] = 0`` of every event ``E`` containing ``S``,
so its reduced cost is

    d[x, S] = -gain[x, S] - u_x - (structure duals) + sum_{E superset of S} y[x, E],

the last sum a superset zeta transform of the definition rows' duals, ``O(l 2**l)`` per input. Sets with
``d < 0`` join the program (the most negative first), which is solved again, until none is left: the last
program's optimum is then the full program's (every column prices out, every Walley row holds). The formula is
checked against the solver's own reduced costs of the columns already in the program at every round.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from .. import setfunctions as sf
from ..exceptions import SolverError
from ..solvers import Status
from ..vocabulary import Semantics
from .lazy import RowGeneration, solve_walley_lazily
from .objectives import objective_matrix
from .problem import DesignProblem

__all__ = ["COLUMNS_PER_ROUND", "COLUMN_MIN_FRAME", "MAX_COLUMN_ROUNDS", "PRICE_TOL", "ColumnGeneration", "eligible",
           "generate_columns"]

#: A set whose reduced cost is below ``-PRICE_TOL`` (objective units) joins the program.
PRICE_TOL = 1e-9
#: Most new sets per input per round (the most negative reduced costs first).
COLUMNS_PER_ROUND = 32
#: Most rounds before giving up (SolverError: never the optimum of a program that misses columns).
MAX_COLUMN_ROUNDS = 200
#: The engine prices the sets of frames of at least this many answers (below, enumerating them is cheap and the
#: full program's vertex is kept).
COLUMN_MIN_FRAME = 13
#: Candidate sets priced at once (bounds the memory of the objective's table).
PRICE_CHUNK = 1 << 16
#: The formula's reduced costs of the program's own columns must match the solver's within this.
DUAL_CHECK_TOL = 1e-6


class ColumnGeneration(NamedTuple):
    """What column generation returns: the sets of the last program, its row generation, the rounds and the
    sets priced in all."""

    family: NDArray[np.int64]
    rows: RowGeneration
    rounds: int
    priced: int


def _seed(problem: DesignProblem) -> NDArray[np.int64]:
    l = problem.l
    full = (1 << l) - 1
    singles = np.array([1 << i for i in range(l)], dtype=np.int64)
    return np.unique(np.r_[singles, full ^ singles, full]).astype(np.int64)


def eligible(problem: DesignProblem, *, min_frame: int = 3) -> bool:
    """Whether column generation applies: WLDP alone, a linear objective, no focal-set restriction, a frame of at
    least ``min_frame`` answers (the engine passes :data:`COLUMN_MIN_FRAME`)."""
    return (problem.semantics is Semantics.WLDP and problem.objective.linear and problem.focal_sets is None
            and problem.k > 1 and problem.l >= max(3, min_frame))


def _reduced_costs(problem: DesignProblem, rows: RowGeneration, sets: NDArray[np.int64],
                   superset: NDArray[np.float64]) -> NDArray[np.float64]:
    """``d[x, S]`` of the masses of ``sets`` (``(k, len(sets))``) from the last program's duals;
    ``superset[x]`` is the superset zeta transform of input ``x``'s definition-row duals over ``2**l``."""
    program, outcome = rows.program, rows.outcome
    assert outcome.row_dual is not None
    k, l = problem.k, problem.l
    full = (1 << l) - 1
    n_ub = program.A_ub.shape[0]
    y_ub, y_eq = outcome.row_dual[:n_ub], outcome.row_dual[n_ub:]
    d = -objective_matrix(problem, sets) - y_eq[:k, None] + superset[:, sets]
    bounds = program.bound_rows
    is_full = sets == full
    if "dont_know" in bounds:
        _, span = bounds["dont_know"]
        d[:, is_full] -= y_eq[span][:, None]
    if "dont_know_max" in bounds:
        _, span = bounds["dont_know_max"]
        d[:, is_full] -= y_ub[span][:, None]
    if "lie_max" in bounds:
        _, span = bounds["lie_max"]
        lies = ((sets[None, :] >> problem.truth()[:, None]) & 1) == 0
        d -= np.where(lies, y_ub[span][:, None], 0.0)
    return np.asarray(d)


def _superset_duals(problem: DesignProblem, rows: RowGeneration) -> NDArray[np.float64]:
    """``(k, 2**l)``: for every set ``S``, the sum of the definition rows' duals of the events containing it."""
    program, outcome = rows.program, rows.outcome
    events = program.events
    assert outcome.row_dual is not None and events is not None
    k, l = problem.k, problem.l
    n_ub, n_eq = program.A_ub.shape[0], program.A_eq.shape[0]
    defined = events.size * k
    y_def = outcome.row_dual[n_ub + n_eq - defined:].reshape(events.size, k)  # row pos * k + x
    table = np.zeros((k, 1 << l))
    table[:, events] = y_def.T
    return np.asarray(sf.superset_zeta(table))


def generate_columns(problem: DesignProblem, solver: str | None = None, options: dict[str, Any] | None = None
                     ) -> ColumnGeneration:
    """The sets of an optimal WLDP design of ``problem`` (:func:`eligible`), found by pricing.

    Returns a :class:`ColumnGeneration` whose last program, restricted to ``family``, has the full program's
    optimum. Raises :class:`SolverError` when the duals do not reproduce the solver's reduced costs (the
    program's layout is not the one priced here) or when sets still price in after :data:`MAX_COLUMN_ROUNDS`.
    """
    k, l = problem.k, problem.l
    family = _seed(problem)
    every = np.arange(1, 1 << l, dtype=np.int64)
    priced = 0
    for rounds in range(1, MAX_COLUMN_ROUNDS + 1):
        rows = solve_walley_lazily(problem.replace(focal_sets=family), solver, options)
        outcome = rows.outcome
        if outcome.status is not Status.OPTIMAL or outcome.row_dual is None or outcome.col_dual is None:
            return ColumnGeneration(family, rows, rounds, priced)
        superset = _superset_duals(problem, rows)
        own = _reduced_costs(problem, rows, rows.program.family, superset)
        solver_own = outcome.col_dual[: k * rows.program.family.size].reshape(k, -1)
        scale = max(1.0, float(np.abs(solver_own).max()))
        if not np.allclose(own, solver_own, rtol=0, atol=DUAL_CHECK_TOL * scale):
            raise SolverError("column generation: the duals do not reproduce the solver's reduced costs "
                              f"(largest difference {float(np.abs(own - solver_own).max()):.2g}); solve the full "
                              "program instead")
        present = np.zeros(1 << l, dtype=bool)
        present[family] = True
        # each input's most negative reduced costs so far: (sets, costs), at most COLUMNS_PER_ROUND of them
        best = [(np.zeros(0, dtype=np.int64), np.zeros(0)) for _ in range(k)]
        for start in range(0, every.size, PRICE_CHUNK):
            sets = every[start:start + PRICE_CHUNK]
            sets = sets[~present[sets]]
            if sets.size == 0:
                continue
            d = _reduced_costs(problem, rows, sets, superset)
            priced += sets.size
            for x in range(k):
                bad = np.flatnonzero(d[x] < -PRICE_TOL)
                kept, costs = np.r_[best[x][0], sets[bad]], np.r_[best[x][1], d[x, bad]]
                if kept.size > COLUMNS_PER_ROUND:
                    top = np.argpartition(costs, COLUMNS_PER_ROUND)[:COLUMNS_PER_ROUND]
                    kept, costs = kept[top], costs[top]
                best[x] = (kept, costs)
        new = np.unique(np.concatenate([sets for sets, _ in best]))
        if new.size == 0:
            return ColumnGeneration(family, rows, rounds, priced)
        family = np.union1d(family, new).astype(np.int64)
    raise SolverError(f"column generation stopped at its cap of {MAX_COLUMN_ROUNDS} rounds with sets still "
                      "pricing in; solve the full program instead (a smaller frame)")
