"""The guarantees' arithmetic and refusals, each test stating the property it protects (written for the mutants
that survived the mutation suite: docs/mutation.md, benchmarks/mutation/report.md).

Expected values are worked out here with Fractions and ``math.nextafter``, not read off designer.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from designer import Q_WRR, Mechanism, Q_kRR
from designer.certificate import Certificate
from designer.constructors import Q_2x3
from designer.exceptions import CertificationError, InvalidArgumentError, InvalidArgumentTypeError
from designer.guarantees.certified import (
    ROUNDING_ALLOWANCE,
    CertifiedMechanism,
    image_certificate,
    power_certificate,
    product_certificate,
)
from designer.vocabulary import Loss

ULP_2 = Fraction(math.ulp(2.0))  # 2**-51: one rounding's allowance is one unit in the last place at 2


def _cert(eps: float, *losses: Loss) -> Certificate:
    return Certificate(epsilon=eps, losses=losses or (Loss.SHAFER,))


def _up(value: Fraction) -> float:
    """The smallest double at or above ``value``, by stepping (independent of float_at_least)."""
    x = float(value)
    while Fraction(x) < value:
        x = math.nextafter(x, math.inf)
    while Fraction(math.nextafter(x, -math.inf)) >= value:
        x = math.nextafter(x, -math.inf)
    return x


# ---------------------------------------------------------------- composed budgets: no rounding unless stated


def test_product_of_certificates_adds_no_rounding_by_default() -> None:
    """Independent draws from each part's exact table (a release's variables) round nothing: the composed float
    budget is the exact sum, 1 + 1 = 2.0, not the double above it."""
    c = product_certificate(_cert(1.0), _cert(1.0))
    assert c.exact_budget == 2 and c.epsilon == 2.0
    assert product_certificate(_cert(0.5), _cert(0.25), roundings=0).epsilon == 0.75


def test_product_and_power_allowances_are_one_ulp_per_rounding() -> None:
    """Each rounding adds 2**-51 nats to the float budget (the product of stored masses is rounded once): at a
    budget of 2 that is one unit in the last place, so 1, 2 and 3 roundings give 2 + 1, 2, 3 ulps."""
    for r in (1, 2, 3):
        assert product_certificate(_cert(1.0), _cert(1.0), roundings=r).epsilon == float(2 + r * ULP_2)
    assert ROUNDING_ALLOWANCE == ULP_2
    # a certified product stores one rounding of each mass
    q = CertifiedMechanism.certify(Q_WRR(1.0), 1.0)
    assert q.product(q).epsilon == float(2 + ULP_2) and q.product(q).budget == 2
    # a power of n rounds n - 1 times unless told otherwise
    c = _cert(1.0)
    assert power_certificate(c, 2).epsilon == float(2 + ULP_2)
    assert power_certificate(c, 3).epsilon == _up(3 + 2 * ULP_2)
    assert power_certificate(c, 3, roundings=0).epsilon == 3.0
    assert power_certificate(c, 2, roundings=3).epsilon == float(2 + 3 * ULP_2)


def test_power_of_one_is_the_part() -> None:
    """n = 1 is one answer: the part's budget and losses, nothing added."""
    c = _cert(0.75, Loss.SHAFER, Loss.WALLEY)
    one = power_certificate(c, 1)
    assert one.epsilon == 0.75 and one.exact_budget == Fraction(3, 4) and one.losses == (Loss.SHAFER, Loss.WALLEY)


@pytest.mark.parametrize("n", [0, -1, True, 2.0, "2", None])
def test_power_refuses_a_count_that_is_not_a_whole_number_from_one(n) -> None:
    with pytest.raises(InvalidArgumentError, match=r"^n must be a whole number >= 1, got "):
        power_certificate(_cert(1.0), n)


def test_image_keeps_the_budget_exactly_unless_answers_merge() -> None:
    """Post-processing by a relabelling rounds nothing (the part's float budget itself); merging answers adds one
    allowance per addition in the largest merged mass."""
    c = _cert(1.0, Loss.SHAFER, Loss.BEL)
    assert image_certificate(c).epsilon == 1.0 and image_certificate(c).losses == (Loss.SHAFER, Loss.BEL)
    assert image_certificate(c, roundings=2).epsilon == _up(1 + 2 * ULP_2)
    q = CertifiedMechanism.certify(Q_kRR(1.0, ["a", "b", "c"]), 1.0)
    same = q.image({"a": "x", "b": "y", "c": "z"})
    assert same.epsilon == q.epsilon
    merged = q.image({"a": "x", "b": "x", "c": "z"})  # {a} and {b} merge: one addition
    assert merged.epsilon == _up(Fraction(q.epsilon) + ULP_2) and merged.budget == q.budget


def test_image_follows_the_frame_it_is_given() -> None:
    q = CertifiedMechanism.certify(Q_kRR(1.0, ["a", "b", "c"]), 1.0)
    image = q.image({"a": "x", "b": "y", "c": "y"}, frame=["y", "x"])
    assert list(image.mechanism.frame) == ["y", "x"]


def test_the_composed_certificate_names_its_rule_and_arithmetic() -> None:
    """A composed certificate states the lemma it rests on and how its budget was computed (the manifest shows
    them)."""
    c = _cert(1.0)
    product = product_certificate(c, c)
    assert (product.rule, product.arithmetic) == ("the product (Lemma 3.3, Lemma 3.15)",
                                                  "exact sum of the parts' budgets")
    power = power_certificate(c, 3)
    assert (power.rule, power.arithmetic) == ("the 3-fold product (Lemma 3.3, Lemma 3.15)",
                                              "exact product of 3 and the part's budget")
    image = image_certificate(c)
    assert (image.rule, image.arithmetic) == ("post-processing (Lemma 3.4, Lemma 3.16)",
                                              "the part's budget, unchanged")


def test_products_keep_only_the_losses_the_lemmas_bound() -> None:
    """Lemma 3.3 and Lemma 3.15 bound the Shafer and Walley losses of a product, not the belief or plausibility
    losses: a part certified for Shafer and bel composes to Shafer alone, and parts that share only bel compose
    to nothing (refused)."""
    both = _cert(1.0, Loss.SHAFER, Loss.BEL)
    assert product_certificate(both, both).losses == (Loss.SHAFER,)
    assert power_certificate(both, 2).losses == (Loss.SHAFER,)
    bel = _cert(1.0, Loss.BEL)
    with pytest.raises(CertificationError, match="no loss in common"):
        product_certificate(bel, bel)
    with pytest.raises(CertificationError, match="no loss in common"):
        power_certificate(bel, 2)


# ---------------------------------------------------------------- refusals, in words


@pytest.mark.parametrize("args", [(), ("x",), (_cert(1.0), "x"), ("x", _cert(1.0))])
def test_product_certificate_refuses_anything_but_certificates(args) -> None:
    with pytest.raises(InvalidArgumentTypeError, match=r"^product_certificate\(\) takes one or more Certificate "
                                                       r"objects$"):
        product_certificate(*args)


def test_power_and_image_refuse_a_non_certificate_naming_its_type() -> None:
    with pytest.raises(InvalidArgumentTypeError, match=r"^power_certificate\(\) takes a Certificate, got str$"):
        power_certificate("x", 2)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentTypeError, match=r"^image_certificate\(\) takes a Certificate, got int$"):
        image_certificate(3)  # type: ignore[arg-type]


