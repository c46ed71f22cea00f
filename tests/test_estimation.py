import math

import numpy as np
import pytest
from scipy import stats

import designer as d
from designer import closed_forms as cf
from designer.estimation.sampling import precise_distributions, randomize, randomize_precise
from designer.estimation.shares import (
    EM_ITERATIONS,
    em,
    estimate_sldp,
    identified_set,
    inversion_estimate,
    mle_convex,
    response_counts,
)
from designer.estimation.simulation import simulate, summarize
from designer.optimal import DesignProblem, design


def test_randomize_frequencies_pass_a_chi_square_test():
    rng = np.random.default_rng(11)
    for mech in (d.Q_WRR(1.0), d.Q_GWRR(1.0, 0.8), d.Q_kRR(0.7, 5)):
        x = rng.choice(list(mech.inputs), 100_000)
        drawn = randomize(mech, x, rng)
        for row, label in enumerate(mech.inputs):
            sel = x == label
            observed = np.bincount(drawn[sel], minlength=len(mech.focal))
            expected = mech.matrix[row] * sel.sum()
            assert stats.chisquare(observed, expected).pvalue > 1e-3


def test_randomize_is_seeded():
    x = np.random.default_rng(0).choice(["yes", "no"], 1_000_000)
    a = randomize(d.Q_2x3(0.6, 0.2), x, 5)
    assert np.array_equal(a, randomize(d.Q_2x3(0.6, 0.2), x, 5))
    with pytest.raises(d.InvalidMechanismError, match="'maybe'"):
        randomize(d.Q_2x3(0.6, 0.2), ["yes", "maybe"], 1)


@pytest.mark.parametrize("lam", [0.0, 0.3, 1.0])
def test_lambda_allocation_is_q_lambda(lam):
    np.testing.assert_allclose(precise_distributions(d.Q_2x3(0.6, 0.2), lam), d.Q_lambda(0.6, 0.2, lam).matrix)


def test_em_and_convex_mle_agree():
    rng = np.random.default_rng(3)
    for mech, prior in [(d.Q_2x3(0.6, 0.2), [0.3, 0.7]), (d.Q_kRR(1.0, 5), [0.1, 0.2, 0.3, 0.25, 0.15]),
                        (d.Q_kRR(1.0, 4), [0.0, 0.1, 0.6, 0.3])]:
        counts = rng.multinomial(50_000, np.asarray(prior) @ mech.matrix).astype(float)
        a, _ = em(mech.matrix, counts)
        b = mle_convex(mech.matrix, counts)
        assert np.max(np.abs(a - b)) < 1e-6
    # Q_2x3: the MLE is Eq 2 when it lies inside [0, 1]
    counts = np.array([3100.0, 4900.0, 2000.0])
    assert em(d.Q_2x3(0.6, 0.2).matrix, counts)[0][0] == pytest.approx(cf.q2x3_mle(3100, 4900, 0.6, 0.2), abs=1e-9)


def test_em_hands_a_crawl_to_the_active_set_after_its_step_limit():
    """Answers in exactly the proportions of (0.6, 0.4, 0): the maximum lies on the simplex's edge with a zero
    multiplier, where EM's steps shrink like 1/t. After EM_ITERATIONS steps the active-set Newton method finishes:
    the exact maximum, in Newton's verdict, and no 200,000-step crawl."""
    m = d.Q_kRR(1.0, 3)
    counts = np.array([0.6, 0.4, 0.0]) @ m.matrix * 1000
    newton, crawl = estimate_sldp(m, counts), estimate_sldp(m, counts, method="em")
    assert EM_ITERATIONS < crawl.iterations <= EM_ITERATIONS + 500
    assert crawl.converged and str(crawl.status) == str(newton.status)
    np.testing.assert_allclose(crawl.estimate, [0.6, 0.4, 0.0], atol=1e-9)
    np.testing.assert_allclose(crawl.stderr, newton.stderr, rtol=1e-6)
    convex = estimate_sldp(m, counts, method="convex")  # the conic solver's own steps are not counted
    assert convex.iterations == 0 and convex.converged
    np.testing.assert_allclose(convex.estimate, [0.6, 0.4, 0.0], atol=1e-9)


