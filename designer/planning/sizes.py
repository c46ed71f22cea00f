"""Sample size, the smallest budget for a target accuracy, power, and their simulation check.

Every number rests on the variance designer reports for a design (``designer.optimal.objectives``): per
respondent, at a prior, for the problem's semantics (SLDP: the MLE from set answers; WLDP: the worst case
over the credal sets). Where the paper gives an exact finite-n variance it is used instead of the asymptotic
``V / n``: Warner's mechanism (Ex 3.7, Eq 1, exact at every n) and the generalised Warner mechanism with a
don't-know answer (Thm 3.10 with the factor ``1 / (1 - q3^n)``, the variance of Eq 2's estimator given that
someone answered). ``docs/theory.md`` section 10 states the formulas.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._internal.numeric import two_sided_z
from .._internal.validation import check_int, check_prior, check_real
from ..exceptions import PlanningError
from ..mechanism import Mechanism
from ..results import FitStatus, Result, TableData
from ..vocabulary import Alternative, DesignBasis, NullVariance, Objective, Semantics, VarianceFormula

__all__ = ["BASES", "EPS_MAX", "Accuracy", "BudgetPlan", "DesignCache", "PlanningError", "SampleSize", "accuracy_of",
           "power_at", "power_sample_size", "price_of_privacy", "sample_size", "smallest_budget"]

#: Largest budget the smallest-budget search tries (nats); beyond it the design barely changes.
EPS_MAX = 20.0
#: The smallest-budget search stops when the bracket is this narrow (the answer is exact to 1e-3).
EPS_TOL = 2e-4
#: Largest sample size reported (beyond it the plan says "not reachable").
N_MAX = 10**12



@dataclass(frozen=True)
class Accuracy:
    """How accurately a mechanism estimates the shares, per respondent and at finite ``n``.

    Attributes
    ----------
    mechanism : Mechanism
    semantics : Semantics
    prior : (k,) ndarray
    per_share : (k,) ndarray
        Variance of each share's estimate from one respondent (``inf``: not identified).
    kind : str
        Which variance (``designer.optimal.objectives.VARIANCE_KINDS``).
    formula : VarianceFormula
        ``WARNER``, ``THM_3_10`` (exact finite-n formulas) or ``ASYMPTOTIC``.
    model : callable or None
        ``prior -> (k,)`` per-share variances at another prior (power computes them under the null and the
        alternative); None: the mechanism's own (``share_variances``). Set by a plan with several groups
        (:func:`designer.planning.split.split_accuracy`).

    Examples
    --------
    Warner's design at eps = 1 (truthful probability ``e / (e + 1)``), planned at a prior of 30% yes:

    >>> import designer
    >>> from designer import planning
    >>> accuracy = planning.accuracy_of(designer.Q_WRR(1.0), "sldp", [0.3, 0.7])
    >>> accuracy.kind, round(float(accuracy.per_share.max()), 6)
    ('sldp_mle', 1.130674)
    """

    mechanism: Mechanism
    semantics: Semantics
    prior: NDArray[np.float64]
    per_share: NDArray[np.float64]
    kind: str
    formula: VarianceFormula
    _pq: tuple[float, float] = field(default=(0.0, 0.0), repr=False)
    model: Any = field(default=None, repr=False)

    @property
    def variance(self) -> float:
        """The largest per-share variance per respondent (the share that needs the most respondents)."""
        return float(self.per_share.max())

    def variance_at(self, n: int) -> float:
        """Largest per-share variance from ``n`` respondents (the exact formula where there is one)."""
        from ..closed_forms import q2x3_variance_exact, warner_variance

        if self.formula is VarianceFormula.WARNER:
            return warner_variance(self._pq[0], float(self.prior[0]), n)
        if self.formula is VarianceFormula.THM_3_10:
            return q2x3_variance_exact(self._pq[0], self._pq[1], float(self.prior[0]), n)
        return self.variance / n

    def describe(self) -> str:
        return self.formula.describe()


def _closed_form(mech: Mechanism, semantics: Semantics) -> tuple[VarianceFormula, tuple[float, float]]:
    """``(WARNER, (p, 1-p))`` or ``(THM_3_10, (p, q))`` for the symmetric binary mechanisms the paper
    solves at finite n (under SLDP, or a precise Warner under either semantics), else ``(ASYMPTOTIC, ...)``."""
    if mech.k != 2 or mech.l != 2 or list(mech.inputs) != list(mech.frame):
        return VarianceFormula.ASYMPTOTIC, (0.0, 0.0)
    rows = [mech.row(0), mech.row(1)]
    yes, no, both = (mech.frame[0],), (mech.frame[1],), tuple(mech.frame)
    p, q, d = rows[0].get(yes, 0.0), rows[0].get(no, 0.0), rows[0].get(both, 0.0)
    symmetric = abs(rows[1].get(no, 0.0) - p) <= 1e-12 and abs(rows[1].get(yes, 0.0) - q) <= 1e-12
    if not symmetric or p <= q:
        return VarianceFormula.ASYMPTOTIC, (0.0, 0.0)
    if d == 0.0:
        return VarianceFormula.WARNER, (p, q)
    if semantics is Semantics.SLDP:
        return VarianceFormula.THM_3_10, (p, q)
    return VarianceFormula.ASYMPTOTIC, (0.0, 0.0)


def accuracy_of(mech: Mechanism, semantics: Semantics | str = "sldp", prior: Any = None) -> Accuracy:
    """The :class:`Accuracy` of ``mech`` at ``prior`` (default uniform) under ``semantics``.

    Examples
    --------
    >>> import designer
    >>> from designer import planning
    >>> accuracy = planning.accuracy_of(designer.Q_WRR(1.0), "sldp", [0.3, 0.7])
    >>> accuracy.per_share.round(6).tolist(), accuracy.formula  # Eq 1 at n = 1: 0.21 + p(1 - p)/(2p - 1)^2
    ([1.130674, 1.130674], <VarianceFormula.WARNER: 'warner'>)
    """
    from ..optimal.objectives import share_variances

    sem = Semantics.parse(semantics)
    pi = check_prior(prior, mech.k)
    per_share, kind = share_variances(mech, pi, sem)
    formula, pq = _closed_form(mech, sem)
    return Accuracy(mechanism=mech, semantics=sem, prior=pi, per_share=np.asarray(per_share, dtype=np.float64),
                    kind=kind, formula=formula, _pq=pq)


@dataclass(frozen=True)
class SampleSize(Result):
    """The smallest ``n`` whose intervals are at most ``width`` wide (half-width) at ``level``.

    A :class:`~designer.results.Result` whose ``status`` is :attr:`FitStatus.EXACT
    <designer.results.FitStatus.EXACT>`: ``n`` is the smallest integer meeting the variance formula, found by
    a closed form or an integer bisection, nothing fitted.

    Examples
    --------
    >>> import designer
    >>> from designer import planning
    >>> accuracy = planning.accuracy_of(designer.Q_WRR(1.0), "sldp", [0.3, 0.7])
    >>> size = planning.sample_size(accuracy, 0.02)
    >>> size.width, size.level, str(size.status)
    (0.02, 0.95, 'exact')
    """

    n: int
    width: float
    level: float
    achieved_width: float
    accuracy: Accuracy
    status: FitStatus = FitStatus.EXACT
    warnings: tuple[str, ...] = ()

    title = "Sample size"

    def __post_init__(self) -> None:
        self._check_status()

    def to_dict(self) -> dict[str, Any]:
        """``n``, ``width``, ``level``, ``achieved_width``, the ``variance`` per respondent and its formula."""
        return {"n": self.n, "width": self.width, "level": self.level, "achieved_width": self.achieved_width,
                "variance": self.accuracy.variance, "formula": self.accuracy.describe()}

    def table(self) -> TableData:
        """The figures of :meth:`to_dict` in one row."""
        return list(self.to_dict()), [list(self.to_dict().values())]


def sample_size(accuracy: Accuracy, width: float, level: float = 0.95) -> SampleSize:
    """Smallest ``n`` with ``z sqrt(Var_n) <= width`` for every share, ``z`` the normal quantile of ``level``.

    Asymptotic: ``n = ceil(z^2 V / width^2)`` with ``V`` the largest per-share variance per respondent. With an
    exact finite-n formula the smallest ``n`` meeting it is found by bisection (the variance decreases in n).

    Examples
    --------
    >>> import designer
    >>> from designer import planning
    >>> accuracy = planning.accuracy_of(designer.Q_WRR(1.0), "sldp", [0.3, 0.7])
    >>> size = planning.sample_size(accuracy, 0.02)  # every share within +-0.02 at 95%
    >>> size.n, bool(size.achieved_width <= 0.02)
    (10859, True)
    """
    width = check_real(width, "width", low=0.0, low_open=True)
    level = check_real(level, "level", low=0.0, high=1.0, low_open=True, high_open=True)
    z = two_sided_z(level)
    if not math.isfinite(accuracy.variance):
        raise PlanningError("a share is not identified by this mechanism (variance inf): no sample size gives "
                            "it an interval; choose a design that separates every input")
    n0 = max(1, math.ceil(z**2 * accuracy.variance / width**2 * (1 - 1e-12)))
    if n0 > N_MAX:
        raise PlanningError(f"more than {N_MAX:.0e} respondents would be needed (variance {accuracy.variance:.4g}"
                            " per respondent); raise the budget or the width")

    def ok(n: int) -> bool:
        return z * math.sqrt(accuracy.variance_at(n)) <= width

    if accuracy.formula is VarianceFormula.ASYMPTOTIC:
        n = n0
        while not ok(n):  # rounding guard
            n += 1
    else:
        lo, hi = 0, max(2, n0)
        while not ok(hi):
            lo, hi = hi, hi * 2
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if ok(mid) else (mid, hi)
        n = hi
    return SampleSize(n, width, level, z * math.sqrt(accuracy.variance_at(n)), accuracy)


def _share_prior(prior: NDArray[np.float64], index: int, value: float) -> NDArray[np.float64]:
    """``prior`` with share ``index`` set to ``value`` and the others scaled to fill the rest."""
    out = np.array(prior, dtype=np.float64)
    rest = 1.0 - out[index]
    out *= (1.0 - value) / rest if rest > 0 else 0.0
    if rest <= 0:
        out[:] = (1.0 - value) / (len(out) - 1)
    out[index] = value
    return out


def _variances(accuracy: Accuracy, index: int, values: list[float]) -> list[float]:
    from ..optimal.objectives import share_variances

    if accuracy.model is not None:
        return [float(accuracy.model(_share_prior(accuracy.prior, index, v))[index]) for v in values]
    return [float(share_variances(accuracy.mechanism, _share_prior(accuracy.prior, index, v),
                                  accuracy.semantics)[0][index]) for v in values]


def _power_setup(accuracy: Accuracy, detect: float, alpha: float, share: int, null: float | None,
                 groups: int, alternative: Any, null_variance: Any,
                 null_difference: float) -> tuple[float, float, float, float, Alternative]:
    """``(z, D, sd under the null, sd under the alternative, alternative)`` per respondent; ``z`` is the
    quantile of ``1 - alpha / 2`` (two-sided) or ``1 - alpha`` (one-sided)."""
    detect = check_real(detect, "detect", low=0.0, low_open=True)
    alpha = check_real(alpha, "alpha", low=0.0, high=1.0, low_open=True, high_open=True)
    alt = Alternative.parse(alternative, "alternative")
    pooled = NullVariance.parse(null_variance, "null_variance") is NullVariance.POOLED
    if groups not in (1, 2):
        raise PlanningError(f"groups must be 1 (one sample against a null value) or 2 (two groups), got {groups}")
    p0 = float(accuracy.prior[share]) if null is None else check_real(null, "null", low=0.0, high=1.0)
    sign = -1.0 if alt is Alternative.LESS else 1.0
    if groups == 1 and null_difference != 0.0:
        raise PlanningError("null_difference is the difference of two groups' shares under the null: give groups=2")
    q0 = p0 + check_real(null_difference, "null_difference", low=-1.0, high=1.0)  # the second group under the null
    p1 = q0 + sign * detect
    if not (0.0 < p1 < 1.0 and 0.0 <= q0 <= 1.0):
        raise PlanningError(f"the share {q0:g} {'-' if sign < 0 else '+'} detect {detect:g} leaves (0, 1); detect "
                            "a smaller difference")
    z = two_sided_z(1.0 - alpha) if alt is Alternative.TWO_SIDED else float(NormalDist().inv_cdf(1.0 - alpha))
    if groups == 1:
        v0, v1 = _variances(accuracy, share, [p0, p1])
        return z, detect, math.sqrt(v0), math.sqrt(v1), alt
    va, vq, v1 = _variances(accuracy, share, [p0, q0, p1])
    null_sd = math.sqrt(2 * _variances(accuracy, share, [(p0 + p1) / 2])[0]) if pooled else math.sqrt(va + vq)
    return z, detect, null_sd, math.sqrt(va + v1), alt


def _power(d: float, n: float, z: float, s0: float, s1: float, alt: Alternative) -> float:
    """Power of the Wald test with ``n`` respondents (per group): ``Phi((D sqrt(n) - z s0) / s1)``, plus the other
    tail ``Phi((-D sqrt(n) - z s0) / s1)`` when two-sided."""
    phi = NormalDist().cdf
    power = phi((d * math.sqrt(n) - z * s0) / s1)
    if alt is Alternative.TWO_SIDED:
        power += phi((-d * math.sqrt(n) - z * s0) / s1)
    return power


def power_sample_size(accuracy: Accuracy, detect: float, power: float = 0.8, alpha: float = 0.05, *,
                      share: int = 0, null: float | None = None, groups: int = 1, alternative: Any = "two-sided",
                      null_variance: Any = "pooled", null_difference: float = 0.0) -> int:
    """Respondents (per group when ``groups = 2``) for a Wald test at ``alpha`` to detect a share ``null +- detect``
    against ``null`` (one sample) or two groups' shares differing by ``null_difference + -detect`` against
    ``null_difference``, with probability ``power``. One-sided: ``n = ((z_{1-alpha} s0 + z_power s1) / D)^2``
    rounded up. Two-sided: the smallest ``n`` whose power, both tails counted, reaches ``power`` (at most the
    one-tail formula's ``n``, found by bisection: the power increases with ``n``).

    ``null_variance``: ``"pooled"`` (both groups at the mean of the alternative's shares) or ``"null"`` (each group
    at its null share, the R package rr's convention); docs/theory.md section 10.

    Examples
    --------
    Respondents to detect a share of 0.6 against 0.5 with power 0.8 (two-sided, alpha 0.05) through Warner's design
    at eps = 1, as plan.md's power curve shows:

    >>> import designer
    >>> from designer import planning
    >>> accuracy = planning.accuracy_of(designer.Q_WRR(1.0), "sldp", [0.5, 0.5])
    >>> planning.power_sample_size(accuracy, 0.1)
    917
    """
    power = check_real(power, "power", low=0.0, high=1.0, low_open=True, high_open=True)
    z, d, s0, s1, alt = _power_setup(accuracy, detect, alpha, share, null, groups, alternative, null_variance,
                                     null_difference)
    if not (math.isfinite(s0) and math.isfinite(s1)):
        raise PlanningError("the share is not identified by this mechanism (variance inf): no test has power")
    target = power * (1 - 1e-12)  # a power read off the formula at n gives n itself, whatever the last ulps
    one_tail = max(1, math.ceil(((z * s0 + NormalDist().inv_cdf(power) * s1) / d) ** 2 * (1 - 1e-12)))
    while _power(d, one_tail, z, s0, s1, Alternative.GREATER) < target:  # rounding guard
        one_tail += 1
    if alt is not Alternative.TWO_SIDED:
        return one_tail
    lo, hi = 0, one_tail  # power(hi) >= target; power(lo) < target (or lo = 0)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if _power(d, mid, z, s0, s1, alt) >= target else (mid, hi)
    return hi


def power_at(accuracy: Accuracy, n: int, detect: float, alpha: float = 0.05, *, share: int = 0,
             null: float | None = None, groups: int = 1, alternative: Any = "two-sided",
             null_variance: Any = "pooled", null_difference: float = 0.0) -> float:
    """Power of the same test with ``n`` respondents (per group): ``Phi((D sqrt(n) - z s0) / s1)``, both tails
    when two-sided; ``alpha`` (the test's level) when the share is not identified at the null or the alternative.

    Examples
    --------
    >>> import designer
    >>> from designer import planning
    >>> accuracy = planning.accuracy_of(designer.Q_WRR(1.0), "sldp", [0.5, 0.5])
    >>> round(planning.power_at(accuracy, 917, 0.1), 4)
    0.8002
    """
    n = check_int(n, "n", low=1)
    z, d, s0, s1, alt = _power_setup(accuracy, detect, alpha, share, null, groups, alternative, null_variance,
                                     null_difference)
    if not math.isfinite(s0 + s1):  # nothing to test with: the test rejects at its level
        return float(alpha)
    return _power(d, n, z, s0, s1, alt)


#: How a plan's design was chosen (``Plan.basis``), in words, in the order they are tried.
BASES = {basis: basis.note for basis in DesignBasis}


@dataclass
class DesignCache:
    """Certified designs of one problem at several budgets, each solved once (``len(results)`` counts them);
    the planners' only way to the design engine.

    A plan is made at ``prior`` (default the problem's) for the design that will be fielded: the problem as its
    file states it, designed at the file's own prior (a linear objective re-optimised at a skewed prior may
    answer "no" whatever the truth). A file that names no objective is designed for ``max_variance`` (a width on
    every share); where the file's design leaves a share unidentified, the ``max_variance`` design of the same
    structure at the planning prior is used. :meth:`basis` says which (a :class:`~designer.vocabulary.DesignBasis`).
    """

    problem: Any
    prior: Any = None
    results: dict[tuple[float, str], Any] = field(default_factory=dict)
    plans: dict[float, tuple[Any, Accuracy | None, DesignBasis]] = field(default_factory=dict)
    #: One warm-start session per basis (one problem each): priced answer sets and staircase columns carry from one
    #: budget to the next, as in a sweep.
    warm: dict[DesignBasis, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.prior = (np.asarray(self.problem.prior, dtype=np.float64) if self.prior is None
                      else check_prior(self.prior, self.problem.k))

    def _design(self, eps: float, basis: DesignBasis) -> Any:
        import warnings

        from .._internal.solvers import WarmStart
        from ..exceptions import DesignWarning
        from ..optimal.engine import design

        key = (round(float(eps), 12), basis)
        if key not in self.results:
            problem = self.problem.replace(epsilon=key[0])
            if basis is DesignBasis.MAX_VARIANCE_DEFAULT:
                problem = problem.replace(objective="max_variance", named_objective=False)
            elif basis is DesignBasis.MAX_VARIANCE_PRIOR:
                problem = problem.replace(objective="max_variance", prior=self.prior)
            with warnings.catch_warnings():  # a non-identifying design is an inf variance to a planner
                warnings.simplefilter("ignore", DesignWarning)
                self.results[key] = design(problem, warm=self.warm.setdefault(basis, WarmStart()))
        return self.results[key]

    def __call__(self, eps: float) -> Any:
        """The certified design planned at ``eps`` (see the class docstring)."""
        return self._planned(eps)[0]

    def _planned(self, eps: float) -> tuple[Any, Accuracy | None, DesignBasis]:
        """``(design, its Accuracy at prior or None, basis)`` at ``eps``, chosen once and kept in ``plans``."""
        from ..exceptions import InfeasibleDesignError, InvalidProblemError

        key = round(float(eps), 12)
        if key in self.plans:
            return self.plans[key]
        first: tuple[Any, Accuracy | None, DesignBasis] | None = None
        own = DesignBasis.FILE if self.problem.named_objective else DesignBasis.MAX_VARIANCE_DEFAULT
        for basis in (own, DesignBasis.MAX_VARIANCE_PRIOR):
            if (basis is DesignBasis.MAX_VARIANCE_PRIOR and self.problem.objective is Objective.MAX_VARIANCE
                    and np.array_equal(self.prior, self.problem.prior)):
                continue  # the same design as the file's
            try:
                result = self._design(key, basis)
            except InfeasibleDesignError:
                if basis is own:
                    raise
                continue
            except InvalidProblemError:
                if basis is own:
                    raise
                continue  # a structure the variance program cannot take (e.g. WLDP with a don't-know mass)
            acc = (None if result.mechanism is None
                   else accuracy_of(result.mechanism, self.problem.semantics, self.prior))
            if first is None:
                first = (result, acc, basis)
            if acc is None or math.isfinite(acc.variance):
                self.plans[key] = (result, acc, basis)
                return self.plans[key]
        assert first is not None
        self.plans[key] = first  # no design identifies every share: the file's, with its infinite variance
        return first

    def accuracy(self, eps: float) -> Accuracy:
        """The :class:`Accuracy` at ``prior`` of the design planned at ``eps``."""
        acc = self._planned(eps)[1]
        if acc is None:
            raise PlanningError("the design is too large to expand for planning; plan a smaller problem")
        return acc

    def basis(self, eps: float) -> DesignBasis:
        """How the design planned at ``eps`` was chosen."""
        return self._planned(eps)[2]

    @property
    def solved(self) -> int:
        """Designs solved so far."""
        return len(self.results)


@dataclass(frozen=True)
class BudgetPlan(Result):
    """The smallest budget that meets a target, with the design that meets it.

    A :class:`~designer.results.Result` whose ``status`` is :attr:`FitStatus.EXACT
    <designer.results.FitStatus.EXACT>`: a bisection over certified designs, exact to its stated tolerance.

    Attributes
    ----------
    epsilon : float
        The smallest budget (nats), exact to the search tolerance.
    accuracy : Accuracy
        Of the design at ``epsilon``, at the planning prior.
    design : DesignResult
        The certified design at ``epsilon``.
    basis : str
        How the design was chosen.
    designs_solved : int

    Examples
    --------
    >>> import designer
    >>> from designer import planning
    >>> warner = designer.DesignProblem(inputs=("yes", "no"), epsilon=1.0, objective="truthful")
    >>> budget = planning.smallest_budget(warner, 2000, 0.03, prior=[0.3, 0.7])
    >>> str(budget.status), budget.basis
    ('exact', <DesignBasis.FILE: 'file'>)
    """

    epsilon: float
    accuracy: Accuracy
    design: Any
    basis: DesignBasis
    designs_solved: int
    status: FitStatus = FitStatus.EXACT
    warnings: tuple[str, ...] = ()

    title = "Smallest budget"

    def __post_init__(self) -> None:
        self._check_status()

    def to_dict(self) -> dict[str, Any]:
        """``epsilon``, ``designs_solved``, ``design_basis`` (and its note) and the ``variance`` per respondent."""
        return {"epsilon": self.epsilon, "designs_solved": self.designs_solved, "design_basis": self.basis.value,
                "design_basis_note": self.basis.note, "variance": self.accuracy.variance}

    def table(self) -> TableData:
        """The figures of :meth:`to_dict` in one row."""
        return list(self.to_dict()), [list(self.to_dict().values())]


def smallest_budget(problem: Any, n: int, width: float, level: float = 0.95, *, prior: Any = None,
                    tol: float = EPS_TOL) -> BudgetPlan:
    """The smallest epsilon whose certified design meets ``width`` with ``n`` respondents at ``prior``.

    Bisection over designs (the reported variance decreases with the budget); the design at each budget is
    chosen as :class:`DesignCache` says. Epsilon is exact to ``tol``. Raises :class:`PlanningError` with the
    reason when even ``EPS_MAX`` cannot (e.g. a fixed don't-know mass puts a floor under the variance).

    Examples
    --------
    >>> import designer
    >>> from designer import planning
    >>> warner = designer.DesignProblem(inputs=("yes", "no"), epsilon=1.0, objective="truthful")
    >>> budget = planning.smallest_budget(warner, 2000, 0.03, prior=[0.3, 0.7])
    >>> round(budget.epsilon, 4), budget.designs_solved
    (1.739, 15)
    """
    from ..exceptions import InfeasibleDesignError

    n = check_int(n, "n", low=1)
    width = check_real(width, "width", low=0.0, low_open=True)
    z = two_sided_z(check_real(level, "level", low=0.0, high=1.0, low_open=True, high_open=True))
    designs = DesignCache(problem, prior)

    def meets(eps: float) -> bool:
        try:
            acc = designs.accuracy(eps)
        except InfeasibleDesignError:
            return False
        return z * math.sqrt(acc.variance_at(n)) <= width

    hi = 1.0
    while not meets(hi):
        if hi >= EPS_MAX:
            floor = designs.accuracy(EPS_MAX)
            needed = math.ceil(z**2 * floor.variance / width**2) if math.isfinite(floor.variance) else None
            why = (f"the variance stays above {floor.variance:.4g} per respondent even at eps = {EPS_MAX:g}"
                   + (f" (don't-know mass {problem.dont_know:g}: those answers carry no information)"
                      if problem.dont_know else ""))
            more = f"; at least {needed} respondents would be needed" if needed else ""
            raise PlanningError(f"no budget up to {EPS_MAX:g} reaches width {width:g} with n = {n}: {why}{more}")
        hi = min(hi * 2, EPS_MAX)
    lo = 0.0
    while hi - lo > tol:
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if meets(mid) else (mid, hi)
    return BudgetPlan(hi, designs.accuracy(hi), designs(hi), designs.basis(hi), designs.solved)


def price_of_privacy(problem: Any, epsilons: list[float], width: float, level: float = 0.95, *,
                     prior: Any = None) -> list[dict[str, Any]]:
    """For each budget: the planned design's variance per respondent at ``prior`` and the sample size for
    ``width``.

    Returns
    -------
    list of dict
        Keys ``epsilon``, ``variance`` (``inf`` when no design identifies every share), ``n`` (``None`` when not
        reachable), ``formula`` (``Accuracy.formula``, ``None`` without a design), ``basis`` (a
        :class:`~designer.vocabulary.DesignBasis`, ``None`` without a design) and ``reason`` (why ``n`` is
        ``None``, else ``""``).

    Examples
    --------
    >>> import designer
    >>> from designer import planning
    >>> warner = designer.DesignProblem(inputs=("yes", "no"), epsilon=1.0, objective="truthful")
    >>> rows = planning.price_of_privacy(warner, [0.5, 1.0, 2.0], 0.03, prior=[0.3, 0.7])
    >>> [(row["epsilon"], row["n"]) for row in rows]  # respondents for +-0.03 at each budget
    [(0.5, 17619), (1.0, 4827), (2.0, 1669)]
    """
    from ..exceptions import InfeasibleDesignError

    designs = DesignCache(problem, prior)
    rows = []
    for eps in epsilons:
        row: dict[str, Any] = {"epsilon": eps, "variance": math.inf, "n": None, "formula": None, "basis": None,
                               "reason": ""}
        try:
            acc = designs.accuracy(eps)
            row.update(variance=acc.variance, formula=acc.formula, basis=designs.basis(eps))
            row["n"] = sample_size(acc, width, level).n
        except (InfeasibleDesignError, PlanningError) as exc:
            row["reason"] = str(exc)
        rows.append(row)
    return rows