class _Half:
    """A design result with a mechanism but no certificate."""

    mechanism = Q_WRR(1.0)
    certificate = None


def test_of_refuses_an_object_without_both_a_mechanism_and_a_certificate() -> None:
    for released in (_Half(), object()):
        with pytest.raises(InvalidArgumentTypeError, match=rf"^expected a design result or a CertifiedMechanism, got "
                                                           rf"{type(released).__name__} \(certify a Mechanism with "
                                                           r"CertifiedMechanism.certify\)$"):
            CertifiedMechanism.of(released)


def test_composing_refuses_an_uncertified_mechanism_in_words() -> None:
    q = CertifiedMechanism.certify(Q_WRR(1.0), 1.0)
    with pytest.raises(InvalidArgumentTypeError, match=r"^product\(\) composes certified mechanisms, got Mechanism "
                                                       r"\(certify a Mechanism with CertifiedMechanism.certify\)$"):
        q.product(Q_WRR(1.0))  # type: ignore[arg-type]


def test_a_certified_mechanism_is_within_its_stated_budget_exactly() -> None:
    """The certificate's float budget never understates the composed mechanism's loss (the reason for the
    allowances above), decided exactly on the stored floats."""
    from designer.privacy import is_private

    m = Mechanism(np.array([[0.7, 0.3], [0.2, 0.8]]), inputs=["a", "b"], frame=["y", "n"], focal=[1, 2])
    q = CertifiedMechanism.certify(m, math.log(0.8 / 0.2) * (1 + 1e-12))
    for composed in (q.product(q), q.power(3), q.image({"y": "u", "n": "v"})):
        assert is_private(composed.mechanism, composed.epsilon, exact=True)


# ---------------------------------------------------------------- certify: every loss, decided on the right side


def _smallest_private(mech: Mechanism, loss: str = "sldp") -> float:
    """The least double budget ``mech`` meets, decided exactly, found by stepping (is_private's exact check)."""
    from designer.privacy import is_private, worst_case

    d = worst_case(mech, "shafer" if loss == "sldp" else "walley").eps
    while not is_private(mech, d, semantics=loss, exact=True):
        d = math.nextafter(d, math.inf)
    while is_private(mech, math.nextafter(d, 0.0), semantics=loss, exact=True):
        d = math.nextafter(d, 0.0)
    return d


def test_both_semantics_check_the_walley_loss_after_the_shafer_one() -> None:
    """GWRR meets its Shafer budget with equality but not its Walley one (Cor 3.12): certified for both, it is
    refused, and the message gives the Walley loss (1.29414 for Q_GWRR(1, 0.8)), not the Shafer one."""
    from designer import Q_GWRR

    m = Q_GWRR(1.0, 0.8)
    assert CertifiedMechanism.certify(m, 1.0).losses == (Loss.SHAFER,)
    for semantics in ("both", "wldp"):
        with pytest.raises(CertificationError, match=r"^the walley loss is 1\.29414 > epsilon = 1: the mechanism is "
                                                     r"not private within that budget$"):
            CertifiedMechanism.certify(m, 1.0, semantics=semantics)


@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_a_rational_budget_one_float_from_the_loss_is_not_certified(eps: float) -> None:
    """A budget given as a rational is met only if the float just below it is met: a budget a hair (1e-40) below
    the least double the mechanism meets lies between that double and the one below, where the floats cannot
    decide, and is refused in those words, below 1 nat and above it."""
    m = Q_WRR(eps)
    d = _smallest_private(m)
    with pytest.raises(CertificationError, match="within one float of the budget"):
        CertifiedMechanism.certify(m, Fraction(d) - Fraction(1, 10**40))
    stated = Fraction(d) + Fraction(1, 10**40)  # a hair above: met at the double below it, which is d
    q = CertifiedMechanism.certify(m, stated)
    assert q.budget == stated and q.epsilon == math.nextafter(d, math.inf)
    assert CertifiedMechanism.certify(m, d).budget == Fraction(d)


@pytest.mark.parametrize("budget", [0, -1, True, "nan", "inf", None, Fraction(1, 10**400), Fraction(10**400), "1e400",
                                    "x"])
def test_certify_refuses_a_budget_no_double_can_state(budget) -> None:
    """A budget must be a finite number > 0 with a positive double at or below it: zero, negatives, bools, NaN,
    infinity, 1e-400 (no double between 0 and it) and 1e400 (above the largest double) are refused by name."""
    with pytest.raises(InvalidArgumentError, match=r"^epsilon must be a finite number > 0, got "):
        CertifiedMechanism.certify(Q_WRR(1.0), budget)


def test_certify_refuses_bad_arguments_in_words() -> None:
    with pytest.raises(InvalidArgumentTypeError, match=r"^certify\(\) takes a Mechanism, got str$"):
        CertifiedMechanism.certify("x", 1.0)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match=r"^semantics must be one of 'sldp', 'wldp', 'both', got 'nope'$"):
        CertifiedMechanism.certify(Q_WRR(1.0), 1.0, semantics="nope")


def test_parts_with_no_loss_in_common_are_refused_naming_each_parts_losses() -> None:
    message = (r"^the parts certify no loss in common that the composition lemmas bound \({}\): certify every part "
               r"for the same semantics \(sldp, wldp or both\)$")
    with pytest.raises(CertificationError, match=message.format("none; shafer")):
        product_certificate(Certificate(epsilon=1.0, losses=()), _cert(1.0))
    with pytest.raises(CertificationError, match=message.format("shafer and bel; walley")):
        product_certificate(_cert(1.0, Loss.SHAFER, Loss.BEL), _cert(1.0, Loss.WALLEY))


def test_float_at_least_never_understates_even_beyond_the_doubles() -> None:
    from designer.guarantees.certified import float_at_least

    assert float_at_least(Fraction(10**400)) == math.inf
    assert float_at_least(-Fraction(10**400)) == -1.7976931348623157e308
    for value in (Fraction(1, 10), Fraction(1, 3), Fraction(2), Fraction(1, 10**400), Fraction(-1, 3)):
        out = float_at_least(value)
        assert Fraction(out) >= value and Fraction(math.nextafter(out, -math.inf)) < value


def test_a_float_budget_is_its_own_exact_budget() -> None:
    """Certified at a double, the certificate records no separate rational (``budget`` None: the double itself), so
    it equals the plain certificate of that budget; a rational budget is kept as written."""
    q = CertifiedMechanism.certify(Q_WRR(1.0), 1.0)
    assert q.certificate.budget is None and q.certificate == Certificate(epsilon=1.0, losses=(Loss.SHAFER,))
    assert CertifiedMechanism.certify(Q_WRR(1.0), "4/3").certificate.budget == Fraction(4, 3)


def test_negative_roundings_and_bad_pairs_are_refused_in_words() -> None:
    with pytest.raises(InvalidArgumentError, match=r"^roundings must be >= 0, got -1$"):
        power_certificate(_cert(1.0), 2, roundings=-1)
    with pytest.raises(InvalidArgumentTypeError, match=r"^mechanism must be a Mechanism, got str$"):
        CertifiedMechanism("x", _cert(1.0))  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentTypeError, match=r"^certificate must be a Certificate, got float$"):
        CertifiedMechanism(Q_WRR(1.0), 1.0)  # type: ignore[arg-type]


# ---------------------------------------------------------------- noise: budgets read as written, the noise's scale

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from designer.guarantees import noise  # noqa: E402


