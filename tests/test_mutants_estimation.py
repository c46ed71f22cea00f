"""The profile-likelihood intervals' parts, each stated as the property it protects (written for the mutants of
``designer/estimation/boundary.py`` that survived the mutation suite: docs/mutation.md,
benchmarks/mutation/report.md).

The oracles here share no code with designer: the unified approach's acceptance probability is integrated from the
normal distribution over the region where the statistic is below the critical value, found by bisection in the
estimate; Warner's variance is the textbook closed form.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import chi2, norm

from designer.estimation import boundary, share_tests
from designer.estimation.boundary import (
    boundary_warning,
    critical_value,
    profile_intervals,
    profile_statistic,
    unified_critical,
)

WARNER = np.array([[0.75, 0.25], [0.25, 0.75]])  # Warner's design, p = 0.75


# ---------------------------------------------------------------- the unified approach's critical value

def _acceptance(d: float, c: float) -> float:
    """``P(LR(d) <= c)`` for the estimate ``max(X, 0)``, ``X ~ N(d, 1)``: ``LR(d)`` is twice the drop of the normal
    log-likelihood from the estimate to ``d``, a function of ``x`` that is 0 at ``x = d`` and rises on both sides,
    so ``{x : LR <= c}`` is an interval; its ends are found by bisection."""
    def lr(x: float) -> float:
        return (x - d) ** 2 - (x - max(x, 0.0)) ** 2

    def crossing(inside: float, outside: float) -> float:  # lr(inside) <= c < lr(outside)
        for _ in range(200):
            mid = (inside + outside) / 2
            inside, outside = (mid, outside) if lr(mid) <= c else (inside, mid)
        return (inside + outside) / 2

    return float(norm.cdf(crossing(d, d + 50.0) - d) - norm.cdf(crossing(d, d - 50.0) - d))


@pytest.mark.parametrize("level", [0.9, 0.95, 0.99])
@pytest.mark.parametrize("d", [0.0, 0.05, 0.3, 0.8, 1.0, 1.3, 1.7, 1.9, 2.2])
def test_critical_value_gives_the_level_at_every_distance_from_the_edge(d: float, level: float) -> None:
    """Feldman and Cousins' construction: at a parameter ``d`` standard errors inside the edge the statistic is at
    most its critical value with probability exactly ``level`` (integrated here from the normal distribution). A
    critical value computed for a distance of 1 at every distance below it, one that ignores the edge's term, or
    a root found to a loose tolerance, each gives another probability."""
    c = unified_critical(d, level)
    assert _acceptance(d, c) == pytest.approx(level, abs=1e-9)
    assert chi2.ppf(2 * level - 1, 1) - 1e-9 <= c <= chi2.ppf(level, 1) + 1e-9


@pytest.mark.parametrize("level", [0.1, 0.3, 0.5])
def test_a_level_of_one_half_or_less_has_a_critical_value(level: float) -> None:
    """Below 0.5 the atom of the statistic at 0 (an estimate held at the edge) alone holds more than the level
    there: the critical value at the edge is 0, and inside it the level is reached exactly (it was refused as an
    invalid level, hunt of 2026-12-08)."""
    assert unified_critical(0.0, level) == 0.0
    for d in (0.05, 0.2, 0.6, 2.0):
        c = unified_critical(d, level)
        assert _acceptance(d, c) == pytest.approx(level, abs=1e-9)


@pytest.mark.parametrize("level", [0.9, 0.95])
def test_critical_value_far_from_the_edge_is_chi2_1(level: float) -> None:
    """From ``z`` standard errors inside, the edge no longer matters: ``chi2_1(level)`` (3.8415 at 0.95)."""
    z = norm.ppf((1 + level) / 2)
    for d in (z, z + 1e-6, 3.0, 40.0):
        assert unified_critical(d, level) == pytest.approx(chi2.ppf(level, 1), rel=1e-9)


# ---------------------------------------------------------------- the distance: Warner's variance

def _warner_se(v: float, n: float, p: float = 0.75) -> float:
    """The standard error of Warner's estimate of a share ``v`` from ``n`` answers (Warner 1965)."""
    lam = p * v + (1 - p) * (1 - v)
    return math.sqrt(lam * (1 - lam) / (n * (2 * p - 1) ** 2))


@pytest.mark.parametrize(("v", "n"), [(0.5, 1000.0), (0.3, 400.0), (0.08, 200.0), (0.03, 500.0), (0.97, 300.0),
                                      (0.15, 60.0)])
