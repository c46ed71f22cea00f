"""Why a design problem is infeasible, and what would make it feasible (docs/theory.md, section 5.6).

The binary WLDP case has a closed form (Ex 3.7 with don't-know: ``c >= 2 / (1 + e^eps)``). Otherwise the
explanation first asks whether the structure alone is contradictory, then bisects for the smallest
budget, the largest don't-know mass and the smallest lying bound that would do. The budget bisection
builds the program once and changes only its ``e^eps`` coefficients
(:meth:`~designer.optimal.programs.DesignProgram.at_epsilon`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .._internal.solvers import LinearProgram, Status, require_solution, solve_lp
from ..closed_forms import wldp_min_answer_mass
from ..exceptions import InfeasibleDesignError, InvalidProblemError, SolverError
from ..vocabulary import Objective
from .certify import bisect_threshold
from .problem import DesignProblem
from .programs import DesignProgram, linear_program, staircase_program
from .symmetric import symmetric_program
from .symmetry import is_symmetric

__all__ = ["MAX_EPSILON_SEARCH", "answer_rank_bound", "class_refusal", "explain_infeasible"]

#: Largest budget tried when explaining an infeasible problem (e^64 is beyond any meaningful privacy).
MAX_EPSILON_SEARCH = 64.0


def _program(problem: DesignProblem, privacy: bool, general: bool = False) -> LinearProgram:
    if privacy and is_symmetric(problem):
        # Orbit averaging keeps feasibility: the size-class program decides it, with 2k variables.
        lp: LinearProgram = symmetric_program(problem)
    elif problem.objective is Objective.CHI2 and privacy and not general:
        lp = staircase_program(problem).lp
    else:
        lp = linear_program(problem, privacy=privacy)
    lp.c[:] = 0.0
    return lp


class _Feasibility:
    """Feasibility of variants of one problem, solved as programs with a zero objective."""

    def __init__(self, problem: DesignProblem, solver: str | None, options: dict[str, Any] | None,
                 general: bool = False) -> None:
        self.problem, self.solver, self.options, self.general = problem, solver, options, general
        self._general: DesignProgram | None = None

    def _solve(self, lp: LinearProgram, what: str) -> bool:
        """Whether ``lp`` is feasible; a solver that fails on it (coefficients ``e^eps`` far from 1 at a large
        trial budget) counts as not shown feasible: the explanation then offers only what it did show."""
        try:
            outcome = require_solution(solve_lp(lp, solver=self.solver, options=self.options), what)
        except SolverError:
            return False
        return outcome.status is Status.OPTIMAL

    def structure(self) -> bool:
        return self._solve(_program(self.problem, privacy=False), "the structure of the problem")

    def _built(self) -> DesignProgram | None:
        """The general program, built once (None on the symmetric and chi2 paths, rebuilt per variant)."""
        if is_symmetric(self.problem) or (self.problem.objective is Objective.CHI2 and not self.general):
            return None
        if self._general is None:
            general = _program(self.problem, True, True)
            assert isinstance(general, DesignProgram)
            self._general = general
        return self._general

    def at_epsilon(self, eps: float) -> bool:
        built = self._built()
        lp = (_program(self.problem.replace(epsilon=eps), True, self.general) if built is None
              else built.at_epsilon(eps))
        return self._solve(lp, f"the problem at epsilon {eps:g}")

    def with_value(self, key: str) -> Callable[[float], bool]:
        def feasible(v: float) -> bool:
            built = self._built()
            bounded = built.with_bound(key, v) if built is not None else None
            lp = bounded if bounded is not None else _program(self.problem.replace(**{key: v}), True, self.general)
            return self._solve(lp, f"the problem with {key} {v:g}")
        return feasible


def _binary_wldp(problem: DesignProblem, head: str) -> str | None:
    if not (problem.semantics.walley and problem.k == 2 and problem.l == 2
            and set(problem.inputs) == set(problem.frame) and problem.dont_know is not None):
        return None
    c = 1.0 - problem.dont_know
    bound = wldp_min_answer_mass(problem.epsilon)
    if c >= bound:
        return None
    return (f"{head}: a binary WLDP mechanism with don't-know mass {problem.dont_know:g} (c = {c:g}) "
            f"needs c >= 2/(1+e^eps) = {bound:.6g}; use dont_know <= tanh(eps/2) = {1 - bound:.6g} "
            f"or epsilon >= ln((2-c)/c) = {math.log((2 - c) / c):.6g}")


def answer_rank_bound(problem: DesignProblem) -> int:
    """The largest rank any design's matrix can have under the problem's focal sets: one per allowed set, less
    the whole frame when its mass is fixed (a constant column adds nothing the row sums do not already give).
    Below ``k`` no design identifies the shares."""
    family = [int(m) for m in problem.family()]
    full = (1 << problem.l) - 1
    return len(family) - (1 if problem.dont_know is not None and full in family else 0)


def class_refusal(problem: DesignProblem, solved_over: str, *, solver: str | None = None,
                  options: dict[str, Any] | None = None) -> InfeasibleDesignError | InvalidProblemError:
    """The error for a problem whose solved class (``solved_over``, e.g. staircase answers) holds no design.

    Three different reasons, told apart: no eps-private design meets the structure at all (the general program
    is infeasible: :func:`explain_infeasible` on it, what would make it feasible); no design could identify the
    shares (fewer free answer sets than inputs, :func:`answer_rank_bound`); or designs exist but none in the
    class the objective is solved over (docs/theory.md 5.7), which says so instead of advising a larger budget.
    """
    name = problem.name or "the problem"
    if not _Feasibility(problem, solver, options, general=True).at_epsilon(problem.epsilon):
        return InfeasibleDesignError(explain_infeasible(problem, solver=solver, options=options, general=True))
    rank = answer_rank_bound(problem)
    every_share = problem.variance_weights is None and problem.contrasts is None
    if problem.objective.estimation and problem.objective is not Objective.CHI2 and every_share and rank < problem.k:
        fixed = " (the whole frame's mass is fixed, so it tells no input apart)" if rank < len(problem.family()) else ""
        return InvalidProblemError(
            f"'{name}': its {len(problem.family())} allowed answer set(s){fixed} cannot tell {problem.k} inputs "
            f"apart (every design's matrix has rank at most {rank}), so no design identifies the shares and objective "
            f"'{problem.objective}' is infinite; allow more focal sets (structure.focal_sets)")
    return InvalidProblemError(
        f"'{name}': objective '{problem.objective}' is solved over {solved_over} (docs/theory.md 5.7), and none of "
        f"them meets this structure at epsilon = {problem.epsilon:g}, although other eps-private designs do; allow "
        "more focal sets (the singletons admit k-RR), relax the bounds, or use objective 'truthful' or 'gain', which "
        "are solved over every design")


def explain_infeasible(problem: DesignProblem, *, solver: str | None = None,
                       options: dict[str, Any] | None = None, general: bool = False) -> str:
    """One line: why ``problem`` is infeasible and the changes that would make it feasible.

    Parameters
    ----------
    problem : DesignProblem
        A problem the design program found infeasible.
    solver, options
        As for :func:`~designer._internal.solvers.solve_lp`.
    general : bool, default False
        Explain the general program (every design) even where the objective is solved over a class (chi2).
    """
    if problem.objective is Objective.CHI2 and not general and not is_symmetric(problem):
        error = class_refusal(problem, "staircase answers", solver=solver, options=options)
        if isinstance(error, InvalidProblemError):
            raise error
        return str(error)
    eps = problem.epsilon
    head = (f"no {problem.semantics.value.upper()} mechanism satisfies '{problem.name or 'the problem'}' "
            f"at epsilon = {eps:g}")
    closed = _binary_wldp(problem, head)
    if closed is not None:
        return closed
    check = _Feasibility(problem, solver, options, general)
    if not check.structure():
        return (f"{head}: the structure alone is infeasible (don't-know, lying bound and focal sets "
                "contradict each other, whatever the budget); relax lie_max, dont_know or focal_sets")
    hints = []
    hi = eps  # smallest epsilon: double until feasible, then bisect
    while hi < MAX_EPSILON_SEARCH:
        hi = min(2.0 * hi, MAX_EPSILON_SEARCH)
        if check.at_epsilon(hi):
            hints.append(f"epsilon >= {bisect_threshold(check.at_epsilon, bad=eps, good=hi):.6g}")
            break
    if problem.dont_know and check.with_value("dont_know")(0.0):
        largest = bisect_threshold(check.with_value("dont_know"), bad=problem.dont_know, good=0.0)
        hints.append(f"dont_know <= {largest:.6g}")
    if problem.lie_max is not None and check.with_value("lie_max")(1.0):
        hints.append(f"lie_max >= {bisect_threshold(check.with_value('lie_max'), bad=problem.lie_max, good=1.0):.6g}")
    if not hints:
        return (f"{head}, and no epsilon up to {MAX_EPSILON_SEARCH:g} helps; relax the structure "
                "(under WLDP every proper event needs positive belief: allow singletons among focal_sets)")
    return f"{head}; it becomes feasible with " + ", or with ".join(hints) + " (found by bisection)"
