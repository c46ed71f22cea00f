"""The plan front door (designer.verbs.plan_verb.plan): the CLI's numbers from a path and from objects, every plan
mode, every planning and device result a Result, and bad input refused on one line."""

from __future__ import annotations

import json
import math
from pathlib import Path
from statistics import NormalDist

import numpy as np
import pytest

from designer.cli import main
from designer.exceptions import DesignerError
from designer.optimal import load_problem
from designer.planning.group_plan import SplitPlan
from designer.planning.plan import Plan, SurveyPlan
from designer.release.files import open_mechanism_file
from designer.results import FitStatus, Result, render
from designer.verbs.plan_verb import plan

ROOT = Path(__file__).resolve().parents[1]
WARNER = str(ROOT / "problems" / "warner.toml")
GWRR_DK = str(ROOT / "problems" / "gwrr-dont-know.toml")
GWRR_CSV = str(ROOT / "examples" / "mechanisms" / "gwrr.csv")
SURVEY = str(ROOT / "examples" / "surveys" / "two-questions.toml")
W80 = str(ROOT / "examples" / "mechanisms" / "warner-80.csv")
W65 = str(ROOT / "examples" / "mechanisms" / "warner-65.csv")


def _cli(capsys, *argv: str, fmt: str = "json") -> str:
    code = main(["plan", *argv, "--format", fmt])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def _flags(kwargs: dict) -> list[str]:
    argv = []
    for key, value in kwargs.items():
        argv += [f"--{key.replace('_', '-')}", str(value)]
    return argv


#: The guide's examples (docs/guide/plan.md) as keywords, one per plan mode and source kind.
GUIDE = [
    (WARNER, {"prior": "yes=0.3,no=0.7", "width": 0.02}),
    (WARNER, {"prior": "yes=0.05", "width": 0.03}),
    (WARNER, {"prior": "yes=0.3,no=0.7", "n": 2000, "width": 0.03}),
    (GWRR_DK, {"prior": "yes=0.3,no=0.7", "detect": 0.05, "power": 0.8}),
    (WARNER, {"detect": 0.1, "curve": "100:2000:20", "curve_detect": "0.05,0.15"}),
    (GWRR_CSV, {"prior": "0.3,0.7", "n": 2000, "width": 0.03}),
    (GWRR_DK, {"prior": "yes=0.3,no=0.7", "width": 0.03, "grid": "0.5:3:6", "check": 50, "seed": 1}),
    (WARNER, {"detect": 0.1, "groups": 2, "null_variance": "null", "width": 0.05, "n": 300}),
]


@pytest.mark.parametrize("source, kwargs", GUIDE)
def test_the_front_door_gives_the_cli_numbers_in_every_format(capsys, source, kwargs):
    result = plan(source, **kwargs)
    assert isinstance(result, Plan) and isinstance(result, Result)
    for fmt in ("json", "csv", "table"):
        assert render(result, fmt) + "\n" == _cli(capsys, source, *_flags(kwargs), fmt=fmt)


def test_warner_sample_size_is_equation_1_from_a_path_and_from_a_problem():
    """n = ceil(z^2 (pi (1 - pi) + p (1 - p) / (2p - 1)^2) / W^2), p = e^eps / (1 + e^eps) (Ex 3.7, Eq 1)."""
    z = NormalDist().inv_cdf(0.975)
    p = math.e / (1 + math.e)
    for share, width in ((0.3, 0.02), (0.05, 0.03)):
        v = share * (1 - share) + p * (1 - p) / (2 * p - 1) ** 2
        closed = math.ceil(z**2 * v / width**2)
        from_path = plan(WARNER, prior=f"yes={share}", width=width)
        from_object = plan(load_problem(WARNER), prior={"yes": share}, width=width)
        from_list = plan(load_problem(WARNER), prior=[share, 1 - share], width=width)
        assert from_path.n in (closed, closed + 1) and from_path.n == from_object.n == from_list.n
        a, b = from_path.to_dict(), from_object.to_dict()
        assert a.pop("source") == WARNER and b.pop("source") == "warner"
        assert a == b


