"""``design(problem)``: choose the path, build, solve, clean, symmetrise, certify (docs/theory.md, section 5).

The solver's claims (objective, budget) are recomputed from the released mechanism; an infeasible
problem is explained with the change that would make it feasible; a solver that stops for any other
reason raises :class:`~designer._internal.solvers.SolverError`. A released mechanism meets its budget and its
structure in exact arithmetic and its objective is within ``OBJECTIVE_RTOL`` of the solver's optimum;
when a repair would cost more, the problem is solved again slightly inside the budget
(docs/theory.md, section 7.3).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import setfunctions as sf
from .._internal.solvers import SolverError, SolverOutcome, Status, WarmStart, require_solution, solve_lp
from ..exceptions import InfeasibleDesignError, InvalidArgumentError, InvalidArgumentTypeError, InvalidProblemError
from ..mechanism import Mechanism
from ..privacy import eps_shafer, eps_walley
from ..vocabulary import Objective, Semantics
from . import columns
from .certify import Certificate, CertificationError, certify, clean_solution
from .infeasible import explain_infeasible
from .lazy import LAZY_MIN_FRAME, solve_walley_lazily
from .objectives import objective_value, variance_figure
from .precise import STAIRCASE_OPTIONS, is_precise, solve_precise
from .problem import DesignProblem
from .programs import Solved, linear_program, program_nonzeros, staircase_mechanism, staircase_program
from .result import DesignResult, with_warnings
from .staircase_pricing import STAIRCASE_PRICE_MIN_INPUTS, solve_staircase_priced
from .symmetric import SymmetricMechanism, best_chi2_classes, from_solution, symmetric_objective, symmetric_program
from .symmetry import is_symmetric, orbit_average

__all__ = ["design"]

#: ``path="auto"`` takes the symmetric path above this many inputs.
SYMMETRIC_AUTO_INPUTS = 10
#: The WLDP size-class program keeps dense (k+1) x k binomial maps: measured 5.8 GiB at k = 5000.
MAX_SYMMETRIC_WLDP_INPUTS = 5500
#: Full mechanisms of the symmetric path are expanded up to this many inputs.
EXPAND_INPUTS = 16
#: The general path refuses frames larger than this without a focal-set restriction ...
GENERAL_MAX_INPUTS = 16
#: ... except designs with a linear objective (every semantics), whose answer sets are priced (column
#: generation, docs/pricing.md), up to this.
COLUMN_MAX_FRAME = 20
#: The general path refuses programs with more (estimated) constraint nonzeros than this: about 300 bytes
#: each at peak (measured: WLDP k = l = 12, 7.5e6 nonzeros, 2.1 GiB), so about 8 GiB.
MAX_NONZEROS = 27_000_000
#: A released design's objective may fall short of the solver's optimum by at most this (relative).
OBJECTIVE_RTOL = 1e-6
#: Budget reductions (nats) of the re-solves tried when a repair would cost too much objective.
RESOLVE_STEPS = (1e-13, 1e-11, 1e-9, 1e-7)
#: Shares of the budget at which repair references are designed (the first feasible one that passes is used).
REFERENCE_SHARES = (0.5, 0.9, 0.99, 0.999)
#: HiGHS options for WLDP programs (many sparse pair rows): interior point, then crossover to a vertex.
#: Measured at k = l = 8: 0.3 s against 2.1 s for the default simplex.
WLDP_OPTIONS = {"solver": "ipm"}
#: The row-generation programs are small and sparse: dual simplex (IPM is 40x slower on them).
LAZY_OPTIONS = {"solver": "simplex", "simplex_strategy": 1}

Candidate = Mechanism | SymmetricMechanism


@dataclass(frozen=True)
class _Settings:
    solver: str | None
    options: dict[str, Any] | None
    symmetrize: bool
    warm: WarmStart | None


def _variance(problem: DesignProblem, mech: Mechanism | None, compact: SymmetricMechanism | None = None
              ) -> dict[str, Any]:
    """The reported variance, or ``None`` with the reason: a side figure never vetoes a certified design."""
    variance, kind, reason = variance_figure(problem, mech, compact)
    return {"variance": variance, "variance_kind": kind, "variance_reason": reason}


def design(problem: DesignProblem, *, solver: str | None = None, solver_options: dict[str, Any] | None = None,
           symmetrize: bool = True, path: str = "auto", warm: WarmStart | None = None,
           solver_args: dict[str, Any] | None = None) -> DesignResult:
    """Design the optimal certified mechanism for ``problem``.

    .. math:: \\max_M \\sum_{x, E} \\pi_x G[x, E] M[x, E] \\quad \\text{s.t. } M \\ge 0,\\ M 1 = 1,
              \\ \\text{eps-SLDP (Def 3.1) and/or eps-WLDP (Def 3.13), structure}

    (``chi2``: the staircase LP of Kairouz, Oh & Viswanath 2016.)

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
        ``auto`` takes the symmetric (size-class) path for invariant problems with more than
        ``SYMMETRIC_AUTO_INPUTS`` inputs, the general LP otherwise; ``result.path`` says which.
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
    if problem.invariant:
        from .invariant import design_invariant

        return with_warnings(design_invariant(problem, solver=settings.solver, options=settings.options))
    route = _route(problem, path)
    _check_size(problem, route)
    if route == "symmetric":
        return with_warnings(_design_symmetric(problem, settings, t0))
    first = _solve(problem, settings)
    solve: Callable[..., _Answer] = lambda p, explain=True: _solve(p, settings, explain)  # noqa: E731
    released, certificate, note = _release(problem, first, solve)
    assert isinstance(released, Mechanism)
    return with_warnings(DesignResult(
        problem=problem, mechanism=released, objective_value=objective_value(problem, released),
        solver_objective=first.outcome.objective, eps_shafer=eps_shafer(released),
        eps_walley=eps_walley(released) if released.l <= sf.MAX_DENSE_FRAME or released.is_bayesian else math.nan,
        **_variance(problem, released), status=first.outcome.status.value,
        solver=first.outcome.solver, path=first.path + note, certificate=certificate,
        seconds=time.perf_counter() - t0))


