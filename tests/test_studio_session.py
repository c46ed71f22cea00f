"""The studio without a browser: numbers read in the user's locale, the question's form and problem files, the
session's lab against the command line (run as a separate process), the identification flag, the plain words,
the command lines, script and report handed on, and the ``designer studio`` command's refusals."""

from __future__ import annotations

import json
import math
import shlex
import socket
import subprocess
import sys
import tomllib
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("shiny", reason="the studio needs Shiny for Python (pip install shiny)")

from designer._internal.render import fmt
from designer.exceptions import FieldError, NotReadyError
from designer.optimal.problem_toml import parse_problem, read_toml
from designer.studio.budget_page import textbook_designs
from designer.studio.fields import (
    apply_fields,
    fields_of,
    num,
    read_count,
    read_number,
    read_numbers,
    toml_text,
)
from designer.studio.handover import commands, report, script
from designer.studio.phrases import certificate_words, eps_words, high_loss_warning, odds_factor
from designer.studio.session import Lab
from designer.studio.state import PlanAsk, Study, Upload

ROOT = Path(__file__).resolve().parents[1]
PROBLEMS = sorted((ROOT / "problems").glob("*.toml"))
SKEWED = [0.4, 0.3, 0.15, 0.1, 0.05]


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "designer", *args], capture_output=True, text=True, cwd=cwd or ROOT,
                          timeout=300)


def cli_json(*args: str, cwd: Path | None = None) -> dict:
    out = cli(*args, "--format", "json", cwd=cwd)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def study_of(path: Path | str, eps: float | None = None, **changes) -> Study:
    """The session's state for a problem file at a budget, as the page builds it."""
    data = read_toml(str(path))
    data.update(changes)
    data["epsilon"] = float(eps if eps is not None else data["epsilon"])
    return Study(data, toml_text(data), parse_problem(data), None, data["epsilon"], {})


# -- numbers in the user's locale -----------------------------------------------------------------------------
@pytest.mark.parametrize("text, decimal, value", [
    ("1.5", ".", 1.5), ("1,5", ",", 1.5), ("1.5", ",", 1.5), (" 2 ", ".", 2.0), ("1e-3", ".", 1e-3),
    ("0,05", ",", 0.05), (".5", ".", 0.5), ("\u22121.5", ".", -1.5)])
def test_numbers_are_read_in_the_locale(text, decimal, value):
    assert read_number(text, "epsilon", "Budget", decimal=decimal) == value


@pytest.mark.parametrize("text, decimal, said", [
    ("1,5", ".", "did you mean 1.5?"), ("1.500", ",", "ambiguous"), ("abc", ".", "not a number"),
    ("", ".", "type a number"), ("1,5,0", ".", "not a number"), ("inf", ".", "not a number"),
    ("nan", ".", "not a number")])
def test_numbers_that_cannot_be_read_are_refused_in_words(text, decimal, said):
    with pytest.raises(FieldError, match=said) as caught:
        read_number(text, "epsilon", "Budget", decimal=decimal)
    assert caught.value.field == "epsilon" and str(caught.value).startswith("Budget: ")


def test_bounds_fractions_counts_and_lists():
    with pytest.raises(FieldError, match="above 0 and below 1"):
        read_number("1", "level", "Confidence level", low=0, high=1)
    assert read_number("1/5", "dont_know", "Share", fractions=True) == 0.2
    assert read_number("1/5", "dont_know", "Share", fractions=True, decimal=",") == 0.2
    assert [read_count(t, "plan_n", "Respondents", decimal=d) for t, d in
            (("2500", "."), ("2,500", "."), ("2.500", ","), ("2 500", "."), ("2500.0", "."))] == [2500] * 5
    for bad in ("0", "2.5", "lots", "2,50"):
        with pytest.raises(FieldError, match="Respondents"):
            read_count(bad, "plan_n", "Respondents")
    assert read_numbers("0.3, 0.7", "prior", "Shares", count=2) == [0.3, 0.7]
    assert read_numbers("0,3; 0,7", "prior", "Shares", count=2, decimal=",") == [0.3, 0.7]
    assert read_numbers("0.3, 0.7", "prior", "Shares", count=2, decimal=",") == [0.3, 0.7]
    assert read_numbers("1/3 2/3", "prior", "Shares", count=2) == [1 / 3, 2 / 3]
    with pytest.raises(FieldError, match=r"did you mean 0\.3, 0\.7\?"):
        read_numbers("0,3, 0,7", "prior", "Shares", count=2)


