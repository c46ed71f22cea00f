"""A design problem: inputs, frame, prior, budget, semantics, objective and structure (docs/theory.md section 5).

The same fields are accepted from Python (:class:`DesignProblem`) and from a TOML file
(:func:`load_problem`)::

    name = "gwrr-dont-know"
    inputs = ["yes", "no"]        # X
    frame = ["yes", "no"]         # Y; defaults to inputs; x -> y(x) by equal labels
    prior = [0.5, 0.5]            # default uniform
    epsilon = 1.0
    semantics = "sldp"            # "sldp" | "wldp" | "both"
    objective = "truthful"        # "truthful" | "chi2" | "gain" | "worst_case_utility" | "best_case_utility"
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
import difflib
import functools
import math
import numbers
import os
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .. import setfunctions as sf
from .._io import read_text
from .._validation import check_labels, check_prior, format_set, parse_set
from ..budget import Budget
from ..exceptions import InvalidProblemError
from ..vocabulary import Objective, Semantics

__all__ = ["OBJECTIVES", "SEMANTICS", "DesignProblem", "load_problem", "parse_problem"]

SEMANTICS = tuple(s.value for s in Semantics)
OBJECTIVES = tuple(o.value for o in Objective)
_TOP_KEYS = ("name", "inputs", "frame", "prior", "epsilon", "semantics", "objective", "structure", "gain",
             "utility", "answers")
_STRUCTURE_KEYS = ("dont_know", "dont_know_max", "lie_max", "focal_sets")
#: Gains and utilities beyond this magnitude are refused (an LP solver cannot weigh 1e15 against 1).
MAX_TABLE_VALUE = 1e12
TABLE_VALUES = f"a number between -{MAX_TABLE_VALUE:g} and {MAX_TABLE_VALUE:g} (rescale the table)"
#: Largest frame with a [gain] table (one value per subset and input).
MAX_GAIN_FRAME = 20


def _fail(where: str, key: str, expected: str, got: object) -> InvalidProblemError:
    shown = repr(got)
    if len(shown) > 80:
        shown = f"{shown[:40]}... ({len(shown)} characters)"
    return InvalidProblemError(f"{where}key '{key}': expected {expected}, got {shown}")


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
    objective : {"truthful", "chi2", "gain", "worst_case_utility", "best_case_utility"}
        ``truthful``: probability of the exact true answer; ``chi2``: chi-square information of the
        answers, i.e. estimation accuracy (SLDP staircase LP); ``gain``: ``sum pi_x G[x, E] M[x, E]``;
        ``worst_case_utility`` / ``best_case_utility``: utility ``u(x, y)`` of the worst / best precise
        answer in the reported set (Walley semantics of a set answer).
    dont_know, dont_know_max : float, optional
        Exact, or largest, mass on the whole frame ("don't know") for every input.
    lie_max : float, optional
        Largest mass, per input, on sets that do not contain the true answer.
    focal_sets : sequence of sequence of str, optional
        Allowed focal sets (default: every nonempty subset of the frame).
    gain : mapping {input: {set: value}} or (k, 2**l) array, optional
        For ``objective="gain"``; sets not listed gain 0.
    utility : mapping {input: {frame label: value}} or (k, l) array, optional
        For the utility objectives; missing entries are 0.
    name : str, optional
    answers : tuple of (word, labels) pairs, optional
        The words the field writes for a reported set (``[answers]``: ``"Weiss nicht" = ["yes", "no"]``), read
        by :mod:`designer.answers`; kept in a JSON mechanism file written from the design.
    """

    inputs: tuple[str, ...]
    epsilon: float
    frame: tuple[str, ...] = ()
    prior: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))
    semantics: Semantics = Semantics.SLDP
    objective: Objective = Objective.TRUTHFUL
    dont_know: float | None = None
    dont_know_max: float | None = None
    lie_max: float | None = None
    focal_sets: tuple[int, ...] | None = None
    gain: NDArray[np.float64] | None = None
    utility: NDArray[np.float64] | None = None
    name: str = ""
    source: str = ""
    answers: tuple[tuple[str, tuple[str, ...]], ...] = ()

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
        try:
            prior = check_prior(self.prior if len(self.prior) else None, len(inputs), "prior")
        except (TypeError, ValueError):
            raise _fail(where, "prior", f"{len(inputs)} non-negative numbers summing to 1 (one per input)",
                        _as_list(self.prior)) from None
        set_(self, "prior", prior)
        self._check_structure(where)
        self._check_objective(where)

    def _check_words(self, where: str) -> None:
        """``semantics`` and ``objective`` as enums (case-insensitive), or the choices in the error."""
        set_ = object.__setattr__
        try:
            set_(self, "semantics", Semantics.parse(self.semantics))
        except ValueError:
            raise _fail(where, "semantics", f"one of {list(SEMANTICS)}", self.semantics) from None
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
        if any(isinstance(m, bool) or not isinstance(m, numbers.Integral) for m in self.focal_sets):
            raise _fail(where, "structure.focal_sets", "bitmasks (integers) of nonempty subsets of the frame",
                        list(self.focal_sets))
        masks = tuple(dict.fromkeys(int(m) for m in self.focal_sets))
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
        if self.objective is Objective.CHI2 and k < 2:
            raise InvalidProblemError(f"{where}objective 'chi2' measures how well the shares of the inputs can be "
                                      f"estimated; it needs at least two inputs, got {k}")
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
                     "lie_max", "focal_sets", "gain", "utility", "answers")

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
        """A copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)

    def describe(self, budget: str | None = None) -> str:
        """One line summary; ``budget`` replaces the budget's text (e.g. a grid of budgets)."""
        eps = budget if budget is not None else f"eps={self.epsilon:g}"
        parts = [f"{self.name or 'problem'}: k={self.k}, l={self.l}, {eps}, {self.semantics.value}, "
                 f"objective {self.objective.value}"]
        for key in ("dont_know", "dont_know_max", "lie_max"):
            if getattr(self, key) is not None:
                parts.append(f"{key}={getattr(self, key):g}")
        if self.focal_sets is not None:
            parts.append(f"{len(self.focal_sets)} focal sets allowed")
        return ", ".join(parts)