# ---------------------------------------------------------------------------- steps
@dataclass(frozen=True)
class _Answer:
    """A solved and cleaned candidate with its objective value."""

    candidate: Candidate
    outcome: Any
    path: str
    value: float


def _settings(problem: DesignProblem, solver: str | None, options: dict[str, Any] | None,
              solver_args: dict[str, Any] | None, symmetrize: bool, path: str, warm: WarmStart | None) -> _Settings:
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
    return _Settings(solver, options, bool(symmetrize), warm)


def _route(problem: DesignProblem, path: str) -> str:
    if path == "symmetric" and not is_symmetric(problem):
        raise InvalidProblemError(
            "the symmetric path needs a problem invariant under relabelling: inputs equal to the frame's "
            "labels, a uniform prior, and objective and structure that do not single out any answer")
    if is_precise(problem):
        return "general"
    big = path == "auto" and is_symmetric(problem) and problem.k > SYMMETRIC_AUTO_INPUTS
    return "symmetric" if path == "symmetric" or big else "general"


def _check_size(problem: DesignProblem, route: str) -> None:
    """Refuse, before any work, programs beyond the frame limit or about 8 GiB."""
    if route == "symmetric":
        if problem.semantics.walley and problem.k > MAX_SYMMETRIC_WLDP_INPUTS:
            raise InvalidProblemError(
                f"the WLDP size-class program of {problem.k} inputs needs dense {problem.k} x {problem.k} binomial "
                f"maps (about {240 * problem.k**2 / 2**30:.0f} GiB; limit {MAX_SYMMETRIC_WLDP_INPUTS} inputs, about "
                "8 GiB); use semantics = \"sldp\" (any size) or fewer answer options")
        return
    if is_precise(problem):
        return
    name = problem.name or "the problem"
    # chi2 under SLDP is the staircase LP, whose 2**k columns do not grow with the frame (docs/pricing.md)
    staircase = problem.objective is Objective.CHI2 and problem.semantics is Semantics.SLDP
    if problem.l > GENERAL_MAX_INPUTS and problem.focal_sets is None and not (
            (staircase or columns.eligible(problem, min_frame=columns.COLUMN_MIN_FRAME))
            and problem.l <= COLUMN_MAX_FRAME):
        raise InvalidProblemError(
            f"a frame of {problem.l} answers has 2**{problem.l} candidate sets per input, too many for the "
            f"general path (limit {GENERAL_MAX_INPUTS}; {COLUMN_MAX_FRAME} for a linear objective, whose sets are "
            "priced); restrict focal_sets, or make the problem symmetric (uniform prior, inputs = frame) for "
            "the size-class path")
    if columns.eligible(problem, min_frame=columns.COLUMN_MIN_FRAME):
        return  # the sets are priced: the program holds only the sets that enter
    if problem.objective.linear and (nonzeros := program_nonzeros(problem)) > MAX_NONZEROS:
        raise InvalidProblemError(
            f"the {problem.semantics.value.upper()} program of '{name}' would have about {nonzeros:.2g} "
            f"nonzeros (about {nonzeros * 300 / 2**30:.0f} GiB; limit {MAX_NONZEROS:.2g}); restrict focal_sets, "
            "use fewer answers, use semantics = \"sldp\" (no pair rows), or make the problem symmetric "
            "(uniform prior, inputs = frame) for the size-class path")