# -- the question's form and problem files --------------------------------------------------------------------
@pytest.mark.parametrize("path", PROBLEMS, ids=lambda p: p.stem)
def test_problem_files_are_written_back_as_read(path):
    data = tomllib.loads(path.read_text())
    assert tomllib.loads(toml_text(data)) == data
    assert tomllib.loads(toml_text(apply_fields(data, fields_of(data)))) == data  # the form changes nothing


def test_toml_keys_and_strings_are_quoted():
    data = {"name": 'a "quoted" name', "inputs": ["ja", "nein"], "gain": {"ja": {"{ja}": 1.0, "{ja,nein}": 0.5}}}
    assert tomllib.loads(toml_text(data)) == data


def test_the_form_makes_the_problem_and_names_the_field_it_refuses():
    base = {"name": "q", "inputs": ["yes", "no"], "epsilon": 1.0}
    form = replace(fields_of(base), inputs="low, mid, high", answers="low\nmid\nhigh\nlow | mid | high",
                   dont_know="1/10", prior="0.2, 0.3, 0.5", prior_unknown=False, semantics="wldp", objective="chi2")
    assert apply_fields(base, form) == {
        "name": "q", "inputs": ["low", "mid", "high"], "epsilon": 1.0, "prior": [0.2, 0.3, 0.5], "semantics": "wldp",
        "objective": "chi2", "structure": {"focal_sets": [["low"], ["mid"], ["high"], ["low", "mid", "high"]],
                                           "dont_know": 0.1}}
    assert "prior" not in apply_fields(base, replace(form, prior_unknown=True))
    de = apply_fields(base, replace(form, dont_know="0,1", prior="0,2; 0,3; 0,5"), decimal=",")
    assert de["structure"]["dont_know"] == 0.1 and de["prior"] == [0.2, 0.3, 0.5]
    for change, field, said in ((dict(inputs="one"), "inputs", "at least two"),
                                (dict(inputs="a, a"), "inputs", "appears twice"),
                                (dict(dont_know="lots"), "dont_know", "not a number"),
                                (dict(dont_know="1.5"), "dont_know", "at most 1"),
                                (dict(prior="a, b, c"), "prior", "not a number"),
                                (dict(prior="0.5, 0.5"), "prior", "expected 3 numbers"),
                                (dict(prior="0.2, 0.2, 0.2"), "prior", "add up to 1"),
                                (dict(answers="low\nsomething"), "answers", "'something' is not a true answer")):
        with pytest.raises(FieldError, match=said) as caught:
            apply_fields(base, replace(form, **change))
        assert caught.value.field == field


def test_numbers_reach_the_cli_without_loss():
    assert [num(x) for x in (1.0, 0.15, 2.05, 1 / 3, 1e-05)] == ["1", "0.15", "2.05", repr(1 / 3), "1e-05"]


def test_the_default_objective_is_the_library_default():
    from designer import DesignProblem

    assert fields_of({"inputs": ["a", "b"], "epsilon": 1.0}).objective == str(DesignProblem(("a", "b"), 1.0).objective)


@pytest.mark.xfail("variance" not in {o.value for o in __import__("designer").Objective}, strict=True,
                   reason="the variance objectives land with the lead's issue 48 (main)")
def test_the_studio_designs_for_the_estimate_by_default():
    """A new question, and a problem that names no objective, are designed for the most accurate shares; the
    objective is shown in words (Objective.meaning)."""
    from designer import Objective
    from designer.studio.question_page import DEFAULT_PROBLEM, objective_choices

    assert DEFAULT_PROBLEM["objective"] == "variance"
    assert fields_of({"inputs": ["a", "b"], "epsilon": 1.0}).objective == "variance"
    assert next(iter(objective_choices({}))) == "variance"
    from designer.studio.phrases import objective_words

    assert objective_words("variance").endswith(Objective.VARIANCE.meaning.replace("MLE ", ""))


# -- the lab against the command line -------------------------------------------------------------------------
@pytest.mark.parametrize("name, eps", [("gwrr-dont-know", 1.0), ("gwrr-dont-know-wldp", 2.5),
                                       ("survey-5-options", 2.05), ("warner", 1 / 3)])