# ---------------------------------------------------------------------------- TOML
def _check_keys(table: Mapping[str, Any], known: Sequence[str], where: str, prefix: str = "") -> None:
    for key in table:
        if key not in known:
            close = difflib.get_close_matches(key, known, n=1)
            hint = f" (did you mean '{prefix}{close[0]}'?)" if close else f"; known keys: {', '.join(known)}"
            raise InvalidProblemError(f"{where}unknown key '{prefix}{key}'{hint}")


def _labels(value: object, where: str, key: str) -> list[str]:
    if not isinstance(value, list) or not value:
        raise _fail(where, key, "a non-empty list of labels", value)
    for v in value:
        if isinstance(v, bool) or not isinstance(v, (str, int)):
            raise _fail(where, key, "labels (strings)", v)
    return [str(v) for v in value]


def _set_mask(raw: object, frame: Sequence[str], where: str, key: str) -> int:
    if isinstance(raw, str):
        try:
            labels = parse_set(raw) if raw.strip().startswith("{") else (raw.strip(),)
        except ValueError as exc:
            raise InvalidProblemError(f"{where}key '{key}': {exc}") from None
    elif isinstance(raw, list):
        if not all(isinstance(v, str) for v in raw):
            raise _fail(where, key, "a list of frame labels (strings)", raw)
        labels = tuple(v.strip() for v in raw)
        if len(set(labels)) != len(labels):
            raise _fail(where, key, "a set naming each label once", raw)
    else:
        raise _fail(where, key, "a set of frame labels such as [\"yes\", \"no\"] or \"{yes,no}\"", raw)
    unknown = [lab for lab in labels if lab not in frame]
    if unknown:
        raise InvalidProblemError(f"{where}key '{key}': label(s) {unknown} are not in the frame {list(frame)}")
    if not labels:
        raise _fail(where, key, "a nonempty set", raw)
    return sf.subset_mask(labels, frame)


def _table_rows(value: object, inputs: Sequence[str], where: str, key: str) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise _fail(where, key, "a table with one sub-table per input", value)
    unknown = [x for x in value if x not in inputs]
    if unknown:
        raise InvalidProblemError(f"{where}key '{key}': {unknown} are not inputs; the inputs are {list(inputs)}")
    for x, row in value.items():
        if not isinstance(row, dict):
            raise _fail(where, f"{key}.{x}", "a table {set = value}", row)
    return value


def _as_list(values: object) -> list[object]:
    try:
        return [float(v) for v in np.ravel(np.asarray(values, dtype=object))]
    except (TypeError, ValueError, OverflowError):
        return [values]


def parse_problem(data: Mapping[str, Any], *, source: str = "") -> DesignProblem:
    """Build a :class:`DesignProblem` from parsed TOML (a dict), with errors naming ``source`` and the key."""
    where = f"{source}: " if source else ""
    if not isinstance(data, Mapping):
        raise InvalidProblemError(f"{where}expected a table of settings")
    _check_keys(data, _TOP_KEYS, where)
    for required in ("inputs", "epsilon"):
        if required not in data:
            raise InvalidProblemError(f"{where}missing key '{required}'")
    inputs = _labels(data["inputs"], where, "inputs")
    frame = _labels(data["frame"], where, "frame") if "frame" in data else list(inputs)
    name = data.get("name", Path(source).stem if source else "")
    if not isinstance(name, str):
        raise _fail(where, "name", "a string", name)
    prior = _prior(data.get("prior"), where)
    for key in ("semantics", "objective"):
        if key in data and not isinstance(data[key], str):
            raise _fail(where, key, "a string", data[key])
    structure = data.get("structure", {})
    if not isinstance(structure, dict):
        raise _fail(where, "structure", "a table", structure)
    _check_keys(structure, _STRUCTURE_KEYS, where, "structure.")
    focal = _focal_sets(structure, frame, where)
    gain = _gain(data["gain"], inputs, frame, where) if "gain" in data else None
    answers = _answer_words(data.get("answers", {}), frame, where)
    utility = _utility(data["utility"], inputs, frame, where) if "utility" in data else None
    if len(set(inputs)) != len(inputs):
        raise InvalidProblemError(f"{where}key 'inputs': duplicate labels in {inputs}")
    try:
        return DesignProblem(
            inputs=tuple(inputs),
            frame=tuple(frame),
            prior=np.asarray(prior, dtype=float) if prior is not None else np.zeros(0),
            epsilon=data["epsilon"],
            semantics=data.get("semantics", "sldp"),
            objective=data.get("objective", "truthful"),
            dont_know=structure.get("dont_know"),
            dont_know_max=structure.get("dont_know_max"),
            lie_max=structure.get("lie_max"),
            focal_sets=focal,
            gain=gain,
            utility=utility,
            name=name,
            source=source,
            answers=answers,
        )
    except TypeError as exc:
        raise InvalidProblemError(f"{where}{exc}") from None


