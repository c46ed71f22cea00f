"""The data and the formula of a regression as a survey analyst writes them (R habits included).

* Column names with dots (``cov.age``, ``rr.q1``) work as written: patsy would read ``cov.age`` as an attribute,
  so such names are quoted (``Q("cov.age")``) before patsy sees the formula.
* ``I(x^2)`` means the square, as in R: inside ``I(...)`` the ``^`` is Python's ``**`` (patsy would compute a
  bitwise XOR there, a silently wrong covariate for integer columns). Outside ``I()``, ``(a + b)^2`` keeps its
  formula meaning (all interactions up to order 2), the same in R and patsy.
* A column that looks numeric but holds some text (``unknown`` among ages) is an error naming the column and
  the row, never 63 dummy variables; ``C(col)`` asks for categories.
* Missing values: ``missing="error"`` (default) names the first incomplete row; ``"drop"`` drops the rows
  missing a value of the formula's variables (R's ``na.omit`` on the model frame) and counts them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from ..exceptions import RegressionError
from ..mechanism import Mechanism

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["MISSING", "answer_columns", "check_missing", "formula_columns", "prepare", "rewrite_formula",
           "split_formula"]

#: What to do with rows missing a value of the formula's variables.
MISSING = ("error", "drop")

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")


def _r_powers(rhs: str) -> str:
    """``^`` as ``**`` inside every ``I(...)`` (nested parentheses respected)."""
    out, i = [], 0
    for m in re.finditer(r"\bI\(", rhs):
        if m.start() < i:
            continue
        depth, j = 1, m.end()
        while j < len(rhs) and depth:
            depth += {"(": 1, ")": -1}.get(rhs[j], 0)
            j += 1
        out.append(rhs[i:m.end()])
        out.append(rhs[m.end():j].replace("^", "**"))
        i = j
    out.append(rhs[i:])
    return "".join(out)


def rewrite_formula(rhs: str, columns: list[str]) -> str:
    """The right-hand side with dotted column names quoted and R's ``I(x^2)`` as patsy reads it."""
    dotted = {c for c in columns if "." in c}

    def quote(m: re.Match[str]) -> str:
        name = m.group(0)
        before = rhs[:m.start()].rstrip()
        if name in dotted and not before.endswith(("Q(", "Q(\"", "'", '"')):
            return f'Q("{name}")'
        return name

    return _r_powers(_NAME.sub(quote, rhs) if dotted else rhs)


def formula_names(rhs: str) -> set[str]:
    """Every name the right-hand side may use as a column (as written or quoted), whatever the data's columns."""
    return set(_NAME.findall(rhs)) | set(re.findall(r"Q\(\s*[\"']([^\"']+)[\"']\s*\)", rhs))


def formula_columns(rhs: str, columns: list[str]) -> list[str]:
    """The data columns the right-hand side names (as written or quoted)."""
    names = formula_names(rhs)
    return [c for c in columns if c in names]


def _categorical(rhs: str, name: str) -> bool:
    return re.search(r"\bC\(\s*(Q\(\s*[\"'])?" + re.escape(name) + r"\b", rhs) is not None


def _check_numeric(data: pd.DataFrame, rhs: str, names: list[str], rows: np.ndarray) -> None:
    """A text column most of whose cells are numbers is a typo, not a category: refuse it, naming the cell."""
    import pandas as pd

    for name in names:
        col = data[name]
        if pd.api.types.is_numeric_dtype(col) or pd.api.types.is_bool_dtype(col) or _categorical(rhs, name):
            continue
        present = col.notna().to_numpy()
        numbers = pd.to_numeric(col, errors="coerce").notna().to_numpy()
        text = np.flatnonzero(present & ~numbers)
        if text.size and numbers.sum() > text.size:
            row = int(text[0])
            raise RegressionError(f"column {name!r} holds numbers but {col.iloc[row]!r} here ({text.size} such "
                                  f"row(s)): fix or blank those cells, or write C({name}) to treat the column as "
                                  "categories", row=int(rows[row]))


def check_missing(missing: str) -> None:
    """Refuse a ``missing`` that is not one of :data:`MISSING`."""
    if missing not in MISSING:
        raise RegressionError(f"missing must be one of {list(MISSING)}, got {missing!r}")