def test_designs_and_plans_are_the_clis(tmp_path, name, eps):
    path = ROOT / "problems" / f"{name}.toml"
    lab = Lab(str(tmp_path))
    study = study_of(path, eps)
    released = lab.released(study)
    expected = cli_json("design", str(path), "--eps", num(eps))
    assert released.result.to_dict()["matrix"] == expected["matrix"]
    assert lab.identification(study).mean_variance == expected["variance"]
    assert lab.design(study) is released.result  # cached per state
    out = tmp_path / "cli.json"
    assert cli("design", str(path), "--eps", num(eps), "--out", str(out)).returncode == 0
    mine, theirs = json.loads(Path(released.path).read_text()), json.loads(out.read_text())
    assert mine == theirs  # the mechanism file is the command line's, certificate included
    prior = released.prior_text()
    plan = lab.plan_width(replace(study, plan=PlanAsk(width=0.04, level=0.9)))
    assert plan.n == cli_json("plan", str(out), "--width", "0.04", "--level", "0.9", "--semantics",
                              released.semantics, "--prior", prior)["n"]
    power = lab.plan_power(study)
    assert power.n == cli_json("plan", str(out), "--detect", "0.1", "--semantics", released.semantics, "--prior",
                               prior)["n"]


def test_textbook_designs_are_the_closed_forms_of_compare():
    path = ROOT / "problems" / "gwrr-dont-know.toml"
    problem = study_of(path).problem
    for eps in (0.5, 1.0, 3.0):
        rows = {name.split(" ")[0]: (p, v) for name, p, v in textbook_designs(problem, eps)}
        row = cli_json("compare", str(path), "--eps", num(eps))["rows"][0]
        assert rows["With"] == pytest.approx((row["p_closed"], row["variance_closed"]), rel=1e-12)
        e = np.exp(eps)
        p = e / (1 + e)
        assert rows["Warner"] == pytest.approx((p, 0.25 + p * (1 - p) / (2 * p - 1) ** 2), rel=1e-12)  # Eq 1
    k5 = study_of(ROOT / "problems" / "survey-5-options.toml").problem
    krr = {name: p for name, p, _ in textbook_designs(k5, 2.0)}
    assert krr["5-ary randomized response"] == pytest.approx(np.exp(2) / (np.exp(2) + 4), rel=1e-12)


def test_the_skewed_five_options_are_flagged_or_identified(tmp_path):
    """The bundled 5-option question at the prior 0.4..0.05, eps 2: its chi2 design answers "often" and "always"
    alike (variance 7.4e8 per respondent against 0.49 for 5-ary randomized response): flagged, with a fix whose
    design identifies every share."""
    lab = Lab(str(tmp_path))
    study = study_of(ROOT / "problems" / "survey-5-options.toml", 2.0, prior=SKEWED)
    ident = lab.identification(study)
    expected = cli_json("design", str(ROOT / "problems" / "survey-5-options.toml"), "--eps", "2", "--prior",
                        ",".join(map(str, SKEWED)))
    if expected["variance"] < 1e3:  # the file's objective identifies every share (no flag)
        assert ident.ok
        return
    assert not ident.ok and ident.alike == (("often", "always"),) and set(ident.poor) == {"often", "always"}
    assert "often and always are answered alike" in ident.words() and ident.fix.startswith("Fix:")
    fixed = study_of(ROOT / "problems" / "survey-5-options.toml", 2.0, prior=SKEWED, objective=ident.fix_objective)
    assert lab.identification(fixed).ok
    assert math.isfinite(lab.design(fixed).variance)
    uniform = study_of(ROOT / "problems" / "survey-5-options.toml", 2.0)
    assert lab.identification(uniform).ok


def test_a_design_without_information_is_flagged_even_when_its_variance_is_infinite(tmp_path):
    lab = Lab(str(tmp_path))
    study = study_of(ROOT / "problems" / "survey-5-options.toml", 1.0, prior=SKEWED, objective="truthful")
    ident = lab.identification(study)
    assert not ident.ok and math.isinf(ident.mean_variance) and "sometimes" in ident.words()


