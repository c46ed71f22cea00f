import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import designer as d
from designer import closed_forms as cf
from designer.estimation.shares import chi2_information, estimator_variance, fisher_information


@pytest.mark.parametrize("eps", [0.5, 1.0, 3.0])
def test_warner_variance_is_the_fisher_variance(eps):
    p = math.exp(eps) / (1 + math.exp(eps))
    for pi in (0.2, 0.5, 0.9):
        assert estimator_variance(d.Q_WRR(eps), [pi, 1 - pi]) == pytest.approx(cf.warner_variance(p, pi))


@pytest.mark.parametrize("k,eps", [(3, 1.0), (6, 0.5), (10, 2.0)])
def test_krr_and_subset_selection_match_fisher(k, eps):
    import itertools

    assert estimator_variance(d.Q_kRR(eps, k)) == pytest.approx(cf.krr_variance(eps, k), rel=1e-10)
    e = math.exp(eps)
    for size in range(1, k):
        sets = [sum(1 << i for i in c) for c in itertools.combinations(range(k), size)]
        m = np.array([[e if s >> x & 1 else 1.0 for s in sets] for x in range(k)])
        mech = d.Mechanism(m / m.sum(axis=1, keepdims=True), focal=sets)
        assert estimator_variance(mech) == pytest.approx(cf.subset_selection_variance(eps, k, size), rel=1e-9)
    assert cf.subset_selection_variance(eps, k, 1) == pytest.approx(cf.krr_variance(eps, k))


def test_q2x3_exact_variance_by_enumeration():
    """Thm 3.10 (with the 1/(1 - q3^n) factor) against exact enumeration of all (n1, n2, n3)."""
    for p, q, pi, n in [(0.6, 0.2, 0.3, 7), (0.5, 0.3, 0.5, 12), (0.7, 0.1, 0.8, 5)]:
        q3 = 1 - p - q
        q1, q2 = pi * p + (1 - pi) * q, pi * q + (1 - pi) * p
        mean = second = total = 0.0
        for n1 in range(n + 1):
            for n2 in range(n + 1 - n1):
                n3 = n - n1 - n2
                if n1 + n2 == 0:
                    continue
                w = stats.multinomial.pmf([n1, n2, n3], n, [q1, q2, q3])
                est = cf.q2x3_mle(n1, n2, p, q)
                total += w
                mean += w * est
                second += w * est * est
        mean /= total
        var = second / total - mean**2
        assert mean == pytest.approx(pi, abs=1e-10)  # Thm 3.9
        assert var == pytest.approx(cf.q2x3_variance_exact(p, q, pi, n), abs=1e-10)


def test_chi2_information_relations():
    q = d.Q_2x3(0.6, 0.2)
    for pi in (0.3, 0.5):
        prior = [pi, 1 - pi]
        info = fisher_information(q, prior)
        scalar = info[0, 0] - 2 * info[0, 1] + info[1, 1]  # information about pi along (1, -1)
        assert chi2_information(q, prior) == pytest.approx(pi * (1 - pi) * scalar)
        assert estimator_variance(q, prior) == pytest.approx(1 / scalar)


def test_gwrr_closed_forms():
    p, q = cf.gwrr_sldp(1.0, 0.8)
    assert p / q == pytest.approx(math.e) and p + q == pytest.approx(0.8)
    with pytest.raises(d.InfeasibleDesignError, match="2/\\(1\\+e\\^eps\\)"):
        cf.gwrr_wldp(1.0, 0.5)
    assert cf.wldp_min_answer_mass(1.0) == pytest.approx(1 - math.tanh(0.5))
    assert cf.warner_mle(60, 100, 0.75) == pytest.approx((0.6 - 0.25) / 0.5)


def test_one_vocabulary_with_deprecated_aliases():
    import warnings

    from designer import closed_forms as cf

    p, q = 0.6, 0.2
    assert cf.q2x3_eps_shafer(p, q) == pytest.approx(math.log(3))
    assert cf.q2x3_eps_walley(p, q) == pytest.approx(math.log(4))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert cf.eps_s(p, q) == cf.q2x3_eps_shafer(p, q)
        assert cf.nu_o(p, q, 0.3, 10) == cf.q2x3_nu_optimistic(p, q, 0.3, 10)
    assert [w.category for w in caught] == [DeprecationWarning, DeprecationWarning]


# ---------------------------------------------------------------- the peers (issue 48): k-RR, subset selection, OUE,
# GWRR; textbook estimators against enumeration of the outputs, MLE variances against finite differences


def _held(masks, k):
    """Items "held" by each output (indicator rows): the items of an answer set, the 1 bits of OUE's bit vector."""
    return ((np.asarray(masks)[:, None] >> np.arange(k)) & 1).astype(float)


def _enumerated_textbook_variance(matrix, held, p, q, prior):
    """Exact variance of the per-item estimators (held_x - q)/(p - q) of one respondent, by summing over outputs."""
    out = prior @ matrix  # probability of each output
    est = (held - q) / (p - q)  # (outputs, k)
    mean = out @ est
    assert mean == pytest.approx(prior, abs=1e-12)  # unbiased
    return out @ (est - prior) ** 2


