"""Credal sets of mass functions: lower/upper probabilities and expectations (docs/theory.md section 3, Lemma 3.14).

The credal set of a mass function ``m`` on ``Y`` is ``P_m = {pr : pr(A) >= bel(A) for all A}``. It is the
image of the *mass-allocation* polytope: ``pr(y) = sum_{B contains y} w(B, y)`` with ``w >= 0`` and
``sum_{y in B} w(B, y) = m(B)`` (variables for focal sets only). Its lower and upper expectations are the
Choquet integrals ``sum_B m(B) min_{y in B} f(y)`` and ``sum_B m(B) max_{y in B} f(y)``; both are also
computed by linear programming over the allocation polytope (HiGHS), and the two must agree.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import setfunctions as sf
from ._internal.solvers import minimize
from .exceptions import InvalidArgumentError, InvalidMechanismError
from .mechanism import Mechanism

__all__ = [
    "WorstCasePair",
    "allocation_lp",
    "contains",
    "extreme_points",
    "gamble_vector",
    "lower_expectation",
    "lower_probability",
    "upper_expectation",
    "upper_probability",
    "walley_ratio",
    "worst_case_pair",
]

#: Largest frame for which extreme points are enumerated over all l! orderings.
MAX_VERTEX_FRAME = 9


def _row(mech: Mechanism, x: str | int) -> int:
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        if not 0 <= int(x) < mech.k:
            raise InvalidMechanismError(f"input index {x} out of range for {mech.k} inputs")
        return int(x)
    return mech.input_index(str(x))


def gamble_vector(mech: Mechanism, gamble: Mapping[str, float] | ArrayLike) -> NDArray[np.float64]:
    """A gamble ``f: Y -> R`` as an ``(l,)`` vector; a mapping must give a value to every frame label.

    Examples
    --------
    >>> import designer
    >>> from designer import credal
    >>> credal.gamble_vector(designer.Q_2x3(0.6, 0.2), {"yes": 1, "no": 0}).tolist()
    [1.0, 0.0]
    """
    if isinstance(gamble, Mapping):
        unknown = sorted(set(map(str, gamble)) - set(mech.frame))
        if unknown:
            raise InvalidMechanismError(f"gamble names labels not in the frame: {unknown}")
        missing = [y for y in mech.frame if y not in gamble]
        if missing:
            raise InvalidMechanismError(f"gamble gives no value for {missing}")
        f = np.array([float(gamble[y]) for y in mech.frame])
    else:
        f = np.asarray(gamble, dtype=np.float64)
        if f.shape != (mech.l,):
            raise InvalidMechanismError(f"a gamble has one value per frame element ({mech.l}), got shape {f.shape}")
    if not np.all(np.isfinite(f)):
        raise InvalidMechanismError("gamble values must be finite numbers")
    return f


def _members(mech: Mechanism) -> NDArray[np.bool_]:
    """``(F, l)`` membership of frame elements in the focal sets."""
    return sf.members(mech.focal, mech.l)


def _event_vector(mech: Mechanism, event: Sequence[str] | str | int) -> NDArray[np.float64]:
    mask = int(event) if isinstance(event, (int, np.integer)) else mech.subset(event)
    if mask < 0 or mask >> mech.l:
        raise InvalidMechanismError(f"event mask {mask} is not a subset of the frame")
    return ((mask >> np.arange(mech.l)) & 1).astype(np.float64)


def _choquet(mech: Mechanism, x: str | int, f: NDArray[np.float64], upper: bool) -> float:
    members = _members(mech)
    vals = np.where(members, f[None, :], -np.inf if upper else np.inf)
    ext = vals.max(axis=1) if upper else vals.min(axis=1)
    return float(mech.matrix[_row(mech, x)] @ ext)


def allocation_lp(mech: Mechanism, x: str | int, f: ArrayLike, *, upper: bool) -> tuple[float, NDArray[np.float64]]:
    """Optimise ``E_pr[f]`` over the credal set of row ``x`` by LP over the mass-allocation polytope.

    Returns
    -------
    value : float
    pr : (l,) ndarray
        An optimal member of the credal set.

    Examples
    --------
    The upper expectation of the gamble ``(1, 0)`` for a yes, and the member of the credal set that attains it:

    >>> import designer
    >>> from designer import credal
    >>> value, pr = credal.allocation_lp(designer.Q_2x3(0.6, 0.2), "yes", [1, 0], upper=True)
    >>> round(value, 9), pr.round(9).tolist()
    (0.8, [0.8, 0.2])
    """
    i = _row(mech, x)
    fv = np.asarray(f, dtype=np.float64)
    members = _members(mech)
    B, Y = np.nonzero(members)  # one variable w(B, y) per focal set B and y in B
    n = B.size
    a_eq = np.zeros((members.shape[0], n))
    a_eq[B, np.arange(n)] = 1.0
    c = fv[Y] * (-1.0 if upper else 1.0)
    res = minimize(c, A_eq=a_eq, b_eq=mech.matrix[i], bounds=(0, None))
    if res.status != 0:  # pragma: no cover - the polytope is never empty
        raise RuntimeError(f"allocation LP failed: {res.message}")
    pr = np.zeros(mech.l)
    np.add.at(pr, Y, res.x)
    return float(fv @ pr), pr


def _expectation(mech: Mechanism, x: str | int, gamble: Mapping[str, float] | ArrayLike, method: str,
                 upper: bool) -> float:
    f = gamble_vector(mech, gamble)
    if method == "lp":
        return allocation_lp(mech, x, f, upper=upper)[0]
    if method != "choquet":
        raise InvalidArgumentError(f"method must be 'choquet' or 'lp', got {method!r}")
    return _choquet(mech, x, f, upper=upper)


def lower_expectation(mech: Mechanism, x: str | int, gamble: Mapping[str, float] | ArrayLike, *,
                      method: str = "choquet") -> float:
    """Lower expectation ``min_{pr in P_x} E_pr[f]`` of a gamble (docs/theory.md section 3).

    Parameters
    ----------
    mech : Mechanism
    x : str or int
        The input whose mass function ``m_x`` defines the credal set.
    gamble : mapping {frame label: value} or (l,) array_like
    method : {"choquet", "lp"}
        Closed form ``sum_B m(B) min_{y in B} f(y)``, or the allocation LP.

    Examples
    --------
    ``Q_2x3(0.6, 0.2)``: a yes answers ``{yes}`` with 0.6, ``{no}`` with 0.2 and "don't know" with 0.2, so the
    precise answer of some member of its credal set is yes with any probability from 0.6 to 0.8.

    The Choquet integral and the linear program over the credal set agree:

    >>> import designer
    >>> from designer import credal
    >>> q = designer.Q_2x3(0.6, 0.2)
    >>> gamble = {"yes": 1, "no": 0}
    >>> credal.lower_expectation(q, "yes", gamble), round(credal.lower_expectation(q, "yes", gamble, method="lp"), 9)
    (0.6, 0.6)
    """
    return _expectation(mech, x, gamble, method, upper=False)


def upper_expectation(mech: Mechanism, x: str | int, gamble: Mapping[str, float] | ArrayLike, *,
                      method: str = "choquet") -> float:
    """Upper expectation ``max_{pr in P_x} E_pr[f] = sum_B m(B) max_{y in B} f(y)`` (docs/theory.md section 3).

    Examples
    --------
    ``Q_2x3(0.6, 0.2)``: a yes answers ``{yes}`` with 0.6, ``{no}`` with 0.2 and "don't know" with 0.2, so the
    precise answer of some member of its credal set is yes with any probability from 0.6 to 0.8.

    >>> import designer
    >>> from designer import credal
    >>> q = designer.Q_2x3(0.6, 0.2)
    >>> round(credal.upper_expectation(q, "no", {"yes": 10, "no": 0}), 9)  # a no answers yes with at most 0.4
    4.0
    """
    return _expectation(mech, x, gamble, method, upper=True)


def lower_probability(mech: Mechanism, x: str | int, event: Sequence[str] | str | int, *,
                      method: str = "choquet") -> float:
    """``min_{pr in P_x} pr(E) = bel_x(E)``; ``event`` as labels or a bitmask.

    Examples
    --------
    >>> import designer
    >>> from designer import credal
    >>> q = designer.Q_2x3(0.6, 0.2)
    >>> credal.lower_probability(q, "yes", ["yes"]), round(credal.lower_probability(q, "yes", ["yes"], method="lp"), 9)
    (0.6, 0.6)
    """
    return lower_expectation(mech, x, _event_vector(mech, event), method=method)


def upper_probability(mech: Mechanism, x: str | int, event: Sequence[str] | str | int, *,
                      method: str = "choquet") -> float:
    """``max_{pr in P_x} pr(E) = pl_x(E)``; ``event`` as labels or a bitmask.

    Examples
    --------
    >>> import designer
    >>> from designer import credal
    >>> q = designer.Q_2x3(0.6, 0.2)
    >>> credal.upper_probability(q, "yes", ["yes"]), round(credal.upper_probability(q, "yes", ["yes"], method="lp"), 9)
    (0.8, 0.8)
    """
    return upper_expectation(mech, x, _event_vector(mech, event), method=method)


def extreme_points(mech: Mechanism, x: str | int) -> NDArray[np.float64]:
    """Vertices of the credal set of row ``x``: one per ordering of ``Y`` (each focal set's mass goes
    to its first element in that order); duplicates removed (docs/theory.md section 3).

    Returns
    -------
    (V, l) ndarray
        ``V <= l!`` distinct probability vectors (rows), sorted lexicographically.

    Examples
    --------
    >>> import designer
    >>> from designer import credal
    >>> credal.extreme_points(designer.Q_2x3(0.6, 0.2), "yes").tolist()
    [[0.6, 0.4], [0.8, 0.2]]
    """
    if mech.l > MAX_VERTEX_FRAME:
        raise InvalidMechanismError(
            f"a frame of {mech.l} elements has {math.factorial(mech.l)} orderings; extreme points are "
            f"enumerated up to l = {MAX_VERTEX_FRAME}"
        )
    i = _row(mech, x)
    members = _members(mech)
    masses = mech.matrix[i]
    used = masses > 0
    members, masses = members[used], masses[used]
    out = set()
    for order in itertools.permutations(range(mech.l)):
        rank = np.empty(mech.l, dtype=np.int64)
        rank[list(order)] = np.arange(mech.l)
        first = np.where(members, rank[None, :], mech.l).argmin(axis=1)
        pr = np.zeros(mech.l)
        np.add.at(pr, first, masses)
        out.add(tuple(np.round(pr, 15)))
    return np.array(sorted(out))


def contains(mech: Mechanism, x: str | int, pr: ArrayLike, *, tol: float = 1e-12) -> bool:
    """Whether a probability vector lies in the credal set of row ``x``: ``pr(A) >= bel_x(A)`` for all ``A``.

    Examples
    --------
    >>> import designer
    >>> from designer import credal
    >>> q = designer.Q_2x3(0.6, 0.2)
    >>> credal.contains(q, "yes", [0.7, 0.3]), credal.contains(q, "yes", [0.9, 0.1])
    (True, False)
    """
    p = np.asarray(pr, dtype=np.float64)
    if p.shape != (mech.l,) or not np.all(np.isfinite(p)):
        raise InvalidMechanismError(f"pr must be {mech.l} finite numbers")
    if np.any(p < -tol) or abs(p.sum() - 1.0) > tol:
        return False
    dense = np.zeros(1 << mech.l)
    dense[1 << np.arange(mech.l)] = p
    pr_sets = sf.bel_from_mass(dense)  # pr(A) for every A
    return bool(np.all(pr_sets >= mech.bel()[_row(mech, x)] - tol))


@dataclass(frozen=True)
class WorstCasePair:
    """The pair of distributions in two credal sets that maximises ``pr_x(E) / pr_x2(E)`` (Lemma 3.14).

    Attributes
    ----------
    event : tuple of str
    ratio : float
        ``pl_x(E) / bel_x2(E)`` (``inf`` for ``a/0``).
    pr_x, pr_x2 : (l,) ndarray
        Members of the credal sets of ``x`` and ``x2`` attaining ``pl_x(E)`` and ``bel_x2(E)``.

    Examples
    --------
    >>> import math
    >>> import designer
    >>> from designer import credal
    >>> pair = credal.worst_case_pair(designer.Q_2x3(0.6, 0.2), "no", "yes")
    >>> math.isclose(pair.eps, math.log(4))
    True
    """

    event: tuple[str, ...]
    ratio: float
    pr_x: NDArray[np.float64]
    pr_x2: NDArray[np.float64]

    @property
    def eps(self) -> float:
        return math.inf if math.isinf(self.ratio) else math.log(self.ratio)


def walley_ratio(mech: Mechanism, x: str | int, x2: str | int, event: Sequence[str] | str | int, *,
                 method: str = "lp") -> float:
    """``max pr_x(E) / pr_x2(E)`` over the two (independent) credal sets, by two LPs or by ``pl / bel``.

    Examples
    --------
    The largest ratio of the probabilities two members give ``{no}``, one for a no and one for a yes: ``0.8 / 0.2``,
    ``e`` to the Walley loss (Lemma 3.14):

    >>> import designer
    >>> from designer import credal
    >>> round(credal.walley_ratio(designer.Q_2x3(0.6, 0.2), "no", "yes", ["no"]), 9)
    4.0
    """
    up = upper_probability(mech, x, event, method=method)
    lo = lower_probability(mech, x2, event, method=method)
    if lo == 0:
        return math.inf if up > 0 else math.nan
    return up / lo


def worst_case_pair(mech: Mechanism, x: str | int, x2: str | int) -> WorstCasePair:
    """The proper event and the two distributions with the largest ratio ``pr_x(E) / pr_x2(E)``.

    Over proper nonempty events (docs/theory.md section 2); the distributions come from the allocation LPs.

    Examples
    --------
    >>> import designer
    >>> from designer import credal
    >>> pair = credal.worst_case_pair(designer.Q_2x3(0.6, 0.2), "no", "yes")
    >>> pair.event, round(pair.ratio, 9), pair.pr_x.round(9).tolist(), pair.pr_x2.round(9).tolist()
    (('no',), 4.0, [0.2, 0.8], [0.8, 0.2])
    """
    i, j = _row(mech, x), _row(mech, x2)
    pl, bel = mech.pl(), mech.bel()
    num, den = pl[i, 1:-1], bel[j, 1:-1]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(den > 0, num / den, np.where(num > 0, np.inf, -np.inf))
    if ratio.size == 0:
        raise InvalidMechanismError("a frame of one element has no proper event")
    best = int(np.argmax(ratio))
    mask = best + 1
    indicator = _event_vector(mech, mask)
    _, pr_x = allocation_lp(mech, i, indicator, upper=True)
    _, pr_x2 = allocation_lp(mech, j, indicator, upper=False)
    value = float(ratio[best])
    return WorstCasePair(sf.mask_labels(mask, mech.frame), 1.0 if value == -np.inf else value, pr_x, pr_x2)