def test_thirty_options_are_designed_and_the_later_steps_refused_in_words(tmp_path):
    lab = Lab(str(tmp_path))
    data = {"name": "thirty", "inputs": [f"o{i}" for i in range(30)], "epsilon": 1.0}
    study = Study(data, toml_text(data), parse_problem(data), None, 1.0, {})
    assert lab.released(study).mechanism is None and lab.design(study).compact is not None
    with pytest.raises(NotReadyError, match="only up to 16 true answers") as caught:
        lab.plan_width(study)
    assert caught.value.reason == "listed"
    assert "designer plan" not in commands(study, lab)


def test_a_file_uploaded_again_under_its_name_is_read_again(tmp_path):
    lab = Lab(str(tmp_path))
    study = study_of(ROOT / "problems" / "gwrr-dont-know.toml", 1.0)
    mech = lab.released(study).path
    answers = tmp_path / "answers.csv"
    got = []
    for rows in (["{yes}"] * 30 + ["{no}"] * 10 + ['"{yes,no}"'] * 10, ["{yes}"] * 10 + ["{no}"] * 30):
        answers.write_text("response\n" + "\n".join(rows) + "\n")
        fit = lab.estimate(replace(study, answers=Upload.of(str(answers), "answers.csv")))
        theirs = cli_json("estimate", str(answers), "--mechanism", mech)
        assert fit.to_dict()["estimate"] == theirs["estimate"] and fit.to_dict()["status"] == theirs["status"]
        got.append(fit.to_dict()["estimate"]["yes"])
    assert got[0] > 0.5 > got[1]


# -- plain words ----------------------------------------------------------------------------------------------
def test_the_budget_in_plain_words():
    assert odds_factor(1.0) == "2.72" and "at most 2.72x" in eps_words(1.0)
    for eps in (0.05, 0.5, 1.0, 1.5, 2.0, 4.6, 5.0, 10.0, 20.0):
        shown = odds_factor(eps)
        assert float(shown.replace(",", "")) >= math.exp(eps) * (1 - 1e-12)  # rounded up: a bound stays a bound
        assert float(shown.replace(",", "")) <= math.exp(eps) * 1.01
    assert "made precise" in eps_words(1.0, "wldp")


def test_the_high_loss_warning_is_the_command_lines(tmp_path):
    """Above 5 nats the studio warns as ``designer randomize`` does (the same threshold, the same factor)."""
    assert high_loss_warning(5.0) == "" and high_loss_warning(5.01)
    truth = tmp_path / "truth.csv"
    truth.write_text("answer\nyes\nno\n")
    mech = tmp_path / "m.json"
    assert cli("design", str(ROOT / "problems" / "warner.toml"), "--eps", "6", "--out", str(mech)).returncode == 0
    out = cli_json("randomize", str(truth), "--mechanism", str(mech), "--column", "answer", "--out",
                   str(tmp_path / "r.csv"))
    theirs = out["warnings"][0]
    factor = theirs.split("may be ")[1].split(" times")[0]
    assert f"may be {factor} times likelier" in high_loss_warning(6.0)
    assert "above 5" in theirs and "protects little" in theirs


def test_the_certificate_in_words(tmp_path):
    cert = Lab(str(tmp_path)).design(study_of(ROOT / "problems" / "gwrr-dont-know.toml", 1.0)).certificate
    words = certificate_words(cert)
    assert "budget 1" in words and "SLDP" in words and "Shafer" not in words and "loss" not in words


# -- what is handed on ----------------------------------------------------------------------------------------
@pytest.fixture
def full(tmp_path):
    """A session with plans, an export, a device and an estimate, and the files the downloads give."""
    lab = Lab(str(tmp_path / "work"))
    (tmp_path / "work").mkdir()
    study = study_of(ROOT / "problems" / "gwrr-dont-know.toml", 1.0)
    released = lab.released(study)
    truth, answers = tmp_path / "truth.csv", tmp_path / "answers.csv"
    assert cli("synthesize", str(ROOT / "problems" / "gwrr-dont-know.toml"), "--n", "1500", "--prior",
               "yes=0.3,no=0.7", "--seed", "2", "--out", str(truth)).returncode == 0
    assert cli("randomize", str(truth), "--mechanism", released.path, "--column", "answer", "--out", str(answers),
               "--seed", "3", "--simulation").returncode == 0
    study = replace(study, answers=Upload.of(str(answers), "answers.csv"), device="die")
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    (downloads / "problem.toml").write_text(toml_text(study.data))
    (downloads / "mechanism.json").write_bytes(Path(released.path).read_bytes())
    (downloads / "answers.csv").write_bytes(answers.read_bytes())
    return lab, study, downloads


