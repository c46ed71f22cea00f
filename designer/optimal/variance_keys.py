"""The keys of the variance objectives in a design problem, checked once (docs/theory.md, section 5.7):
``priors`` (scenarios), ``variance_weights`` and ``contrasts`` (``[variance]`` in a problem file), the true answers
in the frame and positive prior shares. It reads a problem's fields and imports nothing of ``problem`` (which
imports it), and holds the two error helpers both share."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._internal.validation import check_prior
from ..exceptions import InvalidProblemError

__all__ = ["MAX_SCENARIOS", "check_priors", "check_variance"]

#: Prior scenarios of a variance objective at most (each adds a semidefinite block to the program).
MAX_SCENARIOS = 32


def _fail(where: str, key: str, expected: str, got: object) -> InvalidProblemError:
    shown = repr(got)
    if len(shown) > 80:
        shown = f"{shown[:40]}... ({len(shown)} characters)"
    return InvalidProblemError(f"{where}key '{key}': expected {expected}, got {shown}")



def _as_list(values: object) -> list[object]:
    try:
        return [float(v) for v in np.ravel(np.asarray(values, dtype=object))]
    except (TypeError, ValueError, OverflowError):
        return [values]



def check_priors(problem: Any, where: str) -> None:
    """``priors``: scenarios of a variance objective, each ``k`` positive shares summing to 1 (an array)."""
    if problem.priors is None:
        return
    k = len(problem.inputs)
    if not problem.objective.variance:
        raise InvalidProblemError(f"{where}key 'priors': prior scenarios are made small by the variance "
                                  "objectives only; add objective = \"variance\" or \"max_variance\", "
                                  "or give one prior")
    try:
        rows = [check_prior(row, k, "priors") for row in problem.priors]
    except (TypeError, ValueError):
        raise _fail(where, "priors", f"a list of priors, each {k} non-negative numbers summing to 1",
                    _as_list(problem.priors)) from None
    if not rows or len(rows) > MAX_SCENARIOS:
        raise _fail(where, "priors", f"1 to {MAX_SCENARIOS} prior scenarios", len(rows))
    out = np.array(rows)
    out.setflags(write=False)
    object.__setattr__(problem, "priors", out)


def check_variance(problem: Any, where: str) -> None:
    """Variance objectives: the true answers in the frame, positive prior shares, ``variance_weights`` or
    ``contrasts`` (one of them) over the inputs, finite; refused with any other objective."""
    set_ = object.__setattr__
    extra = [key for key in ("variance_weights", "contrasts") if getattr(problem, key) is not None]
    if not problem.objective.variance:
        if extra:
            key = "variance.weights" if extra[0] == "variance_weights" else "variance.contrasts"
            raise InvalidProblemError(f"{where}key '{key}' applies to objective 'variance' or 'max_variance', "
                                      f"not '{problem.objective}'")
        return
    if problem.missing_truth():
        raise InvalidProblemError(
            f"{where}objective '{problem.objective}' reports sets of true answers (\"my answer is one of these\"); "
            f"inputs {problem.missing_truth()} have no frame label of the same name: add them to the frame, or "
            "name another objective (truthful, gain, a utility)")
    for scenario, pi in enumerate([problem.prior] if problem.priors is None else list(problem.priors)):
        zero = [x for x, v in zip(problem.inputs, pi) if v <= 0]
        if zero:
            key = "prior" if problem.priors is None else f"priors[{scenario}]"
            raise InvalidProblemError(
                f"{where}key '{key}': the share of {zero} is 0; a variance objective estimates every share "
                "at the prior, and a share of 0 sits on the edge of the simplex, where no variance describes "
                "its estimate: give it a small positive share (e.g. 0.005) or drop the input")
    if len(extra) == 2:
        raise InvalidProblemError(f"{where}key 'variance': give weights or contrasts, not both")
    if problem.variance_weights is not None:
        set_(problem, "variance_weights", _input_vector(problem, problem.variance_weights, where, "variance.weights",
                                                          non_negative=True))
    if problem.contrasts is not None:
        rows: Any = problem.contrasts
        if isinstance(rows, dict) or (isinstance(rows, np.ndarray) and rows.ndim == 1):
            rows = [rows]
        if not isinstance(rows, list | tuple | np.ndarray) or not len(rows):
            raise _fail(where, "variance.contrasts", "a list of contrasts {input = coefficient}", rows)
        out = np.array([_input_vector(problem, r, where, f"variance.contrasts[{i}]", non_negative=False)
                        for i, r in enumerate(rows)])
        out.setflags(write=False)
        set_(problem, "contrasts", out)

def _input_vector(problem: Any, value: object, where: str, key: str, *, non_negative: bool
                  ) -> NDArray[np.float64]:
    """A number per input from ``{input: number}`` (missing inputs 0) or a ``(k,)`` array: finite, not all 0,
    and >= 0 when ``non_negative``; read-only."""
    k = len(problem.inputs)
    expected = (f"a table {{input = {'weight >= 0' if non_negative else 'coefficient'}}} over the inputs "
                f"{list(problem.inputs)}, not all 0")
    if isinstance(value, dict):
        unknown = [x for x in value if x not in problem.inputs]
        if unknown:
            raise InvalidProblemError(f"{where}key '{key}': {unknown} are not inputs; the inputs are "
                                      f"{list(problem.inputs)}")
        out = np.zeros(k)
        for x, v in value.items():
            if isinstance(v, bool) or not isinstance(v, numbers.Real):
                raise _fail(where, f"{key}.{x}", "a number", v)
            out[problem.inputs.index(x)] = float(v)
    else:
        try:
            out = np.array(value, dtype=np.float64).reshape(-1)
        except (TypeError, ValueError, OverflowError):
            raise _fail(where, key, expected, value) from None
        if out.shape != (k,):
            raise _fail(where, key, expected, _as_list(value))
    if not np.all(np.isfinite(out)) or np.all(out == 0) or (non_negative and np.any(out < 0)):
        raise _fail(where, key, expected, [float(v) for v in out])
    out.setflags(write=False)
    return out
