"""Certification of designed mechanisms (docs/theory.md, section 7).

A solver returns a mechanism that meets the budget and the structure up to its tolerance. Before release
the losses are decided again on the stored floats, in exact rational arithmetic (floats are dyadic
rationals; ``e^eps`` is bracketed by rationals), and the structure (focal sets, don't-know mass, lying
bound) is checked exactly too. When the answer fails, it is mixed with a *reference* mechanism that
passes both, by the smallest weight ``t`` that restores them: ``(1 - t) M + t R``. The passing weights
form an interval ``[t*, 1]`` (budget-feasible mechanisms and the structure are convex), so ``t*`` is
found by bisection. A repair that costs more objective than the caller accepts is refused, and the
caller solves again inside the budget (:func:`~designer.design.engine.design`).

One :func:`certify` serves full mechanisms (:class:`~designer.mechanism.Mechanism`) and the compact
size-class form (:class:`~designer.design.symmetric.SymmetricMechanism`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..exceptions import CertificationError
from ..mechanism import Mechanism
from ..privacy import is_private, worst_case
from ..vocabulary import Loss
from . import compact_exact
from .problem import DesignProblem
from .symmetric import SymmetricMechanism

__all__ = [
    "Certificate",
    "CertificationError",
    "bisect_threshold",
    "certify",
    "clean_solution",
    "smallest_mix_weight",
    "structure_ok",
]

#: Rows of a solver's answer whose sum is within this of 1 are not rescaled by :func:`clean_solution`.
RENORMALIZE_TOL = 1e-12

#: Entries of a solver's answer below this are solver noise and are set to 0 (then rows renormalised).
ZERO_TOL = 1e-13

#: What :func:`certify` takes: a full mechanism or the compact size-class form.
Candidate = Mechanism | SymmetricMechanism


@dataclass(frozen=True)
class Certificate:
    """How a released mechanism was shown to meet its budget and its structure.

    Attributes
    ----------
    epsilon : float
        The budget (nats).
    losses : tuple of Loss
        Losses checked: ``(SHAFER,)``, ``(WALLEY,)`` or both.
    method : {"exact"}
        Every certificate decides the losses exactly on the stored floats (rational arithmetic, with a
        float filter of proven error where it cannot change the answer); the field names it in the JSON.
    repaired : bool
        Whether the solver's answer had to be mixed with ``reference``.
    mix_weight : float
        The weight ``t`` of the reference in the released mechanism (0 when not repaired).
    reference : str
        The reference mechanism used for the repair, if any.
    violation : float
        Float loss of the cleaned solver answer minus the budget, before repair (<= 0 when none was needed).
    arithmetic : str
        What the exact check computed with: ``"rational arithmetic"`` on a design's stored floats, ``"integer
        counts over D"`` on a device's grid.
    """

    epsilon: float
    losses: tuple[Loss, ...]
    method: str
    repaired: bool
    mix_weight: float
    reference: str
    violation: float
    arithmetic: str = "rational arithmetic"

    def describe(self) -> str:
        """One line: what was checked, how, and whether the answer was repaired."""
        how = f"checked exactly ({self.arithmetic})"
        names = " and ".join(loss.value.capitalize() for loss in self.losses)
        text = f"{names} loss <= {self.epsilon:g}, {how}"
        if self.repaired:
            over = (f"by {self.violation:.2g} in floats" if self.violation > 0
                    else "by less than float rounding (only the exact check sees it)")
            text += (f"; the solver's answer exceeded the budget {over}, so {self.mix_weight:.2g} of the "
                     f"{self.reference} (private with room to spare) was mixed in (its answer sets may appear "
                     f"with masses of that order)")
        return text


# ---------------------------------------------------------------------------- cleaning and structure
def clean_solution(cols: NDArray[np.float64], *, fixed_full: float | None = None, full_index: int | None = None,
                   forbidden: NDArray[np.bool_] | None = None) -> NDArray[np.float64]:
    """Clip solver noise: negatives and entries below ``ZERO_TOL`` become 0, rows are renormalised.

    Parameters
    ----------
    cols : (k, F) ndarray
        The solver's masses.
    fixed_full, full_index : float and int, optional
        A fixed don't-know mass and its column: that column is set to it exactly and the rest scaled to
        ``1 - d``.
    forbidden : (k, F) bool ndarray, optional
        Entries the structure forces to 0 (e.g. every lie when ``lie_max = 0``): set to exactly 0.

    Returns
    -------
    (k, F) ndarray
    """
    m = np.where(cols < ZERO_TOL, 0.0, cols)
    if forbidden is not None:
        m = np.where(forbidden, 0.0, m)
    if fixed_full is not None and full_index is not None:
        m[:, full_index] = 0.0
        rest = m.sum(axis=1, keepdims=True)
        rest[rest == 0] = 1.0
        m = m / rest * (1.0 - fixed_full)
        m[:, full_index] = fixed_full
        return m
    sums = m.sum(axis=1, keepdims=True)
    # Rows already within rounding of 1 are kept as they are: dividing would move every entry by an ulp
    # and could break the exact structure of a closed-form design (a circulant's rolled rows).
    return np.where(np.abs(sums - 1.0) <= RENORMALIZE_TOL, m, m / sums)


def _exact_sum_at_most(values: Iterable[float], bound: float) -> bool:
    return sum((Fraction(float(v)) for v in values), Fraction(0)) <= Fraction(bound)


def structure_ok(problem: DesignProblem, mech: Mechanism | SymmetricMechanism) -> bool:
    """Whether ``mech`` meets the problem's structure exactly (focal sets, don't-know, lying bound).

    The don't-know mass must equal ``dont_know`` as a float (or stay at most ``dont_know_max``), and each
    row's lie mass, summed in exact rational arithmetic, must be at most ``lie_max``.
    """
    if isinstance(mech, SymmetricMechanism):
        return _compact_structure_ok(problem, mech)
    full = (1 << mech.l) - 1
    focal = [int(m) for m in mech.focal]
    if problem.focal_sets is not None and not set(focal) <= set(problem.focal_sets):
        return False
    dk = mech.matrix[:, focal.index(full)] if full in focal else np.zeros(mech.k)
    if problem.dont_know is not None and not np.all(dk == problem.dont_know):
        return False
    if problem.dont_know_max is not None and np.any(dk > problem.dont_know_max):
        return False
    if problem.lie_max is not None:
        truth = problem.truth()
        masks = np.asarray(mech.focal, dtype=object)
        for x in range(mech.k):
            lies = [v for v, m in zip(mech.matrix[x], masks) if not (int(m) >> int(truth[x])) & 1]
            if not _exact_sum_at_most(lies, problem.lie_max):
                return False
    return True


def _compact_structure_ok(problem: DesignProblem, mech: SymmetricMechanism) -> bool:
    k = mech.k
    if problem.focal_sets is not None:
        sizes = {int(m).bit_count() for m in problem.focal_sets}
        used = {s + 1 for s in range(k) if mech.A[s] > 0 or mech.B[s] > 0}
        if not used <= sizes:
            return False
    dk = float(mech.A[k - 1])
    if problem.dont_know is not None and dk != problem.dont_know:
        return False
    if problem.dont_know_max is not None and dk > problem.dont_know_max:
        return False
    return problem.lie_max is None or _exact_sum_at_most(mech.B, problem.lie_max)


# ---------------------------------------------------------------------------- privacy checks
def passes(mech: Mechanism | SymmetricMechanism, eps: float, losses: tuple[Loss, ...]) -> bool:
    """Whether every loss in ``losses`` is at most ``eps``, decided exactly on the stored floats."""
    if isinstance(mech, SymmetricMechanism):
        if Loss.SHAFER in losses and not compact_exact.shafer_private(mech, eps):
            return False
        return Loss.WALLEY not in losses or compact_exact.walley_private(mech, eps)
    return all(is_private(mech, eps, semantics=loss, exact=True) for loss in losses)


def float_loss(mech: Mechanism | SymmetricMechanism, losses: tuple[Loss, ...]) -> float:
    """The largest of ``losses`` of ``mech``, in floats."""
    values = []
    for loss in losses:
        if isinstance(mech, SymmetricMechanism):
            values.append(mech.eps_shafer() if loss is Loss.SHAFER else mech.eps_walley())
        else:
            values.append(worst_case(mech, loss).eps)
    return max(values)


# ---------------------------------------------------------------------------- mixing
def mix(a: Candidate, b: Candidate, t: float, *, dont_know: float | None = None) -> Candidate:
    """``(1 - t) a + t b`` on the union of their columns; a fixed don't-know mass stays exactly as it is."""
    if isinstance(a, SymmetricMechanism):
        assert isinstance(b, SymmetricMechanism)
        A, B = (1 - t) * a.A + t * b.A, (1 - t) * a.B + t * b.B
        if dont_know is not None:
            A[a.k - 1] = dont_know
        return SymmetricMechanism(a.labels, A, B)
    assert isinstance(b, Mechanism)
    masks = sorted(set(map(int, a.focal)) | set(map(int, b.focal)))
    pos = {m: i for i, m in enumerate(masks)}
    out = np.zeros((a.k, len(masks)))
    out[:, [pos[int(m)] for m in a.focal]] += (1.0 - t) * a.matrix
    out[:, [pos[int(m)] for m in b.focal]] += t * b.matrix
    full = (1 << a.l) - 1
    if dont_know is not None and full in pos:
        out[:, pos[full]] = dont_know
    return Mechanism(out, inputs=a.inputs, frame=a.frame, focal=masks)


