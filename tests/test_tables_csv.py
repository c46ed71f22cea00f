"""designer's one CSV reader (designer/tables/csv_text.py, issue 60): the cells a file says, its errors in one line
naming the file, the line and the column, and no other CSV reader in designer/."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from designer.exceptions import DataError
from designer.tables.inputs import read_chunks

ROOT = Path(__file__).resolve().parents[1]


def _rows(path: Path, columns: list[str], chunk_rows: int = 500_000) -> list[tuple]:
    out = []
    for line, chunk in read_chunks(str(path), columns, chunk_rows=chunk_rows):
        out += [(line + i, *cells) for i, cells in enumerate(zip(*[chunk[c].tolist() for c in columns]))]
    return out


#: (file text, columns, the rows expected: line, cells), written out by hand.
CRAFTED = {
    "blank lines": ("a,b,c\n1,2,3\n\n4,5,6\n   \n\t\n7,8,9\n", ["a", "c"], [(2, "1", "3"), (3, "4", "6"),
                                                                      (4, "7", "9")]),
    "empty cells": ("a,b,c\n1,2,3\n,,\n", ["c"], [(2, "3"), (3, "")]),
    "spaces": ("a , b,c\n 1 ,2, 3 \n\" 4 \",5,\" 6\"\n", ["a", "c"], [(2, "1", "3"), (3, "4", "6")]),
    "quoted line break": ('a,b,c\n"x\ny",2, 3 \n4,5,6\n', ["a"], [(2, "x\ny"), (3, "4")]),
    "quoted separator": ('a,b,c\n"1,5",2,"{yes,no}"\n', ["a", "c"], [(2, "1,5", "{yes,no}")]),
    "doubled quotes": ('a,b\n"say ""no""",1\n', ["a"], [(2, 'say "no"')]),
    "crlf and bom": ("\ufeffa,b,c\r\n1,2,3\r\n4,5,6\r\n", ["a"], [(2, "1"), (3, "4")]),
    "semicolons": ("a;b;c\n1,5;2;3\n4;5;6\n", ["a"], [(2, "1,5"), (3, "4")]),
    "tabs": ("a\tb\tc\n1\t2\t3\n", ["b"], [(2, "2")]),
    "no final newline": ("a,b,c\n1,2,3\n4,5,6", ["c"], [(2, "3"), (3, "6")]),
    "qualtrics": ('a,b,c\nQuestion A,Question B,Question C\n'
                  '{"ImportId":"QID1"},{"ImportId":"QID2"},{"ImportId":"QID3"}\n1,2,3\n4,5,6\n', ["b"],
                  [(4, "2"), (5, "5")]),
    "unicode": ("a,b,c\nnaïve,日本,ß\n", ["a", "b"], [(2, "naïve", "日本")]),
    "NA spellings and numbers": ("a,b\nNA,1e400\nnull,-0.0000000000000000001\n,007\n", ["a", "b"],
                                 [(2, "NA", "1e400"), (3, "null", "-0.0000000000000000001"), (4, "", "007")]),
}


@pytest.mark.parametrize("name", sorted(CRAFTED))
def test_crafted_files_read_as_written(tmp_path, name):
    text, columns, expected = CRAFTED[name]
    path = tmp_path / "t.csv"
    path.write_bytes(text.encode())
    assert _rows(path, columns) == expected
    for chunk_rows in (1, 2):
        assert _rows(path, columns, chunk_rows) == expected


@pytest.mark.parametrize(("text", "line", "cells"), [("a,b\n1,2\n3\n", 3, 1), ("a,b\n1,2,3\n", 2, 3),
                                                      ("a,b\n\n1,2\n\n4,5,6\n", 3, 3),
                                                      ('a,b\n"x\ny",1\n1,2,3\n', 3, 3)])
def test_a_ragged_row_is_one_line_naming_it(tmp_path, text, line, cells):
    path = tmp_path / "ragged.csv"
    path.write_text(text)
    with pytest.raises(DataError, match=rf"ragged\.csv: line {line}: {cells} cells where the header has 2"):
        _rows(path, ["a"])


def test_a_cell_not_utf8_names_its_line_and_column(tmp_path):
    path = tmp_path / "latin.csv"
    path.write_bytes("a,b\n1,2\n3,caf\xe9\n".encode("latin-1"))
    with pytest.raises(DataError, match=r"latin\.csv: line 3, column 'b': not UTF-8"):
        _rows(path, ["a", "b"])
    path.write_bytes("caf\xe9,b\n1,2\n".encode("latin-1"))
    with pytest.raises(DataError, match=r"latin\.csv: line 1: not UTF-8"):
        _rows(path, ["b"])


def test_a_fifo_or_a_device_is_refused_before_it_is_opened(tmp_path):
    import os

    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    for path in (str(fifo), "/dev/zero"):
        with pytest.raises(DataError, match=r"not a regular file|a pipe"):
            _rows(Path(path), ["a"])


def test_one_csv_reader_in_designer():
    """Every CSV reading call of designer/ is in designer/tables/csv_text.py, but the mechanism file format's own
    (designer/_internal/formats.py: a mechanism, not a data table)."""
    pattern = re.compile(r"csv\.reader\(|read_csv\(|pyarrow\.csv|pcsv\.|csv\.DictReader|csv\.Sniffer")
    readers = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "designer").rglob("*.py")
                     if pattern.search(p.read_text()))
    assert readers == ["designer/_internal/formats.py", "designer/tables/csv_text.py"]


@settings(max_examples=40, deadline=None)
@given(values=st.lists(st.one_of(st.sampled_from(["yes", "no", "{yes,no}", " yes", "nan", "None", ""]),
                                 st.none(), st.just(float("nan")), st.integers(-2, 2), st.floats(0, 2)), max_size=30))
def test_label_indices_is_pandas_factorize_without_pandas(values):
    """randomize's lookup of the true values (no pandas imported) against the pandas.factorize it replaced."""
    import pandas as pd

    from designer.estimation.sampling import label_indices

    labels = ["yes", "no", "1", "0.5", "nan", "None"]
    codes, uniques = pd.factorize(np.asarray(values, dtype=object).ravel())
    pos = {x: i for i, x in enumerate(labels)}
    expected = np.array([pos.get(str(u), -1) for u in uniques] + [-1], dtype=np.int64)[codes]
    assert label_indices(values, labels).tolist() == expected.tolist()
