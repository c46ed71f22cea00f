"""Input checks shared by every module: one place, one wording.

``TypeError`` for a wrong type, ``ValueError`` (or a designer subclass) for a wrong value; every message
says what was expected and what was got.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..exceptions import InvalidArgumentError, InvalidArgumentTypeError

#: Characters a label may not contain: they delimit focal sets in CSV headers (``{yes,no}``).
FORBIDDEN_LABEL_CHARS = frozenset("{},\n\r\"")


#: The rule every budget meets, as messages state it.
BUDGET_RULE = "a finite number > 0"

def check_budget(value: object, name: str = "epsilon") -> float:
    """The one rule for a privacy budget (Def 3.1, Def 3.13): a real number (not a bool), finite and > 0.

    Every budget that enters designer passes here: :class:`Budget`, a problem's ``epsilon``
    (:class:`designer.DesignProblem`, a problem file), the ``--epsilon`` flag (``designer.cli._common.epsilon_arg``)
    and the library's functions taking ``eps`` (``designer._internal.validation.check_epsilon``).

    Parameters
    ----------
    value : object
        The budget as given (nats).
    name : str, default "epsilon"
        What the message calls it.

    Returns
    -------
    float
        ``value`` as a float.

    Raises
    ------
    InvalidArgumentError
        ``"{name} must be a finite number > 0, got {value}"`` (:data:`BUDGET_RULE`; an integer too large for a
        float is described by its number of digits).

    Examples
    --------
    >>> from designer.budget import check_budget
    >>> check_budget(2)
    2.0
    >>> check_budget(float("inf"))
    Traceback (most recent call last):
    ...
    designer.exceptions.InvalidArgumentError: epsilon must be a finite number > 0, got inf
    """
    try:
        x = float(value) if isinstance(value, numbers.Real) and not isinstance(value, bool) else math.nan
    except OverflowError:  # an integer beyond the floats
        x = math.inf
    if not math.isfinite(x) or x <= 0:
        shown = _shown(value)
        raise InvalidArgumentError(f"{name} must be {BUDGET_RULE}, got {shown}")
    return x


def _shown(value: object) -> str:
    """A refused budget as the message shows it: a number as written (``0``, ``-0.5``, ``inf``, never
    ``np.float64(...)``), an integer beyond the floats by its digits, anything else by its ``repr``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return repr(value)
    if isinstance(value, numbers.Integral):
        text = str(int(value))
        return f"an integer of {len(text.lstrip('-'))} digits" if len(text) > 300 else text
    return repr(float(value))


def check_epsilon(value: object, name: str = "eps") -> float:
    """Return ``value`` as a float privacy budget, which must be finite and > 0."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InvalidArgumentTypeError(f"{name} must be a real number, got {type(value).__name__}")
    return check_budget(value, name)  # the one rule for a budget (Budget, DesignProblem, --epsilon)


def check_real(value: object, name: str, *, low: float | None = None, high: float | None = None,
               low_open: bool = False, high_open: bool = False) -> float:
    """Return ``value`` as a finite float in the stated interval."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InvalidArgumentTypeError(f"{name} must be a real number, got {type(value).__name__}")
    x = float(value)
    if math.isnan(x) or math.isinf(x):
        raise InvalidArgumentError(f"{name} must be finite, got {x}")
    bad_low = low is not None and (x < low or (low_open and x == low))
    bad_high = high is not None and (x > high or (high_open and x == high))
    if bad_low or bad_high:
        lo = "-inf" if low is None else f"{low:g}"
        hi = "inf" if high is None else f"{high:g}"
        interval = f"{'(' if low_open or low is None else '['}{lo}, {hi}{')' if high_open or high is None else ']'}"
        raise InvalidArgumentError(f"{name} must lie in {interval}, got {x}")
    return x


#: A prior's entries must sum to 1 within this.
PRIOR_SUM_TOL = 1e-9


def check_prior(prior: ArrayLike | None, k: int, name: str = "prior") -> NDArray[np.float64]:
    """A distribution over ``k`` inputs (default uniform): finite, non-negative, summing to 1 within
    ``PRIOR_SUM_TOL``; returned renormalised and read-only. The one simplex check of the package."""
    if prior is None:
        out = np.full(k, 1.0 / k)
    else:
        try:
            out = np.array(prior, dtype=np.float64)
        except (TypeError, ValueError, OverflowError):
            raise InvalidArgumentTypeError(f"{name} must be {k} numbers, got {prior!r}") from None
        if out.shape != (k,):
            raise InvalidArgumentError(f"{name} must have one entry per input ({k}), got shape {out.shape}")
        if not np.all(np.isfinite(out)) or np.any(out < 0) or abs(float(out.sum()) - 1.0) > PRIOR_SUM_TOL:
            raise InvalidArgumentError(f"{name} must be non-negative and sum to 1, got {[float(v) for v in out]}")
        out = out / out.sum()
    out.setflags(write=False)
    return out


def check_int(value: object, name: str, *, low: int | None = None) -> int:
    """Return ``value`` as an int (bools refused), at least ``low``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InvalidArgumentTypeError(f"{name} must be an integer, got {type(value).__name__}")
    n = int(value)
    if low is not None and n < low:
        raise InvalidArgumentError(f"{name} must be an integer >= {low}, got {n}")
    return n


def check_labels(labels: Iterable[object], what: str, *, error: type[Exception] = ValueError) -> tuple[str, ...]:
    """Validate a list of labels: strings, non-empty, unique, without set delimiters.

    Numbers are accepted and turned into their string form (``0`` becomes ``"0"``).
    """
    if isinstance(labels, (str, bytes)):
        raise InvalidArgumentTypeError(f"{what} must be a list of labels, got the single string {labels!r}")
    out: list[str] = []
    for raw in labels:
        if isinstance(raw, bool) or not isinstance(raw, (str, numbers.Integral)):
            raise InvalidArgumentTypeError(f"{what}: labels must be strings, got {raw!r}")
        label = str(raw).strip()
        if not label:
            raise error(f"{what}: empty label")
        bad = FORBIDDEN_LABEL_CHARS.intersection(label)
        if bad:
            raise error(f"{what}: label {label!r} contains {''.join(sorted(bad))!r}; "
                        "labels may not contain braces, commas, quotes or line breaks")
        out.append(label)
    if not out:
        raise error(f"{what}: at least one label is needed")
    seen: set[str] = set()
    for label in out:
        if label in seen:
            raise error(f"{what}: duplicate label {label!r}")
        seen.add(label)
    return tuple(out)


def format_set(labels: Sequence[str]) -> str:
    """Write a focal set the way CSV headers do: ``{yes,no}``."""
    return "{" + ",".join(labels) + "}"


def parse_set(text: str) -> tuple[str, ...]:
    """Parse a focal-set header such as ``{yes, no}`` into its labels (order as written)."""
    s = str(text).strip()
    if len(s) < 2 or s[0] != "{" or s[-1] != "}":
        raise InvalidArgumentError(f"column {text!r} is not a focal set; write sets as {{yes}} or {{yes,no}}")
    inner = s[1:-1].strip()
    if not inner:
        return ()
    labels = tuple(part.strip() for part in inner.split(","))
    if any(not part for part in labels):
        raise InvalidArgumentError(f"column {text!r} has an empty label")
    if len(set(labels)) != len(labels):
        raise InvalidArgumentError(f"column {text!r} names a label twice")
    return labels
