"""``design(problem)``: decide the route, build, solve, clean, symmetrise, certify (docs/theory.md, section 5).

The route (:class:`~designer.optimal.route.Route`) is decided once from the problem; :data:`ROUTES` gives each route
its steps: build and solve its program, turn the solver's point into a candidate (:mod:`designer.optimal.solve_steps`),
certify it and assemble the result. Every route, the invariant one too, is released by one loop
(:func:`_release`): certify (exactly, repairing when needed) under the route's release rule, and when that fails,
solve again slightly inside the budget (docs/theory.md, section 7.3).

The solver's claims (objective, budget) are recomputed from the released mechanism; an infeasible
problem is explained with the change that would make it feasible; a solver that stops for any other
reason raises :class:`~designer._internal.solvers.SolverError`. A released mechanism meets its budget and its
structure in exact arithmetic and its objective is within ``OBJECTIVE_RTOL`` of the solver's optimum
(``INVARIANT_RTOL`` for an invariant table).
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from .._internal.solvers import SolverError, WarmStart
from ..exceptions import (
    InfeasibleDesignError,
    InvalidArgumentError,
    InvalidArgumentTypeError,
    InvalidProblemError,
)
from ..mechanism import MAX_DENSE_CELLS, Mechanism
from ..privacy import eps_shafer, eps_walley
from ..results import FitStatus
from ..vocabulary import Semantics
from .certify import Certificate, CertificationError, certify, float_loss
from .invariant_exact import InvariantRelease, certify_table
from .objectives import objective_value, variance_figure
from .problem import DesignProblem
from .programs import Solved
from .references import (
    CONSTANT_REFERENCE_INPUTS,
    constant_reference,
    linear_references,
    separating_references,
    shrunk,
    support_references,
)
from .result import DesignResult, with_warnings
from .route import Decision, Route, check_size, decide
from .solve_steps import (
    Answer,
    Settings,
    candidate_value,
    compact_candidate,
    full_candidate,
    matrix_candidate,
    solve_general,
    solve_invariant,
    solve_lazy,
    solve_precise_route,
    solve_priced,
    solve_staircase,
    solve_symmetric,
    solve_variance_route,
)
from .symmetric import SymmetricMechanism
from .variance_program import OPTIMALITY_GAP

__all__ = ["ROUTES", "Steps", "design", "release_route", "within_tolerance"]

#: The Walley loss of a released set-valued design is computed (dense set functions) up to this many answers.
WALLEY_MAX_FRAME = 20
#: Full mechanisms of the symmetric route are expanded up to this many inputs.
EXPAND_INPUTS = 16
#: A released design's objective may fall short of the solver's optimum by at most this (relative).
OBJECTIVE_RTOL = 1e-6
#: A first answer over the budget by more than this (nats, floats) is not re-solved a hair inside it
#: (``RESOLVE_STEPS``): the repairs and the release with its gap follow at once.
FAR_EXCESS = 1e-6
#: Budget reductions (nats) of the re-solves tried when a repair would cost too much objective.
RESOLVE_STEPS = (1e-13, 1e-11, 1e-9, 1e-7)
#: Shares of the budget at which repair references are designed (the first feasible one that passes is used).
REFERENCE_SHARES = (0.5, 0.9, 0.99, 0.999)

Solve = Callable[..., Answer]


def _variance(problem: DesignProblem, mech: Mechanism | None, compact: SymmetricMechanism | None = None
              ) -> dict[str, Any]:
    """The reported variance, or ``None`` with the reason: a side figure never vetoes a certified design."""
    variance, kind, reason = variance_figure(problem, mech, compact)
    return {"variance": variance, "variance_kind": kind, "variance_reason": reason}


def design(problem: DesignProblem, *, solver: str | None = None, solver_options: dict[str, Any] | None = None,
           symmetrize: bool = True, path: str = "auto", warm: WarmStart | None = None,
           solver_args: dict[str, Any] | None = None) -> DesignResult:
    """Design the optimal certified mechanism for ``problem``.

    For a linear objective:

    .. math::

        \\max_M \\sum_{x, E} \\pi_x G[x, E] M[x, E] \\quad \\text{s.t. } M \\ge 0,\\ M 1 = 1, \\\\
        \\text{eps-SLDP (Def 3.1) and/or eps-WLDP (Def 3.13), structure}

    (``chi2``: the staircase LP of Kairouz, Oh & Viswanath 2016; the variance objectives: convex programs over its
    patterns, docs/theory.md section 5.7.)

    Parameters
    ----------
    problem : DesignProblem
    solver : str, optional
        ``None`` / ``"HIGHS"`` (HiGHS through highspy) or any solver cvxpy knows (``"CLARABEL"``, ...).
    solver_options : dict, optional
        HiGHS options, or keyword arguments of cvxpy's ``solve`` for another solver.
    symmetrize : bool, default True
        Return the orbit average for problems invariant under relabelling (same objective).
    path : {"auto", "general", "symmetric"}
        ``auto`` takes the symmetric (size-class) route for problems invariant under relabelling with more than
        ``route.SYMMETRIC_AUTO_INPUTS`` inputs, the general routes otherwise (:func:`designer.optimal.route.decide`);
        ``result.path`` says which program solved it.
    warm : WarmStart, optional
        A session shared by successive calls (e.g. a sweep over epsilon): programs of one shape start
        from the previous optimal basis (HiGHS only).
    solver_args : dict, optional
        Deprecated spelling of ``solver_options`` (``{"highs_options": {...}}`` is unwrapped).

    Returns
    -------
    DesignResult

    Raises
    ------
    InfeasibleDesignError
        With what would make the problem feasible (closed form or bisection).
    InvalidProblemError
        For a problem too large, or an objective the semantics does not support.
    SolverError
        When the solver stops without an answer (iteration limit, numerical trouble).
    CertificationError
        If no answer could be certified within the objective tolerance (nothing is released).

    Examples
    --------
    >>> from designer.optimal import DesignProblem, design
    >>> r = design(DesignProblem(inputs=("yes", "no"), epsilon=1.0, dont_know=0.2))
    >>> round(r.mechanism.row("yes")[("yes",)], 6)  # Cor 3.12: 0.8 e / (e + 1)
    0.584847
    """
    t0 = time.perf_counter()
    settings = _settings(problem, solver, solver_options, solver_args, symmetrize, path, warm)
    decision = decide(problem, path, settings.solver)
    check_size(decision)
    return with_warnings(_design(decision, settings, t0))


def release_route(decision: Decision, *, solver: str | None = None, options: dict[str, Any] | None = None
                  ) -> DesignResult:
    """Design along a route already decided (``decision``): the same steps as :func:`design`, without its
    warnings (:func:`~designer.optimal.invariant.design_invariant` enters here with a prior of its own)."""
    return _design(decision, Settings(solver, options, True, None), time.perf_counter())


# ---------------------------------------------------------------------------- the route table
@dataclass(frozen=True)
class Steps:
    """A route's row of :data:`ROUTES`.

    Attributes
    ----------
    solve : callable
        ``(problem, settings, decision) -> Solved``: build the route's program and solve it.
    candidate : callable
        ``(problem, solved, settings, decision, explain) -> Answer``: the solver's point as a candidate to certify
        (infeasibility explained when ``explain``).
    certify : callable
        ``(problem, answer, first, references, decision) -> (released, Certificate)``: certify ``answer`` under the
        route's release rule (its objective near ``first``'s), or raise :class:`CertificationError`.
    result : callable
        ``(problem, first, released, certificate, note, solve, t0) -> DesignResult`` (``t0``: the start, from
        :func:`time.perf_counter`).
    refusal : callable
        ``(problem, error) -> str``: what to say when no attempt certifies (``error``: the first attempt's).
    """

    solve: Callable[[DesignProblem, Settings, Decision], Solved]
    candidate: Callable[..., Answer]
    certify: Callable[..., tuple[Any, Certificate]]
    result: Callable[..., DesignResult]
    refusal: Callable[[DesignProblem, CertificationError | None], str]


def _solve(problem: DesignProblem, settings: Settings, decision: Decision, explain: bool = True) -> Answer:
    """Solve ``problem`` along ``decision``'s route: the candidate to certify."""
    steps = ROUTES[decision.route]
    return steps.candidate(problem, steps.solve(problem, settings, decision), settings, decision, explain)


def _design(decision: Decision, settings: Settings, t0: float) -> DesignResult:
    problem, steps = decision.problem, ROUTES[decision.route]
    solve: Solve = lambda p, explain=True: _solve(p, settings, decision, explain)  # noqa: E731
    first = solve(problem)
    released, certificate, note = _release(problem, first, solve, steps, decision)
    return steps.result(problem, first, released, certificate, note, solve, t0)


# ---------------------------------------------------------------------------- steps
def _settings(problem: DesignProblem, solver: str | None, options: dict[str, Any] | None,
              solver_args: dict[str, Any] | None, symmetrize: bool, path: str, warm: WarmStart | None) -> Settings:
    if not isinstance(problem, DesignProblem):
        raise InvalidArgumentTypeError(f"design() takes a DesignProblem, got {type(problem).__name__}")
    if path not in ("auto", "general", "symmetric"):
        raise InvalidArgumentError(f"path must be 'auto', 'general' or 'symmetric', got {path!r}")
    if warm is not None and not isinstance(warm, WarmStart):
        raise InvalidArgumentTypeError(f"warm must be a WarmStart session, got {type(warm).__name__}")
    if solver_args is not None:
        import warnings

        warnings.warn("design(solver_args=...) is deprecated; pass solver_options (HiGHS options, or the keyword "
                      "arguments of cvxpy's solve for another solver)", DeprecationWarning, stacklevel=3)
        if options is None:
            options = dict(solver_args.get("highs_options", solver_args))
    return Settings(solver, options, bool(symmetrize), warm)




# ---------------------------------------------------------------------------- the release loop (every route)
def _references(problem: DesignProblem, solve: Solve) -> Iterator[tuple[str, Any]]:
    """Designs strictly inside the budget and the inequality bounds: repair references of last resort.

    The bounds shrink with the budget (:func:`~designer.optimal.references.shrunk`): a solver's answer overshoots a
    bound by about its tolerance (1e-9), and a reference only ``1e-6`` inside it would need a mixing weight of about
    1e-3 to absorb that, too much objective for a tightly bounded design."""
    small = problem.semantics is Semantics.SLDP and problem.k <= CONSTANT_REFERENCE_INPUTS
    if small:
        constant = constant_reference(problem)
        if constant is not None:
            yield "constant design within the structure", constant
        yield from linear_references(problem, design)
    for share in REFERENCE_SHARES:
        try:
            inner = solve(shrunk(problem, share), explain=False)
        except (InfeasibleDesignError, InvalidProblemError, SolverError, CertificationError):
            continue  # the tightened problem has no design of its own: no reference from it
        yield f"design at {share:g} of the budget", inner.candidate
    if small:
        yield from separating_references(problem)


def _release(problem: DesignProblem, first: Answer, solve: Solve, steps: Steps, decision: Decision
             ) -> tuple[Any, Certificate, str]:
    """Certify ``first`` under the route's release rule; when that fails, solve again slightly inside the budget."""
    answer, note = first, ""
    error: CertificationError | None = None
    references = _Replay(_references(problem, solve))  # each reference designed once, however often it is tried
    # re-solving a hair inside the budget mends an answer over it by rounding, not one over it by more
    far = _loss_excess(problem, first.candidate) > FAR_EXCESS
    for step in (None, *(s for s in RESOLVE_STEPS if s < problem.epsilon / 4 and not far)):
        if step is not None:
            try:
                answer = solve(problem.replace(epsilon=problem.epsilon - step), explain=False)
            except (InfeasibleDesignError, SolverError):
                continue
            note = f" (re-solved at epsilon - {step:g} to certify)"
        try:
            released, certificate = steps.certify(problem, answer, first, iter(references), decision)
        except CertificationError as exc:
            error = error or exc
            continue
        if certificate.repaired and problem.objective.minimised and steps.certify is _certify_candidate:
            own = _best_reference(problem, references, first, candidate_value(problem, released),
                                  why="its repair's objective is above a reference's")
            if own is not None:
                return own
        return released, certificate, note
    fallback = _release_with_gap(problem, first, references, steps)
    if fallback is not None:
        return fallback
    raise CertificationError(steps.refusal(problem, error))


class _Replay:
    """An iterable over a generator's items that generates each once: later iterations replay what earlier ones
    produced, then go on (references are designs, solved only when a repair needs them)."""

    def __init__(self, items: Iterator[tuple[str, Any]]) -> None:
        self._items, self._seen = items, []  # type: ignore[var-annotated]

    @property
    def seen(self) -> list[tuple[str, Any]]:
        """The items generated so far (none is generated by asking)."""
        return list(self._seen)

    def __iter__(self) -> Iterator[tuple[str, Any]]:
        yield from self._seen
        for item in self._items:
            self._seen.append(item)
            yield item


def _of_form(references: _Replay, candidate: Any) -> Iterator[tuple[str, Any]]:
    """The references of ``candidate``'s form (full or compact)."""
    return ((name, ref) for name, ref in references if type(ref) is type(candidate))


def _loss_excess(problem: DesignProblem, candidate: Any) -> float:
    """How far ``candidate``'s largest loss (floats) exceeds the budget; 0 for forms without a float loss."""
    try:
        return float(float_loss(candidate, problem.semantics.losses)) - problem.epsilon
    except (TypeError, ValueError):
        return 0.0


def _release_with_gap(problem: DesignProblem, first: Answer, references: _Replay, steps: Steps
                      ) -> tuple[Any, Certificate, str] | None:
    """A minimised objective with a proved bound whose solver's answer no repair brings within ``OBJECTIVE_RTOL``:
    its answer meets the budget or a bound only to the conic solver's tolerance (up to a few percent on a nearly
    singular program), on an objective where that is worth more than ``OBJECTIVE_RTOL``. Every repair is tried
    once; the best is certified like any other and released with the gap its bound proves (``local`` beyond
    ``OPTIMALITY_GAP``), never called optimal on the solver's word. None when no repair passes."""
    bound = first.bound
    if not (problem.objective.minimised and steps.certify is _certify_candidate and bound is not None
            and math.isfinite(bound) and math.isfinite(first.value)):
        return None
    values: list[float] = []

    def record(candidate: Any) -> bool:  # the first pass: every repair's objective, none accepted
        value = candidate_value(problem, candidate)
        if math.isfinite(value):
            values.append(value)
        return False

    try:
        certify(first.candidate, problem, references=_of_form(references, first.candidate), accept=record)
    except CertificationError:
        pass
    own = _best_reference(problem, references, first, min(values, default=math.inf),
                          why="no repair brings it within the solver's tolerance")
    if own is not None:
        return own
    if not values:
        return None
    best = min(values)
    try:
        released, certificate = certify(first.candidate, problem, references=_of_form(references, first.candidate),
                                        accept=lambda c: candidate_value(problem, c) <= best)
    except CertificationError:
        return None
    return released, certificate, " (repaired beyond the solver's tolerance; the gap to the bound says how far)"


def _best_reference(problem: DesignProblem, references: _Replay, first: Answer, repaired: float, *, why: str
                    ) -> tuple[Any, Certificate, str] | None:
    """The reference already designed (of the answer's form) whose objective is least, when it is below
    ``repaired`` (the best repair's) and it is certified as it is: a repair mixes as little of a reference as it
    can, and where the solver's answer is far outside the budget (a structure near its feasibility threshold) that
    mix can be worse than the reference itself. None when no reference beats the repairs."""
    form = type(first.candidate)
    scored = sorted(((candidate_value(problem, ref), index, name, ref)
                     for index, (name, ref) in enumerate(references.seen) if type(ref) is form),
                    key=lambda item: (item[0], item[1]))
    for value, _, name, ref in scored:
        if not (math.isfinite(value) and value < repaired):
            return None
        try:
            released, certificate = certify(ref, problem)
        except CertificationError:
            continue
        if certificate.repaired:
            continue  # only a reference that meets the budget and the structure as it stands
        return released, certificate, (f" (the solver's answer breaks the budget or the structure and {why}: the "
                                       f"{name} released; the gap to the bound says how far)")
    return None


def within_tolerance(problem: DesignProblem, value: float, optimum: float, *, rtol: float = OBJECTIVE_RTOL) -> bool:
    """Whether ``value`` is within ``rtol`` (default ``OBJECTIVE_RTOL``) of ``optimum`` on the objective's good side
    (below a minimised objective's optimum plus the tolerance, above a maximised one's minus it)."""
    if not math.isfinite(optimum):
        return not problem.objective.minimised or math.isfinite(value) or optimum == value
    shortfall = value - optimum if problem.objective.minimised else optimum - value
    if shortfall <= 0:
        return True
    # relative, the reported gap itself (a slack of rtol |optimum| + 1e-12 let a maximised objective's gap read
    # 1.00000000008e-6 beside `optimal` at 1e-6); absolute only for an optimum of 0
    return _relative_gap(optimum, value) <= rtol if optimum else shortfall <= 1e-12


def _relative_gap(optimum: float, value: float) -> float:
    """``|optimum - value| / |optimum|``: the gap a maximised objective's design reports, and the one its repair is
    accepted within (:func:`within_tolerance`)."""
    return abs(optimum - value) / abs(optimum)


def _certify_candidate(problem: DesignProblem, answer: Answer, first: Answer, references: Iterator[tuple[str, Any]],
                       decision: Decision) -> tuple[Any, Certificate]:
    """A full or compact candidate certified (:func:`~designer.optimal.certify.certify`), repaired only when the
    repair keeps the objective within ``OBJECTIVE_RTOL`` of the first optimum; references of the candidate's form
    only (the structure's constant and linear references are full mechanisms)."""
    form = type(answer.candidate)
    own = support_references(problem, answer.candidate, design)
    return certify(answer.candidate, problem,
                   accept=lambda c: within_tolerance(problem, candidate_value(problem, c), first.value),
                   references=itertools.chain(own, ((name, ref) for name, ref in references if type(ref) is form)))


def _certify_table(problem: DesignProblem, answer: Answer, first: Answer, references: Iterator[tuple[str, Any]],
                   decision: Decision) -> tuple[Any, Certificate]:
    """An invariant design's exact table (:func:`~designer.optimal.invariant_exact.certify_table`), its objective within
    ``INVARIANT_RTOL`` of the first optimum; its reference is the prior's shared row, not ``references``."""
    if decision.prior is None:
        raise InvalidArgumentError("an invariant design needs its exact prior (decided by route.decide)")
    return certify_table(answer.candidate, problem, decision.prior, first.value)


def _no_certified(problem: DesignProblem, error: CertificationError | None) -> str:
    return (f"no certified design of '{problem.name or 'the problem'}' was found within {OBJECTIVE_RTOL:g} of the "
            "solver's optimum (the solver's answers break the budget or the structure by more than a repair can "
            "mend); nothing is released: try another solver (in Python, design(..., solver='CLARABEL')) or a "
            "budget or bound slightly inside this one")


def _table_refusal(problem: DesignProblem, error: CertificationError | None) -> str:
    return str(error) if error is not None else _no_certified(problem, error)


# ---------------------------------------------------------------------------- results
def _full_result(problem: DesignProblem, first: Answer, released: Any, certificate: Certificate, note: str,
                 solve: Solve, t0: float) -> DesignResult:
    """The result of a full mechanism (general, priced, lazy, precise and staircase routes)."""
    assert isinstance(released, Mechanism)
    value = objective_value(problem, released)
    return DesignResult(
        problem=problem, mechanism=released, objective_value=value,
        solver_objective=first.solver_objective, eps_shafer=eps_shafer(released),
        eps_walley=_walley(released),
        **_variance(problem, released), **_optimality(problem, first, value), solver=first.solver,
        path=first.path + note, certificate=certificate, seconds=time.perf_counter() - t0)


def _walley(released: Mechanism) -> float:
    """The Walley loss, a side figure, up to ``WALLEY_MAX_FRAME`` answers where the set functions fit in memory
    (``nan`` past that: 21 inputs x 2**21 events took 27 s, 24 x 2**24 do not fit)."""
    if released.is_bayesian:
        return eps_walley(released)
    if released.l > WALLEY_MAX_FRAME or released.k * (1 << released.l) > MAX_DENSE_CELLS:
        return math.nan
    return eps_walley(released)


def _optimality(problem: DesignProblem, first: Answer, value: float) -> dict[str, Any]:
    """The status, optimality gap and bound of a released design whose objective is ``value``.

    A minimised (variance) objective is measured against the proved lower bound of its program (docs/theory.md 5.7):
    ``optimal`` when within ``OPTIMALITY_GAP``, ``local`` otherwise (a restriction of the problem's class was solved:
    precise answers, a lying bound, focal sets). A maximised objective's program is a linear program (or the
    staircase LP) whose optimum certifies itself: the gap is the released design's distance to that optimum.
    """
    if problem.objective.minimised:
        bound = first.bound if first.bound is not None else -math.inf
        if not math.isfinite(value):
            return {"status": FitStatus.LOCAL, "optimality_gap": None, "bound": _finite(bound)}
        gap = max(0.0, (value - bound) / abs(value)) if value else 0.0
        status = FitStatus.OPTIMAL if gap <= OPTIMALITY_GAP else FitStatus.LOCAL
        return {"status": status, "optimality_gap": gap if math.isfinite(gap) else None, "bound": _finite(bound)}
    optimum = first.value
    gap = _relative_gap(optimum, value) if optimum and math.isfinite(optimum) else 0.0
    return {"status": FitStatus.OPTIMAL, "optimality_gap": gap, "bound": None}


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _compact_result(problem: DesignProblem, first: Answer, released: Any, certificate: Certificate, note: str,
                    solve: Solve, t0: float) -> DesignResult:
    """The result of the size-class route (docs/theory.md, 5.3): the compact form, expanded up to
    ``EXPAND_INPUTS`` inputs."""
    assert isinstance(released, SymmetricMechanism)
    mechanism = None
    if problem.k <= EXPAND_INPUTS:
        # The per-set masses of the expansion are rounded quotients of the class totals: the released
        # full matrix gets a certificate of its own (exact when small), repaired if the rounding needs it.
        full = released.to_mechanism()
        value = objective_value(problem, full)
        expanded = ((name, ref.to_mechanism()) for name, ref in _references(problem, solve)
                    if isinstance(ref, SymmetricMechanism))
        mechanism, certificate = certify(full, problem, references=expanded,
                                         accept=lambda m: within_tolerance(problem, objective_value(problem, m), value))
    value = candidate_value(problem, released)
    return DesignResult(
        problem=problem, mechanism=mechanism, objective_value=value,
        solver_objective=first.solver_objective, eps_shafer=released.eps_shafer(),
        eps_walley=released.eps_walley(), **_variance(problem, None, released), **_optimality(problem, first, value),
        solver=first.solver, path=first.path + note, certificate=certificate,
        seconds=time.perf_counter() - t0, compact=released)


def _table_result(problem: DesignProblem, first: Answer, released: Any, certificate: Certificate, note: str,
                  solve: Solve, t0: float) -> DesignResult:
    """The result of the invariant route: the table's masses, its objective and the table (docs/theory.md, 12)."""
    assert isinstance(released, InvariantRelease)
    mech = released.mechanism
    return DesignResult(problem=problem, mechanism=mech, objective_value=released.value,
                        solver_objective=first.solver_objective, eps_shafer=eps_shafer(mech),
                        eps_walley=eps_shafer(mech), **_variance(problem, mech), status=FitStatus.OPTIMAL,
                        solver=first.solver, path=first.path + note, certificate=certificate,
                        seconds=time.perf_counter() - t0, exact_table=released.table)


#: The route table: every :class:`~designer.optimal.route.Route` and its steps (tests/test_route.py checks that
#: every route has a row).
ROUTES: dict[Route, Steps] = {
    Route.GENERAL: Steps(solve_general, full_candidate, _certify_candidate, _full_result, _no_certified),
    Route.PRICED: Steps(solve_priced, full_candidate, _certify_candidate, _full_result, _no_certified),
    Route.LAZY: Steps(solve_lazy, full_candidate, _certify_candidate, _full_result, _no_certified),
    Route.PRECISE: Steps(solve_precise_route, full_candidate, _certify_candidate, _full_result, _no_certified),
    Route.STAIRCASE: Steps(solve_staircase, full_candidate, _certify_candidate, _full_result, _no_certified),
    Route.VARIANCE: Steps(solve_variance_route, full_candidate, _certify_candidate, _full_result, _no_certified),
    Route.SYMMETRIC: Steps(solve_symmetric, compact_candidate, _certify_candidate, _compact_result, _no_certified),
    Route.INVARIANT: Steps(solve_invariant, matrix_candidate, _certify_table, _table_result, _table_refusal),
}