def test_an_end_is_held_to_the_critical_value_of_its_distance_in_standard_errors(v: float, n: float) -> None:
    """An end ``v`` is held to the critical value at its distance from the nearer edge, counted in standard errors
    of ``n`` answers at ``v`` (Warner's closed form here): a variance scaled by ``n`` instead of divided, an
    information built from the wrong answers, or none, moves the distance and with it the critical value."""
    counts = np.array([0.4, 0.6]) * n
    point = np.array([v, 1 - v])
    distance = min(v, 1 - v) / _warner_se(v, n)
    assert critical_value(WARNER, counts, point, 0, 0.95) == pytest.approx(unified_critical(distance, 0.95),
                                                                            rel=1e-9)
    if distance > 3:
        assert critical_value(WARNER, counts, point, 0, 0.95) == pytest.approx(chi2.ppf(0.95, 1), rel=1e-9)
    else:
        assert critical_value(WARNER, counts, point, 0, 0.95) < chi2.ppf(0.95, 1) - 1e-3


def test_an_answer_impossible_at_the_point_adds_no_information() -> None:
    """Answers of probability 0 at the constrained point (here the third, which only the third input gives, at a
    point where its share is 0) carry no information there and are left out of it (a division by their
    probability 0 would make the variance nan, and the end would be held to chi2_1 as if far from the edge). The
    first share's variance is then that of Warner's estimate from the answers the two other inputs give, with
    their counts as independent Poisson counts (the third share free to take up their total):
    ``n var = sum_a q_a (M^-1)_{a0}^2 = 0.85``; with the total fixed (the third share pinned at 0), Warner's 0.84.
    """
    m = np.array([[0.75, 0.25, 0.0], [0.25, 0.75, 0.0], [0.0, 0.0, 1.0]])
    counts = np.array([120.0, 80.0, 0.0])
    point = np.array([0.1, 0.9, 0.0])
    q = point[:2] @ WARNER
    free = float(q @ np.linalg.inv(WARNER)[:, 0] ** 2)
    assert free == pytest.approx(0.85) and _warner_se(0.1, 1.0) ** 2 == pytest.approx(0.84)
    value = critical_value(m, counts, point, 0, 0.95)
    assert value == pytest.approx(unified_critical(0.1 / math.sqrt(free / 200.0), 0.95), rel=1e-9)


# ---------------------------------------------------------------- the statistic's constrained maximum

KRR3 = np.array([[0.6, 0.2, 0.2], [0.2, 0.6, 0.2], [0.2, 0.2, 0.6]])  # 3-RR, each answer true with 0.6
KRR3_COUNTS = np.array([50.0, 30.0, 20.0])
KRR3_MAX = np.array([0.75, 0.25, 0.0])  # (observed - 0.2) / 0.4: the answers' shares exactly, on the simplex's edge


def _loglik(pi: np.ndarray) -> float:
    return float(KRR3_COUNTS @ np.log(pi @ KRR3))


def _constrained_best(v: float) -> tuple[float, np.ndarray]:
    """The maximum log-likelihood with the first share at ``v``, over the second share on a fine grid refined by
    golden-section search (the other is ``1 - v - second``)."""
    from scipy.optimize import minimize_scalar

    rest = 1 - v
    found = minimize_scalar(lambda t: -_loglik(np.array([v, t, rest - t])), bounds=(0.0, rest), method="bounded",
                            options={"xatol": 1e-12})
    t = float(found.x)
    return _loglik(np.array([v, t, rest - t])), np.array([v, t, rest - t])


def test_an_unverified_cold_fit_gives_way_to_the_fit_from_the_maximum(monkeypatch) -> None:
    """When the constrained fit from equal shares is not verified, the one started from the maximum's shares is
    tried and the higher of the two kept, with its own verdict: the statistic is then the true one. Without a
    maximum to start from, the cold fit and its verdict are all there is."""
    original = share_tests.constrained_shares
    best = _loglik(KRR3_MAX)
    cold = np.array([0.3, 0.6, 0.1])  # on the constraint, below its maximum

    def cold_fails(m, c, s, v, *, start=None):
        return (cold.copy(), False) if start is None else original(m, c, s, v, start=start)

    monkeypatch.setattr(share_tests, "constrained_shares", cold_fails)
    top, where = _constrained_best(0.3)
    lr, point, verified = profile_statistic(KRR3, KRR3_COUNTS, best, 0, 0.3, fallback=np.array([0.7, 0.2, 0.1]))
    assert verified
    assert point == pytest.approx(where, abs=1e-6)
    assert lr == pytest.approx(2 * (best - top), rel=1e-9)
    lr, point, verified = profile_statistic(KRR3, KRR3_COUNTS, best, 0, 0.3)
    assert not verified and point.tolist() == cold.tolist()
    assert lr == pytest.approx(2 * (best - _loglik(cold)), rel=1e-12)