def prepare(formula_rhs: str, answers: str, data: pd.DataFrame, missing: str = "error",
            extra: Sequence[str] = ()) -> tuple[pd.DataFrame, str, np.ndarray]:
    """``(data, rhs, rows)``: the rows to fit, the formula as patsy reads it, and the position in the given
    ``data`` of every row kept (``len(data) - len(rows)`` were dropped).

    Raises :class:`RegressionError` (with ``row``, 0-based in ``data``) for a missing value under
    ``missing="error"`` and for text in a numeric-looking column.
    """
    check_missing(missing)
    columns = [str(c) for c in data.columns]
    if any(not isinstance(c, str) for c in data.columns):  # a name as the formula writes it: text
        data = data.set_axis(columns, axis=1)
    names = formula_columns(formula_rhs, columns)
    for column in extra:  # weights, clusters: needed like the formula's variables
        if column not in columns:
            raise RegressionError(f"column {column!r} is not in the data (columns: {columns})")
    used = [answers, *[c for c in [*names, *extra] if c != answers]]
    twice = [c for c in used if columns.count(c) > 1]
    if twice:
        raise RegressionError(f"the data have more than one column named {twice[0]!r}: rename or drop the others")
    incomplete = data[used].isna().any(axis=1).to_numpy()
    rows = np.arange(len(data))
    if incomplete.any():
        if missing == "error":
            row = int(np.flatnonzero(incomplete)[0])
            which = [c for c in used if bool(data[c].isna().iloc[row])]
            raise RegressionError(f"no value in column {which[0]!r} ({int(incomplete.sum())} incomplete row(s)): "
                                  "fill them in, or drop them (--missing drop; R's na.omit)", row=row)
        rows = rows[~incomplete]
        data = data.loc[~incomplete].reset_index(drop=True)
        if len(data) == 0:
            raise RegressionError(f"every row misses a value of the formula's variables {used}; nothing to fit")
    data = _plain_dtypes(data, names)
    _check_numeric(data, formula_rhs, names, rows)
    return data, rewrite_formula(formula_rhs, columns), rows


def _plain_dtypes(data: pd.DataFrame, names: list[str]) -> pd.DataFrame:
    """The formula's columns as the design reads them: pandas' nullable booleans (complete by now) as plain ones;
    dates, times and durations refused, naming the column (a design needs numbers or categories)."""
    plain = {}
    for name in names:
        dtype = str(data[name].dtype)
        if dtype.startswith(("datetime", "timedelta", "period")):
            raise RegressionError(f"column {name!r} holds dates or times ({dtype}): regress takes numbers and "
                                  "categories; convert it first (e.g. to years since a date, or to text for "
                                  "categories)")
        if dtype == "boolean":
            plain[name] = data[name].to_numpy(dtype=bool)
    return data.assign(**plain) if plain else data


def split_formula(formula: str, columns: list[str]) -> tuple[str, str]:
    """``(answers column, right-hand side)`` of ``"response ~ x1 + x2"`` (``"1"`` for an empty right side)."""
    if not isinstance(formula, str) or formula.count("~") != 1:
        raise RegressionError(f"formula {formula!r} must read 'response ~ x1 + x2' (one '~')")
    lhs, rhs = (part.strip() for part in formula.split("~"))
    if lhs not in columns:
        raise RegressionError(f"formula: the answers column {lhs!r} is not in the data; the columns are {columns}")
    return lhs, rhs or "1"


def answer_columns(mech: Mechanism, answers: Any, *, precise: bool = False, words: Any = None) -> NDArray[np.int64]:
    """The mechanism column (frame index with ``precise=True``, WLDP) of every recorded answer, shape ``(n,)``.

    Answers are written as :mod:`designer.estimation.answers` reads them: ``{yes}``, ``{yes,no}`` in any label order,
    a bare
    label, the card's words (``I don't know``) or ``words`` (an ``[answers]`` table: word -> frame labels). An
    unknown answer raises :class:`RegressionError` naming its data row (1-based, the header not counted).

    Examples
    --------
    >>> import designer
    >>> from designer.regression import answer_columns
    >>> q = designer.Q_2x3(0.6, 0.2)
    >>> answer_columns(q, ["{yes}", "no", "I don't know", "{no,yes}"]).tolist()
    [0, 1, 2, 2]
    >>> answer_columns(q, ["yes", "no"], precise=True).tolist()  # WLDP: frame positions
    [0, 1]
    """
    from ..estimation.answers import AnswerVocabulary, describe_unknown

    vocabulary = AnswerVocabulary(mech, words, precise=precise)
    values = np.asarray(answers, dtype=object)
    codes = vocabulary.columns(values)
    if np.any(codes < 0):
        pos, message = describe_unknown(values, codes, vocabulary)
        raise RegressionError(f"answer {message}", row=pos)
    return codes
