"""The staircase LP of ``chi2`` under SLDP solved by column generation: its ``2**k - 2`` columns priced from the
duals, all of them every round (docs/pricing.md).

The staircase LP (docs/theory.md, section 5.2) maximises ``sum_s mu(s) theta_s`` over the columns
``s in {1, e^eps}^k`` subject to the row sums ``sum_s s theta_s (+ t) = 1`` and the structure rows. Its columns
are few rows tall (``k`` and the structure) but many (65,534 at ``k = 16``), and few carry weight at the optimum.
Here the program is solved on the columns of the patterns with one entry ``e^eps`` and with all but one (and the
constant column), the reduced cost ``-mu(s) - A[:, s]' y`` of every column is computed from the duals (a sparse
product: no enumeration beyond the table the full program has anyway), and the most negative join, until none
is negative. The last program's optimum is then the full program's; the mechanism is read from the full-length
solution (zero weight on the columns never added), exactly as from the full program, and certified as always.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._internal.solvers import LinearProgram, SolverOutcome, Status, WarmStart, solve_lp
from ..exceptions import SolverError
from .programs import Staircase

__all__ = ["STAIRCASE_PRICE_MIN_INPUTS", "solve_staircase_priced"]

#: The engine prices the staircase columns from this many inputs (below, 2**k columns are few).
STAIRCASE_PRICE_MIN_INPUTS = 12
#: A column whose reduced cost is below ``-PRICE_TOL`` joins the program.
PRICE_TOL = 1e-9
#: Most new columns per round (the most negative first), and most rounds.
COLUMNS_PER_ROUND = 64
MAX_ROUNDS = 500
#: The formula's reduced costs of the program's own columns must match the solver's within this (relative).
DUAL_CHECK_TOL = 1e-6


def _start(st: Staircase, k: int) -> NDArray[np.int64]:
    sizes = np.bitwise_count(st.patterns)
    chosen = np.flatnonzero((sizes == 1) | (sizes == k - 1))
    if st.constant:
        chosen = np.r_[chosen, st.patterns.size]
    return chosen.astype(np.int64)


def _restricted(lp: LinearProgram, columns: NDArray[np.int64]) -> LinearProgram:
    return LinearProgram(c=lp.c[columns], A_ub=lp.A_ub[:, columns], b_ub=lp.b_ub, A_eq=lp.A_eq[:, columns],
                         b_eq=lp.b_eq, lb=lp.lb[columns], ub=lp.ub[columns], maximize=lp.maximize, warm_start=False)


def solve_staircase_priced(st: Staircase, k: int, *, solver: str | None = None,
                           options: dict[str, Any] | None = None, warm: WarmStart | None = None) -> SolverOutcome:
    """Solve the staircase LP ``st`` by pricing its columns; the outcome is that of the full program.

    Parameters
    ----------
    st : Staircase
        The full program (:func:`~designer.optimal.programs.staircase_program`).
    k : int
        Inputs (rows of the row-sum block).
    solver, options
        As :func:`~designer._internal.solvers.solve_lp` (HiGHS: the duals are needed).
    warm : WarmStart, optional
        A session of successive designs: the first program also holds the columns the last one ended with.

    Returns
    -------
    SolverOutcome
        With the full-length solution ``z`` (zero on the columns never added) and the reduced costs of every
        column; when the first program has no optimum, its own outcome (the engine then solves the full one).

    Raises
    ------
    SolverError
        When the duals do not reproduce the solver's reduced costs, or columns still price in after
        :data:`MAX_ROUNDS` rounds.
    """
    lp = st.lp
    key = ("staircase columns", k, lp.n)
    columns = _start(st, k)
    if warm is not None and key in warm.extras:
        columns = np.union1d(columns, warm.extras[key]).astype(np.int64)
    cost = -lp.c if lp.maximize else lp.c
    n_ub = lp.A_ub.shape[0]
    a_ub_t, a_eq_t = lp.A_ub.T.tocsr(), lp.A_eq.T.tocsr()
    for _ in range(MAX_ROUNDS):
        outcome = solve_lp(_restricted(lp, columns), solver=solver, options=options)
        if outcome.status is not Status.OPTIMAL or outcome.row_dual is None or outcome.col_dual is None:
            return outcome
        y = outcome.row_dual
        reduced = cost - a_ub_t @ y[:n_ub] - a_eq_t @ y[n_ub:]
        scale = max(1.0, float(np.abs(outcome.col_dual).max()))
        if not np.allclose(reduced[columns], outcome.col_dual, rtol=0, atol=DUAL_CHECK_TOL * scale):
            raise SolverError("staircase pricing: the duals do not reproduce the solver's reduced costs (largest "
                              f"difference {float(np.abs(reduced[columns] - outcome.col_dual).max()):.2g}); solve "
                              "the full staircase LP instead")
        outside = np.ones(lp.n, dtype=bool)
        outside[columns] = False
        bad = np.flatnonzero(outside & (reduced < -PRICE_TOL))
        if bad.size == 0:
            assert outcome.z is not None
            z = np.zeros(lp.n)
            z[columns] = outcome.z
            if warm is not None:
                warm.extras[key] = columns
            return replace(outcome, z=z, col_dual=reduced)
        if bad.size > COLUMNS_PER_ROUND:
            bad = bad[np.argpartition(reduced[bad], COLUMNS_PER_ROUND)[:COLUMNS_PER_ROUND]]
        columns = np.union1d(columns, bad).astype(np.int64)
    raise SolverError(f"staircase pricing stopped at its cap of {MAX_ROUNDS} rounds with columns still pricing in; "
                      "solve the full staircase LP instead")