def test_a_verified_cold_fit_is_kept_as_it_is(monkeypatch) -> None:
    """A verified constrained maximum is the statistic's point: no second fit is made from the fallback (whose
    unverified point, here the unconstrained maximum, off the constraint and higher, would shrink the
    statistic)."""
    original = share_tests.constrained_shares
    calls = []

    def second_fit_cheats(m, c, s, v, *, start=None):
        calls.append(start is None)
        return original(m, c, s, v) if start is None else (KRR3_MAX, False)

    monkeypatch.setattr(share_tests, "constrained_shares", second_fit_cheats)
    best = _loglik(KRR3_MAX)
    top, where = _constrained_best(0.3)
    lr, point, verified = profile_statistic(KRR3, KRR3_COUNTS, best, 0, 0.3, fallback=KRR3_MAX)
    assert calls == [True] and verified
    assert point == pytest.approx(where, abs=1e-6)
    assert lr == pytest.approx(2 * (best - top), rel=1e-9)


def test_profile_interval_ends_sit_where_the_statistic_meets_its_critical_value() -> None:
    """Each end of Warner's profile interval (20 'yes' of 100, at the edge) is where the likelihood-ratio
    statistic, computed here from Warner's closed-form likelihood, equals the unified approach's critical value
    at that end."""
    counts = np.array([20.0, 80.0])
    low, high = profile_intervals(WARNER, counts, np.array([0.0, 1.0]), 0.95)
    assert low[0] == 0.0 and high[1] == 1.0

    def lr(v: float) -> float:  # the binomial likelihood of 'yes' at lam(v), against its maximum at lam = 0.25
        lam = 0.75 * v + 0.25 * (1 - v)
        return 2 * (20 * math.log(0.25 / lam) + 80 * math.log(0.75 / (1 - lam)))

    end = float(high[0])
    distance = end / _warner_se(end, 100.0)
    assert lr(end) == pytest.approx(unified_critical(distance, 0.95), abs=1e-8)
    assert 1 - float(low[1]) == pytest.approx(end, abs=1e-12)


# ---------------------------------------------------------------- the words

def test_the_boundary_warning_names_the_shares_and_says_why() -> None:
    assert boundary_warning(["no", "maybe"], 0.9) == (
        "the maximum lies on the boundary: 'no', 'maybe' at 0 (the likelihood would rise further outside the "
        "simplex). A Wald interval assumes an interior maximum: the shares near the boundary have the profile "
        "likelihood's interval at 0.9 (their standard errors, the curvature's there, are for reference)")
    assert boundary.BOUNDARY_TOL == 1e-8


def test_of_two_fits_as_high_the_verified_one_gives_the_verdict(monkeypatch) -> None:
    """The cold fit reached the constrained maximum but could not verify it; the fit from the maximum reaches the
    same point and verifies it: the statistic is verified."""
    original = share_tests.constrained_shares

    def cold_unsure(m, c, s, v, *, start=None):
        point, verified = original(m, c, s, v, start=start)
        return point, verified and start is not None

    monkeypatch.setattr(share_tests, "constrained_shares", cold_unsure)
    best = _loglik(KRR3_MAX)
    _, _, verified = profile_statistic(KRR3, KRR3_COUNTS, best, 0, 0.3, fallback=KRR3_MAX)
    assert verified
    _, _, verified = profile_statistic(KRR3, KRR3_COUNTS, best, 0, 0.3)
    assert not verified


def test_the_statistic_is_zero_at_the_maximum_and_infinite_where_an_answer_is_impossible() -> None:
    """At the maximum's own share the statistic is 0 (not floored at some positive value); where the constraint
    makes an observed answer impossible (the first input gives only the first answer: all of it leaves none for
    the second) the likelihood is 0 and the statistic infinite."""
    best = _loglik(KRR3_MAX)
    lr, _, verified = profile_statistic(KRR3, KRR3_COUNTS, best, 0, 0.75)
    assert verified and 0.0 <= lr < 1e-9
    m = np.array([[1.0, 0.0], [0.5, 0.5]])
    counts = np.array([70.0, 30.0])
    top = float(counts @ np.log(np.array([0.4, 0.6]) @ m))  # the maximum: second share 0.6 gives answers 0.7/0.3
    lr, _, _ = profile_statistic(m, counts, top, 0, 1.0)
    assert lr == math.inf
    lr, _, _ = profile_statistic(m, counts, top, 0, 0.4)
    assert lr == pytest.approx(0.0, abs=1e-9)


