"""Certified mechanisms: the composed certificate against the exact losses of the composed mechanism.

The losses are recomputed here by brute force in rational arithmetic (every event of the frame, every ordered pair
of inputs) on the masses the composed mechanism stores, independently of designer.privacy; the exact decisions of
``is_private(..., exact=True)`` check the float budgets the certificates state.
"""

from __future__ import annotations

import itertools
import json
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from designer import Q_GWRR, Mechanism, Q_kRR
from designer.certificate import Certificate, certificate_fields
from designer.exceptions import CertificationError, DesignerError, InvalidArgumentError, InvalidArgumentTypeError
from designer.guarantees.certified import (
    ROUNDING_ALLOWANCE,
    CertifiedMechanism,
    float_at_least,
    image_certificate,
    power_certificate,
    product_certificate,
)
from designer.privacy import eps_shafer, eps_walley, is_private
from designer.vocabulary import Loss

INF = math.inf


# ---------------------------------------------------------------- brute force in rationals

def _rows(mech: Mechanism) -> list[dict[int, Fraction]]:
    return [{int(b): Fraction(float(v)) for b, v in zip(mech.focal, row) if v > 0} for row in mech.matrix]


def _bel(row: dict[int, Fraction], event: int) -> Fraction:
    return sum((v for b, v in row.items() if b & ~event == 0), Fraction(0))


def _pl(row: dict[int, Fraction], event: int) -> Fraction:
    return sum((v for b, v in row.items() if b & event), Fraction(0))


def _ratio(a: Fraction, b: Fraction) -> Fraction | float | None:
    if a == 0:
        return None  # 0/0 says nothing; 0/b is below any ratio that counts
    return INF if b == 0 else a / b


def pair_ratios(mech: Mechanism, loss: Loss) -> dict[tuple[int, int], Fraction | float]:
    """The largest ratio of each ordered pair of inputs (``e`` to the pair's loss), by brute force."""
    rows = _rows(mech)
    full = (1 << mech.l) - 1
    out: dict[tuple[int, int], Fraction | float] = {}
    for x in range(mech.k):
        for x2 in range(mech.k):
            if x == x2:
                continue
            best: Fraction | float = Fraction(1)  # a ratio of 1 at least: loss 0 when no event tells x from x2
            if loss is Loss.SHAFER:
                events = set(rows[x]) | set(rows[x2])
                values = [_ratio(rows[x].get(e, Fraction(0)), rows[x2].get(e, Fraction(0))) for e in events]
            else:
                values = [_ratio(_pl(rows[x], e), _bel(rows[x2], e)) for e in range(1, full)]
            for v in values:
                if v is not None and v > best:
                    best = v
            out[(x, x2)] = best
    return out


def exact_ratio(mech: Mechanism, loss: Loss) -> Fraction | float:
    """``e`` to the loss, exactly: the largest ratio over ordered pairs (1 with one input or no proper event)."""
    ratios = pair_ratios(mech, loss)
    return max(ratios.values(), default=Fraction(1))


def tight(mech: Mechanism, loss: Loss) -> float:
    """The smallest float budget the mechanism meets, decided exactly."""
    d = max(math.log(float(exact_ratio(mech, loss))), 1e-300)
    while not is_private(mech, d, semantics=loss, exact=True):
        d = math.nextafter(d, INF)
    while d > 1e-300 and is_private(mech, math.nextafter(d, 0.0), semantics=loss, exact=True):
        d = math.nextafter(d, 0.0)
    return d


# ---------------------------------------------------------------- random mechanisms with positive masses

@st.composite
def mechanisms(draw: st.DrawFn, inputs: tuple[str, ...] = ("a", "b", "c"), prefix: str = "y") -> Mechanism:
    k = draw(st.integers(2, len(inputs)))
    l = draw(st.integers(1, 3))
    subsets = list(range(1, 1 << l))
    focal = draw(st.lists(st.sampled_from(subsets), min_size=1, max_size=min(4, len(subsets)), unique=True))
    # counts over a power of two: the masses, and the products of two of them, are exact doubles
    rows = []
    for _ in range(k):
        cuts = sorted(draw(st.lists(st.integers(1, 15), min_size=len(focal) - 1, max_size=len(focal) - 1,
                                    unique=True)))
        edges = [0, *cuts, 16]
        rows.append([(b - a) / 16 for a, b in itertools.pairwise(edges)])
    return Mechanism(np.array(rows), inputs=list(inputs[:k]), frame=[f"{prefix}{i}" for i in range(l)], focal=focal)


