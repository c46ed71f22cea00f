"""The words of the package: semantics, losses and objectives, one enum each (docs/theory.md, section 1).

Every public function accepts these enums or their string values (``"sldp"``, ``"walley"``, ...); the
parsers below turn a string into the enum once, at the edge, with one message for every caller.

>>> from designer import Semantics, Loss
>>> Semantics.parse("WLDP").losses
(<Loss.WALLEY: 'walley'>,)
>>> Loss.parse("wldp")  # a semantics names the loss it bounds
<Loss.WALLEY: 'walley'>
"""

from __future__ import annotations

from enum import StrEnum
from typing import Self

from .exceptions import InvalidArgumentError

__all__ = ["ESTIMATORS", "OBJECTIVE_MEANINGS", "Alternative", "Covariance", "DesignBasis", "Loss",
           "NoncomplianceScope", "NullVariance", "Objective", "PlanMode", "PlanSource", "Semantics", "VarianceFormula",
           "WeightKind"]

#: Estimators of the shares that ``simulate`` compares: maximum likelihood (EM), the linear inversion of a
#: square Bayesian mechanism, and Eq 2 of the paper for ``Q_2x3``.
ESTIMATORS = ("mle", "inversion", "eq2")



class _Word(StrEnum):
    """A word of the vocabulary: parsed from a string once, at the edge where it enters."""

    @classmethod
    def parse(cls, value: object, what: str | None = None) -> Self:
        """``value`` as a member (case and surrounding space ignored); ``ValueError`` naming ``what``
        (default: the enum's name) and the choices otherwise."""
        if isinstance(value, cls):
            return value
        if isinstance(value, str):
            try:
                return cls(value.strip().lower())
            except ValueError:
                pass
        choices = ", ".join(repr(m.value) for m in cls)
        raise InvalidArgumentError(f"{what or cls.__name__.lower()} must be one of {choices}, got {value!r}")


class Semantics(_Word):
    """Which privacy definition a mechanism must meet.

    ``SLDP``: Shafer's (Def 3.1, ratios of masses); ``WLDP``: Walley's (Def 3.13, ratios of plausibility
    to belief); ``BOTH``: both at once.

    Examples
    --------
    Parsed once where a word enters (case and spaces ignored); each semantics names the losses it bounds:

    >>> from designer import Semantics
    >>> Semantics.parse(" WLDP ") is Semantics.WLDP
    True
    >>> [loss.value for loss in Semantics.BOTH.losses]
    ['shafer', 'walley']
    >>> Semantics.parse("ldp")
    Traceback (most recent call last):
    ...
    designer.exceptions.InvalidArgumentError: semantics must be one of 'sldp', 'wldp', 'both', got 'ldp'
    """

    SLDP = "sldp"
    WLDP = "wldp"
    BOTH = "both"

    @property
    def losses(self) -> tuple[Loss, ...]:
        """The losses a mechanism of this semantics must keep within the budget."""
        return {Semantics.SLDP: (Loss.SHAFER,), Semantics.WLDP: (Loss.WALLEY,),
                Semantics.BOTH: (Loss.SHAFER, Loss.WALLEY)}[self]

    @property
    def shafer(self) -> bool:
        """Whether the Shafer loss is bounded (SLDP or both)."""
        return self is not Semantics.WLDP

    @property
    def walley(self) -> bool:
        """Whether the Walley loss is bounded (WLDP or both)."""
        return self is not Semantics.SLDP


class Loss(_Word):
    """A privacy loss of an evidential mechanism (Def 3.1, Lemma 3.2, Def 3.13).

    Examples
    --------
    >>> from designer import Loss
    >>> Loss.parse("wldp"), Loss.WALLEY.symbols  # Walley's loss is a ratio of plausibility to belief (Def 3.13)
    (<Loss.WALLEY: 'walley'>, ('pl', 'bel'))
    """

    SHAFER = "shafer"
    BEL = "bel"
    PL = "pl"
    WALLEY = "walley"

    @classmethod
    def parse(cls, value: object, what: str | None = None) -> Loss:
        """``value`` as a :class:`Loss`; a semantics name stands for its loss (``sldp`` -> ``shafer``)."""
        if isinstance(value, Semantics) and value is not Semantics.BOTH:
            return value.losses[0]
        text = value.strip().lower() if isinstance(value, str) else value
        aliases = {"sldp": cls.SHAFER, "wldp": cls.WALLEY}
        if isinstance(text, str) and text in aliases:
            return aliases[text]
        return super().parse(value, what)

    @property
    def symbols(self) -> tuple[str, str]:
        """Numerator and denominator functions of the ratio (``("pl", "bel")`` for Walley)."""
        return {Loss.SHAFER: ("m", "m"), Loss.BEL: ("bel", "bel"), Loss.PL: ("pl", "pl"),
                Loss.WALLEY: ("pl", "bel")}[self]


