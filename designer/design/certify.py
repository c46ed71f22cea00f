"""Certification of designed mechanisms (DESIGN.md 5, "Certification").

A solver returns a mechanism that meets the budget up to its tolerance. Before release the loss is
recomputed from the stored floats; when it exceeds the budget the mechanism is mixed with a
reference mechanism that is strictly inside the budget, by the smallest weight ``t`` that restores it:
``(1 - t) M + t S``. The check is exact (integer arithmetic on the dyadic floats, rational bounds on
``e^eps``) when it is small enough, otherwise in floats with a stated safety margin.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..mechanism import Mechanism
from ..privacy import is_private, worst_case

__all__ = [
    "EXACT_LIMIT",
    "Certificate",
    "CertificationError",
    "bisect_threshold",
    "certify",
    "clean_solution",
    "smallest_mix_weight",
]

#: Exact arithmetic is used when (inputs) x (sets checked) is at most this.
EXACT_LIMIT = 100_000

#: Entries of a solver's answer below this are solver noise and are set to 0 (then rows renormalised).
ZERO_TOL = 1e-13


class CertificationError(RuntimeError):
    """No certified mechanism could be produced (never raised for a feasible, well-solved problem)."""


@dataclass(frozen=True)
class Certificate:
    """How a released mechanism was shown to meet its budget.

    Attributes
    ----------
    epsilon : float
        The budget (nats).
    losses : tuple of str
        Losses checked: ``("shafer",)``, ``("walley",)`` or both.
    method : {"exact", "float"}
        Exact rational arithmetic, or floats with ``margin``.
    margin : float
        For ``"float"``: the checked loss was at most ``epsilon - margin`` (covers the rounding of the
        float computation). 0 for ``"exact"``.
    repaired : bool
        Whether the solver's answer had to be mixed with ``reference``.
    mix_weight : float
        The weight ``t`` of the reference in the released mechanism (0 when not repaired).
    reference : str
        The reference mechanism used for the repair, if any.
    violation : float
        Loss of the cleaned solver answer minus the budget, before repair (<= 0 when none was needed).
    """

    epsilon: float
    losses: tuple[str, ...]
    method: str
    margin: float
    repaired: bool
    mix_weight: float
    reference: str
    violation: float

    def describe(self) -> str:
        how = "exact rational arithmetic" if self.method == "exact" else f"floats with margin {self.margin:.1e}"
        rep = (f"; repaired by mixing {self.mix_weight:.3g} of the {self.reference}"
               if self.repaired else "; no repair needed")
        return f"{'+'.join(self.losses)} loss <= {self.epsilon:g} checked in {how}{rep}"


def clean_solution(cols: NDArray[np.float64], *, fixed_full: float | None = None,
                   full_index: int | None = None) -> NDArray[np.float64]:
    """Clip solver noise: negatives and entries below ``ZERO_TOL`` become 0, rows are renormalised.

    With a fixed don't-know mass, that column is set to it exactly and the rest scaled to ``1 - d``.
    """
    m = np.where(cols < ZERO_TOL, 0.0, cols)
    if fixed_full is not None and full_index is not None:
        m[:, full_index] = 0.0
        rest = m.sum(axis=1, keepdims=True)
        rest[rest == 0] = 1.0
        m = m / rest * (1.0 - fixed_full)
        m[:, full_index] = fixed_full
        return m
    return m / m.sum(axis=1, keepdims=True)


def _float_margin(l: int) -> float:
    # bel/pl of a row are sums of at most 2**l masses formed in l passes: relative error <= (l + 2) u
    # each, so a log-ratio is off by at most about 2 (l + 2) u; a generous multiple of it is the margin.
    return 64.0 * (l + 2) * 2.0**-53


def _passes(mech: Mechanism, eps: float, losses: tuple[str, ...], method: str) -> bool:
    if method == "exact":
        return all(is_private(mech, eps, semantics=loss, exact=True) for loss in losses)
    margin = _float_margin(mech.l)
    return all(worst_case(mech, loss).eps <= eps - margin for loss in losses)


def _method(mech: Mechanism, losses: tuple[str, ...]) -> str:
    if losses == ("shafer",) or mech.is_bayesian:
        return "exact"  # one exact product per column, whatever the size (privacy._exact_private)
    return "exact" if mech.k * (1 << mech.l) <= EXACT_LIMIT else "float"


def _references(mech: Mechanism, losses: tuple[str, ...]) -> list[tuple[str, Mechanism]]:
    """Mechanisms strictly inside any positive budget, on the same columns where possible."""
    refs: list[tuple[str, Mechanism]] = []
    cols = mech.matrix
    average = np.tile(cols.mean(axis=0), (mech.k, 1))
    avg = Mechanism(average / average.sum(axis=1, keepdims=True), inputs=mech.inputs, frame=mech.frame,
                    focal=list(mech.focal))
    if losses == ("shafer",):
        refs.append(("row average (Shafer loss 0)", avg))
    full = (1 << mech.l) - 1
    focal = [int(f) for f in mech.focal]
    dk = float(cols[:, focal.index(full)].mean()) if full in focal else 0.0
    singles = [1 << i for i in range(mech.l)]
    masks = singles + ([full] if dk > 0 and mech.l > 1 else [])
    row = [(1.0 - dk) / mech.l] * mech.l + ([dk] if dk > 0 and mech.l > 1 else [])
    uniform = Mechanism(np.tile(row, (mech.k, 1)), inputs=mech.inputs, frame=mech.frame, focal=masks)
    refs.append(("uniform mechanism with the same don't-know mass" if dk else "uniform Bayesian mechanism",
                 uniform))
    if losses != ("shafer",):
        refs.append(("row average", avg))
    return refs


def _mix(a: Mechanism, b: Mechanism, t: float) -> Mechanism:
    masks = sorted(set(map(int, a.focal)) | set(map(int, b.focal)))
    pos = {m: i for i, m in enumerate(masks)}
    out = np.zeros((a.k, len(masks)))
    out[:, [pos[int(m)] for m in a.focal]] += (1.0 - t) * a.matrix
    out[:, [pos[int(m)] for m in b.focal]] += t * b.matrix
    return Mechanism(out, inputs=a.inputs, frame=a.frame, focal=masks)


def smallest_mix_weight(passes: Callable[[float], bool], *, steps: int = 12) -> float:
    """Smallest weight ``t`` in (0, 1] of a reference with ``passes(t)``, knowing ``passes(1)``.

    Budget-feasible mechanisms form a convex set, so the passing weights are an interval ``[t*, 1]``:
    decades from 1e-15 find its order of magnitude, bisection refines it (the returned end passes).
    """
    t_hi, t = 1.0, 1e-15
    while t < 1.0:
        if passes(t):
            t_hi = t
            break
        t *= 10.0
    return bisect_threshold(passes, bad=t_hi / 10.0 if t_hi < 1.0 else 0.0, good=t_hi, steps=steps)


def bisect_threshold(feasible: Callable[[float], bool], *, bad: float, good: float, steps: int = 20) -> float:
    """Bisect between a failing value ``bad`` and a passing value ``good``; returns the passing end."""
    for _ in range(steps):
        mid = 0.5 * (bad + good)
        if feasible(mid):
            good = mid
        else:
            bad = mid
    return good


def certify(mech: Mechanism, epsilon: float, losses: tuple[str, ...], *,
            allowed: set[int] | None = None) -> tuple[Mechanism, Certificate]:
    """Return a mechanism that provably meets ``epsilon`` for every loss in ``losses``, and how.

    Parameters
    ----------
    mech : Mechanism
        The cleaned solver answer.
    epsilon : float
        Budget in nats.
    losses : tuple of {"shafer", "walley"}
    allowed : set of int, optional
        Focal sets the released mechanism may use (a restricted family); references using other sets
        are not mixed in.

    Raises
    ------
    CertificationError
        If neither the answer nor any mixture with a reference passes (the problem was not solved).
    """
    method = _method(mech, losses)
    margin = 0.0 if method == "exact" else _float_margin(mech.l)
    worst = max(worst_case(mech, loss).eps for loss in losses)
    violation = worst - epsilon
    if _passes(mech, epsilon, losses, method):
        return mech, Certificate(epsilon, losses, method, margin, False, 0.0, "", violation)
    for name, ref in _references(mech, losses):
        if allowed is not None and not set(map(int, ref.focal)) <= allowed:
            continue
        if not _passes(ref, epsilon, losses, method):
            continue
        t_hi = smallest_mix_weight(lambda t, ref=ref: _passes(_mix(mech, ref, t), epsilon, losses, method))
        released = _mix(mech, ref, t_hi)
        return released, Certificate(epsilon, losses, method, margin, True, t_hi, name, violation)
    raise CertificationError(
        f"the solver's answer exceeds the budget by {violation:.3g} nats and no repair restores it; "
        "the mechanism is not released (try another solver or tighter solver tolerances)"
    )

