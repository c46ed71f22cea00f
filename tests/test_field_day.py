"""The first field day (planning part): rare traits with the bundled problems, strict JSON, fractions, no flag
ignored, questionnaires whose split never degenerates. Each test fails on the code before the change."""

import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import norm

from designer.cli import main
from designer.planning import allocate, parse_survey

ROOT = Path(__file__).resolve().parents[1]
PROBLEMS = ROOT / "problems"
Z95 = float(norm.ppf(0.975))


def _run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _strict(text):
    """JSON as RFC 8259 has it: NaN and Infinity are refused."""
    def refuse(name):
        raise ValueError(f"not JSON: {name}")
    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("share", [0.05, 0.2, 0.5])
def test_warner_plans_a_rare_trait_by_equation_1(share, capsys):
    """The file's design (Warner at eps = 1) planned at the trait's share: n is Eq 1's smallest n."""
    code, out, err = _run(["plan", str(PROBLEMS / "warner.toml"), "--prior", f"yes={share}", "--width", "0.03",
                           "--format", "json"], capsys)
    assert code == 0, err
    plan = _strict(out)
    p = math.e / (1 + math.e)
    n = math.ceil(Z95**2 * (share * (1 - share) + p * (1 - p) / (2 * p - 1) ** 2) / 0.03**2)
    assert plan["n"] in (n, n + 1) and plan["design_basis"] == "file"
    assert plan["prior"] == pytest.approx({"yes": share, "no": 1 - share})


@pytest.mark.parametrize("problem, label", [("warner", "yes"), ("gwrr-dont-know", "yes"),
                                            ("gwrr-dont-know-wldp", "yes"), ("survey-5-options", "never"),
                                            ("survey-5-options-utility", "never"), ("frequency-16", "v00")])
@pytest.mark.parametrize("share", [0.05, 0.2, 0.5])
def test_every_bundled_problem_plans_a_trait_at_any_share(problem, label, share, capsys):
    code, out, err = _run(["plan", str(PROBLEMS / f"{problem}.toml"), "--prior", f"{label}={share}", "--width",
                           "0.05", "--format", "json"], capsys)
    assert code == 0, err
    plan = _strict(out)
    assert isinstance(plan["n"], int) and 1 <= plan["n"] < 10**7 and math.isfinite(plan["variance"])
    assert plan["prior"][label] == pytest.approx(share) and sum(plan["prior"].values()) == pytest.approx(1)


@pytest.mark.parametrize("problem", ["warner", "gwrr-dont-know", "survey-5-options"])
def test_a_rare_trait_plan_is_confirmed_by_simulation(problem, capsys):
    """300 simulated surveys at the planned n: the intervals cover the true shares about 95% of the time and
    their half-width is about the target."""
    label = "never" if problem == "survey-5-options" else "yes"
    code, out, err = _run(["plan", str(PROBLEMS / f"{problem}.toml"), "--prior", f"{label}=0.05", "--width", "0.04",
                           "--check", "300", "--seed", "7", "--format", "json"], capsys)
    assert code == 0, err
    check = _strict(out)["check"]
    assert 0.92 <= check["coverage"] <= 0.98
    assert check["mean_half_width"] <= 0.04 * 1.05


def test_a_questionnaire_split_never_degenerates():
    """Three 4-answer questions with skewed priors sharing eps = 1.5: every question gets a share of the budget
    and a finite variance (the chi2 designs at 0.5 each merge inputs, and the old split gave one question
    everything, total inf)."""
    priors = [[0.093, 0.159, 0.179, 0.569], [0.05, 0.05, 0.3, 0.6], [0.7, 0.1, 0.1, 0.1]]
    survey = parse_survey({"epsilon": 1.5, "question": [
        {"name": f"q{i}", "inputs": ["a", "b", "c", "d"], "prior": p} for i, p in enumerate(priors)]})
    allocation = allocate(survey, joint=False)
    assert math.isfinite(allocation.total_variance) and math.isfinite(allocation.equal_split_total_variance)
    assert min(allocation.epsilons) > 0.2 and sum(allocation.epsilons) == pytest.approx(1.5)
    assert all(math.isfinite(v) for v in allocation.variances)


def test_plan_json_is_strict_even_where_a_budget_reaches_nothing(capsys):
    """A grid budget at which no design identifies the shares: variance "inf", n null, the reason given."""
    code, out, err = _run(["plan", str(PROBLEMS / "gwrr-dont-know-wldp.toml"), "--prior", "yes=0.3", "--width",
                           "0.05", "--grid", "0.05,1", "--format", "json"], capsys)
    assert code == 0, err
    rows = _strict(out)["by_epsilon"]
    assert rows[0]["n"] is None and rows[0]["variance"] == "inf" and rows[0]["reason"]
    assert isinstance(rows[1]["n"], int) and rows[1]["reason"] == ""


def test_survey_plan_json_is_strict_and_width_gives_the_respondents(capsys):
    code, out, err = _run(["plan", str(ROOT / "examples" / "surveys" / "two-questions.toml"), "--width", "0.05",
                           "--format", "json"], capsys)
    assert code == 0, err
    plan = _strict(out)
    assert plan["n"] == max(r["n"] for r in plan["allocation"]) and plan["width"] == 0.05