def _fd_share_variances(matrix, prior, h=1e-4):
    """Var(pi_hat_x) of the MLE from the Hessian of the KL divergence by central differences, in the coordinates
    pi_0..pi_{k-2} (pi_{k-1} = 1 - their sum): no Fisher-information formula used."""
    k = prior.size
    p0 = prior @ matrix
    keep = p0 > 0

    def kl(theta):
        pi = np.append(theta, 1 - theta.sum())
        p = pi @ matrix
        return float(np.sum(p0[keep] * np.log(p0[keep] / p[keep])))

    base = prior[:-1]
    m = k - 1
    hess = np.empty((m, m))
    for i in range(m):
        for j in range(m):
            ei, ej = np.eye(m)[i] * h, np.eye(m)[j] * h
            hess[i, j] = (kl(base + ei + ej) - kl(base + ei - ej) - kl(base - ei + ej)
                          + kl(base - ei - ej)) / (4 * h * h)
    cov = np.linalg.inv(hess)
    return np.append(np.diag(cov), cov.sum())


@pytest.mark.parametrize("k,eps,seed", [(3, 0.5, 1), (4, 2.0, 2), (5, 1.0, 3)])
def test_textbook_variances_by_enumeration(k, eps, seed):
    from designer.constructors import Q_kRR, Q_subset_selection

    prior = np.random.default_rng(seed).dirichlet([1.0] * k)
    p, q = math.exp(eps) / (math.exp(eps) + k - 1), 1 / (math.exp(eps) + k - 1)
    krr = Q_kRR(eps, k)
    brute = _enumerated_textbook_variance(krr.matrix, _held(krr.focal, k), p, q, prior)
    assert cf.krr_variance(eps, k, prior=prior, reduce="none") == pytest.approx(brute, rel=1e-12)
    for size in range(1, k):
        e = math.exp(eps)
        p_in = size * e / (size * e + k - size)
        q_in = p_in * (size - 1) / (k - 1) + (1 - p_in) * size / (k - 1)
        mech = Q_subset_selection(eps, k, size)
        brute = _enumerated_textbook_variance(mech.matrix, _held(mech.focal, k), p_in, q_in, prior)
        assert cf.subset_selection_variance(eps, k, size, prior=prior, reduce="none") == pytest.approx(brute, rel=1e-12)
    brute = _enumerated_textbook_variance(cf.oue_probabilities(eps, k), _held(np.arange(1 << k), k), 0.5,
                                          1 / (math.exp(eps) + 1), prior)
    assert cf.oue_variance(eps, k, prior=prior, reduce="none") == pytest.approx(brute, rel=1e-12)
    assert cf.oue_variance(eps, k, prior=prior, reduce="max") == pytest.approx(brute.max(), rel=1e-12)


@pytest.mark.parametrize("k,eps,seed", [(3, 0.5, 4), (4, 2.0, 5), (5, 1.0, 6)])
def test_mle_variances_by_finite_differences(k, eps, seed):
    """Three routes to the MLE's variance: ``F^-1 - pi pi'`` (closed_forms), the tangent-space inverse
    (estimation.estimator_variance) and the curvature of the KL divergence by finite differences."""
    from designer.constructors import Q_subset_selection

    prior = np.random.default_rng(seed).dirichlet([2.0] * k)
    for size in range(1, k):
        mech = Q_subset_selection(eps, k, size)
        mle = cf.subset_selection_variance(eps, k, size, prior=prior, estimator="mle", reduce="none")
        assert mle == pytest.approx(estimator_variance(mech, prior, reduce="none"), rel=1e-9)
        assert mle == pytest.approx(_fd_share_variances(mech.matrix, prior), rel=1e-5)
    oue = cf.oue_variance(eps, k, prior=prior, estimator="mle", reduce="none")
    assert oue == pytest.approx(_fd_share_variances(cf.oue_probabilities(eps, k), prior), rel=1e-5)
    assert cf.krr_variance(eps, k, prior=prior, reduce="none") == pytest.approx(
        _fd_share_variances(d.Q_kRR(eps, k).matrix, prior), rel=1e-5)


@pytest.mark.parametrize("eps,c,pi", [(0.5, 1.0, 0.3), (1.0, 0.6, 0.5), (3.0, 0.25, 0.9)])
def test_gwrr_variance(eps, c, pi):
    mech = d.Q_GWRR(eps, c)
    assert cf.gwrr_variance(eps, c, pi) == pytest.approx(estimator_variance(mech, [pi, 1 - pi]), rel=1e-9)
    assert cf.gwrr_variance(eps, c, pi) == pytest.approx(_fd_share_variances(mech.matrix, np.array([pi, 1 - pi])),
                                                          rel=1e-5)
    p, q = cf.gwrr_sldp(eps, c)
    n = 20000  # Thm 3.10's exact finite-n variance tends to the asymptotic one
    assert n * cf.q2x3_variance_exact(p, q, pi, n) == pytest.approx(cf.gwrr_variance(eps, c, pi), rel=1e-3)
    if c == 1.0:
        assert cf.gwrr_variance(eps, c, pi) == pytest.approx(cf.warner_variance(p, pi), rel=1e-12)