def smallest_mix_weight(passes: Callable[[float], bool], *, steps: int = 12) -> float:
    """Smallest weight ``t`` in (0, 1] of a reference with ``passes(t)``, knowing ``passes(1)``.

    The passing weights are an interval ``[t*, 1]``: decades from 1e-15 find its order of magnitude,
    bisection refines it (the returned end passes).
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


# ---------------------------------------------------------------------------- references
def default_references(problem: DesignProblem, mech: Candidate) -> list[tuple[str, Candidate]]:
    """Cheap references built from ``mech`` itself: its row average (Shafer loss 0, same columns) and
    the uniform mechanism with the same don't-know mass. Each is used only if it passes the checks."""
    if isinstance(mech, SymmetricMechanism):
        k = mech.k
        sizes = np.arange(1, k + 1, dtype=float)
        totals = mech.A + mech.B
        average = SymmetricMechanism(mech.labels, sizes * totals / k, (k - sizes) * totals / k)
        d = float(mech.A[k - 1])
        ref_a, ref_b = np.zeros(k), np.zeros(k)
        ref_a[0], ref_b[0] = (1 - d) / k, (1 - d) * (k - 1) / k
        ref_a[k - 1] += d
        uniform_compact = SymmetricMechanism(mech.labels, ref_a, ref_b)
        return [("row average", average), ("uniform mechanism", uniform_compact)]
    average_row = mech.matrix.mean(axis=0)
    average_full = Mechanism(np.tile(average_row / average_row.sum(), (mech.k, 1)), inputs=mech.inputs,
                        frame=mech.frame, focal=list(mech.focal))
    full = (1 << mech.l) - 1
    focal = [int(f) for f in mech.focal]
    dk = float(mech.matrix[:, focal.index(full)].mean()) if full in focal else 0.0
    with_dk = dk > 0 and mech.l > 1
    masks = [1 << i for i in range(mech.l)] + ([full] if with_dk else [])
    row = [(1.0 - dk) / mech.l] * mech.l + ([dk] if with_dk else [])
    uniform = Mechanism(np.tile(row, (mech.k, 1)), inputs=mech.inputs, frame=mech.frame, focal=masks)
    return [("row average", average_full), ("uniform mechanism", uniform)]


