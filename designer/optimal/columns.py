"""Design programs by column generation: the candidate answer sets are priced from the duals instead of enumerated,
under every semantics (docs/pricing.md; docs/theory.md section 5.10 for WLDP).

A frame of ``l`` answers has ``2**l - 1`` candidate sets per input. The program here starts with the singletons,
their complements and the whole frame, solves it (WLDP and both by row generation,
:func:`~designer.optimal.lazy.solve_walley_lazily`; SLDP directly), and prices every other allowed set from the
optimal duals. In the program's minimisation form a mass ``M[x, S]`` enters the row sum of ``x`` (dual ``u_x``),
the structure rows (the whole frame's don't-know row; the lying row of ``x`` when ``S`` misses ``x``'s true
answer) and, under WLDP and both, with coefficient ``-1`` the belief definition ``B_x(E) - sum_{F within E}
M[x, F] = 0`` of every event ``E`` containing ``S`` (dual ``y[x, E]``), so its cost net of the shared rows is

    d[x, S] = -gain[x, S] - u_x - (structure duals) + sum_{E superset of S} y[x, E],

the last sum a superset zeta transform of the definition rows' duals, ``O(l 2**l)`` per input.

* WLDP: each mass is a column of its own; ``d[x, S]`` is its reduced cost and a mass with ``d < 0`` enters.
* SLDP and both: a set ``S`` brings its masses together with its Shafer rows (Def 3.1: ``max_x M[x, S] <=
  e^eps min_x M[x, S]``), so the column is the whole vector ``M[., S]`` in the cone those rows cut out. Every
  nonzero vector of that cone, scaled to smallest entry 1, lies in the box ``[1, e^eps]^k`` (and the box lies in
  the cone), so the set improves the program exactly when

      r(S) = sum_x min(d[x, S], e^eps d[x, S]) < 0,

  and when ``r(S) >= 0`` duals for its Shafer rows exist that make all its masses price out (Farkas' lemma).

Sets with a negative price join the program (the most negative first), which is solved again, until none is left:
the last program's optimum is then the full program's (every column prices out, every Walley row holds). The
formula is checked against the solver's own reduced costs of the masses already in the program at every round
(under SLDP and both with the duals of their Shafer rows added back).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from .. import setfunctions as sf
from .._internal.solvers import Status, WarmStart, solve_lp
from ..exceptions import SolverError
from ..vocabulary import Objective
from .lazy import RowGeneration, solve_walley_lazily
from .objectives import objective_matrix
from .problem import DesignProblem
from .programs import linear_program

__all__ = ["COLUMNS_PER_ROUND", "COLUMN_MIN_FRAME", "MAX_COLUMN_ROUNDS", "PRICE_TOL", "ColumnGeneration", "eligible",
           "generate_columns", "objective_table", "set_prices"]

#: A set whose reduced cost is below ``-PRICE_TOL`` (objective units) joins the program.
PRICE_TOL = 1e-9
#: Most new sets per input per round under WLDP, and per round under SLDP and both (the most negative first).
COLUMNS_PER_ROUND = 32
#: Most rounds before giving up (SolverError: never the optimum of a program that misses columns).
MAX_COLUMN_ROUNDS = 200
#: The engine prices the sets of frames of at least this many answers (below, enumerating them is cheap and the
#: full program's vertex is kept). Measured (CPU, skewed priors, truthful): from 8 answers pricing wins, 0.01 s against
#: 0.09 s at l = 8 and 0.23 s at l = 10 (SLDP and WLDP), and the full program took minutes at l = 12.
COLUMN_MIN_FRAME = 8
#: Entries of the cost table ``(k, sets)`` priced at once (bounds the memory of the objective's table).
PRICE_ENTRIES = 1 << 21
#: The formula's reduced costs of the program's own columns must match the solver's within this.
DUAL_CHECK_TOL = 1e-6


class ColumnGeneration(NamedTuple):
    """What column generation returns: the sets of the last program, its row generation (for SLDP the one program
    solved, ``rows == 0``), the rounds and the sets priced in all."""

    family: NDArray[np.int64]
    rows: RowGeneration
    rounds: int
    priced: int


def _universe(problem: DesignProblem) -> NDArray[np.int64]:
    """The allowed sets: every nonempty subset, or the focal-set restriction."""
    if problem.focal_sets is None:
        return np.arange(1, 1 << problem.l, dtype=np.int64)
    return problem.family()


def _seed(problem: DesignProblem, start: NDArray[np.int64] | None = None) -> NDArray[np.int64]:
    """The first program's sets: the singletons, their complements, the whole frame, the set of every input's true
    answer (the one set a design with ``lie_max = 0`` may share between inputs), and ``start``; only the allowed
    ones (when none is allowed, the first ``2 l + 1`` allowed sets)."""
    l = problem.l
    full = (1 << l) - 1
    singles = np.array([1 << i for i in range(l)], dtype=np.int64)
    truth = problem.truth()
    truths = [int(np.bitwise_or.reduce(1 << truth))] if np.all(truth >= 0) else []
    seed = np.r_[singles, full ^ singles, full, truths, [] if start is None else start].astype(np.int64)
    if problem.focal_sets is None:
        return np.unique(seed[(seed > 0) & (seed <= full)])
    universe = problem.family()
    kept = np.intersect1d(seed, universe)
    return kept if kept.size else universe[: 2 * l + 1]


def eligible(problem: DesignProblem, *, min_frame: int = 3) -> bool:
    """Whether column generation applies: a linear objective, at least two inputs, a frame of at least
    ``min_frame`` answers (the engine passes :data:`COLUMN_MIN_FRAME`) and, under a focal-set restriction, at
    least ``2**(min_frame - 1)`` allowed sets (fewer are cheap to enumerate). Every semantics."""
    if not (problem.objective.linear and problem.k > 1 and problem.l >= max(3, min_frame)):
        return False
    return problem.focal_sets is None or len(problem.focal_sets) >= 1 << (max(3, min_frame) - 1)


def objective_table(problem: DesignProblem) -> NDArray[np.float64]:
    """``(k, 2**l)``: the prior-weighted objective ``pi_x G[x, S]`` of every set, indexed by its mask (column 0, the
    empty set, is 0), equal entry for entry to :func:`~designer.optimal.objectives.objective_matrix`.

    The utilities' best and worst cases are built one answer at a time (the sets holding answer ``i`` and no
    higher one from those without it), ``O(k 2**l)`` instead of ``O(k l 2**l)``.
    """
    k, l = problem.k, problem.l
    pi = problem.prior[:, None]
    if problem.objective is Objective.TRUTHFUL:
        table = np.zeros((k, 1 << l))
        table[np.arange(k), 1 << problem.truth()] = problem.prior
        return table
    if problem.objective is Objective.GAIN:
        assert problem.gain is not None
        table = pi * problem.gain
        table[:, 0] = 0.0
        return np.asarray(table)
    assert problem.utility is not None and problem.objective.utility
    worst = problem.objective is Objective.WORST_CASE_UTILITY
    pick = np.minimum if worst else np.maximum
    values = np.empty((k, 1 << l))
    values[:, 0] = np.inf if worst else -np.inf
    for i in range(l):
        values[:, 1 << i: 2 << i] = pick(problem.utility[:, i:i + 1], values[:, :1 << i])
    values[:, 0] = 0.0
    values *= pi
    return values


def _reduced_costs(problem: DesignProblem, rows: RowGeneration, sets: NDArray[np.int64],
                   superset: NDArray[np.float64] | None, table: NDArray[np.float64] | None = None
                   ) -> NDArray[np.float64]:
    """``d[x, S]`` of the masses of ``sets`` (``(k, len(sets))``) from the last program's duals of the rows every
    set shares (row sums, structure, belief definitions); ``superset[x]`` is the superset zeta transform of input
    ``x``'s definition-row duals over ``2**l`` (None: no belief rows); ``table`` the objective of every set
    (:func:`objective_table`; None: computed for ``sets`` alone)."""
    program, outcome = rows.program, rows.outcome
    assert outcome.row_dual is not None
    k, l = problem.k, problem.l
    full = (1 << l) - 1
    n_ub = program.A_ub.shape[0]
    y_ub, y_eq = outcome.row_dual[:n_ub], outcome.row_dual[n_ub:]
    gain = objective_matrix(problem, sets) if table is None else table[:, sets]
    d = -gain - y_eq[:k, None]
    if superset is not None:
        d += superset[:, sets]
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


def _superset_duals(problem: DesignProblem, rows: RowGeneration) -> NDArray[np.float64] | None:
    """``(k, 2**l)``: for every set ``S``, the sum of the definition rows' duals of the events containing it
    (None for a program without belief rows)."""
    program, outcome = rows.program, rows.outcome
    events = program.events
    if events is None:
        return None
    assert outcome.row_dual is not None
    k, l = problem.k, problem.l
    n_ub, n_eq = program.A_ub.shape[0], program.A_eq.shape[0]
    defined = events.size * k
    y_def = outcome.row_dual[n_ub + n_eq - defined:].reshape(events.size, k)  # row pos * k + x
    table = np.zeros((k, 1 << l))
    table[:, events] = y_def.T
    return np.asarray(sf.superset_zeta(table))


def set_prices(d: NDArray[np.float64], e: float) -> NDArray[np.float64]:
    """``r(S) = sum_x min(d[x, S], e d[x, S])``: the reduced cost of set ``S``'s best column under the Shafer rows
    (its masses in ``[t, e t]``, scaled to ``t = 1``); negative exactly when the set improves the program.

    Parameters
    ----------
    d : (k, n) ndarray
        The masses' costs net of the shared rows (:func:`_reduced_costs`).
    e : float
        ``e^eps``, the program's coefficient (at least 1).

    Returns
    -------
    (n,) ndarray
    """
    return np.asarray(np.where(d < 0, e * d, d).sum(axis=0))


def _check_duals(problem: DesignProblem, rows: RowGeneration, superset: NDArray[np.float64] | None,
                 table: NDArray[np.float64] | None = None) -> None:
    """Raise :class:`SolverError` unless the formula reproduces HiGHS's reduced costs of the program's masses."""
    program, outcome = rows.program, rows.outcome
    assert outcome.col_dual is not None and outcome.row_dual is not None
    k, f = problem.k, program.family.size
    own = _reduced_costs(problem, rows, program.family, superset, table)
    if program.shafer_start is not None:  # M[x, j] - hi_j <= 0 and lo_j - M[x, j] <= 0, row x * F + j
        start, nm = program.shafer_start, k * f
        own = own - outcome.row_dual[start:start + nm].reshape(k, f) + outcome.row_dual[start + nm:start + 2 * nm
                                                                                        ].reshape(k, f)
    solver_own = outcome.col_dual[:k * f].reshape(k, f)
    scale = max(1.0, float(np.abs(solver_own).max()))
    if not np.allclose(own, solver_own, rtol=0, atol=DUAL_CHECK_TOL * scale):
        raise SolverError("column generation: the duals do not reproduce the solver's reduced costs "
                          f"(largest difference {float(np.abs(own - solver_own).max()):.2g}); solve the full "
                          "program instead")


def _solve_master(problem: DesignProblem, family: NDArray[np.int64], solver: str | None,
                  options: dict[str, Any] | None) -> RowGeneration:
    restricted = problem.replace(focal_sets=family)
    if problem.semantics.walley:
        return solve_walley_lazily(restricted, solver, options)
    program = linear_program(restricted)
    return RowGeneration(solve_lp(program, solver=solver, options=options), program, 1, 0)


def _best(kept: NDArray[np.int64], costs: NDArray[np.float64], most: int
          ) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    if kept.size > most:
        top = np.argpartition(costs, most)[:most]
        return kept[top], costs[top]
    return kept, costs


def _warm_key(problem: DesignProblem) -> tuple[Any, ...]:
    return ("priced sets", problem.inputs, problem.frame, problem.semantics.value)


def generate_columns(problem: DesignProblem, solver: str | None = None, options: dict[str, Any] | None = None,
                     *, warm: WarmStart | None = None) -> ColumnGeneration:
    """The sets of an optimal design of ``problem`` (:func:`eligible`), found by pricing.

    Parameters
    ----------
    problem : DesignProblem
        A linear objective; any semantics and structure.
    solver, options
        As :func:`~designer._internal.solvers.solve_lp` (HiGHS: the duals are needed).
    warm : WarmStart, optional
        A session of successive designs (a sweep over budgets): the first program also holds the sets the last
        design of the same inputs, frame and semantics ended with, and this one's are kept for the next.

    Returns
    -------
    ColumnGeneration
        Its last program, restricted to ``family``, has the full program's optimum.

    Raises
    ------
    SolverError
        When the duals do not reproduce the solver's reduced costs (the program's layout is not the one priced
        here) or when sets still price in after :data:`MAX_COLUMN_ROUNDS`.
    """
    k, l = problem.k, problem.l
    start = warm.extras.get(_warm_key(problem)) if warm is not None else None
    family = _seed(problem, start)
    universe = _universe(problem)
    shafer = problem.semantics.shafer
    e = problem.budget.lp_factor
    chunk = max(1024, PRICE_ENTRIES // k)
    # every set's objective once (k 2**l floats: 160 MiB at k = l = 20) rather than again each round
    table = objective_table(problem) if problem.focal_sets is None else None
    priced = 0
    for rounds in range(1, MAX_COLUMN_ROUNDS + 1):
        rows = _solve_master(problem, family, solver, options)
        outcome = rows.outcome
        if outcome.status is not Status.OPTIMAL or outcome.row_dual is None or outcome.col_dual is None:
            return ColumnGeneration(family, rows, rounds, priced)
        superset = _superset_duals(problem, rows)
        _check_duals(problem, rows, superset, table)
        present = np.zeros(1 << l, dtype=bool)
        present[family] = True
        # the most negative prices so far, (sets, prices): per input under WLDP, per set under SLDP and both
        groups = 1 if shafer else k
        most = COLUMNS_PER_ROUND * (2 if shafer else 1)
        best = [(np.zeros(0, dtype=np.int64), np.zeros(0)) for _ in range(groups)]
        for begin in range(0, universe.size, chunk):
            sets = universe[begin:begin + chunk]
            sets = sets[~present[sets]]
            if sets.size == 0:
                continue
            d = _reduced_costs(problem, rows, sets, superset, table)
            priced += sets.size
            prices = set_prices(d, e)[None, :] if shafer else d
            for g in range(groups):
                bad = np.flatnonzero(prices[g] < -PRICE_TOL)
                best[g] = _best(np.r_[best[g][0], sets[bad]], np.r_[best[g][1], prices[g, bad]], most)
        new = np.unique(np.concatenate([sets for sets, _ in best]))
        if new.size == 0:
            if warm is not None:
                warm.extras[_warm_key(problem)] = family
            return ColumnGeneration(family, rows, rounds, priced)
        family = np.union1d(family, new).astype(np.int64)
    raise SolverError(f"column generation stopped at its cap of {MAX_COLUMN_ROUNDS} rounds with sets still "
                      "pricing in; solve the full program instead (a smaller frame)")
