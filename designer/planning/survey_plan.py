"""A questionnaire under one privacy budget: split it over the questions, or ask one joint question.

Answers to several questions compose: the losses add up (Lemma 3.3 for SLDP, Lemma 3.15 for WLDP), so a
survey with total budget ``eps`` may give question ``i`` the budget ``eps_i`` with ``sum eps_i = eps``.
:func:`allocate` chooses the split that minimises ``sum w_i V_i(eps_i)``, ``V_i`` the variance designer
reports for question ``i``'s certified design (mean over its inputs, per respondent, at its prior), and sets
it beside the equal split and beside one joint question over the product of the inputs designed at the whole
budget (whose marginal shares can be estimated more accurately than any split allows). The method is in
``docs/theory.md`` section 10.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..exceptions import InfeasibleDesignError, InvalidProblemError
from ..optimal.problem import DesignProblem
from ..optimal.problem_toml import parse_problem, read_toml
from ..results import FitStatus, Result, TableData
from ..vocabulary import DesignBasis, Objective, Semantics
from .sizes import DesignCache, PlanningError

__all__ = ["JOINT_MAX_INPUTS", "Allocation", "Survey", "allocate", "is_survey", "joint_variance", "load_survey",
           "parse_survey"]

#: Largest product of the questions' input counts for which the joint question is designed.
JOINT_MAX_INPUTS = 16
#: Grid points per question on which the variance curves are tabulated before the global search.
GRID_POINTS = 33
#: Steps of the global search over splits (the budget in units of total / STEPS).
STEPS = 400
#: The split is refined on certified designs until moving this much budget between questions cannot help.
ALLOCATION_TOL = 5e-4

_SURVEY_KEYS = ("name", "epsilon", "semantics", "question")


@dataclass(frozen=True)
class Survey:
    """Questions (design problems without their own budget), their weights, and the total budget.

    Examples
    --------
    Two yes/no questions sharing eps = 2:

    >>> from designer import planning
    >>> survey = planning.parse_survey({"name": "two", "epsilon": 2.0, "question": [
    ...     {"name": "drugs", "inputs": ["yes", "no"], "prior": [0.1, 0.9]},
    ...     {"name": "tax", "inputs": ["yes", "no"], "prior": [0.3, 0.7]}]})
    >>> survey.questions[0].inputs, str(survey.semantics)
    (('yes', 'no'), 'sldp')
    """

    name: str
    epsilon: float
    semantics: Semantics
    questions: tuple[DesignProblem, ...]
    weights: tuple[float, ...]


def is_survey(data: dict[str, Any]) -> bool:
    """A parsed TOML file is a survey when it has ``[[question]]`` tables."""
    return "question" in data


def parse_survey(data: dict[str, Any], source: str = "") -> Survey:
    """Build a :class:`Survey` from parsed TOML, with errors naming ``source`` and the key.

    Examples
    --------
    >>> from designer import planning
    >>> survey = planning.parse_survey({"name": "two", "epsilon": 2.0, "question": [
    ...     {"name": "drugs", "inputs": ["yes", "no"], "prior": [0.1, 0.9]},
    ...     {"name": "tax", "inputs": ["yes", "no"], "prior": [0.3, 0.7]}]})
    >>> survey.epsilon, [q.name for q in survey.questions], survey.weights
    (2.0, ['drugs', 'tax'], (1.0, 1.0))
    """
    where = f"{source}: " if source else ""
    unknown = sorted(set(data) - set(_SURVEY_KEYS))
    if unknown:
        raise InvalidProblemError(f"{where}unknown key(s) {unknown}; a survey file has {list(_SURVEY_KEYS)} "
                                  "(the problem keys go inside each [[question]])")
    if "epsilon" not in data:
        raise InvalidProblemError(f"{where}missing key 'epsilon' (the total budget of the questionnaire)")
    raw = data["question"]
    if not isinstance(raw, list) or not raw or not all(isinstance(q, dict) for q in raw):
        raise InvalidProblemError(f"{where}key 'question': expected one or more [[question]] tables")
    semantics = data.get("semantics", "sldp")
    questions, weights = [], []
    for i, table in enumerate(raw, start=1):
        table = dict(table)
        label = f"{where}question {i}"
        for key in ("epsilon", "semantics"):
            if key in table:
                raise InvalidProblemError(f"{label}: key {key!r} belongs to the survey, not to a question")
        weight = table.pop("weight", 1.0)
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not 0 < weight < math.inf:
            raise InvalidProblemError(f"{label}: key 'weight' must be a positive number, got {weight!r}")
        table.setdefault("name", f"question{i}")
        questions.append(parse_problem({**table, "epsilon": data["epsilon"], "semantics": semantics}, source=label))
        weights.append(float(weight))
    names = [q.name for q in questions]
    if len(set(names)) != len(names):
        raise InvalidProblemError(f"{where}two questions share a name: {names}")
    return Survey(str(data.get("name", Path(source).stem if source else "")), float(questions[0].epsilon),
                  questions[0].semantics, tuple(questions), tuple(weights))


def load_survey(path: str) -> Survey:
    """Read a survey (questionnaire) TOML file, or one that comes with designer by its bare name
    (``"two-questions"``).

    Examples
    --------
    >>> import os, tempfile
    >>> from designer import planning
    >>> folder = tempfile.TemporaryDirectory()
    >>> path = os.path.join(folder.name, "survey.toml")
    >>> with open(path, "w") as file:
    ...     _ = file.write('''name = "two"
    ... epsilon = 2.0
    ... [[question]]
    ... name = "drugs"
    ... inputs = ["yes", "no"]
    ... [[question]]
    ... name = "tax"
    ... inputs = ["yes", "no"]
    ... ''')
    >>> [q.name for q in planning.load_survey(path).questions]
    ['drugs', 'tax']
    >>> folder.cleanup()
    >>> [q.name for q in planning.load_survey("two-questions").questions]  # the one that comes with designer
    ['drugs', 'income']
    """
    from .._internal.bundled import resolve

    path = os.fspath(resolve(path, "survey", error=InvalidProblemError))
    return parse_survey(read_toml(path), source=str(path))


class _Curve:
    """One question's reported variance as a function of its budget (``inf`` where it has no design that
    identifies its shares); the design at each budget is chosen as :class:`DesignCache` says."""

    def __init__(self, problem: DesignProblem) -> None:
        self.problem = problem
        self.designs = DesignCache(problem)
        self.values: dict[float, float] = {}

    def __call__(self, eps: float) -> float:
        key = round(float(eps), 9)
        if key not in self.values:
            try:
                self.values[key] = self._variance(key) if key > 0 else math.inf
            except InfeasibleDesignError:
                self.values[key] = math.inf
        return self.values[key]

    def _variance(self, eps: float) -> float:
        """Mean over the question's inputs of its shares' variances per respondent, at its prior."""
        result = self.designs(eps)
        if result.mechanism is not None:
            return float(np.mean(self.designs.accuracy(eps).per_share))
        if result.variance is None:  # a split cannot be planned on a figure that is absent
            raise PlanningError(f"eps {result.problem.epsilon:g}: the variance of the design is "
                                f"{result.variance_note}; the budget split needs it")
        return float(result.variance)

    def basis(self, eps: float) -> DesignBasis:
        return self.designs.basis(round(float(eps), 9))


@dataclass(frozen=True)
class Allocation(Result):
    """The best split of the budget, the equal split, and the joint question.

    A :class:`~designer.results.Result` whose ``status`` is :attr:`FitStatus.OPTIMAL
    <designer.results.FitStatus.OPTIMAL>`: the split minimises the weighted sum of the questions' variances (a
    global search, refined on certified designs to :data:`ALLOCATION_TOL`). ``warnings`` say why a question's
    equal-split variance is infinite.

    ``bases`` says how each question's design was chosen (a :class:`~designer.vocabulary.DesignBasis`, ``None`` without
    one), ``reasons`` why an equal-split variance is infinite (else ``""``), ``accuracies`` each question's
    :class:`~designer.planning.Accuracy` at its budget (``None`` without an expanded design), and ``curves`` the
    variances each question's curve was tabulated at (budget -> variance).

    Examples
    --------
    >>> from designer import planning
    >>> survey = planning.parse_survey({"name": "two", "epsilon": 2.0, "question": [
    ...     {"name": "drugs", "inputs": ["yes", "no"], "prior": [0.1, 0.9]},
    ...     {"name": "tax", "inputs": ["yes", "no"], "prior": [0.3, 0.7]}]})
    >>> allocation = planning.allocate(survey, joint=False)
    >>> [round(v, 4) for v in allocation.variances]  # each question's variance per respondent at its budget
    [1.0107, 1.1307]
    """

    survey: Survey
    epsilons: tuple[float, ...]
    variances: tuple[float, ...]
    total_variance: float
    equal_split_variances: tuple[float, ...]
    equal_split_total_variance: float
    joint: dict[str, Any] | None
    joint_note: str
    convex: tuple[bool, ...]
    designs_solved: int
    bases: tuple[DesignBasis | None, ...] = ()
    reasons: tuple[str, ...] = ()
    accuracies: tuple[Any, ...] = ()
    curves: tuple[dict[float, float], ...] = ()
    status: FitStatus = FitStatus.OPTIMAL
    warnings: tuple[str, ...] = ()

    title = "Budget split"

    def __post_init__(self) -> None:
        if not self.warnings:
            object.__setattr__(self, "warnings", tuple(f"{q.name}: {r}" for q, r in zip(self.survey.questions,
                                                                                        self.reasons) if r))
        self._check_status()

    def rows(self) -> list[dict[str, Any]]:
        """A row per question: ``question, inputs, weight, epsilon, variance, equal_split_variance, design_basis,
        note``."""
        return [{"question": q.name, "inputs": len(q.inputs), "weight": w, "epsilon": e, "variance": v,
                 "equal_split_variance": eq, "design_basis": basis, "note": reason}
                for q, w, e, v, eq, basis, reason in zip(self.survey.questions, self.survey.weights, self.epsilons,
                                                         self.variances, self.equal_split_variances,
                                                         self.bases or [None] * len(self.epsilons),
                                                         self.reasons or [""] * len(self.epsilons))]

    def to_dict(self) -> dict[str, Any]:
        """The split as ``designer plan SURVEY --format json`` writes it (without ``source`` and ``mode``)."""
        return {"total_epsilon": self.survey.epsilon, "allocation": self.rows(), "total_variance": self.total_variance,
                "equal_split_total_variance": self.equal_split_total_variance, "joint": self.joint,
                "joint_note": self.joint_note, "convex": list(self.convex), "designs_solved": self.designs_solved}

    def table(self) -> TableData:
        """The rows of :meth:`rows` as a table."""
        rows = self.rows()
        columns = ["question", "inputs", "weight", "epsilon", "variance", "equal_split_variance", "design_basis",
                   "note"]
        return columns, [[r[c] for c in columns] for r in rows]


def _grid_search(curves: list[_Curve], weights: NDArray[np.float64], total: float) -> NDArray[np.float64]:
    """Global minimum of sum w_i V_i(e_i) over splits on a grid of ``total / STEPS``, V_i interpolated (log,
    monotone cubic) between GRID_POINTS certified designs per question: dynamic programming, no convexity
    needed."""
    from scipy.interpolate import PchipInterpolator

    grid = np.linspace(total / GRID_POINTS, total, GRID_POINTS)
    steps = np.arange(STEPS + 1) * total / STEPS
    tables = []
    for c, w in zip(curves, weights):
        v = np.array([c(e) for e in grid])
        finite = np.isfinite(v) & (v > 0)
        values = np.full(steps.size, np.inf)
        if finite.sum() >= 2:
            f = PchipInterpolator(grid[finite], np.log(v[finite]), extrapolate=False)
            inside = (steps >= grid[finite][0]) & (steps <= grid[finite][-1])
            values[inside] = w * np.exp(f(steps[inside]))
        elif finite.sum() == 1:
            values[steps >= grid[finite][0]] = w * v[finite][0]
        tables.append(values)
    best, choice = tables[0].copy(), []
    for table in tables[1:]:  # best[s] = min over the split of s steps among the questions so far
        combined = best[:, None] + table[None, :]
        new = np.full(steps.size, np.inf)
        arg = np.zeros(steps.size, dtype=np.int64)
        for s in range(steps.size):
            row = combined[np.arange(s + 1), s - np.arange(s + 1)]
            arg[s] = int(np.argmin(row))
            new[s] = row[arg[s]]
        choice.append(arg)
        best = new
    split, s = [], STEPS
    for arg in reversed(choice):
        first = int(arg[s])
        split.append(s - first)
        s = first
    split.append(s)
    return np.array(split[::-1], dtype=np.float64) * total / STEPS


def _refine(curves: list[_Curve], weights: NDArray[np.float64], eps: NDArray[np.float64]) -> NDArray[np.float64]:
    """Move budget between pairs of questions on certified designs while it lowers the weighted total, with
    steps halving down to ALLOCATION_TOL (a local search; with convex curves the grid optimum is global)."""
    def total(e: NDArray[np.float64]) -> float:
        return float(sum(w * c(x) for c, w, x in zip(curves, weights, e)))

    current, step = total(eps), float(eps.sum()) / STEPS * 2
    while step >= ALLOCATION_TOL:
        improved = False
        for i in range(len(eps)):
            for j in range(len(eps)):
                if i != j and eps[j] - step > 0:
                    trial = eps.copy()
                    trial[i] += step
                    trial[j] -= step
                    value = total(trial)
                    if value < current - 1e-12 * abs(current):
                        eps, current, improved = trial, value, True
        if not improved:
            step /= 2
    return eps


def _convex(curve: _Curve) -> bool:
    """Numerical convexity of a tabulated decreasing variance curve (second differences >= -1e-9 relative)."""
    keys = sorted(k for k, v in curve.values.items() if math.isfinite(v))
    v = np.array([curve.values[k] for k in keys])
    if v.size < 3:
        return True
    x = np.array(keys)
    slopes = np.diff(v) / np.diff(x)
    return bool(np.all(np.diff(slopes) >= -1e-9 * np.abs(slopes[:-1]).max()))


def joint_variance(survey: Survey) -> tuple[dict[str, Any] | None, str]:
    """Design one question over the product of the inputs at the whole budget and give each question's
    variance of its marginal shares at the product of the questions' priors; ``None`` with the reason when the
    product is too large or the semantics gives no marginal variance.

    The joint design maximises chi2 at the *uniform* prior, without structure: a chi2 optimum at a skewed
    prior may lump rare answer combinations together and then identifies no marginal share, while the
    uniform design is invariant under relabelling (solved on the symmetric path) and identifies every share.

    Examples
    --------
    >>> from designer import planning
    >>> survey = planning.parse_survey({"name": "two", "epsilon": 2.0, "question": [
    ...     {"name": "drugs", "inputs": ["yes", "no"], "prior": [0.1, 0.9]},
    ...     {"name": "tax", "inputs": ["yes", "no"], "prior": [0.3, 0.7]}]})
    >>> joint, note = planning.joint_variance(survey)
    >>> [round(v, 4) for v in joint["variances"]], note.startswith("chi2 design over the product of the inputs")
    ([0.501, 0.621], True)
    """
    from ..estimation.shares import fisher_information
    from ..optimal.engine import design

    sizes = [q.k for q in survey.questions]
    k = int(np.prod(sizes))
    if k > JOINT_MAX_INPUTS:
        return None, f"the joint question would have {k} answers (at most {JOINT_MAX_INPUTS} are designed)"
    labels, prior = [""], np.ones(1)
    for q in survey.questions:
        labels = [f"{a}|{b}" if a else b for a in labels for b in q.inputs]
        prior = np.outer(prior, q.prior).ravel()
    problem = DesignProblem(inputs=tuple(labels), epsilon=survey.epsilon, semantics=survey.semantics,
                            objective=Objective.CHI2, name=f"{survey.name}-joint")
    result = design(problem)
    mech = result.mechanism
    if mech is None or (survey.semantics is not Semantics.SLDP and not mech.is_bayesian):
        return None, "under WLDP the joint design's marginal variances are not defined (set answers)"
    info = fisher_information(mech, prior)
    basis = np.vstack([np.eye(k - 1), -np.ones((1, k - 1))])
    try:
        cov = basis @ np.linalg.inv(basis.T @ info @ basis) @ basis.T
    except np.linalg.LinAlgError:
        return None, "the joint design does not identify every joint share"
    codes = np.array(np.unravel_index(np.arange(k), sizes)).T  # joint cell -> answer of each question
    per_question = []
    for i, q in enumerate(survey.questions):
        marg = [float(a @ cov @ a) for a in ((codes[:, i] == x).astype(float) for x in range(q.k))]
        per_question.append(float(np.mean(marg)))
    total = float(np.dot(survey.weights, per_question))
    return {"epsilon": survey.epsilon, "inputs": k, "variances": per_question, "total_variance": total,
            "certificate": result.certificate.method}, ("chi2 design over the product of the inputs at the uniform "
                                                        "prior, variances at the product of the questions' priors")


def allocate(survey: Survey, *, joint: bool = True) -> Allocation:
    """Split ``survey.epsilon`` over the questions to minimise the weighted sum of their variances.

    A global search on tabulated curves (dynamic programming over a grid of ``total / STEPS``), refined on
    certified designs to :data:`ALLOCATION_TOL`; each curve is checked for convexity (then the refined split
    is the global optimum). Raises :class:`PlanningError` when a question cannot be designed at any split.

    Examples
    --------
    >>> from designer import planning
    >>> survey = planning.parse_survey({"name": "two", "epsilon": 2.0, "question": [
    ...     {"name": "drugs", "inputs": ["yes", "no"], "prior": [0.1, 0.9]},
    ...     {"name": "tax", "inputs": ["yes", "no"], "prior": [0.3, 0.7]}]})

    Equal priors of information here, so the best split is the equal one:

    >>> allocation = planning.allocate(survey, joint=False)
    >>> allocation.epsilons, round(allocation.total_variance, 4), round(allocation.equal_split_total_variance, 4)
    ((1.0, 1.0), 2.1413, 2.1413)
    """
    weights = np.asarray(survey.weights, dtype=np.float64)
    curves = [_Curve(q) for q in survey.questions]
    for q, c in zip(survey.questions, curves):
        if not math.isfinite(c(survey.epsilon)):
            raise PlanningError(f"question {q.name!r} has no design that identifies its shares even with the whole "
                                f"budget {survey.epsilon:g}{_needed(c, survey.epsilon)}; relax its structure or "
                                "raise the budget")
    eps = _grid_search(curves, weights, survey.epsilon)
    if not math.isfinite(float(sum(w * c(e) for c, w, e in zip(curves, weights, eps)))):
        needs = "; ".join(f"{q.name!r}{_needed(c, 0.0)}" for q, c in zip(survey.questions, curves))
        raise PlanningError(f"no split of eps = {survey.epsilon:g} gives every question a design that identifies "
                            f"its shares ({needs}); raise the total budget or drop a question")
    eps = _refine(curves, weights, eps)
    eps *= survey.epsilon / eps.sum()
    variances = tuple(c(e) for c, e in zip(curves, eps))
    equal = tuple(c(survey.epsilon / len(curves)) for c in curves)
    bases: list[DesignBasis | None] = []
    reasons, accuracies = [], []
    for c, e, v, eq in zip(curves, eps, variances, equal):
        bases.append(c.basis(e) if math.isfinite(v) else None)
        accuracies.append(c.designs.accuracy(e) if math.isfinite(v) and c.designs(e).mechanism is not None
                          else None)
        reasons.append("" if math.isfinite(eq) else
                       f"equal split: no design identifies every share at eps {survey.epsilon / len(curves):.4g}"
                       + _needed(c, survey.epsilon / len(curves)))
    joint_result, note = joint_variance(survey) if joint else (None, "not asked")
    return Allocation(survey=survey, epsilons=tuple(float(e) for e in eps), variances=variances,
                      total_variance=float(np.dot(weights, variances)), equal_split_variances=equal,
                      equal_split_total_variance=float(np.dot(weights, equal)), joint=joint_result, joint_note=note,
                      convex=tuple(_convex(c) for c in curves), designs_solved=sum(len(c.values) for c in curves),
                      bases=tuple(bases), reasons=tuple(reasons), accuracies=tuple(accuracies),
                      curves=tuple(dict(sorted(c.values.items())) for c in curves))


def _needed(curve: _Curve, above: float) -> str:
    """``" (it needs eps >= X)"``: the smallest budget above ``above`` at which the question's variance is finite,
    to 1e-3 (bisection on certified designs, up to ``EPS_MAX``), or ``""`` when none up to it is."""
    from .sizes import EPS_MAX

    hi = max(above, 1e-3) * 2
    while not math.isfinite(curve(hi)):
        if hi >= EPS_MAX:
            return f" (not even at eps = {EPS_MAX:g})"
        hi = min(hi * 2, EPS_MAX)
    lo = above
    while hi - lo > 1e-3:
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if math.isfinite(curve(mid)) else (mid, hi)
    return f" (it needs eps >= {hi:.3f})"