def test_every_mode_is_chosen_by_the_library():
    assert plan(WARNER, width=0.03).mode.value == "sample_size"
    budget = plan(WARNER, prior="yes=0.3,no=0.7", n=2000, width=0.03)
    assert budget.mode.value == "smallest_budget" and abs(budget.epsilon - 1.739) < 1e-3
    # a fixed mechanism with n and a width: the sample size, and the half-width at n
    fixed = plan(open_mechanism_file(GWRR_CSV).mechanism, prior=[0.3, 0.7], n=2000, width=0.03)
    assert fixed.mode.value == "sample_size" and fixed.width_at_n is not None and fixed.width_at_n.n == 2000
    power = plan(WARNER, prior="yes=0.3", detect=0.05)
    assert power.mode.value == "power" and power.power_at_n is not None and power.power_at_n.power >= 0.8
    survey = plan(SURVEY, width=0.05)
    assert isinstance(survey, SurveyPlan) and survey.mode.value == "allocation"
    assert survey.status is FitStatus.OPTIMAL and survey.n == max(r["n"] for r in survey.to_dict()["allocation"])


def test_a_questionnaire_object_is_planned_as_its_file(capsys):
    import tomllib

    from designer.planning.survey_plan import parse_survey

    survey = parse_survey(tomllib.loads(Path(SURVEY).read_text()), source=SURVEY)
    a, b = plan(survey, width=0.05).to_dict(), json.loads(_cli(capsys, SURVEY, "--width", "0.05"))
    assert a.pop("source") != b.pop("source") and json.loads(json.dumps(a)) == b
    with pytest.raises(DesignerError, match=r"^prior has no effect"):
        plan(survey, prior=[0.5, 0.5], width=0.05)


