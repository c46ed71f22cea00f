"""An error about a file that comes with designer names it by its bare name, as the user gave it, never by the
folder designer was installed in (``.../site-packages/designer/examples/regress.csv``; issue 58)."""

from __future__ import annotations

import json
import pathlib
from importlib import resources

import pytest

import designer
from designer.cli import main

PACKAGE = pathlib.Path(designer.__file__).resolve().parent
ROOT = PACKAGE.parent


@pytest.mark.parametrize(("argv", "says"), [
    (["regress", "regress", "--mechanism", "gwrr", "--formula", "response ~ agee"],
     "designer: error: regress: formula names 'agee', which is not a column of the data"),
    (["estimate", "regress", "--mechanism", "gwrr", "--column", "nope"], "designer: error: regress: no column 'nope'"),
    (["randomize", "answers", "--mechanism", "q2x3", "--column", "nope", "--out", "r.csv", "--simulation"],
     "designer: error: answers: no column 'nope'"),
])
def test_an_error_about_a_bundled_file_names_it_bare(argv, says, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert err.startswith(says), err
    assert str(PACKAGE) not in err and str(ROOT) not in err and "site-packages" not in err


def test_a_path_the_user_gave_is_kept(tmp_path, monkeypatch, capsys):
    data = tmp_path / "mine.csv"
    data.write_text("answer\nyes\nno\n")
    monkeypatch.chdir(tmp_path)
    assert main(["estimate", str(data), "--mechanism", "q2x3", "--column", "nope"]) == 2
    assert capsys.readouterr().err.startswith(f"designer: error: {data}: no column 'nope'")


def test_a_plan_of_a_bundled_file_names_it_bare(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["plan", "warner", "--prior", "yes=0.3,no=0.7", "--width", "0.02", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["source"] == "warner"
    assert designer.plan("two-questions", width=0.05).source == "two-questions"
    mine = tmp_path / "mine.toml"
    mine.write_text(resources.files("designer.problems").joinpath("warner.toml").read_text())
    assert designer.plan(str(mine), prior=[0.3, 0.7], width=0.02).source == str(mine)  # a path given stays
