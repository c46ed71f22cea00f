"""A small, complete CSV file of plain columns read for a regression without pandas (importing pandas takes a
fifth of a second, more than the fit of a few thousand rows).

:func:`read_plain_table` reads the answers column and the formula's covariates through designer's one CSV reader
(:mod:`designer.tables.csv_text`) and types them by its one set of rules (:mod:`designer.tables.cells`), as
:func:`designer.regression.regress_input.read_frame` does before it makes a DataFrame: the fit is the one of that
path number for number (``tests/test_plain_table.py`` compares them). It says yes only to a file the fit can take
without the checks the DataFrame path makes; anything else returns ``None`` and the file goes that way, which also
words every error:

* a missing cell (:data:`~designer.tables.cells.MISSING_WORDS`) in a column the fit uses; a text column holding a
  cell that reads as a number (the DataFrame path decides whether that is a typo); a file the reader refuses (a
  ragged row, a repeated column name, a cell that is not UTF-8);
* a formula that is not plain (:func:`~designer.regression.plain_terms.plain_design`: interactions and
  transformations need patsy), or a design above :data:`~designer.regression.design.SPARSE_CELLS` cells;
* a file above :data:`PLAIN_BYTES`, which pandas' DataFrame, its import included, serves as fast.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from typing import Any

from numpy.typing import NDArray

from ..exceptions import DataError, RegressionError

__all__ = ["PLAIN_BYTES", "PlainTable", "read_plain_table"]

#: Files above this many bytes are left to the DataFrame path (measured when the plain path read cells in Python: the
#: two broke even near 1 MB, 40,000 rows of four columns, in fresh processes).
PLAIN_BYTES = 1 << 20


@dataclass(frozen=True)
class PlainTable:
    """The columns a regression needs, each a numpy array (``int64``, ``float64``, ``bool`` or objects of ``str``),
    as :func:`~designer.regression.regress_input.read_frame`'s DataFrame holds them; ``first_line`` is the file's
    line of the first row (the header is line 1; a Qualtrics export's two extra header rows make it 4). Answers the
    part of a DataFrame's interface the fit and the front door read: ``table.columns``, ``table[name]``,
    ``len(table)``, ``table.attrs["first_line"]`` (as ``read_frame`` sets it)."""

    data: dict[str, NDArray[Any]]
    first_line: int = 2
    #: ``(rhs, design)``: the formula's right-hand side as patsy reads it and its PlainDesign, learnt when the file
    #: was read (:func:`~designer.regression.design.design_info` gives it instead of learning it again).
    design: tuple[str, Any] | None = None

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
    import pyarrow as pa

    from ..tables.cells import complete, typed_columns
    from ..tables.csv_text import csv_tables
    from .data import formula_names, rewrite_formula, split_formula
    from .design import SPARSE_CELLS
    from .plain_terms import plain_design

    try:
        rhs = split_formula(formula, [answers])[1]  # a formula of another answers column is not this table's
    except RegressionError:
        return None  # the full reading words the formula's error
    try:
        if os.path.getsize(path) > PLAIN_BYTES:
            return None
        read = list(csv_tables(path, sorted({answers, *formula_names(rhs)}), 1 << 62, present=True))
    except (DataError, OSError):
        return None  # the full reading words the error
    typed = typed_columns(pa.concat_tables([t for _, t in read]), {answers})
    if answers not in typed or not all(complete(v, numbers=n != answers) for n, v in typed.items()):
        return None
    rows = len(typed[answers])
    table = PlainTable({answers: typed.pop(answers), **typed}, read[0][0])
    written = rewrite_formula(rhs, table.columns)
    design = plain_design(written, table)
    if design is None or not design.column_names or rows * len(design.column_names) > SPARSE_CELLS:
        return None
    return dataclasses.replace(table, design=(written, design))
