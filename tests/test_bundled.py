"""Problems and examples inside the package, read by their bare names; ``designer problems`` lists them and
``designer problems copy`` writes one to start from (issue 51, item 2).

The expected lists are read from the repository's folders (``problems/*.toml``, ``examples/...``), not from the
resolver; the bundled files are compared with the repository's byte for byte.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest

from designer import Mechanism, load_problem
from designer._internal.bundled import KINDS, bundled, find, resolve
from designer.cli import main
from designer.exceptions import DataError, DesignerError, InvalidMechanismError, InvalidProblemError

ROOT = Path(__file__).resolve().parents[1]
PROBLEMS = sorted(p.stem for p in (ROOT / "problems").glob("*.toml"))
MECHANISMS = sorted(p.stem for p in (ROOT / "examples" / "mechanisms").iterdir() if p.suffix in (".csv", ".json"))
DATA = sorted(p.stem for folder in ("examples", "examples/data") for p in (ROOT / folder).glob("*.csv"))


@pytest.fixture
def empty(tmp_path, monkeypatch):
    """An empty current folder: nothing of the repository is reachable by a relative path."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _cli(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "designer", *argv], cwd=cwd, capture_output=True, text=True,
                          check=False, timeout=300)


# ------------------------------------------------------------------ what the package carries
def test_the_package_carries_every_problem_mechanism_and_data_file_of_the_repository():
    assert list(bundled("problem")) == PROBLEMS
    assert list(bundled("mechanism")) == MECHANISMS
    assert list(bundled("data")) == DATA
    assert list(bundled("survey")) == sorted(p.stem for p in (ROOT / "examples" / "surveys").glob("*.toml"))
    for kind in KINDS:
        for item in bundled(kind).values():
            assert Path(item.path).read_bytes() == (ROOT / item.where).read_bytes(), item.where


def test_no_bare_name_belongs_to_two_kinds():
    """So the order in which a command looks kinds up (a problem or a mechanism) never changes what it reads."""
    names = [name for kind in KINDS for name in bundled(kind)]
    assert len(names) == len(set(names))


# ------------------------------------------------------------------ the resolver
def test_a_bare_name_is_the_bundled_file(empty):
    found = Path(resolve("gwrr-dont-know", "problem"))
    assert found.read_bytes() == (ROOT / "problems/gwrr-dont-know.toml").read_bytes()
    assert resolve("gwrr-dont-know.toml", "problem") == resolve("gwrr-dont-know", "problem")  # extension optional
    assert Path(resolve("three-by-four", "mechanism")).name == "three-by-four.csv"
    assert Path(resolve("sex2-answers", "data")).name == "sex2-answers.csv"
    assert Path(resolve("warner", ("mechanism", "problem"))).name == "warner.toml"  # the first kind that has it


def test_a_path_that_exists_wins(empty):
    (empty / "warner").write_text("input,{yes},{no}\nyes,0.5,0.5\nno,0.5,0.5\n")
    assert resolve("warner", "problem") == "warner"  # the file, though designer has a problem of that name
    assert resolve(Path("warner"), "problem") == Path("warner")
    os.remove("warner")
    (empty / "warner.toml").write_text('inputs = ["a", "b"]\nepsilon = 0.5\n')
    assert resolve("warner", "problem") == "warner.toml"  # the copy here, with the kind's extension
    assert load_problem("warner").inputs == ("a", "b")
    (empty / "data").mkdir()
    assert resolve("data", "data") == "data"  # a folder that exists (a Parquet dataset) is taken as given


@pytest.mark.parametrize(("name", "kind", "error", "close"), [
    ("gwrr-dont-knw", "problem", InvalidProblemError, "did you mean gwrr-dont-know"),
    ("q2x", "mechanism", InvalidMechanismError, "did you mean q2x3?"),
    ("answerz", "data", DataError, "did you mean answers"),
    ("zzzzzz", "problem", InvalidProblemError, "'designer problems' lists them"),
])
def test_an_unknown_name_is_one_line_naming_the_closest(empty, name, kind, error, close):
    with pytest.raises(error) as caught:
        resolve(name, kind, error=error)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"{name}: no such file") and close in message


