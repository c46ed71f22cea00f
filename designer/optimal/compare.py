"""Designed mechanisms next to the closed forms they should match (docs/theory.md, section 4).

* two inputs, answers = inputs, objective truthful or chi2: GWRR under SLDP (Cor 3.12) or the WLDP
  closed form ``q = 1/(1+e^eps)``, ``p = c - q``; with only the two precise answers, Warner (Ex 3.7, Eq 1)
  under either semantics;
* k > 2 inputs, chi2, SLDP: the best of k-RR and subset selection (variance);
* k > 2 inputs, truthful, SLDP, no structure: k-RR (``p = e^eps / (e^eps + k - 1)``);
* k > 2 inputs, variance or max_variance, SLDP, no structure: k-RR, the best d-subset selection and OUE at the
  problem's prior, each by the maximum-likelihood variance of its own answers (the designed value is never above
  them: docs/theory.md 5.7, docs/guide/peers.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from .._internal.numeric import rr_probabilities
from .._internal.render import fmt, json_value, render_table
from .._internal.solvers import WarmStart
from ..closed_forms import (
    gwrr_sldp,
    gwrr_wldp,
    krr_variance,
    oue_variance,
    subset_selection_best_d,
    subset_selection_variance,
)
from ..exceptions import InfeasibleDesignError, InvalidProblemError
from ..results import FitStatus, Result, TableData
from ..vocabulary import Objective, Semantics
from .engine import design
from .objectives import VARIANCE_KINDS
from .problem import DesignProblem

__all__ = ["ComparisonTable", "compare"]


@dataclass(frozen=True)
class ComparisonTable(Result):
    """Designed values next to a closed form, one row per epsilon (``designer compare``).

    Attributes
    ----------
    problem : DesignProblem
    reference : str
        The closed form, in words, with its source (e.g. Cor 3.12).
    columns : tuple of str
        The column order of ``rows``.
    rows : list of dict
        One per epsilon; a design or closed form that does not exist is the word ``"infeasible"``.
    notes : list of str
        Figures that could not be computed, with the reason (their cells are ``None``).
    status : FitStatus
        ``OPTIMAL``: every design shown is certified (infeasible budgets say so in their row).
    warnings : tuple of str
    """

    problem: DesignProblem
    reference: str
    columns: tuple[str, ...]
    rows: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    status: FitStatus = FitStatus.OPTIMAL
    warnings: tuple[str, ...] = ()

    title = "Comparison"

    def __post_init__(self) -> None:
        self._check_status()

    def to_dict(self) -> dict[str, Any]:
        """The ``designer compare --format json`` object: ``problem``, ``closed_form``, ``rows`` and ``notes``."""
        return {"problem": self.problem.name, "closed_form": self.reference,
                "rows": [{k: json_value(v) for k, v in r.items()} for r in self.rows], "notes": self.notes}

    def table(self) -> TableData:
        """The ``--format csv`` table: one numeric table, "infeasible" moved to two status columns (``status`` of
        the design, ``closed_form_status``) and its cells left empty."""
        def status(r: dict[str, Any], key: str) -> str:
            return "infeasible" if r.get(key) == "infeasible" else "optimal"

        headers = list(self.columns)
        return (["status", "closed_form_status", *headers],
                [[status(r, "objective"), status(r, "variance_closed"),
                  *("" if r.get(c, "") == "infeasible" else r.get(c, "") for c in headers)] for r in self.rows])

    def summary(self) -> str:
        """The ``designer compare`` table output: the problem over its budgets, the closed form, what the variance
        is, the table (8 digits) and the notes."""
        problem = self.problem
        headers = list(self.columns)
        pretty = [[fmt(v, 8) if isinstance(v, float) else "n/a" if v is None else v
                   for v in (r.get(c, "") for c in headers)] for r in self.rows]
        kind = "sldp_mle" if problem.semantics == "sldp" else "wldp_worst_case"
        prior = ", ".join(f"{x}={fmt(float(v), 4)}" for x, v in zip(problem.inputs, problem.prior))
        grid = [float(r["epsilon"]) for r in self.rows]
        budget = f"eps from {fmt(min(grid), 4)} to {fmt(max(grid), 4)} ({len(grid)} budgets)" if grid else None
        return (f"{problem.describe(budget)}\nclosed form: {self.reference}\nvariance: per respondent at prior "
                f"{prior}, {VARIANCE_KINDS[kind]}\n" + render_table(headers, pretty)
                + "".join(f"\nnote: {n}" for n in self.notes))


def _binary(problem: DesignProblem) -> bool:
    return problem.k == 2 and problem.l == 2 and set(problem.inputs) == set(problem.frame)


def _answer_mass(problem: DesignProblem) -> float:
    # The optimum never spends mass on "don't know" unless it is forced (dont_know), so c = 1 otherwise.
    return 1.0 - (problem.dont_know or 0.0)


def _gwrr_variance(p: float, q: float, pi: float) -> float:
    """Thm 3.10 per respondent as n -> inf (A ~ 1/(n (p + q))): the Fisher variance of Q_2x3."""
    if p == q:  # no information (a budget below float resolution): the variance is unbounded
        return math.inf
    return (-((pi - 0.5) ** 2) + 0.25 * ((p + q) / (p - q)) ** 2) / (p + q)


def _walley_variance(p: float, q: float, pi: float) -> float:
    """``nu_W`` per respondent, the worst case over the credal sets (docs/theory.md, section 4): infinite when
    the two rows' credal sets share a member (``p <= q + don't-know``: bel_yes({yes}) <= pl_no({yes})),
    otherwise that of the lambda = 0 Warner matrix."""
    if p <= 1.0 - p:  # p <= q + (1 - p - q)
        return math.inf
    return -((pi - 0.5) ** 2) + 1.0 / (4.0 * (2.0 * p - 1.0) ** 2)


def _notes(rows: list[dict[str, Any]]) -> list[str]:
    """One line per row whose variance could not be computed, with the reason; the rows keep their columns."""
    notes = []
    for row in rows:
        note = row.pop("variance_note", "")
        if "variance" in row and row["variance"] is None:
            notes.append(f"eps {row['epsilon']:g}: variance {note}")
    return notes


def compare(problem: DesignProblem, epsilons: list[float]) -> ComparisonTable:
    """Design at each epsilon and set the result next to its closed form.

    Parameters
    ----------
    problem : DesignProblem
    epsilons : list of float

    Returns
    -------
    ComparisonTable
        ``diff`` is the largest absolute difference of the compared quantities (p and q for binary
        problems, the relative variance difference for k-ary ones).

    Raises
    ------
    InvalidProblemError
        When no closed form is known for the problem.
    """
    sem, objective = problem.semantics, problem.objective
    warner = problem.focal_sets == (1, 2) and not problem.dont_know  # only the two precise answers (Ex 3.7)
    plain_targets = problem.variance_weights is None and problem.contrasts is None and problem.priors is None
    if _binary(problem) and (objective in (Objective.TRUTHFUL, Objective.CHI2) or (objective.variance and plain_targets)
                             ) and problem.lie_max is None and (
            warner or (sem is not Semantics.BOTH and problem.focal_sets is None)):
        return _compare_binary(problem, epsilons)
    if (problem.k > 2 and sem is Semantics.SLDP and objective.variance and plain_targets and problem.dont_know is None
            and problem.dont_know_max is None and problem.lie_max is None and problem.focal_sets is None):
        return _compare_kary_variance(problem, epsilons)
    if problem.k > 2 and sem is Semantics.SLDP and objective is Objective.CHI2 and np.ptp(problem.prior) < 1e-12:
        return _compare_kary_chi2(problem, epsilons)
    if (problem.k > 2 and sem is Semantics.SLDP and objective is Objective.TRUTHFUL and problem.dont_know is None
            and problem.lie_max is None and problem.focal_sets is None and np.ptp(problem.prior) < 1e-12):
        return _compare_kary_truthful(problem, epsilons)
    raise InvalidProblemError(
        "no closed form to compare with: compare knows binary problems (objective truthful, chi2 or a variance, "
        "SLDP or WLDP, optional dont_know; Warner when focal_sets are the two answers), k-ary chi2 under SLDP with a "
        "uniform prior (k-RR, subset selection), k-ary variance or max_variance under SLDP without structure (k-RR, "
        "subset selection, OUE at the prior) and k-ary truthful under SLDP without structure (k-RR)"
    )


def _compare_binary(problem: DesignProblem, epsilons: list[float]) -> ComparisonTable:
    c = _answer_mass(problem)
    yes, no = problem.inputs
    pi = float(problem.prior[0])
    warner = problem.focal_sets == (1, 2)
    wldp = problem.semantics is Semantics.WLDP and not warner  # precise answers: one loss for both semantics
    ref = ("WLDP closed form q = 1/(1+e^eps), p = c - q (docs/theory.md, section 4)" if wldp
           else "Warner, Ex 3.7: p = e^eps/(e^eps+1), variance Eq 1: pi(1-pi) + p(1-p)/(2p-1)^2" if warner
           else "GWRR, Cor 3.12: p = c e^eps/(e^eps+1), q = c/(e^eps+1)")
    cols = ("epsilon", "p", "q", "objective", "variance", "p_closed", "q_closed", "variance_closed", "diff")
    rows = []
    warm = WarmStart()  # one session over the budgets (priced sets and bases carried over)
    for eps in epsilons:
        row: dict[str, Any] = {"epsilon": eps}
        try:
            pc, qc = gwrr_wldp(eps, c) if wldp else gwrr_sldp(eps, c)
            row.update(p_closed=pc, q_closed=qc,
                       variance_closed=_walley_variance(pc, qc, pi) if wldp else _gwrr_variance(pc, qc, pi))
        except InfeasibleDesignError:
            row.update(p_closed="infeasible", q_closed="infeasible", variance_closed="infeasible")
        try:
            result = design(problem.replace(epsilon=eps), warm=warm)
        except InfeasibleDesignError:
            row.update(p="infeasible", q="infeasible", objective="infeasible", variance="infeasible",
                       diff=0.0 if row["p_closed"] == "infeasible" else math.inf)
            rows.append(row)
            continue
        assert result.mechanism is not None
        m = result.mechanism.row(yes)
        p, q = m.get((yes,), 0.0), m.get((no,), 0.0)
        row.update(p=p, q=q, objective=result.objective_value, variance=result.variance,
                   variance_note=result.variance_note)
        row["diff"] = (max(abs(p - row["p_closed"]), abs(q - row["q_closed"]))
                       if row["p_closed"] != "infeasible" else math.inf)
        rows.append(row)
    return ComparisonTable(problem, ref, cols, rows, _notes(rows))


def _compare_kary_chi2(problem: DesignProblem, epsilons: list[float]) -> ComparisonTable:
    k = problem.k
    cols = ("epsilon", "objective", "variance", "krr_variance", "ss_variance", "ss_best_d", "closed_variance",
            "diff")
    rows = []
    warm = WarmStart()  # one session over the budgets (priced sets and bases carried over)
    for eps in epsilons:
        result = design(problem.replace(epsilon=eps), warm=warm)
        krr = krr_variance(eps, k)
        ss = subset_selection_variance(eps, k)
        best = min(krr, ss)
        rows.append({"epsilon": eps, "objective": result.objective_value, "variance": result.variance,
                     "variance_note": result.variance_note, "krr_variance": krr, "ss_variance": ss,
                     "ss_best_d": subset_selection_best_d(eps, k), "closed_variance": best,
                     "diff": None if result.variance is None else (result.variance - best) / best})
    return ComparisonTable(problem, "min(k-RR, subset selection with the best d): variance per respondent, "
                           "mean over inputs; diff is relative", cols, rows, _notes(rows))


def _compare_kary_variance(problem: DesignProblem, epsilons: list[float]) -> ComparisonTable:
    """The variance designs beside the textbook designs at the problem's prior, each by the maximum-likelihood
    variance of its own answers (mean or largest share, as the objective): ``diff`` = (designed - best peer) /
    best peer, never above 0 (docs/theory.md 5.7)."""
    k, prior = problem.k, problem.prior
    reduce: Literal["mean", "max"] = "mean" if problem.objective is Objective.VARIANCE else "max"
    cols = ("epsilon", "objective", "status", "optimality_gap", "krr", "subset_selection", "ss_best_d", "oue",
            "best_peer", "diff")
    rows = []
    warm = WarmStart()  # one session over the budgets (the patterns carried over)
    for eps in epsilons:
        result = design(problem.replace(epsilon=eps), warm=warm)
        d = subset_selection_best_d(eps, k, prior, estimator="mle", reduce=reduce)
        peers = {"krr": krr_variance(eps, k, prior=prior, reduce=reduce),
                 "subset_selection": subset_selection_variance(eps, k, d, prior=prior, estimator="mle", reduce=reduce),
                 "oue": (oue_variance(eps, k, prior=prior, estimator="mle", reduce=reduce) if k <= OUE_MAX_INPUTS
                         else math.nan)}
        best = min(v for v in peers.values() if math.isfinite(v))
        rows.append({"epsilon": eps, "objective": result.objective_value, "status": result.status.value,
                     "optimality_gap": result.optimality_gap, **peers, "ss_best_d": d, "best_peer": best,
                     "diff": (result.objective_value - best) / best})
    what = "mean" if reduce == "mean" else "largest"
    return ComparisonTable(problem, f"k-RR, the best d-subset selection and OUE at the prior: the {what} share "
                           "variance of the MLE from each design's own answers, per respondent; diff = (designed - "
                           "best peer) / best peer (docs/guide/peers.md)", cols, rows, [])


#: OUE's maximum-likelihood variance enumerates its 2**k answers: compared up to this many inputs.
OUE_MAX_INPUTS = 16


def _compare_kary_truthful(problem: DesignProblem, epsilons: list[float]) -> ComparisonTable:
    k = problem.k
    cols = ("epsilon", "objective", "variance", "p_closed", "variance_closed", "diff")
    rows = []
    warm = WarmStart()  # one session over the budgets (priced sets and bases carried over)
    for eps in epsilons:
        result = design(problem.replace(epsilon=eps), warm=warm)
        pc = rr_probabilities(eps, k - 1)[0]
        rows.append({"epsilon": eps, "objective": result.objective_value, "variance": result.variance,
                     "variance_note": result.variance_note, "p_closed": pc, "variance_closed": krr_variance(eps, k),
                     "diff": abs(result.objective_value - pc)})
    return ComparisonTable(problem, "k-RR: truthful probability e^eps/(e^eps+k-1)", cols, rows, _notes(rows))
