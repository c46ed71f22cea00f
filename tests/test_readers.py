"""One column, one name: every data reader (CSV, Parquet, Arrow) refuses a header whose names collide once
surrounding spaces are removed, or a blank name, before anything is written (exit 2, one line naming the file
and both columns)."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.feather as feather
import pyarrow.parquet as pq
import pytest

from designer.cli import main

ROOT = Path(__file__).resolve().parents[1]
MECH = str(ROOT / "examples/mechanisms/q2x3.csv")
DRAW = ""  # set by _dyadic_mechanism
ROWS = {"id": ["1", "2", "3", "4"], "smoke": ["yes", "no", "yes", "no"], "age": ["30", "41", "52", "63"],
        "response": ["{yes}", "{no}", "{yes,no}", "{no}"]}

@pytest.fixture(scope="module", autouse=True)
def _dyadic_mechanism(tmp_path_factory):
    """The mechanism randomize draws from: masses of 2^-k, drawn exactly over 2^32 (nothing mixed in)."""
    global DRAW
    path = tmp_path_factory.mktemp("mechanism") / "dyadic.csv"
    path.write_text('input,{yes},{no},"{yes,no}"\nyes,0.5,0.25,0.25\nno,0.25,0.5,0.25\n')
    DRAW = str(path)



def _write(path: Path, names: list[str], columns: list[list[str]]) -> None:
    """A table whose header is ``names`` exactly (duplicates and blanks included), in the format of its name."""
    if path.suffix == ".csv":
        with path.open("w", newline="") as fh:
            csv.writer(fh, lineterminator="\n").writerows([names, *zip(*columns)])
        return
    table = pa.Table.from_arrays([pa.array(c) for c in columns], names=names)
    if path.suffix == ".parquet":
        pq.write_table(table, path)
    else:
        feather.write_feather(table, path)


def _commands(data: Path, out: Path) -> dict[str, list[str]]:
    return {
        "randomize": ["randomize", str(data), "--mechanism", DRAW, "--column", "smoke", "--out", str(out),
                      "--keep", "id", "--simulation", "--seed", "1"],
        "estimate": ["estimate", str(data), "--mechanism", MECH, "--column", "response"],
        "regress": ["regress", str(data), "--mechanism", MECH, "--formula", "response ~ age"],
        "regress-chunks": ["regress", str(data), "--mechanism", MECH, "--formula", "response ~ age",
                           "--chunk-rows", "1000"],
    }


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    return subprocess.run([sys.executable, "-m", "designer", *argv], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, env=env, stdin=subprocess.DEVNULL, check=False)


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_issue_40_duplicate_column_is_refused_not_flattened(tmp_path, suffix):
    """The issue's case as a user runs it: `smoke` and ` smoke` gave 8 output rows from 4 respondents (CSV) or an
    internal error (Parquet)."""
    data, out = tmp_path / f"dup{suffix}", tmp_path / "out.csv"
    _write(data, ["id", "smoke", " smoke"], [ROWS["id"], ROWS["smoke"], ROWS["smoke"][::-1]])
    proc = _run(_commands(data, out)["randomize"])
    assert proc.returncode == 2, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if not line.startswith("designer: warning")]
    assert len(errors) == 1 and str(data) in errors[0]
    assert "'smoke'" in errors[0] and "' smoke'" in errors[0]
    assert proc.stdout == "" and sorted(os.listdir(tmp_path)) == [data.name]


CASES = [  # (header, the two names the message quotes, or the blank column's number)
    (["id", "smoke", "age", "response", " smoke"], ("'smoke'", "' smoke'")),
    (["id", "smoke", "age", "response", "response "], ("'response'", "'response '")),
    (["id", "smoke", "age", "response", "age"], ("'age'", "'age'")),
    (["id", "smoke", "age", "response", ""], ("column 5",)),
    (["", "smoke", "age", "response", "id"], ("column 1",)),
    (["id", "smoke", "age", "response", "  "], ("column 5",)),
]


@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".arrow"])
@pytest.mark.parametrize("header,quoted", CASES)
@pytest.mark.parametrize("command", ["randomize", "estimate", "regress", "regress-chunks"])
def test_every_reader_refuses_colliding_or_blank_names(tmp_path, capsys, suffix, header, quoted, command):
    data, out = tmp_path / f"data{suffix}", tmp_path / "out.csv"
    extra = ROWS["age"] if header[-1].strip() == "age" else ROWS["smoke"][::-1]
    _write(data, header, [ROWS["id"], ROWS["smoke"], ROWS["age"], ROWS["response"], extra])
    if header[0] == "":
        _write(data, header, [ROWS["id"], ROWS["smoke"], ROWS["age"], ROWS["response"], ROWS["id"]])
    code = main(_commands(data, out)[command])
    stdout, err = capsys.readouterr()
    errors = [line for line in err.splitlines() if not line.startswith("designer: warning")]
    assert code == 2, err
    assert stdout == "" and len(errors) == 1 and str(data) in errors[0]
    assert all(q in errors[0] for q in quoted), errors[0]
    assert sorted(os.listdir(tmp_path)) == [data.name]


@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".arrow"])
def test_spaces_around_one_name_are_still_read(tmp_path, capsys, suffix):
    """A name with spaces around it and no twin is that name, in every format (a Parquet column ' smoke' was not
    found as 'smoke')."""
    data, out = tmp_path / f"data{suffix}", tmp_path / "out.csv"
    _write(data, ["id", " smoke ", "age", "response"], [ROWS["id"], ROWS["smoke"], ROWS["age"], ROWS["response"]])
    assert main(_commands(data, out)["randomize"]) == 0, capsys.readouterr().err
    lines = out.read_text().splitlines()
    assert lines[0] == "id,response" and sorted(line.split(",")[0] for line in lines[1:]) == sorted(ROWS["id"])
    capsys.readouterr()
    assert main([*_commands(data, out)["estimate"], "--format", "json"]) == 0, capsys.readouterr().err


def test_nested_parquet_column_is_refused(tmp_path, capsys):
    data = tmp_path / "nested.parquet"
    table = pa.table({"id": [1, 2], "smoke": [{"a": "yes"}, {"a": "no"}], "response": ["{yes}", "{no}"]})
    pq.write_table(table, data)
    for argv in (["estimate", str(data), "--mechanism", MECH, "--column", "response"],
                 ["randomize", str(data), "--mechanism", DRAW, "--column", "smoke", "--out", str(tmp_path / "o.csv")]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "nested" in err and str(data) in err
    assert sorted(os.listdir(tmp_path)) == [data.name]


@pytest.mark.parametrize("suffix", [".parquet", ".arrow"])
def test_a_write_abandoned_midway_leaves_no_file_and_no_noise(tmp_path, suffix):
    """An error after the first chunk (an unknown answer deep in a large file): the output is discarded and the
    Parquet writer, collected later, does not print "Exception ignored in ParquetWriter.__del__" on stderr."""
    code = f"""
