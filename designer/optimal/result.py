"""The result of a design: the released mechanism and what was checked about it (a
:class:`~designer.results.Result`)."""

from __future__ import annotations

import dataclasses
import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._internal.render import fmt, json_number, render_table
from ..certificate import Certificate, certificate_fields
from ..exceptions import DesignerError, DesignWarning
from ..mechanism import Mechanism
from ..results import FitStatus, Result, TableData
from ..vocabulary import Objective
from .objectives import VARIANCE_KINDS, share_variances, variance_note
from .problem import DesignProblem
from .symmetric import SymmetricMechanism

#: What a design's status means, as the table output says it beside the status.
STATUS_WORDS = {"optimal": "optimal to the stated tolerance, certified in exact arithmetic",
                "local": "certified in exact arithmetic; optimal only within the stated gap"}

__all__ = ["DesignResult", "certificate_fields", "identification_warnings", "with_warnings"]


#: The table output shows a mechanism's matrix up to this many columns (wider ones are described).
TABLE_COLUMNS = 64


@dataclass(frozen=True)
class DesignResult(Result):
    """A certified optimal mechanism and what was checked about it.

    Attributes
    ----------
    problem : DesignProblem
    mechanism : Mechanism or None
        The released mechanism (certified; see ``certificate``). On the symmetric path it is expanded only
        for ``k <= EXPAND_INPUTS`` (it has ``2**k - 1`` columns); ``compact`` always holds it.
    objective_value : float
        The objective recomputed from the released mechanism.
    solver_objective : float
        The optimum the solver reported (before cleaning, symmetrising and repair).
    eps_shafer, eps_walley : float
        Losses of the released mechanism (Def 3.1, Def 3.13), recomputed.
    variance : float or None
        The variance designer reports, per respondent, at the problem's prior (mean over inputs;
        ``Var(pi_hat)`` for two inputs): SLDP, the MLE from the set-valued answers; WLDP, the worst case
        over the credal sets of the MLE from precise answers (:func:`objectives.reported_variance`).
    variance_kind : str
        Which of those (a key of :data:`objectives.VARIANCE_KINDS`); ``"unavailable"`` when ``variance`` is
        ``None``: the figure could not be computed (``variance_reason`` says why), which never withholds the
        certified design.
    status : FitStatus
        ``FitStatus.OPTIMAL`` (the word ``"optimal"`` is accepted), or ``FitStatus.LOCAL`` when the objective is
        proved only within ``optimality_gap`` of the optimum; a design that cannot be certified is never returned.
    solver : str
    path : str
        ``"linear program"`` or ``"staircase LP"``, plus ``" + orbit average"`` for symmetric problems.
    certificate : Certificate
    seconds : float
        Wall time of the whole design.
    compact : SymmetricMechanism or None
        The size-class form on the symmetric path (docs/theory.md, 5.3).
    variance_reason : str
        Why ``variance`` is ``None`` (empty otherwise).
    exact_table : InvariantTable or None
        An invariant design's exact table (:mod:`designer.optimal.invariant`): integer counts with a denominator
        per row, the prior kept as Fractions; None for other designs.
    optimality_gap : float or None
        How far the released design's objective may be from the optimum, relative: for the variance objectives
        ``(objective - bound) / objective``, proved by the program's dual (docs/theory.md 5.7), at most ``1e-6``
        when ``status`` is ``optimal``; for the other objectives the distance to the optimum of their linear
        program. None when the objective is infinite.
    bound : float or None
        The variance objectives: a proved lower bound on the objective of every mechanism of the problem's class
        (every eps-SLDP mechanism with its don't-know mass; under WLDP every eps-WLDP mechanism). None otherwise.
    warnings : tuple of str
        What the user should know about the released design, also issued as :class:`DesignWarning`
        (e.g. a chi2 optimum at a skewed prior that lumps rare inputs together and so does not identify
        every share: its ``variance`` is then ``inf``).

    Examples
    --------
    >>> import designer
    >>> problem = designer.DesignProblem(inputs=("yes", "no"), epsilon=1.0, objective="truthful", dont_know=0.2)
    >>> result = designer.design(problem)
    >>> str(result.status), result.path, round(result.eps_shafer, 12)
    ('optimal', 'linear program + orbit average', 1.0)
    >>> result.mechanism.to_frame().round(6).loc["yes"].tolist()
    [0.584847, 0.215153, 0.2]
    """

    problem: DesignProblem
    mechanism: Mechanism | None
    objective_value: float
    solver_objective: float
    eps_shafer: float
    eps_walley: float
    variance: float | None
    variance_kind: str
    status: FitStatus
    solver: str
    path: str
    certificate: Certificate
    seconds: float
    compact: SymmetricMechanism | None = None
    warnings: tuple[str, ...] = ()
    variance_reason: str = ""
    exact_table: Any = None
    optimality_gap: float | None = None
    bound: float | None = None

    title = "Design"

    def __post_init__(self) -> None:
        self._check_status()

    @property
    def share_variances(self) -> dict[str, float] | None:
        """The variance of each estimated share per respondent at the prior, the numbers behind ``variance`` (their
        mean); None when ``variance`` is."""
        if self.variance is None:
            return None
        if self.compact is not None and self.mechanism is None:
            return dict.fromkeys(self.problem.inputs, float(self.variance))
        assert self.mechanism is not None
        values, _ = share_variances(self.mechanism, self.problem.prior, self.problem.semantics)
        return {x: float(v) for x, v in zip(self.problem.inputs, values)}

    @property
    def scenario_values(self) -> dict[str, float] | None:
        """A variance objective with prior scenarios: its value at each scenario (``"prior 1"``, ...); the objective
        is the largest. None otherwise."""
        if self.problem.priors is None or self.mechanism is None:
            return None
        from .share_variance import scenario_values

        values = scenario_values(self.problem, self.mechanism.matrix)
        return {f"prior {i + 1}": float(v) for i, v in enumerate(values)}

    @property
    def variance_note(self) -> str:
        """What ``variance`` is, in words (or why it is absent)."""
        return variance_note(self.variance_kind, self.variance_reason)

    def to_dict(self) -> dict[str, Any]:
        """The ``designer design --format json`` object."""
        out: dict[str, Any] = {"name": self.problem.name, "inputs": list(self.problem.inputs),
                               "frame": list(self.problem.frame)}
        if self.mechanism is not None:
            mech = self.mechanism
            out.update(focal_sets=[list(s) for s in mech.focal_sets], columns=mech.columns,
                       matrix=[[float(v) for v in row] for row in mech.matrix])
        if self.compact is not None:
            out["compact"] = self.compact.to_json_dict()
        out.update({
            "epsilon": self.problem.epsilon,
            "semantics": self.problem.semantics.value,
            "objective": self.problem.objective.value,
            "objective_value": json_number(self.objective_value),
            "solver_objective": json_number(self.solver_objective),
            "eps_shafer": json_number(self.eps_shafer),
            "eps_walley": json_number(self.eps_walley),
            "variance": json_number(self.variance),
            "variance_kind": self.variance_kind,
            "variance_note": self.variance_note,
            "share_variances": (None if (shares := self.share_variances) is None
                                else {x: json_number(v) for x, v in shares.items()}),
            "prior": dict(zip(self.problem.inputs, (float(v) for v in self.problem.prior))),
            "status": self.status.value,
            "optimality_gap": json_number(self.optimality_gap),
            "bound": json_number(self.bound),
            "scenarios": (None if (scenarios := self.scenario_values) is None
                          else {name: json_number(v) for name, v in scenarios.items()}),
            "solver": self.solver,
            "path": self.path,
            **certificate_fields(self.certificate),  # a result exists only for a certified mechanism
            "seconds": self.seconds,
            "warnings": list(self.warnings),
        })
        if self.exact_table is not None:
            out["exact"] = exact_block(self.exact_table)
        return out

    def table(self) -> TableData:
        """The mechanism as a table (the ``designer design --format csv`` output): ``input`` and one column per
        answer set (:attr:`Mechanism.columns`), a row per input. A design kept only in compact form (the
        symmetric route beyond ``EXPAND_INPUTS`` inputs) has no such table: :class:`DesignerError`."""
        mech = self.mechanism
        if mech is None:
            raise DesignerError(
                f"the designed mechanism of {self.problem.k} inputs has 2**{self.problem.k} - 1 focal sets and is "
                "kept in compact form (size classes); use --format json or the table")
        return ["input", *mech.columns], [[x, *(float(v) for v in row)] for x, row in zip(mech.inputs, mech.matrix)]

    def summary(self) -> str:
        """The ``designer design`` table output: the problem, the mechanism (or its compact form), the objective,
        the losses (Def 3.1, Def 3.13), the variance, the certificate, the path and the warnings."""
        problem = self.problem
        agreed = abs(self.solver_objective - self.objective_value) <= 1e-9 * max(1.0, abs(self.objective_value))
        lines = [
            problem.describe(),
            self._matrix_text(),
            "",
            f"objective {problem.objective}: {fmt(self.objective_value, 10)}" + (
                "" if agreed else f" (the solver reported {fmt(self.solver_objective, 10)} before certification)"),
            f"privacy losses: eps_shafer {fmt(self.eps_shafer, 10)} (set answers, Def 3.1), "
            f"eps_walley {fmt(self.eps_walley, 10)} (precise answers, Def 3.13)",
            (f"variance {fmt(self.variance, 8)} per respondent at prior "
             + ", ".join(f"{x}={fmt(float(v), 4)}" for x, v in zip(problem.inputs, problem.prior))
             + f": {VARIANCE_KINDS[self.variance_kind]} (divide by n for a survey of n)")
            if self.variance is not None else f"variance: {self.variance_note}",
            *self._variance_lines(),
            f"status: {self.status.value} ({STATUS_WORDS.get(self.status.value, self.status.value)})",
            *self.certificate.lines(),
            f"path: {self.path}; solver {self.solver}; {self.seconds:.2f} s",
            *(f"warning: {w}" for w in self.warnings),
        ]
        return "\n".join(lines)

    def _variance_lines(self) -> list[str]:
        """The per-share variances, the scenarios and the optimality gap (variance objectives), or the gap alone."""
        lines = []
        shares = self.share_variances
        if shares is not None and self.problem.objective.variance and len(shares) <= 12:
            lines.append("share variances: " + ", ".join(f"{x} {fmt(v, 6)}" for x, v in shares.items()))
        scenarios = self.scenario_values
        if scenarios is not None:
            lines.append("objective at each prior scenario: " + ", ".join(f"{k} {fmt(v, 8)}"
                                                                          for k, v in scenarios.items()))
        if self.optimality_gap is not None:
            against = (f"the proved bound {fmt(self.bound, 10)}" if self.bound is not None
                       else "the optimum of its program")
            lines.append(f"optimality gap {self.optimality_gap:.2g} (relative, against {against})")
        return lines

    def _matrix_text(self) -> str:
        """The mechanism's matrix (8 digits), a description of a wide one, or the compact form's class totals."""
        mech = self.mechanism
        if mech is not None and len(mech.focal) <= TABLE_COLUMNS:
            rows = [[x, *(fmt(v, 8) for v in row)] for x, row in zip(mech.inputs, mech.matrix)]
            return render_table(["input", *mech.columns], rows)
        compact = self.compact
        if compact is None:
            if mech is None:
                raise DesignerError("a design result holds a mechanism or its compact form")
            values = np.unique(np.round(mech.matrix, 15))
            return (f"{mech.k} x {len(mech.focal)} mechanism ({'precise answers' if mech.is_bayesian else 'sets'}), "
                    f"too wide to print; distinct entries {', '.join(fmt(v, 8) for v in values[:6])}"
                    f"{' ...' if values.size > 6 else ''}; write it with --out FILE or --format json")
        a, b = compact.per_set()
        rows = [[str(s + 1), fmt(compact.A[s], 8), fmt(a[s], 6), fmt(compact.B[s], 8), fmt(b[s], 6)]
                for s in range(compact.k) if compact.A[s] > 0 or compact.B[s] > 0]
        return ("compact form: mass of a row on sets of each size, with / without the true answer\n"
                + render_table(["size", "total with", "one set with", "total without", "one set without"], rows))