def _simplest_by_search(x: float) -> Fraction | None:
    """The fraction of least denominator strictly between the midpoints around the double ``x`` (up to 700)."""
    exact = Fraction(x)
    lo = (exact + Fraction(math.nextafter(x, 0.0))) / 2
    hi = (exact + Fraction(math.nextafter(x, math.inf))) / 2
    for q in range(1, 701):
        p = math.floor(lo * q) + 1
        if Fraction(p, q) < hi:
            return Fraction(p, q)
    return None


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 10**7), st.integers(1, 600), st.integers(-2, 2))
def test_simplest_fraction_is_the_least_denominator_inside_the_rounding_interval(p: int, q: int, step: int) -> None:
    """Against a search over denominators: the double nearest p/q (and its neighbours, whose simplest fractions
    are far less simple) reads back as the simplest fraction strictly inside its rounding interval."""
    x = float(Fraction(p, q))
    for _ in range(abs(step)):
        x = math.nextafter(x, math.inf if step > 0 else 0.0)
    expected = _simplest_by_search(x)
    if expected is not None:
        assert noise.simplest_fraction(x) == expected
    got = noise.simplest_fraction(x)
    assert float(got) == x or Fraction(x) != got  # inside the interval: rounds to x (ties aside)


@pytest.mark.parametrize("x, expected", [(7 / 3, Fraction(7, 3)), (0.1, Fraction(1, 10)), (2.0**53 + 2, 2**53 + 2),
                                         (1e300, None), (5e-324, None), (0.5, Fraction(1, 2)), (1 / 999_983, None)])
def test_simplest_fraction_on_hand_worked_doubles(x: float, expected: Fraction | None) -> None:
    got = noise.simplest_fraction(x)
    if expected is not None:
        assert got == expected
    exact = Fraction(x)
    assert (exact + Fraction(math.nextafter(x, 0.0))) / 2 < got < (exact + Fraction(math.nextafter(x, math.inf))) / 2


def test_the_largest_double_reads_back_as_itself() -> None:
    """Its rounding interval reaches half a unit above it (no finite double lies there): no overflow; the simplest
    fraction inside is the least integer above the interval's lower end, which rounds to it, and is accepted as the
    largest budget."""
    top = 1.7976931348623157e308
    lo = (Fraction(top) + Fraction(math.nextafter(top, 0.0))) / 2
    assert noise.simplest_fraction(top) == math.floor(lo) + 1 == noise.stated_budget(top)
    assert float(noise.stated_budget(top)) == top


@pytest.mark.parametrize("value, expected", [
    ("0.1", Fraction(1, 10)), (" 7/3 ", Fraction(7, 3)), ("1e-300", Fraction(1, 10**300)), (0.1, Fraction(1, 10)),
    (7 / 3, Fraction(7, 3)), (math.pi, Fraction("3.141592653589793")), (2, Fraction(2)),
    (Fraction(5, 7), Fraction(5, 7)),
    ("1.7976931348623157e308", Fraction("1.7976931348623157e308")), ("0.5/2", Fraction(1, 4)),
    (Fraction(1.7976931348623157e308), Fraction(1.7976931348623157e308)),
])
def test_stated_budget_reads_the_rational_as_written(value, expected) -> None:
    """Strings as written, a double as its simplest fraction when that has a denominator of at most a million
    (7/3), else as its shortest decimal (pi), and both ends of the accepted range included."""
    assert noise.stated_budget(value) == expected


@pytest.mark.parametrize("value, message", [
    ("0", "a budget must be > 0, got '0'"), ("1/0", "a budget its denominator must not be 0, got '1/0'"),
    ("1e-301", "a budget must be between 1e-300 and 1.798e+308 nats, got '1e-301'"),
    ("1/1e-301", "a budget must be between 1e-300 and 1.798e+308 nats, got '1/1e-301'"),
    ("1e400", "a budget must be between 1e-300 and 1.798e+308 nats, got '1e400'"),
    ("nan", "a budget must be between 1e-300 and 1.798e+308 nats, got 'nan'"),
    (0.0, "a budget must be > 0, got 0.0"), (-1.0, "a budget must be > 0, got -1.0"),
    (math.inf, "a budget must be finite, got inf"), (-math.inf, "a budget must be finite, got -inf"),
    (math.nan, "a budget must be finite, got nan"), (0, "a budget must be > 0, got 0"),
    (Fraction(-1, 2), "a budget must be > 0, got Fraction(-1, 2)"), (None, "a budget must be a number, got NoneType"),
    ([1], "a budget must be a number, got list"),
    (Fraction(1, 10**301), "a budget must be between 1e-300 and 1.798e+308 nats, got 1e-301"),
    (Fraction(10**400), "a budget must be between 1e-300 and 1.798e+308 nats, got Fraction(1"),
])
def test_stated_budget_refuses_in_words(value, message) -> None:
    with pytest.raises(InvalidArgumentError) as info:
        noise.stated_budget(value)
    assert str(info.value).startswith(message)


@pytest.mark.parametrize("eps", [0.001, 0.5, 1.0, 3.0, 60.0, 1400.0, 1410.0])
def test_mean_noise_is_the_mean_size_of_the_discrete_laplace_noise(eps: float) -> None:
    """E|Z| = 2a / (1 - a^2) with a = exp(-eps / 2) (P(z) proportional to a^|z|), summed here as a series."""
    a = math.exp(-eps / 2)
    expected = 2 * a / (1 - a * a) if a > 0 else 0.0
    if 0 < a < 1e-150:
        expected = 2 * a
    assert noise.mean_noise(Fraction(eps)) == pytest.approx(expected, rel=1e-12, abs=0.0)
    if eps < 10:  # the series itself, to its last visible term
        series = 2 * sum(z * a**z for z in range(1, 200_000)) / (1 + 2 * sum(a**z for z in range(1, 200_000)))
        assert noise.mean_noise(Fraction(eps)) == pytest.approx(series, rel=1e-9)


def test_mean_noise_is_infinite_only_below_the_least_budget() -> None:
    assert noise.mean_noise(Fraction(2e-300)) == pytest.approx(1e300, rel=1e-12)  # eps / 2 exactly 1e-300
    assert noise.mean_noise(Fraction(1, 10**301)) == math.inf


@pytest.mark.parametrize("eps", [Fraction(1, 5), Fraction(4)])
def test_noisy_counts_have_scale_two_over_epsilon(eps: Fraction) -> None:
    """The noise on each count has mean size 1 / sinh(eps / 2) (about 10 at eps = 0.2, 0.28 at eps = 4): the scale
    is 2 / eps, whatever eps is (a scale of 2 eps would give the same only at eps = 1)."""
    draws = noise.noisy_counts([0] * 4000, eps, noise.seeded_source(3))
    mean = sum(abs(d) for d in draws) / len(draws)
    expected = 1 / math.sinh(float(eps) / 2)
    assert abs(mean - expected) < 6 * expected / math.sqrt(len(draws)) + 0.02


def test_a_scale_of_zero_is_refused_in_words() -> None:
    with pytest.raises(InvalidArgumentError, match=r"^the scale must be > 0, got 0$"):
        noise.discrete_laplace(Fraction(0), noise.seeded_source(1))


