"""Design problems from TOML files: :func:`load_problem` and :func:`parse_problem` (the keys are documented in
:mod:`designer.optimal.problem`); every error one :class:`InvalidProblemError` line naming the file and the key."""

from __future__ import annotations

import difflib
import os
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .. import setfunctions as sf
from .._internal.bundled import resolve
from .._internal.io import read_text
from .._internal.validation import parse_set
from ..exceptions import InvalidProblemError
from .problem import (
    _STRUCTURE_KEYS,
    _TOP_KEYS,
    _VARIANCE_KEYS,
    MAX_GAIN_FRAME,
    MAX_TABLE_VALUE,
    TABLE_VALUES,
    DesignProblem,
    _fail,
    _real,
)

__all__ = ["load_problem", "parse_problem", "read_toml"]


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


def parse_problem(data: Mapping[str, Any], *, source: str = "") -> DesignProblem:
    """Build a :class:`DesignProblem` from parsed TOML (a dict), with errors naming ``source`` and the key.

    Examples
    --------
    >>> from designer.optimal import parse_problem
    >>> problem = parse_problem({"name": "warner", "inputs": ["yes", "no"], "epsilon": 1.0})
    >>> problem.name, problem.frame
    ('warner', ('yes', 'no'))
    >>> parse_problem({"inputs": ["yes", "no"], "epsilon": -1}, source="warner.toml")
    Traceback (most recent call last):
    ...
    designer.exceptions.InvalidProblemError: warner.toml: key 'epsilon': expected a finite number > 0, got -1
    """
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
    weights, contrasts = _variance_table(data.get("variance"), where)
    priors = _priors(data.get("priors"), where)
    if len(set(inputs)) != len(inputs):
        raise InvalidProblemError(f"{where}key 'inputs': duplicate labels in {inputs}")
    try:
        return DesignProblem(
            inputs=tuple(inputs),
            frame=tuple(frame),
            prior=np.asarray(prior, dtype=float) if prior is not None else np.zeros(0),
            epsilon=data["epsilon"],
            semantics=data.get("semantics", "sldp"),
            objective=data.get("objective"),  # type: ignore[arg-type]  # None: the default, resolved by the problem
            dont_know=structure.get("dont_know"),
            dont_know_max=structure.get("dont_know_max"),
            lie_max=structure.get("lie_max"),
            focal_sets=focal,
            gain=gain,
            utility=utility,
            name=name,
            source=source,
            answers=answers,
            invariant=data.get("invariant", False),
            strata=_strata(data.get("strata"), where),
            variance_weights=weights,
            contrasts=contrasts,
            priors=priors,
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


def _priors(priors: object, where: str) -> np.ndarray | None:
    """``priors``: a list of prior scenarios, each a list of numbers (one per input; checked by the problem)."""
    if priors is None:
        return None
    if (not isinstance(priors, list) or not priors
            or not all(isinstance(row, list) and row and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                                              for v in row) for row in priors)):
        raise _fail(where, "priors", "a list of prior scenarios, each a list of numbers (one per input)", priors)
    if len({len(row) for row in priors}) > 1:
        raise _fail(where, "priors", "scenarios of equal length (one number per input)", priors)
    return np.array([[_real(v, where, "priors", "numbers in [0, 1] summing to 1") for v in row] for row in priors])


def _variance_table(table: object, where: str) -> tuple[dict[str, Any] | None, list[dict[str, Any]] | None]:
    """``[variance]``: ``weights = {input = weight}``, or ``contrast = {input = coefficient}`` / ``contrasts = [...]``
    (values checked by the problem)."""
    if table is None:
        return None, None
    if not isinstance(table, dict):
        raise _fail(where, "variance", "a table: weights = {input = weight} or contrast = {input = coefficient}",
                    table)
    _check_keys(table, _VARIANCE_KEYS, where, "variance.")
    weights = table.get("weights")
    if weights is not None and not isinstance(weights, dict):
        raise _fail(where, "variance.weights", "a table {input = weight}, e.g. { yes = 1 }", weights)
    if "contrast" in table and "contrasts" in table:
        raise InvalidProblemError(f"{where}key 'variance': give contrast or contrasts, not both")
    contrasts = table.get("contrasts", [table["contrast"]] if "contrast" in table else None)
    if contrasts is not None and (not isinstance(contrasts, list) or not contrasts
                                  or not all(isinstance(c, dict) for c in contrasts)):
        key = "variance.contrasts" if "contrasts" in table else "variance.contrast"
        raise _fail(where, key, "a table {input = coefficient} (a list of them for contrasts), e.g. "
                    "{ yes = 1, no = -1 }", contrasts)
    return weights, contrasts


def _strata(strata: object, where: str) -> tuple[tuple[str, tuple[float, ...]], ...]:
    """``[strata]``: one prior (a list of numbers, one per input) per stratum name (checked by the problem)."""
    if strata is None:
        return ()
    if not isinstance(strata, dict) or not strata:
        raise _fail(where, "strata", "a table with one prior per stratum, e.g. north = [0.6, 0.4]", strata)
    out = []
    for name, prior in strata.items():
        if not isinstance(prior, list) or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                                  for v in prior):
            raise _fail(where, f"strata.{name}", "a list of numbers, one per input", prior)
        out.append((str(name), tuple(_real(v, where, f"strata.{name}", "numbers in (0, 1] summing to 1")
                                     for v in prior)))
    return tuple(out)


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
    """Read a design problem from a TOML file, or one that comes with designer by its bare name (``"warner"``).

    Raises
    ------
    InvalidProblemError
        Unreadable or malformed file, unknown keys, wrong types or values; the message names the file
        and the key and says what was expected.

    Examples
    --------
    >>> import os, tempfile
    >>> import designer
    >>> folder = tempfile.TemporaryDirectory()
    >>> path = os.path.join(folder.name, "warner.toml")
    >>> with open(path, "w") as file:
    ...     _ = file.write('name = "warner"\\ninputs = ["yes", "no"]\\nepsilon = 1.0\\nobjective = "truthful"\\n')
    >>> problem = designer.load_problem(path)
    >>> problem.name, problem.inputs, problem.epsilon
    ('warner', ('yes', 'no'), 1.0)
    >>> folder.cleanup()
    """
    path = resolve(path, "problem", error=InvalidProblemError)  # a file that exists, else designer's own by name
    return parse_problem(read_toml(path), source=str(path))
