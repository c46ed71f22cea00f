"""The variance objectives (designer/optimal/variance_program.py, docs/theory.md 5.7): closed forms at two inputs and at
the uniform prior, the proved bound, targets, scenarios, WLDP, the default objective, files and bad input.

The comparison with an independent program over all eps-SLDP mechanisms is tests/optimal/test_variance_designs.py.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import warnings

import numpy as np
import pytest

import designer as d
from designer.closed_forms import krr_variance, subset_selection_variance
from designer.exceptions import DesignWarning, InvalidProblemError
from designer.optimal import DesignProblem, design, parse_problem
from designer.optimal.share_variance import target_variances
from designer.optimal.variance_program import OPTIMALITY_GAP

FIVE = ("never", "rarely", "sometimes", "often", "always")
SKEWED = (0.4, 0.3, 0.15, 0.1, 0.05)


def warner_variance(pi: float, eps: float) -> float:
    """Eq 1 per respondent: pi (1 - pi) + p (1 - p) / (2p - 1)^2 with p = e^eps / (e^eps + 1)."""
    p = math.exp(eps) / (math.exp(eps) + 1)
    return pi * (1 - pi) + p * (1 - p) / (2 * p - 1) ** 2


def mle_variances(matrix: np.ndarray, prior: np.ndarray) -> np.ndarray:
    """diag(F^-1 - pi pi') from the mass matrix, written out here (not the package's tangent form)."""
    q = prior @ matrix
    info = (matrix / q) @ matrix.T
    return np.diag(np.linalg.inv(info)) - prior**2


@pytest.mark.parametrize("objective", ["variance", "max_variance"])
@pytest.mark.parametrize(("pi", "eps"), [(0.5, 1.0), (0.3, 1.0), (0.05, 0.5), (0.8, 3.0)])
def test_two_inputs_give_warner_at_any_prior(objective, pi, eps):
    """k = 2: the best design is Warner's (Ex 3.7), whatever the prior; its variance is Eq 1."""
    r = design(DesignProblem(inputs=("yes", "no"), prior=[pi, 1 - pi], epsilon=eps, objective=objective))
    p = math.exp(eps) / (math.exp(eps) + 1)
    assert r.mechanism.row("yes")[("yes",)] == pytest.approx(p, abs=1e-7)
    assert r.mechanism.row("no")[("no",)] == pytest.approx(p, abs=1e-7)
    assert r.objective_value == pytest.approx(warner_variance(pi, eps), rel=1e-7)
    assert str(r.status) == "optimal" and r.optimality_gap <= OPTIMALITY_GAP
    assert r.bound <= r.objective_value * (1 + 1e-12)
    assert d.is_private(r.mechanism, eps, semantics="sldp", exact=True)


def test_a_fixed_dont_know_mass_gives_gwrr():
    """k = 2 with don't-know mass 0.2: GWRR (Cor 3.12), p = 0.8 e/(e + 1), and the mass stays exactly 0.2."""
    r = design(DesignProblem(inputs=("yes", "no"), prior=[0.3, 0.7], epsilon=1.0, dont_know=0.2))
    assert r.problem.objective == "variance" and not r.problem.named_objective
    assert r.mechanism.row("yes")[("yes",)] == pytest.approx(0.8 * math.e / (math.e + 1), abs=1e-7)
    assert np.all(r.mechanism.matrix[:, -1] == 0.2)
    assert str(r.status) == "optimal"


@pytest.mark.parametrize(("k", "eps"), [(3, 1.0), (6, 0.5), (8, 2.0)])
def test_the_uniform_prior_gives_the_best_subset_selection(k, eps):
    """At the uniform prior the optimum is subset selection of the best size (docs/theory.md 5.7); its mean share
    variance is subset selection's closed form."""
    r = design(DesignProblem(inputs=tuple(f"v{i}" for i in range(k)), epsilon=eps))
    best = min(subset_selection_variance(eps, k, dd) for dd in range(1, k))
    assert r.variance == pytest.approx(best, rel=1e-6)
    assert r.objective_value <= krr_variance(eps, k) * (1 + 1e-9)
    assert str(r.status) == "optimal"


