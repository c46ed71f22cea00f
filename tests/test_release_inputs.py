"""randomize's smaller promises on odd input (issue 49, items 5 and 7): prior budgets tiny and huge, budgets as
fractions, pipes, ragged rows, repeated flags, too many strata. Each is one line and exit 2, or the right release;
never a traceback, exit 70 or a hang."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from designer.cli import main

ROOT = Path(__file__).resolve().parents[1]
PRAM = ROOT / "problems" / "pram-party.toml"
WARNER = ROOT / "examples" / "mechanisms" / "warner-80.csv"


def _run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _parties(path: Path, n: int = 1000) -> None:
    parties = ["left", "centre", "right", "other"]
    path.write_text("id,party\n" + "".join(f"{i},{parties[i % 4]}\n" for i in range(n)))


def _errors(err: str) -> list[str]:
    return [line for line in err.splitlines() if not line.startswith("designer: warning")]


@pytest.mark.parametrize("budget, words", [
    ("0.001", "would have mean size 2e+03, more than the mean count 250"),
    ("1e-20", "more than the mean count 250"),
    ("1e-300", "more than the mean count 250"),
    ("1e400", "between 1e-300 and 1.798e+308"),
    ("1e99999999", "between 1e-300 and 1.798e+308"),
    ("1e-99999999", "> 0"),
])
def test_a_prior_budget_the_counts_cannot_carry_is_one_line(tmp_path, capsys, budget, words):
    _parties(tmp_path / "t.csv")
    code, out, err = _run(capsys, "randomize", tmp_path / "t.csv", "--variable", f"party={PRAM}", "--invariant-prior",
                          "data", "--prior-budget", budget, "--out", tmp_path / "r.csv")
    assert code == 2 and out == "" and len(_errors(err)) == 1, err
    assert words in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.csv"]


def test_the_smallest_prior_budget_named_in_the_refusal_is_accepted(tmp_path, capsys):
    _parties(tmp_path / "t.csv")
    code, _, err = _run(capsys, "randomize", tmp_path / "t.csv", "--variable", f"party={PRAM}", "--invariant-prior",
                        "data", "--prior-budget", "0.005", "--out", tmp_path / "r.csv")
    assert code == 2
    least = err.split("give --prior-budget at least ")[1].split()[0]
    assert float(least) >= 2 * 0.004  # asinh(4/1000) per half-budget, rounded up
    code, _, err = _run(capsys, "randomize", tmp_path / "t.csv", "--variable", f"party={PRAM}", "--invariant-prior",
                        "data", "--prior-budget", least, "--out", tmp_path / "r.csv")
    assert code == 0, err


def test_a_prior_budget_above_five_nats_is_warned_about(tmp_path, capsys):
    _parties(tmp_path / "t.csv")
    code, _, err = _run(capsys, "randomize", tmp_path / "t.csv", "--variable", f"party={PRAM}", "--invariant-prior",
                        "data", "--prior-budget", "1000", "--out", tmp_path / "r.csv")
    assert code == 0, err
    assert "--prior-budget 1000 is above 5 nats" in err
    warnings = json.loads((tmp_path / "r.csv.manifest.json").read_text())["warnings"]
    assert any("--prior-budget 1000" in w for w in warnings)


def test_the_published_prior_is_a_warning_of_the_result_not_a_print(tmp_path, capsys):
    """Library code never prints: the note on the published prior is in Result.warnings (the CLI prints it)."""
    from designer import randomize

    _parties(tmp_path / "t.csv", 200)
    result = randomize(tmp_path / "t.csv", {"party": str(PRAM)}, invariant_prior="data", prior_budget=1,
                       out=tmp_path / "r.csv")
    assert capsys.readouterr().err == ""
    assert any("is published from the file's counts" in w for w in result.warnings)
    code, _, err = _run(capsys, "randomize", tmp_path / "t.csv", "--variable", f"party={PRAM}", "--invariant-prior",
                        "data", "--prior-budget", "1", "--out", tmp_path / "r2.csv")
    assert code == 0 and "designer: warning: the prior of 'party' is published from the file's counts" in err


def test_a_design_made_at_a_fraction_meets_that_budget(tmp_path, capsys):
    design = tmp_path / "w.json"
    assert _run(capsys, "design", ROOT / "problems" / "warner.toml", "--eps", "7/3", "--out", design)[0] == 0
    (tmp_path / "t.csv").write_text("answer\n" + "yes\nno\n" * 20)
    base = ["randomize", tmp_path / "t.csv", "--mechanism", design, "--column", "answer"]
    code, _, err = _run(capsys, *base, "--out", tmp_path / "r.csv", "--budget", "7/3")
    assert code == 0, err
    assert json.loads((tmp_path / "r.csv.manifest.json").read_text())["epsilon_total_exact"] == "7/3"
    code, _, err = _run(capsys, *base, "--out", tmp_path / "r2.csv", "--budget", "2.3333333")
    assert code == 2 and "above --budget" in err


def test_a_pipe_is_refused_without_waiting_for_it(tmp_path):
    """A named pipe nobody writes would block open() for ever; process substitution can be read once: both are one
    line and exit 2 (run in a child, with a time limit that only guards against a hang)."""
    (tmp_path / "t.csv").write_text("answer\n" + "yes\nno\n" * 20)
    os.mkfifo(tmp_path / "pipe.csv")
    command = [sys.executable, "-m", "designer", "randomize", str(tmp_path / "pipe.csv"), "--mechanism", str(WARNER),
               "--column", "answer", "--out", str(tmp_path / "r.csv")]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "a pipe" in proc.stderr
    substituted = subprocess.run(
        ["bash", "-c", f"{sys.executable} -m designer randomize <(cat {tmp_path / 't.csv'}) --mechanism {WARNER} "
                       f"--column answer --out {tmp_path / 'r.csv'}"],
        capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert substituted.returncode == 2 and "a pipe" in substituted.stderr and substituted.stderr.count("\n") == 1
    huge = subprocess.run([*command[:4], str(tmp_path / "t.csv"), *command[5:], "--budget", "1e99999999"],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert huge.returncode == 2 and huge.stderr.count("\n") == 1 and "--budget" in huge.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe.csv", "t.csv"]


# A line is a row: the header is line 1, and a quoted line break does not start a new one (every reader of
# designer counts so, designer/tables/csv_text.py).
@pytest.mark.parametrize("rows, line, cells", [("1,yes\n2\n3,no\n", 3, 1), ("1,yes\n2,no,extra\n", 3, 3),
                                               ('1,yes\n"2\nstill two",no\n3,no,x\n', 4, 3)])
def test_a_ragged_row_is_refused_naming_its_line(tmp_path, capsys, rows, line, cells):
    (tmp_path / "t.csv").write_text("id,answer\n" + rows)
    code, out, err = _run(capsys, "randomize", tmp_path / "t.csv", "--mechanism", WARNER, "--column", "answer",
                          "--keep", "id", "--out", tmp_path / "r.csv")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert f"{tmp_path / 't.csv'}: line {line}: {cells} cells where the header has 2" in err


@pytest.mark.parametrize("argv", [["--mechanism", WARNER, "--mechanism", WARNER, "--column", "answer"],
                                  ["--mechanism", WARNER, "--column", "answer", "--column", "other"]])
def test_a_repeated_mechanism_or_column_is_refused(tmp_path, capsys, argv):
    (tmp_path / "t.csv").write_text("answer,other\n" + "yes,no\n" * 10)
    code, out, err = _run(capsys, "randomize", tmp_path / "t.csv", *argv, "--out", tmp_path / "r.csv")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "is given 2 times" in err and "--variable COLUMN=MECHANISM" in err


def test_a_hundred_thousand_strata_are_refused_at_the_first_chunk(tmp_path, capsys, monkeypatch):
    """Refused before any design (each stratum is a design of its own), while the first chunk is read."""
    from designer.optimal import invariant

    monkeypatch.setattr(invariant, "design_strata", lambda *a, **k: pytest.fail("designed before the refusal"))
    parties = ["left", "centre", "right", "other"]
    (tmp_path / "t.csv").write_text("party,region\n" + "".join(f"{parties[i % 4]},r{i}\n" for i in range(100_000)))
    code, out, err = _run(capsys, "randomize", tmp_path / "t.csv", "--variable", f"party={PRAM}", "--strata", "region",
                          "--invariant-prior", "data", "--prior-budget", "1", "--min-stratum", "1", "--out",
                          tmp_path / "r.csv")
    assert code == 2 and out == "" and len(_errors(err)) == 1
    assert "more than 1000 strata" in err and "line 1002" in err
