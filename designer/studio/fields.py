"""The studio's form fields: numbers read in the user's locale (or refused in words), the question's fields to
and from a problem dictionary (what :func:`tomllib.loads` gives for a problem file), and that dictionary
written back as a problem file.

Every refusal is a :class:`~designer.exceptions.FieldError` that names the field it belongs to, so the page shows
it once, next to that field.
"""

from __future__ import annotations

import copy
import json
import math
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from .._internal.validation import check_prior
from ..exceptions import FieldError, InvalidArgumentError

__all__ = ["Form", "apply_fields", "carried", "default_objective", "fields_of", "fresh_question", "loaded_words", "num",
           "read_count", "read_number", "read_numbers", "toml_text"]

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")
_PLAIN = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
_GROUPED = re.compile(r"^\d{1,3}(?:[,. \u00a0\u202f]\d{3})+$")


def _decimal_text(text: str, decimal: str) -> str:
    """``text`` with the locale's decimal comma made a point, when the locale writes decimals with a comma."""
    return text.replace(",", ".") if decimal == "," else text


def read_number(text: Any, field: str, what: str, *, decimal: str = ".", low: float | None = None,
                high: float | None = None, low_open: bool = True, high_open: bool = True,
                fractions: bool = False) -> float:
    """A number typed into a field, in the user's locale: ``decimal`` is the separator the browser's locale
    writes decimals with (``"."`` or ``","``; the page asks ``Intl.NumberFormat``).

    A comma where the locale writes a point (``"1,5"`` in English) is refused with the likely meaning
    (``did you mean 1.5?``), as is a point in a comma locale followed by three digits (``"1.500"`` in German may
    be 1500). With ``fractions``, ``"1/5"`` is read exactly. ``low``/``high`` bound the value (open or closed).

    Raises
    ------
    FieldError
        Naming ``what`` and saying what was expected.
    """
    raw = "" if text is None else str(text).strip()
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        value = float(text)
    else:
        if not raw:
            raise FieldError(field, f"{what}: type a number")
        value = _parse(raw, field, what, decimal, fractions)
    if not math.isfinite(value):
        raise FieldError(field, f"{what}: type a finite number, not {raw!r}")
    _bounds(value, raw or repr(value), field, what, low, high, low_open, high_open)
    return value


def _parse(raw: str, field: str, what: str, decimal: str, fractions: bool) -> float:
    text = raw.replace("\u2212", "-")
    if fractions and "/" in text:
        try:
            return float(Fraction(_decimal_text(text, decimal).replace(" ", "")))
        except (ValueError, ZeroDivisionError):
            raise FieldError(field, f"{what}: {raw!r} is not a fraction such as 1/5") from None
    if decimal == "," and "," in text:
        if text.count(",") == 1 and "." not in text and _PLAIN.match(text.replace(",", ".")):
            return float(text.replace(",", "."))
    elif decimal == "," and re.match(r"^[+-]?\d{1,3}\.\d{3}$", text):
        point = text.replace(".", ",")
        raise FieldError(field, f"{what}: {raw!r} is ambiguous here; write {point} for a decimal, or "
                                f"{text.replace('.', '')} without the point for a whole number")
    if _PLAIN.match(text):
        return float(text)
    if decimal == "." and text.count(",") == 1 and _PLAIN.match(text.replace(",", ".")):
        guess = text.replace(",", ".")
        raise FieldError(field, f"{what}: {raw!r} has a comma: did you mean {guess}? Write decimals with a point")
    example = "0,2" if decimal == "," else "0.2"
    more = " or 1/5" if fractions else ""
    raise FieldError(field, f"{what}: {raw!r} is not a number; type one such as {example}{more}")


def _bounds(value: float, shown: str, field: str, what: str, low: float | None, high: float | None,
            low_open: bool, high_open: bool) -> None:
    below = low is not None and (value <= low if low_open else value < low)
    above = high is not None and (value >= high if high_open else value > high)
    if not (below or above):
        return
    parts = []
    if low is not None:
        parts.append(f"{'above' if low_open else 'at least'} {low:g}")
    if high is not None:
        parts.append(f"{'below' if high_open else 'at most'} {high:g}")
    raise FieldError(field, f"{what}: type a number {' and '.join(parts)}, not {shown}")