def test_the_skewed_five_option_prior():
    """The issue's numbers: mean 0.491416 (k-RR 0.491419), worst share 0.572341 (k-RR 0.682330)."""
    mean = design(DesignProblem(inputs=FIVE, prior=SKEWED, epsilon=2.0))
    worst = design(DesignProblem(inputs=FIVE, prior=SKEWED, epsilon=2.0, objective="max_variance"))
    assert mean.objective_value == pytest.approx(0.4914156, abs=1e-7)
    assert worst.objective_value == pytest.approx(0.5723409, abs=1e-7)
    assert krr_variance(2.0, 5, prior=SKEWED) == pytest.approx(0.4914193, abs=1e-7)
    for r in (mean, worst):
        assert str(r.status) == "optimal" and 0 <= r.optimality_gap <= OPTIMALITY_GAP
        computed = mle_variances(r.mechanism.matrix, np.array(SKEWED))
        assert np.allclose(list(r.share_variances.values()), computed, rtol=1e-8)
    assert mean.variance == pytest.approx(np.mean(list(mean.share_variances.values())), rel=1e-12)
    assert max(worst.share_variances.values()) == pytest.approx(worst.objective_value, rel=1e-9)


def test_the_bound_is_a_bound():
    """The proved bound lies below the optimum: below the objective of every other certified design of the same
    problem (here the other objective's design and k-RR)."""
    problem = DesignProblem(inputs=FIVE, prior=SKEWED, epsilon=1.0)
    r = design(problem)
    other = design(problem.replace(objective="max_variance"))
    assert r.bound <= r.objective_value
    assert r.bound <= np.mean(mle_variances(other.mechanism.matrix, problem.prior))
    assert r.bound <= krr_variance(1.0, 5, prior=SKEWED)


def test_weights_make_only_the_weighted_shares_count():
    """weights {never: 1}: the design makes Var(never) small; its Var(never) is at most Warner's on the indicator
    "is it never?" (a design of the class), and at most the mean-variance design's Var(never)."""
    pi = np.array(SKEWED)
    one = design(DesignProblem(inputs=FIVE, prior=SKEWED, epsilon=1.0, variance_weights={"never": 1}))
    mean = design(DesignProblem(inputs=FIVE, prior=SKEWED, epsilon=1.0))
    v_one = target_variances(one.mechanism.matrix, pi, np.eye(5)[:1])[0]
    assert one.objective_value == pytest.approx(v_one, rel=1e-9)
    assert v_one <= warner_variance(0.4, 1.0) * (1 + 1e-9)
    assert v_one <= mean.share_variances["never"] * (1 + 1e-9)
    assert str(one.status) == "optimal"


def test_a_contrast_is_a_target():
    """contrast never - always: the objective is Var(pi_never - pi_always), equal to the value computed from the
    matrix, and no larger than that of the mean-variance design."""
    pi = np.array(SKEWED)
    c = np.array([1.0, 0, 0, 0, -1.0])
    r = design(DesignProblem(inputs=FIVE, prior=SKEWED, epsilon=1.0, contrasts=[{"never": 1, "always": -1}]))
    mean = design(DesignProblem(inputs=FIVE, prior=SKEWED, epsilon=1.0))
    assert r.objective_value == pytest.approx(target_variances(r.mechanism.matrix, pi, c[None, :])[0], rel=1e-9)
    info_cov = np.linalg.inv((mean.mechanism.matrix / (pi @ mean.mechanism.matrix)) @ mean.mechanism.matrix.T)
    assert r.objective_value <= (c @ info_cov @ c - (c @ pi) ** 2) * (1 + 1e-9)


def test_prior_scenarios_make_the_worst_small():
    """Two scenarios: the design's objective is the worse of its two values (both reported); it is no worse than
    either single-scenario design evaluated at both, and no better than either scenario's own optimum."""
    a, b = (0.4, 0.3, 0.15, 0.1, 0.05), (0.05, 0.1, 0.15, 0.3, 0.4)
    robust = design(DesignProblem(inputs=FIVE, priors=[a, b], epsilon=1.0))
    values = robust.scenario_values
    assert list(values) == ["prior 1", "prior 2"]
    assert robust.objective_value == pytest.approx(max(values.values()), rel=1e-12)
    assert np.allclose(robust.problem.prior, a)  # the figures are reported at the first scenario
    for pi in (a, b):
        single = design(DesignProblem(inputs=FIVE, prior=pi, epsilon=1.0))
        both = [np.mean(mle_variances(single.mechanism.matrix, np.array(p))) for p in (a, b)]
        assert robust.objective_value <= max(both) * (1 + 1e-7)
        assert robust.objective_value >= single.objective_value * (1 - 1e-7)
    assert "prior 2" in robust.summary()
    assert robust.to_dict()["scenarios"]["prior 1"] == pytest.approx(values["prior 1"])


