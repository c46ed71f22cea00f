"""The noisy counts of a published prior (designer/guarantees/noise.py): the exact samplers against their laws computed
here
in closed form, the budget arithmetic in rationals, and the post-processing."""

from __future__ import annotations

import math
import random
from collections import Counter
from fractions import Fraction

import pytest
from scipy.stats import chisquare

from designer.exceptions import InvalidArgumentError
from designer.guarantees.noise import (
    bernoulli,
    bernoulli_exp,
    discrete_laplace,
    noisy_counts,
    noisy_prior,
    seeded_source,
    stated_budget,
)


def _source(seed: int):
    return random.Random(seed).randrange


@pytest.mark.parametrize("gamma", [Fraction(0), Fraction(1, 3), Fraction(1), Fraction(5, 2), Fraction(7)])
def test_bernoulli_exp_has_probability_exp_minus_gamma(gamma):
    draw = _source(int(gamma * 100) + 1)
    n = 40_000
    hits = sum(bernoulli_exp(gamma, draw) for _ in range(n))
    p = math.exp(-float(gamma))
    assert abs(hits / n - p) <= 5 * math.sqrt(p * (1 - p) / n) + 1e-12


def test_bernoulli_decides_on_the_denominator_exactly():
    """Enumerating every integer the source can give: exactly numerator of denominator are hits."""
    p = Fraction(3, 7)
    hits = sum(bernoulli(p, lambda n, v=v: v) for v in range(7))
    assert hits == 3


@pytest.mark.parametrize("scale", [Fraction(2), Fraction(4, 3), Fraction(1, 2), Fraction(20)])
def test_discrete_laplace_follows_the_two_sided_geometric_law(scale):
    """P(z) = (1 - a) / (1 + a) a^|z| with a = exp(-1/scale), against a chi-square over the central values."""
    draw = _source(int(scale * 7))
    n = 30_000
    seen = Counter(discrete_laplace(scale, draw) for _ in range(n))
    a = math.exp(-1 / float(scale))
    law = {z: (1 - a) / (1 + a) * a ** abs(z) for z in range(-200, 201)}
    cut = max(1, int(3 * float(scale)))
    cells = list(range(-cut, cut + 1))
    observed = [seen.get(z, 0) for z in cells] + [n - sum(seen.get(z, 0) for z in cells)]
    expected = [n * law[z] for z in cells] + [n * (1 - sum(law[z] for z in cells))]
    assert chisquare(observed, expected).pvalue > 1e-4
    assert abs(sum(z * k for z, k in seen.items()) / n) < 5 * math.sqrt(2 * a / (1 - a) ** 2 / n)  # symmetric


def test_the_scale_of_the_noise_is_two_over_the_budget():
    """One record changed moves two counts by one: scale 2 / eps, so eps = 1 gives a = exp(-1/2)."""
    n = 20_000
    draws = [c - 100 for c in noisy_counts([100] * n, Fraction(1), seeded_source(4))]
    a = math.exp(-0.5)
    zero = (1 - a) / (1 + a)
    assert abs(draws.count(0) / n - zero) < 5 * math.sqrt(zero * (1 - zero) / n)
    one = zero * a
    assert abs(draws.count(1) / n - one) < 5 * math.sqrt(one * (1 - one) / n)


def test_budgets_add_as_the_decimals_written():
    assert stated_budget(0.1) + stated_budget(0.2) == stated_budget(0.3)
    assert stated_budget("1/3") * 3 == 1
    assert stated_budget(2) == Fraction(2)
    for bad in (0.0, -1.0, float("inf"), float("nan"), "0"):
        with pytest.raises(InvalidArgumentError):
            stated_budget(bad)


def test_the_published_prior_is_positive_and_sums_to_one():
    prior = noisy_prior([-3, 0, 7, 2])
    assert prior == [Fraction(1, 11), Fraction(1, 11), Fraction(7, 11), Fraction(2, 11)]
    assert sum(prior) == 1 and min(prior) > 0


def test_a_seeded_source_repeats_and_the_default_does_not():
    one = noisy_counts([50] * 30, Fraction(1, 2), seeded_source(9))
    assert one == noisy_counts([50] * 30, Fraction(1, 2), seeded_source(9))
    assert noisy_counts([50] * 30, Fraction(1, 2)) != noisy_counts([50] * 30, Fraction(1, 2))
