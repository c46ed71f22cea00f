"""Every command, over the bundled files, in every format: CSV loads into one numeric table, JSON parses,
and no output or error message shows a numpy repr (``np.float64(...)``)."""

import io
import json
import math
import os
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from designer.cli import COMMANDS, main

ROOT = Path(__file__).resolve().parents[1]

#: (command line without --format, what it needs made first); {tmp} is a fresh file name per run.
CASES = [
    "problems",
    "problems --kind all",
    "audit examples/mechanisms/q2x3.csv",
    "audit examples/mechanisms/three-by-four.csv",
    "design problems/gwrr-dont-know.toml",
    "design problems/gwrr-dont-know-wldp.toml --eps 0.5",
    "design problems/warner.toml",
    "design problems/survey-5-options.toml",
    "design problems/survey-5-options-utility.toml",
    "compare problems/warner.toml --eps 0.5,1",
    "compare problems/gwrr-dont-know.toml --eps 0.5,1",
    "compare problems/gwrr-dont-know-wldp.toml --eps 0.25,1",
    "tradeoff examples/mechanisms/q2x3.csv --null yes --alt no --points 5",
    "tradeoff examples/mechanisms/three-by-four.csv --alpha 0.05",
    "credal examples/mechanisms/q2x3.csv",
    "credal examples/mechanisms/q2x3.csv --gamble yes=1,no=0",
    "synthesize problems/gwrr-dont-know.toml --n 500 --seed 1 --out {tmp}",
    "randomize examples/answers.csv --mechanism examples/mechanisms/q2x3.csv --column answer --out {tmp} --seed 1 "
    "--simulation",
    "randomize examples/answers.csv --variable answer=examples/mechanisms/q2x3.csv --out {tmp}",
    "export examples/mechanisms/q2x3.csv --out {tmp}",
    "estimate responses.csv --mechanism examples/mechanisms/q2x3.csv",
    "estimate precise.csv --mechanism examples/mechanisms/q2x3.csv --semantics wldp",
    "simulate examples/mechanisms/q2x3.csv --n 100 --reps 50 --seed 1",
    "sweep problems/gwrr-dont-know.toml --epsilon 0.5,1",
    "sweep problems/gwrr-dont-know.toml --epsilon 0.5,1 --out {tmp}",
    "plan problems/warner.toml --prior yes=0.3,no=0.7 --width 0.02",
    "plan problems/warner.toml --prior yes=0.3,no=0.7 --n 2000 --width 0.03",
    "plan problems/gwrr-dont-know.toml --prior yes=0.3,no=0.7 --detect 0.05",
    "plan examples/surveys/two-questions.toml",
    "plan problems/gwrr-dont-know.toml --width 0.03 --grid 1,2",
    "design problems/gwrr-dont-know.toml --device spinner:10",
    "design problems/warner.toml --device dice2",
    "regress examples/regress.csv --mechanism examples/mechanisms/gwrr.csv --formula 'response ~ age' --reference no",
    "regress precise.csv --mechanism examples/mechanisms/q2x3.csv --formula 'response ~ 1' --semantics wldp",
]

BAD = [
    "audit examples/mechanisms/missing.csv",
    "design problems/gwrr-dont-know.toml --eps -1",
    "design problems/gwrr-dont-know.toml --dont-know 1.5",
    "estimate examples/regress.csv --mechanism examples/mechanisms/q2x3.csv --column age",
    "regress examples/regress.csv --mechanism examples/mechanisms/gwrr.csv --formula 'response ~ height'",
    "synthesize --n 10 --out {tmp} --prior 0.5,0.5",
    "design problems/gwrr-dont-know.toml --device dice2",
    "design problems/gwrr-dont-know.toml --device dice3",
    "plan problems/warner.toml --width -1",
    "plan problems/warner.toml",
]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """A copy of examples/ and problems/ with the answer files the estimate lines read."""
    import shlex

    path = tmp_path_factory.mktemp("outputs")
    for name in ("examples", "problems"):
        shutil.copytree(ROOT / name, path / name, ignore=shutil.ignore_patterns("output"))
    cwd = os.getcwd()
    os.chdir(path)
    try:
        for line in ("randomize examples/answers.csv --mechanism examples/mechanisms/q2x3.csv --column answer "
                     "--out responses.csv --seed 7 --simulation",
                     "randomize examples/answers.csv --mechanism examples/mechanisms/q2x3.csv --column answer "
                     "--out precise.csv --semantics wldp --allocation 0.5 --seed 8 --simulation"):
            assert main(shlex.split(line)) == 0
    finally:
        os.chdir(cwd)
    return path


def _run(folder, line, fmt, capsys, counter=[0]):  # noqa: B006 - a per-session counter of fresh names
    import shlex

    counter[0] += 1
    argv = [*shlex.split(line.replace("{tmp}", f"out-{counter[0]}.csv")), "--quiet"]
    if fmt:
        argv += ["--format", fmt]
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        code = main(argv)
    finally:
        os.chdir(cwd)
    out, err = capsys.readouterr()
    return code, out, err


def test_every_command_is_covered():
    assert {c.split()[0] for c in CASES} == {name for name, *_ in COMMANDS}


