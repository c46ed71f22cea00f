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
        return [["design", p], ["design", p, "--out", str(out)], ["compare", p, "--eps", "1"],
                ["sweep", p, "--epsilon", "0.5,1", "--out", str(out), "--quiet"],
                ["sweep", p, "--epsilon", "1", "--plot", str(out), "--quiet"]]
    if path.suffix == ".json":
        return [["audit", p], ["credal", p], ["tradeoff", p, "--null", "yes", "--alt", "no"],
                ["simulate", p, "--reps", "10", "--out", str(out), "--quiet"]]
    return [["audit", p], ["credal", p], ["tradeoff", p, "--null", "yes", "--alt", "no", "--plot", str(out)],
            ["simulate", p, "--reps", "10", "--out", str(out), "--quiet"],
            ["randomize", p, "--mechanism", MECH, "--column", "answer", "--out", str(out)],
            ["estimate", p, "--mechanism", MECH], ["randomize", MECH, "--mechanism", p,
                                                   "--column", "input", "--out", str(out)]]


FILES = sorted(CORPUS.iterdir())

#: Commands for which a corpus file is legitimate input, with the reason.
VALID_FOR = {
    # a sparse mechanism over 30 answers is fine to simulate: only 2**l tables are refused
    ("huge_frame.csv", "simulate"): "sparse focal sets",
    ("huge_frame.csv", "randomize-with"): "sparse focal sets",
}


def label(argv: list[str]) -> str:
    return "randomize-with" if argv[0] == "randomize" and argv[1] == MECH else argv[0]


def test_corpus_is_large_enough():
    assert len(FILES) >= 40


@pytest.mark.parametrize("path", FILES, ids=[f.name for f in FILES])
def test_bad_file_is_one_line_exit_2(path, tmp_path, capsys):
    out = tmp_path / "out.png"
    for argv in commands(path, out):
        if (path.name, label(argv)) in VALID_FOR:
            continue
        code = main(argv)
        captured = capsys.readouterr()
        assert code == 2, (argv, captured.err)
        assert captured.err.count("\n") == 1 and captured.err.startswith("designer: error: "), (argv, captured.err)
        assert "Traceback" not in captured.err
        assert path.name in captured.err, (argv, captured.err)  # names the file
        assert not out.exists(), argv
        assert list(tmp_path.iterdir()) == []