def read_count(text: Any, field: str, what: str, *, decimal: str = ".", low: int = 1,
               high: int = 10**12) -> int:
    """A whole number typed into a field; thousands written with the locale's grouping (``2,500``, ``2.500``,
    ``2 500``) are read as such."""
    raw = "" if text is None else str(text).strip()
    if isinstance(text, int) and not isinstance(text, bool):
        value = text
    elif not raw:
        raise FieldError(field, f"{what}: type a whole number")
    elif raw.isdigit():
        value = int(raw)
    elif _GROUPED.match(raw) and (raw[-4] != decimal):
        value = int(re.sub(r"\D", "", raw))
    else:
        try:
            number = read_number(raw, field, what, decimal=decimal)
        except FieldError:
            raise FieldError(field, f"{what}: {raw!r} is not a whole number; type one such as 2500") from None
        if number != int(number):
            raise FieldError(field, f"{what}: type a whole number, not {raw}")
        value = int(number)
    if not low <= value <= high:
        raise FieldError(field, f"{what}: type a whole number from {low:,} to {high:,}, not {raw or value}")
    return value


def read_numbers(text: str, field: str, what: str, *, decimal: str = ".", count: int | None = None,
                 fractions: bool = True, unknown: bool = False) -> list[float]:
    """Several numbers in one field: separated by commas (semicolons where the locale writes decimals with a
    comma), spaces or semicolons; ``count`` numbers are expected when given."""
    raw = str(text).strip()
    if decimal == "," and (";" in raw or re.search(r"\d,\d", raw)):  # decimal commas: ';' or spaces between
        pieces = [p for p in re.split(r"[;\s]+", raw) if p]
    else:
        pieces = [p for p in re.split(r"[,;\s]+", raw) if p]
    if count is not None and len(pieces) != count:
        hint = ""
        if decimal == "." and count is not None and len(pieces) == 2 * count and re.search(r"\d,\d", raw):
            halves = [f"{pieces[2 * i]}.{pieces[2 * i + 1]}" for i in range(count)]
            hint = f"; did you mean {', '.join(halves)}? Write decimals with a point"
        separator = "semicolons" if decimal == "," else "commas"
        other = " (or tick \"The true shares are unknown\")" if unknown and not hint else ""
        raise FieldError(field, f"{what}: expected {count} numbers separated by {separator}, one per true answer, "
                                f"got {len(pieces)}{hint}{other}")
    return [read_number(p, field, what, decimal=decimal, fractions=fractions) for p in pieces]


def _toml_key(key: str) -> str:
    return key if _BARE_KEY.match(key) else json.dumps(key)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items()) + " }"
    raise InvalidArgumentError(f"cannot write {value!r} to a problem file")


def toml_text(data: dict[str, Any]) -> str:
    """A problem file (TOML) for ``data``, the dictionary :func:`tomllib.loads` gives for it.

    Plain keys first, then one ``[table]`` per dictionary value (its dictionary values as inline tables),
    so that ``tomllib.loads(toml_text(d)) == d`` for every problem the studio writes.
    """
    lines = [f"{_toml_key(k)} = {_toml_value(v)}" for k, v in data.items() if not isinstance(v, dict)]
    for key, table in data.items():
        if isinstance(table, dict):
            lines += ["", f"[{_toml_key(key)}]"]
            lines += [f"{_toml_key(k)} = {_toml_value(v)}" for k, v in table.items()]
    return "\n".join(lines) + "\n"


def num(x: float) -> str:
    """A number as a command line takes it, without loss (``1`` for 1.0, ``0.15`` for 0.15)."""
    text = repr(float(x))
    return text[:-2] if text.endswith(".0") else text


@dataclass(frozen=True)
class Form:
    """The question's fields as the page holds them (text, as typed)."""

    inputs: str
    answers: str
    dont_know: str
    prior: str
    prior_unknown: bool
    semantics: str
    objective: str
    title: str = ""


def fields_of(data: dict[str, Any]) -> Form:
    """The question's form fields for a problem dictionary."""
    structure = data.get("structure", {})
    focal = structure.get("focal_sets")
    dk = structure.get("dont_know")
    prior = data.get("prior")
    return Form(
        inputs=", ".join(data["inputs"]),
        answers="\n".join(" | ".join(s) for s in focal) if focal else "",
        dont_know="" if dk is None else num(dk),
        prior="" if prior is None else ", ".join(num(v) for v in prior),
        prior_unknown=prior is None,
        semantics=str(data.get("semantics", "sldp")),
        objective=str(data.get("objective", default_objective())),
        title=str(data.get("name") or ""),
    )


def fresh_question(inputs: list[str], semantics: str = "sldp") -> dict[str, Any]:
    """The problem dictionary a question typed from scratch starts from: its true answers, the library's
    default objective (the most accurate shares on average), no "don't know" share, no expected shares, no title."""
    data: dict[str, Any] = {"inputs": list(inputs), "epsilon": 1.0, "semantics": semantics,
                            "objective": default_objective()}
    return data


