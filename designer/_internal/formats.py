"""Mechanism files: the CSV and JSON layouts, read and written (docs/guide/design.md, "Mechanism files").

CSV: a header ``input,{yes},{no},{yes,no}`` and one row of masses per input; a mass is a decimal
number (``0.25``, ``2.5e-3``) or a fraction ``a/b``. JSON: an object with ``inputs``, ``frame``,
``focal_sets`` (lists of frame labels) and ``matrix`` (one list per input), or a list of CSV-like
records. This module turns text into plain data (labels, headers, a float matrix) and back; the
:class:`~designer.mechanism.Mechanism` checks what the data mean.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .. import setfunctions as sf
from ..exceptions import InvalidMechanismError
from .validation import format_set

__all__ = ["MechanismData", "number", "parse_csv", "parse_json", "to_csv_text", "to_json_dict"]

#: A decimal number as CSV and JSON cells write it: ASCII digits, optional sign, point and exponent.
_DECIMAL = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")
#: A fraction ``a/b`` of ASCII integers.
_FRACTION = re.compile(r"[+-]?[0-9]+\s*/\s*[0-9]+")
#: Digits allowed in one integer of a fraction (beyond them a float cannot hold the value anyway).
_MAX_DIGITS = 400
#: Rows of a mass matrix must sum to 1 within this absolute tolerance.
ROW_SUM_TOL = 1e-9
#: JSON nesting deeper than this is refused before parsing (a mechanism file nests three levels).
_MAX_JSON_DEPTH = 64


@dataclass(frozen=True)
class MechanismData:
    """A mechanism as a file holds it: labels, focal-set headers and masses (not yet validated)."""

    inputs: list[str]
    columns: list[str]
    matrix: NDArray[np.float64]
    frame: list[str] | None = None


def number(value: Any, where: str, *, source: str | None = None) -> float:
    """A mass cell as a float: a number, a decimal string or a fraction ``a/b``.

    Raises
    ------
    InvalidMechanismError
        Naming ``source`` and ``where``, for anything else (booleans, ``0.7_5``, non-ASCII digits,
        a fraction beyond the range of a float).
    """
    prefix = f"{source}: " if source else ""
    if isinstance(value, bool):
        raise InvalidMechanismError(f"{prefix}{where}: expected a number, got {value!r}")
    if isinstance(value, (int, np.integer)):
        try:
            return float(value)
        except OverflowError:
            raise InvalidMechanismError(f"{prefix}{where}: the integer is too large for a mass") from None
    if isinstance(value, (float, np.floating)):
        return float(value)
    if isinstance(value, str):
        s = value.strip()
        if not s:
            raise InvalidMechanismError(f"{prefix}{where}: empty cell; write 0 for no mass")
        if _DECIMAL.fullmatch(s):
            return float(s)
        if s.lower() in ("nan", "inf", "-inf", "+inf", "infinity", "-infinity"):
            return float(s)  # refused with the mass checks, which say why
        if _FRACTION.fullmatch(s):
            num, den = (part.strip() for part in s.split("/"))
            if max(len(num), len(den)) > _MAX_DIGITS:
                raise InvalidMechanismError(f"{prefix}{where}: the fraction has more than {_MAX_DIGITS} digits")
            if int(den) == 0:
                raise InvalidMechanismError(f"{prefix}{where}: {s!r} divides by zero")
            try:
                return float(Fraction(int(num), int(den)))
            except OverflowError:
                raise InvalidMechanismError(f"{prefix}{where}: {s!r} is beyond the range of a float") from None
        raise InvalidMechanismError(f"{prefix}{where}: {s!r} is not a number (write 0.25 or 1/4)")
    raise InvalidMechanismError(f"{prefix}{where}: expected a number, got {value!r}")


def merge_braces(fields: list[str]) -> list[str]:
    """Rejoin header fields split inside an unquoted ``{yes,no}`` (hand-written CSV)."""
    out: list[str] = []
    pending: list[str] | None = None
    for field in fields:
        if pending is not None:
            pending.append(field)
            if field.endswith("}"):
                out.append(",".join(pending))
                pending = None
        elif field.startswith("{") and not field.endswith("}"):
            pending = [field]
        else:
            out.append(field)
    if pending is not None:
        out.append(",".join(pending))  # unbalanced: parse_set reports it
    return out


def parse_csv(text: str, *, source: str = "<csv>") -> MechanismData:
    """Parse the CSV layout written by :func:`to_csv_text`."""
    try:
        rows = [r for r in csv.reader(io.StringIO(text)) if any(cell.strip() for cell in r)]
    except csv.Error as exc:
        raise InvalidMechanismError(f"{source}: not valid CSV: {exc}") from None
    if not rows:
        raise InvalidMechanismError(f"{source}: the file is empty; expected a header input,{{...}},...")
    header = merge_braces([h.strip() for h in rows[0]])
    if not header or header[0].lower() != "input":
        raise InvalidMechanismError(
            f"{source}: the first column must be 'input', got {header[0] if header else ''!r}"
        )
    if len(header) < 2:
        raise InvalidMechanismError(f"{source}: no focal-set columns after 'input'")
    if len(rows) < 2:
        raise InvalidMechanismError(f"{source}: a header but no rows of mass")
    inputs: list[str] = []
    matrix: list[list[float]] = []
    for line, r in enumerate(rows[1:], start=2):
        if len(r) != len(header):
            raise InvalidMechanismError(f"{source}: row {line} has {len(r)} fields, the header has {len(header)}")
        inputs.append(r[0].strip())
        matrix.append([number(c, f"row {line}, column {header[j + 1]!r}", source=source)
                       for j, c in enumerate(r[1:])])
    return MechanismData(inputs, header[1:], np.array(matrix, dtype=np.float64))


def _depth(text: str) -> int:
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def load_json_text(text: str, *, source: str) -> Any:
    """``json.loads`` with one-line errors: invalid JSON, too deep, numbers beyond a float."""
    if _depth(text) > _MAX_JSON_DEPTH:
        raise InvalidMechanismError(f"{source}: JSON nested more than {_MAX_JSON_DEPTH} levels deep")

    def big_int(s: str) -> float:
        if len(s.lstrip("-")) > _MAX_DIGITS:
            raise InvalidMechanismError(f"{source}: an integer of more than {_MAX_DIGITS} digits")
        return float(int(s))

    try:
        return json.loads(text, parse_int=big_int, parse_constant=float)
    except json.JSONDecodeError as exc:
        raise InvalidMechanismError(
            f"{source}: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
        ) from None
    except InvalidMechanismError:
        raise
    except (OverflowError, ValueError) as exc:
        raise InvalidMechanismError(f"{source}: {exc}") from None


def _label(value: Any, what: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise InvalidMechanismError(f"{what}: labels must be strings, got {value!r}")
    if isinstance(value, float):
        if not value.is_integer():
            raise InvalidMechanismError(f"{what}: labels must be strings, got {value!r}")
        value = int(value)
    return str(value)


def parse_json(obj: Any, *, source: str = "<json>") -> MechanismData | list[dict[str, Any]]:
    """The JSON layout as :class:`MechanismData`, or the list of records of the record layout."""
    if isinstance(obj, list):
        if not obj or not all(isinstance(r, dict) for r in obj):
            raise InvalidMechanismError(f"{source}: expected a list of records {{\"input\": ..., \"{{yes}}\": ...}}")
        return obj
    if not isinstance(obj, dict):
        raise InvalidMechanismError(f"{source}: expected a JSON object with keys inputs, focal_sets, matrix")
    missing = [key for key in ("inputs", "matrix") if key not in obj]
    if missing or ("focal_sets" not in obj and "columns" not in obj):
        need = missing + ([] if "focal_sets" in obj or "columns" in obj else ["focal_sets"])
        raise InvalidMechanismError(f"{source}: missing key(s) {need}")
    frame = obj.get("frame")
    if frame is not None:
        if not isinstance(frame, list):
            raise InvalidMechanismError(f"{source}: frame must be a list of labels")
        frame = [_label(v, f"{source}: frame") for v in frame]
    if "focal_sets" in obj:
        sets = obj["focal_sets"]
        if not isinstance(sets, list) or not all(isinstance(s, list) for s in sets):
            raise InvalidMechanismError(f"{source}: focal_sets must be a list of lists of frame labels")
        columns = []
        for s in sets:
            labels = [_label(x, f"{source}: focal_sets") for x in s]
            bad = [x for x in labels if any(c in x for c in "{},")]
            if bad:
                raise InvalidMechanismError(f"{source}: focal_sets: label {bad[0]!r} contains a brace or comma; "
                                            "write each label as its own string, e.g. [\"a\", \"b\"]")
            if len(set(labels)) != len(labels):
                raise InvalidMechanismError(f"{source}: focal_sets: {labels} names a label twice")
            columns.append(format_set(labels))
    else:
        columns = [str(c) for c in obj["columns"]]
    matrix = obj["matrix"]
    if not isinstance(matrix, list) or not all(isinstance(r, list) for r in matrix):
        raise InvalidMechanismError(f"{source}: matrix must be a list of rows (lists of numbers)")
    values = [[number(v, f"matrix row {i + 1}", source=source) for v in r] for i, r in enumerate(matrix)]
    if not isinstance(obj["inputs"], list):
        raise InvalidMechanismError(f"{source}: inputs must be a list of labels")
    if len({len(r) for r in values}) > 1:
        raise InvalidMechanismError(f"{source}: matrix rows have different lengths")
    inputs = [_label(v, f"{source}: inputs") for v in obj["inputs"]]
    arr = np.array(values, dtype=np.float64) if values and values[0] else np.zeros((len(values), 0))
    return MechanismData(inputs, columns, arr, frame)


def to_csv_text(inputs: Sequence[str], columns: Sequence[str], matrix: NDArray[np.float64]) -> str:
    """The CSV layout: header ``input,{yes},...``, one row per input, shortest exact floats."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["input", *columns])
    for x, row in zip(inputs, matrix):
        writer.writerow([x, *(repr(float(v)) for v in row)])
    return buf.getvalue()


