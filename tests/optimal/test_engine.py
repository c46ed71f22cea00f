import math

import numpy as np
import pytest

import designer as d
from designer.closed_forms import (
    gwrr_sldp,
    gwrr_wldp,
    krr_variance,
    subset_selection_variance,
    wldp_min_answer_mass,
)
from designer.estimation.shares import estimator_variance
from designer.optimal import DesignProblem, certify, design, is_symmetric, orbit_average
from designer.optimal.certify import CertificationError

from ..conftest import exact_losses_within

BINARY = ("yes", "no")


@pytest.mark.parametrize("objective", ["truthful", "chi2"])
@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 2.0, 5.0])
@pytest.mark.parametrize("c", [0.5, 0.8, 1.0])
def test_gwrr_sldp_reproduced(objective, eps, c):
    r = design(DesignProblem(inputs=BINARY, epsilon=eps, objective=objective, dont_know=1 - c))
    row = r.mechanism.row("yes")
    p, q = gwrr_sldp(eps, c)
    e = math.exp(eps)
    assert (p, q) == pytest.approx((c * e / (e + 1), c / (e + 1)), abs=1e-15)  # Cor 3.12 as written
    assert row[("yes",)] == pytest.approx(p, abs=1e-9)
    assert row.get(("no",), 0.0) == pytest.approx(q, abs=1e-9)
    assert d.is_private(r.mechanism, eps, semantics="sldp", exact=True)


@pytest.mark.parametrize("objective", ["truthful", "chi2"])
@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 2.0, 5.0])
@pytest.mark.parametrize("c", [0.5, 0.8, 1.0])
def test_gwrr_wldp_closed_form_or_named_bound(objective, eps, c):
    problem = DesignProblem(inputs=BINARY, epsilon=eps, semantics="wldp", objective=objective, dont_know=1 - c)
    if c < wldp_min_answer_mass(eps):
        with pytest.raises(d.InfeasibleDesignError, match=r"c >= 2/\(1\+e\^eps\)"):
            design(problem)
        return
    r = design(problem)
    q = 1 / (1 + math.exp(eps))
    row = r.mechanism.row("yes")
    assert row[("yes",)] == pytest.approx(c - q, abs=1e-9)
    assert row.get(("no",), 0.0) == pytest.approx(q, abs=1e-9)
    assert gwrr_wldp(eps, c) == pytest.approx((c - q, q))
    assert d.is_private(r.mechanism, eps, semantics="wldp", exact=True)


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0])
def test_chi2_binary_is_warner(eps):
    r = design(DesignProblem(inputs=BINARY, epsilon=eps, objective="chi2"))
    assert r.mechanism.allclose(d.Q_WRR(eps), atol=1e-9)


@pytest.mark.parametrize("k", [4, 8, 16])
@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0, 4.0])
def test_chi2_beats_krr_and_subset_selection(k, eps):
    r = design(DesignProblem(inputs=tuple(f"v{i}" for i in range(k)), epsilon=eps, objective="chi2"))
    best = min(krr_variance(eps, k), subset_selection_variance(eps, k))
    assert r.variance <= best * (1 + 1e-6)
    # symmetric problem: the orbit average treats every value alike
    per_item = estimator_variance(r.mechanism, reduce="none")
    assert np.ptp(per_item) <= 1e-9 * per_item.mean()


def test_results_are_recomputed_and_certified():
    r = design(DesignProblem(objective="truthful", inputs=BINARY, epsilon=1.0, dont_know=0.2))
    assert exact_losses_within(r.mechanism, 1.0, ["shafer"])
    assert not exact_losses_within(r.mechanism, 1.0 - 1e-9, ["shafer"])  # the budget is spent: optimal
    assert r.eps_shafer <= 1.0 + 1e-12
    assert r.objective_value == pytest.approx(r.solver_objective, abs=1e-9)
    assert r.status == "optimal" and r.solver == "HIGHS"


def test_certification_repairs_a_violation_of_1e_9():
    eps = 1.0
    base = d.Q_GWRR(eps, 0.8).matrix
    # Push the ratio of {yes} to e^(eps + 1e-9): the kind of answer a solver tolerance allows.
    bad = base.copy()
    bad[0, 0] = base[1, 0] * math.exp(eps + 1e-9)
    bad[0, 2] = 1 - bad[0, 0] - bad[0, 1]
    mech = d.Mechanism(bad, inputs=BINARY, frame=BINARY, focal=[1, 2, 3])
    assert not d.is_private(mech, eps, exact=True)
    assert d.eps_shafer(mech) - eps == pytest.approx(1e-9, rel=1e-3)
    released, cert = certify(mech, DesignProblem(objective="truthful", inputs=BINARY, epsilon=eps))
    assert cert.repaired and 0 < cert.mix_weight < 1e-8
    assert cert.violation == pytest.approx(1e-9, rel=1e-3)
    assert d.is_private(released, eps, exact=True)
    assert released.allclose(mech, atol=1e-8)
    # mixing with the row average changes the don't-know masses by far less than their rounding
    for x in BINARY:
        assert released.row(x)[("yes", "no")] == pytest.approx(mech.row(x)[("yes", "no")], abs=1e-15)


