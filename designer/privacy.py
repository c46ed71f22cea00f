"""Privacy losses of an evidential mechanism (Def 3.1, Lemma 3.2, Def 3.13, Lemma 3.14).

All losses are maxima over *ordered* pairs of distinct inputs ``x != x'`` (docs/theory.md section 2):

============  ===========================================  ======================
loss          ratio                                         sets ``E``
============  ===========================================  ======================
eps_shafer    ``m_x(E) / m_x'(E)``                          nonempty (Def 3.1)
eps_bel       ``bel_x(E) / bel_x'(E)``                      nonempty (Lemma 3.2)
eps_pl        ``pl_x(E) / pl_x'(E)``                        nonempty (Lemma 3.2)
eps_walley    ``pl_x(E) / bel_x'(E)``                       proper, nonempty (Lemma 3.14)
============  ===========================================  ======================

Conventions: ``0/0`` carries no information and is skipped; ``a/0`` with ``a > 0`` is an infinite loss.
A mechanism with a single input has nothing to distinguish: every loss is 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from numpy.typing import NDArray

from . import setfunctions as sf
from ._internal.exact import exp_float_bounds, ratio_at_most_exp, to_integers
from ._internal.validation import check_epsilon, check_real, format_set
from .exceptions import InvalidArgumentError, InvalidArgumentTypeError
from .mechanism import Mechanism
from .vocabulary import Loss

__all__ = [
    "LOSSES",
    "LossWitness",
    "eps_bel",
    "eps_pl",
    "eps_shafer",
    "eps_walley",
    "is_private",
    "privacy_losses",
    "worst_case",
]

LOSSES: tuple[Loss, ...] = tuple(Loss)

#: Float losses this close (nats, relative above 1) to the budget are decided exactly by :func:`is_private`.
DECISION_MARGIN = 1e-9



@dataclass(frozen=True)
class LossWitness:
    """A privacy loss with the pair of inputs and the event that attain it.

    Attributes
    ----------
    loss : Loss
        ``SHAFER``, ``BEL``, ``PL`` or ``WALLEY``.
    eps : float
        The loss, ``ln`` of the largest ratio (``inf`` for ``a/0``, ``0.0`` with a single input).
    x, x2 : str or None
        The ordered pair of inputs: the ratio is ``f_x(E) / g_x2(E)``.
    event : tuple of str or None
        The set ``E`` (frame labels, frame order).

    Examples
    --------
    >>> import designer
    >>> witness = designer.worst_case(designer.Q_2x3(0.6, 0.2), "shafer")
    >>> witness.x, witness.x2, witness.event, witness.describe()
    ('no', 'yes', ('no',), 'm_no({no}) / m_yes({no})')
    """

    loss: Loss
    eps: float
    x: str | None
    x2: str | None
    event: tuple[str, ...] | None

    def describe(self) -> str:
        """One line such as ``m_yes({yes}) / m_no({yes})``."""
        if self.x is None or self.event is None:
            return "no pair of inputs"
        f, g = self.loss.symbols
        e = format_set(self.event)
        return f"{f}_{self.x}({e}) / {g}_{self.x2}({e})"


def _max_ratio(num: NDArray[np.float64], den: NDArray[np.float64]) -> tuple[float, int, int, int]:
    """Largest ``ln(num[x, c] / den[x2, c])`` over ``x != x2`` and columns ``c``, computed in log space.

    Returns ``(log ratio, x, x2, c)``; ``0/0`` entries are skipped, ``a/0`` is ``inf``. With no
    informative entry the log ratio is 0 (loss 0) and the indices are -1. Logs of each side keep ratios
    of tiny masses (down to the smallest subnormal) finite and accurate.
    """
    k, n = num.shape
    if k < 2 or n == 0:
        return 0.0, -1, -1, -1
    best_row, best_num = _best_other(num)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_ratio = np.log(best_num) - np.log(den)
    log_ratio = np.where(den > 0, np.where(best_num > 0, log_ratio, -np.inf),
                         np.where(best_num > 0, np.inf, -np.inf))
    flat = int(np.argmax(log_ratio))
    x2, c = divmod(flat, n)
    value = float(log_ratio[x2, c])
    if value == -np.inf:
        return 0.0, -1, -1, -1
    # Over ordered pairs the largest ratio is >= 1; clamp rounding so that a loss is never negative.
    return max(value, 0.0), int(best_row[x2, c]), x2, c


def _top_two(values: NDArray[np.float64]) -> tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.int64],
                                                  NDArray[np.float64]]:
    """Row index and value of the largest and of the second largest entry of each column (``k >= 2``):
    two passes instead of a sort (the first row wins ties, as in a stable sort)."""
    cols = np.arange(values.shape[1])
    top = np.argmax(values, axis=0)
    top_v = values[top, cols]
    rest = values.copy()
    rest[top, cols] = -np.inf
    second = np.argmax(rest, axis=0)
    return top, top_v, second, rest[second, cols]


def _best_other(num: NDArray[np.float64]) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """For each denominator row ``x2`` and column: the row ``x != x2`` with the largest numerator, and its value,
    shape ``(k, n)`` each (the column's top entry unless it sits in row ``x2``, then the runner-up)."""
    top, top_v, second, second_v = _top_two(num)
    in_top_row = top[None, :] == np.arange(num.shape[0])[:, None]
    return (np.where(in_top_row, second[None, :], top[None, :]),
            np.where(in_top_row, second_v[None, :], top_v[None, :]))


def _max_ratio_same(values: NDArray[np.float64]) -> tuple[float, int, int, int]:
    """:func:`_max_ratio` with the same table on both sides: per column the largest entry over the smallest
    (another row's, or the column is constant and says nothing). ``O(k n)`` without ``k x n`` temporaries.
    Same result and witness as ``_max_ratio(values, values)``: the first denominator row, then column."""
    k, n = values.shape
    if k < 2 or n == 0:
        return 0.0, -1, -1, -1
    top, top_v, second, _ = _top_two(values)
    low = np.argmin(values, axis=0)
    low_v = values[low, np.arange(n)]
    with np.errstate(divide="ignore", invalid="ignore"):
        log_ratio = np.where(low_v > 0, np.log(top_v) - np.log(low_v), np.where(top_v > 0, np.inf, -np.inf))
    # a constant column: every ratio is 1 (or 0/0, no information)
    log_ratio = np.where(top == low, np.where(top_v > 0, 0.0, -np.inf), log_ratio)
    value = float(log_ratio.max())
    if value == -np.inf:
        return 0.0, -1, -1, -1
    candidates = np.flatnonzero(log_ratio == value)
    c = int(candidates[np.lexsort((candidates, low[candidates]))[0]])  # first by denominator row, then column
    x2 = int(low[c])
    x = int(second[c]) if int(top[c]) == x2 else int(top[c])
    return max(value, 0.0), x, x2, c


def _on_masses(mech: Mechanism, loss: Loss) -> bool:
    """Whether the stored masses themselves decide ``loss``: the Shafer loss, or any loss of Bayesian rows.

    Bayesian rows have bel = pl = probability, and a ratio of sums is at most the largest ratio of its
    terms (mediant inequality), so the singletons decide every loss (no ``2**l`` tables needed).
    """
    return loss is Loss.SHAFER or (mech.is_bayesian and mech.l >= 2)


def _operands(mech: Mechanism, loss: Loss) -> tuple[NDArray, NDArray, NDArray[np.int64]]:
    """Numerator rows, denominator rows and the subsets (masks) of their columns."""
    if _on_masses(mech, loss):
        return mech.matrix, mech.matrix, np.asarray(mech.focal, dtype=object)
    size = 1 << mech.l
    if loss is Loss.BEL:
        bel = mech.bel()[:, 1:]
        return bel, bel, np.arange(1, size)
    if loss is Loss.PL:
        pl = mech.pl()[:, 1:]
        return pl, pl, np.arange(1, size)
    bel, pl = mech.bel(), mech.pl()
    return pl[:, 1:-1], bel[:, 1:-1], np.arange(1, size - 1)


def _check_mechanism(mech: object) -> Mechanism:
    if not isinstance(mech, Mechanism):
        raise InvalidArgumentTypeError(f"expected a Mechanism, got {type(mech).__name__}")
    return mech


def _loss_name(semantics: object) -> Loss:
    try:
        return Loss.parse(semantics, "semantics")
    except ValueError:
        raise InvalidArgumentError(
            f"unknown semantics {semantics!r}: use 'sldp' (Shafer), 'wldp' (Walley), 'bel' or 'pl'"
        ) from None


def worst_case(mech: Mechanism, loss: str = "shafer") -> LossWitness:
    """The privacy loss ``loss`` of ``mech`` with the pair and event attaining it.

    Parameters
    ----------
    mech : Mechanism
    loss : {"shafer", "bel", "pl", "walley"} (or "sldp" / "wldp")

    Returns
    -------
    LossWitness

    Examples
    --------
    >>> import designer
    >>> witness = designer.worst_case(designer.Q_2x3(0.6, 0.2), "walley")
    >>> witness.describe(), round(witness.eps, 6)
    ('pl_no({no}) / bel_yes({no})', 1.386294)
    """
    mech = _check_mechanism(mech)
    name = _loss_name(loss)
    num, den, masks = _operands(mech, name)
    if num is den:
        eps, x, x2, c = _max_ratio_same(np.asarray(num))
    else:
        eps, x, x2, c = _max_ratio(np.asarray(num), np.asarray(den))
    if x < 0:
        return LossWitness(name, 0.0, None, None, None)
    return LossWitness(name, eps, mech.inputs[x], mech.inputs[x2], sf.mask_labels(int(masks[c]), mech.frame))


def eps_shafer(mech: Mechanism) -> float:
    """Privacy loss according to Shafer (Def 3.1): ``max ln m_x(E) / m_x'(E)``.

    Parameters
    ----------
    mech : Mechanism
        Evidential mechanism with ``k`` inputs.

    Returns
    -------
    float
        Loss in nats; ``inf`` when some focal set of one input has zero mass under another.

    Examples
    --------
    ``Q_2x3(0.6, 0.2)``: the largest ratio of masses is ``0.6 / 0.2`` (Def 3.1):

    >>> import math
    >>> import designer
    >>> math.isclose(designer.eps_shafer(designer.Q_2x3(0.6, 0.2)), math.log(3))
    True
    """
    return worst_case(mech, "shafer").eps


def eps_bel(mech: Mechanism) -> float:
    """Belief variant of the Shafer loss (Lemma 3.2): ``max ln bel_x(E) / bel_x'(E)``, ``E`` nonempty.

    Examples
    --------
    >>> import math
    >>> import designer
    >>> math.isclose(designer.eps_bel(designer.Q_2x3(0.6, 0.2)), math.log(3))  # bel({no}): 0.6 against 0.2
    True
    """
    return worst_case(mech, "bel").eps


def eps_pl(mech: Mechanism) -> float:
    """Plausibility variant of the Shafer loss (Lemma 3.2): ``max ln pl_x(E) / pl_x'(E)``.

    Examples
    --------
    >>> import math
    >>> import designer
    >>> math.isclose(designer.eps_pl(designer.Q_2x3(0.6, 0.2)), math.log(2))  # pl({no}): 0.8 against 0.4
    True
    """
    return worst_case(mech, "pl").eps


def eps_walley(mech: Mechanism) -> float:
    """Privacy loss according to Walley (Def 3.13, Lemma 3.14): ``max ln pl_x(E) / bel_x'(E)``.

    The maximum over the two independent credal sets of ``pr_x(E) / pr_x'(E)`` is attained at
    ``pl_x(E) / bel_x'(E)``; ``E`` ranges over proper nonempty subsets and ``x != x'`` (docs/theory.md section 2).

    Returns
    -------
    float
        Loss in nats (``inf`` if some ``bel_x'(E) = 0 < pl_x(E)``).

    Examples
    --------
    The plausibility of ``{no}`` for a no (0.8) against its belief for a yes (0.2), Lemma 3.14:

    >>> import math
    >>> import designer
    >>> math.isclose(designer.eps_walley(designer.Q_2x3(0.6, 0.2)), math.log(4))
    True
    """
    return worst_case(mech, "walley").eps


def privacy_losses(mech: Mechanism) -> dict[str, LossWitness]:
    """All four losses with their witnesses, keyed ``shafer``, ``bel``, ``pl``, ``walley``.

    Examples
    --------
    >>> import designer
    >>> losses = designer.privacy_losses(designer.Q_2x3(0.6, 0.2))
    >>> {str(loss): round(w.eps, 4) for loss, w in losses.items()}
    {'shafer': 1.0986, 'bel': 1.0986, 'pl': 0.6931, 'walley': 1.3863}
    """
    return {name: worst_case(mech, name) for name in LOSSES}


#: Up to this many cells (inputs x 2**l) the exact decision transforms the integer masses outright; above
#: it a float filter with a proven error bound decides all but the cells near the budget.
DENSE_EXACT_CELLS = 4096


def filter_band(l: int) -> float:
    """Relative error bound (with a factor 4 to spare) of the float bel and pl of a frame of ``l`` elements.

    bel: a 16-term product for the low bits and ``l - 4`` passes of additions, ``gamma(l + 12)``; pl as
    ``total - bel(complement)`` on rows where every pl is at least ``2**-7`` of the total, ``2**8
    gamma(l + 12)``; pl by additions only (events among the rarely said elements): sums of at most ``2**l``
    terms and ``2l`` further additions. ``gamma(n) = n u / (1 - n u)``, ``u = 2**-53`` (docs/theory.md section 7).
    """
    n = max(2**8 * (l + 12), 2**l + 2 * l)
    return max(1e-9, 4.0 * n * 2.0**-53)


def _dense_exact(mech: Mechanism, eps: float, loss: Loss) -> bool:
    """Exact decision by transforming the integer masses (any size; used for small mechanisms)."""
    ints, _ = to_integers(mech.matrix)
    dense = np.zeros((mech.k, 1 << mech.l), dtype=object)
    dense[:, np.asarray(mech.focal, dtype=np.int64)] = ints
    bel = sf.subset_zeta(dense)
    pl = bel[:, -1:] - bel[:, ::-1]
    if loss in (Loss.BEL, Loss.PL):
        table = bel[:, 1:] if loss is Loss.BEL else pl[:, 1:]
        return all(ratio_at_most_exp(int(a), int(b), eps) for a, b in zip(table.max(axis=0), table.min(axis=0)))
    num, den = pl[:, 1:-1], bel[:, 1:-1]
    for x2 in range(mech.k):
        # The largest numerator over x != x2 decides every ratio with denominator row x2.
        for a, b in zip(np.delete(num, x2, axis=0).max(axis=0), den[x2]):
            if not ratio_at_most_exp(int(a), int(b), eps):
                return False
    return True


def _filtered_exact(mech: Mechanism, eps: float, loss: Loss) -> bool:
    """Exact decision: the float tables decide every ratio outside :func:`filter_band` of the budget, the
    integers the rest (one event at a time: ``bel_x(E)`` and ``pl_x(E)`` summed over the focal sets)."""
    d = filter_band(mech.l)
    e_lo, e_hi = exp_float_bounds(eps)
    num, den, masks = _operands(mech, loss)
    _, best = _best_other(num)
    with np.errstate(over="ignore", invalid="ignore"):
        sure_pass = (best == 0) | (best * (1 + d) <= e_lo * (1 - d) ** 2 * den)
        sure_fail = best * (1 - d) > e_hi * (1 + d) ** 2 * den
    if np.any(sure_fail):
        return False
    rows, cols = np.nonzero(~sure_pass)
    if rows.size == 0:
        return True
    ints, _ = to_integers(mech.matrix)
    focal = np.asarray(mech.focal, dtype=np.int64)
    cache: dict[int, tuple[NDArray, NDArray]] = {}
    for x2, c in zip(rows.tolist(), cols.tolist()):
        event = int(masks[c])
        if event not in cache:
            inside = (focal & ~event) == 0
            meets = (focal & event) != 0
            cache[event] = (ints[:, inside].sum(axis=1), ints[:, meets].sum(axis=1))
        bel_e, pl_e = cache[event]
        num_e = {Loss.BEL: bel_e, Loss.PL: pl_e, Loss.WALLEY: pl_e}[loss]
        den_e = pl_e if loss is Loss.PL else bel_e
        others = [int(v) for x, v in enumerate(num_e) if x != x2]
        if not ratio_at_most_exp(max(others), int(den_e[x2]), eps):
            return False
    return True


def _exact_private(mech: Mechanism, eps: float, loss: Loss) -> bool:
    """Decide the budget exactly on the stored floats (dyadic rationals)."""
    if mech.k < 2:
        return True
    if _on_masses(mech, loss):
        # The ratio of a row with itself is 1 <= e^eps, so per column the largest entry against the
        # smallest decides every pair. Float comparisons are exact, so only one exact product per column
        # is needed (any size).
        for a, b in zip(mech.matrix.max(axis=0), mech.matrix.min(axis=0)):
            fa, fb = Fraction(float(a)), Fraction(float(b))
            if not ratio_at_most_exp(fa.numerator * fb.denominator, fb.numerator * fa.denominator, eps):
                return False
        return True
    mech._check_dense()
    if mech.k * (1 << mech.l) <= DENSE_EXACT_CELLS:
        return _dense_exact(mech, eps, loss)
    return _filtered_exact(mech, eps, loss)


def is_private(
    mech: Mechanism,
    eps: float,
    *,
    semantics: str | Loss = "sldp",
    exact: bool = False,
    tol: float | None = None,
) -> bool:
    """Whether ``mech`` is ``eps``-private in the given semantics.

    Parameters
    ----------
    mech : Mechanism
    eps : float
        Budget in nats, > 0.
    semantics : {"sldp", "wldp", "bel", "pl"} or Loss
        ``"sldp"``: Shafer (Def 3.1); ``"wldp"``: Walley (Def 3.13); ``"bel"``/``"pl"``: Lemma 3.2.
    exact : bool, default False
        Always decide in exact rational arithmetic on the stored floats: the answer a certificate needs.
        Without it the float loss (accurate to a few units in the last place: log-space ratios,
        plausibility without cancellation) decides, except within ``DECISION_MARGIN`` of the budget,
        where the exact check decides: the answer is never wrong because of rounding.
    tol : float, optional
        Accept float losses up to ``eps + tol`` instead (nats, >= 0): a deliberately tolerant check, e.g.
        for a mechanism typed in with a few digits.

    Returns
    -------
    bool

    Examples
    --------
    >>> from designer import is_private
    >>> from designer import Q_GWRR
    >>> is_private(Q_GWRR(1.0, 0.8), 1.0)  # GWRR meets its budget with equality (Cor 3.12)
    True
    >>> is_private(Q_GWRR(1.0, 0.8), 1.0, exact=True)  # and its stored floats do, exactly
    True
    >>> is_private(Q_GWRR(1.0, 0.8), 0.999999999999)  # decided exactly, so close to the boundary
    False
    """
    mech = _check_mechanism(mech)
    eps = check_epsilon(eps)
    loss = _loss_name(semantics)
    if exact:
        return _exact_private(mech, eps, loss)
    value = worst_case(mech, loss).eps
    if tol is not None:
        return value <= eps + check_real(tol, "tol", low=0.0)
    if abs(value - eps) > DECISION_MARGIN * max(1.0, eps):
        return value < eps
    return _exact_private(mech, eps, loss)