def test_wldp_gives_a_precise_design_with_an_honest_status():
    """Under WLDP the design is precise (singletons); its status is optimal only when the SLDP bound is met, else
    local with the gap to it."""
    r = design(DesignProblem(inputs=FIVE, prior=SKEWED, epsilon=2.0, semantics="wldp"))
    assert r.mechanism.is_bayesian and d.is_private(r.mechanism, 2.0, semantics="wldp", exact=True)
    sldp = design(DesignProblem(inputs=FIVE, prior=SKEWED, epsilon=2.0))
    assert r.bound == pytest.approx(sldp.bound, rel=1e-6)
    assert r.optimality_gap == pytest.approx((r.objective_value - r.bound) / r.objective_value, rel=1e-6)
    assert str(r.status) == ("optimal" if r.optimality_gap <= OPTIMALITY_GAP else "local")
    binary = design(DesignProblem(inputs=("yes", "no"), prior=[0.3, 0.7], epsilon=1.0, semantics="both"))
    assert str(binary.status) == "optimal"
    assert binary.objective_value == pytest.approx(warner_variance(0.3, 1.0), rel=1e-7)


def test_a_lying_bound_is_measured_against_the_bound_without_it():
    """lie_max restricts the staircase designs: the released design meets it exactly, and its gap is measured
    against the program without it (status local when they differ)."""
    problem = DesignProblem(inputs=FIVE, prior=SKEWED, epsilon=2.0, lie_max=0.3, dont_know_max=0.25)
    r = design(problem)
    lies = [sum(v for s, v in r.mechanism.row(x).items() if x not in s) for x in FIVE]
    assert max(lies) <= 0.3
    free = design(DesignProblem(inputs=FIVE, prior=SKEWED, epsilon=2.0))
    assert r.bound <= free.objective_value * (1 + 1e-7)
    assert math.isfinite(r.objective_value) and r.objective_value < 5
    assert str(r.status) == ("optimal" if r.optimality_gap <= OPTIMALITY_GAP else "local")


def test_the_default_objective_is_variance_and_identifies_every_share():
    """No objective named: variance; at the skewed prior every share is identified (the truthful design of the
    same problem is not, which is why the default changed)."""
    r = design(DesignProblem(inputs=FIVE, prior=SKEWED, epsilon=0.5))
    assert r.problem.objective == "variance" and math.isfinite(r.variance) and not r.warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DesignWarning)
        truthful = design(DesignProblem(inputs=FIVE, prior=SKEWED, epsilon=0.5, objective="truthful"))
    assert r.variance < truthful.variance
    invariant = DesignProblem(inputs=("a", "b"), prior=[0.6, 0.4], epsilon=1.0, invariant=True)
    assert invariant.objective == "truthful"  # PRAM's measure, the default of an invariant design


def test_the_toml_keys():
    """[variance] weights / contrast / contrasts and priors are read from a problem file."""
    base = {"inputs": list(FIVE), "epsilon": 1.0, "prior": list(SKEWED)}
    p = parse_problem({**base, "objective": "max_variance", "variance": {"weights": {"never": 2, "always": 1}}})
    assert p.variance_weights.tolist() == [2, 0, 0, 0, 1]
    p = parse_problem({**base, "variance": {"contrast": {"never": 1, "always": -1}}})
    assert p.contrasts.tolist() == [[1, 0, 0, 0, -1]] and p.objective == "variance"
    p = parse_problem({**base, "variance": {"contrasts": [{"never": 1}, {"often": 1, "always": 1}]}})
    assert p.contrasts.shape == (2, 5)
    p = parse_problem({"inputs": ["a", "b"], "epsilon": 1.0, "priors": [[0.5, 0.5], [0.9, 0.1]]})
    assert p.priors.shape == (2, 2) and p.prior.tolist() == [0.5, 0.5]


@pytest.mark.parametrize(("changes", "message"), [
    ({"variance": {"weights": {"nevr": 1}}}, "['nevr'] are not inputs"),
    ({"variance": {"weights": {"never": 0}}}, "not all 0"),
    ({"variance": {"weights": {"never": -1}}}, "weight >= 0"),
    ({"variance": {"weights": {"never": float("nan")}}}, "weight >= 0"),
    ({"variance": {"weights": {"never": 1}, "contrast": {"never": 1}}}, "weights or contrasts, not both"),
    ({"variance": {"weight": {"never": 1}}}, "did you mean 'variance.weights'"),
    ({"prior": [0.5, 0.5, 0.0, 0.0, 0.0]}, "share of ['sometimes', 'often', 'always'] is 0"),
    ({"priors": [[0.2, 0.2, 0.2, 0.2, 0.2], [1.0, 0, 0, 0, 0]]}, "key 'priors[1]'"),
    ({"priors": [[0.5, 0.5]]}, "key 'priors'"),
    ({"objective": "truthful", "variance": {"weights": {"never": 1}}}, "applies to objective 'variance'"),
    ({"objective": "truthful", "priors": [[0.2] * 5]}, "prior scenarios are made small by the variance"),
    ({"frame": ["a", "b", "c", "d", "e"]}, "have no frame label of the same name"),
])
def test_bad_input_is_one_line(changes, message):
    base = {"inputs": list(FIVE), "epsilon": 1.0}
    with pytest.raises(InvalidProblemError) as info:
        parse_problem({**base, **changes}, source="q.toml")
    text = str(info.value)
    assert message in text and "\n" not in text and text.startswith("q.toml: ")