def exact_block(table: Any) -> dict[str, Any]:
    """The JSON of an invariant design's exact table: ``counts``, ``denominators`` (per row) and the ``prior`` kept
    (exact fractions as text); a mechanism file keeps it, and ``randomize`` and ``export`` draw from it."""
    return {"counts": [[int(c) for c in row] for row in table.counts],
            "denominators": [int(d) for d in table.denominators],
            "invariant_prior": [f"{p.numerator}/{p.denominator}" for p in table.prior],
            "mix_weight": table.mix_weight}


def identification_warnings(problem: DesignProblem, mech: Mechanism | None, variance: float | None,
                            kind: str = "sldp_mle") -> tuple[str, ...]:
    """Why a design with an infinite variance does not identify every share (empty when it does, or when the
    variance could not be computed: then nothing is known either way)."""
    if variance is None or math.isfinite(variance):
        return ()
    if kind == "wldp_worst_case":
        return ("under WLDP the two inputs' credal sets share a member (bel_x(E) <= pl_x'(E) for every event): "
                "in the worst case the precise answers carry no information about the shares (variance inf); "
                "a larger budget or a smaller don't-know mass separates them, or use SLDP (set answers)",)
    what = "the answers do not separate every input"
    if mech is not None:
        groups: dict[bytes, list[str]] = {}
        for x, row in zip(mech.inputs, np.round(mech.matrix, 12)):
            groups.setdefault(row.tobytes(), []).append(x)
        alike = [g for g in groups.values() if len(g) > 1]
        if alike:
            what = "; ".join("inputs " + ", ".join(g) + " answer alike" for g in alike)
    hint = ("; the chi2 objective weighs inputs by their prior and can gain by lumping rare ones together: use "
            "objective variance (the mean share variance, every share estimated) or max_variance (the largest)"
            if problem.objective is Objective.CHI2 else
            "; objective truthful can answer 'no' whatever the truth at a skewed prior: use objective variance "
            "or max_variance, which estimate every share"
            if problem.objective is Objective.TRUTHFUL and np.ptp(problem.prior) > 1e-12 else
            "; the objective's weights or contrasts ask only for some estimates (those are identified): weigh every "
            "share to have every share estimated"
            if problem.objective.variance and (problem.variance_weights is not None or problem.contrasts is not None)
            else "")
    return (f"the released mechanism does not identify every share (MLE variance infinite): {what}{hint}",)


def with_warnings(result: DesignResult) -> DesignResult:
    """``result`` with its :func:`identification_warnings`, each also issued as a :class:`DesignWarning`."""
    notes = identification_warnings(result.problem, result.mechanism, result.variance, result.variance_kind)
    for note in notes:
        warnings.warn(note, DesignWarning, stacklevel=3)
    return dataclasses.replace(result, warnings=notes) if notes else result
