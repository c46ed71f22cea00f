"""Noisy counts for a published prior: the two-sided geometric (discrete Laplace) mechanism, drawn exactly with
integer arithmetic (docs/theory.md section 7.7).

A prior read from the very file being released is itself a release. Each category count ``c`` is published as
``c + Z`` with ``P(Z = z)`` proportional to ``exp(-|z| eps0 / 2)``: changing one respondent's answer moves two
counts by one each (an L1 sensitivity of 2 in the model where one record is changed), so the noisy counts are
``eps0``-differentially private (the geometric mechanism of Ghosh, Roughgarden and Sundararajan). The draw uses no
floating point: Bernoulli trials with rational or ``exp(-rational)`` probabilities are decided on uniform integers
(Canonne, Kamath and Steinke's exact samplers), and the integers come from the operating system's cryptographic
generator (:func:`secrets.randbelow`) unless a seeded simulation is asked for.
"""

from __future__ import annotations

import math
import random
import secrets
import sys
from collections.abc import Callable, Sequence
from fractions import Fraction

from ..exceptions import InvalidArgumentError

__all__ = ["IntegerSource", "bernoulli", "bernoulli_exp", "discrete_laplace", "mean_noise", "noisy_counts",
           "noisy_prior", "os_source", "seeded_source", "simplest_fraction", "stated_budget"]

#: ``randbelow(n)``: a uniform integer in ``[0, n)``.
IntegerSource = Callable[[int], int]


def os_source() -> IntegerSource:
    """Uniform integers from the operating system's CSPRNG (:func:`secrets.randbelow`): nothing to replay.

    Examples
    --------
    >>> from designer.guarantees.noise import os_source
    >>> randbelow = os_source()
    >>> all(0 <= randbelow(6) < 6 for _ in range(100))
    True
    """
    return secrets.randbelow


def seeded_source(seed: int) -> IntegerSource:
    """Uniform integers from a seeded Mersenne twister: reproducible, for simulations only (anyone who knows the
    seed can subtract the noise).

    Examples
    --------
    The same seed gives the same integers (which is why a release never uses one):

    >>> from designer.guarantees.noise import seeded_source
    >>> first, again = seeded_source(7), seeded_source(7)
    >>> [first(6) for _ in range(5)], [again(6) for _ in range(5)]
    ([1, 0, 4, 4, 5], [1, 0, 4, 4, 5])
    """
    return random.Random(f"designer noisy counts {int(seed)}").randrange


#: The smallest and largest budgets (nats) taken as stated: below, noise swamps any count; above, no double holds
#: the budget (and building the rational ``10**99999999`` would not end).
SMALLEST_BUDGET = Fraction(1, 10**300)
LARGEST_BUDGET = Fraction(sys.float_info.max)

#: A double is read as the fraction of smallest denominator that rounds to it when that denominator is at most this
#: (``7/3`` for ``float(7/3)``, ``1/10`` for ``0.1``), else as its shortest decimal.
SIMPLE_DENOMINATOR = 10**6


def _simplest_between(lo: Fraction, hi: Fraction) -> Fraction:
    """The fraction of smallest denominator strictly between ``0 <= lo < hi`` (the Stern-Brocot tree's first)."""
    whole = math.floor(lo)
    if whole + 1 < hi:
        return Fraction(whole + 1)
    if lo == whole:  # (whole, hi) with hi <= whole + 1: whole + 1/y for the smallest integer y > 1/(hi - whole)
        return whole + Fraction(1, math.floor(1 / (hi - whole)) + 1)
    return whole + 1 / _simplest_between(1 / (hi - whole), 1 / (lo - whole))


def simplest_fraction(x: float) -> Fraction:
    """The fraction of smallest denominator that rounds to the double ``x > 0`` (strictly inside its rounding
    interval; docs/theory.md section 7.5).

    Examples
    --------
    >>> from designer.guarantees.noise import simplest_fraction
    >>> simplest_fraction(7 / 3), simplest_fraction(0.1)
    (Fraction(7, 3), Fraction(1, 10))
    """
    exact = Fraction(x)
    below, above = math.nextafter(x, 0.0), math.nextafter(x, math.inf)
    lo = (exact + Fraction(below)) / 2
    # the largest double rounds what lies up to half its last unit above it (the next double would be infinity)
    hi = (exact + Fraction(above)) / 2 if math.isfinite(above) else exact + (exact - Fraction(below)) / 2
    return _simplest_between(lo, hi)


