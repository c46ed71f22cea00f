"""Exact privacy decisions for the size-class form (docs/theory.md section 7).

A :class:`~designer.optimal.symmetric.SymmetricMechanism` stores the class totals ``A_s``, ``B_s`` as floats,
that is as integers over a common power of two. Every belief of the compact form is then a rational whose
denominator is a falling factorial:

* ``bel_in(t)  = [sum_s A_s (k-s)_(k-t) + B_s (k-1-s)_(k-t)] / (k-1)_(k-t)``,
* ``bel_out(t) = [sum_s B_s (k-1-s)_(k-1-t)] / (k-1)_(k-1-t)``,

with ``(n)_(r) = n! / (n - r)!`` (``math.perm``), and ``pl = total - bel(complement)``. So the Walley loss
(Def 3.13, Lemma 3.14) of the compact form is decidable in integer arithmetic, at a cost of a few big
integer products per size ``t``.

Most sizes need none of it. A float filter computes every belief with a proven error bound
(:func:`~designer.optimal.symmetric.class_coefficients`: at most ``2k`` roundings per coefficient, plus an
absolute ``2**-1000`` for subnormal products) and decides each ratio that lies outside a band of
``FILTER_BAND`` around the budget; only the sizes inside the band (the binding ones at an optimum) are
decided on the integers. The decision is exact either way: the float answer is only used where its error
bound cannot change it.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from .._internal.exact import exp_float_bounds, ratio_at_most_exp, to_integers
from .symmetric import Belief, SymmetricMechanism, walley_pairs

__all__ = ["FILTER_BAND", "float_verdicts", "shafer_private", "walley_private"]

#: Relative half-width of the float filter's band. The proven error of a float belief is below
#: ``(2k + 16) 2**-53`` (below 1e-10 for ``k <= 10**5``); the band is ten times that at least.
FILTER_BAND = 1e-9

#: Absolute allowance for products that ran into subnormal numbers (``2k 2**-1074`` and far more).
TINY = 2.0**-1000


def shafer_private(mech: SymmetricMechanism, eps: float) -> bool:
    """Exact check of ``a_s <= e^eps b_s`` and ``b_s <= e^eps a_s`` (Def 3.1) on the dyadic class totals.

    One set of size ``s`` carries ``a_s = A_s / C(k-1, s-1)`` or ``b_s = B_s / C(k-1, s)``, so
    ``a_s / b_s = A_s (k - s) / (B_s s)``.
    """
    k = mech.k
    ints, _ = to_integers(np.r_[mech.A, mech.B])
    a_int, b_int = ints[:k], ints[k:]
    for s in range(1, k):
        a, b = int(a_int[s - 1]) * (k - s), int(b_int[s - 1]) * s
        if not (ratio_at_most_exp(a, b, eps) and ratio_at_most_exp(b, a, eps)):
            return False
    return True


class _ExactBeliefs:
    """``bel_in(t)`` and ``bel_out(t)`` of one compact mechanism as integer pairs ``(numerator, denominator)``,
    over the common factor ``2**shift`` of the class totals, computed on demand."""

    def __init__(self, mech: SymmetricMechanism) -> None:
        self.k = mech.k
        ints, _ = to_integers(np.r_[mech.A, mech.B])
        self.a = [(s + 1, int(v)) for s, v in enumerate(ints[: self.k]) if v]
        self.b = [(s + 1, int(v)) for s, v in enumerate(ints[self.k:]) if v]
        self.total = sum(v for _, v in self.a) + sum(v for _, v in self.b)
        self._cache: dict[tuple[Belief, int], tuple[int, int]] = {}

    def bel(self, kind: Belief, t: int) -> tuple[int, int]:
        key = (kind, t)
        if key not in self._cache:
            k, perm = self.k, math.perm
            if kind is Belief.BEL_IN:
                num = (sum(v * perm(k - s, k - t) for s, v in self.a)
                       + sum(v * perm(k - 1 - s, k - t) for s, v in self.b))
                self._cache[key] = (num, perm(k - 1, k - t))
            elif kind is Belief.BEL_OUT:
                num = sum(v * perm(k - 1 - s, k - 1 - t) for s, v in self.b)
                self._cache[key] = (num, perm(k - 1, k - 1 - t))
            else:
                raise ValueError(f"a belief (bel_in or bel_out) is computed here, not {kind!r}")
        return self._cache[key]

    def pl(self, kind: Belief, t: int) -> tuple[int, int]:
        """``pl_in(t) = total - bel_out(k - t)``, ``pl_out(t) = total - bel_in(k - t)``."""
        num, den = self.bel(kind.complement, self.k - t)
        return self.total * den - num, den

    def ratio_ok(self, num_kind: Belief, den_kind: Belief, t: int, eps: float) -> bool:
        pn, pd = self.pl(num_kind, t)
        bn, bd = self.bel(den_kind, t)
        return ratio_at_most_exp(pn * bd, bn * pd, eps)


def float_verdicts(total: float, comp: NDArray[np.float64], den: NDArray[np.float64], eps: float
                   ) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    """Which ratios ``pl / den`` with ``pl = total - comp`` are surely at most ``e^eps``, and which surely above.

    Sound whenever each float is within a relative ``FILTER_BAND`` of its exact value, the beliefs ``comp``
    and ``den`` also within ``TINY`` absolute (products that ran into subnormals), ``total`` not (an exactly
    rounded sum, ``math.fsum``): the bounds on ``pl`` carry the band of both terms, so a plausibility that
    cancels to near 0 keeps a margin of ``FILTER_BAND (total + comp)``; the budget ``e^eps`` is bracketed
    (:func:`~designer._internal.exact.exp_float_bounds`) and narrowed by one more band. A ratio neither sure to pass
    nor sure to fail is left to the integers.

    Parameters
    ----------
    total : float
        The row's total mass.
    comp, den : (n,) ndarray
        Beliefs of the complements (``pl = total - comp``) and of the denominators.
    eps : float
        Budget (nats).

    Returns
    -------
    sure_pass, sure_fail : (n,) bool ndarray
    """
    e_lo, e_hi = exp_float_bounds(eps)
    d = FILTER_BAND
    num_hi = total * (1 + d) - comp * (1 - d) + TINY
    num_lo = total * (1 - d) - comp * (1 + d) - TINY
    den_lo, den_hi = den * (1 - d) - TINY, den * (1 + d) + TINY
    with np.errstate(over="ignore", invalid="ignore"):
        sure_pass = (num_hi <= 0) | ((den_lo > 0) & (num_hi <= e_lo * (1 - d) * den_lo))
        sure_fail = (num_lo > 0) & (num_lo > e_hi * (1 + d) * den_hi)
    return sure_pass, sure_fail


def walley_private(mech: SymmetricMechanism, eps: float, *, counts: dict[str, int] | None = None) -> bool:
    """Decide exactly whether the compact mechanism's Walley loss is at most ``eps``.

    Parameters
    ----------
    mech : SymmetricMechanism
    eps : float
        Budget (nats).
    counts : dict, optional
        Filled with ``"sizes"`` (ratios checked), ``"exact"`` (how many the integers decided).

    Returns
    -------
    bool
    """
    k = mech.k
    if k < 2:
        return True
    f = mech.bel_pl()
    total = float(f["total"][0])
    t = np.arange(1, k)
    exact = _ExactBeliefs(mech)
    checked = decided_exactly = 0
    for num_kind, den_kind, keep in walley_pairs(k):
        comp = f[num_kind.complement][k - t]
        sure_pass, sure_fail = float_verdicts(total, comp, f[den_kind][t], eps)
        if np.any(sure_fail & keep):
            return False
        unsure = np.flatnonzero(keep & ~sure_pass)
        checked += int(keep.sum())
        decided_exactly += unsure.size
        for i in unsure:
            if not exact.ratio_ok(num_kind, den_kind, int(t[i]), eps):
                return False
    if counts is not None:
        counts.update(sizes=checked, exact=decided_exactly)
    return True
