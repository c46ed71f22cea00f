"""Small CSV files are read without pandas (designer/estimation/csv_chunks.py), and give exactly the rows pandas' C
parser gives ``read_chunks`` for the same file: the cells, their line numbers, the errors; estimate, randomize and
the group fit give the same results through either reader (issue 51, item 8)."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from designer.estimation import survey_files
from designer.estimation.csv_chunks import TextChunk
from designer.exceptions import DataError

ROOT = Path(__file__).resolve().parents[1]


def _rows(path: Path, columns: list[str], *, small: bool, chunk_rows: int = 500_000, monkeypatch) -> list[tuple]:
    """Every row read, as (line, cell, cell, ...), through the small-file reader or pandas'."""
    monkeypatch.setattr(survey_files, "SMALL_CSV_BYTES", 10 * 2**20 if small else -1)
    out = []
    for line, chunk in survey_files.read_chunks(str(path), columns, chunk_rows=chunk_rows):
        assert isinstance(chunk, TextChunk) == small
        values = [chunk[c].tolist() for c in columns]
        out += [(line + i, *cells) for i, cells in enumerate(zip(*values))]
    return out


def _same(path: Path, columns: list[str], monkeypatch, chunk_rows: int = 500_000) -> list[tuple]:
    light = _rows(path, columns, small=True, chunk_rows=chunk_rows, monkeypatch=monkeypatch)
    assert light == _rows(path, columns, small=False, chunk_rows=chunk_rows, monkeypatch=monkeypatch)
    return light


CRAFTED = {
    "blank lines": "a,b,c\n1,2,3\n\n4,5,6\n   \n\t\n7,8,9\n",
    "short rows": "a,b,c\n1,2\n4,5,6\n,\n",
    "empty cells": "a,b,c\n1,2,3\n,,\n",
    "spaces": "a , b,c\n 1 ,2, 3 \n\" 4 \",5,\" 6\"\n",
    "quoted line break": 'a,b,c\n"x\ny",2, 3 \n4,5,6\n',
    "quoted separator": 'a,b,c\n"1,5",2,"{yes,no}"\n',
    "crlf and bom": "\ufeffa,b,c\r\n1,2,3\r\n4,5,6\r\n",
    "semicolons": "a;b;c\n1,5;2;3\n4;5;6\n",
    "tabs": "a\tb\tc\n1\t2\t3\n",
    "no final newline": "a,b,c\n1,2,3\n4,5,6",
    "qualtrics": 'a,b,c\nQuestion A,Question B,Question C\n'
                 '{"ImportId":"QID1"},{"ImportId":"QID2"},{"ImportId":"QID3"}\n1,2,3\n4,5,6\n',
    "unicode": "a,b,c\nnaïve,日本,ß\n",
}


@pytest.mark.parametrize("name", sorted(CRAFTED))
def test_crafted_files_read_as_pandas_reads_them(tmp_path, monkeypatch, name):
    path = tmp_path / "t.csv"
    path.write_text(CRAFTED[name], encoding="utf-8", newline="")
    header = survey_files.sniff(str(path))[0]
    for columns in ([header[0]], [header[2], header[0]]):
        rows = _same(path, columns, monkeypatch)
        assert rows, name
        for chunk_rows in (2, 3):  # (pandas' reader sees a Qualtrics export's two rows in a first chunk of 2 or more)
            assert _same(path, columns, monkeypatch, chunk_rows=chunk_rows) == rows


def test_the_crafted_cells_are_what_the_file_says(tmp_path, monkeypatch):
    """Independent of pandas: the expected cells written out."""
    path = tmp_path / "t.csv"
    path.write_text(CRAFTED["spaces"] + CRAFTED["short rows"].split("\n", 1)[1])
    assert _rows(path, ["a", "c"], small=True, monkeypatch=monkeypatch) == [
        (2, "1", "3"), (3, "4", "6"), (4, "1", ""), (5, "4", "6"), (6, "", "")]
    path.write_text(CRAFTED["qualtrics"])
    assert _rows(path, ["b"], small=True, monkeypatch=monkeypatch) == [(4, "2"), (5, "5")]


@pytest.mark.parametrize("path", sorted([*ROOT.glob("examples/*.csv"), *ROOT.glob("examples/data/*.csv"),
                                         *ROOT.glob("tests/data/*.csv")]), ids=lambda p: p.name)
def test_every_bundled_and_test_csv_reads_as_pandas_reads_it(path, monkeypatch):
    try:
        header = survey_files.sniff(str(path))[0]
    except DataError:
        pytest.skip("not a data table")
    _same(path, header, monkeypatch)


CELL = st.text(alphabet=st.sampled_from(list("ab yes{},;\"\t\n-1.")), max_size=8)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.lists(CELL, min_size=3, max_size=3), min_size=1, max_size=12),
       sep=st.sampled_from([",", ";", "\t"]), blank=st.booleans(), chunk_rows=st.integers(1, 5))