@pytest.mark.parametrize("extra, flag", [
    (["--width", "0.03", "--power", "0.9"], "--power"),
    (["--width", "0.03", "--seed", "1"], "--seed"),
    (["--width", "0.03", "--force"], "--force"),
    (["--detect", "0.05", "--level", "0.9"], "--level"),
    (["--width", "0.03", "--semantics", "wldp"], "--semantics"),
])
def test_flags_that_would_be_ignored_are_refused(extra, flag, capsys):
    code, _, err = _run(["plan", str(PROBLEMS / "warner.toml"), "--prior", "yes=0.2", *extra], capsys)
    assert code == 2 and flag in err and err.count("\n") == 1


def test_survey_refuses_the_single_question_flags(capsys):
    code, _, err = _run(["plan", str(ROOT / "examples" / "surveys" / "two-questions.toml"), "--width", "0.05",
                         "--prior", "0.5,0.5"], capsys)
    assert code == 2 and "--prior" in err


def test_a_mechanism_with_n_and_width_reports_the_half_width_at_n(capsys):
    """Warner's mechanism file at n = 2000: half-width z sqrt(Var_n) of Eq 1, beside the n for the width."""
    code, out, err = _run(["plan", str(ROOT / "examples" / "mechanisms" / "gwrr.csv"), "--prior", "0.3,0.7",
                           "--n", "2000", "--width", "0.04", "--format", "json"], capsys)
    assert code == 0, err
    plan = _strict(out)
    from designer.closed_forms import q2x3_variance_exact
    from designer.mechanism import Mechanism

    mech = Mechanism.read(ROOT / "examples" / "mechanisms" / "gwrr.csv")
    p, q = mech.row(0)[("yes",)], mech.row(0)[("no",)]
    w = plan["width_at_n"]
    assert w["n"] == 2000 and w["width"] == pytest.approx(Z95 * math.sqrt(q2x3_variance_exact(p, q, 0.3, 2000)))
    assert plan["mode"] == "sample_size" and plan["n"] != 2000


def test_detect_with_width_reports_the_half_width_at_the_test_n(capsys):
    code, out, err = _run(["plan", str(PROBLEMS / "warner.toml"), "--prior", "yes=0.3", "--detect", "0.05",
                           "--width", "0.03", "--format", "json"], capsys)
    assert code == 0, err
    plan = _strict(out)
    assert plan["width_at_n"]["n"] == plan["n"] and 0 < plan["width_at_n"]["width"] < 0.1


def test_fractions_wherever_a_probability_is_accepted(capsys):
    a = _strict(_run(["plan", str(PROBLEMS / "warner.toml"), "--prior", "1/5,4/5", "--width", "0.03", "--format",
                      "json"], capsys)[1])
    b = _strict(_run(["plan", str(PROBLEMS / "warner.toml"), "--prior", "0.2,0.8", "--width", "0.03", "--format",
                      "json"], capsys)[1])
    assert a["n"] == b["n"]
    code, _, _ = _run(["plan", str(PROBLEMS / "warner.toml"), "--prior", "yes=0.2", "--detect", "0.05", "--alpha",
                       "1/20"], capsys)
    assert code == 0


def _dice2_counts(dont_know, capsys):
    code, out, err = _run(["design", str(PROBLEMS / "gwrr-dont-know.toml"), "--device", "dice2", "--dont-know",
                           dont_know, "--format", "json"], capsys)
    return code, (_strict(out) if code == 0 else None), err


def test_a_dont_know_mass_as_a_fraction_or_its_rounded_decimal(capsys):
    code, exact, err = _dice2_counts("7/36", capsys)
    assert code == 0, err
    for written in ("0.1944", "0.194", "0.19444444"):
        code, snapped, err = _dice2_counts(written, capsys)
        assert code == 0, err
        assert snapped["counts"] == exact["counts"]
        assert any("7/36" in note for note in snapped["notes"])
    code, _, err = _dice2_counts("0.2", capsys)  # 7/36 and 8/36 both round to 0.2: no guess
    assert code == 2 and "7/36" in err and "--dont-know 7/36" in err


QUESTIONNAIRE = """name = "three"
epsilon = 1.5

[[question]]
name = "drugs"
inputs = ["never", "once", "monthly", "weekly"]
prior = [0.093, 0.159, 0.179, 0.569]

[[question]]
name = "tax"
inputs = ["yes", "no"]
prior = [0.2, 0.8]

[[question]]
name = "vote"
inputs = ["a", "b", "c"]
prior = [0.5, 0.3, 0.2]
"""


