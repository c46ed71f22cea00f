"""The route of a design: which program solves it, decided once from the problem (docs/theory.md, section 5).

A problem takes one of eight routes. :func:`decide` looks at the problem once (is it invariant under relabelling?
precise? are its answer sets priced? does it keep its prior?) and returns a :class:`Decision`; the engine
(:func:`designer.optimal.engine.design`) reads the route's row in its table (build and solve the program, turn the
solver's point into a candidate, certify, assemble the result) and never asks again. :func:`check_size` refuses,
before any work, a program the route cannot hold.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from fractions import Fraction

from ..exceptions import InvalidProblemError
from ..vocabulary import Semantics
from . import columns
from .invariant_exact import invariant_problem
from .many_inputs import check_many_inputs
from .precise import is_precise
from .problem import DesignProblem
from .programs import LAZY_MIN_FRAME, program_nonzeros
from .symmetry import is_symmetric
from .variance_master import MAX_VARIANCE_INPUTS

__all__ = ["COLUMN_MAX_FRAME", "GENERAL_MAX_INPUTS", "MAX_NONZEROS", "MAX_SYMMETRIC_WLDP_INPUTS",
           "SYMMETRIC_AUTO_INPUTS", "Decision", "Route", "check_size", "decide"]

#: ``path="auto"`` takes the symmetric route above this many inputs.
SYMMETRIC_AUTO_INPUTS = 10
#: The WLDP size-class program keeps dense (k+1) x k binomial maps: measured 5.8 GiB at k = 5000.
MAX_SYMMETRIC_WLDP_INPUTS = 5500
#: The general routes refuse frames larger than this without a focal-set restriction ...
GENERAL_MAX_INPUTS = 16
#: ... except designs with a linear objective (every semantics), whose answer sets are priced (column
#: generation, docs/pricing.md), up to this.
COLUMN_MAX_FRAME = 20
#: The general routes refuse programs with more (estimated) constraint nonzeros than this: about 300 bytes
#: each at peak (measured: WLDP k = l = 12, 7.5e6 nonzeros, 2.1 GiB), so about 8 GiB.
MAX_NONZEROS = 27_000_000


class Route(StrEnum):
    """The program that designs a problem (a member is its word, as ``str``).

    Examples
    --------
    >>> import designer
    >>> from designer.optimal import Route, decide
    >>> decide(designer.DesignProblem(inputs=tuple(f"v{i}" for i in range(30)), epsilon=1.0)).route is Route.SYMMETRIC
    True
    """

    #: The full linear program over every allowed answer set (Def 3.1 and Def 3.13 as linear rows).
    GENERAL = "general"
    #: A linear objective on a frame of at least ``columns.COLUMN_MIN_FRAME`` answers, solved by HiGHS: the answer
    #: sets enter as their reduced costs ask (column generation, docs/pricing.md).
    PRICED = "priced"
    #: A linear objective under WLDP (or both) on a frame of at least three answers: the pair rows of Def 3.13 are
    #: generated as they are violated.
    LAZY = "lazy"
    #: ``chi2`` under WLDP (or both): a precise (Bayesian) design over the staircase patterns.
    PRECISE = "precise"
    #: ``chi2`` under SLDP: the staircase LP (its columns priced from ``STAIRCASE_PRICE_MIN_INPUTS`` inputs).
    STAIRCASE = "staircase"
    #: ``variance`` / ``max_variance`` under SLDP: a convex (semidefinite) program over staircase pattern weights,
    #: its patterns priced by the objective's gradient, with a proved optimality gap (docs/theory.md, 5.7).
    VARIANCE = "variance"
    #: Invariant under relabelling: the size-class program (docs/theory.md, 5.3).
    SYMMETRIC = "symmetric"
    #: Keeps the prior's distribution (PRAM): the invariant program and an exact integer table (section 12).
    INVARIANT = "invariant"


@dataclass(frozen=True)
class Decision:
    """What :func:`decide` found about a problem, once.

    Attributes
    ----------
    route : Route
    problem : DesignProblem
        The problem as the route solves it (an invariant design's prior is the exact prior's floats).
    symmetric : bool
        Invariant under relabelling (:func:`~designer.optimal.symmetry.is_symmetric`): a full design is returned as
        its orbit average.
    priceable : bool
        Column generation applies (:func:`~designer.optimal.columns.eligible` at ``COLUMN_MIN_FRAME``), whatever
        the solver.
    prior : tuple of Fraction, optional
        The prior an invariant design keeps, exactly (None on the other routes).
    """

    route: Route
    problem: DesignProblem
    symmetric: bool = False
    priceable: bool = False
    prior: tuple[Fraction, ...] | None = None

    @property
    def fallback(self) -> Route:
        """Where the priced route goes when column generation stops without an optimum: the route the problem
        takes without pricing (row generation under WLDP, else the full program)."""
        return _unpriced(self.problem)


def _unpriced(problem: DesignProblem) -> Route:
    if problem.semantics.walley and problem.l >= LAZY_MIN_FRAME and problem.k > 1:
        return Route.LAZY
    return Route.GENERAL


def decide(problem: DesignProblem, path: str = "auto", solver: str | None = None) -> Decision:
    """The route of ``problem``.

    Parameters
    ----------
    problem : DesignProblem
    path : {"auto", "general", "symmetric"}
        ``auto`` takes the symmetric route for problems invariant under relabelling with more than
        :data:`SYMMETRIC_AUTO_INPUTS` inputs; ``symmetric`` demands it (an error for other problems).
    solver : str, optional
        Column generation (:attr:`Route.PRICED`) runs on HiGHS only (``None`` or ``"HIGHS"``).

    Returns
    -------
    Decision

    Examples
    --------
    >>> import designer
    >>> problem = designer.DesignProblem(inputs=("yes", "no"), epsilon=1.0, objective="truthful", dont_know=0.2)
    >>> from designer.optimal import decide
    >>> decision = decide(problem)
    >>> decision.route, decision.symmetric
    (<Route.GENERAL: 'general'>, True)
    """
    if problem.invariant:
        kept, exact = invariant_problem(problem)
        return Decision(Route.INVARIANT, kept, prior=exact)
    symmetric = is_symmetric(problem)
    if path == "symmetric" and not symmetric:
        raise InvalidProblemError(
            "the symmetric path needs a problem invariant under relabelling: inputs equal to the frame's "
            "labels, a uniform prior, and objective and structure that do not single out any answer")
    if is_precise(problem):
        return Decision(Route.PRECISE, problem, symmetric)
    if path == "symmetric" or (path == "auto" and symmetric and problem.k > SYMMETRIC_AUTO_INPUTS):
        return Decision(Route.SYMMETRIC, problem, symmetric)
    if problem.objective.variance:
        return Decision(Route.VARIANCE, problem, symmetric)
    if not problem.objective.linear:
        return Decision(Route.STAIRCASE, problem, symmetric)
    priceable = columns.eligible(problem, min_frame=columns.COLUMN_MIN_FRAME)
    if priceable and (solver is None or solver.upper() == "HIGHS"):
        return Decision(Route.PRICED, problem, symmetric, priceable)
    return Decision(_unpriced(problem), problem, symmetric, priceable)


def check_size(decision: Decision) -> None:
    """Refuse, before any work, programs beyond the frame limit or about 8 GiB (:class:`InvalidProblemError`)."""
    problem, route = decision.problem, decision.route
    if route is Route.SYMMETRIC:
        if problem.semantics.walley and problem.k > MAX_SYMMETRIC_WLDP_INPUTS:
            raise InvalidProblemError(
                f"the WLDP size-class program of {problem.k} inputs needs dense {problem.k} x {problem.k} binomial "
                f"maps (about {240 * problem.k**2 / 2**30:.0f} GiB; limit {MAX_SYMMETRIC_WLDP_INPUTS} inputs, about "
                "8 GiB); use semantics = \"sldp\" (any size) or fewer answer options")
        return
    if route in (Route.PRECISE, Route.INVARIANT):
        return
    name = problem.name or "the problem"
    # chi2 and the variances under SLDP are staircase programs, whose 2**k columns do not grow with the frame
    # (docs/pricing.md)
    staircase = problem.objective.estimation and problem.semantics is Semantics.SLDP
    if route is Route.VARIANCE and problem.k > MAX_VARIANCE_INPUTS:
        check_many_inputs(problem)  # past 20 inputs: the pool route of docs/theory.md 5.11, or one clear refusal
        return
    if problem.l > GENERAL_MAX_INPUTS and problem.focal_sets is None and not (
            (staircase or decision.priceable) and problem.l <= COLUMN_MAX_FRAME):
        raise InvalidProblemError(
            f"a frame of {problem.l} answers has 2**{problem.l} candidate sets per input, too many for the "
            f"general path (limit {GENERAL_MAX_INPUTS}; {COLUMN_MAX_FRAME} for a linear objective, whose sets are "
            "priced); restrict focal_sets, or make the problem symmetric (uniform prior, inputs = frame) for "
            "the size-class path")
    if decision.priceable:
        return  # the sets are priced: the program holds only the sets that enter
    if problem.objective.linear and (nonzeros := program_nonzeros(problem)) > MAX_NONZEROS:
        raise InvalidProblemError(
            f"the {problem.semantics.value.upper()} program of '{name}' would have about {nonzeros:.2g} "
            f"nonzeros (about {nonzeros * 300 / 2**30:.0f} GiB; limit {MAX_NONZEROS:.2g}); restrict focal_sets, "
            "use fewer answers, use semantics = \"sldp\" (no pair rows), or make the problem symmetric "
            "(uniform prior, inputs = frame) for the size-class path")
