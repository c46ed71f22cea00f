"""WLDP design programs by row generation: the pair-event rows are added only where they bind.

The Walley program (Lemma 3.14) has a row ``pl_x(E) <= e^eps bel_x'(E)`` for every ordered pair of inputs
and every proper event, ``k (k - 1) (2**l - 2)`` rows, most of them slack at the optimum. Here the program
starts with the rows of the singleton events and their complements, and after each solve the losses of the
solution are computed for every row at once (fast zeta transform: bel of all events); the violated rows,
most violated first, join the program, which is solved again, until none is violated beyond ``CUT_TOL``. Each
row is written in the masses directly, ``-bel_x(E^c) - e^eps bel_x'(E) <= -1`` (``pl_x(E) = 1 - bel_x(E^c)``),
so no belief variables are needed. The optimum of the full program is reached because the last program's
optimum satisfies every row; the released mechanism is still certified exactly (docs/theory.md 6).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from .. import setfunctions as sf
from .._internal.solvers import SolverOutcome, Status, solve_lp
from ..exceptions import SolverError
from ..vocabulary import Semantics
from .problem import DesignProblem
from .programs import LAZY_MIN_FRAME, DesignProgram, inclusion, linear_program

__all__ = ["CUT_TOL", "LAZY_MIN_FRAME", "RowGeneration", "solve_walley_lazily"]

#: Rows violated by more than this (in probability) join the program.
CUT_TOL = 1e-10
#: Most rows added per round (the most violated first), and most rounds.
ROWS_PER_ROUND = 4000
MAX_ROUNDS = 60


class RowGeneration(NamedTuple):
    """What row generation returns: the last program's outcome, that program, the rounds it took and the
    Walley rows the program holds."""

    outcome: SolverOutcome
    program: DesignProgram
    rounds: int
    rows: int


def _violations(cols: NDArray[np.float64], family: NDArray[np.int64], l: int, e: float,
                chosen: NDArray[np.bool_]) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """The rows ``pl_x(E) - e^eps bel_x'(E) > CUT_TOL`` not yet ``chosen`` (``(k, k, 2**l)``), over ordered pairs
    of distinct inputs and proper events: their flat indices into ``(k, k, 2**l)`` and their violations. One
    input's ``(k, 2**l)`` block at a time, so a frame of 20 answers needs ``k 2**l`` floats, not ``k**2 2**l``."""
    k = cols.shape[0]
    dense = np.zeros((k, 1 << l))
    dense[:, family] = np.clip(cols, 0.0, None)
    bel = sf.bel_from_mass(dense)
    full = (1 << l) - 1
    pl = 1.0 - bel[:, full ^ np.arange(1 << l)]
    found, values = [], []
    for x in range(k):
        out = pl[x][None, :] - e * bel  # (k, 2**l): row x2
        out[:, 0] = out[:, full] = -np.inf
        out[x, :] = -np.inf
        out[chosen[x]] = -np.inf
        flat = np.flatnonzero(out.ravel() > CUT_TOL)
        found.append(flat + x * k * (1 << l))
        values.append(out.ravel()[flat])
    return np.concatenate(found), np.concatenate(values)