def _least_denominator_between(lo: Fraction, hi: Fraction) -> Fraction:
    q = 1
    while True:
        p = math.floor(lo * q) + 1
        if Fraction(p, q) < hi:
            return Fraction(p, q)
        q += 1


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 30), st.integers(0, 40), st.integers(1, 40), st.integers(1, 60))
def test_simplest_between_is_the_least_denominator_in_the_open_interval(whole: int, a: int, b: int, width: int) -> None:
    """The Stern-Brocot search against counting denominators up, on intervals that start at an integer (the branch
    rounding intervals of doubles rarely reach) and at fractions, wide and narrow."""
    lo = whole + Fraction(a % b, b) if a % 3 else Fraction(whole)
    hi = lo + Fraction(width, 61)
    assert noise._simplest_between(lo, hi) == _least_denominator_between(lo, hi)


@pytest.mark.parametrize("k", [1, 60, 600, 1021])
def test_simplest_fraction_of_a_power_of_two_uses_the_wider_gap_above(k: int) -> None:
    """Above a power of two the doubles are twice as far apart as below, so its rounding interval reaches twice as
    far up: for 2**-k the simplest fraction inside is 1/n with n the least integer above 1/hi."""
    x = 2.0**-k
    hi = (Fraction(x) + Fraction(math.nextafter(x, math.inf))) / 2
    assert noise.simplest_fraction(x) == Fraction(1, math.floor(1 / hi) + 1)


def test_bernoulli_exp_refuses_a_negative_rate_in_words() -> None:
    with pytest.raises(InvalidArgumentError, match=r"^bernoulli_exp needs gamma >= 0, got -1/2$"):
        noise.bernoulli_exp(Fraction(-1, 2), noise.seeded_source(1))


# ---------------------------------------------------------------- the budget's one rule, in its words

@pytest.mark.parametrize("value, shown", [
    (0, "0"), (-0.5, "-0.5"), (np.float64(-0.5), "-0.5"), (math.inf, "inf"), ("x", "'x'"), (True, "True"),
    (None, "None"), (-(10**298), "-1" + "0" * 298), (-(10**299), "an integer of 300 digits"),
    (10**400, "an integer of 401 digits"),
])
def test_a_refused_budget_is_shown_as_written(value, shown) -> None:
    """A number as written (never np.float64(...)), an integer of more than 300 characters by its digits, anything
    else by its repr."""
    from designer.budget import check_budget

    with pytest.raises(InvalidArgumentError) as info:
        check_budget(value, "--epsilon")
    assert str(info.value) == f"--epsilon must be a finite number > 0, got {shown}"


def test_check_epsilon_refuses_a_non_number_by_type_and_a_bad_number_by_the_budget_rule() -> None:
    """A library function's ``eps`` (designer._internal.validation.check_epsilon): a bool, a string or None is a
    TypeError naming the type; a real number outside the rule is the budget rule's ValueError; both say ``eps``
    unless told another name, and a budget that passes comes back as its float."""
    from designer._internal.validation import check_epsilon

    for value, kind in ((True, "bool"), ("1", "str"), (None, "NoneType")):
        with pytest.raises(InvalidArgumentTypeError) as info:
            check_epsilon(value)
        assert str(info.value) == f"eps must be a real number, got {kind}"
    with pytest.raises(InvalidArgumentTypeError) as info:
        check_epsilon("1", "delta")
    assert str(info.value) == "delta must be a real number, got str"
    for value, shown in ((0, "0"), (-1.5, "-1.5"), (math.nan, "nan")):
        with pytest.raises(InvalidArgumentError) as refused:
            check_epsilon(value)
        assert not isinstance(refused.value, TypeError)
        assert str(refused.value) == f"eps must be a finite number > 0, got {shown}"
    with pytest.raises(InvalidArgumentError) as refused:
        check_epsilon(0, "delta")
    assert str(refused.value) == "delta must be a finite number > 0, got 0"
    assert check_epsilon(Fraction(1, 4)) == 0.25 and type(check_epsilon(np.int64(3))) is float


# ---------------------------------------------------------------- the certificate's words and fields

def test_a_certificate_describes_what_was_checked_and_any_repair() -> None:
    plain = Certificate(epsilon=1.5, losses=(Loss.SHAFER, Loss.WALLEY))
    assert plain.describe() == "1.5-private (Shafer and Walley losses), checked exactly (rational arithmetic)"
    assert plain.repair == "" and not plain.repair_visible
    mixed = dict(epsilon=1.0, losses=(Loss.SHAFER,), repaired=True, mix_weight=0.00125, reference="uniform row")
    tail = ", so 0.0013 of the uniform row (private with room to spare) was mixed in (its answer sets may appear " \
           "with masses of that order)"
    head = "1-private (Shafer loss), checked exactly (rational arithmetic)"
    assert Certificate(**mixed, violation=0.25).describe() == head
    assert Certificate(**mixed, violation=0.25).repair == (
        "the solver's answer exceeded the budget by 0.25 in floats" + tail)
    assert Certificate(**mixed, violation=0.0).repair == (
        "the solver's answer exceeded the budget by less than float rounding (only the exact check sees it)" + tail)
    rounded = Certificate(**mixed, violation=None, arithmetic="integer counts over 2^53")
    assert rounded.describe() == "1-private (Shafer loss), checked exactly (integer counts over 2^53)"
    assert rounded.repair == "the table rounded from the mechanism exceeded the budget in its rounding" + tail
    # visible: an excess in floats, a rounded table, or a weight reaching the 8th decimal; else the JSON only
    assert Certificate(**mixed, violation=0.0).repair_visible
    assert not Certificate(**{**mixed, "mix_weight": 4e-9}, violation=0.0).repair_visible
    assert Certificate(**{**mixed, "mix_weight": 5e-9}, violation=0.0).repair_visible
    assert Certificate(**{**mixed, "mix_weight": 1e-12}, violation=1e-12).repair_visible
    assert Certificate(**{**mixed, "mix_weight": 1e-12}, violation=None).repair_visible
    one = Certificate(epsilon=2.0, losses=(Loss.WALLEY,), budget=Fraction(2), parts=(plain,), rule="r",
                      arithmetic="a")
    assert one.describe() == "2-private (Walley loss) by r of 1 certified mechanism (a: 2)"
    two = Certificate(epsilon=3.0, losses=(Loss.SHAFER,), budget=Fraction(3), parts=(plain, plain), rule="r",
                      arithmetic="a")
    assert two.describe() == "3-private (Shafer loss) by r of 2 certified mechanisms (a: 3)"


def test_certificate_fields_hold_every_detail_and_the_composition() -> None:
    from designer.certificate import certificate_fields

    part = Certificate(epsilon=1.0, losses=(Loss.SHAFER,), repaired=True, mix_weight=0.5, reference="ref",
                       violation=0.125, arithmetic="ar")
    fields = certificate_fields(part)
    assert fields["certified"] is True and fields["certificate"] == "exact"
    assert fields["certificate_detail"] == {"losses": ["shafer"], "arithmetic": "ar", "repaired": True,
                                            "mix_weight": 0.5, "reference": "ref", "violation_before_repair": 0.125,
                                            "summary": part.describe(), "repair": part.repair}
    composed = product_certificate(_cert(0.5), _cert(0.25))
    detail = certificate_fields(composed)["certificate_detail"]
    assert detail["composition"] == {"rule": "the product (Lemma 3.3, Lemma 3.15)", "budget_exact": "3/4",
                                     "parts": [certificate_fields(_cert(0.5))["certificate_detail"],
                                               certificate_fields(_cert(0.25))["certificate_detail"]]}
    assert "composition" not in certificate_fields(_cert(1.0))["certificate_detail"]
    plain = certificate_fields(Certificate(epsilon=1.0, losses=(Loss.SHAFER,)))["certificate_detail"]
    assert plain["violation_before_repair"] is None and plain["repair"] is None