class Objective(_Word):
    """What a design maximises (docs/theory.md, section 5).

    ``VARIANCE``: the mean variance of the estimated shares (minimised; A-optimal); ``MAX_VARIANCE``: the largest
    of them (minimised; minimax); ``TRUTHFUL``: the probability of answering exactly the true answer; ``CHI2``: the
    chi-square information of the answers (a proxy for accuracy); ``GAIN``: a gain table over answered sets;
    ``WORST_CASE_UTILITY`` / ``BEST_CASE_UTILITY``: the utility of the worst / best precise answer in the
    reported set.

    Examples
    --------
    >>> from designer import Objective
    >>> Objective.parse("chi2").linear, Objective.TRUTHFUL.linear
    (False, True)
    >>> Objective.WORST_CASE_UTILITY.utility  # reads the problem's [utility] table
    True
    """

    VARIANCE = "variance"
    MAX_VARIANCE = "max_variance"
    TRUTHFUL = "truthful"
    CHI2 = "chi2"
    GAIN = "gain"
    WORST_CASE_UTILITY = "worst_case_utility"
    BEST_CASE_UTILITY = "best_case_utility"

    @property
    def meaning(self) -> str:
        """What the objective measures, in plain words."""
        return OBJECTIVE_MEANINGS[self.value]

    @property
    def linear(self) -> bool:
        """Whether the objective is linear in the masses (every objective but ``chi2`` and the variances)."""
        return self not in (Objective.CHI2, Objective.VARIANCE, Objective.MAX_VARIANCE)

    @property
    def variance(self) -> bool:
        """Whether the objective is a variance of the estimated shares (``variance``, ``max_variance``)."""
        return self in (Objective.VARIANCE, Objective.MAX_VARIANCE)

    @property
    def minimised(self) -> bool:
        """Whether a design makes the objective small (the variances) rather than large (every other one)."""
        return self.variance

    @property
    def estimation(self) -> bool:
        """Whether the objective is about estimating the shares (``variance``, ``max_variance``, ``chi2``): such
        designs report sets of true answers, built from the staircase patterns (docs/theory.md, section 5)."""
        return self.variance or self is Objective.CHI2

    @property
    def utility(self) -> bool:
        """Whether the objective reads a ``[utility]`` table."""
        return self in (Objective.WORST_CASE_UTILITY, Objective.BEST_CASE_UTILITY)


#: Each objective in plain words (``designer design --help``, docs/guide/which-design.md).
OBJECTIVE_MEANINGS = {
    "variance": "mean variance of the estimated shares (per respondent, at the prior), made as small as the budget "
                "allows: the most accurate estimate of every share; the default",
    "max_variance": "largest variance of the estimated shares (per respondent, at the prior), made as small as "
                    "possible: the same interval width for every share; what a survey plan needs",
    "truthful": "probability that a respondent reports exactly the true answer (prior-weighted): the "
                "classic randomized-response criterion",
    "chi2": "chi-square information of the answers, a proxy for accuracy (it can lump rare answers together at "
            "a skewed prior and then estimate nothing about them; prefer variance)",
    "gain": "expected value of a [gain] table over the reported sets (your own scoring)",
    "worst_case_utility": "expected utility of the worst precise answer in the reported set ([utility] table)",
    "best_case_utility": "expected utility of the best precise answer in the reported set ([utility] table)",
}


