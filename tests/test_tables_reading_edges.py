"""Edges of the reading layer (designer/tables/): a header name holding a line break, a dataset folder with a part
that has a schema but no rows, an SPSS string variable with value labels. Each is valid input, read as the same
data written plainly is read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from designer.cli import main
from designer.exceptions import DataError
from designer.tables.inputs import read_chunks
from designer.tables.stat_files import StatFile

ROOT = Path(__file__).resolve().parents[1]
MECH = str(ROOT / "examples/mechanisms/q2x3.csv")
ANSWERS = ["{yes}", "{no}", "{yes,no}"]


def _estimate(path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> dict[str, Any]:
    """The JSON estimate of ``path`` (exit 0 asserted, the error shown when not)."""
    code = main(["estimate", str(path), "--mechanism", MECH, *extra, "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    result: dict[str, Any] = json.loads(out)
    return result


def _refusal(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The one error line of a command refused with exit 2."""
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err, err
    return err


def _frame(n: int = 30) -> pd.DataFrame:
    return pd.DataFrame({"id": [str(i) for i in range(n)], "answer": ["yes" if i % 3 else "no" for i in range(n)],
                         "response": [ANSWERS[i % 3] for i in range(n)]})


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
@pytest.mark.parametrize("chunk_rows", [1, 7, 500_000])
def test_a_header_name_holding_a_line_break_starts_the_data_after_the_header(tmp_path: Path, newline: str,
                                                                               chunk_rows: int) -> None:
    """The data start after the header's last physical line, however many line breaks its quoted names hold: every
    row is read (none is the header's tail), and a row is numbered as for any header (the header is line 1)."""
    frame = _frame()
    rows = "".join(f"{i},{a},\"{r}\"{newline}" for i, a, r in frame.itertuples(index=False))
    broken = tmp_path / "broken.csv"
    broken.write_bytes(f'"i{newline}d",answer,"resp{newline}{newline}onse"{newline}{rows}'.encode())
    chunks = list(read_chunks(str(broken), ["i\nd" if newline == "\n" else "i\r\nd", "answer"],
                              chunk_rows=chunk_rows))
    assert chunks[0][0] == 2
    assert [v for _, c in chunks for v in c["answer"].tolist()] == frame["answer"].tolist()
    assert [line for line, _ in chunks] == list(range(2, 2 + len(frame), chunk_rows))


def test_a_header_name_holding_a_line_break_gives_the_plain_files_estimate(tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture[str]
                                                                          ) -> None:
    """estimate reads a file whose quoted header name holds a line break as it reads the same file with a plain
    header, and names a bad row by the same line."""
    frame = _frame()
    rows = "".join(f"{i},\"{r}\"\n" for i, _, r in frame.itertuples(index=False))
    plain, broken = tmp_path / "plain.csv", tmp_path / "broken.csv"
    plain.write_text("id,response\n" + rows)
    broken.write_text('"i\nd",response\n' + rows)
    assert _estimate(broken, capsys) == _estimate(plain, capsys)
    bad = rows.replace("\"{no}\"", "maybe", 1)
    plain.write_text("id,response\n" + bad)
    broken.write_text('"i\nd",response\n' + bad)
    said = [_refusal(["estimate", str(p), "--mechanism", MECH], capsys).replace(str(p), "FILE")
            for p in (plain, broken)]
    assert said[0] == said[1] and "FILE: line 3: 'maybe'" in said[0]


def test_an_empty_part_of_a_dataset_folder_is_skipped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A part with a schema but no rows (as Spark and Dask write) adds no rows: estimate, randomize and regress read
    the folder as its other parts, rows numbered across them; a folder of such parts only is still one error line."""
    frame = _frame(60)
    frame["age"] = [20 + i % 40 for i in range(len(frame))]
    folder = tmp_path / "ds"
    folder.mkdir()
    frame.iloc[:0].to_parquet(folder / "a.parquet", index=False)
    frame.iloc[:40].to_parquet(folder / "b.parquet", index=False)
    frame.iloc[:0].to_parquet(folder / "c.parquet", index=False)
    frame.iloc[40:].to_parquet(folder / "d.parquet", index=False)
    whole = tmp_path / "whole.parquet"
    frame.to_parquet(whole, index=False)
    assert [line for line, _ in read_chunks(str(folder), ["answer"], chunk_rows=25)] == [2, 27, 42]
    assert _estimate(folder, capsys) == _estimate(whole, capsys)
    out = tmp_path / "out.csv"
    assert main(["randomize", str(folder), "--mechanism", MECH, "--column", "answer", "--out", str(out),
                 "--ledger", str(tmp_path / "ledger.json"), "--quiet"]) == 0, capsys.readouterr().err
    assert len(pd.read_csv(out)) == len(frame)
    capsys.readouterr()
    assert main(["regress", str(folder), "--mechanism", MECH, "--formula", "response ~ age", "--format",
                 "csv"]) == 0, capsys.readouterr().err
    capsys.readouterr()
    empty = tmp_path / "empty"
    empty.mkdir()
    frame.iloc[:0].to_parquet(empty / "a.parquet", index=False)
    frame.iloc[:0].to_parquet(empty / "b.parquet", index=False)
    assert "a schema but no rows" in _refusal(["estimate", str(empty), "--mechanism", MECH], capsys)
    with pytest.raises(DataError, match="a schema but no rows"):
        list(read_chunks(str(empty), ["answer"]))


def test_a_string_variables_value_labels_are_applied_to_its_text(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """An SPSS string variable's value labels (text keys, as pyreadstat's variable_value_labels gives them) are
    applied to its text by every command, as number codes' labels are: the file gives the estimate of the same
    words written in CSV, randomize reads it, and a value without a label stays as written."""
    pyreadstat = pytest.importorskip("pyreadstat")
    frame = _frame(90)
    codes = {"{yes}": "Y", "{no}": "N", "{yes,no}": "D"}
    coded = frame.assign(response=frame["response"].map(codes), answer=frame["answer"].str[0])
    coded.loc[5, "id"] = "unlabelled"
    sav, csv = tmp_path / "s.sav", tmp_path / "s.csv"
    pyreadstat.write_sav(coded, str(sav), variable_value_labels={
        "response": {c: w for w, c in codes.items()}, "answer": {"y": "yes", "n": "no"}, "id": {"0": "zero"}})
    frame.to_csv(csv, index=False)
    assert StatFile(str(sav)).meta.value_labels == {}  # number codes' labels only (text ones are applied)
    chunk = next(read_chunks(str(sav), ["id", "answer", "response"]))[1]
    assert chunk["response"].tolist() == frame["response"].tolist()
    assert chunk["answer"].tolist() == frame["answer"].tolist()
    assert chunk["id"].tolist()[:6] == ["zero", "1", "2", "3", "4", "unlabelled"]
    assert _estimate(sav, capsys) == _estimate(csv, capsys)
    out = tmp_path / "out.csv"
    assert main(["randomize", str(sav), "--mechanism", MECH, "--column", "answer", "--keep", "id", "--out",
                 str(out), "--ledger", str(tmp_path / "ledger.json"), "--quiet"]) == 0, capsys.readouterr().err
    assert sorted(pd.read_csv(out, dtype=str)["id"]) == sorted(["zero", *coded["id"][1:]])
