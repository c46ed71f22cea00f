"""The front door of ``designer plan``: :func:`plan` reads a problem, a questionnaire or a mechanism (a file or an
object), decides which plan its keywords ask for, and returns the plan as a :class:`~designer.results.Result`."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .._internal.keywords import check_output, read_budgets, read_named, read_names, read_prior, read_values, say, shown
from ..exceptions import InvalidArgumentError, InvalidArgumentTypeError
from ..mechanism import Mechanism
from ..planning.plan import Plan, PlanRequest, SurveyPlan, make_plan, plan_survey
from ..planning.plan_request import (
    DEFAULTS,
    GROUP_ONLY,
    NOT_FOR_GROUPS,
    check_method,
    check_values,
    curve_ns,
    plan_mode,
    refuse_unused,
    split_fractions,
)
from ..planning.survey_plan import Survey
from ..vocabulary import Alternative, NullVariance, PlanSource, Semantics

if TYPE_CHECKING:  # pragma: no cover
    from ..planning.group_plan import SplitPlan

__all__ = ["plan"]

PathLike = str | os.PathLike[str]
#: The groups of a plan with several designs as an error writes them (the command line's, then Python's).
_GROUPS = ("NAME=FILE", "{NAME: FILE}")


def plan(source: Any = None, *, prior: str | Mapping[str, float] | Sequence[float] | None = None,
         epsilon: float | None = None, dont_know: float | None = None, width: float | None = None,
         level: float | None = None, n: int | None = None, detect: float | None = None, power: float | None = None,
         alpha: float | None = None, alternative: str | None = None, null_variance: str | None = None,
         null_difference: float | None = None, groups: int | None = None, share: str | None = None,
         null: float | None = None, semantics: str | None = None, grid: str | Sequence[float] | None = None,
         check: int | None = None, seed: int | None = None, method: str | None = None,
         curve: str | Sequence[int] | None = None,
         curve_detect: str | Sequence[float] | None = None, report: PathLike | None = None,
         plot: PathLike | None = None, curve_plot: PathLike | None = None, force: bool = False,
         mechanism: Mapping[str, Any] | Sequence[str] | None = None, split: str | Mapping[str, float] | None = None,
         noncompliance: str | None = None, unrelated: str | None = None, unknown_share: float | None = None,
         share_groups: str | Sequence[str] | None = None) -> Plan | SurveyPlan | SplitPlan:
    """Plan a survey: respondents for a half-width, the smallest budget, power, or a questionnaire's budget split
    (``designer plan``; ``docs/theory.md`` section 10).

    Which plan is made follows from the keywords, decided once (:func:`~designer.planning.plan_request.plan_mode`):
    a questionnaire's best split of its budget (Lemmas 3.3, 3.15); ``detect``: the respondents (per group) for a
    Wald test with ``power``; ``n`` and ``width`` with a problem: the smallest budget whose certified design meets
    ``width`` with ``n`` respondents; ``width``: the smallest ``n`` with every share's ``level`` interval of
    half-width at most ``width`` (``n`` with a mechanism: also the half-width at ``n``). A keyword that would not
    change the plan is refused with the reason. Keywords left ``None`` take the command line's defaults.

    Parameters
    ----------
    source : str, os.PathLike, DesignProblem, Survey, Mechanism or DesignResult, optional
        A problem or questionnaire file (TOML: ``[[question]]`` tables make a questionnaire) or a mechanism file
        (CSV/JSON), or the object itself; a :class:`~designer.optimal.result.DesignResult` (or a read mechanism
        file) is planned as its mechanism. Not with ``mechanism``.
    prior : str, mapping or sequence of float, optional
        The true shares at which to plan, ``(k,)``: ``"yes=0.2,no=0.8"``, ``"1/5,4/5"``, ``{"yes": 0.2}`` (the
        other inputs keep the problem's proportions) or numbers in input order. Default: the problem's prior
        (uniform for a mechanism).
    epsilon, dont_know : float, optional
        Override a problem's budget (nats) or its exact don't-know mass.
    width : float, optional
        Target half-width of every share's confidence interval, in (0, 0.5).
    level : float, optional
        Confidence level of ``width`` and ``check`` (default 0.95).
    n : int, optional
        Respondents: with a problem and ``width``, find the smallest budget; with a mechanism, the half-width at
        ``n``; with ``detect``, the power at ``n``.
    detect, power, alpha : float, optional
        Power mode: the difference in a share to detect, the power wanted (0.8), the test level (0.05).
    alternative : {"two-sided", "greater", "less"}, optional
        Power mode: the alternative of the test (default two-sided).
    null_variance : {"pooled", "null"}, optional
        Two groups: the null variance pooled (default) or at the null shares.
    null_difference : float, optional
        Two groups: the shares' difference under the null, in (-1, 1) (default 0).
    groups : {1, 2}, optional
        One sample against ``null`` (default) or two groups.
    share : str, optional
        Power mode: the input whose share is tested (default the first).
    null : float, optional
        Power mode, one sample: the null value of that share (default its prior).
    semantics : {"sldp", "wldp"}, optional
        For a mechanism (a problem states its own; default sldp).
    grid : str or sequence of float, optional
        Budgets (nats) for a respondents-against-eps table, ``"0.5:3:6"`` or a list (problems, with ``width``).
    check, seed : int, optional
        Simulate ``check`` surveys at the planned ``n``, seeded by ``seed``.
    method : {"mle", "newton", "em", "convex", "posterior"}, optional
        With ``check``: the estimator the simulated surveys are analysed with, as ``designer estimate --method``
        will analyse the survey: the maximum-likelihood estimate and its Wald interval (``"mle"``, the default;
        ``"newton"``, ``"em"`` and ``"convex"`` reach the same maximum), or the posterior mean and its credible
        interval (``"posterior"``; docs/theory.md section 8.5).
    curve : str or sequence of int, optional
        Power mode: the power at these respondent numbers (``"100:2000:20"`` or a list).
    curve_detect : str or sequence of float, optional
        With ``curve``: more differences to detect (``"0.05,0.15"``), a line of the curve each.
    report, plot, curve_plot : str or os.PathLike, optional
        Write an HTML report, a PNG of respondents against eps, a PNG of the power curve (atomically; an
        existing file only with ``force``). The plan's ``notes`` say where.
    force : bool
        Let ``report``, ``plot`` or ``curve_plot`` replace a file.
    mechanism : mapping of str to (path, Mechanism or DesignResult), or sequence of str, optional
        A survey split between groups, each answering through its mechanism (instead of ``source``); a sequence
        holds ``"NAME=FILE"`` items as the repeated flag does.
    split : str or mapping of str to float, optional
        With ``mechanism``: each group's share of the respondents (``"a=1,b=2"``); default the best split.
    noncompliance, unrelated : str, optional
        With ``mechanism``: ``"carriers:no"`` / ``"everyone:no"``, or the unrelated question's answer: an unknown
        share estimated with the prevalence (docs/theory.md section 10.2).
    unknown_share : float, optional
        With ``noncompliance`` or ``unrelated``: the value of the unknown share the plan assumes, in (0, 1).
    share_groups : str or sequence of str, optional
        With ``noncompliance`` or ``unrelated``: the groups the unknown share applies to (``"1,2"``; default all).

    Returns
    -------
    Plan, SurveyPlan or SplitPlan
        A :class:`~designer.results.Result`: ``to_dict()`` is ``designer plan --format json``, ``summary()`` its
        table output.

    Raises
    ------
    DesignerError
        A bad keyword or file, one line naming it and the fix (``InvalidArgumentError``, ``PlanningError``, ...).

    Examples
    --------
    Warner's design at eps = 1 (a problem given as an object; a problem file's path or a bundled problem's name
    works the same): the respondents for every share's 95% interval to be within +-0.02 when 30% hold the trait
    (Eq 1), and the smallest budget that 2000 respondents allow for +-0.03:

    >>> import designer
    >>> warner = designer.DesignProblem(inputs=("yes", "no"), epsilon=1.0, objective="truthful")
    >>> designer.plan(warner, prior="yes=0.3,no=0.7", width=0.02).n
    10859
    >>> round(designer.plan(warner, prior="yes=0.3,no=0.7", n=2000, width=0.03).epsilon, 3)
    1.739
    >>> designer.plan("warner", prior="yes=0.3,no=0.7", width=0.02).n  # the same problem, bundled with designer
    10859
    """
    keywords = {"prior": prior, "epsilon": epsilon, "dont_know": dont_know, "width": width, "level": level, "n": n,
                "detect": detect, "power": power, "alpha": alpha, "alternative": alternative,
                "null_variance": null_variance, "null_difference": null_difference, "groups": groups, "share": share,
                "null": null, "semantics": semantics, "grid": grid, "check": check, "seed": seed, "method": method,
                "curve": curve,
                "curve_detect": curve_detect, "report": report, "plot": plot, "curve_plot": curve_plot,
                "force": force or None, "split": split, "noncompliance": noncompliance, "unrelated": unrelated,
                "unknown_share": unknown_share, "share_groups": share_groups}
    given = {k: v for k, v in keywords.items() if v is not None}
    if force not in (True, False):
        raise InvalidArgumentTypeError(f"{shown('force')} must be True or False, got {force!r}")
    kw = check_values(given)
    if mechanism is not None:
        return _plan_groups(mechanism, source, kw)
    if source is None:
        raise InvalidArgumentError(say("give a {SOURCE} (problem, questionnaire or mechanism file) or {groups}",
                                       groups=shown("mechanism", _GROUPS)))
    alone = [f for f in GROUP_ONLY if f in kw]
    if alone:
        raise InvalidArgumentError(f"{shown(alone[0])} belongs to a plan with several mechanisms "
                                   f"({shown('mechanism', ('NAME=FILE, repeated', _GROUPS[1]))})")
    kind, obj, name = _source(source, kw.get("epsilon"), kw.get("dont_know"))
    mode = plan_mode(kind, obj, width=kw.get("width"), n=kw.get("n"), detect=kw.get("detect"))
    refuse_unused(set(kw), kind, mode, name)
    files = [name] if isinstance(source, (str, os.PathLike)) else []
    for path in (report, plot, curve_plot):
        if path:
            check_output(path, files, force)
    full = {**DEFAULTS, **kw}
    result: Plan | SurveyPlan
    if kind is PlanSource.SURVEY:
        result = plan_survey(obj, name=name, width=kw.get("width"), level=full["level"])
        design, allocation = None, result.allocation
    else:
        default_prior = obj.prior if kind is PlanSource.PROBLEM else None
        wanted = "prior" in kw or kind is PlanSource.PROBLEM
        shares = read_prior(kw.get("prior"), obj.inputs, shown("prior"), default_prior) if wanted else None
        result = make_plan(obj, _request(full, shares), name=name, table=bool(plot or report))
        design, allocation = result.design, None
    if report or plot or curve_plot:
        from dataclasses import replace

        from ..planning.plan_text import write_outputs

        notes = write_outputs(result.to_dict(), width=kw.get("width"), level=full["level"], design=design,
                              allocation=allocation, report=report, plot=plot, curve_plot=curve_plot, force=force)
        result = replace(result, notes=notes)
    return result


def _request(kw: dict[str, Any], prior: Sequence[float] | None) -> PlanRequest:
    """The :class:`~designer.planning.plan.PlanRequest` of the checked keywords (defaults filled)."""
    return PlanRequest(width=kw.get("width"), level=kw["level"], n=kw.get("n"), detect=kw.get("detect"),
                       power=kw["power"], alpha=kw["alpha"], groups=kw["groups"], share=kw.get("share"),
                       null=kw.get("null"), alternative=Alternative.parse(kw["alternative"], shown("alternative")),
                       null_variance=NullVariance.parse(kw["null_variance"], shown("null_variance")),
                       null_difference=kw["null_difference"], prior=None if prior is None else tuple(prior),
                       semantics=Semantics.parse(kw.get("semantics") or "sldp", shown("semantics")),
                       grid=None if kw.get("grid") is None else tuple(read_budgets(kw["grid"], shown("grid"))),
                       check=kw.get("check"), seed=kw.get("seed"), method=check_method(kw.get("method")),
                       curve=None if kw.get("curve") is None else tuple(curve_ns(kw["curve"])),
                       curve_detect=tuple(read_values(kw["curve_detect"], shown("curve_detect"), low=0.0, high=1.0))
                       if kw.get("curve_detect") else ())


def _as_mechanism(obj: Any, what: str) -> Mechanism | None:
    """A Mechanism, or the mechanism of a DesignResult or a read mechanism file; None for anything else."""
    if isinstance(obj, Mechanism):
        return obj
    inner = getattr(obj, "mechanism", None)
    if isinstance(inner, Mechanism):
        return inner
    if hasattr(obj, "mechanism") and inner is None:
        raise InvalidArgumentError(f"{what}: the design result holds no mechanism (it was not released)")
    return None


def _source(source: Any, epsilon: float | None, dont_know: float | None) -> tuple[PlanSource, Any, str]:
    """``(SURVEY, Survey)``, ``(PROBLEM, DesignProblem)`` (``epsilon`` / ``dont_know`` applied) or ``(MECHANISM,
    Mechanism)``, and the source's name in the plan."""
    from ..optimal.problem import DesignProblem

    if isinstance(source, (str, os.PathLike)):
        from .._internal.bundled import resolve

        path = os.fspath(resolve(source, ("problem", "survey", "mechanism")))  # or designer's own by name
        # the plan names designer's own file by its bare name, never by the folder designer was installed in
        shown = os.fspath(source) if os.path.isabs(path) and path != os.fspath(source) else path
        if path.lower().endswith(".toml"):
            from ..optimal.problem_toml import parse_problem, read_toml
            from ..planning.survey_plan import is_survey, parse_survey

            data = read_toml(path)
            if is_survey(data):
                return PlanSource.SURVEY, parse_survey(data, source=path), shown
            return PlanSource.PROBLEM, _override(parse_problem(data, source=path), epsilon, dont_know), shown
        from ..release.files import open_mechanism_file

        return PlanSource.MECHANISM, open_mechanism_file(path).mechanism, shown
    if isinstance(source, Survey):
        return PlanSource.SURVEY, source, source.name or "questionnaire"
    if isinstance(source, DesignProblem):
        return PlanSource.PROBLEM, _override(source, epsilon, dont_know), source.name or "problem"
    mech = _as_mechanism(source, "source")
    if mech is None:
        raise InvalidArgumentTypeError("source must be a problem, questionnaire or mechanism file (a path), a "
                                       f"DesignProblem, a Survey, a Mechanism or a DesignResult, got "
                                       f"{type(source).__name__}")
    return PlanSource.MECHANISM, mech, "mechanism"


