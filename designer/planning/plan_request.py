"""What a plan is asked, read once: which plan the keywords of ``designer plan`` (and of :func:`designer.plan`)
ask for, the keywords refused because they would not change it, and the values checked (written as a person writes
them, ``yes=0.3``, ``1/5``, ``0.5:3:6``, they are read by :mod:`designer._internal.keywords`).

The rules live here so that the command line and the front door decide alike: a keyword given is one that is not
``None``; a keyword that would not change the answer is refused with the reason, never silently ignored. Messages
name the keyword (``width``), or the flag (``--width``) under the command line (:func:`~designer._internal.keywords.
shown`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from .._internal.keywords import read_number, read_real, read_values, read_whole, say, shown
from ..exceptions import InvalidArgumentError
from ..mechanism import Mechanism
from ..vocabulary import PlanMode, PlanSource

__all__ = ["CHECK_METHODS", "DEFAULTS", "GROUP_ONLY", "check_method", "check_values", "curve_ns", "plan_mode",
           "refuse_unused", "split_fractions"]

#: Defaults of the keywords whose use is checked against the mode (``None`` when not given, so a keyword given
#: explicitly can be told from one left out).
DEFAULTS: dict[str, Any] = {"level": 0.95, "power": 0.8, "alpha": 0.05, "groups": 1, "alternative": "two-sided",
                            "null_variance": "pooled", "null_difference": 0.0}
#: Keywords only a plan with several mechanisms reads.
GROUP_ONLY = ("split", "noncompliance", "unrelated", "unknown_share", "share_groups")
#: Keywords of a plan with one source that a plan with several mechanisms does not read.
NOT_FOR_GROUPS = ("epsilon", "dont_know", "grid", "plot", "check", "seed", "method", "report", "curve_plot")

#: Keywords each plan reads; any other keyword given is refused with the reason.
USES: dict[PlanMode, set[str]] = {
    PlanMode.ALLOCATION: {"width", "level", "report", "force"},
    PlanMode.SAMPLE_SIZE: {"prior", "width", "level", "n", "grid", "plot", "check", "seed", "method", "report",
                           "force", "semantics", "epsilon", "dont_know"},
    PlanMode.SMALLEST_BUDGET: {"prior", "width", "level", "n", "grid", "plot", "check", "seed", "method", "report",
                               "force", "dont_know"},
    PlanMode.POWER: {"prior", "detect", "power", "alpha", "groups", "share", "null", "n", "width", "level", "grid",
                     "plot", "check", "seed", "method", "report", "force", "semantics", "epsilon", "dont_know",
                     "alternative", "null_variance", "null_difference", "curve", "curve_detect", "curve_plot"},
}
#: Why a keyword is refused, by plan (templates of :func:`~designer._internal.keywords.say`).
WHY: dict[PlanMode, str] = {
    PlanMode.ALLOCATION: "a questionnaire plan splits its own budget at its questions' priors; it reads {width} "
                         "(and {level}, {report})",
    PlanMode.SAMPLE_SIZE: "it belongs to a power plan ({detect})",
    PlanMode.SMALLEST_BUDGET: "{n} with {width} searches the smallest budget (drop {epsilon}), and the power "
                              "{keywords} belong to {detect}",
    PlanMode.POWER: "",
}


def plan_mode(kind: PlanSource, source: Any, *, width: float | None, n: int | None, detect: float | None
              ) -> PlanMode:
    """The plan the keywords ask for, decided once: a questionnaire's split (``ALLOCATION``); power with
    ``detect``; the smallest budget with ``n`` and ``width`` for a problem; else the sample size for ``width``."""
    if kind is PlanSource.SURVEY:
        return PlanMode.ALLOCATION
    if width is None and detect is None:
        raise InvalidArgumentError(say("say what to plan: {width=W} (sample size), {n=N} {width=W} (smallest budget "
                                       "with a problem file; the half-width at n with a mechanism file), {detect=D} "
                                       "[{power=P}] (power)"))
    if detect is not None:
        return PlanMode.POWER
    problem = not isinstance(source, Mechanism)
    return PlanMode.SMALLEST_BUDGET if problem and n is not None else PlanMode.SAMPLE_SIZE


def refuse_unused(given: set[str], kind: PlanSource, mode: PlanMode, name: str) -> None:
    """Refuse, before any work, every keyword in ``given`` that would not change a ``mode`` plan of a ``kind``
    source named ``name``."""
    unused = sorted(given - USES[mode])
    if unused:
        raise InvalidArgumentError(f"{shown(unused[0])} has no effect on this plan: "
                                   f"{say(WHY[mode]) or 'it does not apply'}; drop it")
    if kind is not PlanSource.PROBLEM and ({"epsilon", "dont_know"} & given):
        raise InvalidArgumentError(say("{epsilon} and {dont_know} override a problem file's; this source is a ")
                                   + ("questionnaire (its budget is its epsilon key)" if kind is PlanSource.SURVEY
                                      else "mechanism"))
    if kind is PlanSource.PROBLEM and "semantics" in given:
        raise InvalidArgumentError(say("{semantics}: {name} states its own semantics; {semantics} is for a mechanism "
                                       "file", name=name))
    if kind is PlanSource.MECHANISM and ({"grid", "plot"} & given):
        raise InvalidArgumentError(say("{grid} and {plot} design the problem at each budget: they need a problem file "
                                       "(TOML)"))
    if {"grid", "plot"} & given and "width" not in given:
        raise InvalidArgumentError(say("{grid} and {plot} tabulate respondents against eps for a half-width: add "
                                       "{width=W}"))
    if "seed" in given and "check" not in given:
        raise InvalidArgumentError(say("{seed} seeds the simulation of {check}; add {check=REPS} or drop {seed}"))
    if "method" in given and "check" not in given:
        raise InvalidArgumentError(say("{method} names the estimator {check} simulates with; add {check=REPS} or "
                                       "drop {method}"))
    if "force" in given and not ({"report", "plot", "curve_plot"} & given):
        raise InvalidArgumentError(say("{force} lets {report}, {plot} or {curve_plot} replace a file; none was given"))
    if ({"curve_detect", "curve_plot"} & given) and "curve" not in given:
        raise InvalidArgumentError(say("{curve_detect} and {curve_plot} belong to a power curve: add "
                                       "{curve=N1:N2:COUNT}"))
    if mode in (PlanMode.SAMPLE_SIZE, PlanMode.SMALLEST_BUDGET) and "level" in given and "width" not in given:
        raise InvalidArgumentError(say("{level} sets the confidence level of {width}; add {width=W}"))
    if mode is PlanMode.POWER and "level" in given and not ({"width", "check"} & given):
        raise InvalidArgumentError(say("{level} sets the level of an interval: with {detect} it applies to {width} or "
                                       "{check}; the test's level is {alpha}"))


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
            out[key] = read_real(out[key], shown(key), low, high, low_open=low_open, high_open=high_open, rule=rule)
    for key, (low, high) in {"n": (1, 10**12), "groups": (1, 2), "check": (2, 10**6), "seed": (0, 2**63 - 1)}.items():
        if out.get(key) is not None:
            out[key] = read_whole(out[key], shown(key), low, high)
    return out


#: The estimators ``check`` simulates with, by the word ``designer estimate --method`` uses: Newton, EM and the
#: convex path reach the same maximum-likelihood estimate.
CHECK_METHODS: dict[str, str] = {"mle": "mle", "newton": "mle", "em": "mle", "convex": "mle", "posterior": "posterior"}


def check_method(method: str | None) -> str:
    """The estimator (``"mle"`` or ``"posterior"``) a plan's simulation check uses for ``method`` (None: the MLE).

    Examples
    --------
    >>> from designer.planning.plan_request import check_method
    >>> check_method(None), check_method("em"), check_method("posterior")
    ('mle', 'mle', 'posterior')
    """
    if method is None:
        return "mle"
    if method not in CHECK_METHODS:
        raise InvalidArgumentError(f"{shown('method')} must be one of {', '.join(CHECK_METHODS)}, not {method!r}")
    return CHECK_METHODS[method]


def curve_ns(curve: str | Sequence[int]) -> list[int]:
    """Respondent numbers of ``curve``: start:stop:count, a list or a sequence, whole numbers >= 1, sorted, each
    once."""
    return sorted({round(v) for v in read_values(curve, shown("curve"), low=1.0, high=1e12, low_open=False,
                                            high_open=False)})


def split_fractions(split: str | Mapping[str, float] | None, names: Sequence[str]) -> dict[str, float] | None:
    """Each group's share of the respondents from ``NAME=SIZE,...`` (a size as
    :func:`~designer._internal.keywords.read_number` reads it: ``a=1/3``) or a mapping (fractions or relative
    sizes), scaled to sum to 1; ``None``: the split with the smallest variance is searched."""
    if split is None:
        return None
    text = split if isinstance(split, str) else repr(dict(split))
    items = [item.partition("=") for item in split.split(",")] if isinstance(split, str) else \
        [(str(k), "=", v) for k, v in split.items()]
    sizes: dict[str, float] = {}
    for name, sep, value in items:
        try:
            size = read_number(value) if isinstance(value, str) else float(value)
        except (TypeError, ValueError):
            size = float("nan")
        if not sep or not size >= 0 or size == float("inf"):
            raise InvalidArgumentError(f"{shown('split')} {text!r}: write NAME=SIZE for every group "
                                       f"({', '.join(names)}), sizes >= 0")
        sizes[name.strip()] = size
    total = sum(sizes.values())
    if not total > 0:
        raise InvalidArgumentError(f"{shown('split')} {text!r}: the sizes add up to 0")
    return {k: v / total for k, v in sizes.items()}
