"""Text output shared by the CLI and the result types: numbers in tables, JSON and CSV.

Numbers leave the package as Python floats (never ``np.float64(...)``): tables round them, CSV and
JSON keep every digit (``repr`` of a float reads back to the same float), and JSON writes the values
it cannot hold (infinity, NaN) as the strings ``"inf"``, ``"-inf"`` and ``"nan"``.
"""

from __future__ import annotations

import csv
import io
import math
import numbers
from collections.abc import Sequence
from typing import Any

__all__ = ["cell", "fmt", "json_number", "json_tree", "json_value", "render_csv", "render_json", "render_table"]


def json_number(x: float | None) -> float | str | None:
    """``x`` as a JSON value: a float, or ``"inf"`` / ``"-inf"`` / ``"nan"``; ``None`` (a figure that could not
    be computed) stays ``null``."""
    if x is None:
        return None
    x = float(x)
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if math.isnan(x):
        return "nan"
    return x


def json_value(v: Any) -> Any:
    """A table cell as a JSON value: numbers through :func:`json_number`, bools and strings as they are."""
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return v
    if isinstance(v, numbers.Integral):
        return int(v)
    if isinstance(v, numbers.Real):
        return json_number(float(v))
    return v


def json_tree(v: Any) -> Any:
    """``v`` with every number in it (in dicts, lists and tuples, at any depth) through :func:`json_value`; numpy
    arrays and scalars become lists and Python numbers."""
    if isinstance(v, dict):
        return {str(k): json_tree(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [json_tree(x) for x in v]
    if hasattr(v, "tolist") and not isinstance(v, (str, bytes)):
        return json_tree(v.tolist())
    return json_value(v)


def render_json(obj: Any) -> str:
    """``obj`` as strict JSON (RFC 8259: no ``NaN`` or ``Infinity``; those are the strings of
    :func:`json_number`), indented by two spaces. Every command's JSON output goes through here."""
    import json

    return json.dumps(json_tree(obj), indent=2, allow_nan=False)


def fmt(x: float, digits: int = 6) -> str:
    """A number for a human-readable table (``digits`` significant digits)."""
    x = float(x)
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return f"{x:.{digits}g}"


def cell(v: Any) -> Any:
    """A CSV cell: floats with every digit (``repr`` of a Python float), other values unchanged."""
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return "" if v is None else v
    if isinstance(v, numbers.Integral):
        return int(v)
    if isinstance(v, numbers.Real):
        return repr(float(v))
    return v


def render_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A plain aligned text table with a rule under the header."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[j]) for r in cells) for j in range(len(headers))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def render_csv(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """One CSV table (header and rows; floats at full precision), without a final newline."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(headers)
    writer.writerows([[cell(v) for v in r] for r in rows])
    return buf.getvalue().rstrip("\n")
