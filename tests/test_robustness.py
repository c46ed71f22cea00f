"""Every bad file in tests/corpus/ through every command that reads it: exit status 2, one line on
stderr naming the file, no traceback, no output file left behind."""

from __future__ import annotations

import pathlib

import pytest

from designer.cli import main

CORPUS = pathlib.Path(__file__).parent / "corpus"
MECH = "examples/mechanisms/q2x3.csv"


def commands(path: pathlib.Path, out: pathlib.Path) -> list[list[str]]:
    p = str(path)
    if path.suffix == ".toml":
        return [["design", p], ["design", p, "--out", str(out)], ["compare", p, "--eps", "1"]]
    if path.suffix == ".json":
        return [["audit", p], ["credal", p], ["tradeoff", p, "--null", "yes", "--alt", "no"]]
    return [["audit", p], ["credal", p], ["tradeoff", p, "--null", "yes", "--alt", "no", "--plot", str(out)],
            ["randomize", p, "--mechanism", MECH, "--column", "answer", "--out", str(out)],
            ["estimate", p, "--mechanism", MECH], ["randomize", "examples/mechanisms/q2x3.csv", "--mechanism", p,
                                                   "--column", "input", "--out", str(out)]]


FILES = sorted(CORPUS.iterdir())


def test_corpus_is_large_enough():
    assert len(FILES) >= 40


@pytest.mark.parametrize("path", FILES, ids=[f.name for f in FILES])
def test_bad_file_is_one_line_exit_2(path, tmp_path, capsys):
    out = tmp_path / "out.png"
    for argv in commands(path, out):
        code = main(argv)
        captured = capsys.readouterr()
        assert code == 2, (argv, captured.err)
        assert captured.err.count("\n") == 1 and captured.err.startswith("designer: error: "), (argv, captured.err)
        assert "Traceback" not in captured.err
        assert not out.exists(), argv
        assert list(tmp_path.iterdir()) == []