def test_only_the_chosen_shares_get_profile_intervals_and_none_means_all() -> None:
    """``shares`` picks the shares whose ends are searched; the others keep the maximum's value at both ends; with
    none given every share is searched. A design with more answers than inputs (2 inputs, 3 answers) sizes the
    loop by the inputs."""
    q2x3 = np.array([[0.6, 0.2, 0.2], [0.2, 0.6, 0.2]])  # 2 inputs, 3 answers
    counts = np.array([30.0, 50.0, 20.0])
    from designer.estimation.mle import mle_newton

    pi = mle_newton(q2x3, counts)[0]
    low, high = profile_intervals(q2x3, counts, pi, 0.95, shares=np.array([False, True]))
    assert low[0] == high[0] == pi[0] and low[1] < pi[1] < high[1]
    every = profile_intervals(q2x3, counts, pi, 0.95)
    assert every[0][1] == low[1] and every[1][1] == high[1]
    assert every[0][0] < pi[0] < every[1][0]
    assert every[0][0] == pytest.approx(1 - every[1][1], abs=1e-9)  # two inputs: share 0's ends mirror share 1's


def test_profile_intervals_hold_when_the_cold_constrained_fits_fail(monkeypatch) -> None:
    """Every constrained fit started from equal shares fails (unverified, at a poor point): the intervals are
    still the true ones, from the fits started at the maximum."""
    counts = np.array([20.0, 80.0])
    truth = profile_intervals(WARNER, counts, np.array([0.0, 1.0]), 0.95)
    original = share_tests.constrained_shares
    k3_truth = profile_intervals(KRR3, KRR3_COUNTS, KRR3_MAX, 0.95)

    def cold_fails(m, c, s, v, *, start=None):
        if start is None:
            poor = np.full(m.shape[0], (1 - v) / max(m.shape[0] - 1, 1))
            poor[s] = v
            if m.shape[0] > 2:
                poor[[j for j in range(m.shape[0]) if j != s]] = 0.0
                poor[(s + 1) % m.shape[0]] = 1 - v
            return poor, False
        return original(m, c, s, v, start=start)

    monkeypatch.setattr(share_tests, "constrained_shares", cold_fails)
    assert np.allclose(profile_intervals(WARNER, counts, np.array([0.0, 1.0]), 0.95), truth, atol=1e-9)
    assert np.allclose(profile_intervals(KRR3, KRR3_COUNTS, KRR3_MAX, 0.95), k3_truth, atol=1e-8)


def test_an_end_reaches_the_range_only_where_the_statistic_there_is_within_its_critical_value() -> None:
    """Warner's design, 3 'yes' of 5: share 0's upper end is 1 (the statistic at 1 is below its critical value)
    and its lower end is found inside (the statistic at 0 exceeds its critical value by 0.03: not a reason to stop
    at 0); share 1 mirrors it, both of its ends searched."""
    counts = np.array([3.0, 2.0])
    low, high = profile_intervals(WARNER, counts, np.array([0.7, 0.3]), 0.95)
    assert high[0] == 1.0 and low[1] == 0.0
    assert 0.0 < low[0] < 0.01 and high[1] == pytest.approx(1 - low[0], abs=1e-9)

    def lr(v: float) -> float:  # the binomial likelihood of 'yes' at lam(v) against its maximum at lam = 0.6
        lam = 0.75 * v + 0.25 * (1 - v)
        return 2 * (3 * math.log(0.6 / lam) + 2 * math.log(0.4 / (1 - lam)))

    end = float(low[0])
    assert lr(end) == pytest.approx(unified_critical(end / _warner_se(end, 5.0), 0.95), abs=1e-8)