def certified(mech: Mechanism, loss: Loss) -> CertifiedMechanism:
    """``mech`` certified at its smallest float budget for ``loss``."""
    semantics = "sldp" if loss is Loss.SHAFER else "wldp"
    return CertifiedMechanism.certify(mech, tight(mech, loss), semantics=semantics)


LOSSES = [Loss.SHAFER, Loss.WALLEY]
# the strategies draw unique cut points and the tests assume finite, non-trivial losses: many draws are filtered
FAST = settings(max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def _finite(mech: Mechanism, loss: Loss) -> bool:
    return math.isfinite(float(exact_ratio(mech, loss)))


# ---------------------------------------------------------------- product (Lemma 3.3, Lemma 3.15)

@FAST
@given(mechanisms(), mechanisms(prefix="z"), st.sampled_from(LOSSES))
def test_product_certificate_bounds_the_exact_loss(m1: Mechanism, m2: Mechanism, loss: Loss) -> None:
    assume(m1.k == m2.k and _finite(m1, loss) and _finite(m2, loss))
    q1, q2 = certified(m1, loss), certified(m2, loss)
    q = q1.product(q2)
    assert q.budget == Fraction(q1.epsilon) + Fraction(q2.epsilon)
    assert q.losses == (loss,)
    # the stored product meets the stated float budget, decided exactly
    assert is_private(q.mechanism, q.epsilon, semantics=loss, exact=True)
    # the lemma in ratios: the product's pair ratio is at most the product of the parts' ratios
    r1, r2, r = pair_ratios(m1, loss), pair_ratios(m2, loss), pair_ratios(q.mechanism, loss)
    assert exact_ratio(q.mechanism, loss) <= exact_ratio(m1, loss) * exact_ratio(m2, loss)
    for pair, value in r.items():
        assert value <= r1[pair] * r2[pair]
        if loss is Loss.SHAFER:  # masses of rectangles multiply: each pair's ratio is the product, exactly
            assert value == r1[pair] * r2[pair]
        else:  # rectangles of proper events give at least the product
            assert value >= r1[pair] * r2[pair]


@FAST
@given(mechanisms(), st.sampled_from(LOSSES), st.integers(2, 3))
def test_power_is_tight(m: Mechanism, loss: Loss, n: int) -> None:
    """One pair attains every factor's loss: the n-fold product's loss is n times the part's, and the certificate
    states it to within the float allowance (a budget a few ulps below it fails)."""
    assume(_finite(m, loss) and exact_ratio(m, loss) > 1)
    # the Walley loss of the product runs over its frame's subsets: keep the frame of the power small
    assume(len(m.focal) ** n * m.k <= 600 and m.l ** n <= 9)
    q1 = certified(m, loss)
    q = q1.power(n)
    assert q.budget == n * Fraction(q1.epsilon)
    assert exact_ratio(q.mechanism, loss) == exact_ratio(m, loss) ** n
    assert is_private(q.mechanism, q.epsilon, semantics=loss, exact=True)
    # each part's budget exceeds its loss by under one ulp, so n + 1 ulps below the exact bound fails
    bound = float(q.budget)
    assert not is_private(q.mechanism, bound - (n + 1) * math.ulp(bound), semantics=loss, exact=True)
    # the float budget is the exact bound plus at most the allowance of its n - 1 roundings (and one ulp)
    assert Fraction(q.epsilon) - q.budget <= (n - 1) * ROUNDING_ALLOWANCE + Fraction(math.ulp(q.epsilon))


def test_product_of_a_pair_attaining_both_losses_is_tight() -> None:
    q1 = CertifiedMechanism.certify(Q_kRR(0.5, ["a", "b", "c"]), 0.5)
    q2 = CertifiedMechanism.certify(Q_kRR(0.75, ["a", "b", "c"]), 0.75)
    q = q1.product(q2)
    assert q.budget == Fraction(5, 4)
    assert eps_shafer(q.mechanism) == pytest.approx(1.25, abs=1e-12)
    assert is_private(q.mechanism, q.epsilon, exact=True)
    assert not is_private(q.mechanism, 1.25 - 1e-12, exact=True)


def test_product_where_the_pairs_differ_is_strict() -> None:
    """Two randomized responses leaning opposite ways: the worst pair of one is the best of the other, so the
    product's loss is below the sum of the budgets (the bound holds, it is not attained)."""
    m1 = Mechanism(np.array([[0.75, 0.25], [0.5, 0.5]]), inputs=["a", "b"], frame=["y", "n"], focal=[1, 2])
    m2 = Mechanism(np.array([[0.5, 0.5], [0.75, 0.25]]), inputs=["a", "b"], frame=["u", "v"], focal=[1, 2])
    q = certified(m1, Loss.SHAFER).product(certified(m2, Loss.SHAFER))
    assert exact_ratio(q.mechanism, Loss.SHAFER) == 3  # ln 3 < 2 ln 2: each pair's 1.5 meets the other's 2
    assert exact_ratio(m1, Loss.SHAFER) * exact_ratio(m2, Loss.SHAFER) == 4
    assert is_private(q.mechanism, q.epsilon, exact=True)
    assert eps_shafer(q.mechanism) < q.epsilon - 0.25


# ---------------------------------------------------------------- image (Lemma 3.4, Lemma 3.16)

@FAST
@given(mechanisms(), st.sampled_from(LOSSES), st.data())
def test_image_keeps_the_budget(m: Mechanism, loss: Loss, data: st.DataObject) -> None:
    assume(_finite(m, loss))
    q1 = certified(m, loss)
    f = {y: data.draw(st.sampled_from(["p", "q"])) for y in m.frame}
    q = q1.image(f)
    assert q.budget == Fraction(q1.epsilon) and q.losses == (loss,)
    assert exact_ratio(q.mechanism, loss) <= exact_ratio(m, loss)
    assert is_private(q.mechanism, q.epsilon, semantics=loss, exact=True)


@FAST
@given(mechanisms(), st.sampled_from(LOSSES))
def test_image_by_a_relabelling_is_tight(m: Mechanism, loss: Loss) -> None:
    assume(_finite(m, loss))
    q1 = certified(m, loss)
    q = q1.image({y: f"new {y}" for y in m.frame})
    assert exact_ratio(q.mechanism, loss) == exact_ratio(m, loss)
    assert q.epsilon == q1.epsilon  # no mass was merged: no rounding to allow for


# ---------------------------------------------------------------- semantics and the certificate's record

def test_semantics_compose_loss_by_loss() -> None:
    m = Q_GWRR(1.0, 0.8)
    both = CertifiedMechanism.certify(m, 2.0, semantics="both")
    shafer = CertifiedMechanism.certify(m, 1.0, semantics="sldp")
    walley = CertifiedMechanism.certify(m, 2.0, semantics="wldp")
    assert both.product(both).semantics.value == "both"
    assert both.product(shafer).losses == (Loss.SHAFER,)
    assert both.product(walley).losses == (Loss.WALLEY,)
    with pytest.raises(CertificationError, match="no loss in common"):
        shafer.product(walley)


def test_rational_budgets_add_exactly() -> None:
    m = Q_kRR(1.0, ["a", "b"])
    q = CertifiedMechanism.certify(m, "11/10")
    assert q.budget == Fraction(11, 10) and q.certificate.budget == Fraction(11, 10)
    assert q.epsilon == float_at_least(Fraction(11, 10)) and Fraction(q.epsilon) >= Fraction(11, 10)
    assert q.power(3).budget == Fraction(33, 10)
    assert q.product(q).budget == Fraction(11, 5)


def test_certify_refuses_the_smallest_violation() -> None:
    m = Q_kRR(1.0, ["a", "b", "c"])
    d = tight(m, Loss.SHAFER)
    CertifiedMechanism.certify(m, d)
    with pytest.raises(CertificationError, match="shafer loss"):
        CertifiedMechanism.certify(m, math.nextafter(d, 0.0))


def test_float_at_least() -> None:
    for value in (Fraction(1, 3), Fraction(3, 10), Fraction(2), Fraction(1, 10**30)):
        f = float_at_least(value)
        assert Fraction(f) >= value and Fraction(math.nextafter(f, 0.0)) < value


def test_composed_record() -> None:
    q = CertifiedMechanism.certify(Q_kRR(0.5, ["a", "b"]), 0.5)
    fields = certificate_fields(q.power(2).certificate)
    detail = json.loads(json.dumps(fields))["certificate_detail"]
    assert detail["composition"]["budget_exact"] == "1"
    assert detail["composition"]["rule"].startswith("the 2-fold product")
    assert detail["composition"]["parts"][0]["summary"].startswith("0.5-private (Shafer loss)")
    assert "composition" not in certificate_fields(q.certificate)["certificate_detail"]
    assert "by the 2-fold product" in q.power(2).certificate.describe()


def test_certificate_functions_compose_without_mechanisms() -> None:
    a = Certificate(epsilon=0.1, losses=(Loss.SHAFER,), budget=Fraction(1, 10))
    b = Certificate(epsilon=0.2, losses=(Loss.SHAFER,), budget=Fraction(1, 5))
    c = product_certificate(a, b)
    assert c.exact_budget == Fraction(3, 10) and Fraction(c.epsilon) >= Fraction(3, 10)
    assert Fraction(c.epsilon) >= Fraction(0.1) + Fraction(0.2)  # the floats the parts were checked at
    assert power_certificate(a, 4).exact_budget == Fraction(2, 5)
    assert image_certificate(b).exact_budget == Fraction(1, 5)


def test_design_result_is_certified() -> None:
    from designer import DesignProblem, design

    result = design(DesignProblem(objective="truthful", inputs=("a", "b", "c"), epsilon=1.0))
    q = CertifiedMechanism.of(result)
    assert q.certificate is result.certificate and CertifiedMechanism.of(q) is q
    assert is_private(q.power(2).mechanism, q.power(2).epsilon, exact=True)


@pytest.mark.parametrize("call, error", [
    (lambda: CertifiedMechanism.certify("m.csv", 1.0), InvalidArgumentTypeError),
    (lambda: CertifiedMechanism.certify(Q_kRR(1.0, 2), 0), InvalidArgumentError),
    (lambda: CertifiedMechanism.certify(Q_kRR(1.0, 2), float("nan")), InvalidArgumentError),
    (lambda: CertifiedMechanism.certify(Q_kRR(1.0, 2), 1.0, semantics="shafer-ish"), InvalidArgumentError),
    (lambda: CertifiedMechanism.of(Q_kRR(1.0, 2)), InvalidArgumentTypeError),
    (lambda: CertifiedMechanism.certify(Q_kRR(1.0, 2), 1.0).product(Q_kRR(1.0, 2)), InvalidArgumentTypeError),
    (lambda: CertifiedMechanism.certify(Q_kRR(1.0, 2), 1.0).power(0), InvalidArgumentError),
])
def test_bad_inputs_one_line(call, error) -> None:
    with pytest.raises(error) as info:
        call()
    assert "\n" not in str(info.value)


def test_walley_of_power_matches_privacy_module() -> None:
    q = CertifiedMechanism.certify(Q_GWRR(1.0, 0.8), 2.0, semantics="both")
    p = q.power(2)
    assert eps_walley(p.mechanism) <= p.epsilon and eps_shafer(p.mechanism) <= p.epsilon


def test_a_composed_mechanism_written_with_its_certificate_passes_the_check_on_reading(tmp_path) -> None:
    """The composed float budget covers the stored floats: the file's release is re-checked exactly on reading,
    and a budget one ulp-scale step below the bound is refused."""
    from designer.release.files import open_mechanism_file, release_block

    m = Mechanism(np.array([[0.6, 0.3, 0.1], [0.2, 0.3, 0.5]]), inputs=["a", "b"], frame=["y", "n"],
                  focal=[1, 2, 3])
    q = certified(m, Loss.SHAFER).power(3)
    for name, eps, ok in (("ok.json", q.epsilon, True), ("low.json", float(q.budget) * (1 - 1e-12), False)):
        obj = q.mechanism.to_json_dict()
        obj["release"] = release_block(eps, q.semantics, certificate_fields(q.certificate))
        (tmp_path / name).write_text(json.dumps(obj))
        if ok:
            assert open_mechanism_file(tmp_path / name).release.epsilon == q.epsilon
        else:
            with pytest.raises(DesignerError, match="changed after designer certified them"):
                open_mechanism_file(tmp_path / name)