@pytest.mark.parametrize("line", CASES)
def test_csv_is_one_numeric_table(folder, line, capsys):
    code, out, err = _run(folder, line, "csv", capsys)
    assert code == 0, err
    assert "np." not in out + err
    assert "\n\n" not in out.strip(), "two tables in one stream"
    table = pd.read_csv(io.StringIO(out))
    assert len(table.columns) >= 2 and len(table) >= 1
    numeric = 0
    for name in table.columns:
        column = table[name]
        if not pd.api.types.is_numeric_dtype(column):  # text: none of its values may be a number written as text
            values = [v for v in column.dropna() if v not in ("infeasible", "optimal")]
            for v in values:
                try:
                    float(v)
                except ValueError:
                    continue
                pytest.fail(f"column {name!r} mixes numbers and text: {v!r}")
        else:
            numeric += 1
    assert numeric >= 1, table.dtypes


@pytest.mark.parametrize("line", CASES)
def test_json_and_table_show_no_numpy(folder, line, capsys):
    code, out, err = _run(folder, line, "json", capsys)
    assert code == 0, err
    obj = json.loads(out)
    assert "np." not in out + err

    def finite_or_named(value):
        if isinstance(value, float):
            assert math.isfinite(value)
        elif isinstance(value, dict):
            for v in value.values():
                finite_or_named(v)
        elif isinstance(value, list):
            for v in value:
                finite_or_named(v)

    finite_or_named(obj)
    code, out, err = _run(folder, line, None, capsys)
    assert code == 0 and "np." not in out + err


@pytest.mark.parametrize("line", BAD)
def test_errors_are_one_plain_line(folder, line, capsys):
    code, out, err = _run(folder, line, None, capsys)
    assert code == 2 and out == "" and err.count("\n") == 1 and "np." not in err and "Traceback" not in err, err


def test_design_json_states_its_variance(folder, capsys):
    _, out, _ = _run(folder, "design problems/gwrr-dont-know-wldp.toml", "json", capsys)
    obj = json.loads(out)
    assert obj["variance_kind"] == "wldp_worst_case" and obj["prior"] == {"yes": 0.5, "no": 0.5}
    _code, out, _ = _run(folder, "design problems/gwrr-dont-know.toml", "json", capsys)
    assert json.loads(out)["variance_kind"] == "sldp_mle"


def test_output_files_honour_the_umask(folder, capsys):
    old = os.umask(0o022)
    try:
        code, _out, _ = _run(folder, "synthesize --prior a=0.5,b=0.5 --n 10 --out umask.csv", None, capsys)
    finally:
        os.umask(old)
    assert code == 0
    assert (folder / "umask.csv").stat().st_mode & 0o777 == 0o644


def test_synthetic_answers_follow_the_prior():
    from designer.estimation.sampling import synthetic_answers

    draw = synthetic_answers(["a", "b", "c"], [0.2, 0.3, 0.5], 200_000, rng=3)
    shares = np.array([(draw == x).mean() for x in "abc"])
    assert np.all(np.abs(shares - [0.2, 0.3, 0.5]) < 4 * np.sqrt(0.25 / 200_000))


@pytest.mark.parametrize("problem, eps", [("gwrr-dont-know.toml", 1.0), ("gwrr-dont-know-wldp.toml", 1.0),
                                          ("gwrr-dont-know-wldp.toml", 3.0), ("survey-5-options.toml", 2.0)])
def test_one_variance_in_design_compare_sweep_and_python(folder, capsys, problem, eps):
    from designer.optimal import design
    from designer.optimal.problem_toml import load_problem

    python = design(load_problem(folder / "problems" / problem).replace(epsilon=eps)).variance
    _, out, _ = _run(folder, f"design problems/{problem} --eps {eps}", "json", capsys)
    assert json.loads(out)["variance"] == pytest.approx(python, rel=1e-9)
    _, out, _ = _run(folder, f"sweep problems/{problem} --epsilon {eps}", "json", capsys)
    assert json.loads(out)["rows"][0]["variance"] == pytest.approx(python, rel=1e-9)
    if "survey" not in problem:
        _, out, _ = _run(folder, f"compare problems/{problem} --eps {eps}", "json", capsys)
        row = json.loads(out)["rows"][0]
        assert row["variance"] == pytest.approx(python, rel=1e-9)
        assert row["variance_closed"] == pytest.approx(python, rel=1e-6)  # and it is the closed form's


def test_compare_warner_is_equation_1(folder, capsys):
    from designer import closed_forms as cf

    code, out, _ = _run(folder, "compare problems/warner.toml --eps 0.5,1,2", "json", capsys)
    obj = json.loads(out)
    assert code == 0 and "Warner" in obj["closed_form"] and "Ex 3.7" in obj["closed_form"]
    for row in obj["rows"]:
        p = math.exp(row["epsilon"]) / (1 + math.exp(row["epsilon"]))
        assert row["p"] == pytest.approx(p, abs=1e-9)
        assert row["variance"] == pytest.approx(cf.warner_variance(p, 0.5, 1), rel=1e-9)  # Eq 1, n = 1
