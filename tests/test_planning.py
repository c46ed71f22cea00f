"""Planning: sample sizes against the closed forms, the smallest budget against Warner's inversion, power,
simulation checks, the questionnaire split against an independent grid search, the CLI contract, the report."""

import json
import math
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import norm

import designer as d
from designer import closed_forms as cf
from designer.cli import main
from designer.optimal import design
from designer.optimal.problem_toml import load_problem
from designer.planning import (
    PlanningError,
    accuracy_of,
    allocate,
    check_by_simulation,
    parse_survey,
    power_at,
    power_sample_size,
    sample_size,
    smallest_budget,
)

ROOT = Path(__file__).resolve().parents[1]
Z95 = float(norm.ppf(0.975))


def _warner_problem(prior=0.3):
    return load_problem(ROOT / "problems" / "warner.toml").replace(prior=np.array([prior, 1 - prior]))


@pytest.mark.parametrize("width", [0.02, 0.03, 0.05])
def test_warner_sample_size_is_equation_1(width):
    acc = accuracy_of(design(_warner_problem()).mechanism, "sldp", [0.3, 0.7])
    p = math.e / (1 + math.e)
    expected = math.ceil(Z95**2 * (0.3 * 0.7 + p * (1 - p) / (2 * p - 1) ** 2) / width**2)
    assert acc.formula == "warner" and sample_size(acc, width).n == expected


def test_smallest_budget_is_the_closed_form_inversion():
    """Eq 1 at n = 2000, w = 0.03: z^2 (pi(1-pi) + e^eps/(e^eps - 1)^2) / n = w^2 solved for eps."""
    plan = smallest_budget(_warner_problem(), 2000, 0.03)
    eps, acc, solved = plan.epsilon, plan.accuracy, plan.designs_solved
    assert plan.basis == "file" and plan.design.problem.epsilon == round(eps, 12)
    r = 2000 * 0.03**2 / Z95**2 - 0.21
    closed = math.log(((2 * r + 1) + math.sqrt(4 * r + 1)) / (2 * r))
    assert abs(eps - closed) < 1e-3 and solved < 40
    assert Z95 * math.sqrt(acc.variance_at(2000)) <= 0.03


def test_thm_3_10_sample_size_is_the_smallest_n_of_the_exact_variance():
    problem = load_problem(ROOT / "problems" / "gwrr-dont-know.toml").replace(prior=np.array([0.3, 0.7]))
    acc = accuracy_of(design(problem).mechanism, "sldp", [0.3, 0.7])
    assert acc.formula == "thm_3_10"
    n = sample_size(acc, 0.03).n
    p, q = cf.gwrr_sldp(1.0, 0.8)
    assert Z95 * math.sqrt(cf.q2x3_variance_exact(p, q, 0.3, n)) <= 0.03
    assert Z95 * math.sqrt(cf.q2x3_variance_exact(p, q, 0.3, n - 1)) > 0.03


def test_a_fixed_dont_know_mass_puts_a_floor_under_the_budget():
    problem = load_problem(ROOT / "problems" / "gwrr-dont-know.toml").replace(prior=np.array([0.3, 0.7]))
    with pytest.raises(PlanningError, match=r"don't-know mass 0\.2"):
        smallest_budget(problem, 100, 0.03)


@pytest.mark.parametrize("case", ["warner", "gwrr", "five"])
def test_simulated_coverage_at_the_planned_n(case):
    if case == "warner":
        mech, prior, width = design(_warner_problem()).mechanism, [0.3, 0.7], 0.04
    elif case == "gwrr":
        mech, prior, width = d.Q_GWRR(1.0, 0.8), [0.3, 0.7], 0.04
    else:
        problem = load_problem(ROOT / "problems" / "survey-5-options.toml")
        mech, prior, width = design(problem).mechanism, problem.prior, 0.03
    acc = accuracy_of(mech, "sldp", prior)
    n = sample_size(acc, width).n
    check = check_by_simulation(acc, n, 600, seed=11)
    reps = 600 * len(prior)
    assert abs(check["coverage"] - 0.95) < 3.5 * math.sqrt(0.95 * 0.05 / 600) * (1 if len(prior) == 2 else 1.5), check
    assert check["mean_half_width"] <= width * 1.05, (check, reps)


