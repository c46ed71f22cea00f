"""Simulated respondents with covariates, and true answers that depend on them through a multinomial logit:
the data of a regression walk-through (``designer synthesize --covariate ... --effect ...``) and of tests.

A covariate is written ``NAME=DISTRIBUTION``:

==========================  =====================================================
``age=normal(45, 12)``      normal with mean 45 and standard deviation 12
``income=uniform(0, 10)``   uniform on [0, 10)
``age=integer(18, 80)``     whole numbers 18 ... 80, equally likely
``smoker=bernoulli(0.3)``   1 with probability 0.3, else 0
``region=category(n, s)``   labels, equally likely; ``category(n:0.7, s:0.3)`` with shares
==========================  =====================================================

An effect is written ``INPUT:TERM=VALUE``: the log-odds of the true answer ``INPUT`` against the reference
input (the last) change by ``VALUE`` per unit of ``TERM``, a numeric covariate, ``NAME[LEVEL]`` for a level of
a category (against its first level: patsy's ``C(NAME)[T.LEVEL]``) or ``Intercept``. The intercepts default to
``log(prior_x / prior_ref)``, the log-odds at covariates 0; the model is the one ``designer regress`` fits
(docs/theory.md, section 9).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..exceptions import InvalidArgumentError

__all__ = ["Covariate", "draw_answers", "draw_covariates", "parse_covariate", "parse_effect"]

_KINDS = {"normal": 2, "uniform": 2, "integer": 2, "bernoulli": 1, "category": None}


@dataclass(frozen=True)
class Covariate:
    """One simulated covariate: ``kind`` (a key of the table in the module docstring) and its parameters;
    for a category, ``levels`` and their ``shares``.

    Examples
    --------
    >>> from designer.estimation.covariates import Covariate
    >>> Covariate("age", "integer", (18.0, 80.0)).kind
    'integer'
    """

    name: str
    kind: str
    params: tuple[float, ...] = ()
    levels: tuple[str, ...] = ()
    shares: tuple[float, ...] = ()

    def draw(self, n: int, rng: np.random.Generator) -> NDArray[np.generic]:
        """``n`` values, shape ``(n,)``."""
        a = self.params
        if self.kind == "normal":
            return rng.normal(a[0], a[1], n)
        if self.kind == "uniform":
            return rng.uniform(a[0], a[1], n)
        if self.kind == "integer":
            return rng.integers(int(a[0]), int(a[1]) + 1, n)
        if self.kind == "bernoulli":
            return (rng.random(n) < a[0]).astype(np.int64)
        return np.asarray(self.levels, dtype=object)[rng.choice(len(self.levels), n, p=self.shares)]


def parse_covariate(text: str) -> Covariate:
    """``NAME=DISTRIBUTION`` (see the module docstring) as a :class:`Covariate`; errors say what to write.

    Examples
    --------
    >>> from designer.estimation.covariates import parse_covariate
    >>> parse_covariate("age=integer(18,80)")
    Covariate(name='age', kind='integer', params=(18.0, 80.0), levels=(), shares=())
    >>> parse_covariate("region=category(n:0.6,s:0.4)").levels
    ('n', 's')
    """
    m = re.fullmatch(r"\s*([A-Za-z_][A-Za-z0-9_.]*)\s*=\s*([a-z]+)\s*\((.*)\)\s*", text)
    usage = ("write NAME=normal(mean, sd), uniform(low, high), integer(low, high), bernoulli(p) or "
             "category(a, b) / category(a:0.7, b:0.3)")
    if not m or m.group(2) not in _KINDS:
        raise InvalidArgumentError(f"covariate {text!r}: {usage}")
    name, kind, inner = m.group(1), m.group(2), m.group(3)
    parts = [p.strip() for p in inner.split(",") if p.strip()]
    if kind == "category":
        if len(parts) < 2:
            raise InvalidArgumentError(f"covariate {text!r}: a category needs at least two levels")
        levels, weights = [], []
        for p in parts:
            label, _, share = p.partition(":")
            levels.append(label.strip())
            weights.append(_number(share, text) if share else 1.0)
        if len(set(levels)) != len(levels) or any(w < 0 for w in weights) or sum(weights) <= 0:
            raise InvalidArgumentError(f"covariate {text!r}: levels must differ and shares be >= 0, not all 0")
        total = sum(weights)
        return Covariate(name, kind, levels=tuple(levels), shares=tuple(w / total for w in weights))
    values = tuple(_number(p, text) for p in parts)
    if len(values) != _KINDS[kind]:
        raise InvalidArgumentError(f"covariate {text!r}: {kind} takes {_KINDS[kind]} number(s); {usage}")
    bad = ((kind == "normal" and not values[1] > 0)
           or (kind in ("uniform", "integer") and not values[0] < values[1])
           or (kind == "integer" and any(v != int(v) for v in values))
           or (kind == "bernoulli" and not 0 <= values[0] <= 1))
    if bad:
        raise InvalidArgumentError(f"covariate {text!r}: parameters out of range (sd > 0, low < high, whole numbers "
                                   "for integer, 0 <= p <= 1)")
    return Covariate(name, kind, values)


def _number(text: str, where: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise InvalidArgumentError(f"covariate {where!r}: {text.strip()!r} is not a number") from None
    if not math.isfinite(value):
        raise InvalidArgumentError(f"covariate {where!r}: {text.strip()!r} is not finite")
    return value


def parse_effect(text: str) -> tuple[str, str, float]:
    """``INPUT:TERM=VALUE`` as ``(input, term, value)``.

    Examples
    --------
    >>> from designer.estimation.covariates import parse_effect
    >>> parse_effect("yes:age=0.03")
    ('yes', 'age', 0.03)
    """
    m = re.fullmatch(r"\s*([^:=]+?)\s*:\s*([^=]+?)\s*=\s*(\S+)\s*", text)
    if not m:
        raise InvalidArgumentError(f"effect {text!r}: write INPUT:TERM=VALUE, e.g. yes:age=0.03, yes:region[s]=0.5 "
                                   "or yes:Intercept=-1")
    try:
        value = float(m.group(3))
    except ValueError:
        raise InvalidArgumentError(f"effect {text!r}: {m.group(3)!r} is not a number") from None
    if not math.isfinite(value):
        raise InvalidArgumentError(f"effect {text!r}: the value must be finite")
    return m.group(1), m.group(2), value


def draw_covariates(covariates: Sequence[Covariate], n: int, rng: np.random.Generator
                    ) -> dict[str, NDArray[np.generic]]:
    """Each covariate's ``n`` values, in order.

    Examples
    --------
    >>> import numpy as np
    >>> from designer.estimation.covariates import draw_covariates, parse_covariate
    >>> values = draw_covariates([parse_covariate("age=integer(18,80)")], 1000, np.random.default_rng(1))
    >>> values["age"].shape, bool(values["age"].min() >= 18), bool(values["age"].max() <= 80)
    ((1000,), True, True)
    """
    return {c.name: c.draw(n, rng) for c in covariates}


def _check_effects(inputs: Sequence[str], covariates: Sequence[Covariate],
                   effects: Sequence[tuple[str, str, float]]) -> None:
    by_name = {c.name: c for c in covariates}
    seen = set()
    for x, term, _ in effects:
        if x not in inputs[:-1]:
            raise InvalidArgumentError(f"effect {x}:{term}: {x!r} must be an input other than the reference "
                                       f"{inputs[-1]!r} (the inputs are {list(inputs)})")
        if (x, term) in seen:
            raise InvalidArgumentError(f"effect {x}:{term} is given twice")
        seen.add((x, term))
        if term == "Intercept":
            continue
        m = re.fullmatch(r"(.+)\[(.+)\]", term)
        name = m.group(1) if m else term
        if name not in by_name:
            raise InvalidArgumentError(f"effect {x}:{term}: no covariate {name!r} (the covariates are "
                                       f"{list(by_name)})")
        c = by_name[name]
        if (c.kind == "category") != bool(m):
            raise InvalidArgumentError(f"effect {x}:{term}: write a category's level as {name}[LEVEL] and a "
                                       "number's effect by its name")
        if m and (m.group(2) not in c.levels or m.group(2) == c.levels[0]):
            raise InvalidArgumentError(f"effect {x}:{term}: level {m.group(2)!r} is not one of {list(c.levels[1:])} "
                                       f"(the first level, {c.levels[0]!r}, is the baseline)")


def draw_answers(inputs: Sequence[str], prior: Sequence[float], covariates: Sequence[Covariate],
                 effects: Sequence[tuple[str, str, float]], values: Mapping[str, NDArray[np.generic]],
                 rng: np.random.Generator, n: int) -> NDArray[np.object_]:
    """``n`` true answers, shape ``(n,)``, drawn from the multinomial logit of the module docstring at the
    covariate ``values`` (each of shape ``(n,)``).

    Examples
    --------
    True answers whose log-odds of yes rise by 0.03 a year of age:

    >>> import numpy as np
    >>> from designer.estimation.covariates import draw_answers, draw_covariates, parse_covariate, parse_effect
    >>> rng = np.random.default_rng(1)
    >>> age = [parse_covariate("age=integer(18,80)")]
    >>> values = draw_covariates(age, 1000, rng)
    >>> effects = [parse_effect("yes:age=0.03"), parse_effect("yes:Intercept=-2")]
    >>> answers = draw_answers(["yes", "no"], [0.3, 0.7], age, effects, values, rng, 1000)
    >>> sorted(set(answers)), bool(values["age"][answers == "yes"].mean() > values["age"][answers == "no"].mean())
    (['no', 'yes'], True)
    """
    _check_effects(inputs, covariates, effects)
    if min(prior) <= 0:
        raise InvalidArgumentError("with effects every input needs a share > 0 in the prior (the intercepts are "
                                   "log(prior_x / prior_ref)); give one or set the Intercept effects")
    k = len(inputs)
    eta = np.zeros((n, k))
    eta[:, :-1] = np.log(np.asarray(prior[:-1], dtype=np.float64) / float(prior[-1]))
    for x, term, value in effects:
        j = list(inputs).index(x)
        if term == "Intercept":
            eta[:, j] += value - math.log(prior[j] / prior[-1])
            continue
        m = re.fullmatch(r"(.+)\[(.+)\]", term)
        z = (values[m.group(1)] == m.group(2)).astype(np.float64) if m else np.asarray(values[term], dtype=np.float64)
        eta[:, j] += value * z
    eta -= eta.max(axis=1, keepdims=True)
    p = np.exp(eta)
    p /= p.sum(axis=1, keepdims=True)
    u = rng.random(n)[:, None]
    choice = np.minimum((np.cumsum(p, axis=1) < u).sum(axis=1), k - 1)
    return np.asarray(inputs, dtype=object)[choice]