def test_the_issues_numbers():
    skewed = [0.4, 0.3, 0.15, 0.1, 0.05]
    assert cf.krr_variance(0.5, 6) == pytest.approx(14.5891, abs=5e-5)
    assert cf.subset_selection_variance(0.5, 6) == pytest.approx(10.9843, abs=5e-5)
    assert cf.subset_selection_variance(0.5, 6, estimator="mle") == pytest.approx(10.9843, abs=5e-5)
    assert cf.krr_variance(2.0, 5, prior=skewed) == pytest.approx(0.491419, abs=5e-7)
    assert cf.krr_variance(2.0, 5, prior=skewed, reduce="max") == pytest.approx(0.682330, abs=5e-7)


@settings(max_examples=40, deadline=None)
@given(k=st.integers(2, 6), eps=st.floats(0.1, 5.0), seed=st.integers(0, 2**32 - 1),
       alpha=st.sampled_from([0.5, 1.0, 5.0]))
def test_the_mle_is_never_worse_than_the_textbook_estimator(k, eps, seed, alpha):
    """Cramer-Rao: the textbook estimators are unbiased, so each share's variance is at least the MLE's; for k-RR they
    are the same estimator, and for subset selection they agree at the uniform prior."""
    prior = np.random.default_rng(seed).dirichlet([alpha] * k)
    prior = np.maximum(prior, 0.005)
    prior /= prior.sum()
    for dd in range(1, k):
        text = cf.subset_selection_variance(eps, k, dd, prior=prior, reduce="none")
        mle = cf.subset_selection_variance(eps, k, dd, prior=prior, estimator="mle", reduce="none")
        assert np.all(mle <= text * (1 + 1e-9))
        uniform = cf.subset_selection_variance(eps, k, dd, estimator="mle", reduce="none")
        assert uniform == pytest.approx(cf.subset_selection_variance(eps, k, dd, reduce="none"), rel=1e-8)
    assert np.all(cf.oue_variance(eps, k, prior=prior, estimator="mle", reduce="none")
                  <= cf.oue_variance(eps, k, prior=prior, reduce="none") * (1 + 1e-9))
    assert cf.subset_selection_variance(eps, k, 1, prior=prior, estimator="mle", reduce="none") == pytest.approx(
        cf.krr_variance(eps, k, prior=prior, reduce="none"), rel=1e-8)
    best = cf.subset_selection_best_d(eps, k, prior, estimator="mle", reduce="max")
    values = [cf.subset_selection_variance(eps, k, dd, prior=prior, estimator="mle", reduce="max")
              for dd in range(1, k)]
    assert values[best - 1] == min(values)
    assert cf.subset_selection_variance(eps, k, prior=prior, estimator="mle", reduce="max") == min(values)


def test_subset_selection_mechanism():
    from designer.constructors import Q_subset_selection

    for eps in (0.3, 1.0, 4.0):
        assert np.array_equal(Q_subset_selection(eps, 5, 1).matrix, d.Q_kRR(eps, 5).matrix)
        for k, size in [(4, 2), (6, 3), (7, 2)]:
            mech = Q_subset_selection(eps, k, size)
            assert mech.matrix.shape == (k, math.comb(k, size))
            assert sorted(bin(m).count("1") for m in mech.focal) == [size] * math.comb(k, size)
            assert np.allclose(mech.matrix.sum(axis=1), 1, atol=1e-15)
            assert d.is_private(mech, eps, exact=True)
            assert d.eps_shafer(mech) == pytest.approx(eps, abs=1e-12)
    mech = Q_subset_selection(1.0, ["a", "b", "c"], 2)
    assert mech.inputs == mech.frame == ("a", "b", "c")
    for bad, word in [(0, "d must be"), (3, "below")]:
        with pytest.raises(d.DesignerError, match=word):
            Q_subset_selection(1.0, 3, bad)
    with pytest.raises(d.DesignerError, match="binom"):
        Q_subset_selection(1.0, 40, 20)


def test_bad_peer_arguments_name_the_keyword():
    with pytest.raises(d.DesignerError, match="reduce"):
        cf.krr_variance(1.0, 3, reduce="median")
    with pytest.raises(d.DesignerError, match="estimator"):
        cf.oue_variance(1.0, 3, estimator="bayes")
    with pytest.raises(d.DesignerError, match="estimator='textbook'"):
        cf.oue_variance(1.0, 30, estimator="mle")
    with pytest.raises(d.DesignerError, match="estimator='textbook'"):
        cf.subset_selection_variance(1.0, 40, 20, estimator="mle")
    with pytest.raises(d.DesignerError, match="probabilities"):
        cf.mle_share_variances([[0.5, 0.6], [0.5, 0.5]])
    assert np.all(np.isinf(cf.mle_share_variances([[0.5, 0.5], [0.5, 0.5]])))  # not identified