def _prior(prior: object, where: str) -> list[float] | None:
    """``prior``: numbers, one per input (range and sum checked by the problem)."""
    if prior is None:
        return None
    if not isinstance(prior, list) or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in prior):
        raise _fail(where, "prior", "a list of numbers, one per input", prior)
    return [_real(v, where, "prior", "numbers in [0, 1] summing to 1") for v in prior]


def _focal_sets(structure: Mapping[str, Any], frame: Sequence[str], where: str) -> tuple[int, ...] | None:
    """``structure.focal_sets``: the allowed answer sets as masks over ``frame``."""
    if "focal_sets" not in structure:
        return None
    raw = structure["focal_sets"]
    if not isinstance(raw, list) or not raw:
        raise _fail(where, "structure.focal_sets", "a non-empty list of sets", raw)
    return tuple(_set_mask(s, frame, where, "structure.focal_sets") for s in raw)


def _gain(table: object, inputs: Sequence[str], frame: Sequence[str], where: str) -> NDArray[np.float64]:
    """``[gain]``: per input, a value per answered set, as a ``(k, 2**l)`` array (0 where not given)."""
    if len(frame) > MAX_GAIN_FRAME:
        raise InvalidProblemError(
            f"{where}key 'gain': a gain table has one entry per subset of the frame (2**{len(frame)}); "
            f"it is supported up to {MAX_GAIN_FRAME} answers; use worst_case_utility or best_case_utility"
        )
    gain = np.zeros((len(inputs), 1 << len(frame)))
    for x, row in _table_rows(table, inputs, where, "gain").items():
        seen: dict[int, str] = {}
        for s, v in row.items():
            mask = _set_mask(s, frame, where, f"gain.{x}")
            if mask in seen:
                raise InvalidProblemError(f"{where}key 'gain.{x}': {seen[mask]!r} and {s!r} are the same set; "
                                          "give each set once")
            seen[mask] = s
            gain[inputs.index(x), mask] = _real(v, where, f"gain.{x}.{s}", TABLE_VALUES, low=-MAX_TABLE_VALUE,
                                                high=MAX_TABLE_VALUE)
    return gain


def _utility(table: object, inputs: Sequence[str], frame: Sequence[str], where: str) -> NDArray[np.float64]:
    """``[utility]``: per input, a value per frame label, as a ``(k, l)`` array (0 where not given)."""
    utility = np.zeros((len(inputs), len(frame)))
    for x, row in _table_rows(table, inputs, where, "utility").items():
        for y, v in row.items():
            if y not in frame:
                raise InvalidProblemError(f"{where}key 'utility.{x}': '{y}' is not in the frame {list(frame)}")
            utility[inputs.index(x), frame.index(y)] = _real(v, where, f"utility.{x}.{y}", TABLE_VALUES,
                                                             low=-MAX_TABLE_VALUE, high=MAX_TABLE_VALUE)
    return utility


def _answer_words(table: Any, frame: Sequence[str], where: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """``[answers]``: the words the field writes for a reported set, ``"Weiss nicht" = ["yes", "no"]``."""
    if not isinstance(table, dict):
        raise _fail(where, "answers", 'a table of words, e.g. "Weiss nicht" = ["yes", "no"]', table)
    out = []
    for word, labels in table.items():
        if not isinstance(labels, list) or not labels or not all(isinstance(x, str) for x in labels):
            raise _fail(where, f"answers.{word}", "a list of frame labels (the reported set)", labels)
        unknown = [x for x in labels if x not in frame]
        if unknown:
            raise InvalidProblemError(f"{where}key 'answers.{word}': {unknown} not in the frame {list(frame)}")
        out.append((str(word), tuple(labels)))
    return tuple(out)


def read_toml(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The parsed TOML of ``path``; an unreadable or malformed file is one :class:`InvalidProblemError` line."""
    p = Path(path)
    text = read_text(p, error=InvalidProblemError)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InvalidProblemError(f"{p}: not valid TOML: {exc}") from None


def load_problem(path: str | os.PathLike[str]) -> DesignProblem:
    """Read a design problem from a TOML file.

    Raises
    ------
    InvalidProblemError
        Unreadable or malformed file, unknown keys, wrong types or values; the message names the file
        and the key and says what was expected.
    """
    return parse_problem(read_toml(path), source=str(path))