class VarianceFormula(_Word):
    """How a plan's variance at ``n`` respondents is computed (docs/theory.md, section 10).

    ``WARNER``: Warner's exact finite-n variance (Eq 1, Ex 3.7); ``THM_3_10``: the exact variance of Eq 2's
    estimator given someone answered (Thm 3.10); ``ASYMPTOTIC``: the MLE's asymptotic variance ``V / n``.

    Examples
    --------
    A plan names the formula behind its variance:

    >>> import designer
    >>> from designer.vocabulary import VarianceFormula
    >>> warner = designer.DesignProblem(inputs=("yes", "no"), epsilon=1.0, objective="truthful")
    >>> plan = designer.plan(warner, prior="yes=0.3,no=0.7", width=0.02)
    >>> plan.accuracy.formula is VarianceFormula.WARNER, plan.formula
    (True, "exact: Warner's Eq 1 (Ex 3.7)")
    """

    WARNER = "warner"
    THM_3_10 = "thm_3_10"
    ASYMPTOTIC = "asymptotic"

    def describe(self) -> str:
        """The formula in words, as plans print it."""
        return {VarianceFormula.WARNER: "exact: Warner's Eq 1 (Ex 3.7)",
                VarianceFormula.THM_3_10: "exact: Thm 3.10 with 1/(1 - q3^n) (Eq 2's estimator, given someone "
                                          "answered)",
                VarianceFormula.ASYMPTOTIC: "asymptotic MLE variance V/n"}[self]


class PlanMode(_Word):
    """What a survey plan computes (docs/theory.md, section 10): the respondents for a width, the smallest budget
    for a width at a given ``n``, the respondents for a power, or a questionnaire's budget split.

    Examples
    --------
    >>> import designer
    >>> from designer.vocabulary import PlanMode
    >>> warner = designer.DesignProblem(inputs=("yes", "no"), epsilon=1.0, objective="truthful")
    >>> designer.plan(warner, width=0.05).mode is PlanMode.SAMPLE_SIZE
    True
    >>> designer.plan(warner, detect=0.1).mode is PlanMode.POWER
    True
    """

    SAMPLE_SIZE = "sample_size"
    SMALLEST_BUDGET = "smallest_budget"
    POWER = "power"
    ALLOCATION = "allocation"


class PlanSource(_Word):
    """What ``designer plan`` was given: a questionnaire (several questions sharing a budget), a design problem
    (designed at each budget the plan tries) or a fixed mechanism.

    Examples
    --------
    >>> import designer
    >>> from designer.vocabulary import PlanSource
    >>> PlanSource(designer.plan(designer.Q_WRR(1.0), width=0.05).source) is PlanSource.MECHANISM
    True
    """

    SURVEY = "survey"
    PROBLEM = "problem"
    MECHANISM = "mechanism"


class DesignBasis(_Word):
    """How a plan chose the design it plans for (docs/theory.md, section 10): the problem file's own design; the
    ``max_variance`` design at the file's prior when the file names no objective (a width on every share is met
    by making the largest share variance small); or, when the file's design leaves a share unidentified, the
    ``max_variance`` design of the same structure at the planning prior. :attr:`note` says it in words (the plan's
    JSON ``design_basis_note``).

    Examples
    --------
    >>> import designer
    >>> from designer.vocabulary import DesignBasis
    >>> warner = designer.DesignProblem(inputs=("yes", "no"), epsilon=1.0, objective="truthful")
    >>> designer.plan(warner, width=0.05).basis is DesignBasis.FILE
    True
    >>> DesignBasis.FILE.note
    "the file's design, certified at each budget at the file's own prior and kept fixed"
    >>> DesignBasis.FILE.words  # nothing to add in a table's note column
    ''
    >>> designer.plan(designer.DesignProblem(inputs=("yes", "no"), epsilon=1.0), width=0.05).basis
    <DesignBasis.MAX_VARIANCE_DEFAULT: 'max_variance_default'>
    """

    FILE = "file"
    MAX_VARIANCE_DEFAULT = "max_variance_default"
    MAX_VARIANCE_PRIOR = "max_variance_prior"

    @property
    def note(self) -> str:
        """The basis in a sentence."""
        return {
            DesignBasis.FILE: "the file's design, certified at each budget at the file's own prior and kept fixed",
            DesignBasis.MAX_VARIANCE_DEFAULT: "the file names no objective: designed for max_variance (the largest "
                                              "share variance made as small as the budget allows, what a width on "
                                              "every share needs) at the file's own prior",
            DesignBasis.MAX_VARIANCE_PRIOR: "the file's design does not identify every share here; the max_variance "
                                            "design (the largest share variance made small, same structure) at the "
                                            "planning prior instead",
        }[self]

    @property
    def words(self) -> str:
        """The basis in a table's note column ("" for the file's own design)."""
        return {DesignBasis.FILE: "",
                DesignBasis.MAX_VARIANCE_DEFAULT: "max_variance design (the file names no objective)",
                DesignBasis.MAX_VARIANCE_PRIOR: "max_variance design at the planning prior (the file's does not "
                                                "identify every share)"}[self]


