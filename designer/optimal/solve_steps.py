"""The steps of each route before certification: build and solve its program, and turn the solver's point into the
candidate to certify (docs/theory.md, sections 5 and 12).

A ``solve`` step takes ``(problem, settings, decision)`` and returns a :class:`~designer.optimal.programs.Solved`;
a ``candidate`` step takes the solved program and returns an :class:`Answer` (a cleaned full mechanism, the
compact size-class form, or an invariant design's float matrix). The engine's route table
(:data:`designer.optimal.engine.ROUTES`) names one of each per :class:`~designer.optimal.route.Route`; the same
steps re-solve a problem inside the budget and design the repair references.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._internal.solvers import SolverError, SolverOutcome, Status, WarmStart, require_solution, solve_lp
from ..exceptions import InfeasibleDesignError, InvalidProblemError
from ..mechanism import Mechanism
from ..setfunctions import _one_blas_thread as one_blas_thread
from ..vocabulary import Objective
from . import columns, invariant_exact
from .answer_sets import assign_answer_sets, assigned_seeds
from .certify import clean_solution
from .infeasible import explain_infeasible
from .lazy import solve_walley_lazily
from .many_inputs import solve_many_inputs
from .objectives import objective_value
from .precise import STAIRCASE_OPTIONS, singletons, solve_precise
from .problem import DesignProblem
from .programs import Solved, linear_program, staircase_mechanism, staircase_program
from .route import GENERAL_MAX_INPUTS, Decision, Route
from .staircase_pricing import STAIRCASE_PRICE_MIN_INPUTS, solve_staircase_priced
from .symmetric import (
    SymmetricMechanism,
    best_chi2_classes,
    best_compact_variance,
    from_solution,
    symmetric_objective,
    symmetric_program,
)
from .symmetry import orbit_average
from .variance_master import MAX_VARIANCE_INPUTS
from .variance_precise import solve_precise_variance
from .variance_program import VarianceSolution, solve_variance

__all__ = ["LAZY_OPTIONS", "WLDP_OPTIONS", "Answer", "Settings", "candidate_value", "options_for"]

#: HiGHS options for WLDP programs (many sparse pair rows): interior point, then crossover to a vertex.
#: Measured at k = l = 8: 0.3 s against 2.1 s for the default simplex.
WLDP_OPTIONS = {"solver": "ipm"}
#: The row-generation programs are small and sparse: dual simplex (IPM is 40x slower on them).
LAZY_OPTIONS = {"solver": "simplex", "simplex_strategy": 1}


@dataclass(frozen=True)
class Settings:
    """The solver settings of one design (``design``'s keyword arguments, checked)."""

    solver: str | None
    options: dict[str, Any] | None
    symmetrize: bool
    warm: WarmStart | None


@dataclass(frozen=True)
class Answer:
    """A solved candidate, ready to certify.

    Attributes
    ----------
    candidate : Mechanism, SymmetricMechanism or (k, k) ndarray
        The cleaned full mechanism, the compact size-class form, or an invariant design's float matrix.
    path : str
        The program that gave it, in words (``DesignResult.path``).
    value : float
        Its objective (an invariant design: the program's optimum, which the exact table must keep).
    solver_objective : float
        The optimum the solver reported.
    solver : str
        Which solver.
    bound : float, optional
        A proved lower bound on the optimum of a minimised objective over the problem's whole class (the variance
        objectives; :mod:`designer.optimal.variance_program`), None where the program's optimum is its own certificate.
    """

    candidate: Any
    path: str
    value: float
    solver_objective: float
    solver: str
    bound: float | None = None


def options_for(settings: Settings, default: dict[str, Any] | None) -> dict[str, Any] | None:
    """The solver options: ``default`` unless the caller chose a solver or options."""
    return default if settings.solver is None and settings.options is None else settings.options


def candidate_value(problem: DesignProblem, candidate: Mechanism | SymmetricMechanism) -> float:
    """The objective of a full mechanism or of the compact size-class form."""
    if isinstance(candidate, SymmetricMechanism):
        if problem.objective is Objective.CHI2:
            return candidate.chi2()
        if problem.objective.variance:  # every share alike at the uniform prior: the mean is the largest
            return candidate.variance()
        ca, cb = symmetric_objective(problem)
        return float(ca @ candidate.A + cb @ candidate.B)
    return objective_value(problem, candidate)


# ---------------------------------------------------------------------------- build and solve, per route
def solve_general(problem: DesignProblem, settings: Settings, decision: Decision) -> Solved:
    """The full linear program over every allowed answer set (:attr:`Route.GENERAL`)."""
    lp = linear_program(problem)
    out = solve_lp(lp, solver=settings.solver, warm=settings.warm,
                   options=options_for(settings, WLDP_OPTIONS if problem.semantics.walley else None))
    return Solved(out, None if out.z is None else lp.mechanism(out.z), lp.family, "linear program")


def solve_lazy(problem: DesignProblem, settings: Settings, decision: Decision) -> Solved:
    """The WLDP pair rows generated as they are violated (:attr:`Route.LAZY`)."""
    gen = solve_walley_lazily(problem, settings.solver, options_for(settings, LAZY_OPTIONS))
    full_rows = problem.k * (problem.k - 1) * ((1 << problem.l) - 2)
    path = f"linear program, Walley rows generated ({gen.rows} of {full_rows}, {gen.rounds} rounds)"
    out = gen.outcome
    return Solved(out, None if out.z is None else gen.program.mechanism(out.z), gen.program.family, path)


def solve_priced(problem: DesignProblem, settings: Settings, decision: Decision) -> Solved:
    """The answer sets priced (:attr:`Route.PRICED`, docs/pricing.md); when column generation stops without an
    optimum on a frame the full program can hold, the route without pricing (:attr:`Decision.fallback`)."""
    found = columns.generate_columns(problem, settings.solver, options_for(settings, LAZY_OPTIONS), warm=settings.warm)
    out = found.rows.outcome
    too_big = problem.l > GENERAL_MAX_INPUTS and problem.focal_sets is None
    if out.status is not Status.OPTIMAL and not too_big:
        return solve_lazy(problem, settings, decision) if decision.fallback is Route.LAZY \
            else solve_general(problem, settings, decision)
    if out.status is Status.INFEASIBLE:  # the starting sets alone admit no design: say so, not more
        raise SolverError(
            f"column generation's starting sets (singletons, their complements, the whole frame) admit "
            f"no design of this problem, and its frame of {problem.l} answers is too large for the full "
            "program; restrict focal_sets to the sets a design may use")
    allowed = (1 << problem.l) - 1 if problem.focal_sets is None else len(problem.focal_sets)
    path = (f"linear program, answer sets priced ({found.family.size} of {allowed} per input, "
            f"{found.rounds} rounds)" + (", Walley rows generated" if problem.semantics.walley else ""))
    program = found.rows.program
    return Solved(out, None if out.z is None else program.mechanism(out.z), program.family, path)


def solve_precise_route(problem: DesignProblem, settings: Settings, decision: Decision) -> Solved:
    """``chi2`` under WLDP: a precise design (:attr:`Route.PRECISE`,
    :func:`~designer.optimal.precise.solve_precise`)."""
    binary = problem.k == 2 and problem.l == 2 and set(problem.inputs) == set(problem.frame)
    if binary and (problem.dont_know or problem.dont_know_max) and decision.symmetric:
        # The worst case is the lambda = 0 Warner matrix, whose information grows with the truthful mass:
        # the truthful program under the same constraints is optimal (docs/theory.md, 5.4); two answers are
        # below every frame of the priced and the lazy routes, so it is the full program.
        solved = solve_general(problem.replace(objective="truthful"), settings, decision)
        return Solved(solved.outcome, solved.cols, solved.masks,
                      "linear program (worst-case information of two answers)")
    if problem.dont_know or problem.dont_know_max or problem.lie_max is not None or problem.focal_sets is not None:
        raise InvalidProblemError(
            f"objective '{problem.objective}' under {problem.semantics.value.upper()} designs a precise (Bayesian) "
            "mechanism, which has no don't-know mass, lying bound or focal-set restriction (solved with those only "
            "for two answers and a uniform prior); drop [structure], use semantics = \"sldp\", or objective "
            "truthful / gain / worst_case_utility")
    if problem.objective.variance:
        return _precise_variance(problem, settings)
    return solve_precise(problem, solver=settings.solver, warm=settings.warm, options=options_for(settings, None))


def _precise_variance(problem: DesignProblem, settings: Settings) -> Solved:
    """A variance objective under WLDP or both: a precise design of at most ``l`` patterns, each its own output
    (truth-preferring assignment), with the SLDP program's bound (:func:`~designer.optimal.variance_precise.
    solve_precise_variance`)."""
    from scipy.optimize import linear_sum_assignment

    solver = settings.solver if settings.solver is None or settings.solver.upper() != "HIGHS" else None
    found = solve_precise_variance(problem, solver=solver, options=settings.options)
    k, l = problem.k, problem.l
    truth = problem.truth()
    score = np.zeros((found.columns.shape[1], l))
    for x in range(k):
        if truth[x] >= 0:
            score[:, truth[x]] += found.columns[x]
    rows, outputs = linear_sum_assignment(score, maximize=True)
    cols = np.zeros((k, l))
    cols[:, outputs] = found.columns[:, rows]
    outcome = SolverOutcome(Status.OPTIMAL, found.value, None, "CLARABEL" if solver is None else solver.upper())
    return Solved(outcome, cols, singletons(l), f"precise design over staircase patterns ({found.note})", found.bound)


def solve_staircase(problem: DesignProblem, settings: Settings, decision: Decision) -> Solved:
    """The staircase LP of ``chi2`` under SLDP (:attr:`Route.STAIRCASE`), its columns priced from
    ``STAIRCASE_PRICE_MIN_INPUTS`` inputs."""
    solver, warm = settings.solver, settings.warm
    st = staircase_program(problem)
    outcome: SolverOutcome | None = None
    path = "staircase LP"
    if problem.k >= STAIRCASE_PRICE_MIN_INPUTS and (solver is None or solver.upper() == "HIGHS"):
        # the 2**k - 2 columns priced from the duals (docs/pricing.md); a first program without an optimum
        # leaves the full one to solve
        first = solve_staircase_priced(st, problem.k, solver=solver, options=options_for(settings, STAIRCASE_OPTIONS),
                                       warm=warm)
        if first.status is Status.OPTIMAL:
            outcome, path = first, "staircase LP, columns priced"
    if outcome is None:
        outcome = solve_lp(st.lp, solver=solver, warm=warm, options=options_for(settings, STAIRCASE_OPTIONS))
    if outcome.z is None:
        return Solved(outcome, None, st.sets, path)
    cols, masks = staircase_mechanism(st, outcome.z, problem.l)
    return Solved(outcome, cols, masks, path)


def solve_variance_route(problem: DesignProblem, settings: Settings, decision: Decision) -> Solved:
    """``variance`` / ``max_variance`` under SLDP (:attr:`Route.VARIANCE`): the convex program over staircase
    pattern weights (:func:`~designer.optimal.variance_program.solve_variance`), its patterns carried from one
    budget to the next by a warm start. Where the problem restricts the answers beyond the program's class (a lying
    bound, focal sets), the bound comes from the same program without the restriction (docs/theory.md 5.7)."""
    with one_blas_thread():  # matrices of order k and pools of hundreds: BLAS threads cost more than they save
        return _variance_route(problem, settings)


def _variance_route(problem: DesignProblem, settings: Settings) -> Solved:
    if problem.k > MAX_VARIANCE_INPUTS:
        return _many_inputs_route(problem)
    restricted = problem.lie_max is not None or problem.focal_sets is not None
    if restricted:
        # the program without the restriction bounds the class; its columns, assigned to admissible distinct answer
        # sets that meet the structure, attain the bound (docs/theory.md 5.8)
        free = _variance_solution(problem.replace(lie_max=None, focal_sets=None), settings)
        assigned = assign_answer_sets(problem, free.columns)
        if assigned is not None:
            parts, sets, _ = assigned
            outcome = SolverOutcome(Status.OPTIMAL, free.value, None, free.solver)
            path = (f"variance program over staircase patterns ({free.priced} of {(1 << problem.k) - 1} priced, "
                    f"{free.rounds} rounds), answer sets assigned to the structure")
            return Solved(outcome, parts, sets, path, free.bound)
    try:
        solution = _variance_solution(problem, settings)
    except (SolverError, InvalidProblemError) as error:
        # the restricted program defeated both conic solvers (a nearly singular information at a small budget), or
        # its class holds no design that tells inputs apart: the textbook designs assigned to the structure, when
        # one fits and identifies what the objective asks, with the unrestricted bound
        seeds = [seed for seed in assigned_seeds(problem) if math.isfinite(seed[3])] if restricted else []
        if not seeds:
            raise
        name, parts, sets, value = min(seeds, key=lambda seed: seed[3])
        outcome = SolverOutcome(Status.OPTIMAL, value, None, "CLARABEL")
        why = ("stopped in both conic solvers" if isinstance(error, SolverError)
               else "holds no design that identifies the shares")
        return Solved(outcome, parts, sets, f"{name}, answer sets assigned to the structure (the restricted variance "
                      f"program {why})", free.bound)
    bound = solution.bound
    outcome = SolverOutcome(Status.OPTIMAL, solution.value, None, solution.solver)
    path = (f"variance program over staircase patterns ({solution.priced} of {(1 << problem.k) - 1} priced, "
            f"{solution.rounds} rounds)")
    if restricted:
        bound = min(bound, free.bound)
        # the textbook designs whose columns, assigned to admissible sets, meet the structure: kept when better
        for name, parts, sets, value in assigned_seeds(problem):
            if value < outcome.objective * (1 - 1e-12):
                outcome = SolverOutcome(Status.OPTIMAL, value, None, solution.solver)
                path = f"{name}, answer sets assigned to the structure (better than the {path})"
                solution = VarianceSolution(parts, sets, value, bound, solution.rounds, solution.priced)
    return Solved(outcome, solution.columns, solution.sets, path, bound)


def _many_inputs_route(problem: DesignProblem) -> Solved:
    """Past 20 inputs: the pool of patterns and the bound of the semidefinite relaxation (docs/theory.md 5.11)."""
    solution = solve_many_inputs(problem)
    outcome = SolverOutcome(Status.OPTIMAL, solution.value, None, solution.solver)
    path = (f"variance program over a pool of staircase patterns ({solution.priced} in the pool, {solution.rounds} "
            "rounds; bound by a semidefinite relaxation of the pricing)")
    return Solved(outcome, solution.columns, solution.sets, path, solution.bound)


def _variance_solution(problem: DesignProblem, settings: Settings) -> VarianceSolution:
    """:func:`~designer.optimal.variance_program.solve_variance` with the session's warm start (the previous budget's
    patterns of the same problem shape)."""
    key = ("variance", problem.inputs, problem.objective.value, problem.lie_max is None, problem.focal_sets,
           problem.dont_know is None, problem.dont_know_max is None)
    warm = settings.warm.extras.get(key, ()) if settings.warm is not None else ()
    solver = settings.solver if settings.solver is None or settings.solver.upper() != "HIGHS" else None
    solution = solve_variance(problem, solver=solver, options=settings.options, warm=warm)
    if settings.warm is not None:
        settings.warm.extras[key] = tuple(int(b) for b in solution.patterns)
    return solution


def solve_symmetric(problem: DesignProblem, settings: Settings, decision: Decision) -> Solved:
    """The size-class program (:attr:`Route.SYMMETRIC`, docs/theory.md 5.3); its point is read by
    :func:`compact_candidate`."""
    outcome = solve_lp(symmetric_program(problem), solver=settings.solver, options=settings.options,
                       warm=settings.warm)
    return Solved(outcome, None, np.zeros(0, dtype=np.int64), "symmetric size classes")


def solve_invariant(problem: DesignProblem, settings: Settings, decision: Decision) -> Solved:
    """The invariant program (:attr:`Route.INVARIANT`, :func:`~designer.optimal.invariant_exact.invariant_program`)
    at the prior's floats; ``cols`` is the ``(k, l)`` float matrix, ``masks`` the singletons."""
    prior = problem.prior if decision.prior is None else np.array([float(p) for p in decision.prior])
    matrix, optimum, used = invariant_exact.invariant_program(problem, prior, solver=settings.solver,
                                                        options=settings.options)
    outcome = SolverOutcome(Status.OPTIMAL, optimum, None, used)
    return Solved(outcome, matrix, np.array([1 << j for j in range(problem.l)], dtype=np.int64),
                  "invariant linear program + exact table")


# ---------------------------------------------------------------------------- the candidate to certify
def _infeasible(problem: DesignProblem, settings: Settings, explain: bool, options: dict[str, Any] | None
                ) -> InfeasibleDesignError:
    return InfeasibleDesignError(explain_infeasible(problem, solver=settings.solver, options=options)
                                 if explain else "infeasible")


def full_candidate(problem: DesignProblem, solved: Solved, settings: Settings, decision: Decision,
                   explain: bool = True) -> Answer:
    """Explain infeasibility, clean the solver noise and symmetrise: the full mechanism to certify."""
    require_solution(solved.outcome, f"'{problem.name or 'the problem'}'")
    if solved.outcome.status is Status.INFEASIBLE or solved.cols is None:
        raise _infeasible(problem, settings, explain, options_for(settings, None))
    masks = [int(m) for m in solved.masks]
    cols = solved.cols
    if len(set(masks)) < len(masks):  # two columns report one set (a restricted variance program's patterns): their
        # sum is that set's mass, as private as its parts (a ratio of sums lies between the parts' ratios)
        distinct = sorted(set(masks))
        cols = np.column_stack([cols[:, [j for j, m in enumerate(masks) if m == d]].sum(axis=1) for d in distinct])
        masks = distinct
    full = (1 << problem.l) - 1
    truth = problem.truth()
    forbidden = None
    if problem.lie_max == 0.0:
        forbidden = np.array([[not (m >> int(t)) & 1 for m in masks] for t in truth])
    fixed = problem.dont_know if (problem.dont_know is not None and full in masks) else None
    cleaned = clean_solution(cols, fixed_full=fixed, full_index=masks.index(full) if fixed is not None else None,
                             forbidden=forbidden)
    mech = Mechanism(cleaned, inputs=problem.inputs, frame=problem.frame, focal=masks)
    path = solved.path
    if settings.symmetrize and decision.symmetric and not (decision.route is Route.PRECISE and mech.is_bayesian):
        # (A precise WLDP design is not averaged: that would merge its outputs and lose information.)
        mech = orbit_average(mech, truth)
        path += " + orbit average"
    return Answer(mech, path, objective_value(problem, mech), solved.outcome.objective, solved.outcome.solver,
                  solved.bound)


def compact_candidate(problem: DesignProblem, solved: Solved, settings: Settings, decision: Decision,
                      explain: bool = True) -> Answer:
    """The compact size-class form of the solved size-class program (exact classes for ``chi2``)."""
    outcome = solved.outcome
    require_solution(outcome, f"the size-class program of '{problem.name or 'the problem'}'")
    if outcome.status is Status.INFEASIBLE or outcome.z is None:
        if not explain:
            raise InfeasibleDesignError("infeasible")
        raise InfeasibleDesignError(
            explain_infeasible(problem, solver=settings.solver, options=settings.options)
            if problem.k <= GENERAL_MAX_INPUTS else
            f"no {problem.semantics.value.upper()} mechanism satisfies '{problem.name or 'the problem'}' at "
            f"epsilon = {problem.epsilon:g}; raise epsilon or relax the structure")
    exact = best_chi2_classes(problem)
    compact = from_solution(problem, exact if exact is not None else outcome.z)
    value = candidate_value(problem, compact)
    bound = None
    if problem.objective.variance:
        # the size classes hold an optimum of every eps-SLDP mechanism at the uniform prior (orbit averages of a
        # convex program, docs/theory.md 5.7); a lying bound restricts them to staircase classes: the bound is then
        # the best subset selection without it
        bound = value if problem.lie_max is None else best_compact_variance(problem.replace(lie_max=None))
    return Answer(compact, solved.path, value, outcome.objective, outcome.solver, bound)


def matrix_candidate(problem: DesignProblem, solved: Solved, settings: Settings, decision: Decision,
                     explain: bool = True) -> Answer:
    """An invariant design's float matrix; its value is the program's optimum, which the exact table must keep
    (the release rule, :data:`~designer.optimal.invariant_exact.INVARIANT_RTOL`)."""
    optimum = float(solved.outcome.objective)
    return Answer(solved.cols, solved.path, optimum, optimum, solved.outcome.solver)
