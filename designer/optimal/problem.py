"""A design problem: inputs, frame, prior, budget, semantics, objective and structure (docs/theory.md section 5).

The same fields are accepted from Python (:class:`DesignProblem`) and from a TOML file
(:func:`designer.optimal.problem_toml.load_problem`)::

    name = "gwrr-dont-know"
    inputs = ["yes", "no"]        # X
    frame = ["yes", "no"]         # Y; defaults to inputs; x -> y(x) by equal labels
    prior = [0.5, 0.5]            # default uniform
    epsilon = 1.0
    semantics = "sldp"            # "sldp" | "wldp" | "both"
    objective = "variance"        # "variance" (default) | "max_variance" | "truthful" | "chi2" | "gain"
                                  # | "worst_case_utility" | "best_case_utility"
    priors = [[0.5, 0.5], [0.8, 0.2]]  # variance objectives: prior scenarios, the worst of them is made small
    [variance]                    # variance objectives: which estimates matter (default: every share alike)
    weights = { yes = 1 }         # weights of the shares (>= 0), or
    contrast = { yes = 1, no = -1 }   # one linear combination (contrasts = [{...}, ...] for several)
    invariant = false             # true: keep the prior's distribution (PRAM; singleton answers only)
    [strata]                      # invariant only: a prior to keep per stratum (randomize --strata COLUMN)
    north = [0.6, 0.4]
    [structure]                   # all optional
    dont_know = 0.2               # exact mass on the whole frame, every input (or dont_know_max = ...)
    lie_max = 0.3                 # mass on sets without the true answer, per input
    focal_sets = [["yes"], ["no"], ["yes", "no"]]
    [gain]                        # objective = "gain": gain of answering set E for input x
    yes = { "{yes}" = 1.0, "{yes,no}" = 0.4 }
    [utility]                     # worst/best_case_utility: u(x, y) of precise output y
    yes = { yes = 1.0, no = 0.0 }
"""

from __future__ import annotations

import dataclasses
import functools
import math
import numbers
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._internal.validation import check_labels, check_prior, format_set
from ..budget import Budget
from ..exceptions import InvalidProblemError
from ..vocabulary import Objective, Semantics
from .variance_keys import _as_list, _fail, check_priors, check_variance

__all__ = ["OBJECTIVES", "SEMANTICS", "DesignProblem"]

SEMANTICS = tuple(s.value for s in Semantics)
OBJECTIVES = tuple(o.value for o in Objective)
_TOP_KEYS = ("name", "inputs", "frame", "prior", "priors", "epsilon", "semantics", "objective", "structure", "gain",
             "utility", "answers", "invariant", "strata", "variance")
_STRUCTURE_KEYS = ("dont_know", "dont_know_max", "lie_max", "focal_sets")
_VARIANCE_KEYS = ("weights", "contrast", "contrasts")
#: Gains and utilities beyond this magnitude are refused (an LP solver cannot weigh 1e15 against 1).
MAX_TABLE_VALUE = 1e12
TABLE_VALUES = f"a number between -{MAX_TABLE_VALUE:g} and {MAX_TABLE_VALUE:g} (rescale the table)"
#: Largest frame with a [gain] table (one value per subset and input).
MAX_GAIN_FRAME = 20