# ---------------------------------------------------------------- exact tables: rounding rows, keeping a prior

@pytest.mark.parametrize("row, expected", [
    ([0.7, 0.3], [11, 5]),  # 11.2, 4.8: floors 11, 4; the one left goes to the larger remainder, .8
    ([0.2, 0.8], [3, 13]),  # 3.2, 12.8
    ([0.05, 0.95], [1, 15]),  # 0.8, 15.2: a mass below one count still gets its largest remainder
    ([0.0, 0.9375], [0, 16]),  # 0, 15 (no remainder anywhere): a zero mass stays zero, the positive one takes it
    ([-1e-18, 0.5, 0.5], [0, 8, 8]),  # a solver's negative rounding residue is a zero mass
    ([0.125, 0.125, 0.5625], [3, 2, 11]),  # 2, 2, 9: three short, as many as the columns: in proportion first
])
def test_rows_are_rounded_by_their_largest_remainders(row, expected) -> None:
    """Counts over D = 16 (a power of two: every mass times D is exact): the floors of ``mass * D``, negative
    masses as 0, then the rows that fall short by fewer units than they have columns give one more to the
    largest remainders (ties to the first column); a row short by at least its number of columns is first moved
    towards D in proportion to its masses (floors of ``short * mass / total``): 2, 2, 9 short by 3 gets 0, 0, 2,
    then the one left goes to the first column. Worked out here in Fractions."""
    from designer.guarantees.exact_table import round_rows

    got = round_rows(np.array([row]), 16)
    assert got.tolist() == [expected] and got.dtype == np.int64
    assert sum(expected) == 16
    exact = [max(Fraction(m), Fraction(0)) * 16 for m in row]
    if sum(exact) == 16:  # a row that sums to 1: every count within one unit of its mass
        assert all(abs(c - e) < 1 for c, e in zip(expected, exact))


@pytest.mark.parametrize("row, expected", [
    ([0.375, 0.375, 0.3125], [5, 6, 5]),  # 6, 6, 5: one over; the largest counts tie, the first gives one
    ([0.25, 0.4375, 0.375], [4, 6, 6]),  # 4, 7, 6: the largest count gives one
    ([0.4375, 0.375, 0.3125], [6, 5, 5]),  # 7, 6, 5: two over, one from each of the two largest
])
def test_a_row_over_one_gives_back_from_its_largest_counts(row, expected) -> None:
    """A row whose masses sum above 1 by fewer units of 1/16 than it has columns: one count less for each unit
    over, from the largest counts down (ties to the first column); the counts sum to 16."""
    from designer.guarantees.exact_table import round_rows

    assert sum(int(Fraction(m) * 16) for m in row) > 16
    assert round_rows(np.array([row]), 16).tolist() == [expected] and sum(expected) == 16


def test_ties_go_to_the_first_columns_in_a_wide_row() -> None:
    """Forty columns over 64 with ties among remainders and among counts: the units short go to the largest
    remainders and the units over come from the largest counts, ties always to the first column (a stable order,
    so a table and its digest are the same on every machine); worked out with Python's stable sort."""
    from designer.guarantees.exact_table import round_rows

    remainders = [(j * 5 % 3 + 1) / 4 for j in range(40)]  # 1/4, 3/4, 1/2, ...: mass (1 + r) / 64, 24 short
    short = 64 - 40
    taking = sorted(range(40), key=lambda j: -remainders[j])[:short]
    expected = [1 + (j in taking) for j in range(40)]
    assert round_rows(np.array([[(1 + r) / 64 for r in remainders]]), 64).tolist() == [expected]
    counts = [j * 7 % 3 + 1 for j in range(40)]  # 1, 2, 3, ...: 79 over 64, 15 over
    giving = sorted(range(40), key=lambda j: -counts[j])[:sum(counts) - 64]
    expected = [c - (j in giving) for j, c in enumerate(counts)]
    assert round_rows(np.array([[c / 64 for c in counts]]), 64).tolist() == [expected] and sum(expected) == 64


def test_exact_masses_are_rounded_as_their_doubles() -> None:
    """Masses given as Fractions (an object array) are read as doubles: a quarter and three quarters over 16 are
    4 and 12, as integers."""
    from designer.guarantees.exact_table import round_rows

    got = round_rows(np.array([[Fraction(1, 4), Fraction(3, 4)]], dtype=object), 16)
    assert got.tolist() == [[4, 12]] and got.dtype == np.int64


@pytest.mark.parametrize("counts, dens, prior, column, holds", [
    ([[3, 1], [1, 3]], [4, 4], (Fraction(1, 2), Fraction(1, 2)), [0, 1], True),
    ([[1, 3], [3, 1]], [4, 4], (Fraction(1, 2), Fraction(1, 2)), [1, 0], True),  # each input's category column
    ([[1, 3], [3, 1]], [4, 4], (Fraction(1, 2), Fraction(1, 2)), [0, 1], True),  # 1/2 * 1/4 + 1/2 * 3/4 = 1/2
    ([[2, 2], [1, 3]], [4, 4], (Fraction(1, 3), Fraction(2, 3)), [0, 1], True),  # 1/3 * 2/4 + 2/3 * 1/4 = 1/3
    ([[3, 1], [1, 3]], [4, 4], (Fraction(1, 3), Fraction(2, 3)), [0, 1], False),  # 1/3 * 3/4 + 2/3 * 1/4 = 5/12
    ([[1, 1], [2, 6]], [2, 8], (Fraction(1, 3), Fraction(2, 3)), [0, 1], True),  # rows over their own d_x
    ([[1, 1], [2, 6]], [8, 2], (Fraction(1, 3), Fraction(2, 3)), [0, 1], False),  # read over the other's
    ([[2, 2], [2, 2]], [4, 4], (Fraction(1, 3), Fraction(2, 3)), [0, 1], False),  # 1/2 for a share of 1/3
    ([[2**52 + 1, 2**52 - 1], [2**52 - 1, 2**52 + 1]], [2**53, 2**53], (Fraction(1, 2), Fraction(1, 2)),
     [0, 1], True),
    ([[2**52 + 1, 2**52 - 1], [2**52, 2**52]], [2**53, 2**53], (Fraction(1, 2), Fraction(1, 2)), [0, 1], False),
])
def test_a_table_keeps_a_prior_invariant_exactly(counts, dens, prior, column, holds) -> None:
    """An invariant design's table keeps the prior: ``sum_x pi_x C[x, y(z)] / d_x == pi_z`` for every input z, in
    rational arithmetic (one count in 2**53 off is not invariant); the sums are worked out in the comments."""
    from designer.guarantees.exact_table import invariance_holds

    expected = all(sum((p * Fraction(row[column[z]], d) for p, row, d in zip(prior, counts, dens)), Fraction(0))
                   == prior[z] for z in range(len(prior)))
    assert expected is holds
    assert invariance_holds(np.array(counts, dtype=np.int64), np.array(dens, dtype=np.int64), list(prior),
                            column) is holds