def test_power_sample_size_and_simulated_power():
    acc = accuracy_of(design(_warner_problem()).mechanism, "sldp", [0.3, 0.7])
    n = power_sample_size(acc, 0.08, power=0.8)
    assert power_at(acc, n, 0.08) >= 0.8 > power_at(acc, n - 1, 0.08)
    simulated = check_by_simulation(acc, n, 800, seed=5, detect=0.08)["power"]
    assert abs(simulated - 0.8) < 3.5 * math.sqrt(0.8 * 0.2 / 800)
    two = power_sample_size(acc, 0.08, power=0.8, groups=2)
    assert 1.8 * n < two < 2.3 * n  # two groups each need about twice as many


def _survey(c1=0.9, c2=0.8, pi1=0.1, pi2=0.4, total=2.0):
    return parse_survey({"name": "t", "epsilon": total, "question": [
        {"name": "a", "inputs": ["yes", "no"], "prior": [pi1, 1 - pi1], "structure": {"dont_know": 1 - c1}},
        {"name": "b", "inputs": ["yes", "no"], "prior": [pi2, 1 - pi2], "structure": {"dont_know": 1 - c2}}]})


def test_allocation_matches_an_independent_grid_search_and_beats_the_equal_split():
    """Two binary chi2 questions with don't-know: their designs are GWRR (Cor 3.12), so the total variance of
    a split has a closed form; a grid search at 1e-4 over it must agree with allocate() to 1e-3."""
    from designer.estimation.shares import estimator_variance

    def v(eps, c, pi):  # Thm 3.10 per respondent as n -> inf, at the GWRR optimum of Cor 3.12
        e = np.exp(eps)
        p, q = c * e / (e + 1), c / (e + 1)
        return (-((pi - 0.5) ** 2) + 0.25 * ((p + q) / (p - q)) ** 2) / (p + q)

    assert v(1.0, 0.9, 0.1) == pytest.approx(float(estimator_variance(d.Q_GWRR(1.0, 0.9), [0.1, 0.9])), rel=1e-9)
    result = allocate(_survey())
    grid = np.arange(0.05, 1.95, 1e-4)
    totals = v(grid, 0.9, 0.1) + v(2.0 - grid, 0.8, 0.4)
    best = grid[int(np.argmin(totals))]
    assert abs(result.epsilons[0] - best) < 1e-3
    assert sum(result.epsilons) == pytest.approx(2.0)
    assert result.total_variance < result.equal_split_total_variance
    assert result.total_variance == pytest.approx(totals.min(), rel=1e-6)
    assert all(result.convex)
    assert result.joint is not None and result.joint["total_variance"] > 0


def test_survey_errors():
    with pytest.raises(d.InvalidProblemError, match="unknown key"):
        parse_survey({"epsilon": 1.0, "question": [{"inputs": ["a", "b"]}], "budget": 2})
    with pytest.raises(d.InvalidProblemError, match="belongs to the survey"):
        parse_survey({"epsilon": 1.0, "question": [{"inputs": ["a", "b"], "epsilon": 0.5}]})
    with pytest.raises(PlanningError, match=r"no design that identifies its shares.*\(not even at eps = 20\)"):
        allocate(parse_survey({"epsilon": 0.2, "semantics": "wldp", "question": [
            {"name": "q", "inputs": ["a", "b"], "structure": {"dont_know": 0.6}, "objective": "truthful"}]}))


