"""What a cell of text means: designer's one set of typing rules for the covariates of a regression, the same for
every source that gives text (a CSV file, read by :mod:`designer.tables.csv_text`).

A cell is read without its surrounding space. A missing cell is an empty one or one of :data:`MISSING_WORDS` (R's
``NA``, spreadsheet and database spellings). A column whose other cells are all whole numbers (ASCII digits, an
optional sign) is ``int64`` (``float64`` when a cell is missing, the missing ones NaN), one whose cells are all
decimal numbers (``1.5``, ``3e2``, ``inf``) ``float64``, one of only true/false words (no cell missing) ``bool``;
any other column is text, an object array of ``str`` with ``None`` where a cell is missing.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["MISSING_WORDS", "TRUTH_WORDS", "complete", "typed", "typed_columns"]

#: The cells read as a missing value.
MISSING_WORDS = frozenset({"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
                           "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"})
#: The cells read as true or false in a column of only them.
TRUTH_WORDS = {"True": True, "TRUE": True, "true": True, "False": False, "FALSE": False, "false": False}


def _text(values: list[Any]) -> NDArray[np.object_]:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


#: A cell that is one of :data:`MISSING_WORDS`, whole (Arrow's regular expressions are RE2's).
_MISSING = "^(?:" + "|".join(re.escape(w) for w in sorted(MISSING_WORDS)) + ")$"


def _numpy(array: Any, dtype: Any) -> NDArray[Any]:
    """An Arrow column of numbers or booleans without nulls as a numpy array, from its data buffer (pyarrow's own
    ``to_numpy``, like ``pyarrow.array`` of Python objects, imports pandas: a fifth of a second)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    array = array.combine_chunks() if isinstance(array, pa.ChunkedArray) else array
    if pa.types.is_boolean(array.type):
        return _numpy(pc.cast(array, pa.uint8()), np.uint8).astype(bool)
    width = np.dtype(dtype).itemsize
    if len(array) == 0:
        return np.zeros(0, dtype=dtype)
    return np.frombuffer(array.buffers()[1], dtype=dtype, count=len(array), offset=array.offset * width).copy()


def typed(column: Any, *, text: bool = False) -> NDArray[Any]:
    """An Arrow column of text as the numpy array its cells mean (the module's rules); ``text``: kept as text,
    missing cells ``None``.

    Examples
    --------
    >>> import pyarrow as pa
    >>> from designer.tables.cells import typed
    >>> typed(pa.array(["18", "+41", " 007"])).tolist(), typed(pa.array(["1.5", "NA", "3e2"])).tolist()
    ([18, 41, 7], [1.5, nan, 300.0])
    >>> typed(pa.array(["north", "", " south "])).tolist(), typed(pa.array(["12", "NA"])).tolist()
    (['north', None, 'south'], [12.0, nan])
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    cells = pc.utf8_trim_whitespace(column)
    missing = pc.match_substring_regex(cells, pattern=_MISSING)
    if text:
        return _text([None if a else w for a, w in zip(missing.to_pylist(), cells.to_pylist())])
    absent = _numpy(missing, bool)
    unsigned = pc.replace_substring_regex(pc.replace_substring_regex(cells, pattern=_MISSING, replacement="0"),
                                          pattern=r"^\+", replacement="")
    for kind, dtype in ((pa.int64(), np.int64), (pa.float64(), np.float64)):
        if kind == pa.int64() and not pc.all(pc.match_substring_regex(unsigned, pattern=r"^-?[0-9]+$")).as_py():
            continue
        try:
            numbers = pc.cast(unsigned, kind)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            continue
        values = _numpy(numbers, dtype)
        if not absent.any():
            return values
        values = values.astype(np.float64)
        values[absent] = np.nan
        return values
    words = cells.to_pylist()
    if not absent.any() and all(w in TRUTH_WORDS for w in words):
        return np.array([TRUTH_WORDS[w] for w in words], dtype=bool)
    return _text([None if a else w for a, w in zip(absent.tolist(), words)])


def typed_columns(table: Any, text: frozenset[str] | set[str] = frozenset()) -> dict[str, NDArray[Any]]:
    """Every column of an Arrow table of text, :func:`typed` (the ``text`` ones kept as text).

    Examples
    --------
    >>> import pyarrow as pa
    >>> from designer.tables.cells import typed_columns
    >>> columns = typed_columns(pa.table({"answer": ["1", "2"], "age": ["34", "51"]}), {"answer"})
    >>> columns["answer"].tolist(), columns["age"].dtype.name
    (['1', '2'], 'int64')
    """
    return {name: typed(table.column(name), text=name in text) for name in table.column_names}


def _number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def complete(values: NDArray[Any], *, numbers: bool = False) -> bool:
    """Whether a :func:`typed` column has no missing cell; with ``numbers``, also no text cell that Python reads as a
    number (a text column holding one may be a typo for a number column).

    Examples
    --------
    >>> import pyarrow as pa
    >>> from designer.tables.cells import complete, typed
    >>> complete(typed(pa.array(["1.5", "2"]))), complete(typed(pa.array(["1.5", "NA"])))
    (True, False)
    >>> complete(typed(pa.array(["north", "7"]))), complete(typed(pa.array(["north", "7"])), numbers=True)
    (True, False)
    """
    if values.dtype == object:
        cells = values.tolist()
        return all(v is not None for v in cells) and not (numbers and any(_number(v) for v in cells))
    return not (values.dtype.kind == "f" and bool(np.isnan(values).any()))
