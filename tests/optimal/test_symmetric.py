import math

import numpy as np
import pytest

import designer as d
from designer.closed_forms import subset_selection_variance
from designer.optimal import DesignProblem, design
from designer.optimal.symmetric import SymmetricMechanism


def labels(k):
    return tuple(f"v{i}" for i in range(k))


@pytest.mark.parametrize("k", [3, 5, 8])
@pytest.mark.parametrize("semantics,objective,structure", [
    ("sldp", "truthful", {}), ("sldp", "chi2", {}), ("sldp", "truthful", {"dont_know": 0.1}),
    ("sldp", "chi2", {"lie_max": 0.4}), ("wldp", "truthful", {}), ("wldp", "truthful", {"dont_know_max": 0.05}),
    ("both", "truthful", {"lie_max": 0.6}),
])
def test_symmetric_path_equals_the_general_path(k, semantics, objective, structure):
    problem = DesignProblem(inputs=labels(k), epsilon=1.0, semantics=semantics, objective=objective, **structure)
    try:
        general = design(problem, path="general")
    except d.InfeasibleDesignError:
        with pytest.raises(d.InfeasibleDesignError):
            design(problem, path="symmetric")
        return
    symmetric = design(problem, path="symmetric")
    assert symmetric.path.startswith("symmetric size classes")
    assert symmetric.objective_value == pytest.approx(general.objective_value, abs=1e-8)
    # the expanded compact mechanism is a real mechanism with the losses the compact form reports
    full = symmetric.mechanism
    assert d.eps_shafer(full) == pytest.approx(symmetric.eps_shafer, abs=1e-9)
    if k <= 5:
        assert d.eps_walley(full) == pytest.approx(symmetric.eps_walley, abs=1e-9)
    for sem in {"sldp": ["sldp"], "wldp": ["wldp"], "both": ["sldp", "wldp"]}[semantics]:
        assert d.is_private(full, 1.0, semantics=sem, exact=True)  # the released full matrix, exactly


@pytest.mark.parametrize("semantics,objective", [("sldp", "chi2"), ("sldp", "truthful"), ("wldp", "truthful")])
def test_k_1000(semantics, objective):
    r = design(DesignProblem(inputs=labels(1000), epsilon=1.0, semantics=semantics, objective=objective))
    assert r.path == "symmetric size classes" and r.mechanism is None and r.compact is not None
    assert r.certificate.method in ("exact", "float")
    loss = r.eps_shafer if semantics == "sldp" else r.eps_walley
    assert loss <= 1.0 + 1e-12
    if objective == "chi2":
        best = subset_selection_variance(1.0, 1000)
        assert r.variance == pytest.approx(best, rel=1e-6)


def test_compact_form_matches_its_expansion():
    rng = np.random.default_rng(0)
    k = 5
    A, B = rng.random(k), rng.random(k)
    B[-1] = 0
    total = A.sum() + B.sum()
    m = SymmetricMechanism(labels(k), A / total, B / total)
    full = m.to_mechanism()
    assert np.allclose(full.matrix.sum(axis=1), 1.0)
    assert m.eps_shafer() == pytest.approx(d.eps_shafer(full))
    assert m.eps_walley() == pytest.approx(d.eps_walley(full))
    from designer.estimation.shares import chi2_information, estimator_variance

    assert m.chi2() == pytest.approx(chi2_information(full))
    assert m.variance() == pytest.approx(estimator_variance(full))
    a, _ = m.per_set()
    assert full.row(0)[("v0",)] == pytest.approx(a[0])
    with pytest.raises(d.InvalidProblemError, match="compact"):
        SymmetricMechanism(labels(30), np.r_[1.0, np.zeros(29)], np.zeros(30)).to_mechanism()


def test_auto_path_and_refusals():
    r = design(DesignProblem(inputs=labels(20), epsilon=2.0, objective="chi2"))
    assert r.path == "symmetric size classes"
    with pytest.raises(d.InvalidProblemError, match="invariant"):
        design(DesignProblem(objective="truthful",
                             inputs=labels(4), epsilon=1.0, prior=[0.4, 0.2, 0.2, 0.2]), path="symmetric")
    with pytest.raises(d.InvalidProblemError, match="too many"):
        design(DesignProblem(objective="truthful",
                             inputs=labels(30), frame=labels(30), epsilon=1.0, prior=np.r_[0.5, np.full(29, 0.5 / 29)]))
    assert math.isfinite(r.variance)
