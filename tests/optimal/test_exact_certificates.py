"""Exact privacy decisions at every size: the compact (size-class) form and the filtered check of full
mechanisms, each against an independent computation in Fractions (brute force over events, or binomial
coefficients from ``math.comb``), at budgets placed on the boundary."""

from __future__ import annotations

import math
from collections.abc import Iterable
from fractions import Fraction

import numpy as np
import pytest

from designer import Mechanism
from designer._internal.exact import ratio_at_most_exp
from designer.optimal import DesignProblem, compact_exact, design
from designer.optimal.symmetric import SymmetricMechanism
from designer.privacy import _dense_exact, _filtered_exact
from designer.vocabulary import Loss

from ..conftest import exact_losses_within


def _random_compact(rng: np.random.Generator, k: int) -> SymmetricMechanism:
    a, b = np.zeros(k), np.zeros(k)
    a[0], b[0] = rng.uniform(0.2, 1.0), rng.uniform(0.2, 1.0)  # every singleton has mass: finite losses
    for s in rng.choice(np.arange(2, k + 1), size=min(2, k - 1), replace=False):
        a[s - 1] = rng.uniform(0, 1) * (rng.random() < 0.7)
        if s < k:
            b[s - 1] = rng.uniform(0, 1) * (rng.random() < 0.7)
    total = a.sum() + b.sum()
    return SymmetricMechanism(tuple(f"v{i}" for i in range(k)), a / total, b / total)


def _brute_walley_ratio(mech: SymmetricMechanism) -> Fraction | None:
    """Largest pl_0(E) / bel_1(E) over proper nonempty events, by enumeration (None: infinite)."""
    k = mech.k
    mass: dict[tuple[int, int], Fraction] = {}
    for x in (0, 1):
        for f in range(1, 1 << k):
            s = f.bit_count()
            inside = (f >> x) & 1
            total = Fraction(float(mech.A[s - 1])) if inside else Fraction(float(mech.B[s - 1]))
            mass[x, f] = total / math.comb(k - 1, s - 1 if inside else s) if (inside or s < k) else Fraction(0)
    return _largest_ratio((sum(mass[0, f] for f in range(1, 1 << k) if f & e),
                           sum(mass[1, f] for f in range(1, 1 << k) if not f & ~e)) for e in range(1, (1 << k) - 1))


def _largest_ratio(pairs: Iterable[tuple[Fraction, Fraction]]) -> Fraction | None:
    """Largest ``pl / bel`` (at least 1; ``0/0`` skipped), None when some ``bel = 0 < pl`` (infinite)."""
    best = Fraction(1)
    for pl, bel in pairs:
        if pl == 0:
            continue
        if bel == 0:
            return None
        best = max(best, pl / bel)
    return best


def _comb_walley_ratio(mech: SymmetricMechanism) -> Fraction | None:
    """The same maximum over the four kinds of events by size, with binomials from ``math.comb``."""
    k = mech.k
    a = [Fraction(float(v)) for v in mech.A]
    b = [Fraction(float(v)) for v in mech.B]
    total = sum(a) + sum(b)

    def bel_in(t: int) -> Fraction:  # events of size t holding the row's true answer
        return (sum(a[s - 1] * math.comb(t - 1, s - 1) / math.comb(k - 1, s - 1) for s in range(1, t + 1))
                + sum(b[s - 1] * math.comb(t - 1, s) / math.comb(k - 1, s) for s in range(1, min(t, k - 1) + 1)))

    def bel_out(t: int) -> Fraction:
        return sum((b[s - 1] * math.comb(t, s) / math.comb(k - 1, s) for s in range(1, min(t, k - 1) + 1)),
                   Fraction(0))

    pairs = []
    for t in range(1, k):
        pairs += [(total - bel_out(k - t), bel_out(t)), (total - bel_in(k - t), bel_in(t))]
        if t >= 2:
            pairs.append((total - bel_out(k - t), bel_in(t)))
        if t <= k - 2:
            pairs.append((total - bel_in(k - t), bel_out(t)))
    return _largest_ratio(pairs)


def _decide(ratio: Fraction | None, eps: float) -> bool:
    return ratio is not None and ratio_at_most_exp(ratio.numerator, ratio.denominator, eps)


def _boundary_budgets(value: float) -> list[float]:
    """On the loss, one float either side, 1e-12 relative either side, and across the float filter's band
    (``FILTER_BAND`` = 1e-9 in the ratio, that is in ``eps``): where a filter that is off by a little would
    claim a verdict its error bound does not allow."""
    band = [value + s * f * 1e-9 for f in (0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 5.0) for s in (-1, 1)]
    return [value, math.nextafter(value, 0.0), math.nextafter(value, math.inf), value * (1 - 1e-12),
            value * (1 + 1e-12), value * 0.9, *(b for b in band if b > 0)]


@pytest.mark.parametrize("seed", range(12))
def test_compact_walley_matches_enumeration_on_the_boundary(seed: int) -> None:
    rng = np.random.default_rng(seed)
    mech = _random_compact(rng, int(rng.integers(3, 7)))
    brute = _brute_walley_ratio(mech)
    assert brute == _comb_walley_ratio(mech)
    assert brute is not None
    for eps in _boundary_budgets(math.log(float(brute))):
        if eps > 0:
            assert compact_exact.walley_private(mech, eps) == _decide(brute, eps), eps