def test_a_missing_path_says_so_and_names_the_bare_name(empty):
    with pytest.raises(DesignerError, match=r"^problems/warner\.toml: no such file; designer's own problem warner "
                                            r"is read by its bare name$"):
        resolve("problems/warner.toml", "problem")
    with pytest.raises(DesignerError, match=r"^nowhere/file\.csv: no such file$"):
        resolve("nowhere/file.csv", "data")


def test_the_library_readers_take_bare_names(empty):
    assert Mechanism.read("three-by-four").allclose(Mechanism.read(ROOT / "examples/mechanisms/three-by-four.csv"))
    assert load_problem("warner") == load_problem(ROOT / "problems/warner.toml")
    import designer as d

    by_name = d.estimate("regress", "gwrr")
    by_path = d.estimate(ROOT / "examples/regress.csv", ROOT / "examples/mechanisms/gwrr.csv")
    assert np.array_equal(by_name.estimate, by_path.estimate) and by_name.n == by_path.n == 2000
    with pytest.raises(InvalidMechanismError, match="did you mean q2x3"):
        Mechanism.read("q2x")


@pytest.mark.parametrize("argv", [
    ["design", "gwrr-dont-know", "--eps", "1"],
    ["audit", "three-by-four"],
    ["estimate", "regress", "--mechanism", "gwrr", "--format", "json"],
    ["plan", "two-questions"],
])
def test_commands_take_bare_names_from_an_empty_folder(tmp_path, argv):
    """The same output as the repository's file given by its path."""
    by_name = _cli(*argv, cwd=tmp_path)
    assert by_name.returncode == 0, by_name.stderr
    item = find(argv[1], tuple(KINDS))
    assert item is not None
    by_path = _cli(argv[0], str(ROOT / item.where), *argv[2:], cwd=tmp_path)

    def same(text: str) -> str:  # the file's name as the user wrote it; a solve's wall time left out
        return re.sub(r"\b\d+\.\d+ s\b", "TIME s", text.replace(str(ROOT / item.where), argv[1]))

    assert same(by_name.stdout) == same(by_path.stdout)


@pytest.mark.parametrize(("argv", "words"), [
    (["design", "gwrr-dont-knw"], "did you mean gwrr-dont-know"),
    (["audit", "q2x"], "did you mean q2x3?"),
    (["estimate", "answerz", "--mechanism", "q2x3"], "did you mean answers"),
    (["design", "problems/gwrr-dont-know.toml"], "designer's own problem gwrr-dont-know is read by its bare name"),
])
def test_an_unknown_name_exits_2_with_one_line(tmp_path, argv, words):
    out = _cli(*argv, cwd=tmp_path)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.count("\n") == 1 and out.stderr.startswith("designer: error: ") and words in out.stderr
    assert "Traceback" not in out.stderr


