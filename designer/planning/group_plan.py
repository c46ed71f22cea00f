"""A plan of a survey split between several designs (``designer plan --mechanism NAME=FILE ...``,
``docs/theory.md`` section 10.2): the plan of the stacked design and each group's respondents."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..mechanism import Mechanism
from ..results import FitStatus, Result, TableData
from .plan import Plan, PlanRequest, make_plan
from .split import SplitDesign, split_accuracy

__all__ = ["SplitPlan", "plan_split"]


@dataclass(frozen=True)
class SplitPlan(Result):
    """The plan of a survey split between groups, each answering through its own mechanism.

    ``status`` is :attr:`FitStatus.OPTIMAL <designer.results.FitStatus.OPTIMAL>` when the split was searched (the
    split with the smallest variance, a convex minimisation) and :attr:`FitStatus.EXACT
    <designer.results.FitStatus.EXACT>` when it was given (every figure then follows from formulas).
    ``to_dict()`` is ``designer plan --mechanism ... --format json`` (the plan's keys, ``designs``, ``split``,
    ``n_total`` and ``unknown_share``), ``table()`` the groups (``group, mechanism, fraction, n``).

    Attributes
    ----------
    plan : Plan
        The plan of the stacked design (its ``n`` counts every respondent).
    design : SplitDesign
        The groups, their fractions and the unknown share if any.
    files : dict of str to str
        Each group's mechanism as named in the output (its file, or ``"mechanism"``).
    """

    plan: Plan
    design: SplitDesign
    files: dict[str, str] = field(default_factory=dict)
    status: FitStatus = FitStatus.EXACT
    warnings: tuple[str, ...] = ()

    title = "Plan of a split survey"

    def __post_init__(self) -> None:
        self._check_status()

    @property
    def n(self) -> int:
        """Respondents of the whole survey (each group gets ``ceil(f_g n)``: see :meth:`to_dict`)."""
        return int(self.to_dict()["n_total"])

    def to_dict(self) -> dict[str, Any]:
        """The plan as ``designer plan --mechanism ... --format json`` writes it."""
        out = self.plan.to_dict()
        out.update(self.design.to_dict(self.plan.n))
        return out

    def table(self) -> TableData:
        """``group, mechanism, fraction, n``: a row per group."""
        from .plan_text import split_table

        return split_table(self.to_dict(), self.files)

    def summary(self) -> str:
        """The table output: the respondents and the split in a sentence, the unknown share, the groups."""
        from .plan_text import split_lines

        return split_lines(self.to_dict(), self.files)


def plan_split(mechanisms: Mapping[str, Mechanism], request: PlanRequest, *, files: Mapping[str, str] | None = None,
               fractions: Mapping[str, float] | None = None, noncompliance: Any = None, unrelated: str | None = None,
               share: float | None = None, share_groups: Sequence[str] | None = None) -> SplitPlan:
    """Plan a survey split between ``mechanisms`` (:func:`~designer.planning.split.split_accuracy`, then
    :func:`~designer.planning.plan.make_plan` on the stacked design).

    Parameters
    ----------
    mechanisms : mapping of str to Mechanism
        Each group's ``(k, F_g)`` mechanism (Def 3.1), over the same inputs.
    request : PlanRequest
        A sample size (``width``) or a power (``detect``) plan, at ``request.prior``.
    files : mapping of str to str, optional
        The groups' names in the output (default ``"mechanism"``).
    fractions, noncompliance, unrelated, share, share_groups
        As :func:`~designer.planning.split.split_accuracy` (``fractions`` None: the best split is searched).

    Returns
    -------
    SplitPlan
    """
    accuracy, design = split_accuracy(mechanisms, fractions=fractions, prior=request.prior,
                                      noncompliance=noncompliance, unrelated=unrelated, share=share,
                                      share_groups=share_groups, semantics=request.semantics)
    names = dict(files or {name: "mechanism" for name in mechanisms})
    plan = make_plan(accuracy.mechanism, request, name=", ".join(f"{k}={v}" for k, v in names.items()),
                     accuracy=accuracy)
    return SplitPlan(plan=plan, design=design, files=names,
                     status=FitStatus.OPTIMAL if design.chosen else FitStatus.EXACT)
