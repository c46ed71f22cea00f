"""A small, complete CSV file of plain columns read for a regression without pandas (importing pandas takes a
fifth of a second, more than the fit of a few thousand rows).

:func:`read_plain_table` reads the answers column and the formula's covariates through designer's one CSV reader
(:mod:`designer.tables.csv_text`) and types each covariate as pandas' reader would: whole numbers as ``int64``,
decimals as ``float64``, text as an object array of ``str``. It only says yes to a file whose reading leaves no
doubt, so that the fit is the one of the pandas path (:func:`designer.regression.regress_input.read_frame`) number
for number (``tests/test_plain_table.py`` compares them); anything else returns ``None`` and the file goes the
pandas way, which also words every error:

* a cell that is empty, a missing-value word (``NA``, ``NULL``, ``nan``, ...), a true/false word, or padded with
  spaces; a row shorter or longer than the header; a line holding only spaces; a repeated column name;
* a number with more than 15 significant digits or beyond ``1e22`` in scale (there a decimal reader may round
  differently from pandas'), or a text column holding a cell that reads as a number;
* a formula that is not plain (:func:`~designer.regression.plain_terms.plain_design`: interactions and
  transformations need patsy), or a design above :data:`~designer.regression.design.SPARSE_CELLS` cells;
* a file above :data:`PLAIN_BYTES`, which pandas' C parser reads faster than this reader, its import included.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..exceptions import DataError, RegressionError

__all__ = ["PLAIN_BYTES", "PlainTable", "read_plain_table", "typed_column"]

#: The cells pandas' reader takes for a missing value (its default ``na_values``).
MISSING_WORDS = frozenset({"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
                           "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"})
#: The cells it reads as true or false in a column of them.
TRUTH_WORDS = frozenset({"True", "TRUE", "true", "False", "FALSE", "false"})
_WHOLE = re.compile(r"[+-]?0*(?P<digits>[0-9]*)")  # ASCII digits: pandas reads no others as numbers
_DECIMAL = re.compile(r"[+-]?(?P<int>[0-9]*)(?:\.(?P<frac>[0-9]*))?(?:[eE](?P<exp>[+-]?[0-9]{1,4}))?")
#: Files above this many bytes are left to pandas: this reader takes about 6 microseconds a row of four columns
#: (0.25 s a MB), pandas' import and C parser about 0.45 s for any file up to 2 MB; they break even near 1 MB
#: (40,000 rows: 0.41 s here, 0.45 s through pandas, in fresh processes).
PLAIN_BYTES = 1 << 20
#: Significant digits and decimal scale within which every correctly rounding reader gives the same double (a
#: whole number below 2^53 times an exact power of ten).
DIGITS, SCALE = 15, 22


@dataclass(frozen=True)
class PlainTable:
    """The columns a regression needs, each a numpy array (``int64``, ``float64`` or objects of ``str``), as
    pandas would hold them; ``first_line`` is the file's line of the first row (the header is line 1; a Qualtrics
    export's two extra header rows make it 4). Answers the part of a DataFrame's interface the fit and the front
    door read: ``table.columns``, ``table[name]``, ``len(table)``, ``table.attrs["first_line"]`` (as
    :func:`~designer.regression.regress_input.read_frame` sets it)."""

    data: dict[str, NDArray[Any]]
    first_line: int = 2

    @property
    def columns(self) -> list[str]:
        return list(self.data)

    @property
    def attrs(self) -> dict[str, Any]:
        return {"first_line": self.first_line}

    def __getitem__(self, name: str) -> NDArray[Any]:
        return self.data[name]

    def __len__(self) -> int:
        return len(next(iter(self.data.values()))) if self.data else 0


def _decimal(cell: str) -> bool:
    """Whether ``cell`` is a decimal number ``D 10^s`` with ``D`` of at most :data:`DIGITS` digits and ``|s|`` at
    most :data:`SCALE`: one correctly rounded product or quotient of exact doubles, the same in every reader."""
    m = _DECIMAL.fullmatch(cell)
    if m is None or not (m.group("int") or m.group("frac")):
        return False
    digits = (m.group("int") + (m.group("frac") or "")).lstrip("0")
    scale = int(m.group("exp") or 0) - len(m.group("frac") or "")
    return len(digits) <= DIGITS and (not digits or -SCALE <= scale <= SCALE)


def _reads_as_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def typed_column(cells: list[str]) -> NDArray[Any] | None:
    """The cells of one column as pandas' CSV reader types them (``int64``, ``float64`` or ``str`` objects), or
    ``None`` when that is in any doubt (see the module's docstring).

    Examples
    --------
    >>> from designer.regression.plain_table import typed_column
    >>> typed_column(["18", "+41", "007"]).tolist(), typed_column(["1.5", "2", "3e2"]).tolist()
    ([18, 41, 7], [1.5, 2.0, 300.0])
    >>> typed_column(["north", "south"]).dtype, typed_column(["12", "NA"]) is None, typed_column(["a", "1"]) is None
    (dtype('O'), True, True)
    """
    if any(c in MISSING_WORDS or c in TRUTH_WORDS or c != c.strip() for c in cells):
        return None
    whole = [_WHOLE.fullmatch(c) for c in cells]
    if any(m is not None and len(m.group("digits")) > 18 for m in whole):
        return None  # beyond int64: pandas may read uint64, floats or text
    if all(m is not None and c.lstrip("+-") for c, m in zip(cells, whole)):
        return np.array([int(c) for c in cells], dtype=np.int64)
    if all(_decimal(c) for c in cells):
        values = np.array([float(c) for c in cells], dtype=np.float64)
        return values if np.all(np.isfinite(values)) else None
    if any(_reads_as_number(c) for c in cells):
        return None
    return _text(cells)


def _text(cells: list[str]) -> NDArray[Any]:
    """The cells as an object array of ``str`` (not numpy's fixed-width strings)."""
    column = np.empty(len(cells), dtype=object)
    column[:] = cells
    return column


def _rows(path: str, columns: list[str], header: list[str], sep: str) -> tuple[int, dict[str, list[str]]]:
    """The first data row's line and the cells of the named columns as written (:mod:`designer.tables.csv_text`)."""
    import pyarrow as pa

    from ..tables.csv_text import csv_tables

    first, tables = 2, list[Any]()
    for line, table in csv_tables(path, columns, 1 << 62, header=header, sep=sep):
        first = line if not tables else first
        tables.append(table)
    table = pa.concat_tables(tables)
    return first, {name: table.column(name).to_pylist() for name in columns}


def read_plain_table(path: str, answers: str, formula: str) -> PlainTable | None:
    """The answers column (text) and the formula's covariates of a CSV file, or ``None`` when the file or the
    formula needs pandas' reading (the module's docstring says when).

    Examples
    --------
    >>> import os, tempfile
    >>> from designer.regression.plain_table import read_plain_table
    >>> folder = tempfile.TemporaryDirectory()
    >>> path = os.path.join(folder.name, "answers.csv")
    >>> with open(path, "w") as file:
    ...     _ = file.write("response,age,region\\n{yes},34,north\\nno,51,south\\n")
    >>> table = read_plain_table(path, "response", "response ~ age + region")
    >>> table.columns, table["age"].tolist(), len(table)
    (['response', 'age', 'region'], [34, 51], 2)
    >>> read_plain_table(path, "response", "response ~ age:region") is None  # an interaction: patsy's
    True
    >>> folder.cleanup()
    """
    from ..tables.inputs import sniff
    from .data import formula_columns, rewrite_formula, split_formula
    from .design import SPARSE_CELLS
    from .plain_terms import plain_design
    from .regress_input import WHAT

    try:
        if os.path.getsize(path) > PLAIN_BYTES:
            return None
        header, sep = sniff(path, WHAT)
        lhs, rhs = split_formula(formula, header)
        if lhs != answers:
            return None
        needed = [answers, *(c for c in formula_columns(rhs, header) if c != answers)]
        first, rows = _rows(path, needed, header, sep)  # only the fit's columns: another's cells are not read
    except (DataError, RegressionError, OSError):
        return None  # the full reading words the error
    data: dict[str, NDArray[Any]] = {}
    for name in needed:
        cells = rows[name]
        if name == answers:
            if any(c in MISSING_WORDS or c != c.strip() for c in cells):
                return None  # a missing answer: pandas' path names it
            data[name] = _text(cells)
            continue
        typed = typed_column(cells)
        if typed is None:
            return None
        data[name] = typed
    table = PlainTable(data, first)
    design = plain_design(rewrite_formula(rhs, header), table)
    if design is None or not design.column_names or len(table) * len(design.column_names) > SPARSE_CELLS:
        return None
    return table