def solve_walley_lazily(problem: DesignProblem, solver: str | None, options: dict[str, Any] | None,
                        start: NDArray[np.int64] | None = None) -> RowGeneration:
    """Solve the linear design program of ``problem`` (WLDP or both) by row generation.

    Each event ``E`` that a row needs gets belief variables ``B_x(E) = sum_{F within E} m_x(F)`` for every
    input (one definition each, however many rows use it), so a row ``-B_x(E^c) - e^eps B_x'(E) <= -1`` has
    two entries. Returns a :class:`RowGeneration` (outcome, last program, rounds, Walley rows in it); the
    outcome is that of the last program, whose optimum meets every Walley row to ``CUT_TOL``. Raises
    :class:`SolverError` when rows are still violated after ``MAX_ROUNDS`` rounds (never the optimum of a
    program that misses some).

    ``start`` (bitmasks of proper events) are the events whose rows the first program holds; by default the
    singletons and their complements. With every singleton in, no further row can be violated: for disjoint
    events pl is subadditive and bel superadditive, so ``pl_x(E) <= sum_{y in E} pl_x({y}) <= e^eps sum_{y in
    E} m_x'({y}) <= e^eps bel_x'(E)`` (docs/theory.md, section 5.9), and the loop ends after one round. It
    still checks every row of the optimum and adds the violated ones, which a start without the singletons
    needs (the tests start from the complements alone to exercise several rounds).
    """
    k, l = problem.k, problem.l
    base = linear_program(problem.replace(semantics=Semantics.SLDP) if problem.semantics is Semantics.BOTH
                          else problem, privacy=problem.semantics is Semantics.BOTH)
    family = base.family
    f = family.size
    e = problem.budget.lp_factor
    full = (1 << l) - 1
    xs, x2s = np.nonzero(~np.eye(k, dtype=bool))
    if start is None:
        singles = np.array([1 << i for i in range(l)], dtype=np.int64)
        start = np.r_[singles, full ^ singles]
    start = np.unique(np.asarray(start, dtype=np.int64))
    start = start[(start > 0) & (start < full)]
    chosen = np.zeros((k, k, 1 << l), dtype=bool)
    cut_x, cut_x2, cut_e = np.repeat(xs, start.size), np.repeat(x2s, start.size), np.tile(start, xs.size)
    chosen[cut_x, cut_x2, cut_e] = True
    events: dict[int, int] = {}  # event -> its block of k belief variables
    rounds = 0
    while True:
        rounds += 1
        for event in np.unique(np.r_[cut_e, full ^ cut_e]):
            events.setdefault(int(event), len(events))
        order = np.array(list(events), dtype=np.int64)
        nb = k * order.size
        n = base.n + nb
        # Definitions: B_x(E) - sum_{F within E} M[x, F] = 0.
        inc = inclusion(family, l, order).tocoo()  # (events, F)
        rows_def = np.concatenate([inc.row * k + x for x in range(k)])
        cols_def = np.concatenate([x * f + inc.col for x in range(k)])
        nrows = order.size * k
        define = sp.csr_matrix((np.r_[-np.ones(rows_def.size), np.ones(nrows)],
                                (np.r_[rows_def, np.arange(nrows)],
                                 np.r_[cols_def, base.n + np.arange(nrows)])),
                               shape=(nrows, n))
        # Rows: -B_x(E^c) - e^eps B_x'(E) <= -1.
        m = cut_e.size
        pos_c = np.array([events[int(v)] for v in full ^ cut_e], dtype=np.int64)
        pos_e = np.array([events[int(v)] for v in cut_e], dtype=np.int64)
        r = np.arange(m)
        cut_fixed = sp.csr_matrix((-np.ones(m), (r, base.n + pos_c * k + cut_x)), shape=(m, n))
        cut_exp = sp.csr_matrix((-np.ones(m), (r, base.n + pos_e * k + cut_x2)), shape=(m, n))

        def widen(a: sp.spmatrix | None, rows: int, extra: int = nb) -> sp.csr_matrix:
            a = sp.csr_matrix((rows, base.n)) if a is None else sp.csr_matrix(a)
            return sp.hstack([a, sp.csr_matrix((a.shape[0], extra))], format="csr")

        ub_rows = base.A_ub.shape[0]
        a_fixed = sp.vstack([widen(base.A_ub_fixed if base.A_ub_fixed is not None else base.A_ub, ub_rows),
                             cut_fixed], format="csr")
        a_exp = sp.vstack([widen(base.A_ub_exp, ub_rows), cut_exp], format="csr")
        program = replace(base, c=np.r_[base.c, np.zeros(nb)], A_ub=(a_fixed + e * a_exp).tocsr(),
                          b_ub=np.r_[base.b_ub, -np.ones(m)], A_eq=sp.vstack([widen(base.A_eq, base.A_eq.shape[0]),
                                                                              define], format="csr"),
                          b_eq=np.r_[base.b_eq, np.zeros(nrows)], lb=np.r_[base.lb, np.zeros(nb)],
                          ub=np.r_[base.ub, np.full(nb, np.inf)], A_ub_fixed=a_fixed, A_ub_exp=a_exp, events=order)
        outcome = solve_lp(program, solver=solver, options=options)
        if outcome.status is not Status.OPTIMAL or outcome.z is None:
            return RowGeneration(outcome, program, rounds, m)
        flat, worst = _violations(program.mechanism(outcome.z), family, l, e, chosen)
        if flat.size == 0:
            return RowGeneration(outcome, program, rounds, m)
        if rounds >= MAX_ROUNDS:  # never release the optimum of a program that still misses Walley rows
            raise SolverError(f"row generation stopped at its cap of {MAX_ROUNDS} rounds with {flat.size} Walley "
                              f"row(s) still violated (the largest by {float(worst.max()):.1e}); "
                              "solve the full program instead (a smaller problem, or semantics 'sldp')")
        if flat.size > ROWS_PER_ROUND:
            flat = flat[np.argpartition(-worst, ROWS_PER_ROUND)[:ROWS_PER_ROUND]]
        x, x2, ev = np.unravel_index(flat, chosen.shape)
        chosen[x, x2, ev] = True
        cut_x, cut_x2, cut_e = np.r_[cut_x, x], np.r_[cut_x2, x2], np.r_[cut_e, ev]