def carried(base: dict[str, Any], inputs: list[str]) -> list[str]:
    """What a loaded question carries beyond a fresh one with the same true answers, in words (the settings a new
    question must not inherit without a word): its title, objective, "don't know" share, expected shares, answers,
    answer words and tables."""
    out = []
    fresh = fresh_question(inputs)
    if base.get("name"):
        out.append(f"the title {base['name']}")
    if str(base.get("objective", fresh["objective"])) != fresh["objective"]:
        out.append(f"the objective {base['objective']} (now {fresh['objective']})")
    structure = base.get("structure") or {}
    if structure.get("dont_know") is not None:
        out.append(f"the share told to answer \"don't know\", {num(structure['dont_know'])} (now none)")
    if structure.get("focal_sets"):
        out.append("the list of answers a respondent may give (now any answer or set)")
    if base.get("prior") is not None:
        out.append("the expected shares " + ", ".join(num(v) for v in base["prior"]) + " (now unknown: equal)")
    for key, words in (("gain", "the scoring table"), ("utility", "the utility table"), ("answers", "the answer words"),
                       ("strata", "the groups")):
        if key in base:
            out.append(words)
    return out


def loaded_words(data: dict[str, Any], shown: str) -> str:
    """The line saying a question was loaded and what it carries beyond the defaults (cleared when other true
    answers are typed)."""
    kept = [re.sub(r" \(now [^)]*\)$", "", c) for c in carried(data, list(data["inputs"]))]
    kept = [c for c in kept if not c.startswith("the title")]
    if not kept:
        return f"Loaded the question {shown}."
    return (f"Loaded the question {shown}. Beyond the defaults it sets " + "; ".join(kept) + ". Typing other true "
            "answers starts a new question without them.")


def default_objective() -> str:
    """The objective of a problem that names none: :class:`designer.DesignProblem`'s default."""
    from ..optimal.problem import DesignProblem

    return str(DesignProblem(inputs=("a", "b"), epsilon=1.0).objective)


def _labels(text: str) -> list[str]:
    return [x.strip() for x in str(text).split(",") if x.strip()]


def apply_fields(base: dict[str, Any], form: Form, *, decimal: str = ".") -> dict[str, Any]:
    """The problem dictionary of ``base`` with the form's values; a field that cannot be read raises
    :class:`FieldError` naming it."""
    data = copy.deepcopy(base)
    inputs = _labels(form.inputs)
    if len(inputs) < 2:
        raise FieldError("inputs", "True answers: give at least two, separated by commas (yes, no)")
    if len(set(inputs)) < len(inputs):
        twice = sorted({x for x in inputs if inputs.count(x) > 1})
        raise FieldError("inputs", f"True answers: {', '.join(twice)} appears twice; name each answer once")
    if inputs != list(base["inputs"]):
        if list(base.get("frame", base["inputs"])) == list(base["inputs"]):
            data.pop("frame", None)
        for key in ("gain", "utility", "answers", "strata"):  # tables written for the old labels
            data.pop(key, None)
    data["inputs"] = inputs
    structure = dict(data.get("structure", {}))
    lines = [line for line in str(form.answers).splitlines() if line.strip()]
    if lines:
        sets = [[m.strip() for m in line.replace(",", "|").split("|") if m.strip()] for line in lines]
        known = set(data.get("frame", inputs))
        for i, members in enumerate(sets, start=1):
            unknown = [m for m in members if m not in known]
            if unknown:
                raise FieldError("answers", f"Answers, line {i}: {', '.join(map(repr, unknown))} is not a true "
                                            f"answer; use the true answers' names ({', '.join(inputs)})")
        structure["focal_sets"] = sets
    else:
        structure.pop("focal_sets", None)
    if str(form.dont_know).strip():
        structure["dont_know"] = read_number(form.dont_know, "dont_know", "Share told to answer \"don't know\"",
                                             decimal=decimal, low=0.0, high=1.0, low_open=False, high_open=False,
                                             fractions=True)
    else:
        structure.pop("dont_know", None)
    if structure:
        data["structure"] = structure
    else:
        data.pop("structure", None)
    if form.prior_unknown or not str(form.prior).strip():
        data.pop("prior", None)
    else:
        prior = read_numbers(form.prior, "prior", "Expected shares", decimal=decimal, count=len(inputs),
                             unknown=True)
        try:
            check_prior(prior, len(inputs))
        except InvalidArgumentError:
            raise FieldError("prior", f"Expected shares: they must be 0 or more and add up to 1; these add up to "
                                      f"{sum(prior):.6g}") from None
        data["prior"] = prior
    title = " ".join(str(form.title).split())
    if title:
        data["name"] = title
    else:
        data.pop("name", None)
    for key, default in (("semantics", "sldp"), ("objective", default_objective())):
        value = getattr(form, key)
        if key in data or value != default:
            data[key] = value
    return data