def _options(settings: _Settings, default: dict[str, Any] | None) -> dict[str, Any] | None:
    return default if settings.solver is None and settings.options is None else settings.options


def _solve_program(problem: DesignProblem, settings: _Settings) -> Solved:
    """Build and solve the program of ``problem`` (linear, staircase or precise)."""
    solver, warm = settings.solver, settings.warm
    if problem.objective.linear:
        priced = columns.eligible(problem, min_frame=columns.COLUMN_MIN_FRAME)
        if priced and (solver is None or solver.upper() == "HIGHS"):
            found = columns.generate_columns(problem, solver, _options(settings, LAZY_OPTIONS), warm=warm)
            out = found.rows.outcome
            too_big = problem.l > GENERAL_MAX_INPUTS and problem.focal_sets is None
            if out.status is Status.OPTIMAL or too_big:
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
        if problem.semantics.walley and problem.l >= LAZY_MIN_FRAME and problem.k > 1:
            gen = solve_walley_lazily(problem, solver, _options(settings, LAZY_OPTIONS))
            full_rows = problem.k * (problem.k - 1) * ((1 << problem.l) - 2)
            path = f"linear program, Walley rows generated ({gen.rows} of {full_rows}, {gen.rounds} rounds)"
            out = gen.outcome
            return Solved(out, None if out.z is None else gen.program.mechanism(out.z), gen.program.family, path)
        lp = linear_program(problem)
        out = solve_lp(lp, solver=solver, warm=warm,
                       options=_options(settings, WLDP_OPTIONS if problem.semantics.walley else None))
        return Solved(out, None if out.z is None else lp.mechanism(out.z), lp.family, "linear program")
    if is_precise(problem):
        binary = problem.k == 2 and problem.l == 2 and set(problem.inputs) == set(problem.frame)
        if binary and (problem.dont_know or problem.dont_know_max) and is_symmetric(problem):
            # The worst case is the lambda = 0 Warner matrix, whose information grows with the truthful mass:
            # the truthful program under the same constraints is optimal (docs/theory.md, 5.4).
            solved = _solve_program(problem.replace(objective="truthful"), settings)
            return Solved(solved.outcome, solved.cols, solved.masks,
                          "linear program (worst-case information of two answers)")
        if problem.dont_know or problem.dont_know_max or problem.lie_max is not None or problem.focal_sets is not None:
            raise InvalidProblemError(
                f"objective 'chi2' under {problem.semantics.value.upper()} designs a precise (Bayesian) mechanism, "
                "which has no don't-know mass, lying bound or focal-set restriction (solved with those only for "
                "two answers and a uniform prior); drop [structure], use semantics = \"sldp\", or objective "
                "truthful / gain / worst_case_utility")
        return solve_precise(problem, solver=solver, warm=warm, options=_options(settings, None))
    return _solve_staircase(problem, settings)