class Covariance(_Word):
    """How the standard errors of a fit are computed (docs/theory.md, section 9.1).

    ``OIM``: the inverse observed information (the default; with frequency weights, that of the replicated
    rows). ``OPG``: the inverse outer product of the per-respondent scores (what the R package rr reports).
    ``ROBUST``: the sandwich ``I^-1 B I^-1`` with ``B`` the outer product of the (weighted) scores, summed
    within clusters when there are clusters (Huber-White; the only choice under sampling weights).

    Examples
    --------
    The default for a survey settles on ``oim``, or ``robust`` under sampling weights or clusters:

    >>> from designer.vocabulary import Covariance
    >>> Covariance.settle(None, sampling_weights=False, clusters=False)
    <Covariance.OIM: 'oim'>
    >>> Covariance.settle(None, sampling_weights=True, clusters=False)
    <Covariance.ROBUST: 'robust'>
    """

    OIM = "oim"
    OPG = "opg"
    ROBUST = "robust"

    @classmethod
    def settle(cls, value: object, *, sampling_weights: bool, clusters: bool) -> Covariance:
        """The choice for a survey: ``value`` (None: ``oim``, or ``robust`` under sampling weights or clusters,
        which admit nothing else: the information of a pseudo-likelihood, or of correlated answers, is not the
        variance)."""
        sandwich_only = sampling_weights or clusters
        chosen = (cls.ROBUST if sandwich_only else cls.OIM) if value is None else cls.parse(value, "cov")
        if sandwich_only and chosen is not cls.ROBUST:
            why = "clusters" if clusters else "sampling weights"
            raise InvalidArgumentError(f"cov {chosen.value!r} is not valid with {why} (the information of a "
                                       "pseudo-likelihood, or of correlated answers, is not the variance): use cov "
                                       "robust")
        return chosen


class WeightKind(_Word):
    """What a weight column means: ``SAMPLING`` (inverse inclusion probabilities: a pseudo-likelihood with a
    sandwich variance) or ``FREQUENCY`` (a row stands for that many identical respondents: exactly the fit of
    the replicated rows).

    Examples
    --------
    >>> from designer.vocabulary import WeightKind
    >>> WeightKind.parse("Frequency"), str(WeightKind.SAMPLING)
    (<WeightKind.FREQUENCY: 'frequency'>, 'sampling')
    """

    SAMPLING = "sampling"
    FREQUENCY = "frequency"


class NoncomplianceScope(_Word):
    """Who may give one answer whatever the randomizer says (docs/theory.md section 8.2): ``CARRIERS`` of the
    trait (the stochastic lie detector) or ``EVERYONE`` (cheater detection); ``UNRELATED`` is the
    unrelated-question design's unknown prevalence, the other one-share model the same fitter estimates.

    Examples
    --------
    >>> from designer.vocabulary import NoncomplianceScope
    >>> NoncomplianceScope.parse("carriers") is NoncomplianceScope.CARRIERS
    True
    """

    CARRIERS = "carriers"
    EVERYONE = "everyone"
    UNRELATED = "unrelated"


class Alternative(_Word):
    """The alternative hypothesis of a test of a share: ``TWO_SIDED`` (the share differs from its null; power
    counts both tails), ``GREATER`` (it is larger), ``LESS`` (it is smaller).

    Examples
    --------
    >>> from designer.vocabulary import Alternative
    >>> Alternative.parse("two-sided"), Alternative.parse("greater")
    (<Alternative.TWO_SIDED: 'two-sided'>, <Alternative.GREATER: 'greater'>)
    """

    TWO_SIDED = "two-sided"
    GREATER = "greater"
    LESS = "less"


class NullVariance(_Word):
    """Where a two-group test takes its variance under the null: ``POOLED`` (both groups at the mean of the
    alternative's shares) or ``NULL`` (each group at its stated null share, the R package rr's convention).

    Examples
    --------
    >>> from designer.vocabulary import NullVariance
    >>> NullVariance.parse("null") is NullVariance.NULL
    True
    """

    POOLED = "pooled"
    NULL = "null"
