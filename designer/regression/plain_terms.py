"""The design matrix of a formula of plain terms, built without patsy (importing patsy takes a tenth of a second).

A plain right-hand side is a sum of columns of the data (``age``, ``Q("cov.age")``), categorical ones marked or not
(``C(region)``), with ``1``, ``0`` or ``- 1`` for the intercept: the formulas of most survey regressions. Its matrix
is patsy's, column for column and value for value (``tests/test_plain_terms.py`` compares them): the intercept
first, then the categorical terms, then the numeric ones, each group in the formula's order; a numeric column as it
is; a categorical one (text, whole numbers
under ``C()``, or true/false) in treatment coding against its first level in sorted order, ``name[T.level]``, or
with a column per level (``name[level]``) for the first categorical term of a formula without an intercept. Anything
else (interactions, transformations, ``I(...)``, a column of another kind) is left to patsy
(:mod:`designer.regression.design`).
"""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..exceptions import RegressionError

__all__ = ["PlainDesign", "plain_design"]

#: One token of a plain right-hand side: a term (a column, ``Q("name")``, ``C(column)``), an intercept or a sign.
_TOKEN = re.compile(r'\s*(?:(?P<term>C\((?:Q\("[^"\\]*"\)|[A-Za-z_]\w*)\)|Q\("[^"\\]*"\)|[A-Za-z_]\w*)'
                    r"|(?P<one>[01])(?![\w.])|(?P<sign>[+-]))")


@dataclass(frozen=True)
class Term:
    """One term: its name as patsy writes it, the data's column, and its levels (``None``: numeric)."""

    name: str
    column: str
    levels: tuple[Any, ...] | None
    full_rank: bool = False

    def column_names(self) -> list[str]:
        if self.levels is None:
            return [self.name]
        kept = self.levels if self.full_rank else self.levels[1:]
        return [f"{self.name}[{level}]" if self.full_rank else f"{self.name}[T.{level}]" for level in kept]


@dataclass(frozen=True)
class PlainDesign:
    """What patsy's ``DesignInfo`` gives a plain formula: the ``column_names`` and, for any data with the same
    columns, :meth:`build` (the levels are those learnt from the data the design was made for)."""

    intercept: bool
    terms: tuple[Term, ...]

    @property
    def column_names(self) -> list[str]:
        return (["Intercept"] if self.intercept else []) + [n for t in self.terms for n in t.column_names()]

    def build(self, data: Any) -> NDArray[np.float64]:
        """The ``(n, q)`` matrix of ``data`` (a DataFrame, or any mapping of column name to values)."""
        n = len(data)
        blocks: list[NDArray[np.float64]] = [np.ones((n, 1))] if self.intercept else []
        for term in self.terms:
            values = np.asarray(data[term.column])
            if term.levels is None:
                blocks.append(values.astype(np.float64).reshape(n, 1))
                continue
            known = set(term.levels)
            unknown = [v for v in dict.fromkeys(values.tolist()) if v not in known]
            if unknown:
                raise RegressionError(f"cannot build the covariates: {term.name} has the value {unknown[0]!r}, which "
                                      f"is none of the levels the model was fitted with {list(term.levels)}")
            kept = term.levels if term.full_rank else term.levels[1:]
            blocks.append(np.column_stack([values == level for level in kept]).astype(np.float64)
                          if kept else np.zeros((n, 0)))
        return np.hstack(blocks) if blocks else np.zeros((n, 0))


#: What :func:`_levels` says of a column of a kind left to patsy.
OTHER = "other"


def _levels(values: NDArray[Any], categorical: bool) -> tuple[Any, ...] | str | None:
    """A column's levels (sorted, as patsy sorts them), ``None`` for a numeric column, :data:`OTHER` when the column
    is of a kind left to patsy."""
    kind = values.dtype.kind
    if kind == "b":
        return (False, True)  # patsy: both levels of a true/false column, whichever the data hold
    if kind in "iu":
        return tuple(sorted({int(v) for v in values})) if categorical else None
    if kind == "f":
        return OTHER if categorical else None
    if kind in "OU" and all(isinstance(v, str) for v in values.tolist()):
        return tuple(sorted(set(values.tolist())))
    return OTHER


def plain_design(rhs: str, data: Any) -> PlainDesign | None:
    """The design of ``rhs`` over ``data`` (a pandas DataFrame) when the formula is plain, else ``None`` (patsy's).

    Examples
    --------
    >>> import pandas as pd
    >>> from designer.regression.plain_terms import plain_design
    >>> data = pd.DataFrame({"age": [30, 41, 52], "region": ["south", "north", "south"]})
    >>> design = plain_design("age + region", data)
    >>> design.column_names  # patsy's order: the intercept, categorical terms, numeric terms
    ['Intercept', 'region[T.south]', 'age']
    >>> design.build(data).tolist()
    [[1.0, 1.0, 30.0], [1.0, 0.0, 41.0], [1.0, 1.0, 52.0]]
    >>> plain_design("age:region", data) is None  # an interaction: patsy builds it
    True
    """
    columns = {str(c) for c in data.columns}
    intercept, terms, names = True, [], []
    pos, sign = 0, "+"
    expect_item = True
    while pos < len(rhs.rstrip()):
        match = _TOKEN.match(rhs, pos)
        if match is None:
            return None
        pos = match.end()
        if expect_item:
            if match.group("one") is not None:
                intercept = (match.group("one") == "1") == (sign == "+")
                if sign == "-" and match.group("one") == "0":
                    return None  # "- 0": patsy's meaning is odd enough to leave to it
            elif match.group("term") is not None and sign == "+":
                names.append(match.group("term"))
            else:
                return None
            expect_item = False
        else:
            if match.group("sign") is None:
                return None
            sign, expect_item = match.group("sign"), True
    if expect_item:
        return None  # empty, or ends with a sign
    first_categorical = not intercept
    for name in dict.fromkeys(names):
        categorical = name.startswith("C(")
        inner = name[2:-1] if categorical else name
        column = inner[3:-2] if inner.startswith('Q("') else inner
        if column not in columns or keyword.iskeyword(column) or (not inner.startswith('Q("') and column == "np"):
            return None
        series = data[column]
        if not isinstance(series.dtype, np.dtype) and type(series.dtype).__name__ != "StringDtype":
            return None  # another pandas extension type (categorical, nullable): patsy's rules
        levels = _levels(np.asarray(series), categorical)
        if isinstance(levels, str):
            return None
        terms.append(Term(name, column, levels, full_rank=first_categorical and levels is not None))
        first_categorical = first_categorical and levels is None
    # patsy's order: the intercept, the categorical terms, then the numeric ones, each in the formula's order
    return PlainDesign(intercept, tuple(sorted(terms, key=lambda t: t.levels is None)))