def test_the_command_lines_run_next_to_the_downloads_and_give_the_screens_numbers(full):
    lab, study, downloads = full
    lines = [li for li in commands(study, lab).splitlines() if li.startswith("designer ")]
    kinds = [li.split()[1] for li in lines]
    # --width with --n: one plan gives the screen's two numbers
    assert kinds.count("plan") == 2 and "estimate" in kinds and "export" in kinds and "--device die" in " ".join(lines)
    outputs = {}
    for line in lines:
        args = shlex.split(line)[1:]
        out = cli(*args, *(["--format", "json"] if args[0] in ("plan", "estimate") else []), cwd=downloads)
        assert out.returncode == 0, (line, out.stderr)
        outputs[line] = out.stdout
    width = json.loads(outputs[next(li for li in lines if "--width" in li)])
    assert width["n"] == lab.plan_width(study).n
    assert width["width_at_n"]["width"] == lab.plan_n(study).width_at_n.width
    assert json.loads(outputs[next(li for li in lines if "--detect" in li)])["n"] == lab.plan_power(study).n
    estimate = json.loads(outputs[next(li for li in lines if li.startswith("designer estimate"))])
    assert estimate["estimate"] == lab.estimate(study).to_dict()["estimate"]
    page = next(li for li in lines if "--to html" in li)
    assert lab.export(study, "html").randomizer.table.sha256 in outputs[page] or (
        (downloads / "page.html").read_text() == lab.export(study, "html").text)


def test_the_script_reproduces_the_screens_numbers(full):
    lab, study, downloads = full
    path = downloads / "studio_session.py"
    path.write_text(script(study, lab))
    out = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=300, cwd=downloads)
    assert out.returncode == 0, out.stderr
    mech = lab.released(study).mechanism
    for x, row in zip(mech.inputs, mech.matrix):
        assert " ".join([x, *(fmt(v, 8) for v in row)]) in out.stdout
    assert f"{lab.plan_width(study).n:,} respondents" in out.stdout  # as the screen writes it
    fit = lab.estimate(study)
    low_high = fit.conf_int()
    for i, x in enumerate(fit.inputs):
        cells = [fit.estimate[i], fit.stderr[i], *low_high[i]]
        assert " ".join([x, *(fmt(v, 8) for v in cells)]) in out.stdout
    assert lab.export(study, "html").randomizer.table.sha256 in out.stdout


def test_the_report_holds_the_session(full):
    lab, study, _ = full
    page = report(study, lab)
    assert page.startswith("<!DOCTYPE html>") and "<script" not in page and "src=\"http" not in page
    mech = lab.released(study).mechanism
    for part in ("yes, no", "at most 2.72x", "Certified private", f"{lab.plan_width(study).n:,}",
                 "On paper", "Online", *(fmt(v, 8) for row in mech.matrix for v in row),
                 *(fmt(v, 8) for v in lab.estimate(study).estimate), "designer design problem.toml"):
        assert part in page, part
    for word in ("Shafer", "MLE", "Thm", "Lemma"):
        assert word not in page


# -- the command ----------------------------------------------------------------------------------------------
def test_studio_command_refuses_bad_files_and_busy_ports(tmp_path):
    out = cli("studio", str(tmp_path / "missing.toml"), "--no-browser", "--port", "0")
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "missing.toml" in out.stderr
    bad = tmp_path / "bad.csv"
    bad.write_text("not a mechanism\n")
    out = cli("studio", str(bad), "--no-browser", "--port", "0")
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "bad.csv" in out.stderr
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        out = cli("studio", "--no-browser", "--port", str(port))
    assert out.returncode == 2 and f"--port {port}" in out.stderr and "Traceback" not in out.stderr


def test_studio_without_shiny_says_what_to_install():
    code = ("import sys; sys.modules['shiny'] = None\n"
            "from designer.cli import main\n"
            "sys.exit(main(['studio', '--no-browser']))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "pip install 'designer-ldp[studio]'" in out.stderr
    assert "shiny" not in subprocess.run([sys.executable, "-c", "import designer.cli, sys; print(sorted(sys.modules))"],
                                         capture_output=True, text=True, timeout=60).stdout
