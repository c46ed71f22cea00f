"""The studio's hand-ons against its screen: a fresh question starts from the defaults, the notebook (run top to
bottom by a Jupyter kernel) and the script print the screen's numbers to its digits and nothing else, the command
lines add no plan the screen did not show, and the preview's simulated survey is reproducible and covers the
expected shares."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

pytest.importorskip("shiny", reason="the studio needs Shiny for Python (pip install shiny)")

from designer.optimal.problem_toml import parse_problem, read_toml
from designer.studio.fields import apply_fields, carried, fields_of, fresh_question, toml_text
from designer.studio.handover import commands, report
from designer.studio.notebook_cells import notebook, script
from designer.studio.session import Lab
from designer.studio.state import PlanAsk, Study

ROOT = Path(__file__).resolve().parents[1]
GWRR = ROOT / "problems" / "gwrr-dont-know.toml"


def g(x: float, digits: int) -> str:
    return f"{float(x):.{digits}g}"


def study_of(path: Path, **plan: object) -> Study:
    data = read_toml(str(path))
    return Study(data, toml_text(data), parse_problem(data), None, float(data["epsilon"]), {},
                 plan=PlanAsk(**plan))  # type: ignore[arg-type]


def test_the_studio_starts_fresh_and_a_new_question_drops_what_a_loaded_one_carried():
    from designer.studio.question_page import DEFAULT_PROBLEM

    assert DEFAULT_PROBLEM["objective"] == "variance" and "structure" not in DEFAULT_PROBLEM
    assert "name" not in DEFAULT_PROBLEM and "prior" not in DEFAULT_PROBLEM
    base = read_toml(str(GWRR))
    gone = " ".join(carried(base, ["a", "b", "c"]))
    for said in ("gwrr-dont-know", "truthful", "0.2", "0.5, 0.5"):
        assert said in gone, said
    fresh = fresh_question(["a", "b", "c"])
    data = apply_fields(fresh, replace(fields_of(fresh), title="Smoking at work"))
    problem = parse_problem(data)
    assert problem.dont_know is None and str(problem.objective) == "variance" and data["name"] == "Smoking at work"
    assert carried(fresh, ["a", "b", "c"]) == []


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    folder = tmp_path_factory.mktemp("handon")
    (folder / "work").mkdir()
    lab = Lab(str(folder / "work"))
    study = study_of(GWRR, width=0.03, seed=1)
    return lab, study, folder


def screen_lines(lab: Lab, study: Study) -> list[str]:
    """The numbers the screen shows for the study, in the screen's sentences (written here independently)."""
    mech = lab.released(study).mechanism
    out = [" ".join([x, *(g(v, 8) for v in row)]) for x, row in zip(mech.inputs, mech.matrix)]
    ident = lab.identification(study)
    out.append(f"Mean variance of the estimated shares, per respondent: {g(ident.mean_variance, 8)}")
    plan = lab.plan_width(study)
    out.append(f"{plan.n:,} respondents give every share a 95% interval of half-width at most 0.03 (reached: "
               f"{g(plan.achieved_width, 6)}).")
    w = lab.plan_n(study).width_at_n
    out.append(f"With {w.n:,} respondents every share's 95% interval has half-width {g(w.width, 6)}.")
    losses = lab.audit(study).losses
    out.append(f"If set answers are later made precise: a budget of {g(losses['walley'].eps, 6)} nats")
    p = lab.preview(study)
    for (x, est, lo, hi), e, d in zip(p.rows(), p.expected, p.drawn):
        out.append(" ".join([x, g(e, 8), g(d, 8), g(est, 8), g(lo, 8), g(hi, 8)]))
    return out


def test_the_notebook_runs_top_to_bottom_with_the_screens_numbers(session):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    lab, study, folder = session
    nb = nbformat.reads(notebook(study, lab), as_version=4)
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(folder)}}).execute()
    printed = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))
    for line in screen_lines(lab, study):
        assert line in printed, line
    script_path = folder / "studio_session.py"
    script_path.write_text(script(study, lab))
    run = subprocess.run([sys.executable, str(script_path)], capture_output=True, text=True, timeout=300, cwd=folder)
    assert run.returncode == 0, run.stderr
    assert run.stdout == printed  # the script and the notebook print the same, and only that


def test_no_plan_the_screen_did_not_show(session):
    lab, study, _ = session
    text = commands(study, lab) + script(study, lab)
    assert "width=0.05" not in text and "--width 0.05" not in text
    assert "--width 0.03 --n 1000" in commands(study, lab)


def test_the_preview_is_reproducible_by_its_seed_and_covers_the_expected_shares(session, tmp_path):
    lab, study, _ = session
    first = lab.preview(study)
    again = Lab(str(tmp_path)).preview(study)
    other = lab.preview(replace(study, plan=replace(study.plan, seed=2)))
    assert first.n == lab.plan_width(study).n
    assert [r[1] for r in first.rows()] == [r[1] for r in again.rows()] != [r[1] for r in other.rows()]
    assert all(first.covered())


def test_the_report_states_both_guarantees_the_plan_and_its_assumptions(session):
    lab, study, _ = session
    page = report(study, lab)
    losses = lab.audit(study).losses
    for part in ("if the set answers are later made precise", g(losses["walley"].eps, 6), "Assumptions",
                 "Variance of each share", "as the respondent sees it", "A simulated survey",
                 "overflow-x: auto", "@media print"):
        assert part in page, part


def test_the_studio_does_not_import_the_command_line():
    import ast

    for path in sorted((ROOT / "designer" / "studio").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                name = ("." * node.level) + (node.module or "")
                assert not name.startswith(("..cli", "designer.cli")), f"{path.name} imports {name}"
            elif isinstance(node, ast.Import):
                assert not any(a.name.startswith("designer.cli") for a in node.names), path.name


def test_the_report_in_a_german_browser_writes_decimal_commas(session):
    lab, study, _ = session
    page = report(study, lab, decimal=",", group=".")
    mech = lab.released(study).mechanism
    assert g(mech.matrix[0][0], 8).replace(".", ",") in page
    assert f"{lab.plan_width(study).n:,}".replace(",", ".") in page
    assert "--width 0.03" in page  # the command lines as a terminal takes them
