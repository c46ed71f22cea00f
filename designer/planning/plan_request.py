"""What a plan is asked, read once: which plan the keywords of ``designer plan`` (and of :func:`designer.plan`)
ask for, the keywords refused because they would not change it, and the values written as a person writes them
(``yes=0.3``, ``1/5``, ``0.5:3:6``) turned into numbers.

The rules live here so that the command line and the front door decide alike: a keyword given is one that is not
``None``; a keyword that would not change the answer is refused with the reason, never silently ignored.
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Mapping, Sequence
from typing import Any

from .._internal.validation import check_prior
from ..exceptions import InvalidArgumentError, InvalidArgumentTypeError
from ..mechanism import Mechanism
from ..vocabulary import PlanMode, PlanSource

__all__ = ["BUDGET_WORDS", "DEFAULTS", "GROUP_ONLY", "check_output", "check_values", "curve_ns", "flag", "number",
           "plan_mode", "prior_values", "refuse_unused", "split_fractions", "values"]

#: The rule of every budget (nats), as a problem file's ``epsilon`` states it.
BUDGET_WORDS = "a finite number > 0"

#: Defaults of the keywords whose use is checked against the mode (``None`` when not given, so a keyword given
#: explicitly can be told from one left out).
DEFAULTS: dict[str, Any] = {"level": 0.95, "power": 0.8, "alpha": 0.05, "groups": 1, "alternative": "two-sided",
                            "null_variance": "pooled", "null_difference": 0.0}
#: Keywords only a plan with several mechanisms reads.
GROUP_ONLY = ("split", "noncompliance", "unrelated", "unknown_share", "share_groups")
#: Keywords of a plan with one source that a plan with several mechanisms does not read.
NOT_FOR_GROUPS = ("epsilon", "dont_know", "grid", "plot", "check", "seed", "report", "curve_plot")
#: Most values a grid or a curve may hold.
MAX_VALUES = 10_000

#: Keywords each plan reads; any other keyword given is refused with the reason.
USES: dict[PlanMode, set[str]] = {
    PlanMode.ALLOCATION: {"width", "level", "report", "force"},
    PlanMode.SAMPLE_SIZE: {"prior", "width", "level", "n", "grid", "plot", "check", "seed", "report", "force",
                           "semantics", "epsilon", "dont_know"},
    PlanMode.SMALLEST_BUDGET: {"prior", "width", "level", "n", "grid", "plot", "check", "seed", "report", "force",
                               "dont_know"},
    PlanMode.POWER: {"prior", "detect", "power", "alpha", "groups", "share", "null", "n", "width", "level", "grid",
                     "plot", "check", "seed", "report", "force", "semantics", "epsilon", "dont_know",
                     "alternative", "null_variance", "null_difference", "curve", "curve_detect", "curve_plot"},
}
WHY: dict[PlanMode, str] = {
    PlanMode.ALLOCATION: "a questionnaire plan splits its own budget at its questions' priors; it reads --width "
                         "(and --level, --report)",
    PlanMode.SAMPLE_SIZE: "it belongs to a power plan (--detect)",
    PlanMode.SMALLEST_BUDGET: "--n with --width searches the smallest budget (drop --epsilon), and the power flags "
                              "belong to --detect",
    PlanMode.POWER: "",
}


def flag(keyword: str) -> str:
    """The command-line flag of a keyword (``null_variance`` -> ``--null-variance``)."""
    return "--" + keyword.replace("_", "-")


def plan_mode(kind: PlanSource, source: Any, *, width: float | None, n: int | None, detect: float | None
              ) -> PlanMode:
    """The plan the keywords ask for, decided once: a questionnaire's split (``ALLOCATION``); power with
    ``detect``; the smallest budget with ``n`` and ``width`` for a problem; else the sample size for ``width``."""
    if kind is PlanSource.SURVEY:
        return PlanMode.ALLOCATION
    if width is None and detect is None:
        raise InvalidArgumentError("say what to plan: --width W (sample size), --n N --width W (smallest budget with "
                                   "a problem file; the half-width at n with a mechanism file), --detect D [--power P] "
                                   "(power)")
    if detect is not None:
        return PlanMode.POWER
    problem = not isinstance(source, Mechanism)
    return PlanMode.SMALLEST_BUDGET if problem and n is not None else PlanMode.SAMPLE_SIZE


def refuse_unused(given: set[str], kind: PlanSource, mode: PlanMode, name: str) -> None:
    """Refuse, before any work, every keyword in ``given`` that would not change a ``mode`` plan of a ``kind``
    source named ``name``."""
    unused = sorted(given - USES[mode])
    if unused:
        raise InvalidArgumentError(f"{flag(unused[0])} has no effect on this plan: {WHY[mode] or 'it does not apply'}; "
                                   "drop it")
    if kind is not PlanSource.PROBLEM and ({"epsilon", "dont_know"} & given):
        raise InvalidArgumentError("--epsilon and --dont-know override a problem file's; this source is a "
                                   + ("questionnaire (its budget is its epsilon key)" if kind is PlanSource.SURVEY
                                      else "mechanism"))
    if kind is PlanSource.PROBLEM and "semantics" in given:
        raise InvalidArgumentError(f"--semantics: {name} states its own semantics; --semantics is for a mechanism file")
    if kind is PlanSource.MECHANISM and ({"grid", "plot"} & given):
        raise InvalidArgumentError("--grid and --plot design the problem at each budget: they need a problem file "
                                   "(TOML)")
    if {"grid", "plot"} & given and "width" not in given:
        raise InvalidArgumentError("--grid and --plot tabulate respondents against eps for a half-width: add --width W")
    if "seed" in given and "check" not in given:
        raise InvalidArgumentError("--seed seeds the simulation of --check; add --check REPS or drop --seed")
    if "force" in given and not ({"report", "plot", "curve_plot"} & given):
        raise InvalidArgumentError("--force lets --report, --plot or --curve-plot replace a file; none was given")
    if ({"curve_detect", "curve_plot"} & given) and "curve" not in given:
        raise InvalidArgumentError("--curve-detect and --curve-plot belong to a power curve: add --curve N1:N2:COUNT")
    if mode in (PlanMode.SAMPLE_SIZE, PlanMode.SMALLEST_BUDGET) and "level" in given and "width" not in given:
        raise InvalidArgumentError("--level sets the confidence level of --width; add --width W")
    if mode is PlanMode.POWER and "level" in given and not ({"width", "check"} & given):
        raise InvalidArgumentError("--level sets the level of an interval: with --detect it applies to --width or "
                                   "--check; the test's level is --alpha")


def _real(value: Any, keyword: str, low: float, high: float, *, low_open: bool, high_open: bool, rule: str) -> float:
    if isinstance(value, str):
        try:
            value = number(value)
        except ValueError:
            raise InvalidArgumentError(f"{flag(keyword)} {value!r} is not a number") from None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InvalidArgumentTypeError(f"{flag(keyword)} must be a number, got {type(value).__name__}")
    x = float(value)
    inside = (low < x if low_open else low <= x) and (x < high if high_open else x <= high)
    if math.isnan(x) or not inside:
        raise InvalidArgumentError(f"{flag(keyword)} {rule}, got {value!r}")
    return x


def _whole(value: Any, keyword: str, low: int, high: int) -> int:
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InvalidArgumentTypeError(f"{flag(keyword)} must be a whole number, got {value!r}")
    if not low <= int(value) <= high:
        raise InvalidArgumentError(f"{flag(keyword)} must be a whole number from {low} to {high}, got {value!r}")
    return int(value)


def check_values(given: dict[str, Any]) -> dict[str, Any]:
    """The numeric keywords of a plan checked (the rules of the command line's flags) and made floats or ints;
    the others are returned as they are."""
    out = dict(given)
    reals = {"width": (0.0, 0.5, True, True, "must be a half-width in (0, 0.5) (0.5 covers every share; e.g. 0.03)"),
             "level": (0.0, 1.0, True, True, "must lie strictly between 0 and 1 (e.g. 0.95)"),
             "power": (0.0, 1.0, True, True, "must lie strictly between 0 and 1 (e.g. 0.8)"),
             "alpha": (0.0, 1.0, True, True, "must lie strictly between 0 and 1 (e.g. 0.05)"),
             "detect": (0.0, math.inf, True, True, "must be a finite number > 0"),
             "epsilon": (0.0, math.inf, True, True, "must be a finite number > 0"),
             "null_difference": (-1.0, 1.0, True, True, "must lie strictly between -1 and 1"),
             "null": (0.0, 1.0, False, False, "must be a probability in [0, 1]"),
             "dont_know": (0.0, 1.0, False, False, "must be a probability in [0, 1]"),
             "unknown_share": (0.0, 1.0, False, False, "must be a probability in [0, 1]")}
    for key, (low, high, low_open, high_open, rule) in reals.items():
        if out.get(key) is not None:
            out[key] = _real(out[key], key, low, high, low_open=low_open, high_open=high_open, rule=rule)
    for key, (low, high) in {"n": (1, 10**12), "groups": (1, 2), "check": (2, 10**6), "seed": (0, 2**63 - 1)}.items():
        if out.get(key) is not None:
            out[key] = _whole(out[key], key, low, high)
    return out


def number(text: str) -> float:
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


def values(text: str | Sequence[float], keyword: str, *, low: float, high: float, low_open: bool = True,
           high_open: bool = True, rule: str | None = None) -> list[float]:
    """``start:stop:count`` (inclusive, evenly spaced), a comma list ``0.5,1,2`` or a sequence of numbers, each in
    the interval from ``low`` to ``high`` (``rule`` says so in words in the message, e.g. ``a finite number > 0``
    for budgets)."""
    what = flag(keyword)
    if isinstance(text, str):
        try:
            if ":" in text:
                parts = text.split(":")
                if len(parts) != 3:
                    raise ValueError
                start, stop, count = number(parts[0]), number(parts[1]), int(parts[2])
                if count > MAX_VALUES:
                    raise InvalidArgumentError(f"{what} {text!r}: {count} values is more than {MAX_VALUES}; use a "
                                               "coarser grid")
                if count < 1 or (count == 1 and start != stop):
                    raise ValueError
                out = [start + (stop - start) * i / (count - 1) for i in range(count)] if count > 1 else [start]
            else:
                out = [number(v) for v in text.split(",") if v.strip()]
        except ValueError:
            raise InvalidArgumentError(f"{what} {text!r}: write start:stop:count (e.g. 0.1:5:50) or a list 0.5,1,2"
                                       ) from None
    else:
        out = [_real(v, keyword, -math.inf, math.inf, low_open=True, high_open=True, rule="must be finite")
               for v in text]
    lo, hi = ("(" if low_open else "["), (")" if high_open else "]")
    for v in out:
        if not math.isfinite(v) or v < low or v > high or (low_open and v == low) or (high_open and v == high):
            must = rule or f"in {lo}{low:g}, {high:g}{hi}"
            raise InvalidArgumentError(f"{what} {text!r}: every value must be {must}, got {v!r}")
    if not out:
        raise InvalidArgumentError(f"{what} {text!r}: no values; write start:stop:count or a list 0.5,1,2")
    return out


def curve_ns(curve: str | Sequence[int]) -> list[int]:
    """Respondent numbers of ``curve``: start:stop:count, a list or a sequence, whole numbers >= 1, sorted, each
    once."""
    return sorted({round(v) for v in values(curve, "curve", low=1.0, high=1e12, low_open=False, high_open=False)})


def prior_values(prior: str | Mapping[str, float] | Sequence[float] | None, inputs: Sequence[str],
                 default: Sequence[float] | None = None) -> list[float]:
    """The shares at which to plan, one per input: ``0.3,0.7`` (in input order), ``yes=0.3,no=0.7``, fractions
    (``1/3,2/3``), a mapping or a sequence; default ``default``, else uniform. Pairs (or a mapping) may name only
    some inputs (``never=0.05``): the others share the rest in proportion to ``default`` (evenly without one)."""
    k = len(inputs)
    base = [1.0 / k] * k if default is None else [float(v) for v in default]
    if prior is None:
        return base
    try:
        text = repr(prior if isinstance(prior, str) else dict(prior) if isinstance(prior, Mapping) else list(prior))
    except TypeError:
        raise InvalidArgumentTypeError(f"--prior must be text such as yes=0.3,no=0.7, a mapping of inputs to "
                                       f"shares or {k} numbers, got {prior!r}") from None
    try:
        if isinstance(prior, str):
            parts = [t.strip() for t in prior.split(",") if t.strip()]
            if parts and all("=" in t for t in parts):
                given = {a.strip(): number(b) for a, b in (t.split("=", 1) for t in parts)}
                out = _fill(text, inputs, given, base)
            else:
                out = [number(t) for t in parts]
        elif isinstance(prior, Mapping):
            out = _fill(text, inputs, {str(a): float(b) for a, b in prior.items()}, base)
        else:
            out = [float(v) for v in prior]
    except (TypeError, ValueError) as exc:
        if isinstance(exc, InvalidArgumentError):
            raise
        raise InvalidArgumentError(f"--prior {text}: write {k} numbers (e.g. 0.3,0.7 or 1/3,2/3) or label=value "
                                   "pairs") from None
    if len(out) != k:
        raise InvalidArgumentError(f"--prior {text}: {len(out)} values for {k} inputs {list(inputs)}")
    try:
        check_prior(out, k, "--prior")
    except (TypeError, ValueError):
        raise InvalidArgumentError(f"--prior {text}: the shares must be non-negative and sum to 1") from None
    return out


def _fill(text: str, inputs: Sequence[str], given: dict[str, float], base: list[float]) -> list[float]:
    """The inputs ``given`` leaves out share ``1 - sum(given)`` in proportion to ``base``."""
    unknown = sorted(set(given) - set(inputs))
    if unknown:
        raise InvalidArgumentError(f"--prior {text}: unknown inputs {unknown}; the inputs are {list(inputs)}")
    rest = [i for i, x in enumerate(inputs) if x not in given]
    left = 1.0 - sum(given.values())
    out = [given.get(x, 0.0) for x in inputs]
    if not rest:
        return out
    if left < -1e-12 or any(v < 0 for v in given.values()):
        raise InvalidArgumentError(f"--prior {text}: the named shares exceed 1 or are negative")
    weights = [base[i] for i in rest]
    total = sum(weights)
    for i, w in zip(rest, weights):
        out[i] = max(left, 0.0) * (w / total if total > 0 else 1.0 / len(rest))
    return out


def split_fractions(split: str | Mapping[str, float] | None, names: Sequence[str]) -> dict[str, float] | None:
    """Each group's share of the respondents from ``NAME=SIZE,...`` or a mapping (fractions or relative sizes),
    scaled to sum to 1; ``None``: the split with the smallest variance is searched."""
    if split is None:
        return None
    text = split if isinstance(split, str) else repr(dict(split))
    items = [item.partition("=") for item in split.split(",")] if isinstance(split, str) else \
        [(str(k), "=", v) for k, v in split.items()]
    sizes: dict[str, float] = {}
    for name, sep, value in items:
        try:
            size = float(value)
        except (TypeError, ValueError):
            size = float("nan")
        if not sep or not size >= 0 or size == float("inf"):
            raise InvalidArgumentError(f"--split {text!r}: write NAME=SIZE for every group ({', '.join(names)}), "
                                       "sizes >= 0")
        sizes[name.strip()] = size
    total = sum(sizes.values())
    if not total > 0:
        raise InvalidArgumentError(f"--split {text!r}: the sizes add up to 0")
    return {k: v / total for k, v in sizes.items()}


def check_output(path: str | os.PathLike[str], inputs: Sequence[str], force: bool) -> None:
    """Refuse, before any work, an output that is an input, exists (without ``force``), or has no folder."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise InvalidArgumentError(f"{path}: the folder {os.path.dirname(path) or '.'} does not exist; create it first")
    if not os.access(folder, os.W_OK):
        raise InvalidArgumentError(f"{path}: the folder {os.path.dirname(path) or '.'} is not writable")
    out = os.path.realpath(path)
    if any(out == os.path.realpath(p) for p in inputs):
        raise InvalidArgumentError(f"{path}: is an input of this command; input files are never overwritten")
    if os.path.exists(out) and not force:
        raise InvalidArgumentError(f"{path}: already exists; choose another name or pass --force")