# ------------------------------------------------------------------ designer problems
def test_problems_lists_every_problem_in_three_formats(empty, capsys):
    expected = {name: tomllib.loads((ROOT / "problems" / f"{name}.toml").read_text()) for name in PROBLEMS}
    assert main(["problems", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["files"]
    assert [r["name"] for r in rows] == PROBLEMS
    for row in rows:
        data = expected[row["name"]]
        assert row["objective"] == data["objective"] and row["epsilon"] == data["epsilon"]
        assert row["file"] == f"problems/{row['name']}.toml" and row["description"]
        first = (ROOT / row["file"]).read_text().splitlines()[0]
        assert first.startswith(f"# {row['description']}")  # the comment's first clause
    assert main(["problems", "--format", "csv"]) == 0
    table = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [r["name"] for r in table] == PROBLEMS
    assert [(r["objective"], float(r["epsilon"]), r["description"]) for r in table] == [
        (r["objective"], r["epsilon"], r["description"]) for r in rows]
    assert main(["problems"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("Design problems that come with designer") and "(status: exact)" in text
    for row in rows:
        assert any(line.split()[:2] == [row["name"], row["objective"]] for line in text.splitlines())
    warner = next(r for r in rows if r["name"] == "warner")
    assert warner["description"] == "Warner's randomized response (Ex 3.7)"


def test_problems_kind_all_lists_every_bundled_file(empty, capsys):
    assert main(["problems", "--kind", "all", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["files"]
    assert sorted(r["name"] for r in rows) == sorted(PROBLEMS + MECHANISMS + DATA + ["two-questions"])
    for row in rows:
        assert row["bytes"] == (ROOT / row["file"]).stat().st_size
    three = next(r for r in rows if r["name"] == "three-by-four")
    assert three["description"] == "3 inputs (low, mid, high), 4 answer sets"


# ------------------------------------------------------------------ designer problems copy
def test_copy_writes_the_file_and_never_overwrites_without_force(empty, capsys):
    original = (ROOT / "problems" / "warner.toml").read_bytes()
    assert main(["problems", "copy", "warner"]) == 0
    assert (empty / "warner.toml").read_bytes() == original
    assert "wrote warner.toml" in capsys.readouterr().out
    (empty / "warner.toml").write_text("# mine\n")
    assert main(["problems", "copy", "warner"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "warner.toml: already exists" in err and "--force" in err
    assert (empty / "warner.toml").read_text() == "# mine\n"  # untouched
    assert main(["problems", "copy", "warner", "--force"]) == 0
    assert (empty / "warner.toml").read_bytes() == original
    (empty / "mine").mkdir()
    assert main(["problems", "copy", "three-by-four", "mine"]) == 0  # into a folder, under its own name
    assert (empty / "mine" / "three-by-four.csv").read_bytes() == (ROOT / "examples/mechanisms/three-by-four.csv"
                                                                   ).read_bytes()
    assert main(["problems", "copy", "gwrr-dont-know", "question.toml"]) == 0
    assert load_problem("question.toml") == load_problem("gwrr-dont-know")
    assert sorted(os.listdir(empty)) == ["mine", "question.toml", "warner.toml"]  # no temporary file left


@pytest.mark.parametrize(("argv", "words"), [
    (["problems", "copy"], "give the NAME"),
    (["problems", "copy", "warnr"], "did you mean warner"),
    (["problems", "copy", "warner", "no/such/folder/w.toml"], "does not exist"),
    (["problems", "warner"], "invalid choice"),
    (["problems", "--force"], "go with 'copy'"),
])
def test_copy_refuses_bad_input_in_one_line(empty, capsys, argv, words):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err
    assert os.listdir(empty) == []


def test_copy_honours_the_umask_and_leaves_nothing_when_interrupted(empty, capsys, monkeypatch):
    old = os.umask(0o077)
    try:
        assert main(["problems", "copy", "warner"]) == 0
    finally:
        os.umask(old)
    assert (empty / "warner.toml").stat().st_mode & 0o777 == 0o600

    def interrupted(fd: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", interrupted)
    assert main(["problems", "copy", "pram-party"]) == 130
    assert sorted(os.listdir(empty)) == ["warner.toml"]  # neither the file nor its temporary


def test_a_release_by_bare_names_is_estimated_from_its_manifest(tmp_path):
    """randomize records the bare name; estimate --manifest reads designer's own mechanism of that name again, and
    an invariant problem by its bare name takes a data prior."""
    out = _cli("randomize", "three-questions", "--variable", "drugs=q2x3", "--keep", "id", "--out", "rel.csv",
               "--seed", "1", "--simulation", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    by_manifest = _cli("estimate", "rel.csv", "--manifest", "rel.csv.manifest.json", "--column", "drugs",
                       "--format", "json", cwd=tmp_path)
    by_name = _cli("estimate", "rel.csv", "--mechanism", "q2x3", "--column", "drugs", "--format", "json",
                   cwd=tmp_path)
    assert by_manifest.returncode == 0, by_manifest.stderr
    assert json.loads(by_manifest.stdout)["estimate"] == json.loads(by_name.stdout)["estimate"]
    out = _cli("randomize", "three-questions", "--variable", "party=pram-party", "--invariant-prior", "data",
               "--prior-budget", "0.5", "--keep", "id", "--out", "rel2.csv", "--seed", "1", "--simulation",
               cwd=tmp_path)
    assert out.returncode == 0 and "within eps0 = 0.5" in out.stdout, out.stderr