def test_round_trip_recovers_the_prior_within_three_standard_errors():
    rng = np.random.default_rng(2024)
    five = tuple(f"o{i}" for i in range(5))
    designed = design(DesignProblem(inputs=five, epsilon=1.5, objective="chi2", dont_know_max=0.2)).mechanism
    for mech, prior in [(d.Q_WRR(1.0), [0.3, 0.7]), (d.Q_GWRR(1.0, 0.8), [0.65, 0.35]),
                        (designed, [0.1, 0.3, 0.25, 0.2, 0.15])]:
        x = rng.choice(list(mech.inputs), 100_000, p=prior)
        columns = [mech.columns[j] for j in randomize(mech, x, rng)]
        est = estimate_sldp(mech, response_counts(mech, columns))
        assert np.all(np.abs(est.estimate - prior) <= 3 * est.stderr), (est.estimate, prior, est.stderr)
        assert np.all(est.ci_low <= est.estimate) and np.all(est.estimate <= est.ci_high)


@pytest.mark.parametrize("lam", [0.0, 0.5, 1.0])
def test_identified_set_covers_the_truth_and_shrinks_to_the_credal_width(lam):
    rng = np.random.default_rng(7)
    q = d.Q_2x3(0.6, 0.2)
    prior = np.array([0.3, 0.7])
    widths = []
    for n in (1_000, 10_000, 100_000, 1_000_000):
        x = rng.choice(["yes", "no"], n, p=prior)
        y = randomize_precise(q, x, rng, allocation=lam)
        s = identified_set(q, np.bincount(y, minlength=2))
        assert np.all(s.lower <= prior + 1e-12) and np.all(prior <= s.upper + 1e-12)
        widths.append(s.upper[0] - s.lower[0])
    # Population identified set at the true frequency: pi = (f - b)/(a - b), a in [p, p+d], b in [q, q+d].
    f = prior @ precise_distributions(q, lam)[:, 0]
    ends = [(f - b) / (a - b) for a in (0.6, 0.8) for b in (0.2, 0.4)]
    credal = min(1.0, max(ends)) - max(0.0, min(ends))
    assert widths == sorted(widths, reverse=True)
    assert widths[-1] == pytest.approx(credal, abs=0.01)
    exact = identified_set(q, np.round(1e6 * np.array([f, 1 - f])), level=None)
    assert exact.upper[0] - exact.lower[0] == pytest.approx(credal, abs=1e-6)


def test_monte_carlo_matches_every_closed_form_variance():
    """10^4 surveys each (fixed seeds): variance within 5% of the closed form."""
    e = math.e
    cases = [
        (simulate(d.Q_WRR(1.0), [0.3, 0.7], 200, 10_000, 1, estimator="inversion"),
         cf.warner_variance(e / (e + 1), 0.3, 200)),  # Eq 1
        (simulate(d.Q_2x3(0.6, 0.2), [0.3, 0.7], 30, 10_000, 2, estimator="eq2"),
         cf.q2x3_variance_exact(0.6, 0.2, 0.3, 30)),  # Thm 3.10 exact
        (simulate(d.Q_2x3(0.6, 0.2), [0.4, 0.6], 400, 10_000, 3, estimator="eq2"),
         cf.q2x3_variance_approx(0.6, 0.2, 0.4, 400)),  # nu_S (approximation)
        (simulate(d.Q_kRR(1.0, 4), [0.25] * 4, 2_000, 10_000, 4, estimator="inversion"),
         cf.krr_variance(1.0, 4, 2_000)),
        (simulate(d.Q_2x3(0.6, 0.2), [0.3, 0.7], 500, 10_000, 5, estimator="inversion", semantics="wldp",
                  allocation=0.0), (-(0.3 - 0.5) ** 2 + 1 / (4 * 0.2**2)) / 500),  # nu_W
    ]
    for df, reference in cases:
        table = summarize(df, reference=[reference] * df.shape[1])
        assert np.all(np.abs(table["ratio"] - 1) < 0.05), table
    m, _, _, sets = _subset_selection(1.0, 6, 2)
    ss = d.Mechanism(m, focal=sets)
    df = simulate(ss, [1 / 6] * 6, 5_000, 10_000, 6, estimator="mle")
    table = summarize(df, reference=[cf.subset_selection_variance(1.0, 6, 2, 5_000)] * 6)
    assert np.all(np.abs(table["ratio"] - 1) < 0.05), table


def _subset_selection(eps, k, size):
    import itertools

    sets = [sum(1 << i for i in c) for c in itertools.combinations(range(k), size)]
    m = np.array([[math.exp(eps) if s >> x & 1 else 1.0 for s in sets] for x in range(k)])
    return m / m.sum(axis=1, keepdims=True), None, None, sets