def test_a_question_short_of_budget_is_named_with_the_budget_it_needs():
    """Under WLDP a fixed don't-know mass leaves a binary share unidentified until the credal intervals of the
    two inputs separate, which takes a budget: the message names the question and that budget, which is then
    enough (to the stated 1e-3) while 0.01 less is not."""
    question = {"name": "q", "inputs": ["a", "b"], "structure": {"dont_know": 0.3}, "objective": "truthful"}
    with pytest.raises(PlanningError, match=r"'q'.*it needs eps >= (\d+\.\d+)") as info:
        allocate(parse_survey({"epsilon": 0.5, "semantics": "wldp", "question": [question]}))
    needed = float(re.search(r"it needs eps >= (\d+\.\d+)", str(info.value)).group(1))
    assert math.isfinite(allocate(parse_survey({"epsilon": needed, "semantics": "wldp", "question": [question]}),
                                  joint=False).total_variance)
    with pytest.raises(PlanningError):
        allocate(parse_survey({"epsilon": needed - 0.01, "semantics": "wldp", "question": [question]}), joint=False)


def _run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_contract(tmp_path, capsys):
    warner = str(ROOT / "problems" / "warner.toml")
    code, out, _ = _run(["plan", warner, "--prior", "yes=0.3,no=0.7", "--width", "0.02", "--level", "0.95",
                           "--format", "json"], capsys)
    obj = json.loads(out)
    assert code == 0 and isinstance(obj["n"], int) and {"epsilon", "variance", "width", "level"} <= set(obj)
    code, out, _ = _run(["plan", warner, "--prior", "yes=0.3,no=0.7", "--n", "2000", "--width", "0.03",
                         "--format", "json"], capsys)
    obj = json.loads(out)
    assert obj["n"] == 2000 and abs(obj["epsilon"] - 1.739) < 1e-3 and obj["variance"] > 0
    survey = tmp_path / "s.toml"
    survey.write_text((ROOT / "examples" / "surveys" / "two-questions.toml").read_text())
    code, out, _ = _run(["plan", str(survey), "--format", "json"], capsys)
    obj = json.loads(out)
    assert code == 0 and [r["question"] for r in obj["allocation"]] == ["drugs", "income"]
    assert {"epsilon", "variance"} <= set(obj["allocation"][0])
    assert obj["total_variance"] <= obj["equal_split_total_variance"]
    assert obj["joint"] is None or {"epsilon", "total_variance"} <= set(obj["joint"])


@pytest.mark.parametrize("flags, message", [
    (["--width", "0"], "--width"), (["--width", "0.02", "--level", "1.5"], "--level"),
    (["--n", "0", "--width", "0.02"], "--n"), (["--width", "0.02", "--prior", "yes=0.5,no=0.6"], "--prior"),
    ([], "say what to plan")])