def _real(value: object, where: str, key: str, expected: str, *, low: float | None = None,
          high: float | None = None, low_open: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise _fail(where, key, expected, value)
    try:
        x = float(value)
    except OverflowError:
        raise _fail(where, key, expected, f"an integer of {len(str(value))} digits") from None
    if math.isnan(x) or math.isinf(x):
        raise _fail(where, key, expected, value)
    if low is not None and (x < low or (low_open and x == low)):
        raise _fail(where, key, expected, value)
    if high is not None and x > high:
        raise _fail(where, key, expected, value)
    return x


def _label_mask(given: Any, frame: tuple[str, ...]) -> int | None:
    """A focal set as a bitmask of the frame: an integer as it is, a set of frame labels (or one label) as its
    mask; None for anything else (a label outside the frame, an empty set, a bool)."""
    if isinstance(given, bool):
        return None
    if isinstance(given, numbers.Integral):
        return int(given)
    labels = (given,) if isinstance(given, str) else given
    try:
        members = [frame.index(str(x)) if isinstance(x, str) else -1 for x in labels]
    except (TypeError, ValueError):
        return None
    if not members or min(members) < 0:
        return None
    return sum(1 << j for j in set(members))


@dataclass(frozen=True, eq=False)
class DesignProblem:
    """What to design: find a mechanism ``M`` (inputs x focal sets) maximising an objective under a budget.

    Parameters
    ----------
    inputs : sequence of str
        Input labels ``X`` (``k`` of them).
    epsilon : float
        Privacy budget in nats, > 0.
    frame : sequence of str, optional
        Output labels ``Y`` (default: the inputs). Input ``x`` corresponds to the frame label equal to it.
    prior : (k,) array_like, optional
        Input distribution ``pi`` (default uniform); weights the objective.
    semantics : {"sldp", "wldp", "both"}
        Shafer (Def 3.1), Walley (Def 3.13) or both.
    objective : {"variance", "max_variance", "truthful", "chi2", "gain", "worst_case_utility", \
"best_case_utility"}, optional
        ``variance`` (the default, except for ``invariant`` designs, whose default is ``truthful``): the mean
        asymptotic variance of the estimated shares per respondent at the prior, minimised (A-optimal, a convex
        program; docs/theory.md section 5.7); ``max_variance``: the largest of those variances, minimised;
        ``truthful``: probability of the exact true answer; ``chi2``: chi-square information of the answers
        (SLDP staircase LP); ``gain``: ``sum pi_x G[x, E] M[x, E]``; ``worst_case_utility`` /
        ``best_case_utility``: utility ``u(x, y)`` of the worst / best precise answer in the reported set
        (Walley semantics of a set answer).
    dont_know, dont_know_max : float, optional
        Exact, or largest, mass on the whole frame ("don't know") for every input.
    lie_max : float, optional
        Largest mass, per input, on sets that do not contain the true answer.
    focal_sets : sequence of (sequence of str, or int), optional
        Allowed focal sets (default: every nonempty subset of the frame): each a set of frame labels
        (``["b", "c"]``; one label alone is its singleton) or the bitmask of one (bit ``j`` for ``frame[j]``).
    gain : mapping {input: {set: value}} or (k, 2**l) array, optional
        For ``objective="gain"``; sets not listed gain 0.
    utility : mapping {input: {frame label: value}} or (k, l) array, optional
        For the utility objectives; missing entries are 0.
    name : str, optional
    invariant : bool, default False
        Keep the prior invariant: ``sum_x pi_x M[x, y] = pi_y`` (PRAM; singleton answers, the frame the inputs;
        :mod:`designer.optimal.invariant`, docs/theory.md section 12).
    answers : tuple of (word, labels) pairs, optional
        The words the field writes for a reported set (``[answers]``: ``"Weiss nicht" = ["yes", "no"]``), read
        by :mod:`designer.estimation.answers`; kept in a JSON mechanism file written from the design.
    strata : tuple of (stratum, prior) pairs, optional
        With ``invariant``: the prior to keep in each stratum of a release (``[strata]``; ``randomize --strata``
        designs one invariant mechanism per stratum, :func:`designer.optimal.invariant.design_strata`). Each prior
        has one positive share per input, summing to 1.
    variance_weights : mapping {input: weight} or (k,) array_like, optional
        Variance objectives: how much each share's variance counts (``[variance] weights``; >= 0, not all 0;
        inputs not named weigh 0). ``variance`` minimises ``sum_x w_x Var(pi_x) / sum_x w_x``, ``max_variance``
        the largest ``w_x Var(pi_x) / max w``; shares of weight 0 need not be identified.
    contrasts : sequence of mapping {input: coefficient} or (m, k) array_like, optional
        Variance objectives: linear combinations ``c . pi`` whose variances count instead of the shares'
        (``[variance] contrast`` / ``contrasts``; e.g. ``{"yes": 1, "no": -1}``); the mean (``variance``) or the
        largest (``max_variance``) of their variances is minimised. Not with ``variance_weights``.
    priors : sequence of (k,) array_like, optional
        Variance objectives: prior scenarios (``priors = [[...], [...]]``); the design minimises the worst of
        the objective's values over them, each reported in the result. ``prior`` then defaults to the first.
    named_objective : bool, optional
        Whether the objective was named (False when it is the default); a plan of a problem that names none is
        made with ``max_variance`` (:mod:`designer.planning`).

    Examples
    --------
    GWRR's problem: a yes/no question at eps = 1 whose respondents may say "don't know" with probability 0.2, designed
    for the most truthful answers (Cor 3.12):

    >>> import designer
    >>> problem = designer.DesignProblem(inputs=("yes", "no"), epsilon=1.0, objective="truthful", dont_know=0.2)
    >>> problem.k, problem.l, problem.frame, problem.prior.tolist()  # frame: the inputs; prior: uniform
    (2, 2, ('yes', 'no'), [0.5, 0.5])
    >>> round(designer.design(problem).objective_value, 6)
    0.584847
    >>> problem.replace(epsilon=2.0).epsilon
    2.0
    """

    inputs: tuple[str, ...]
    epsilon: float
    frame: tuple[str, ...] = ()
    prior: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))
    semantics: Semantics = Semantics.SLDP
    objective: Objective = None  # type: ignore[assignment]  # None: the default, resolved in __post_init__
    dont_know: float | None = None
    dont_know_max: float | None = None
    lie_max: float | None = None
    focal_sets: tuple[int, ...] | None = None
    gain: NDArray[np.float64] | None = None
    utility: NDArray[np.float64] | None = None
    name: str = ""
    source: str = ""
    answers: tuple[tuple[str, tuple[str, ...]], ...] = ()
    invariant: bool = False
    strata: tuple[tuple[str, tuple[float, ...]], ...] = ()
    #: After validation: read-only arrays ``(k,)``, ``(m, k)`` and ``(P, k)``; mappings and lists are accepted.
    variance_weights: Any = None
    contrasts: Any = None
    priors: Any = None
    named_objective: bool = True

    def __post_init__(self) -> None:
        """Validate every field once (one rule for file, flag and API); store labels, enums, read-only arrays."""
        where = f"{self.source}: " if self.source else ""
        set_ = object.__setattr__
        try:
            inputs = check_labels(self.inputs, "inputs", error=InvalidProblemError)
            frame = check_labels(self.frame or inputs, "frame", error=InvalidProblemError)
        except (InvalidProblemError, TypeError) as exc:
            raise InvalidProblemError(f"{where}{exc}") from None
        set_(self, "inputs", inputs)
        set_(self, "frame", frame)
        set_(self, "epsilon", _real(self.epsilon, where, "epsilon", "a finite number > 0", low=0,
                                    low_open=True))
        self._check_words(where)
        check_priors(self, where)
        try:
            given = self.prior if len(self.prior) else (self.priors[0] if self.priors is not None else None)
            prior = check_prior(given, len(inputs), "prior")
        except (TypeError, ValueError):
            raise _fail(where, "prior", f"{len(inputs)} non-negative numbers summing to 1 (one per input)",
                        _as_list(self.prior)) from None
        set_(self, "prior", prior)
        self._check_structure(where)
        self._check_objective(where)
        check_variance(self, where)
        if not isinstance(self.invariant, bool):
            raise _fail(where, "invariant", "true or false", self.invariant)
        if self.invariant:
            why = self.invariant_refusal()
            if why:
                raise InvalidProblemError(f"{where}key 'invariant': {why}")
            if self.focal_sets is None:  # the categories: every singleton of the frame
                set_(self, "focal_sets", tuple(1 << j for j in range(len(self.frame))))
        self._check_strata(where)

    def _check_strata(self, where: str) -> None:
        """``strata``: only with ``invariant``; names unique, each prior ``k`` positive shares summing to 1."""
        if not self.strata:
            set_ = object.__setattr__
            set_(self, "strata", ())
            return
        if not self.invariant:
            raise InvalidProblemError(f"{where}key 'strata': a prior per stratum is kept only by an invariant "
                                      "design; add invariant = true")
        out: list[tuple[str, tuple[float, ...]]] = []
        for item in self.strata:
            if not (isinstance(item, tuple | list) and len(item) == 2 and isinstance(item[0], str)):
                raise _fail(where, "strata", "(stratum name, prior) pairs", item)
            name, prior = item[0].strip(), item[1]
            key = f"strata.{name}"
            if not name or name in (n for n, _ in out):
                raise _fail(where, "strata", "each stratum named once (a non-empty name)", item[0])
            try:
                values = check_prior(prior, len(self.inputs), key)
            except (TypeError, ValueError):
                raise _fail(where, key, f"{len(self.inputs)} positive numbers summing to 1 (one per input)",
                            _as_list(prior)) from None
            if np.any(values <= 0):
                raise _fail(where, key, "every share > 0 (a category that never occurs has no row to keep)",
                            _as_list(prior))
            out.append((name, tuple(float(v) for v in values)))
        object.__setattr__(self, "strata", tuple(out))

    def _check_words(self, where: str) -> None:
        """``semantics`` and ``objective`` as enums (case-insensitive), or the choices in the error; no objective
        is the default: ``truthful`` for invariant designs (PRAM's measure) and one-input problems, else
        ``variance``."""
        set_ = object.__setattr__
        try:
            set_(self, "semantics", Semantics.parse(self.semantics))
        except ValueError:
            raise _fail(where, "semantics", f"one of {list(SEMANTICS)}", self.semantics) from None
        if self.objective is None:
            set_(self, "named_objective", False)
            set_(self, "objective", Objective.TRUTHFUL if self.invariant is True or len(self.inputs) < 2
                 else Objective.VARIANCE)
            return
        if not isinstance(self.named_objective, bool):
            raise _fail(where, "named_objective", "true or false", self.named_objective)
        try:
            set_(self, "objective", Objective.parse(self.objective))
        except ValueError:
            raise _fail(where, "objective", f"one of {list(OBJECTIVES)}", self.objective) from None

    def _check_structure(self, where: str) -> None:
        """Masses in [0, 1], don't-know exact or capped (not both), focal sets as sorted masks of the frame."""
        set_ = object.__setattr__
        for key in ("dont_know", "dont_know_max", "lie_max"):
            value = getattr(self, key)
            if value is not None:
                set_(self, key, _real(value, where, f"structure.{key}", "a number in [0, 1]", low=0, high=1.0))
        if self.dont_know is not None and self.dont_know_max is not None:
            raise InvalidProblemError(f"{where}key 'structure': give dont_know or dont_know_max, not both")
        if self.focal_sets is None:
            return
        full = (1 << len(self.frame)) - 1
        given = [_label_mask(m, self.frame) for m in self.focal_sets]
        if any(m is None for m in given):
            raise _fail(where, "structure.focal_sets", "sets of frame labels, or bitmasks (integers) of nonempty "
                        "subsets of the frame", list(self.focal_sets))
        masks = tuple(dict.fromkeys(int(m) for m in given if m is not None))
        if not masks or any(m <= 0 or m > full for m in masks):
            raise _fail(where, "structure.focal_sets", "nonempty subsets of the frame", list(self.focal_sets))
        set_(self, "focal_sets", tuple(sorted(masks)))
        if (self.dont_know or 0) > 0 and full not in masks:
            raise InvalidProblemError(
                f"{where}key 'structure.focal_sets': dont_know = {self.dont_know:g} puts mass on the "
                f"whole frame {format_set(self.frame)}, which is not among the focal sets; add it"
            )

    def _check_objective(self, where: str) -> None:
        """What the objective needs: two inputs (chi2), true answers (truthful, lie_max), its finite table."""
        set_ = object.__setattr__
        k, l = len(self.inputs), len(self.frame)
        if self.objective.estimation and k < 2:
            raise InvalidProblemError(f"{where}objective '{self.objective}' measures how well the shares of the "
                                      f"inputs can be estimated; it needs at least two inputs, got {k}")
        needs_truth = self.objective is Objective.TRUTHFUL or self.lie_max is not None
        if needs_truth and self.missing_truth():
            needs = self.objective.value if self.objective is Objective.TRUTHFUL else "lie_max"
            raise InvalidProblemError(
                f"{where}inputs {self.missing_truth()} have no frame label of the same name; "
                f"'{needs}' needs the true answer of every input in the frame"
            )
        if self.objective is Objective.GAIN:
            if self.gain is None:
                raise InvalidProblemError(f"{where}objective 'gain' needs a [gain] table")
            g = np.asarray(self.gain, dtype=float)
            if g.shape != (k, 1 << l) or not np.all(np.isfinite(g)):
                raise _fail(where, "gain", f"finite gains, a ({k}, {1 << l}) array", g.shape)
            g.setflags(write=False)
            set_(self, "gain", g)
        if self.objective.utility:
            if self.utility is None:
                raise InvalidProblemError(f"{where}objective '{self.objective}' needs a [utility] table")
            u = np.asarray(self.utility, dtype=float)
            if u.shape != (k, l) or not np.all(np.isfinite(u)):
                raise _fail(where, "utility", f"finite utilities, a ({k}, {l}) array", u.shape)
            u.setflags(write=False)
            set_(self, "utility", u)

    # ------------------------------------------------------------------ value
    #: The fields that make a problem what it is (``name`` and ``source`` only say where it came from).
    _VALUE_FIELDS = ("inputs", "epsilon", "frame", "prior", "semantics", "objective", "dont_know", "dont_know_max",
                     "lie_max", "focal_sets", "gain", "utility", "answers", "invariant", "strata", "variance_weights",
                     "contrasts", "priors")

    def _value(self) -> tuple[Any, ...]:
        return tuple(v.tobytes() + str(v.shape).encode() if isinstance(v, np.ndarray) else v
                     for v in (getattr(self, f) for f in self._VALUE_FIELDS))

    def __eq__(self, other: object) -> bool:
        """Two problems are equal when they state the same design problem (whatever their names or files)."""
        if not isinstance(other, DesignProblem):
            return NotImplemented
        return self._value() == other._value()

    def __hash__(self) -> int:
        return hash(self._value())

    @property
    def budget(self) -> Budget:
        """The budget as one value: the programs' coefficient ``e^eps`` and exact bounds on it."""
        return Budget(self.epsilon)

    @property
    def k(self) -> int:
        """Number of inputs."""
        return len(self.inputs)

    @property
    def l(self) -> int:
        """Number of frame labels."""
        return len(self.frame)

    def truth(self) -> NDArray[np.int64]:
        """Frame index ``y(x)`` of every input (``-1`` where the frame has no such label)."""
        return self._truth

    @functools.cached_property
    def _truth(self) -> NDArray[np.int64]:
        pos = {y: i for i, y in enumerate(self.frame)}
        out = np.array([pos.get(x, -1) for x in self.inputs], dtype=np.int64)
        out.setflags(write=False)
        return out

    def missing_truth(self) -> list[str]:
        """Inputs with no frame label of the same name."""
        return [x for x, t in zip(self.inputs, self.truth()) if t < 0]

    def family(self) -> NDArray[np.int64]:
        """Bitmasks of the allowed focal sets, sorted (default all nonempty subsets)."""
        return self._family

    @functools.cached_property
    def _family(self) -> NDArray[np.int64]:
        out = (np.asarray(self.focal_sets, dtype=np.int64) if self.focal_sets is not None
               else np.arange(1, 1 << self.l, dtype=np.int64))
        out.setflags(write=False)
        return out

    def replace(self, **changes: Any) -> DesignProblem:
        """A copy with some fields changed (validated again); an objective given here is a named one."""
        if "objective" in changes and "named_objective" not in changes:
            changes["named_objective"] = changes["objective"] is not None
        if changes.get("objective") is not None and not Objective.parse(changes["objective"]).variance:
            # the variance objectives' own keys do not travel to another objective
            changes.setdefault("variance_weights", None)
            changes.setdefault("contrasts", None)
            changes.setdefault("priors", None)
        return dataclasses.replace(self, **changes)

    def describe(self, budget: str | None = None) -> str:
        """One line summary; ``budget`` replaces the budget's text (e.g. a grid of budgets)."""
        eps = budget if budget is not None else f"eps={self.epsilon:g}"
        parts = [f"{self.name or 'problem'}: k={self.k}, l={self.l}, {eps}, {self.semantics.value}, "
                 f"objective {self.objective.value}" + ("" if self.named_objective else " (the default)")]
        if self.variance_weights is not None:
            parts.append("weights " + " ".join(f"{x}={w:g}" for x, w in zip(self.inputs, self.variance_weights)
                                               if w > 0))
        if self.contrasts is not None:
            parts.append(f"{len(self.contrasts)} contrast{'s' if len(self.contrasts) > 1 else ''}")
        if self.priors is not None:
            parts.append(f"{len(self.priors)} prior scenarios")
        for key in ("dont_know", "dont_know_max", "lie_max"):
            if getattr(self, key) is not None:
                parts.append(f"{key}={getattr(self, key):g}")
        if self.focal_sets is not None:
            parts.append(f"{len(self.focal_sets)} focal sets allowed")
        if self.invariant:
            parts.append("invariant (keeps the prior)")
        if self.strata:
            parts.append(f"{len(self.strata)} strata")
        return ", ".join(parts)

    def invariant_refusal(self) -> str:
        """Why this problem cannot be designed invariant ("" when it can)."""
        if set(self.frame) != set(self.inputs) or len(self.frame) != len(self.inputs):
            return ("invariant designs release a category of the same variable: the frame must be the inputs "
                    f"(frame {list(self.frame)}, inputs {list(self.inputs)})")
        sets = [m for m in (self.focal_sets or ()) if m & (m - 1)]
        if sets or self.dont_know is not None or self.dont_know_max is not None:
            return ("invariant designs have singleton answers only: a set ('don't know', 'one of') is not a "
                    "category of the released variable, so no distribution of categories can be kept; remove the "
                    "sets (structure.focal_sets, dont_know)")
        if self.objective.estimation:
            return (f"objective '{self.objective}' is optimised over staircase patterns, which do not keep a prior "
                    "invariant; use objective 'truthful' (the share of records released unchanged, PRAM's measure) "
                    "or a gain")
        if self.lie_max is not None:
            return "structure.lie_max is not supported with invariant (the mixing that certifies the table moves it)"
        if np.any(self.prior <= 0):
            return "invariant designs need every input's prior > 0 (a category that never occurs has no row to keep)"
        return ""


# The TOML reader lives in problem_toml (it needs DesignProblem, defined above).