def test_certification_refuses_when_no_repair_is_accepted():
    mech = d.Mechanism([[1.0, 0.0], [0.0, 1.0]], inputs=BINARY, frame=BINARY, focal=[1, 2])
    problem = DesignProblem(objective="truthful", inputs=BINARY, epsilon=1.0)
    released, cert = certify(mech, problem)  # repaired (Shafer loss inf before): accepted by default
    assert cert.repaired and d.is_private(released, 1.0, exact=True)
    with pytest.raises(CertificationError, match="costs more objective"):
        certify(mech, problem, accept=lambda m: False)


def test_structure_is_respected():
    problem = DesignProblem(inputs=("a", "b", "c"), epsilon=1.0, lie_max=0.2, dont_know_max=0.1,
                            objective="worst_case_utility", utility=np.eye(3))
    r = design(problem)
    m = r.mechanism
    for x in m.inputs:
        row = m.row(x)
        assert sum(v for s, v in row.items() if x not in s) <= 0.2 + 1e-9
        assert row.get(("a", "b", "c"), 0.0) <= 0.1 + 1e-9


def test_infeasible_problems_say_what_would_help():
    # 3 inputs, only singletons, and lying at most 0.05: needs a large budget.
    problem = DesignProblem(objective="truthful", inputs=("a", "b", "c"), epsilon=0.5, lie_max=0.05,
                            focal_sets=(1, 2, 4))
    with pytest.raises(d.InfeasibleDesignError, match=r"epsilon >= ") as info:
        design(problem)
    smallest = float(str(info.value).split("epsilon >= ")[1].split()[0].rstrip(","))
    e = math.exp(smallest)
    assert 2 / (e + 2) == pytest.approx(0.05, rel=1e-4)  # k-RR lies with 2/(e^eps + 2)
    design(problem.replace(epsilon=smallest * 1.001))
    # structure that no budget can fix
    bad = DesignProblem(inputs=("a", "b"), frame=("a",), epsilon=1.0, dont_know_max=0.1, objective="gain",
                        gain=np.ones((2, 2)))
    with pytest.raises(d.InfeasibleDesignError, match="structure alone"):
        design(bad)


def test_wldp_chi2_with_structure_or_too_few_answers_is_refused_clearly():
    with pytest.raises(d.InvalidProblemError, match="sldp"):
        design(DesignProblem(inputs=("a", "b", "c"), epsilon=1.0, semantics="wldp", objective="chi2",
                             lie_max=0.5))
    with pytest.raises(d.InvalidProblemError, match="distinct outputs"):
        design(DesignProblem(inputs=("a", "b", "c"), frame=("u", "v"), epsilon=1.0, semantics="wldp",
                             objective="chi2", prior=[0.5, 0.3, 0.2]))


def test_symmetry_detection_and_orbit_average():
    assert is_symmetric(DesignProblem(objective="truthful", inputs=("a", "b", "c"), epsilon=1.0))
    assert not is_symmetric(DesignProblem(objective="truthful",
                                          inputs=("a", "b", "c"), epsilon=1.0, prior=[0.5, 0.3, 0.2]))
    assert not is_symmetric(DesignProblem(objective="truthful",
                                          inputs=("a", "b", "c"), epsilon=1.0, focal_sets=(1, 2, 4, 3)))
    u = np.array([[1.0, 0, 0], [0, 1, 0], [0, 0, 0.5]])
    assert not is_symmetric(DesignProblem(inputs=("a", "b", "c"), epsilon=1.0, objective="best_case_utility",
                                          utility=u))
    avg = orbit_average(d.Q_2x3(0.6, 0.2), np.array([0, 1]))
    assert avg.allclose(d.Q_2x3(0.6, 0.2))
    skew = d.Mechanism([[0.7, 0.1, 0.2], [0.1, 0.5, 0.4]], inputs=BINARY, frame=BINARY, focal=[1, 2, 3])
    assert orbit_average(skew, np.array([0, 1])).allclose(d.Q_2x3(0.6, 0.1), atol=1e-12)


def test_solver_args_reach_the_solver():
    problem = DesignProblem(objective="truthful", inputs=tuple("abcd"), epsilon=1.0, semantics="wldp")
    with pytest.raises(d.SolverError, match=r"CLARABEL .* status .iteration limit."):
        design(problem, solver="CLARABEL", solver_options={"max_iter": 1})
    r = design(problem, solver="CLARABEL")
    ref = design(problem)
    assert r.objective_value == pytest.approx(ref.objective_value, abs=1e-6)


def test_wldp_8x8_all_focal_sets_finishes():
    r = design(DesignProblem(objective="truthful", inputs=tuple("abcdefgh"), epsilon=1.0, semantics="wldp"))
    assert r.certificate.method in ("exact", "float") and d.is_private(r.mechanism, 1.0, semantics="wldp", exact=True)
    # Bayesian k-RR is WLDP-feasible, so the optimum is at least its truthful probability.
    e = math.e
    assert r.objective_value >= e / (e + 7) - 1e-9


