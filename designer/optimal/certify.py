"""Certification of designed mechanisms (docs/theory.md, section 7).

A solver returns a mechanism that meets the budget and the structure up to its tolerance. Before release
the losses are decided again on the stored floats, in exact rational arithmetic (floats are dyadic
rationals; ``e^eps`` is bracketed by rationals), and the structure (focal sets, don't-know mass, lying
bound) is checked exactly too. When the answer fails, it is mixed with a *reference* mechanism that
passes both, by the smallest weight ``t`` that restores them: ``(1 - t) M + t R``. The passing weights
form an interval ``[t*, 1]`` (budget-feasible mechanisms and the structure are convex), so ``t*`` is
found by bisection. A repair that costs more objective than the caller accepts is refused, and the
caller solves again inside the budget (:func:`~designer.optimal.engine.design`).

One :func:`certify` serves full mechanisms (:class:`~designer.mechanism.Mechanism`) and the compact
size-class form (:class:`~designer.optimal.symmetric.SymmetricMechanism`): what differs between the two forms
(structure, exact losses, float losses, mixing, references) is one class per form, :class:`FullForm` and
:class:`CompactForm`, looked up once by type; the certificate (:class:`~designer.certificate.Certificate`)
is the one every released object carries.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..certificate import Certificate
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


class FullForm:
    """What certification needs of a full mechanism (:class:`~designer.mechanism.Mechanism`)."""

    @staticmethod
    def structure_ok(problem: DesignProblem, mech: Mechanism) -> bool:
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

    @staticmethod
    def passes(mech: Mechanism, eps: float, losses: tuple[Loss, ...]) -> bool:
        return all(is_private(mech, eps, semantics=loss, exact=True) for loss in losses)

    @staticmethod
    def float_loss(mech: Mechanism, loss: Loss) -> float:
        return worst_case(mech, loss).eps

    @staticmethod
    def mix(a: Mechanism, b: Mechanism, t: float, dont_know: float | None) -> Mechanism:
        masks = sorted(set(map(int, a.focal)) | set(map(int, b.focal)))
        pos = {m: i for i, m in enumerate(masks)}
        out = np.zeros((a.k, len(masks)))
        out[:, [pos[int(m)] for m in a.focal]] += (1.0 - t) * a.matrix
        out[:, [pos[int(m)] for m in b.focal]] += t * b.matrix
        full = (1 << a.l) - 1
        if dont_know is not None and full in pos:
            out[:, pos[full]] = dont_know
        return Mechanism(out, inputs=a.inputs, frame=a.frame, focal=masks)

    @staticmethod
    def references(mech: Mechanism) -> list[tuple[str, Mechanism]]:
        average_row = mech.matrix.mean(axis=0)
        average = Mechanism(np.tile(average_row / average_row.sum(), (mech.k, 1)), inputs=mech.inputs,
                            frame=mech.frame, focal=list(mech.focal))
        full = (1 << mech.l) - 1
        focal = [int(f) for f in mech.focal]
        dk = float(mech.matrix[:, focal.index(full)].mean()) if full in focal else 0.0
        with_dk = dk > 0 and mech.l > 1
        masks = [1 << i for i in range(mech.l)] + ([full] if with_dk else [])
        row = [(1.0 - dk) / mech.l] * mech.l + ([dk] if with_dk else [])
        uniform = Mechanism(np.tile(row, (mech.k, 1)), inputs=mech.inputs, frame=mech.frame, focal=masks)
        return [("row average", average), ("uniform mechanism", uniform)]


class CompactForm:
    """What certification needs of the size-class form (:class:`~designer.optimal.symmetric.SymmetricMechanism`)."""

    @staticmethod
    def structure_ok(problem: DesignProblem, mech: SymmetricMechanism) -> bool:
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

    @staticmethod
    def passes(mech: SymmetricMechanism, eps: float, losses: tuple[Loss, ...]) -> bool:
        if Loss.SHAFER in losses and not compact_exact.shafer_private(mech, eps):
            return False
        return Loss.WALLEY not in losses or compact_exact.walley_private(mech, eps)

    @staticmethod
    def float_loss(mech: SymmetricMechanism, loss: Loss) -> float:
        return mech.eps_shafer() if loss is Loss.SHAFER else mech.eps_walley()

    @staticmethod
    def mix(a: SymmetricMechanism, b: SymmetricMechanism, t: float, dont_know: float | None) -> SymmetricMechanism:
        A, B = (1 - t) * a.A + t * b.A, (1 - t) * a.B + t * b.B
        if dont_know is not None:
            A[a.k - 1] = dont_know
        return SymmetricMechanism(a.labels, A, B)

    @staticmethod
    def references(mech: SymmetricMechanism) -> list[tuple[str, SymmetricMechanism]]:
        k = mech.k
        sizes = np.arange(1, k + 1, dtype=float)
        totals = mech.A + mech.B
        average = SymmetricMechanism(mech.labels, sizes * totals / k, (k - sizes) * totals / k)
        d = float(mech.A[k - 1])
        ref_a, ref_b = np.zeros(k), np.zeros(k)
        ref_a[0], ref_b[0] = (1 - d) / k, (1 - d) * (k - 1) / k
        ref_a[k - 1] += d
        return [("row average", average), ("uniform mechanism", SymmetricMechanism(mech.labels, ref_a, ref_b))]


#: The form of each candidate type (looked up by exact type: a subclass would need its own entry).
FORMS: dict[type, Any] = {Mechanism: FullForm, SymmetricMechanism: CompactForm}


def form_of(mech: Candidate) -> Any:
    """The :class:`FullForm` or :class:`CompactForm` of ``mech``'s type."""
    try:
        return FORMS[type(mech)]
    except KeyError:
        raise TypeError(f"certify takes a Mechanism or a SymmetricMechanism, got {type(mech).__name__}") from None