@pytest.mark.parametrize("matrix, counts, denominator", [
    ([[0.5, 0.5, 0.0], [0.25, 0.75, 0.0]], [[2, 2, 0], [1, 3, 0]], 4),  # an answer never given: a zero count
    ([[0.5, 0.5], [1 / 3, 2 / 3]], [[3, 3], [2, 4]], 6),  # halves and thirds: the least common denominator
    ([[1 / 3, 2 / 3], [0.5, 0.5]], [[2, 4], [3, 3]], 6),
    ([[1e-5, 1 - 1e-5], [1 - 1e-5, 1e-5]], [[1, 99_999], [99_999, 1]], 100_000),  # MAX_GRID itself is a grid
])
def test_a_design_on_a_grid_keeps_its_exact_fractions(matrix, counts, denominator) -> None:
    """Masses that are the doubles nearest c / D for one D up to 100,000 (zero masses included) are read back as
    those counts over the least such D, as int64."""
    from designer.guarantees.exact_table import MAX_GRID, grid_counts

    assert MAX_GRID == 100_000
    for row, exact in zip(matrix, counts):
        assert [float(Fraction(c, denominator)) for c in exact] == row
    got = grid_counts(np.array(matrix))
    assert got is not None and got[1] == denominator
    assert got[0].tolist() == counts and got[0].dtype == np.int64


def test_masses_beyond_the_largest_grid_or_negative_are_no_grid() -> None:
    """Thirds and 1/100,003 (a prime): their least common denominator passes 100,000, no grid; neither is a
    negative mass (a row still summing to 1)."""
    from designer.guarantees.exact_table import grid_counts

    assert grid_counts(np.array([[1 / 100_003, 1 - 1 / 100_003], [0.5, 0.5]])) is None
    assert grid_counts(np.array([[1 / 3, 2 / 3], [1 / 49_999, 1 - 1 / 49_999]])) is None  # lcm 149,997
    assert grid_counts(np.array([[-0.25, 1.25], [0.5, 0.5]])) is None


def test_an_unknown_semantics_is_refused_in_words() -> None:
    from designer.guarantees.exact_table import exact_table

    with pytest.raises(InvalidArgumentError) as info:
        exact_table(Q_WRR(1.0), semantics="bogus")
    assert str(info.value) == "semantics must be one of 'sldp', 'wldp', 'both', got 'bogus'"


def test_a_table_is_certified_within_the_loss_of_its_semantics() -> None:
    """Q_2x3(0.6, 0.2) (rows 0.6, 0.2, 0.2 over {yes}, {no}, {yes,no}): Shafer loss ln(0.6 / 0.2) = ln 3, Walley
    loss ln((0.6 + 0.2) / 0.2) = ln 4 (pl of {yes} against its bel); a table without a stated budget takes the
    loss of its semantics, the larger for both."""
    from designer.guarantees.exact_table import exact_table

    q = Q_2x3(0.6, 0.2)
    assert exact_table(q, semantics="sldp").epsilon == pytest.approx(math.log(3), abs=1e-12)
    assert exact_table(q, semantics="wldp").epsilon == pytest.approx(math.log(4), abs=1e-12)
    assert exact_table(q, semantics="both").epsilon == pytest.approx(math.log(4), abs=1e-12)


def test_a_walley_table_is_mixed_with_a_row_over_the_singletons_only() -> None:
    """At a budget a hair below Q_2x3(0.6, 0.2)'s Walley loss ln 4, the rounded table needs a mix; the row mixed
    in is uniform over the singleton answers (its plausibility equals its belief, so no Walley ratio grows), so
    the set answer {yes,no} only loses the weight: its count is (1 - w) 0.2 D to one unit, and each singleton's is
    ((1 - w) m + w / 2) D (worked out in Fractions from the doubles)."""
    from designer.guarantees.exact_table import WIDE_DENOMINATOR, exact_table

    q = Q_2x3(0.6, 0.2)
    table = exact_table(q, semantics="wldp", epsilon=math.log(4) * (1 - 1e-15))
    w = Fraction(table.mix_weight)
    assert 0 < w < Fraction(1, 2**40)
    d = WIDE_DENOMINATOR
    for x in range(2):
        masses = [Fraction(float(m)) for m in q.matrix[x]]
        assert abs(int(table.counts[x, 2]) - (1 - w) * masses[2] * d) <= 1
        for j in (0, 1):
            assert abs(int(table.counts[x, j]) - ((1 - w) * masses[j] + w / 2) * d) <= 1


@pytest.mark.parametrize("epsilon", [0.0, 0, -1.0, math.inf, math.nan, "1", Fraction(1)])
def test_a_table_budget_must_be_a_finite_positive_number(epsilon) -> None:
    """A stated budget of a table is a float or an int, finite and > 0; anything else is refused in words."""
    from designer.guarantees.exact_table import exact_table

    with pytest.raises(InvalidArgumentError) as info:
        exact_table(Q_WRR(1.0), epsilon=epsilon)
    assert str(info.value) == f"epsilon must be a finite number > 0, got {epsilon!r}"


def test_a_shafer_table_is_mixed_with_a_row_over_every_answer() -> None:
    """At a budget a hair below Q_2x3(0.6, 0.2)'s Shafer loss ln 3 the rounded table needs a mix; for a Shafer
    loss the row mixed in is uniform over every answer, the set answer included: each count is ((1 - w) m + w / 3)
    D to one unit (worked out in Fractions from the doubles)."""
    from designer.guarantees.exact_table import WIDE_DENOMINATOR, exact_table

    q = Q_2x3(0.6, 0.2)
    table = exact_table(q, semantics="sldp", epsilon=math.log(3) * (1 - 1e-15))
    w = Fraction(table.mix_weight)
    assert 0 < w < Fraction(1, 2**40)
    for x in range(2):
        for j in range(3):
            mass = Fraction(float(q.matrix[x, j]))
            assert abs(int(table.counts[x, j]) - ((1 - w) * mass + w / 3) * WIDE_DENOMINATOR) <= 1


_BAD_EXACT = ("exact: counts must match the mechanism's shape, be >= 0 and sum per row to that row's denominator "
              "(at most 2^53)")


def test_an_invariant_designs_own_table_is_used_as_it_is() -> None:
    """The design's own integer table (rows over their own denominators) within the budget is the table: its counts
    as int64, its denominators, no mix, and its largest change from the float masses (0 here: quarters and
    eighths are doubles exactly). Rows over 4 and 8 compare as 6 : 2 and 2 : 6 over 8, ratio 3 < e^1.1."""
    from designer.guarantees.exact_table import exact_table

    mech = Mechanism([[0.75, 0.25], [0.25, 0.75]], inputs=["a", "b"], frame=["a", "b"], focal=[1, 2])
    table = exact_table(mech, epsilon=1.1, exact=(np.array([[3, 1], [2, 6]], dtype=np.uint32), np.array([4, 8])))
    assert table.counts.tolist() == [[3, 1], [2, 6]] and table.counts.dtype == np.int64
    assert (table.denominator, table.denominators, table.mix_weight, table.max_change) == (4, (4, 8), 0.0, 0.0)
    same = exact_table(mech, epsilon=1.1, exact=([[3, 1], [1, 3]], [4, 4]))
    assert (same.denominator, same.denominators) == (4, ())  # one denominator: none per row
    near = exact_table(mech, epsilon=1.1, exact=([[6, 2], [3, 5]], [8, 8]))  # 5/8 for a mass of 3/4
    assert near.max_change == 0.125
    with pytest.raises(CertificationError, match=r"^the design's exact table is not within eps = 1$"):
        exact_table(mech, epsilon=1.0, exact=([[3, 1], [2, 6]], [4, 8]))  # ratio 3 > e