def _parse(text: str) -> Fraction:
    """A budget written as a decimal or a fraction ``p/q``, its size checked before the rational is built."""
    num, sep, den = text.strip().partition("/")
    parts = [num, den] if sep else [num]
    for i, part in enumerate(parts):
        value = float(part)  # ValueError: not a number
        if value == 0:
            what = "its denominator must not be 0" if i else "must be > 0"
            raise InvalidArgumentError(f"a budget {what}, got {text.strip()!r}")
        if not (math.isfinite(value) and 1e-300 <= abs(value) <= sys.float_info.max):
            raise InvalidArgumentError(f"a budget must be between 1e-300 and {sys.float_info.max:.4g} nats, got "
                                       f"{text.strip()!r}")
    out = Fraction(num.strip())
    return out / Fraction(den.strip()) if sep else out


def stated_budget(value: float | int | str | Fraction) -> Fraction:
    """A budget as the rational its user wrote: a string as written (``"0.1"`` is 1/10, ``"7/3"`` is 7/3); a float
    as the fraction of smallest denominator that rounds to it when that denominator is at most
    :data:`SIMPLE_DENOMINATOR` (a design made at ``7/3`` states the double nearest 7/3, read back as 7/3), else
    through its shortest decimal, so that budgets stated as decimals or simple fractions add exactly
    (0.1 + 0.2 == 0.3). A budget outside [1e-300, the largest double] is refused before any large integer is
    built.

    Examples
    --------
    >>> from designer.guarantees.noise import stated_budget
    >>> stated_budget(7 / 3), stated_budget("0.1")
    (Fraction(7, 3), Fraction(1, 10))
    >>> stated_budget(0.1) + stated_budget(0.2) == stated_budget("3/10")  # added exactly, unlike the doubles
    True
    >>> stated_budget("0")
    Traceback (most recent call last):
    ...
    designer.exceptions.InvalidArgumentError: a budget must be > 0, got '0'
    """
    if isinstance(value, Fraction):
        out = value
    elif isinstance(value, str):
        out = _parse(value)
    elif isinstance(value, int) and not isinstance(value, bool):
        out = Fraction(value)
    elif isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise InvalidArgumentError(f"a budget must be finite, got {value!r}")
        if value <= 0:
            raise InvalidArgumentError(f"a budget must be > 0, got {value!r}")
        simple = simplest_fraction(value)
        out = simple if simple.denominator <= SIMPLE_DENOMINATOR else Fraction(repr(value))
    else:
        raise InvalidArgumentError(f"a budget must be a number, got {type(value).__name__}")
    if out <= 0:
        raise InvalidArgumentError(f"a budget must be > 0, got {value!r}")
    if not SMALLEST_BUDGET <= out <= LARGEST_BUDGET:
        raise InvalidArgumentError(f"a budget must be between 1e-300 and {sys.float_info.max:.4g} nats, got "
                                   f"{float(out) if out < 1 else value!r}")
    return out


def mean_noise(epsilon: Fraction) -> float:
    """The mean size ``E|Z| = 1 / sinh(epsilon / 2)`` of the discrete Laplace noise that :func:`noisy_counts` adds to
    each count at ``epsilon`` (``P(z)`` proportional to ``a^|z|``, ``a = exp(-epsilon / 2)``: ``E|Z| = 2 a /
    (1 - a^2)``; docs/theory.md section 7.7).

    Examples
    --------
    >>> from fractions import Fraction
    >>> from designer.guarantees.noise import mean_noise
    >>> round(mean_noise(Fraction(1, 1000)))
    2000
    """
    x = float(epsilon) / 2
    if x > 700:
        return 2 * math.exp(-x)
    if x < 1e-300:
        return math.inf
    return 1 / math.sinh(x)


def bernoulli(p: Fraction, randbelow: IntegerSource) -> bool:
    """True with probability ``p`` (a rational in [0, 1]) exactly: a uniform integer below its denominator.

    Examples
    --------
    Given integers decide it (``1/3``: true for 0, false for 1 and 2); seeded draws are true about a third of the
    time:

    >>> from fractions import Fraction
    >>> from designer.guarantees.noise import bernoulli, seeded_source
    >>> [bernoulli(Fraction(1, 3), lambda n, u=u: u) for u in range(3)]
    [True, False, False]
    >>> randbelow = seeded_source(1)
    >>> share = sum(bernoulli(Fraction(1, 3), randbelow) for _ in range(3000)) / 3000
    >>> abs(share - 1 / 3) < 0.03
    True
    """
    return randbelow(p.denominator) < p.numerator