def _solve_staircase(problem: DesignProblem, settings: _Settings) -> Solved:
    """The staircase LP of ``chi2`` under SLDP, its columns priced from ``STAIRCASE_PRICE_MIN_INPUTS`` inputs."""
    solver, warm = settings.solver, settings.warm
    st = staircase_program(problem)
    outcome: SolverOutcome | None = None
    path = "staircase LP"
    if problem.k >= STAIRCASE_PRICE_MIN_INPUTS and (solver is None or solver.upper() == "HIGHS"):
        # the 2**k - 2 columns priced from the duals (docs/pricing.md); a first program without an optimum
        # leaves the full one to solve
        first = solve_staircase_priced(st, problem.k, solver=solver, options=_options(settings, STAIRCASE_OPTIONS),
                                       warm=warm)
        if first.status is Status.OPTIMAL:
            outcome, path = first, "staircase LP, columns priced"
    if outcome is None:
        outcome = solve_lp(st.lp, solver=solver, warm=warm, options=_options(settings, STAIRCASE_OPTIONS))
    if outcome.z is None:
        return Solved(outcome, None, st.sets, path)
    cols, masks = staircase_mechanism(st, outcome.z, problem.l)
    return Solved(outcome, cols, masks, path)


def _solve(problem: DesignProblem, settings: _Settings, explain: bool = True) -> _Answer:
    """Solve, explain infeasibility, clean the solver noise and symmetrise: the mechanism to certify."""
    solved = _solve_program(problem, settings)
    require_solution(solved.outcome, f"'{problem.name or 'the problem'}'")
    if solved.outcome.status is Status.INFEASIBLE or solved.cols is None:
        raise InfeasibleDesignError(explain_infeasible(problem, solver=settings.solver,
                                                       options=_options(settings, None))
                                    if explain else "infeasible")
    masks = [int(m) for m in solved.masks]
    full = (1 << problem.l) - 1
    truth = problem.truth()
    forbidden = None
    if problem.lie_max == 0.0:
        forbidden = np.array([[not (m >> int(t)) & 1 for m in masks] for t in truth])
    fixed = problem.dont_know if (problem.dont_know is not None and full in masks) else None
    cleaned = clean_solution(solved.cols, fixed_full=fixed, full_index=masks.index(full) if fixed is not None else None,
                             forbidden=forbidden)
    mech = Mechanism(cleaned, inputs=problem.inputs, frame=problem.frame, focal=masks)
    path = solved.path
    if settings.symmetrize and is_symmetric(problem) and not (is_precise(problem) and mech.is_bayesian):
        # (A precise WLDP design is not averaged: that would merge its outputs and lose information.)
        mech = orbit_average(mech, truth)
        path += " + orbit average"
    return _Answer(mech, solved.outcome, path, objective_value(problem, mech))


def _references(problem: DesignProblem, solve: Callable[..., _Answer]) -> Iterator[tuple[str, Candidate]]:
    """Designs strictly inside the budget and the inequality bounds: repair references of last resort."""
    tighter: dict[str, Any] = {}
    for key in ("lie_max", "dont_know_max"):
        value = getattr(problem, key)
        if value:
            tighter[key] = value * (1 - 1e-6)
    for share in REFERENCE_SHARES:
        try:
            inner = solve(problem.replace(epsilon=share * problem.epsilon, **tighter), explain=False)
        except (InfeasibleDesignError, SolverError, CertificationError):
            continue
        yield f"design at {share:g} of the budget", inner.candidate