def test_cli_bad_input(capsys, flags, message):
    code, out, err = _run(["plan", str(ROOT / "problems" / "warner.toml"), *flags], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1 and message in err, err


def test_cli_bad_survey_file(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text('epsilon = 1.0\nbudget = 2\n[[question]]\ninputs = ["a", "b"]\n')
    code, _, err = _run(["plan", str(bad)], capsys)
    assert code == 2 and "bad.toml" in err and "unknown key" in err


def test_html_report_in_a_headless_browser(tmp_path, capsys):
    """The report is one self-contained page (no network); a headless Chromium renders it to a non-blank
    screenshot. Skips, saying why, when no browser is installed (.ci/run installs one)."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    report = tmp_path / "plan.html"
    code, _, err = _run(["plan", str(ROOT / "problems" / "gwrr-dont-know.toml"), "--prior", "yes=0.3,no=0.7",
                         "--width", "0.03", "--grid", "1:3:5", "--report", str(report)], capsys)
    assert code == 0, err
    page = report.read_text()
    assert "data:image/png;base64," in page and "http://" not in page and "https://" not in page
    assert "6033" in page and "Certificate" in page
    if browser is None:
        pytest.skip("no Chromium on this machine (apt-get install chromium); the page itself was checked")
    shot = tmp_path / "plan.png"
    proc = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                           "--window-size=1200,1600", f"--screenshot={shot}", report.as_uri()],
                          capture_output=True, text=True, timeout=120, check=False)
    assert shot.exists(), proc.stderr[-500:]
    import matplotlib.image

    pixels = matplotlib.image.imread(shot)
    assert pixels.shape[0] >= 1000 and pixels.std() > 0.05  # something is drawn, not a blank page


def test_a_plan_is_a_typed_object_the_cli_only_prints(capsys):
    """make_plan / plan_survey give what `designer plan --format json` prints; the command computes nothing."""
    import ast
    import inspect
    import json

    from designer.cli import main, plan_commands
    from designer.optimal import load_problem
    from designer.planning import PlanRequest, make_plan, plan_survey
    from designer.planning.survey_plan import load_survey
    from designer.vocabulary import PlanMode

    warner = ROOT / "problems" / "warner.toml"
    plan = make_plan(load_problem(warner), PlanRequest(width=0.03, prior=(0.05, 0.95)), name=str(warner))
    assert plan.mode is PlanMode.SAMPLE_SIZE and plan.n == 4133 and plan.epsilon == 1.0
    assert main(["plan", str(warner), "--prior", "yes=0.05", "--width", "0.03", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(json.dumps(plan.to_dict()))
    power = make_plan(load_problem(warner), PlanRequest(detect=0.05, prior=(0.3, 0.7)), name="w")
    assert power.mode is PlanMode.POWER and power.power_at_n is not None and power.power_at_n.power >= 0.8
    budget = make_plan(load_problem(warner), PlanRequest(width=0.03, n=5000), name="w")
    assert budget.mode is PlanMode.SMALLEST_BUDGET and budget.design is not None and budget.designs_solved
    assert budget.width_at_n is not None and budget.width_at_n.width <= 0.03
    survey_file = next((ROOT / "examples" / "surveys").glob("*.toml"))
    questionnaire = plan_survey(load_survey(str(survey_file)), name=str(survey_file), width=0.05)
    assert questionnaire.mode is PlanMode.ALLOCATION and questionnaire.sizes is not None
    assert main(["plan", str(survey_file), "--width", "0.05", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(json.dumps(questionnaire.to_dict()))
    # the command module calls no planner but make_plan / plan_survey (it parses and prints)
    called = {node.func.id for node in ast.walk(ast.parse(inspect.getsource(plan_commands)))
              if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
    assert not called & {"sample_size", "smallest_budget", "power_sample_size", "power_at", "price_of_privacy",
                         "check_by_simulation", "accuracy_of", "allocate", "DesignCache"}


def test_the_kept_design_is_the_files_and_not_one_reoptimised_at_the_prior():
    """The truthful design re-optimised at prior (0.2, 0.8) answers "no" whatever the truth (what `plan` used to
    plan); the kept design is Warner's, certified at eps = 1."""
    from designer.planning.sizes import DesignCache

    problem = load_problem(ROOT / "problems" / "warner.toml")
    designs = DesignCache(problem, [0.2, 0.8])
    mech = designs(1.0).mechanism
    p = math.e / (1 + math.e)
    assert designs.basis(1.0) == "file"
    assert np.allclose(np.sort(mech.matrix, axis=1), [[1 - p, p], [1 - p, p]], atol=1e-9)


def test_a_design_that_identifies_nothing_falls_back_to_one_that_does():
    """A 4-answer chi2 question at a skewed prior: at eps = 0.5 its own design merges inputs (inf); the plan
    uses the max_variance design at the planning prior, finite, and says so."""
    from designer.exceptions import DesignWarning
    from designer.planning import parse_survey
    from designer.planning.sizes import DesignCache

    problem = parse_survey({"epsilon": 0.5, "question": [
        {"name": "q", "inputs": ["a", "b", "c", "d"], "prior": [0.093, 0.159, 0.179, 0.569],
         "objective": "chi2"}]}).questions[0]
    designs = DesignCache(problem)

    with pytest.warns(DesignWarning, match="answer alike"):
        own = accuracy_of(design(problem).mechanism, "sldp", problem.prior)
    assert not math.isfinite(own.variance)
    assert designs.basis(0.5) == "max_variance_prior"
    expected = design(problem.replace(epsilon=0.5, objective="max_variance"))
    assert designs(0.5).mechanism.allclose(expected.mechanism, atol=1e-9)
    assert math.isfinite(designs.accuracy(0.5).variance) and designs.solved == 2
    assert designs.accuracy(0.5) is designs.accuracy(0.5000000000000001)  # one plan per budget, kept