def _override(problem: Any, epsilon: float | None, dont_know: float | None) -> Any:
    changes = {k: v for k, v in (("epsilon", epsilon), ("dont_know", dont_know)) if v is not None}
    return problem.replace(**changes) if changes else problem


def _plan_groups(mechanism: Mapping[str, Any] | Sequence[Any], source: Any, kw: dict[str, Any]) -> SplitPlan:
    """A survey split between the groups of ``mechanism`` (``designer plan --mechanism NAME=FILE ...``)."""
    from ..planning.group_plan import plan_split
    from ..release.files import open_mechanism_file

    if source is not None:
        raise InvalidArgumentError(say("give a {SOURCE} file or {groups} (several designs), not both",
                                       groups=shown("mechanism", _GROUPS)))
    if isinstance(mechanism, (list, tuple)):
        mechanism = read_named(mechanism, shown("mechanism"), "a plan with several designs names each group: "
                               "NAME=FILE, or give a mapping of names to files or mechanisms")
    given = [f for f in NOT_FOR_GROUPS if f in kw]
    if given:
        raise InvalidArgumentError(f"{shown(given[0])} has no effect on a plan with several mechanisms; drop it")
    if not isinstance(mechanism, Mapping) or not mechanism:
        raise InvalidArgumentTypeError(f"{shown('mechanism')}: give each group's mechanism as a mapping NAME -> file "
                                       "or Mechanism")
    if kw.get("width") is None and kw.get("detect") is None:
        raise InvalidArgumentError(say("say what to plan: {width=W} (respondents for a half-width) or {detect=D} "
                                       "(power)"))
    if ("noncompliance" in kw or "unrelated" in kw) and "unknown_share" not in kw:
        raise InvalidArgumentError(say("{unknown_share=S}: a design with an unknown share is planned at an assumed "
                                       "value of it (the prevalence's variance depends on it)"))
    if "" in mechanism:
        raise InvalidArgumentError(f"{shown('mechanism')}: a plan with several designs names each group: NAME=FILE")
    mechanisms: dict[str, Mechanism] = {}
    files: dict[str, str] = {}
    for name, item in mechanism.items():
        if isinstance(item, (str, os.PathLike)):
            mechanisms[str(name)], files[str(name)] = open_mechanism_file(os.fspath(item)).mechanism, os.fspath(item)
            continue
        mech = _as_mechanism(item, shown("mechanism", name))
        if mech is None:
            raise InvalidArgumentTypeError(f"{shown('mechanism', name)}: give a file or a Mechanism, got "
                                           f"{type(item).__name__}")
        mechanisms[str(name)], files[str(name)] = mech, "mechanism"
    inputs = next(iter(mechanisms.values())).inputs
    full = {**DEFAULTS, **kw}
    shares = read_prior(kw.get("prior"), inputs, shown("prior"))
    groups = kw.get("share_groups")
    if isinstance(groups, str):
        try:
            groups = read_names(groups)
        except ValueError:
            raise InvalidArgumentError(f"{shown('share_groups')}: expected comma-separated group names, got "
                                       f"{groups!r}") from None
    return plan_split(mechanisms, _request(full, shares), files=files,
                      fractions=split_fractions(kw.get("split"), list(mechanisms)),
                      noncompliance=kw.get("noncompliance"), unrelated=kw.get("unrelated"),
                      share=kw.get("unknown_share"), share_groups=groups)