def bernoulli_exp(gamma: Fraction, randbelow: IntegerSource) -> bool:
    """True with probability ``exp(-gamma)`` exactly, for a rational ``gamma >= 0``.

    For ``gamma <= 1``: draw ``A_1, A_2, ...`` with ``P(A_j) = gamma / j`` until one fails; the number of
    successes is even with probability ``exp(-gamma)``. Larger ``gamma`` is split into ``floor(gamma)`` trials of
    ``exp(-1)`` and one of the remainder.

    Examples
    --------
    >>> import math
    >>> from fractions import Fraction
    >>> from designer.guarantees.noise import bernoulli_exp, seeded_source
    >>> randbelow = seeded_source(1)
    >>> share = sum(bernoulli_exp(Fraction(1, 2), randbelow) for _ in range(4000)) / 4000
    >>> abs(share - math.exp(-0.5)) < 0.03
    True
    """
    if gamma < 0:
        raise InvalidArgumentError(f"bernoulli_exp needs gamma >= 0, got {gamma}")
    while gamma > 1:
        if not bernoulli_exp(Fraction(1), randbelow):
            return False
        gamma -= 1
    k = 1
    while bernoulli(gamma / k, randbelow):
        k += 1
    return k % 2 == 1


def discrete_laplace(scale: Fraction, randbelow: IntegerSource) -> int:
    """One integer ``Z`` with ``P(Z = z)`` proportional to ``exp(-|z| / scale)`` (a rational ``scale > 0``).

    ``scale = t / s``: draw ``U`` uniform below ``t`` accepted with probability ``exp(-U / t)`` and a geometric
    ``V`` of ratio ``exp(-1)``; ``X = U + t V`` is geometric of ratio ``exp(-1 / t)``, ``Y = floor(X / s)`` geometric
    of ratio ``exp(-s / t)``; a fair sign, with a negative zero drawn again, gives the two-sided law.

    Examples
    --------
    At scale 2 the mean size of ``Z`` is :func:`mean_noise` at ``epsilon = 1`` (about 1.92) and
    ``P(Z = 0) = (1 - a) / (1 + a)`` with ``a = exp(-1/2)`` (about 0.245):

    >>> import math
    >>> from fractions import Fraction
    >>> from designer.guarantees.noise import discrete_laplace, mean_noise, seeded_source
    >>> randbelow = seeded_source(1)
    >>> draws = [discrete_laplace(Fraction(2), randbelow) for _ in range(4000)]
    >>> abs(sum(map(abs, draws)) / 4000 - mean_noise(Fraction(1))) < 0.15
    True
    >>> a = math.exp(-0.5)
    >>> abs(draws.count(0) / 4000 - (1 - a) / (1 + a)) < 0.03
    True
    """
    if scale <= 0:
        raise InvalidArgumentError(f"the scale must be > 0, got {scale}")
    t, s = scale.numerator, scale.denominator
    while True:
        u = randbelow(t)
        if not bernoulli_exp(Fraction(u, t), randbelow):
            continue
        v = 0
        while bernoulli_exp(Fraction(1), randbelow):
            v += 1
        y = (u + t * v) // s
        negative = randbelow(2) == 1
        if negative and y == 0:
            continue
        return -y if negative else y


def noisy_counts(counts: Sequence[int], epsilon: Fraction, randbelow: IntegerSource | None = None) -> list[int]:
    """``counts`` with independent discrete Laplace noise of scale ``2 / epsilon`` on each: ``epsilon``-DP for the
    vector of counts of one categorical column when one record is changed (two counts move by one).

    Parameters
    ----------
    counts : sequence of int
        Category counts (one record counted once).
    epsilon : Fraction
        The budget spent on them (nats), rational so that the scale is exact.
    randbelow : callable, optional
        ``randbelow(n)``, a uniform integer below ``n``; default the operating system's CSPRNG.

    Returns
    -------
    list of int
        The noisy counts (may be zero or negative: see :func:`noisy_prior`).

    Examples
    --------
    Two categories counted 40 and 60, published at ``epsilon = 1`` (a seeded simulation; a release leaves
    ``randbelow`` out):

    >>> from fractions import Fraction
    >>> from designer.guarantees.noise import noisy_counts, seeded_source
    >>> noisy_counts([40, 60], Fraction(1), seeded_source(1))
    [40, 64]
    """
    eps = stated_budget(epsilon)
    draw = randbelow or os_source()
    scale = Fraction(2) / eps
    return [int(c) + discrete_laplace(scale, draw) for c in counts]


def noisy_prior(noisy: Sequence[int]) -> list[Fraction]:
    """The prior published from noisy counts (post-processing, so no further loss): each count floored at 1, then
    normalised, so every share is > 0.

    Examples
    --------
    >>> from designer.guarantees.noise import noisy_prior
    >>> [str(share) for share in noisy_prior([41, -2, 59])]  # -2 counts as 1
    ['41/101', '1/101', '59/101']
    """
    kept = [max(int(c), 1) for c in noisy]
    total = sum(kept)
    return [Fraction(c, total) for c in kept]
