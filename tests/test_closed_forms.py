import math

import numpy as np
import pytest
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