def test_exact_enumeration_matches_theorem_3_10_up_to_30():
    for n in (1, 2, 10, 30):
        p, q, pi = 0.55, 0.25, 0.35
        q3 = 1 - p - q
        q1, q2 = pi * p + (1 - pi) * q, pi * q + (1 - pi) * p
        n1, n2 = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
        ok = (n1 + n2 <= n) & (n1 + n2 > 0)
        n1, n2 = n1[ok], n2[ok]
        w = stats.multinomial.pmf(np.c_[n1, n2, n - n1 - n2], n, [q1, q2, q3])
        est = (n2 * q - n1 * p) / ((n1 + n2) * (q - p))
        w = w / w.sum()
        mean = w @ est
        assert mean == pytest.approx(pi, abs=1e-10)  # Thm 3.9
        assert w @ (est - mean) ** 2 == pytest.approx(cf.q2x3_variance_exact(p, q, pi, n), abs=1e-10)



@pytest.mark.parametrize("n, c, percent", [
    (10, 0.6, 1.76), (10, 0.7, 0.87), (10, 0.8, 0.40), (10, 0.9, 0.145),
    (30, 0.6, 0.141), (30, 0.9, 0.014), (100, 0.6, 0.0115), (100, 0.7, 0.0063), (100, 0.9, 0.00125)])
def test_the_approximation_of_theorem_3_10_and_its_error(n, c, percent):
    """The paper's A ~ 1/((n+1)(p+q)-1) underestimates the exact variance by the README's table: a function
    of the answer mass c = p + q only (the same at every eps), 0 at c = 1."""
    for eps in (0.5, 1.0, 3.0):
        p, q = cf.gwrr_sldp(eps, c)
        exact, approx = cf.q2x3_variance_exact(p, q, 0.3, n), cf.q2x3_variance_approx(p, q, 0.3, n)
        assert 100 * (exact - approx) / exact == pytest.approx(percent, rel=0.03)
    p, q = cf.gwrr_sldp(1.0, 1.0)
    assert cf.q2x3_variance_exact(p, q, 0.3, n) == pytest.approx(cf.q2x3_variance_approx(p, q, 0.3, n), rel=1e-12)


def test_inversion_is_warners_estimator():
    p = 0.75
    w = d.Mechanism([[p, 1 - p], [1 - p, p]], inputs=["yes", "no"], frame=["yes", "no"], focal=[1, 2])
    est = inversion_estimate(w.matrix, np.array([60.0, 40.0]))
    assert est[0] == pytest.approx(cf.warner_mle(60, 100, p))


@pytest.mark.parametrize("seed", range(12))
def test_newton_mle_meets_the_kkt_conditions_on_random_mechanisms(seed):
    """Random set-valued mechanisms (k = 2..8, some shares 0 so that the optimum sits on the boundary): the
    Newton MLE satisfies the KKT conditions to 1e-10, reports convergence, and its log-likelihood is at
    least the convex program's (an independent solver)."""
    from designer.estimation.mle import kkt_violation, mle_convex, mle_newton

    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 9))
    m = rng.dirichlet(np.ones(3 * k) * 0.5, size=k)
    prior = rng.dirichlet(np.ones(k))
    prior[rng.random(k) < 0.3] = 0.0
    prior = prior / prior.sum() if prior.sum() > 0 else np.full(k, 1 / k)
    counts = rng.multinomial(int(rng.integers(50, 100_000)), prior @ m).astype(float)
    pi, iterations, converged = mle_newton(m, counts)
    assert converged and kkt_violation(m, counts, pi) <= 1e-10 and iterations < 500
    assert np.all(pi >= 0) and abs(pi.sum() - 1) < 1e-12
    other = mle_convex(m, counts)
    used = counts > 0
    ll = lambda p: counts[used] @ np.log(p @ m[:, used])  # noqa: E731
    assert ll(pi) >= ll(other) - 1e-7 * abs(ll(other))


def test_newton_mle_on_a_designed_16_answer_mechanism():
    from designer.optimal import DesignProblem, design

    mech = design(DesignProblem(inputs=tuple(f"v{i}" for i in range(16)), epsilon=0.5, objective="chi2")).mechanism
    rng = np.random.default_rng(0)
    counts = rng.multinomial(10**6, rng.dirichlet(np.ones(16)) @ mech.matrix).astype(float)
    est = estimate_sldp(mech, counts)
    assert est.method == "newton" and est.converged and est.kkt_violation <= 1e-10
    other = estimate_sldp(mech, counts, method="convex")  # an independent solver, polished
    assert other.loglik <= est.loglik + 1e-9 * abs(est.loglik)
    np.testing.assert_allclose(other.estimate, est.estimate, atol=1e-6)