def test_structure_no_design_can_meet_is_refused():
    # every design answers "don't know": private, but none estimates the shares (the problem's, not the budget's)
    with pytest.raises(InvalidProblemError, match="don't-know mass at 1"):
        design(DesignProblem(inputs=("yes", "no"), epsilon=1.0, dont_know=1.0))
    with pytest.raises(InvalidProblemError, match="epsilon >= 1e-06"):
        design(DesignProblem(inputs=("yes", "no"), epsilon=1e-9))


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "designer", *args], capture_output=True, text=True, timeout=600)


def test_the_command_line(tmp_path):
    """design --objective variance on the bundled 5-option file at the skewed prior: finite variance below 5, the
    gap in the JSON and the table; plan --width 0.03 without an objective designs for max_variance and says so;
    bad input is one line, exit 2, nothing written."""
    problem = tmp_path / "five.toml"
    problem.write_text('inputs = ["never", "rarely", "sometimes", "often", "always"]\n'
                       "prior = [0.4, 0.3, 0.15, 0.1, 0.05]\nepsilon = 2.0\n")
    proc = run("design", "problems/survey-5-options.toml", "--objective", "variance", "--prior",
               "0.4,0.3,0.15,0.1,0.05", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["objective"] == "variance" and 0 < out["variance"] < 5
    assert out["optimality_gap"] is not None and set(out["share_variances"]) == set(FIVE)
    table = run("design", str(problem))
    assert table.returncode == 0 and "optimality gap" in table.stdout and "(the default)" in table.stdout
    plan = run("plan", str(problem), "--width", "0.03", "--format", "json")
    assert plan.returncode == 0, plan.stderr
    planned = json.loads(plan.stdout)
    assert planned["n"] <= 2505 and planned["design_basis"] == "max_variance_default"
    assert "names no objective" in run("plan", str(problem), "--width", "0.03").stdout
    bad = tmp_path / "bad.toml"
    bad.write_text(problem.read_text() + '[variance]\nweights = { nevr = 1 }\n')
    out_file = tmp_path / "out.csv"
    proc = run("design", str(bad), "--out", str(out_file))
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1 and not out_file.exists()


def test_a_variance_design_has_an_exact_table_to_draw_from():
    """Staircase designs hold set answers at the budget beside every singleton: the integer table a release or an
    exported page draws from mixes the row uniform over every answer (a Shafer loss alone), not the Bayesian row
    that cannot lower a set answer's ratio (the bundled 5-option question could not be exported)."""
    from designer.guarantees.exact_table import exact_table

    r = design(parse_problem({"inputs": list(FIVE), "epsilon": 2.0, "prior": [0.1, 0.2, 0.3, 0.25, 0.15],
                              "structure": {"dont_know_max": 0.25, "lie_max": 0.3}}))
    assert any(bin(int(m)).count("1") > 1 for m in r.mechanism.focal)
    table = exact_table(r.mechanism, epsilon=2.0)
    assert table.max_change < 1e-9


def test_the_table_output_states_the_design_status():
    """The table output says the design's status on its own line (not beside the solver's name): `optimal` for a
    design at its bound, `local` with its gap for a precise WLDP design (issue 57: the output prints the status
    instead of asserting it)."""
    at_bound = d.design(d.DesignProblem(inputs=("yes", "no"), epsilon=1.0))
    weak = d.design(d.DesignProblem(inputs=("a", "b", "c", "d", "e"), epsilon=3.0, semantics="wldp",
                                    prior=(0.45, 0.3, 0.15, 0.07, 0.03)), objective="max_variance")
    assert (str(at_bound.status), str(weak.status)) == ("optimal", "local")
    for result in (at_bound, weak):
        lines = result.summary().splitlines()
        stated = [line for line in lines if line.startswith("status: ")]
        assert len(stated) == 1 and stated[0].split()[1] == str(result.status)
        assert not any(f"({result.status})" in line for line in lines if line.startswith("path: "))
    assert "within the stated gap" in weak.summary() and weak.optimality_gap > 0.01