def test_random_tables_read_as_pandas_reads_them(tmp_path, monkeypatch, rows, sep, blank, chunk_rows):
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter=sep, lineterminator="\n")
    writer.writerow(["id", "answer", "group"])
    for i, row in enumerate(rows):
        writer.writerow(row)
        if blank and i % 3 == 1:
            buffer.write("\n")
    path = tmp_path / "random.csv"
    path.write_text(buffer.getvalue())
    if survey_files.sniff(str(path))[1] != sep:  # a cell's separators outvote the header's: another table
        return
    outcomes = []
    for small in (True, False):
        try:
            outcomes.append(_rows(path, ["answer", "id"], small=small, chunk_rows=max(chunk_rows, 2),
                                  monkeypatch=monkeypatch))
        except DataError as exc:
            outcomes.append(str(exc))
    assert outcomes[0] == outcomes[1]


def test_a_row_longer_than_the_header_is_one_line(tmp_path, monkeypatch):
    """pandas alone would take the first cell of a long first row as a row label and shift the others: both readers
    refuse that row. A later long row is refused by the small-file reader; pandas' (files over 10 MB, only the
    named columns read) drops its extra cells."""
    path = tmp_path / "long.csv"
    path.write_text("answer,x\n{yes},1\n{no},2,3\n")
    with pytest.raises(DataError, match=r"long\.csv: line 3: 3 cells, but the header names 2 columns"):
        _rows(path, ["answer"], small=True, monkeypatch=monkeypatch)
    assert _rows(path, ["answer"], small=False, monkeypatch=monkeypatch) == [(2, "{yes}"), (3, "{no}")]
    path.write_text("answer,x\n\n{yes},1,3\n{no},2\n")
    for small in (True, False):
        with pytest.raises(DataError, match=r"long\.csv: line 2: 3 cells, but the header names 2 columns"):
            _rows(path, ["answer"], small=small, monkeypatch=monkeypatch)


def _designer(*argv: str, cwd: Path, small: bool) -> subprocess.CompletedProcess[str]:
    code = ("import sys\nfrom designer.estimation import survey_files\n"
            f"survey_files.SMALL_CSV_BYTES = {10 * 2**20 if small else -1}\n"
            "from designer.cli import main\nsys.exit(main(sys.argv[1:]))")
    return subprocess.run([sys.executable, "-c", code, *argv], cwd=cwd, capture_output=True, text=True, check=False,
                          timeout=300)


@pytest.mark.parametrize("argv", [
    ["estimate", "regress", "--mechanism", "gwrr", "--format", "json"],
    ["estimate", "split-sample", "--mechanism", "a=warner-80", "--mechanism", "b=warner-65", "--group", "arm",
     "--noncompliance", "carriers:no", "--format", "json"],
    ["estimate", "minarets", "--column", "answer", "--mechanism", "0=identity", "--mechanism", "1=sld-2of12",
     "--mechanism", "2=sld-10of12", "--group", "condition", "--noncompliance", "carriers:no", "--format", "json"],
    ["randomize", "three-questions", "--variable", "drugs=q2x3", "--variable", "tax=q2x3", "--keep", "id,region",
     "--out", "{out}", "--seed", "3", "--simulation"],
])
def test_commands_give_the_same_results_through_either_reader(tmp_path, argv):
    outputs = []
    for small in (True, False):
        folder = tmp_path / str(small)
        folder.mkdir()
        out = _designer(*[a.replace("{out}", "released.csv") for a in argv], cwd=folder, small=small)
        assert out.returncode == 0, out.stderr
        written = folder / "released.csv"
        outputs.append(written.read_text() if written.exists() else json.loads(out.stdout))
    assert outputs[0] == outputs[1]


def test_estimate_of_a_small_file_imports_neither_pandas_nor_pyarrow(tmp_path):
    code = ("import sys\nfrom designer.cli import main\nrc = main(['estimate', 'regress', '--mechanism', 'gwrr'])\n"
            "print(rc, sorted(m for m in ('pandas', 'pyarrow') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "0 []"


@settings(max_examples=80, deadline=None)
@given(values=st.lists(st.one_of(st.sampled_from(["yes", "no", "{yes,no}", " yes", "nan", "None", ""]),
                                 st.none(), st.just(float("nan")), st.integers(-2, 2), st.floats(0, 2)), max_size=30))
def test_label_indices_is_pandas_factorize_without_pandas(values):
    """randomize's lookup of the true values (no pandas imported) against the pandas.factorize it replaced."""
    import numpy as np
    import pandas as pd

    from designer.estimation.sampling import label_indices

    labels = ["yes", "no", "1", "0.5", "nan", "None"]
    codes, uniques = pd.factorize(np.asarray(values, dtype=object).ravel())
    pos = {x: i for i, x in enumerate(labels)}
    expected = np.array([pos.get(str(u), -1) for u in uniques] + [-1], dtype=np.int64)[codes]
    assert label_indices(values, labels).tolist() == expected.tolist()