@pytest.mark.filterwarnings("ignore::designer.exceptions.DesignWarning")  # skewed prior, small budgets
@pytest.mark.parametrize("semantics,objective", [("sldp", "truthful"), ("sldp", "chi2"), ("wldp", "truthful"),
                                                 ("both", "truthful")])
def test_warm_started_sweep_equals_cold_designs(semantics, objective):
    from designer._internal.solvers import WarmStart

    base = DesignProblem(inputs=("a", "b", "c", "d"), epsilon=1.0, semantics=semantics, objective=objective,
                         prior=[0.4, 0.3, 0.2, 0.1])
    warm = WarmStart()
    started = 0
    for eps in np.linspace(0.2, 3.0, 8):
        p = base.replace(epsilon=float(eps))
        cold, hot = design(p), design(p, warm=warm)
        assert hot.objective_value == pytest.approx(cold.objective_value, abs=1e-9)
        assert d.is_private(hot.mechanism, float(eps), semantics=semantics if semantics != "both" else "sldp",
                            exact=True)
        started += hot.solver == "HIGHS (warm start)"
    if objective == "chi2":
        assert started >= 7  # the staircase LP starts from the previous basis after the first solve
    else:
        assert started == 0  # general programs need HiGHS's presolve: solved cold
    with pytest.raises(TypeError, match="WarmStart"):
        design(base, warm="yes")


def test_programs_too_large_for_memory_are_refused_with_advice(monkeypatch):
    from designer.optimal.lazy import solve_walley_lazily
    from designer.optimal.programs import linear_program, program_nonzeros

    for k, sem in [(6, "wldp"), (8, "both"), (10, "sldp")]:  # the estimate is an upper bound, and close
        p = DesignProblem(objective="truthful", inputs=tuple(f"a{i}" for i in range(k)), epsilon=1.0, semantics=sem)
        if sem == "sldp":
            lp = linear_program(p)
        else:  # WLDP rows are generated: the estimate is that of the first program
            monkeypatch.setattr("designer.optimal.lazy.MAX_ROUNDS", 1)
            lp = solve_walley_lazily(p, None, None)[1]
        assert lp.A_ub.nnz + lp.A_eq.nnz <= program_nonzeros(p) <= 1.5 * (lp.A_ub.nnz + lp.A_eq.nnz)
    labels = tuple(f"a{i}" for i in range(16))
    big = DesignProblem(objective="truthful",
                        inputs=labels, epsilon=1.0, semantics="wldp", prior=[0.5] + [0.5 / 15] * 15,
                        focal_sets=(*[1 << i for i in range(16)], (1 << 16) - 1))
    import designer.optimal.route as route
    import designer.optimal.solve_steps as steps

    def never(*args, **kwargs):  # the refusal comes before any program is built
        raise AssertionError("the program was built")

    monkeypatch.setattr(steps, "linear_program", never)
    monkeypatch.setattr(steps, "solve_walley_lazily", never)
    monkeypatch.setattr(route, "MAX_NONZEROS", program_nonzeros(big) - 1)
    with pytest.raises(d.InvalidProblemError, match=r"nonzeros.*GiB.*focal_sets"):
        design(big)


def test_sixteen_answers_under_wldp_by_row_generation():
    """16 answers, singletons and don't-know: the full WLDP program has 15.7 million pair rows (it was refused
    before rows were generated); now a few hundred rows decide it, and the design is certified."""
    labels = tuple(f"a{i}" for i in range(16))
    big = DesignProblem(objective="truthful",
                        inputs=labels, epsilon=1.0, semantics="wldp", prior=[0.5] + [0.5 / 15] * 15,
                        focal_sets=(*[1 << i for i in range(16)], (1 << 16) - 1))
    result = design(big)
    assert "rows generated" in result.path and result.eps_walley <= 1.0 + 1e-12
    assert exact_losses_within(result.mechanism, 1.0, ["walley"])


def test_a_chi2_optimum_that_lumps_rare_inputs_is_flagged():
    # At a skewed prior the chi2 optimum gives the rare input a2 the row of a0: a2's share is not identified.
    pi = np.array([0.173, 0.191, 0.01, 0.265, 0.361])
    problem = DesignProblem(inputs=tuple(f"a{i}" for i in range(5)), epsilon=2.52, semantics="wldp",
                            objective="chi2", prior=pi / pi.sum())
    with pytest.warns(d.DesignWarning, match="does not identify every share"):
        r = design(problem)
    assert math.isinf(r.variance) and "a0, a2 answer alike" in r.warnings[0]
    assert r.to_dict()["warnings"] == list(r.warnings)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a design that identifies every share warns of nothing
        ok = design(problem.replace(prior=np.full(5, 0.2)))
    assert ok.warnings == () and math.isfinite(ok.variance)