@pytest.mark.parametrize("k", [12, 40])
def test_compact_walley_matches_binomials_at_moderate_size(k: int) -> None:
    rng = np.random.default_rng(k)
    for _ in range(3):
        mech = _random_compact(rng, k)
        ratio = _comb_walley_ratio(mech)
        assert ratio is not None
        for eps in _boundary_budgets(math.log(float(ratio))):
            assert compact_exact.walley_private(mech, eps) == _decide(ratio, eps)


@pytest.mark.parametrize("k", [100, 1000])
def test_symmetric_wldp_designs_are_certified_exactly(k: int) -> None:
    problem = DesignProblem(objective="truthful",
                            inputs=tuple(f"v{i}" for i in range(k)), epsilon=1.0, semantics="wldp")
    result = design(problem)
    assert result.path.startswith("symmetric")
    compact = result.compact
    assert compact is not None
    counts: dict[str, int] = {}
    assert compact_exact.walley_private(compact, 1.0, counts=counts)
    assert counts["exact"] >= 1  # the binding sizes are decided on the integers
    # every (pl, bel) pair of sizes 1..k-1 is checked: in/out and out/in at every size, in/in from 2, out/out to k-2
    assert counts["sizes"] == 2 * (k - 1) + 2 * (k - 2)
    if k == 100:
        ratio = _comb_walley_ratio(compact)
        assert _decide(ratio, 1.0)
        assert not _decide(ratio, 1.0 - 1e-9)  # optimal: the budget binds
        assert not compact_exact.walley_private(compact, 1.0 - 1e-9)


def _random_mechanism(rng: np.random.Generator, k: int, l: int) -> Mechanism:
    sets = rng.choice(np.arange(1, 1 << l), size=min((1 << l) - 1, 3 * l), replace=False)
    m = rng.uniform(0.05, 1.0, size=(k, sets.size)) * (rng.random((k, sets.size)) < 0.8)
    singles = [1 << i for i in range(l)]
    m = np.hstack([m, np.full((k, l), 0.05)])  # every singleton: finite losses
    focal = list(sets) + [s for s in singles if s not in set(sets.tolist())]
    m = m[:, : len(focal)]
    return Mechanism(m / m.sum(axis=1, keepdims=True), focal=focal)


@pytest.mark.parametrize("seed", range(10))
def test_filtered_exact_check_matches_the_dense_integer_check(seed: int) -> None:
    from designer.privacy import worst_case

    rng = np.random.default_rng(100 + seed)
    mech = _random_mechanism(rng, int(rng.integers(2, 5)), int(rng.integers(3, 7)))
    for loss in (Loss.WALLEY, Loss.BEL, Loss.PL):
        value = worst_case(mech, loss).eps
        for eps in _boundary_budgets(value):
            if 0 < eps < 700:
                assert _filtered_exact(mech, eps, loss) == _dense_exact(mech, eps, loss), (loss, eps)


def test_large_general_designs_are_certified_exactly() -> None:
    # 13 x 2**13 cells: beyond the dense integer transform, decided by the filter and the integers.
    k = 13
    problem = DesignProblem(objective="truthful",
                            inputs=tuple(f"v{i}" for i in range(k)), epsilon=1.0, semantics="wldp",
                            prior=np.arange(1, k + 1) / (k * (k + 1) / 2))
    result = design(problem, path="general")
    assert result.mechanism is not None
    assert exact_losses_within(result.mechanism, 1.0, ["walley"])
    assert not exact_losses_within(result.mechanism, 1.0 - 1e-9, ["walley"])
    mech = result.mechanism
    assert _filtered_exact(mech, 1.0, Loss.WALLEY)
    assert not _filtered_exact(mech, 1.0 - 1e-9, Loss.WALLEY)


def test_brute_force_helper_is_not_vacuous() -> None:
    # k-RR: precise answers, so the Walley loss is the ratio of the two masses, e^eps (Def 3.13).
    k, e = 4, math.e
    q = 1 / (e + k - 1)
    a, b = np.zeros(k), np.zeros(k)
    a[0], b[0] = e * q, (k - 1) * q
    mech = SymmetricMechanism(tuple("abcd"), a, b)
    ratio = _brute_walley_ratio(mech)
    assert ratio is not None and ratio == Fraction(float(a[0])) / (Fraction(float(b[0])) / 3)
    assert math.isclose(math.log(float(ratio)), 1.0, rel_tol=1e-12)
    assert _comb_walley_ratio(mech) == ratio


def test_one_input_is_private_at_any_budget_and_unknown_belief_kinds_are_refused() -> None:
    from designer.optimal.symmetric import SymmetricMechanism

    alone = SymmetricMechanism(("only",), np.array([1.0]), np.array([0.0]))
    assert compact_exact.walley_private(alone, 1e-3) and compact_exact.shafer_private(alone, 1e-3)
    two = SymmetricMechanism(("a", "b"), np.array([0.6, 0.2]), np.array([0.2, 0.0]))
    beliefs = compact_exact._ExactBeliefs(two)
    from designer.optimal.symmetric import Belief

    with pytest.raises(ValueError, match="a belief"):
        beliefs.bel(Belief.PL_IN, 1)  # a plausibility is not computed as a belief
    with pytest.raises(ValueError, match="only a plausibility"):
        _ = Belief.BEL_IN.complement
    assert Belief.PL_IN.complement is Belief.BEL_OUT and Belief.PL_OUT.complement is Belief.BEL_IN