def certify(mech: Candidate, problem: DesignProblem, *, references: Iterable[tuple[str, Candidate]] = (),
            accept: Callable[[Any], bool] | None = None) -> tuple[Any, Certificate]:
    """Return a mechanism that provably meets the problem's budget and structure, and how.

    Parameters
    ----------
    mech : Mechanism or SymmetricMechanism
        The cleaned solver answer.
    problem : DesignProblem
        Budget (``epsilon``), semantics (which losses) and structure.
    references : iterable of (name, mechanism)
        Candidates to mix in, tried after :func:`default_references`; each is used only if it passes
        the exact checks itself.
    accept : callable, optional
        Judges a repaired mechanism (e.g. its objective against the solver's optimum); a repair it
        rejects is not released, and the next reference is tried.

    Raises
    ------
    CertificationError
        If neither the answer nor any accepted repair passes.
    """
    eps, losses = problem.epsilon, problem.semantics.losses
    violation = float_loss(mech, losses) - eps
    dont_know = problem.dont_know

    def ok(candidate: Candidate) -> bool:
        return structure_ok(problem, candidate) and passes(candidate, eps, losses)

    if ok(mech):
        return mech, Certificate(eps, losses, "exact", False, 0.0, "", violation)
    rejected = 0
    for name, ref in itertools.chain(default_references(problem, mech), references):
        if dont_know is not None:
            ref = mix(ref, ref, 0.0, dont_know=dont_know)  # the fixed column exactly, not a rounded average
        if not ok(ref):
            continue
        def passes_at(t: float, ref: Candidate = ref) -> bool:
            return ok(mix(mech, ref, t, dont_know=dont_know))

        t = smallest_mix_weight(passes_at)
        released = mix(mech, ref, t, dont_know=dont_know)
        if accept is not None and not accept(released):
            rejected += 1
            continue
        return released, Certificate(eps, losses, "exact", True, t, name, violation)
    why = (f"every repair that restores it ({rejected}) costs more objective than allowed" if rejected
           else "no reference mechanism meets the budget and the structure")
    raise CertificationError(
        f"the solver's answer exceeds the budget or the structure (loss {violation:+.3g} nats against the "
        f"budget) and {why}; the mechanism is not released"
    )