def test_near_edge_intervals_replace_exactly_the_shares_near_an_edge() -> None:
    """A share gets the profile interval when it is on the edge, at 1, without a standard error, or within
    ``z + 2`` standard errors of 0 or 1 (``3.96 se`` at 0.95: here the two thresholds sit between se 0.0631 and
    0.0632 for shares 0.75 and 0.25); the others keep their Wald interval (here the sentinels -7 and 7), and with
    none near the given arrays come back as they are."""
    from designer.estimation.boundary import near_edge_intervals

    counts = KRR3_COUNTS

    def replaced(pi, se, edge=(False, False, False)) -> list[bool]:
        low, high = near_edge_intervals(KRR3, counts, np.array(pi), np.array(se), np.array(edge), 0.95,
                                        np.full(3, -7.0), np.full(3, 7.0))
        assert all((lo == -7.0) == (hi == 7.0) for lo, hi in zip(low, high))
        assert all(0.0 <= lo <= hi <= 1.0 for lo, hi in zip(low, high) if lo != -7.0)
        return [bool(lo != -7.0) for lo in low]

    far = [0.0631, 0.0631, 0.0]
    low, high = np.full(3, -7.0), np.full(3, 7.0)
    same = near_edge_intervals(KRR3, counts, KRR3_MAX, np.array(far), np.zeros(3, bool), 0.95, low, high)
    assert same[0] is low and same[1] is high
    assert replaced(KRR3_MAX, [0.0632, 0.0631, 0.0]) == [True, False, False]  # 0.75 + 3.96 se > 1
    assert replaced(KRR3_MAX, [0.0631, 0.0632, 0.0]) == [False, True, False]  # 0.25 - 3.96 se < 0
    assert replaced(KRR3_MAX, [0.0631, 0.0631, np.nan]) == [False, False, True]  # no standard error
    assert replaced(KRR3_MAX, far, (False, False, True)) == [False, False, True]  # on the edge
    assert replaced([1.0, 0.0, 0.0], [0.0, 0.0, 0.0]) == [True, False, False]  # at 1, even with a 0 error


def test_a_share_at_zero_is_on_the_boundary_when_the_likelihood_would_rise_below_it() -> None:
    """``g_x`` (the derivative of the log-likelihood per answer along input ``x``) below 1 at a share of 0: the
    maximum is held there by the constraint. Computed here by hand over every observed answer: Warner's design at
    p = 0.9, one 'yes' of five, at the point (0, 1): ``g_0 = 0.9 / (5 0.1) + 4 (0.1) / (5 0.9) = 1.89`` (not on
    the boundary: the likelihood rises into the simplex), which a sum over the answers seen more than once (0.11)
    would call the boundary; Warner at 0.75 with 20% 'yes' at (0, 1): ``g_0 = 0.6`` (on it); a share above 0 is
    never on it; three inputs, one never answered at a point where it is 0 (its answer leaves the sum: ``g`` of
    the first two as in Warner's, ``g_2 = 0``)."""
    from designer.estimation.boundary import at_boundary

    warner9 = np.array([[0.9, 0.1], [0.1, 0.9]])
    g0 = 0.9 * 1 / (5 * 0.1) + 0.1 * 4 / (5 * 0.9)
    assert g0 == pytest.approx(1.8889, abs=1e-4)
    assert at_boundary(warner9, np.array([1.0, 4.0]), np.array([0.0, 1.0])).tolist() == [False, False]
    assert at_boundary(WARNER, np.array([20.0, 80.0]), np.array([0.0, 1.0])).tolist() == [True, False]
    assert at_boundary(WARNER, np.array([20.0, 80.0]), np.array([0.2, 0.8])).tolist() == [False, False]
    three = np.array([[0.75, 0.25, 0.0], [0.25, 0.75, 0.0], [0.0, 0.0, 1.0]])
    edge = at_boundary(three, np.array([20.0, 80.0, 0.0]), np.array([0.0, 1.0, 0.0]))
    assert edge.dtype == bool and edge.tolist() == [True, False, True]
    # g exactly 1 (a flat likelihood along the share, 25% 'yes' at p = 0.75): not held by the constraint
    assert at_boundary(WARNER, np.array([25.0, 75.0]), np.array([0.0, 1.0])).tolist() == [False, False]
    # g within BOUNDARY_TOL of 1 is flat too; a little further below it is the boundary
    assert at_boundary(WARNER, np.array([25.0 - 1e-7, 75.0 + 1e-7]), np.array([0.0, 1.0])).tolist()[0] is False
    assert at_boundary(WARNER, np.array([24.99, 75.01]), np.array([0.0, 1.0])).tolist()[0] is True
    # an observed answer impossible at the point: no verdict (the point is no maximum), all False, one per input
    one_way = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
    none = at_boundary(one_way, np.array([5.0, 5.0]), np.array([1.0, 0.0, 0.0]))
    assert none.dtype == bool and none.tolist() == [False] * 3