@pytest.mark.parametrize("exact", [
    ([[3.5, 0.5], [1, 3]], [4, 4]),  # fractional counts summing to the denominator: 3.5 was cast to 3
    ([[3, 1], [1, 3]], [4.5, 4]),  # a fractional denominator: 4.5 was cast to 4 and the row then summed to it
    ([[True, False], [False, True]], [1, 1]),  # booleans are not counts
    ([[True, 3], [1, 3]], [4, 4]),  # nor is one among integers (as an array of ints it would read as 1)
    ([[3, 1], [1, 3]], ["4", "4"]),
])
def test_an_exact_table_of_non_whole_numbers_is_refused_not_truncated(exact) -> None:
    """The design's own table holds whole numbers; anything else is refused in one line, never cast to int64 (which
    truncates 4.5 to 4 and certifies a table that is not the one given). Floats holding whole numbers are counts."""
    from designer.guarantees.exact_table import exact_table

    mech = Mechanism([[0.75, 0.25], [0.25, 0.75]], inputs=["a", "b"], frame=["a", "b"], focal=[1, 2])
    words = r"^exact: counts and denominators must be whole numbers \(integers, or floats holding one\)$"
    with pytest.raises(InvalidArgumentError, match=words):
        exact_table(mech, epsilon=1.1, exact=exact)
    assert exact_table(mech, epsilon=1.1, exact=([[3.0, 1.0], [1.0, 3.0]], [4.0, 4.0])).counts.tolist() == [
        [3, 1], [1, 3]]


def test_an_exact_table_with_a_zero_count_is_judged_not_refused() -> None:
    """Zero counts are counts: a set answer one input never gives keeps a finite Walley loss (pl 1/2 against
    bel 1/4: ln 2), so the table is certified within 0.7; a zero singleton against a positive one is no
    refusal of the input but a table over the budget. A row over 1 is a denominator like any other."""
    from designer.guarantees.exact_table import exact_table

    mech = Mechanism([[0.5, 0.5, 0.0], [0.25, 0.25, 0.5]], inputs=["yes", "no"], frame=["yes", "no"],
                     focal=[1, 2, 3])
    table = exact_table(mech, epsilon=0.7, semantics="wldp", exact=([[2, 2, 0], [1, 1, 2]], [4, 4]))
    assert table.counts.tolist() == [[2, 2, 0], [1, 1, 2]]
    plain = Mechanism([[1.0, 0.0], [0.5, 0.5]], inputs=["a", "b"], frame=["a", "b"], focal=[1, 2])
    with pytest.raises(CertificationError, match=r"not within eps = 1$"):
        exact_table(plain, epsilon=1.0, exact=([[1, 0], [1, 1]], [1, 2]))


@pytest.mark.parametrize("counts, dens", [
    ([[3, 1, 0], [1, 3, 0]], [4, 4]),  # three columns for a mechanism of two answers
    ([[5, -1], [1, 3]], [4, 4]),  # a negative count (the row still sums to 4)
    ([[3, 2], [1, 3]], [4, 4]),  # a row summing to 5 over 4
    ([[3, 1], [1, 3]], [4, 5]),
    ([[0, 0], [1, 3]], [0, 4]),  # a denominator of 0
    ([[2**53, 2**53], [2**53, 2**53]], [2**54, 2**54]),  # beyond 2^53
])
def test_an_exact_table_that_is_not_a_table_is_refused_in_words(counts, dens) -> None:
    from designer.guarantees.exact_table import exact_table

    mech = Mechanism([[0.75, 0.25], [0.25, 0.75]], inputs=["a", "b"], frame=["a", "b"], focal=[1, 2])
    with pytest.raises(InvalidArgumentError) as info:
        exact_table(mech, epsilon=1.1, exact=(np.array(counts, dtype=np.int64), np.array(dens, dtype=np.int64)))
    assert str(info.value) == _BAD_EXACT


def test_a_one_input_design_has_its_own_table() -> None:
    """One input: nothing to compare, any table of it is within any budget; its one denominator is the table's."""
    from designer.guarantees.exact_table import exact_table

    table = exact_table(Mechanism([[0.5, 0.5]], focal=[1, 2]), epsilon=1.0, exact=([[1, 1]], [2]))
    assert (table.counts.tolist(), table.denominator, table.denominators) == ([[1, 1]], 2, ())


def test_rows_over_large_different_denominators_are_compared_exactly() -> None:
    """Rows over d1 = 2**53 - 1 and d2 = (d1 + 3) / 2 (coprime) with a d2 - b d1 = 1: brought to d1 d2 (about
    2**105) each column's two counts differ by one unit, a ratio of 1 + about 2**-104, which doubles cannot see
    (the products round to one double) but which exceeds e**(1e-40) < 1 + 2e-40; a budget of 1e-30 admits it."""
    from designer.guarantees.exact_table import counts_private

    d1 = 2**53 - 1
    d2 = (d1 + 3) // 2
    a = (d1 + 2) // 3
    b = (a * d2 - 1) // d1
    assert a * d2 - b * d1 == 1 and (d1 - a) * d2 - (d2 - b) * d1 == -1
    assert float(a) * float(d2) == float(b) * float(d1)  # as doubles the two rows agree
    worst = max(Fraction(a * d2, b * d1), Fraction((d2 - b) * d1, (d1 - a) * d2))
    assert 1 + Fraction(2, 10**40) < worst < 1 + Fraction(1, 10**30)
    counts, dens = np.array([[a, d1 - a], [b, d2 - b]]), np.array([d1, d2])
    for loss in ("sldp", "wldp"):  # singleton answers: Walley's events are their masses, across rows
        assert counts_private(counts, [1, 2], 1e-40, loss, dens) is False
        assert counts_private(counts, [1, 2], 1e-30, loss, dens) is True


def test_the_shafer_check_answers_to_both_of_its_names() -> None:
    """Q_2x3(0.6, 0.2)'s counts 3, 1, 1 over 5 (columns {yes}, {no}, {yes,no}): Shafer ratio 3, Walley ratio
    (3 + 1) / 1 = 4, so at ln 3.5 the Shafer check ('sldp' or 'shafer') passes and the Walley one does not."""
    from designer.guarantees.exact_table import counts_private

    counts = np.array([[3, 1, 1], [1, 3, 1]])
    eps = math.log(3.5)
    assert counts_private(counts, [1, 2, 3], eps, "sldp") and counts_private(counts, [1, 2, 3], eps, "shafer")
    assert not counts_private(counts, [1, 2, 3], eps, "wldp") and not counts_private(counts, [1, 2, 3], eps, "walley")


def _walley_loss(counts: list[list[int]], focal: list[int], size: int) -> Fraction:
    """The largest pl_x(E) / bel_x'(E) over proper events E and rows x != x' (bel > 0), by enumeration."""
    worst = Fraction(0)
    for event in range(1, 2**size - 1):
        pl = [sum(c for c, b in zip(row, focal) if b & event) for row in counts]
        bel = [sum(c for c, b in zip(row, focal) if b & ~event == 0) for row in counts]
        worst = max([worst] + [Fraction(pl[x], bel[y]) for x in range(len(counts)) for y in range(len(counts))
                               if x != y and bel[y] > 0])
    return worst