def test_questionnaire_report_has_each_design_a_figure_and_no_raw_values(tmp_path, capsys):
    import html as html_module
    import re
    import shutil
    import subprocess

    survey, report = tmp_path / "s.toml", tmp_path / "s.html"
    survey.write_text(QUESTIONNAIRE)
    code, out, err = _run(["plan", str(survey), "--width", "0.05", "--report", str(report)], capsys)
    assert code == 0, err and "report written to" in out
    page = report.read_text()
    text = html_module.unescape(re.sub(r"<[^>]+>", " ", re.sub(r'src="data:[^"]+"', "", page)))
    assert "drugs: eps = " in text and "tax: eps = " in text and "Each question's design" in text
    assert page.count("data:image/png;base64,") == 1
    assert not re.search(r"\{'|\[True|\[False|\bNone\b|\bnan\b", text), "raw Python or JSON on the page"
    assert "max_variance design (the file names no objective)" in text  # the questions name no objective
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("no Chromium on this machine (apt-get install chromium); the page itself was checked")
    shot = tmp_path / "s.png"
    subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--window-size=1200,2400",
                    f"--screenshot={shot}", report.as_uri()], capture_output=True, timeout=120, check=False)
    import matplotlib.image

    assert matplotlib.image.imread(shot).std() > 0.05


def test_help_names_never_run_into_their_text(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    block = out.split("commands:")[1]
    for line in block.splitlines():
        if line.startswith("  ") and not line.startswith("    "):
            name = line.split()[0]
            assert line[2 + len(name):].startswith("  "), line


def test_compare_names_its_grid_not_the_files_budget(capsys):
    code, out, _ = _run(["compare", str(PROBLEMS / "gwrr-dont-know.toml"), "--eps", "0.5:2:4"], capsys)
    assert code == 0 and "eps from 0.5 to 2 (4 budgets)" in out.splitlines()[0] and "eps=1" not in out


def test_a_width_that_covers_every_share_is_refused(capsys):
    code, _, err = _run(["plan", str(PROBLEMS / "warner.toml"), "--width", "3"], capsys)
    assert code == 2 and "below 0.5" in err


def test_tradeoff_says_where_it_wrote_its_plot(tmp_path, capsys):
    plot = tmp_path / "t.png"
    code, out, err = _run(["tradeoff", str(ROOT / "examples" / "mechanisms" / "q2x3.csv"), "--null", "yes", "--alt",
                           "no", "--plot", str(plot)], capsys)
    assert code == 0, err
    assert plot.exists() and f"plot written to {plot}" in out


def test_prevalence_groups_come_sorted():
    import pandas as pd

    from designer.mechanism import Mechanism
    from designer.regression import regress

    mech = Mechanism.read(ROOT / "examples" / "mechanisms" / "gwrr.csv")
    rng = np.random.default_rng(3)
    data = pd.DataFrame({"g": rng.choice(["z", "b", "m"], 300), "x": rng.normal(size=300),
                         "response": rng.choice(["{yes}", "{no}", "{yes,no}"], 300)})
    groups = list(dict.fromkeys(regress("response ~ x", data, mech).prevalence(data, by="g")["group"]))
    assert groups == ["b", "m", "z"]


@pytest.mark.heavy
def test_a_device_that_multiplies_the_variance_says_so(capsys):
    """A proxy objective (chi2) loses little on the cards but the variance a lot: a note says so. With the variance
    objective the loss is the objective's own (objective_cost) and needs no note."""
    code, out, err = _run(["design", str(PROBLEMS / "survey-5-options.toml"), "--device", "cards", "--objective",
                           "chi2", "--format", "json"], capsys)
    assert code == 0, err
    g = _strict(out)
    assert g["variance_ratio"] > 1.25
    assert any("times the continuous optimum's" in n for n in g["notes"])
    code, out, err = _run(["design", str(PROBLEMS / "survey-5-options.toml"), "--device", "cards", "--format",
                           "json"], capsys)
    assert code == 0, err
    g = _strict(out)
    assert g["objective"] == "variance" and g["objective_cost"] == pytest.approx(g["variance_ratio"] - 1, rel=1e-9)
    assert not any("times the continuous optimum's" in n for n in g["notes"])


@pytest.mark.parametrize("command", [
    ["plan", "problems/warner.toml", "--eps", "2", "--width", "0.05"],
    ["plan", "problems/gwrr-dont-know.toml", "--dont-know", "1/10", "--width", "0.05"],
    ["design", "problems/warner.toml", "--prior", "yes=0.4"],
    ["compare", "problems/gwrr-dont-know.toml", "--eps", "1,2", "--dont-know", "1/10", "--prior", "yes=0.4"],
])
def test_budget_prior_and_dont_know_flags_where_they_apply(command, capsys):
    code, _, err = _run([command[0], str(ROOT / command[1]), *command[2:]], capsys)
    assert code == 0, err


def test_plan_refuses_overrides_it_would_ignore(capsys):
    code, _, err = _run(["plan", str(ROOT / "examples" / "mechanisms" / "gwrr.csv"), "--eps", "2", "--width",
                         "0.05"], capsys)
    assert code == 2 and "--epsilon" in err
    code, _, err = _run(["plan", str(PROBLEMS / "warner.toml"), "--eps", "2", "--n", "100", "--width", "0.1"],
                        capsys)
    assert code == 2 and "--epsilon" in err
