"""chi2 under WLDP: the best precise (Bayesian) mechanism with at most l outputs (docs/theory.md section 5).

Checked against subset selection built explicitly with all C(k, d) subsets (its chi-square information
is the staircase optimum), against the SLDP staircase LP for non-uniform priors, and for exact privacy.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import designer as d
from designer.estimation.shares import chi2_information
from designer.optimal import DesignProblem, design
from designer.optimal.precise import best_subset_size, cyclic_design, regular_design


def labels(k):
    return tuple(f"a{i}" for i in range(k))


def subset_selection(k, d_, eps):
    """Subset selection with every d-subset as a focal set (Wang et al. 2016), built by enumeration."""
    e = math.exp(eps)
    sets = [sum(1 << i for i in c) for c in itertools.combinations(range(k), d_)]
    m = np.array([[e if s >> x & 1 else 1.0 for s in sets] for x in range(k)])
    return d.Mechanism(m / m.sum(axis=1, keepdims=True), inputs=labels(k), frame=labels(k), focal=sets)


@pytest.mark.parametrize("k", [2, 3, 4, 5, 6, 8, 9])
@pytest.mark.parametrize("eps", [0.3, 1.0, 2.5])
def test_symmetric_precise_design_has_the_information_of_subset_selection(k, eps):
    r = design(DesignProblem(inputs=labels(k), epsilon=eps, semantics="wldp", objective="chi2"))
    mech = r.mechanism
    assert mech.is_bayesian and len(mech.focal) == k
    assert d.is_private(mech, eps, semantics="wldp", exact=True)
    best = max(chi2_information(subset_selection(k, s, eps), np.full(k, 1 / k)) for s in range(1, k))
    assert math.isfinite(r.variance)  # the design identifies the prior (nonsingular)
    if "not attained" in r.path:
        # k = 4, d = 2: no nonsingular 2-regular 4 x 4 pattern exists (unions of even cycles)
        assert (k, best_subset_size(k, eps)[0]) == (4, 2)
        assert r.objective_value < best
        return
    assert r.objective_value == pytest.approx(best, rel=1e-9)
    # the same value as the SLDP optimum (set-valued answers do not help the worst case)
    sldp = design(DesignProblem(inputs=labels(k), epsilon=eps, objective="chi2"))
    assert r.objective_value == pytest.approx(sldp.objective_value, rel=1e-9)


@pytest.mark.filterwarnings("ignore::designer.exceptions.DesignWarning")  # skewed priors may lump inputs
@pytest.mark.parametrize("prior", [[0.5, 0.3, 0.2], [0.1, 0.2, 0.3, 0.4], [0.7, 0.1, 0.1, 0.05, 0.05]])
def test_asymmetric_precise_design_attains_the_staircase_optimum(prior):
    k = len(prior)
    problem = DesignProblem(inputs=labels(k), epsilon=1.0, semantics="wldp", objective="chi2", prior=prior)
    r = design(problem)
    sldp = design(problem.replace(semantics="sldp"))
    assert r.mechanism.is_bayesian
    assert r.objective_value == pytest.approx(sldp.objective_value, rel=1e-7)
    assert d.is_private(r.mechanism, 1.0, semantics="wldp", exact=True)
    assert d.is_private(r.mechanism, 1.0, semantics="sldp", exact=True)


@pytest.mark.parametrize("k,d_", [(8, 2), (12, 3), (6, 3), (10, 4), (16, 4), (9, 3)])
def test_regular_designs_are_regular_and_nonsingular(k, d_):
    high = regular_design(k, d_)
    assert high is not None
    assert (high.sum(axis=0) == d_).all() and (high.sum(axis=1) == d_).all()
    m = cyclic_design(k, d_, 1.0, high)
    assert np.allclose(m.sum(axis=1), 1.0)
    assert np.linalg.matrix_rank(m) == k


def test_no_regular_design_where_none_exists():
    assert regular_design(4, 2) is None  # every 2-regular 4 x 4 pattern is singular
    assert regular_design(4, 1) is not None and regular_design(4, 3) is not None


def test_best_subset_size_matches_enumeration():
    for k, eps in [(5, 0.5), (7, 1.0), (6, 3.0)]:
        d_, info = best_subset_size(k, eps)
        values = [chi2_information(subset_selection(k, s, eps), np.full(k, 1 / k)) for s in range(1, k)]
        assert d_ == int(np.argmax(values)) + 1 and info == pytest.approx(max(values), rel=1e-12)


def test_k1000_precise_design_is_exactly_private():
    r = design(DesignProblem(inputs=labels(1000), epsilon=1.0, semantics="wldp", objective="chi2"))
    # A precise (Bayesian) mechanism: every loss is the largest column max / column min, decided in Fractions of
    # the stored floats against a 60-digit exponential.
    from decimal import Decimal, localcontext
    from fractions import Fraction

    m = r.mechanism.matrix
    worst = max(Fraction(float(hi)) / Fraction(float(lo)) for hi, lo in zip(m.max(axis=0), m.min(axis=0)))
    with localcontext() as ctx:
        ctx.prec = 60
        assert Decimal(worst.numerator) / Decimal(worst.denominator) <= Decimal(1).exp()
    assert r.objective_value == pytest.approx(best_subset_size(1000, 1.0)[1], rel=1e-9)
    assert r.eps_walley <= 1.0
    # k outputs instead of C(k, d): a larger variance than subset selection, kept within 1.5x by the swaps
    from designer.closed_forms import subset_selection_variance

    assert r.variance < 1.5 * subset_selection_variance(1.0, 1000, 269)


@pytest.mark.parametrize("eps", [0.1, 0.3])
def test_symmetric_sldp_chi2_picks_the_exact_best_subset_size(eps):
    # The solver's optimum is flat in the subset size at small eps; the exact class must be released.
    from designer.closed_forms import subset_selection_best_d, subset_selection_variance

    k = 1000
    r = design(DesignProblem(inputs=labels(k), epsilon=eps, objective="chi2"))
    best = subset_selection_best_d(eps, k)
    assert r.variance == pytest.approx(subset_selection_variance(eps, k, best), rel=1e-9)
