"""Precise (Bayesian) variance designs under WLDP and both: one output per staircase pattern, at most ``l`` of
them, measured against the SLDP program's bound (docs/theory.md, section 5.7)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._internal.solvers import SolverError
from ..exceptions import InfeasibleDesignError
from .problem import DesignProblem
from .share_variance import pieces
from .variance_master import Master, candidate_patterns, solve_master
from .variance_program import _piece_values, _prices, _row_prices, solve_variance

__all__ = ["PreciseVariance", "seed_pattern_classes", "solve_precise_variance"]

#: Pivots of the local search for a precise design with at most ``l`` outputs.
MAX_PIVOTS = 60


@dataclass
class PreciseVariance:
    """A precise (Bayesian) variance design: one output per pattern, and the SLDP program's bound."""

    columns: NDArray[np.float64]  # (k, r), r <= l
    value: float
    bound: float
    note: str


def seed_pattern_classes(k: int, l: int) -> list[list[int]]:
    """The pattern sets of the published precise designs with at most ``l`` outputs: k-RR (the ``k`` singletons)
    and subset selection with subset size ``d`` (all ``C(k, d)`` ``d``-subsets) wherever they fit.

    Examples
    --------
    >>> from designer.optimal.variance_precise import seed_pattern_classes
    >>> [len(s) for s in seed_pattern_classes(4, 6)]
    [4, 6, 4]
    """
    from itertools import combinations

    out = []
    for d in range(1, k):
        if math.comb(k, d) <= l:
            out.append([sum(1 << x for x in subset) for subset in combinations(range(k), d)])
    return out


def solve_precise_variance(problem: DesignProblem, *, solver: str | None = None,
                           options: dict[str, Any] | None = None, warm: Sequence[int] = ()) -> PreciseVariance:
    """``variance`` / ``max_variance`` under WLDP or both: the best precise mechanism with at most ``l`` outputs
    that a local search finds, and the bound of the SLDP program (docs/theory.md, 5.7).

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

    def solve(index: NDArray[np.int64]) -> tuple[float, Master | None]:
        try:
            master = solve_master(relaxed, parts, pats, index, solver, options, options, fallback=False)
        except SolverError:  # a candidate the solver cannot settle is passed over
            return math.inf, None
        return float(np.max(_piece_values(parts, pats, index, master.w))), master

    order = np.argsort(-sol.columns.sum(axis=0), kind="stable")
    chosen = np.flatnonzero(np.isin(pats.bits, sol.patterns[order[:l]]))
    value, master = solve(chosen)
    # the published precise designs that fit l outputs, each with its best weights: k-RR's singletons, subset
    # selection's d-subsets (and their complements' classes); the search starts from the best of them all
    for seed in seed_pattern_classes(problem.k, l):
        index = np.flatnonzero(np.isin(pats.bits, seed))
        if index.size != len(seed):
            continue
        seed_value, seed_master = solve(index)
        if seed_master is not None and (master is None or seed_value < value):
            chosen, value, master = index, seed_value, seed_master
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