def test_the_command_only_parses_calls_and_renders():
    """designer/cli/plan_commands.py calls the front door and the renderer: no planner, no mode rule."""
    import ast
    import inspect

    from designer.cli import plan_commands

    called = {node.func.id for node in ast.walk(ast.parse(inspect.getsource(plan_commands)))
              if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
    assert {"plan", "render"} <= called
    assert not called & {"make_plan", "plan_survey", "plan_split", "plan_mode", "refuse_unused", "PlanRequest"}


def test_a_design_result_is_planned_as_its_mechanism():
    from designer.optimal.engine import design

    result = design(load_problem(WARNER))
    a = plan(result, prior=[0.3, 0.7], width=0.02).to_dict()
    b = plan(result.mechanism, prior=[0.3, 0.7], width=0.02).to_dict()
    assert a == b and a["n"] in (10859, 10860)


def test_a_split_survey_matches_the_guide_and_the_cli(capsys):
    kwargs = {"split": "a=2,b=3", "prior": "yes=0.3", "width": 0.03}
    result = plan(mechanism={"a": W80, "b": W65}, **kwargs)
    assert isinstance(result, SplitPlan) and result.status is FitStatus.EXACT
    out = result.to_dict()
    assert out["n_total"] == 5142 and out["designs"]["a"]["n"] == 2057 and out["designs"]["b"]["n"] == 3085
    argv = ["--mechanism", f"a={W80}", "--mechanism", f"b={W65}", *_flags(kwargs)]
    for fmt in ("json", "csv", "table"):
        assert render(result, fmt) + "\n" == _cli(capsys, *argv, fmt=fmt)
    # objects instead of files: the same numbers; the split given as a mapping
    mechs = {name: open_mechanism_file(p).mechanism for name, p in (("a", W80), ("b", W65))}
    same = plan(mechanism=mechs, split={"a": 2, "b": 3}, prior={"yes": 0.3}, width=0.03).to_dict()
    assert {k: v for k, v in same.items() if k != "source"} == {k: v for k, v in out.items() if k != "source"}
    listed = plan(mechanism=[f"a={W80}", f"b={W65}"], **kwargs).to_dict()  # the repeated flag's NAME=FILE items
    assert listed == out
    chosen = plan(mechanism=mechs, prior={"yes": 0.3}, width=0.03)
    assert chosen.status is FitStatus.OPTIMAL and chosen.n <= result.n  # the best split is no worse


def test_outputs_are_written_and_named_in_the_summary(tmp_path):
    report = tmp_path / "plan.html"
    result = plan(GWRR_DK, prior="yes=0.3,no=0.7", width=0.03, grid="1:3:3", report=report)
    assert report.read_text().startswith("<!DOCTYPE html>") and "6033" in report.read_text()
    assert result.summary().endswith(f"report written to {report}")
    with pytest.raises(DesignerError, match="already exists"):
        plan(GWRR_DK, width=0.03, report=report)
    assert plan(GWRR_DK, width=0.03, report=report, force=True).notes == (f"report written to {report}",)


def test_figures_are_written_as_the_command_writes_them(tmp_path, capsys):
    curve, plot_png = tmp_path / "power.png", tmp_path / "n.png"
    result = plan(WARNER, detect=0.1, curve="100:2000:5", curve_detect="0.05", curve_plot=curve)
    assert curve.read_bytes().startswith(b"\x89PNG") and result.notes == (f"power curve written to {curve}",)
    sized = plan(WARNER, width=0.03, grid="1,2", plot=plot_png)
    assert plot_png.read_bytes().startswith(b"\x89PNG") and sized.summary().endswith(f"plot written to {plot_png}")
    printed = _cli(capsys, WARNER, "--width", "0.03", "--grid", "1,2", "--plot", str(plot_png), "--force",
                   fmt="table")
    assert printed == sized.summary() + "\n"


@pytest.mark.parametrize("kwargs, words", [
    ({"width": 0.7}, "width must"), ({"width": "x"}, "width 'x'"), ({}, "say what to plan"),
    ({"width": 0.02, "seed": 1}, "seed seeds"), ({"width": 0.02, "prior": [0.5]}, "prior "),
    ({"width": 0.02, "prior": "yes=0.5,no=0.6"}, "prior "), ({"width": 0.02, "alternative": "less"}, "alternative has"),
    ({"width": 0.02, "split": "a=1"}, "split "), ({"width": 0.02, "n": 0}, "n must"),
    ({"width": 0.02, "level": 1.5}, "level must"), ({"detect": 0.1, "groups": 3}, "groups must"),
    ({"width": 0.02, "semantics": "wldp"}, "semantics"), ({"detect": 0.1, "curve_detect": "0.2"}, "curve"),
])
def test_bad_keywords_raise_one_line(kwargs, words):
    with pytest.raises(DesignerError) as info:
        plan(WARNER, **kwargs)
    assert words in str(info.value) and "\n" not in str(info.value) and "--" not in str(info.value)


@pytest.mark.parametrize("source, kwargs, words", [
    (3, {"width": 0.02}, "source must be"), ("nope.toml", {"width": 0.02}, "nope.toml"),
    (None, {"width": 0.02}, "give a source"), (SURVEY, {"epsilon": 1.0, "width": 0.05}, "epsilon has"),
    (GWRR_CSV, {"grid": "1:2:3", "width": 0.02}, "grid"),
])
def test_bad_sources_raise_one_line(source, kwargs, words):
    with pytest.raises(DesignerError) as info:
        plan(source, **kwargs)
    assert words in str(info.value) and "\n" not in str(info.value) and "--" not in str(info.value)


def test_bad_group_plans_raise_one_line():
    for kwargs, words in [({"width": 0.03}, "not both"), ({"grid": "1:2:3", "width": 0.03}, "grid"),
                          ({"noncompliance": "carriers:no", "width": 0.03}, "unknown_share=S"),
                          ({}, "say what to plan"), ({"split": "a=x", "width": 0.03}, "split ")]:
        source = WARNER if words == "not both" else None
        with pytest.raises(DesignerError, match=words):
            plan(source, mechanism={"a": W80, "b": W65}, **kwargs)


def _check_result(result: Result) -> None:
    assert isinstance(result, Result) and isinstance(result.status, FitStatus)
    assert isinstance(result.warnings, tuple) and all(isinstance(w, str) for w in result.warnings)
    json.loads(render(result, "json"))  # strict JSON
    columns, rows = result.table()
    assert columns and all(len(r) == len(columns) for r in rows)
    assert isinstance(result.summary(), str) and result.summary()
    import csv
    import io

    assert next(csv.reader(io.StringIO(render(result, "csv")))) == columns


def test_every_planning_result_has_the_results_shape():
    from designer.planning import allocate, parse_survey, sample_size, smallest_budget
    from designer.planning.noncompliance_design import design_for_noncompliance
    from designer.planning.sizes import accuracy_of
    from designer.planning.split import split_accuracy

    warner = load_problem(WARNER)
    mech = open_mechanism_file(W80).mechanism
    size = sample_size(accuracy_of(mech, "sldp", [0.3, 0.7]), 0.03)
    assert size.status is FitStatus.EXACT and size.to_dict()["n"] == size.n
    budget = smallest_budget(warner, 2000, 0.03, prior=[0.3, 0.7])
    assert budget.status is FitStatus.EXACT and abs(budget.to_dict()["epsilon"] - 1.739) < 1e-3
    _, given = split_accuracy({"a": mech, "b": open_mechanism_file(W65).mechanism}, fractions={"a": 0.4, "b": 0.6})
    _, chosen = split_accuracy({"a": mech, "b": open_mechanism_file(W65).mechanism})
    assert given.status is FitStatus.EXACT and chosen.status is FitStatus.OPTIMAL
    assert given.table(100)[1] == [["a", 0.4, 40], ["b", 0.6, 60]]
    nc = design_for_noncompliance(1.0, "carriers:no", prior=0.3, share=0.2)
    assert nc.status is FitStatus.OPTIMAL and [r[0] for r in nc.table()[1]] == list(nc.mechanisms)
    import tomllib

    allocation = allocate(parse_survey(tomllib.loads(Path(SURVEY).read_text())), joint=False)
    assert allocation.status is FitStatus.OPTIMAL and [r[0] for r in allocation.table()[1]] == ["drugs", "income"]
    for result in (size, budget, given, chosen, nc, allocation, plan(WARNER, width=0.03),
                   plan(mechanism={"a": W80, "b": W65}, split="a=1,b=1", width=0.03)):
        _check_result(result)


def test_a_device_design_is_a_result_with_the_cli_outputs(tmp_path, capsys):
    from designer.devices import grid_design, parse_device

    g = grid_design(load_problem(GWRR_DK), parse_device("spinner:10"))
    _check_result(g)
    assert g.status is FitStatus.OPTIMAL and g.warnings == ()
    for fmt in ("json", "csv", "table"):
        assert main(["design", GWRR_DK, "--device", "spinner:10", "--format", fmt]) == 0
        printed = capsys.readouterr().out
        shown = g.summary() if fmt == "table" else render(g, fmt)
        assert shown + "\n" == printed
    card = tmp_path / "card.md"
    assert main(["design", GWRR_DK, "--device", "spinner:10", "--instructions", str(card)]) == 0
    assert capsys.readouterr().out == g.summary(instructions=card) + "\n" and card.exists()
    counts = np.array(g.to_dict()["counts"])
    assert (counts.sum(axis=1) == 10).all()  # every row uses all ten sectors
    assert g.to_dict()["matrix"] == (counts / 10).tolist()