def to_json_dict(inputs: Sequence[str], frame: Sequence[str], focal_sets: Sequence[Sequence[str]],
                 columns: Sequence[str], matrix: NDArray[np.float64]) -> dict[str, Any]:
    """The JSON layout: ``inputs``, ``frame``, ``focal_sets``, ``columns`` and ``matrix`` (rows = inputs)."""
    return {"inputs": list(inputs), "frame": list(frame), "focal_sets": [list(s) for s in focal_sets],
            "columns": list(columns), "matrix": [[float(v) for v in row] for row in matrix]}


def check_masses(matrix: NDArray[np.float64], masks: Sequence[int], inputs: Sequence[str],
                  frame: Sequence[str]) -> None:
    """Refuse NaN, infinite or negative masses, mass on the empty set, and rows not summing to 1."""
    def set_name(j: int) -> str:
        m = masks[j]
        return format_set(sf.mask_labels(m, frame)) if m else "{} (the empty set)"

    bad = ~np.isfinite(matrix)
    if bad.any():
        i, j = map(int, np.argwhere(bad)[0])
        raise InvalidMechanismError(
            f"mass of input {inputs[i]!r} on {set_name(j)} is {float(matrix[i, j])}; masses must be finite numbers"
        )
    neg = matrix < 0
    if neg.any():
        i, j = map(int, np.argwhere(neg)[0])
        raise InvalidMechanismError(
            f"mass of input {inputs[i]!r} on {set_name(j)} is negative ({float(matrix[i, j])!r}); masses must be >= 0"
        )
    if 0 in masks:
        j = list(masks).index(0)
        if np.any(matrix[:, j] != 0):
            i = int(np.flatnonzero(matrix[:, j])[0])
            raise InvalidMechanismError(
                f"input {inputs[i]!r} puts mass {float(matrix[i, j])!r} on the empty set (column 0); "
                "a mass function must give the empty set 0"
            )
    sums = matrix.sum(axis=1)
    off = np.abs(sums - 1.0) > ROW_SUM_TOL
    if off.any():
        i = int(np.flatnonzero(off)[0])
        raise InvalidMechanismError(
            f"mass rows must sum to 1 (within {ROW_SUM_TOL:g}), row {inputs[i]!r} sums to {float(sums[i])!r}"
        )