import gc
from designer._internal.io import atomic_writer
from designer.tables.writers import table_sink
def write():
    with atomic_writer({str(tmp_path / ('out' + suffix))!r}, overwrite=False) as binary:
        sink = table_sink({str(tmp_path / ('out' + suffix))!r}, binary, ["a"])
        sink.write([["1", "2"]])
        raise ValueError("line 600001: an unknown answer")
try:
    write()
except ValueError:
    pass
gc.collect()
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, cwd=ROOT)
    assert proc.returncode == 0 and proc.stderr == "" and os.listdir(tmp_path) == []


def test_a_quoted_name_holding_a_line_break_is_read_as_pandas_reads_it(tmp_path, capsys):
    """The header is parsed over its quoted line breaks (as pandas parses it), so '"smoke\\n"' and 'smoke' are
    two names of one column, not a header of one name whose data pandas reads as two interleaved columns."""
    data = tmp_path / "multiline.csv"
    data.write_text('id,"smoke\n",smoke\n1,yes,no\n2,no,yes\n')
    assert main(["randomize", str(data), "--mechanism", DRAW, "--column", "smoke", "--out",
                 str(tmp_path / "o.csv")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'smoke\\n'" in err and "columns 2" in err
    assert os.listdir(tmp_path) == [data.name]
