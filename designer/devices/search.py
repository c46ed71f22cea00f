"""chi2 on a grid: the feasible grid design nearest the continuous optimum, then one-outcome moves while the
chi-square information grows and every share stays identified (``docs/theory.md`` section 11)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._internal.native import native_output_silenced
from ..optimal.problem import DesignProblem
from ..vocabulary import Semantics
from .program import GridProgram, grid_mechanism

__all__ = ["MILP_NODE_LIMIT", "GridSearch", "MilpOutcome", "chi2_grid", "run_milp"]

#: Branch-and-bound nodes one grid program may explore. The search is bounded by work, not by time, so the
#: same problem gives the same design on any machine, however loaded.
MILP_NODE_LIMIT = 20_000


@dataclass(frozen=True)
class MilpOutcome:
    """What one integer program gave.

    Attributes
    ----------
    x : ndarray or None
        The best point found (``None``: infeasible, or no feasible point within the node limit).
    proven : bool
        Whether ``x`` is proven optimal (to the gap asked for) within the node limit.
    nodes : int
        Branch-and-bound nodes explored (at least 1: the root).
    """

    x: NDArray[np.float64] | None
    proven: bool
    nodes: int


@dataclass(frozen=True)
class GridSearch:
    """What one grid search found: the counts (``(k, F)`` integers over the program's denominator, or ``None``
    when none was found), whether they are proven optimal, and the branch-and-bound nodes spent."""

    counts: NDArray[np.int64] | None
    proven: bool
    nodes: int


def run_milp(c: NDArray[np.float64], integrality: NDArray[np.float64], bounds: Any, constraints: list[Any], *,
             node_limit: int = MILP_NODE_LIMIT, gap: float = 0.0) -> MilpOutcome:
    """``scipy.optimize.milp`` (HiGHS) with at most ``node_limit`` nodes, no time limit and no output."""
    from scipy.optimize import milp

    options = {"node_limit": int(node_limit), "mip_rel_gap": gap, "disp": False}
    with native_output_silenced():
        res = milp(c, integrality=integrality, bounds=bounds, constraints=constraints, options=options)
        if res.status == 2:  # HiGHS 1.7 (scipy 1.13)'s presolve calls feasible grid programs infeasible: ask again
            res = milp(c, integrality=integrality, bounds=bounds, constraints=constraints,
                       options={**options, "presolve": False})
    nodes = max(1, int(getattr(res, "mip_node_count", 1) or 1))
    return MilpOutcome(None if res.x is None else np.asarray(res.x), bool(res.status == 0 and res.x is not None),
                       nodes)


def chi2_grid(program: GridProgram, problem: DesignProblem, target: NDArray[np.float64], symmetric: bool, *,
              node_limit: int = MILP_NODE_LIMIT) -> GridSearch:
    """The feasible grid design nearest (L1) the continuous optimum, then one-outcome moves while chi2 grows
    (never proven optimal), with the branch-and-bound nodes the nearest design took."""
    from scipy.optimize import Bounds, LinearConstraint
    from scipy.sparse import csr_matrix, hstack, vstack
    from scipy.sparse import eye as speye


    bounds, constraints = program.milp_parts()
    if symmetric:
        constraints.append(program.symmetry_rows())
    n = program.k * program.f
    goal = (target * program.d).ravel()
    # variables (C, t): t >= |C - goal|
    lifted = [LinearConstraint(hstack([c.A, csr_matrix((c.A.shape[0], n))]).tocsr(), c.lb, c.ub) for c in constraints]
    eye = speye(n)
    lifted.append(LinearConstraint(vstack([hstack([eye, -eye]), hstack([-eye, -eye])]).tocsr(),
                                   np.concatenate([np.full(n, -np.inf), np.full(n, -np.inf)]),
                                   np.concatenate([goal, -goal])))
    res = run_milp(np.concatenate([np.zeros(n), np.ones(n)]), np.concatenate([np.ones(n), np.zeros(n)]),
                   Bounds(np.concatenate([bounds.lb, np.zeros(n)]), np.concatenate([bounds.ub, np.full(n, np.inf)])),
                   lifted, node_limit=node_limit, gap=1e-4)
    if res.x is None:
        return GridSearch(None, False, res.nodes)
    counts = np.rint(res.x[:n]).astype(np.int64).reshape(program.k, program.f)
    if not program.feasible(counts):
        return GridSearch(None, False, res.nodes)
    return GridSearch(counts if symmetric else _climb(program, problem, counts), False, res.nodes)


def _climb(program: GridProgram, problem: DesignProblem, counts: NDArray[np.int64]) -> NDArray[np.int64]:
    """Best-improvement moves of one outcome between answers of one input while the objective improves (chi2
    grows, a variance falls) and every share stays identified (a chi2 optimum at a skewed prior may lump inputs;
    the grid design must not start to)."""
    from ..estimation.shares import column_information
    from ..optimal.objectives import objective_value
    from ..optimal.share_variance import pieces, scenario_values

    pi, d = problem.prior, program.d
    # chi2 under SLDP moves by the two columns a move touches; a variance objective (made small) is climbed on
    # its negative, evaluated whole
    sldp = problem.semantics is Semantics.SLDP and not problem.objective.minimised
    sign = -1.0 if problem.objective.minimised else 1.0
    # an SLDP variance objective is a function of the mass matrix alone (objective_value's, without building and
    # validating a Mechanism for every trial, and with the problem's pieces computed once)
    parts = pieces(problem) if problem.objective.variance and problem.semantics is Semantics.SLDP else None

    def total(cts: NDArray[np.int64]) -> float:
        if sldp:
            return float(column_information(cts / d, pi).sum())
        if parts is not None:
            value = -float(np.max(scenario_values(problem, cts / d, parts=parts)))
            return value if math.isfinite(value) else -math.inf
        value = sign * objective_value(problem, grid_mechanism(problem, program, cts))
        return value if math.isfinite(value) else -math.inf

    def full_rank(cts: NDArray[np.int64]) -> bool:
        return bool(np.linalg.matrix_rank(cts.astype(float)) == program.k)

    if not full_rank(counts):  # first make every share identified, at the least cost in chi2
        repaired = [t for _, _, t in _moves(program, counts) if program.feasible(t) and full_rank(t)]
        if repaired:
            counts = max(repaired, key=total)
    identified = full_rank(counts)
    best = total(counts)
    for _ in range(10 * program.k * d):
        move, gain = None, 1e-12 * max(1.0, abs(best))
        base = column_information(counts / d, pi) if sldp else None
        for j, jj, trial in _moves(program, counts):
            if sldp:  # only the two columns the move touches change their information
                assert base is not None
                pair = [j, jj]
                g = float(column_information(trial[:, pair] / d, pi).sum() - base[pair].sum())
            else:
                g = total(trial) - best
            if g > gain and program.feasible(trial) and (not identified or full_rank(trial)):
                move, gain = trial, g
        if move is None:
            break
        counts, best = move, total(move)
    return counts


def _moves(program: GridProgram, counts: NDArray[np.int64]) -> Iterator[tuple[int, int, NDArray[np.int64]]]:
    """Every design one outcome away (one input moves one outcome from answer ``j`` to answer ``jj``), as
    ``(j, jj, counts)``, in a fixed order."""
    for x in range(program.k):
        for j in np.flatnonzero(counts[x]):
            for jj in range(program.f):
                if jj != j:
                    trial = counts.copy()
                    trial[x, j] -= 1
                    trial[x, jj] += 1
                    yield int(j), jj, trial


