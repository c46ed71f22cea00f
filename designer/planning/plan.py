"""One survey plan from a design problem or a mechanism: what to compute (a :class:`PlanRequest`) in, a typed
:class:`Plan` out (``docs/theory.md`` section 10). ``designer plan`` parses its flags into the request and prints
the plan; every number is computed here, each design solved once.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .._internal.numeric import two_sided_z
from ..mechanism import Mechanism
from ..results import FitStatus, Result, TableData
from ..vocabulary import Alternative, DesignBasis, NullVariance, PlanMode, Semantics
from .simulation_check import check_by_simulation
from .sizes import (
    Accuracy,
    DesignCache,
    accuracy_of,
    power_at,
    power_sample_size,
    price_of_privacy,
    sample_size,
    smallest_budget,
)
from .survey_plan import Allocation, Survey, allocate

__all__ = ["Plan", "PlanRequest", "PowerAt", "SurveyPlan", "WidthAt", "make_plan", "plan_survey", "power_curve"]

#: Budgets of the respondents-against-epsilon table when a report or a plot asks for it without a grid.
DEFAULT_GRID = tuple(0.25 + i * (4 - 0.25) / 15 for i in range(16))


@dataclass(frozen=True)
class PlanRequest:
    """What a plan is asked for (the flags of ``designer plan``; ``None``: not asked).

    Attributes
    ----------
    width : float or None
        Target half-width of every share's interval (sample size; with ``n`` and a problem, the smallest budget).
    level : float
        Confidence level of ``width`` and of ``check``.
    n : int or None
        Respondents: the smallest budget's ``n``, or where the half-width (and the power) is reported.
    detect, power, alpha, groups, share, null
        A power plan: the difference in the share of input ``share`` (default the first) to detect, the power
        wanted, the test level, one sample against ``null`` (default the prior) or two groups.
    alternative, null_variance, null_difference
        ``two-sided`` (both tails counted), ``greater`` or ``less``; for two groups, the null variance pooled or at
        the stated null shares (rr's), and the groups' difference under the null (default 0).
    prior : sequence of float or None
        The shares at which to plan (default the problem's prior, or uniform for a mechanism).
    semantics : Semantics
        For a mechanism (a problem states its own).
    grid : tuple of float or None
        Budgets of a respondents-against-epsilon table (problems only; needs ``width``).
    check, seed : int or None
        Simulate ``check`` surveys at the planned ``n``, seeded.
    method : {"mle", "posterior"}
        The estimator of the simulated surveys (:func:`~designer.planning.simulation_check.check_by_simulation`'s
        ``estimator``).
    curve, curve_detect : tuple of int, tuple of float
        Power mode: the power at each ``n`` of ``curve`` (per group with two) for ``detect`` and each difference of
        ``curve_detect`` (:attr:`Plan.power_curve`).

    Examples
    --------
    >>> from designer.planning import PlanRequest
    >>> request = PlanRequest(width=0.02, prior=(0.3, 0.7))
    >>> request.level, request.power, request.alpha  # the defaults of designer plan
    (0.95, 0.8, 0.05)
    """

    width: float | None = None
    level: float = 0.95
    n: int | None = None
    detect: float | None = None
    power: float = 0.8
    alpha: float = 0.05
    groups: int = 1
    share: str | None = None
    null: float | None = None
    alternative: Alternative = Alternative.TWO_SIDED
    null_variance: NullVariance = NullVariance.POOLED
    null_difference: float = 0.0
    prior: tuple[float, ...] | None = None
    semantics: Semantics = Semantics.SLDP
    grid: tuple[float, ...] | None = None
    check: int | None = None
    seed: int | None = None
    method: str = "mle"
    curve: tuple[int, ...] | None = None
    curve_detect: tuple[float, ...] = ()

    def mode(self, source: Any) -> PlanMode:
        """Power with ``detect``; the smallest budget with ``n`` and ``width`` for a problem; else sample size."""
        if self.detect is not None:
            return PlanMode.POWER
        if self.width is None:
            raise ValueError("a plan needs a width or a difference to detect")
        problem = not isinstance(source, Mechanism)
        return PlanMode.SMALLEST_BUDGET if problem and self.n is not None else PlanMode.SAMPLE_SIZE


@dataclass(frozen=True)
class WidthAt:
    """The half-width of every share's ``level`` interval with ``n`` respondents."""

    n: int
    width: float
    level: float


@dataclass(frozen=True)
class PowerAt:
    """The power of the plan's test with ``n`` respondents (per group with two)."""

    n: int
    power: float


@dataclass(frozen=True)
class Plan(Result):
    """A survey plan (``docs/theory.md`` section 10), a :class:`~designer.results.Result`.

    Its ``status`` is :attr:`FitStatus.EXACT <designer.results.FitStatus.EXACT>`: a plan is not fitted to data, its
    numbers are read off the variance formulas (closed forms, or the asymptotic variance) of a design certified
    in exact arithmetic; the smallest budget's bisection is exact to its stated tolerance (1e-3 in eps).
    ``to_dict()`` is ``designer plan --format json``, ``table()`` its CSV table and ``summary()`` its table output.

    Attributes
    ----------
    source : str
        What was planned (a file name).
    mode : PlanMode
    request : PlanRequest
    accuracy : Accuracy
        The planned design's (or mechanism's) variances at the planning prior.
    n : int
        Respondents: needed for the width or the power, or the given ``n`` of a smallest-budget plan.
    formula : str
        How the variance at ``n`` is computed, in words.
    epsilon : float or None
        The budget of the planned design (the smallest one in that mode); ``None`` for a mechanism.
    design : DesignResult or None
        The certified design planned (problems).
    basis : DesignBasis or None
        How the design was chosen.
    designs_solved : int or None
        Designs the smallest-budget search solved.
    achieved_width : float or None
        The half-width at ``n`` (sample-size plans).
    width_at_n : WidthAt or None
    power_at_n : PowerAt or None
    share : str or None
        The tested input (power plans); ``null`` its null share.
    by_epsilon : list of dict or None
        Rows of :func:`~designer.planning.sizes.price_of_privacy`.
    power_curve : list of dict or None
        Power mode with ``request.curve``: rows ``detect``, ``n``, ``power`` (:func:`power_curve`).
    check : dict or None
        :func:`~designer.planning.simulation_check.check_by_simulation`'s figures.
    notes : tuple of str
        The files written beside the plan (``"report written to plan.html"``), the last lines of :meth:`summary`.
    status : FitStatus
    warnings : tuple of str
        Where the plan's design is not the one its problem states (its ``design_basis`` in words).
    small_sample : str or None
        Why the size may be too small for its normal approximation: fewer than :data:`SMALL_EXPECTED` expected
        respondents in the least likely share (``small_sample_warning`` in JSON, a ``warning:`` line in the table).

    Examples
    --------
    >>> import designer
    >>> from designer import planning
    >>> warner = designer.DesignProblem(inputs=("yes", "no"), epsilon=1.0, objective="truthful")
    >>> plan = planning.make_plan(warner, planning.PlanRequest(width=0.02, prior=(0.3, 0.7)))
    >>> print(plan.summary().splitlines()[0].split(" (")[0])
    10859 respondents give every share a 0.95 interval of half-width at most 0.02
    >>> plan.formula
    "exact: Warner's Eq 1 (Ex 3.7)"
    """

    source: str
    mode: PlanMode
    request: PlanRequest
    accuracy: Accuracy
    n: int
    formula: str
    epsilon: float | None = None
    design: Any = None
    basis: DesignBasis | None = None
    designs_solved: int | None = None
    achieved_width: float | None = None
    width_at_n: WidthAt | None = None
    power_at_n: PowerAt | None = None
    share: str | None = None
    null: float | None = None
    by_epsilon: list[dict[str, Any]] | None = None
    check: dict[str, float] | None = None
    power_curve: list[dict[str, float]] | None = None
    notes: tuple[str, ...] = ()
    status: FitStatus = FitStatus.EXACT
    warnings: tuple[str, ...] = ()
    small_sample: str | None = None

    title = "Plan"

    def __post_init__(self) -> None:
        self._check_status()

    def table(self) -> TableData:
        """The CSV table of ``designer plan``: the respondents against the budget (with a grid), else the power
        curve, else the plan's scalar figures in one row."""
        from .plan_text import plan_csv

        return plan_csv(self.to_dict())

    def summary(self) -> str:
        """The table output of ``designer plan``: the answer in a sentence, the details, the tables, the notes."""
        from .plan_text import plan_lines

        return plan_lines(self.to_dict(), self.request.level, self.notes)

    def to_dict(self) -> dict[str, Any]:
        """The plan as ``designer plan --format json`` writes it."""
        r, acc = self.request, self.accuracy
        out: dict[str, Any] = {"source": self.source, "mode": self.mode.value}
        if self.designs_solved is not None:
            out["designs_solved"] = self.designs_solved
        out["epsilon"] = self.epsilon
        if self.basis is not None:
            out.update(design_basis=self.basis, design_basis_note=self.basis.note)
        out.update(prior=dict(zip(acc.mechanism.inputs, (float(v) for v in acc.prior))),
                   semantics=acc.semantics.value, variance=acc.variance, variance_kind=acc.kind)
        if self.mode is PlanMode.POWER:
            assert self.power_at_n is not None
            out.update(n=self.n, power=r.power, power_at_n={"n": self.power_at_n.n, "power": self.power_at_n.power},
                       detect=r.detect, alpha=r.alpha, groups=r.groups, share=self.share, null=self.null,
                       alternative=r.alternative.value, formula=self.formula)
            if r.groups == 2:
                out.update(null_variance=r.null_variance.value, null_difference=r.null_difference)
            if r.width is not None:
                out.update(width=r.width, level=r.level)
        else:
            out.update(n=self.n, formula=self.formula, width=r.width, level=r.level)
            if self.achieved_width is not None:
                out["achieved_width"] = self.achieved_width
        if self.width_at_n is not None:
            out["width_at_n"] = {"n": self.width_at_n.n, "width": self.width_at_n.width,
                                 "level": self.width_at_n.level}
        if self.by_epsilon is not None:
            out["by_epsilon"] = self.by_epsilon
        if self.check is not None:
            out["check"] = {**self.check, "method": r.method}
        if self.power_curve is not None:
            out["power_curve"] = self.power_curve
        if self.small_sample is not None:
            out["small_sample_warning"] = self.small_sample
        return out


def power_curve(accuracy: Accuracy, ns: Sequence[int], effects: Sequence[float], alpha: float = 0.05,
                **test: Any) -> list[dict[str, float]]:
    """The power of the plan's test (:func:`~designer.planning.sizes.power_at`) at every ``n`` of ``ns`` (per group
    with two) for every difference of ``effects``: rows ``{"detect", "n", "power"}``, effects outer, ``n`` inner.
    ``test``: ``share``, ``null``, ``groups``, ``alternative``, ``null_variance``, ``null_difference``."""
    return [{"detect": float(d), "n": int(n), "power": power_at(accuracy, int(n), d, alpha, **test)}
            for d in effects for n in ns]


def _width_at(acc: Accuracy, n: int, level: float) -> WidthAt:
    return WidthAt(n, two_sided_z(level) * math.sqrt(acc.variance_at(n)), level)


#: The expected respondents of the least likely share below which a planned size is flagged: the size rests on the
#: normal approximation of the estimate, which needs about this many (the rule of thumb of binomial intervals).
SMALL_EXPECTED = 10


def _small_sample(acc: Accuracy, n: int) -> str | None:
    """A warning when ``n`` respondents give the least likely share (above 0) fewer than :data:`SMALL_EXPECTED`."""
    shares = [(float(p), x) for p, x in zip(acc.prior, acc.mechanism.inputs) if float(p) > 0]
    if not shares:
        return None
    least, name = min(shares)
    if n * least >= SMALL_EXPECTED:
        return None
    return (f"{n} respondents give the least likely share ({name!r}, {least:g}) {n * least:.3g} expected "
            f"respondents, fewer than the {SMALL_EXPECTED} the normal approximation behind this size needs: check "
            "it by simulation (--check 1000) or plan for more")


def make_plan(source: Any, request: PlanRequest, *, name: str = "", table: bool = False,
              accuracy: Accuracy | None = None) -> Plan:
    """Plan a survey of ``source`` (a :class:`~designer.optimal.problem.DesignProblem` or a
    :class:`~designer.mechanism.Mechanism`).

    Parameters
    ----------
    source : DesignProblem or Mechanism
        A problem is designed as its file states it (:class:`~designer.planning.sizes.DesignCache`); a mechanism
        is planned as it is.
    request : PlanRequest
    name : str
        The source's name in the plan (a file name).
    table : bool
        Also tabulate the respondents against the budget (``request.grid``, else :data:`DEFAULT_GRID`); a problem
        with a width only.
    accuracy : Accuracy, optional
        With a mechanism: its accuracy as computed elsewhere (a survey split between several designs,
        :func:`designer.planning.split.split_accuracy`; ``source`` is then its stacked mechanism).

    Returns
    -------
    Plan

    Examples
    --------
    >>> import designer
    >>> from designer import planning
    >>> warner = designer.DesignProblem(inputs=("yes", "no"), epsilon=1.0, objective="truthful")
    >>> plan = planning.make_plan(warner, planning.PlanRequest(width=0.02, prior=(0.3, 0.7)))
    >>> plan.n, plan.mode
    (10859, <PlanMode.SAMPLE_SIZE: 'sample_size'>)
    """
    mode = request.mode(source)
    prior = None if request.prior is None else list(request.prior)
    design = basis = eps = solved = None
    if isinstance(source, Mechanism):
        acc = accuracy if accuracy is not None else accuracy_of(source, request.semantics, prior)
    elif mode is PlanMode.SMALLEST_BUDGET:
        assert request.n is not None and request.width is not None
        budget = smallest_budget(source, request.n, request.width, request.level, prior=prior)
        design, acc, basis, eps, solved = budget.design, budget.accuracy, budget.basis, budget.epsilon, \
            budget.designs_solved
    else:
        designs = DesignCache(source, prior)
        eps = source.epsilon
        design, acc, basis = designs(eps), designs.accuracy(eps), designs.basis(eps)
    share = acc.mechanism.input_index(request.share) if request.share else 0
    fields: dict[str, Any] = {}
    if mode is PlanMode.POWER:
        assert request.detect is not None
        test: dict[str, Any] = {"alternative": request.alternative, "null_variance": request.null_variance,
                                "null_difference": request.null_difference}
        n = power_sample_size(acc, request.detect, request.power, request.alpha, share=share, null=request.null,
                              groups=request.groups, **test)
        at = request.n if request.n is not None else n
        fields.update(power_at_n=PowerAt(at, power_at(acc, at, request.detect, request.alpha, share=share,
                                                      null=request.null, groups=request.groups, **test)),
                      share=acc.mechanism.inputs[share],
                      null=request.null if request.null is not None else float(acc.prior[share]))
        formula = "asymptotic MLE variance V/n (Wald test)"
        if request.curve:
            fields["power_curve"] = power_curve(acc, request.curve, (request.detect, *request.curve_detect),
                                                request.alpha, share=share, null=request.null,
                                                groups=request.groups, **test)
        if request.width is not None:
            fields["width_at_n"] = _width_at(acc, at, request.level)
    elif mode is PlanMode.SMALLEST_BUDGET:
        assert request.n is not None
        n, formula = request.n, acc.describe()
        fields["width_at_n"] = _width_at(acc, n, request.level)
    else:
        assert request.width is not None
        size = sample_size(acc, request.width, request.level)
        n, formula = size.n, acc.describe()
        fields["achieved_width"] = size.achieved_width
        if request.n is not None:
            fields["width_at_n"] = _width_at(acc, request.n, request.level)
    if not isinstance(source, Mechanism) and request.width is not None and (request.grid is not None or table):
        fields["by_epsilon"] = price_of_privacy(source, list(request.grid or DEFAULT_GRID), request.width,
                                                request.level, prior=[float(v) for v in acc.prior])
    if request.check is not None:
        fields["check"] = check_by_simulation(acc, n, request.check, request.level, seed=request.seed,
                                              detect=request.detect, alpha=request.alpha, share=share,
                                              estimator=request.method)
    warned = (basis.words,) if basis is not None and basis is not DesignBasis.FILE else ()
    small = _small_sample(acc, n) if mode is not PlanMode.SMALLEST_BUDGET else None
    return Plan(source=name, mode=mode, request=request, accuracy=acc, n=n, formula=formula, epsilon=eps,
                design=design, basis=basis, designs_solved=solved, warnings=warned, small_sample=small, **fields)


@dataclass(frozen=True)
class SurveyPlan(Result):
    """A questionnaire's plan: the best split of its budget and, with a width, the respondents each question
    needs (``docs/theory.md`` section 10), a :class:`~designer.results.Result`.

    Its ``status`` is :attr:`FitStatus.OPTIMAL <designer.results.FitStatus.OPTIMAL>`: the split minimises the
    weighted sum of the questions' variances (a global search on curves of certified designs, refined on
    designs to the stated tolerance), each question's design certified. ``to_dict()`` is ``designer plan
    --format json``, ``table()`` its CSV table (a row per question) and ``summary()`` its table output.

    Attributes
    ----------
    source : str
    survey : Survey
    allocation : Allocation
    width, level : float or None
        The half-width asked for and its level (``None`` without a width).
    sizes : tuple of (int or None) or None
        Respondents each question needs for ``width`` at its budget (``None`` for a question without an
        expanded design).

    Examples
    --------
    Two yes/no questions sharing eps = 2:

    >>> from designer import planning
    >>> survey = planning.parse_survey({"name": "two", "epsilon": 2.0, "question": [
    ...     {"name": "drugs", "inputs": ["yes", "no"], "prior": [0.1, 0.9]},
    ...     {"name": "tax", "inputs": ["yes", "no"], "prior": [0.3, 0.7]}]})
    >>> plan = planning.plan_survey(survey, width=0.05)
    >>> str(plan.status), plan.width
    ('optimal', 0.05)
    """

    source: str
    survey: Survey
    allocation: Allocation
    width: float | None = None
    level: float | None = None
    sizes: tuple[int | None, ...] | None = None
    notes: tuple[str, ...] = ()
    status: FitStatus = FitStatus.OPTIMAL
    warnings: tuple[str, ...] = ()

    title = "Questionnaire plan"

    def __post_init__(self) -> None:
        self._check_status()

    def table(self) -> TableData:
        """The CSV table: a row per question (its budget, variance, the equal split's, and ``n`` with a width)."""
        from .plan_text import plan_csv

        return plan_csv(self.to_dict())

    def summary(self) -> str:
        """The table output of ``designer plan`` for a questionnaire."""
        from .plan_text import plan_lines

        return plan_lines(self.to_dict(), self.level, self.notes)

    @property
    def mode(self) -> PlanMode:
        return PlanMode.ALLOCATION

    @property
    def n(self) -> int | None:
        """Respondents for every question's width (the largest need), ``None`` if one is not known."""
        if self.sizes is None or any(n is None for n in self.sizes):
            return None
        return max(n for n in self.sizes if n is not None)

    def to_dict(self) -> dict[str, Any]:
        """The plan as ``designer plan --format json`` writes it."""
        out: dict[str, Any] = {"source": self.source, "mode": self.mode.value, **self.allocation.to_dict()}
        if self.sizes is not None:
            for row, n in zip(out["allocation"], self.sizes):
                row["n"] = n
        if self.width is not None:
            known = [n for n in (self.sizes or ()) if n is not None]
            out.update(width=self.width, level=self.level,
                       n=max(known) if self.sizes is not None and len(known) == len(self.sizes) else None)
        return out


def plan_survey(survey: Survey, *, name: str = "", width: float | None = None, level: float = 0.95) -> SurveyPlan:
    """The best split of ``survey``'s budget (:func:`~designer.planning.survey_plan.allocate`) and, with ``width``,
    the respondents each question needs at its share of the budget.

    Examples
    --------
    >>> from designer import planning
    >>> survey = planning.parse_survey({"name": "two", "epsilon": 2.0, "question": [
    ...     {"name": "drugs", "inputs": ["yes", "no"], "prior": [0.1, 0.9]},
    ...     {"name": "tax", "inputs": ["yes", "no"], "prior": [0.3, 0.7]}]})
    >>> plan = planning.plan_survey(survey, width=0.05)
    >>> plan.allocation.epsilons, plan.sizes  # the respondents each question needs for +-0.05
    ((1.0, 1.0), (1553, 1738))
    """
    allocation = allocate(survey)
    sizes = None
    if width is not None:
        sizes = tuple(sample_size(acc, width, level).n if acc is not None else None for acc in allocation.accuracies)
    return SurveyPlan(source=name, survey=survey, allocation=allocation, width=width,
                      level=level if width is not None else None, sizes=sizes, warnings=allocation.warnings)
