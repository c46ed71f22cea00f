"""Values as a person writes them (``0.25``, ``7/36``, ``0.5:3:6``, ``yes=0.3,no=0.7``, ``uniform``), each read by
one function here for the command line and the front doors alike, the name an error gives what was given, and the
one check of a path written to (:func:`check_output`).

Every reader takes the name to show in its messages. The command line passes its flag (``"--prior"``); a front
door passes :func:`shown` of its keyword, which is the keyword (``prior``) when Python called it and the flag
(``--prior``) while the command line runs it (:func:`flag_names`), so one message serves both. Nothing here imports
numpy or the planning code: the command line reads this module at start-up.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import numbers
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from ..exceptions import InvalidArgumentError, InvalidArgumentTypeError

__all__ = ["MAX_VALUES", "check_output", "flag_names", "read_allocation", "read_budgets", "read_named",
           "read_named_prior", "read_names", "read_number", "read_prior", "read_real", "read_values", "read_whole",
           "say", "shown"]

#: Most values one grid, list or curve may hold.
MAX_VALUES = 10_000

_FLAGS: contextvars.ContextVar[bool] = contextvars.ContextVar("designer_flag_names", default=False)


def shown(keyword: str, value: object = None) -> str:
    """How an error names a keyword of a front door: ``null_variance`` (with ``value``: ``null_variance=VALUE``)
    when Python called it, ``--null-variance`` (``--null-variance VALUE``) inside :func:`flag_names`. A switch
    (``value`` True) is ``force=True`` or ``--force``; a pair ``(on the command line, from Python)`` is a value
    written two ways (``("NAME=FILE", "{NAME: FILE}")``)."""
    flags = _FLAGS.get()
    if isinstance(value, tuple):
        value = value[0] if flags else value[1]
    if flags:
        flag = "--" + keyword.replace("_", "-")
        return flag if value is None or value is True or value == "True" else f"{flag} {value}"
    return keyword if value is None else f"{keyword}={value}"


@contextlib.contextmanager
def flag_names(on: bool = True) -> Iterator[None]:
    """While the command line runs a command: errors of the front doors name its flags (:func:`shown`); ``on``
    False names keywords (the studio's server, whose pages call the front doors)."""
    token = _FLAGS.set(on)
    try:
        yield
    finally:
        _FLAGS.reset(token)


def say(template: str, **values: object) -> str:
    """``template`` with every ``{keyword}`` named as :func:`shown` names it (``--null-variance`` under the
    command line, ``null_variance`` from Python), ``{keyword=VALUE}`` with a value (``--width W`` or ``width=W``),
    ``{SOURCE}`` (a positional argument) as ``SOURCE`` or ``source``, ``{keywords}`` as ``flags`` or
    ``keywords``, and the fields named in ``values`` as given."""
    import re

    def field(match: re.Match[str]) -> str:
        key = match.group(1)
        if key in values:
            return str(values[key])
        if key == "keywords":
            return "flags" if _FLAGS.get() else "keywords"
        if key.isupper():  # a positional argument: SOURCE on the command line, source from Python
            return key if _FLAGS.get() else key.lower()
        keyword, _, value = key.partition("=")
        return shown(keyword, value or None)

    return re.sub(r"\{([^{}]+)\}", field, template)


def read_number(text: str) -> float:
    """A number as a person writes it: ``0.25``, ``1e-3`` or a fraction ``7/36`` (read exactly, then rounded once
    to the nearest float). Raises ``ValueError`` otherwise."""
    text = text.strip()
    if "/" in text:
        from fractions import Fraction

        num, _, den = text.partition("/")
        try:
            return float(Fraction(num.strip()) / Fraction(den.strip()))
        except (ValueError, ZeroDivisionError):
            raise ValueError(text) from None
    return float(text)


def read_names(text: str) -> list[str]:
    """Comma-separated names (``a, b``), stripped, none empty. Raises ``ValueError`` otherwise."""
    names = [t.strip() for t in str(text).split(",")]
    if not names or any(not t for t in names):
        raise ValueError(text)
    return names


def read_named(items: Sequence[Any], name: str, why: str) -> dict[str, Any]:
    """``["a=FILE", "b=FILE"]`` (a repeated ``--mechanism NAME=FILE``) as ``{"a": "FILE", "b": "FILE"}``; one bare
    ``FILE`` is the group ``""``. A bare item among several is refused with ``why`` (how to write it), a name given
    twice too."""
    named: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=") if isinstance(item, str) else ("", "", item)
        if not sep:
            if len(items) > 1 or not isinstance(item, str):
                raise InvalidArgumentError(f"{name} {item!r}: {why}")
            key, value = "", item
        if key.strip() in named:
            raise InvalidArgumentError(f"{name}: group {key.strip()!r} is given twice")
        named[key.strip()] = value.strip()
    return named


def read_real(value: Any, name: str, low: float, high: float, *, low_open: bool, high_open: bool, rule: str) -> float:
    """``value`` (a number, or text :func:`read_number` reads) as a float between ``low`` and ``high``; ``rule`` says
    the interval in words in the message (``must lie strictly between 0 and 1``)."""
    if isinstance(value, str):
        try:
            value = read_number(value)
        except ValueError:
            raise InvalidArgumentError(f"{name} {value!r} is not a number") from None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InvalidArgumentTypeError(f"{name} must be a number, got {type(value).__name__}")
    x = float(value)
    inside = (low < x if low_open else low <= x) and (x < high if high_open else x <= high)
    if math.isnan(x) or not inside:
        raise InvalidArgumentError(f"{name} {rule}, got {value!r}")
    return x


def read_whole(value: Any, name: str, low: int, high: int) -> int:
    """``value`` (an integer, or its digits as text) as an int from ``low`` to ``high``."""
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InvalidArgumentTypeError(f"{name} must be a whole number, got {value!r}")
    if not low <= int(value) <= high:
        raise InvalidArgumentError(f"{name} must be a whole number from {low} to {high}, got {value!r}")
    return int(value)


def _listed(text: str | Sequence[float], name: str) -> list[float]:
    """The numbers of ``start:stop:count`` (inclusive, evenly spaced), of a comma list ``0.5,1,2`` or of a
    sequence: at least one, at most :data:`MAX_VALUES`, not yet checked against a range."""
    if not isinstance(text, str):
        return [read_real(v, name, -math.inf, math.inf, low_open=True, high_open=True, rule="must be finite")
                for v in text]
    try:
        if ":" in text:
            parts = text.split(":")
            if len(parts) != 3:
                raise ValueError
            start, stop, count = read_number(parts[0]), read_number(parts[1]), int(parts[2])
            if count > MAX_VALUES:
                raise InvalidArgumentError(f"{name} {text!r}: {count} values is more than {MAX_VALUES}; use a "
                                           "coarser grid")
            if count < 1 or (count == 1 and start != stop):
                raise ValueError
            out = [start + (stop - start) * i / (count - 1) for i in range(count)] if count > 1 else [start]
        else:
            out = [read_number(v) for v in text.split(",") if v.strip()]
    except InvalidArgumentError:
        raise
    except ValueError:
        raise InvalidArgumentError(f"{name} {text!r}: write start:stop:count (e.g. 0.1:5:50) or a list 0.5,1,2"
                                   ) from None
    if not out:
        raise InvalidArgumentError(f"{name} {text!r}: no values; write start:stop:count or a list 0.5,1,2")
    return out


def _each(text: str | Sequence[float], name: str, ok: Callable[[float], bool], must: str) -> list[float]:
    out = _listed(text, name)
    for v in out:
        if not ok(v):
            raise InvalidArgumentError(f"{name} {text!r}: every value must be {must}, got {v!r}")
    return out


def read_values(text: str | Sequence[float], name: str, *, low: float, high: float, low_open: bool = True,
           high_open: bool = True, rule: str | None = None) -> list[float]:
    """``start:stop:count`` (inclusive, evenly spaced), a comma list ``0.5,1,2`` or a sequence of numbers, each in
    the interval from ``low`` to ``high`` (``rule`` says it in words in the message, else the interval)."""
    lo, hi = ("(" if low_open else "["), (")" if high_open else "]")

    def ok(v: float) -> bool:
        return math.isfinite(v) and (low < v if low_open else low <= v) and (v < high if high_open else v <= high)

    return _each(text, name, ok, rule or f"in {lo}{low:g}, {high:g}{hi}")


def read_budgets(text: str | Sequence[float], name: str) -> list[float]:
    """Budgets (nats) written as :func:`read_values` are, each accepted by the one budget rule
    (:func:`designer.budget.check_budget`)."""
    from .validation import BUDGET_RULE, check_budget

    def ok(v: float) -> bool:
        try:
            check_budget(v)
        except InvalidArgumentError:
            return False
        return True

    return _each(text, name, ok, BUDGET_RULE)


def read_prior(given: str | Mapping[str, float] | Sequence[float] | None, inputs: Sequence[str], name: str,
          default: Sequence[float] | None = None) -> list[float]:
    """The shares of the inputs, one per input: ``0.3,0.7`` (in input order), ``yes=0.3,no=0.7``, fractions
    (``1/3,2/3``), a mapping or a sequence; default ``default``, else uniform. Pairs (or a mapping) may name only
    some inputs (``never=0.05``): the others share the rest in proportion to ``default`` (evenly without one)."""
    k = len(inputs)
    base = [1.0 / k] * k if default is None else [float(v) for v in default]
    if given is None:
        return base
    try:
        text = repr(given if isinstance(given, str) else dict(given) if isinstance(given, Mapping) else list(given))
    except TypeError:
        raise InvalidArgumentTypeError(f"{name} must be text such as yes=0.3,no=0.7, a mapping of inputs to "
                                       f"shares or {k} numbers, got {given!r}") from None
    try:
        if isinstance(given, str):
            parts = _prior_parts(given)
            if parts and all("=" in t for t in parts):
                named = {a.strip(): read_number(b) for a, b in (t.split("=", 1) for t in parts)}
                out = _fill(name, text, inputs, named, base)
            else:
                out = [read_number(t) for t in parts]
        elif isinstance(given, Mapping):
            out = _fill(name, text, inputs, {str(a): float(b) for a, b in given.items()}, base)
        else:
            out = [float(v) for v in given]
    except InvalidArgumentError:
        raise
    except (TypeError, ValueError):
        raise InvalidArgumentError(f"{name} {text}: write {k} numbers (e.g. 0.3,0.7 or 1/3,2/3) or label=value "
                                   "pairs") from None
    if len(out) != k:
        raise InvalidArgumentError(f"{name} {text}: {len(out)} values for {k} inputs {list(inputs)}")
    from .validation import check_prior

    try:
        check_prior(out, k, name)  # the package's one simplex check
    except (TypeError, ValueError):
        raise InvalidArgumentError(f"{name} {text}: the shares must be non-negative and sum to 1") from None
    return out


def _prior_parts(given: str) -> list[str]:
    """The comma-separated items of a prior written as text (``yes=0.3, no=0.7`` or ``0.3,0.7``), blanks dropped."""
    return [t.strip() for t in given.split(",") if t.strip()]


def read_named_prior(given: str, name: str) -> tuple[list[str], list[float]]:
    """The inputs and their shares from ``yes=0.3,no=0.7`` alone (every input named, as :func:`read_prior` reads
    the shares), for a command whose inputs are the prior's own.

    Examples
    --------
    >>> from designer._internal.keywords import read_named_prior
    >>> read_named_prior("yes=1/4, no=3/4", "--prior")
    (['yes', 'no'], [0.25, 0.75])
    """
    parts = _prior_parts(str(given))
    if not parts or not all("=" in t for t in parts):
        raise InvalidArgumentError(f"{name}: name the answers with their shares, e.g. {name} yes=0.3,no=0.7")
    labels = [t.split("=", 1)[0].strip() for t in parts]
    return labels, read_prior(given, labels, name)


def _fill(name: str, text: str, inputs: Sequence[str], given: dict[str, float], base: list[float]) -> list[float]:
    """The inputs ``given`` leaves out share ``1 - sum(given)`` in proportion to ``base``."""
    unknown = sorted(set(given) - set(inputs))
    if unknown:
        raise InvalidArgumentError(f"{name} {text}: unknown inputs {unknown}; the inputs are {list(inputs)}")
    rest = [i for i, x in enumerate(inputs) if x not in given]
    left = 1.0 - sum(given.values())
    out = [given.get(x, 0.0) for x in inputs]
    if not rest:
        return out
    if left < -1e-12 or any(v < 0 for v in given.values()):
        raise InvalidArgumentError(f"{name} {text}: the named shares exceed 1 or are negative")
    weights = [base[i] for i in rest]
    total = sum(weights)
    for i, w in zip(rest, weights):
        out[i] = max(left, 0.0) * (w / total if total > 0 else 1.0 / len(rest))
    return out


def read_allocation(value: Any, name: str) -> str | float:
    """The member of a WLDP credal set: ``"uniform"`` or lambda, a number (or its text; its range [0, 1] is
    checked where it is used, :func:`designer.estimation.sampling.precise_distributions`)."""
    if value == "uniform":
        return "uniform"
    try:
        if isinstance(value, bool):
            raise TypeError
        return read_number(value) if isinstance(value, str) else float(value)
    except (TypeError, ValueError):
        raise InvalidArgumentError(f"{name} must be 'uniform' or a number in [0, 1], got {value!r}") from None


def check_output(path: str | os.PathLike[str], inputs: Iterable[object], force: bool = False,
                 advice: str | None = None) -> None:
    """Refuse, before any work, an output that is an input (never overwritten), exists (without ``force``; the
    message ends with ``advice``, by default: choose another name or pass ``force=True`` / ``--force``), or whose
    folder is missing or not writable. The one check of every file a command or a front door writes."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise InvalidArgumentError(f"{path}: the folder {os.path.dirname(path) or '.'} does not exist; create it first")
    if not os.access(folder, os.W_OK):
        raise InvalidArgumentError(f"{path}: the folder {os.path.dirname(path) or '.'} is not writable")
    out = os.path.realpath(path)
    if any(out == os.path.realpath(p) for p in inputs if isinstance(p, str | os.PathLike)):
        raise InvalidArgumentError(f"{path}: is an input of this command; input files are never overwritten")
    if os.path.exists(out) and not force:
        raise InvalidArgumentError(f"{path}: already exists; "
                                   f"{advice or 'choose another name or pass ' + shown('force', True)}")