def structure_ok(problem: DesignProblem, mech: Candidate) -> bool:
    """Whether ``mech`` meets the problem's structure exactly (focal sets, don't-know, lying bound).

    The don't-know mass must equal ``dont_know`` as a float (or stay at most ``dont_know_max``), and each
    row's lie mass, summed in exact rational arithmetic, must be at most ``lie_max``.
    """
    return bool(form_of(mech).structure_ok(problem, mech))


def passes(mech: Candidate, eps: float, losses: tuple[Loss, ...]) -> bool:
    """Whether every loss in ``losses`` is at most ``eps``, decided exactly on the stored floats."""
    return bool(form_of(mech).passes(mech, eps, losses))


def float_loss(mech: Candidate, losses: tuple[Loss, ...]) -> float:
    """The largest of ``losses`` of ``mech``, in floats."""
    form = form_of(mech)
    return max(form.float_loss(mech, loss) for loss in losses)


def mix(a: Candidate, b: Candidate, t: float, *, dont_know: float | None = None) -> Candidate:
    """``(1 - t) a + t b`` on the union of their columns; a fixed don't-know mass stays exactly as it is.
    Both must have the same form."""
    form = form_of(a)
    if form_of(b) is not form:
        raise TypeError("mix takes two mechanisms of the same form")
    result: Candidate = form.mix(a, b, t, dont_know)
    return result


# ---------------------------------------------------------------------------- mixing weights
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
    refs: list[tuple[str, Candidate]] = form_of(mech).references(mech)
    return refs


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

    Examples
    --------
    >>> import designer
    >>> problem = designer.DesignProblem(inputs=("yes", "no"), epsilon=1.0, objective="truthful", dont_know=0.2)
    >>> from designer.optimal import certify
    >>> mechanism, certificate = certify(designer.Q_GWRR(1.0, 0.8), problem)
    >>> certificate.describe()
    '1-private (Shafer loss), checked exactly (rational arithmetic)'
    """
    eps, losses = problem.epsilon, problem.semantics.losses
    violation = float_loss(mech, losses) - eps
    dont_know = problem.dont_know

    def ok(candidate: Candidate) -> bool:
        return structure_ok(problem, candidate) and passes(candidate, eps, losses)

    if ok(mech):
        return mech, Certificate(epsilon=eps, losses=losses, violation=violation)
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
        return released, Certificate(epsilon=eps, losses=losses, repaired=True, mix_weight=t, reference=name,
                                    violation=violation)
    why = (f"every repair that restores it ({rejected}) costs more objective than allowed" if rejected
           else "no reference mechanism meets the budget and the structure")
    raise CertificationError(
        f"the solver's answer exceeds the budget or the structure (loss {violation:+.3g} nats against the "
        f"budget) and {why}; the mechanism is not released"
    )