@pytest.mark.parametrize("counts", [
    [[1, 1, 1, 5], [2, 2, 3, 1]],
    [[4, 1, 2, 1], [1, 3, 1, 3]],
    [[2, 2, 2, 2], [1, 1, 5, 1], [3, 2, 1, 2]],
])
def test_walley_counts_over_three_labels_sum_the_subsets_of_each_event(counts) -> None:
    """Answers {a}, {b}, {c}, {a,b}: an event's belief sums the masses of every answer inside it ({a,b}: three
    answers), its plausibility those meeting it; the check passes just above the largest ratio and fails just
    below (ratios worked out by enumerating the events in Fractions)."""
    from designer.guarantees.exact_table import counts_private

    focal = [1, 2, 4, 3]
    worst = _walley_loss(counts, focal, 3)
    assert worst > 1
    eps = math.log(float(worst))
    table = np.array(counts)
    assert counts_private(table, focal, eps * (1 + 1e-9), "wldp") is True
    assert counts_private(table, focal, eps * (1 - 1e-9), "wldp") is False


def test_rows_whose_common_denominator_passes_int64_are_compared_exactly() -> None:
    """Rows over 2**53 - 1 and 2047 (coprime): their least common multiple lies between 2**63 and 2**64, where
    doubles are 2048 apart; with a d2 - b d1 = 1 each column's two counts differ by one unit there, a ratio above
    e**(1e-30) that doubles would round to 1, below e**(1e-15)."""
    from designer.guarantees.exact_table import counts_private

    d1, d2 = 2**53 - 1, 2047
    a = pow(d2, -1, d1)
    b = (a * d2 - 1) // d1
    assert 2**63 < d1 * d2 < 2**64 and a * d2 - b * d1 == 1 and 0 < b < d2
    assert float(a * d2) == float(b * d1) and float((d1 - a) * d2) == float((d2 - b) * d1)
    worst = max(Fraction(a * d2, b * d1), Fraction((d2 - b) * d1, (d1 - a) * d2))
    assert 1 + Fraction(2, 10**30) < worst < 1 + Fraction(1, 10**15)
    counts, dens = np.array([[a, d1 - a], [b, d2 - b]]), np.array([d1, d2])
    for loss in ("sldp", "wldp"):
        assert counts_private(counts, [1, 2], 1e-30, loss, dens) is False
        assert counts_private(counts, [1, 2], 1e-15, loss, dens) is True


def test_a_design_table_over_2_53_and_a_shafer_table_with_a_set_answer_are_accepted() -> None:
    """The design's own table may be over 2**53 itself; a Shafer table is checked for Shafer's loss only:
    counts 3, 1, 1 over 5 (Shafer ratio 3, Walley ratio 4) are within ln 3.5 for sldp, not for wldp."""
    from designer.guarantees.exact_table import exact_table
    from designer.vocabulary import Semantics

    mech = Mechanism([[0.75, 0.25], [0.25, 0.75]], inputs=["a", "b"], frame=["a", "b"], focal=[1, 2])
    big = exact_table(mech, epsilon=1.1, exact=([[3 * 2**51, 2**51], [2**51, 3 * 2**51]], [2**53, 2**53]))
    assert big.denominator == 2**53 and big.max_change == 0.0
    q = Q_2x3(0.6, 0.2)
    eps = math.log(3.5)
    table = exact_table(q, epsilon=eps, exact=([[3, 1, 1], [1, 3, 1]], [5, 5]))
    assert (table.inputs, table.outputs) == (("yes", "no"), ("{yes}", "{no}", "{yes,no}"))
    assert (table.epsilon, table.semantics, table.denominator) == (eps, Semantics.SLDP, 5)
    with pytest.raises(CertificationError):
        exact_table(q, epsilon=eps, semantics="wldp", exact=([[3, 1, 1], [1, 3, 1]], [5, 5]))


def test_a_grid_design_keeps_its_denominator_and_a_power_of_two_grid_is_over_2_32() -> None:
    """Q_2x3(0.6, 0.2) is fifths: within ln 3.5 for Shafer (ratio 3) it keeps 3, 1, 1 over 5, unmixed, with its
    labels, budget and semantics; quarters, a power of two's grid, are written over 2**32 (one word a draw)."""
    from designer.guarantees.exact_table import exact_table
    from designer.vocabulary import Semantics

    eps = math.log(3.5)
    table = exact_table(Q_2x3(0.6, 0.2), epsilon=eps)
    assert (table.denominator, table.counts.tolist(), table.mix_weight) == (5, [[3, 1, 1], [1, 3, 1]], 0.0)
    assert (table.inputs, table.outputs) == (("yes", "no"), ("{yes}", "{no}", "{yes,no}"))
    assert (table.epsilon, table.semantics) == (eps, Semantics.SLDP)
    quarters = Mechanism([[0.75, 0.25], [0.25, 0.75]], inputs=["a", "b"], frame=["a", "b"], focal=[1, 2])
    wide = exact_table(quarters, epsilon=1.1)
    assert wide.denominator == 2**32 and wide.counts.dtype == np.int64
    assert wide.counts.tolist() == [[3 * 2**30, 2**30], [2**30, 3 * 2**30]]


def test_the_mix_doubles_from_2_to_the_minus_48_until_the_table_certifies() -> None:
    """Warner at 1.2 nats (p = e^1.2 / (1 + e^1.2)) within 1 nat: the mix (1 - w) p + w / 2 needs w = 1/4
    (at 1/8 the ratio is about 2.77 > e, at 1/4 about 2.35), reached by doubling 2**-48 46 times; each count is
    the mix times 2**53 to one unit. Over 2 nats, Warner at 2 cannot be mixed below 1/2 within 1 nat."""
    from designer.guarantees.exact_table import WIDE_DENOMINATOR, exact_table
    from designer.vocabulary import Semantics

    mech = Q_WRR(1.2)
    table = exact_table(mech, epsilon=1.0)
    assert table.mix_weight == 0.25 == 2.0**-48 * 2**46
    assert (table.inputs, table.outputs, table.epsilon, table.semantics) == (
        ("yes", "no"), ("{yes}", "{no}"), 1.0, Semantics.SLDP)
    w = Fraction(1, 4)
    for x in range(2):
        for j in range(2):
            mass = Fraction(float(mech.matrix[x, j]))
            assert abs(int(table.counts[x, j]) - ((1 - w) * mass + w / 2) * WIDE_DENOMINATOR) <= 1
    with pytest.raises(CertificationError) as info:
        exact_table(Q_WRR(2.0), epsilon=1.0)
    assert str(info.value) == ("no table over 2^53 of this mechanism is within eps = 1 even mixed half with the "
                               "uniform row: the mechanism is not within that budget")


def test_masses_are_read_as_doubles_before_rounding() -> None:
    """3/32 - 1e-30 and 3/32 + 1e-30 are the double 3/32: over 16 both are 1.5, a tie the first column wins
    (exact Fractions would give it to the second)."""
    from designer.guarantees.exact_table import round_rows

    tiny = Fraction(1, 10**30)
    row = [Fraction(3, 32) - tiny, Fraction(3, 32) + tiny, Fraction(13, 16)]
    assert round_rows(np.array([row], dtype=object), 16).tolist() == [[2, 1, 13]]