def _release(problem: DesignProblem, first: _Answer, solve: Callable[..., _Answer]
             ) -> tuple[Any, Certificate, str]:
    """Certify ``first``; when a repair costs too much objective, solve again slightly inside the budget."""
    floor = first.value - OBJECTIVE_RTOL * abs(first.value) - 1e-12 if math.isfinite(first.value) else -math.inf

    def accept(candidate: Candidate) -> bool:
        return _value(problem, candidate) >= floor

    answer, note = first, ""
    steps = [s for s in RESOLVE_STEPS if s < problem.epsilon / 4]
    for step in (None, *steps):
        if step is not None:
            try:
                answer = solve(problem.replace(epsilon=problem.epsilon - step), explain=False)
            except (InfeasibleDesignError, SolverError):
                continue
            note = f" (re-solved at epsilon - {step:g} to certify)"
        try:
            released, certificate = certify(answer.candidate, problem, accept=accept,
                                            references=_references(problem, solve))
        except CertificationError:
            continue
        return released, certificate, note
    raise CertificationError(
        f"no certified design of '{problem.name or 'the problem'}' was found within {OBJECTIVE_RTOL:g} of the "
        "solver's optimum (the solver's answers break the budget or the structure by more than a repair can "
        "mend); nothing is released: try solver='CLARABEL' or tighter solver tolerances")


def _value(problem: DesignProblem, candidate: Candidate) -> float:
    if isinstance(candidate, SymmetricMechanism):
        if problem.objective is Objective.CHI2:
            return candidate.chi2()
        ca, cb = symmetric_objective(problem)
        return float(ca @ candidate.A + cb @ candidate.B)
    return objective_value(problem, candidate)


# ---------------------------------------------------------------------------- symmetric path
def _solve_symmetric(problem: DesignProblem, settings: _Settings, explain: bool = True) -> _Answer:
    outcome = solve_lp(symmetric_program(problem), solver=settings.solver, options=settings.options,
                       warm=settings.warm)
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
    z = exact if exact is not None else outcome.z
    compact = from_solution(problem, z)
    return _Answer(compact, outcome, "symmetric size classes", _value(problem, compact))


def _design_symmetric(problem: DesignProblem, settings: _Settings, t0: float) -> DesignResult:
    """The size-class path (docs/theory.md, 5.3) for problems invariant under relabelling."""
    first = _solve_symmetric(problem, settings)
    solve: Callable[..., _Answer] = lambda p, explain=True: _solve_symmetric(p, settings, explain)  # noqa: E731
    released, certificate, note = _release(problem, first, solve)
    assert isinstance(released, SymmetricMechanism)
    mechanism = None
    if problem.k <= EXPAND_INPUTS:
        # The per-set masses of the expansion are rounded quotients of the class totals: the released
        # full matrix gets a certificate of its own (exact when small), repaired if the rounding needs it.
        full = released.to_mechanism()
        value = objective_value(problem, full)
        floor = value - OBJECTIVE_RTOL * abs(value) - 1e-12
        inner = _references(problem, solve)
        expanded = ((name, ref.to_mechanism()) for name, ref in inner
                    if isinstance(ref, SymmetricMechanism))
        mechanism, certificate = certify(full, problem, references=expanded,
                                         accept=lambda m: objective_value(problem, m) >= floor)
    return DesignResult(
        problem=problem, mechanism=mechanism, objective_value=_value(problem, released),
        solver_objective=first.outcome.objective, eps_shafer=released.eps_shafer(),
        eps_walley=released.eps_walley(), **_variance(problem, None, released), status=first.outcome.status.value,
        solver=first.outcome.solver, path=first.path + note, certificate=certificate,
        seconds=time.perf_counter() - t0, compact=released)
