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
from ._exact import ratio_at_most_exp, to_integers
from ._validation import check_epsilon, check_real, format_set
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
    # For a denominator row x2 the best numerator row is the column maximum over rows != x2:
    # the top entry unless it sits in row x2, then the runner-up.
    order = np.argsort(-num, axis=0, kind="stable")
    top, second = order[0], order[1]
    top_v = np.take_along_axis(num, order[:1], axis=0)[0]
    second_v = np.take_along_axis(num, order[1:2], axis=0)[0]
    rows = np.arange(k)[:, None]
    best_row = np.where(top[None, :] == rows, second[None, :], top[None, :])
    best_num = np.where(top[None, :] == rows, second_v[None, :], top_v[None, :])
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
        bel = mech.bel()
        return bel[:, 1:], bel[:, 1:], np.arange(1, size)
    if loss is Loss.PL:
        pl = mech.pl()
        return pl[:, 1:], pl[:, 1:], np.arange(1, size)
    bel, pl = mech.bel(), mech.pl()
    return pl[:, 1:-1], bel[:, 1:-1], np.arange(1, size - 1)


def _check_mechanism(mech: object) -> Mechanism:
    if not isinstance(mech, Mechanism):
        raise TypeError(f"expected a Mechanism, got {type(mech).__name__}")
    return mech


def _loss_name(semantics: object) -> Loss:
    try:
        return Loss.parse(semantics, "semantics")
    except ValueError:
        raise ValueError(
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
    """
    mech = _check_mechanism(mech)
    name = _loss_name(loss)
    num, den, masks = _operands(mech, name)
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
    """
    return worst_case(mech, "shafer").eps


def eps_bel(mech: Mechanism) -> float:
    """Belief variant of the Shafer loss (Lemma 3.2): ``max ln bel_x(E) / bel_x'(E)``, ``E`` nonempty."""
    return worst_case(mech, "bel").eps


def eps_pl(mech: Mechanism) -> float:
    """Plausibility variant of the Shafer loss (Lemma 3.2): ``max ln pl_x(E) / pl_x'(E)``."""
    return worst_case(mech, "pl").eps


def eps_walley(mech: Mechanism) -> float:
    """Privacy loss according to Walley (Def 3.13, Lemma 3.14): ``max ln pl_x(E) / bel_x'(E)``.

    The maximum over the two independent credal sets of ``pr_x(E) / pr_x'(E)`` is attained at
    ``pl_x(E) / bel_x'(E)``; ``E`` ranges over proper nonempty subsets and ``x != x'`` (docs/theory.md section 2).

    Returns
    -------
    float
        Loss in nats (``inf`` if some ``bel_x'(E) = 0 < pl_x(E)``).
    """
    return worst_case(mech, "walley").eps


def privacy_losses(mech: Mechanism) -> dict[str, LossWitness]:
    """All four losses with their witnesses, keyed ``shafer``, ``bel``, ``pl``, ``walley``."""
    return {name: worst_case(mech, name) for name in LOSSES}


def _exact_private(mech: Mechanism, eps: float, loss: Loss) -> bool:
    """Decide the budget in exact integer arithmetic (masses are dyadic rationals)."""
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
    ints, _ = to_integers(mech.matrix)
    mech._check_dense()
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
