"""The front door of ``designer design`` (designer/verbs/design_verb.py) gives the command line's numbers, from a
problem file or a DesignProblem; design, compare and sweep results have a status, warnings, to_dict, table and
summary, and the commands print them through designer.results.render."""

from __future__ import annotations

import inspect
import json
import math
import re
from pathlib import Path

import pytest

import designer
from designer.cli import main
from designer.exceptions import DesignerError, InvalidArgumentError, InvalidArgumentTypeError, InvalidProblemError
from designer.optimal import DesignProblem, load_problem
from designer.optimal.compare import compare
from designer.optimal.sweep import sweep_result
from designer.results import FitStatus, Result, render
from designer.verbs.design_verb import design

ROOT = Path(__file__).resolve().parents[1]
WARNER = str(ROOT / "problems" / "warner.toml")
GWRR = str(ROOT / "problems" / "gwrr-dont-know-wldp.toml")
PRAM = str(ROOT / "problems" / "pram-party.toml")


def cli(capsys, *argv: str) -> str:
    assert main(list(argv)) == 0
    return capsys.readouterr().out.rstrip("\n")


def without_seconds(obj: dict) -> dict:
    return {k: v for k, v in obj.items() if k != "seconds"}


def test_the_front_door_is_a_function():
    assert inspect.isfunction(design) and not inspect.ismodule(designer.design)


@pytest.mark.parametrize("path, flags, keywords", [
    (WARNER, [], {}),
    (GWRR, ["--epsilon", "1.5", "--prior", "yes=0.3"], {"epsilon": 1.5, "prior": "yes=0.3"}),
    (GWRR, ["--dont-know", "7/36", "--semantics", "sldp"], {"dont_know": "7/36", "semantics": "sldp"}),
    (str(ROOT / "problems" / "survey-5-options-utility.toml"), ["--objective", "truthful"], {"objective": "truthful"}),
    (PRAM, [], {}),
])
def test_from_a_path_and_from_a_problem_the_clis_json(capsys, path, flags, keywords):
    expected = without_seconds(json.loads(cli(capsys, "design", path, *flags, "--format", "json")))
    for source in (path, Path(path), load_problem(path)):
        result = design(source, **keywords)
        assert without_seconds(json.loads(render(result, "json"))) == expected
        assert without_seconds(result.to_dict()) == expected


def test_a_prior_as_a_mapping_or_a_sequence_is_the_flags_prior(capsys):
    expected = without_seconds(json.loads(cli(capsys, "design", GWRR, "--prior", "yes=0.3", "--format", "json")))
    assert expected["prior"] == {"yes": 0.3, "no": pytest.approx(0.7)}
    for prior in ({"yes": 0.3}, [0.3, 0.7], "0.3,0.7"):
        assert without_seconds(design(GWRR, prior=prior).to_dict()) == expected


def test_a_design_result_is_a_result(capsys):
    result = design(WARNER, epsilon=1.0)
    assert isinstance(result, Result) and result.status is FitStatus.OPTIMAL and result.warnings == ()
    # Warner (Ex 3.7) at eps = 1: the truthful mass e / (1 + e)
    assert result.mechanism.row("yes")[("yes",)] == pytest.approx(math.e / (1 + math.e), rel=1e-9)
    csv = cli(capsys, "design", WARNER, "--epsilon", "1", "--format", "csv")
    assert render(result, "csv") == csv == result.mechanism.to_csv_text().rstrip("\n")
    columns, rows = result.table()
    assert columns == ["input", *result.mechanism.columns] and [r[0] for r in rows] == ["yes", "no"]
    assert result.to_frame().shape == (2, len(columns))
    table = cli(capsys, "design", WARNER, "--epsilon", "1")
    seconds = re.compile(r"\d+\.\d\d s$", re.M)
    assert seconds.sub("T", result.summary()) == seconds.sub("T", table) == seconds.sub("T", str(result))
    assert "certified: " in table and table.splitlines()[0] == result.problem.describe()


def test_a_result_kept_in_compact_form_has_no_csv_table():
    result = design(DesignProblem(objective="truthful", inputs=tuple(f"v{i}" for i in range(20)), epsilon=1.0))
    assert result.mechanism is None and result.compact is not None
    with pytest.raises(DesignerError, match="compact form"):
        result.table()
    assert "compact form: mass of a row" in result.summary() and "compact" in result.to_dict()


def test_an_identification_warning_is_in_every_format():
    import numpy as np

    pi = np.array([0.173, 0.191, 0.01, 0.265, 0.361])
    with pytest.warns(designer.DesignWarning):
        result = design(DesignProblem(inputs=tuple(f"a{i}" for i in range(5)), epsilon=2.52, semantics="wldp",
                                      objective="chi2", prior=pi / pi.sum()))
    assert result.warnings and result.to_dict()["warnings"] == list(result.warnings)
    assert f"warning: {result.warnings[0]}" in result.summary()


def test_bad_input_is_one_clear_error(tmp_path):
    with pytest.raises(InvalidArgumentTypeError, match="DesignProblem or the path"):
        design(42)  # type: ignore[arg-type]
    with pytest.raises(InvalidProblemError, match=r"no-such\.toml"):
        design(str(tmp_path / "no-such.toml"))
    with pytest.raises(InvalidArgumentError, match=r"^prior 'maybe=0\.3': unknown inputs"):
        design(WARNER, prior="maybe=0.3")
    with pytest.raises(InvalidArgumentError, match=r"^dont_know 'lots'"):
        design(WARNER, dont_know="lots")
    with pytest.raises(InvalidProblemError, match="epsilon"):
        design(WARNER, epsilon=-1.0)


def test_compare_and_sweep_results_give_the_commands_output(capsys):
    problem = load_problem(WARNER)
    table = compare(problem, [0.5, 1.0, 2.0])
    assert table.status is FitStatus.OPTIMAL and table.warnings == ()
    assert json.loads(render(table, "json")) == json.loads(cli(capsys, "compare", WARNER, "--eps", "0.5,1,2",
                                                               "--format", "json"))
    assert render(table, "csv") == cli(capsys, "compare", WARNER, "--eps", "0.5,1,2", "--format", "csv")
    assert table.summary() == cli(capsys, "compare", WARNER, "--eps", "0.5,1,2")
    # Cor 3.12 without don't-know: the designed p is e^eps / (e^eps + 1) at every budget
    for row in table.rows:
        assert row["p"] == pytest.approx(math.exp(row["epsilon"]) / (math.exp(row["epsilon"]) + 1), abs=1e-9)

    gwrr = str(ROOT / "problems" / "gwrr-dont-know.toml")
    result = sweep_result(load_problem(gwrr), [0.5, 1.0], [0.0, 0.2])
    assert result.status is FitStatus.OPTIMAL and result.certified == "4 of 4 designs certified"
    flags = ["--eps", "0.5,1", "--dont-know", "0,0.2"]
    assert json.loads(render(result, "json")) == json.loads(cli(capsys, "sweep", gwrr, *flags, "--format", "json"))
    assert render(result, "csv") == cli(capsys, "sweep", gwrr, *flags, "--format", "csv")
    assert result.summary() == cli(capsys, "sweep", gwrr, *flags)
    assert result.to_frame().shape == (4, 10)
