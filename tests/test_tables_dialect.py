"""The same cells through every command that reads a data table (issue 60): a table written as CSV in any dialect
designer reads (separators , ; tab |, a BOM or none, quoted cells holding separators, quotes and line breaks, blank
lines, CRLF, a last line with or without its line end, a Qualtrics export's two extra header rows) gives estimate,
regress, randomize and the studio's uploads exactly the answer the same table gives as a Parquet file written with
pyarrow directly, or as a DataFrame.

The CSV files are written by Python's csv module (the oracle shares no code with designer); the commands run
in-process through ``designer.cli.main``, the studio through its lab (:class:`designer.studio.session.Lab`).
"""

from __future__ import annotations

import csv
import io
import json
import re
import tempfile
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from designer.cli import main

ROOT = Path(__file__).resolve().parents[1]
MECH = str(ROOT / "examples/mechanisms/q2x3.csv")
HEADER = ["id", "answer", "response", "age", "note"]
#: What a free-text column may hold: the separators, quotes, line breaks, a BOM's character inside a cell, non-ASCII.
NOTE = st.lists(st.sampled_from([*"ab ,;\t|\"'\n{}é", "\r\n", "\ufeff", "日", "NA", "null", "007", "1e400"]),
                max_size=8).map("".join)
#: A covariate's numbers: whole, or decimals tiny, huge and of 17 significant digits (each read to the float that
#: is nearest to its text, as Parquet stores the float itself).
AGE = st.one_of(st.integers(18, 80), st.sampled_from([1e-300, 2.5e300, 0.1, 123456789.12345679, 45.000000000000014,
                                                       -0.0, 5e-324]))


@st.composite
def tables(draw):
    """(rows of Python values, dialect): a small table and how its CSV file is written."""
    n = draw(st.integers(6, 14))
    rows = [[i + 1, draw(st.sampled_from(["yes", "no"])), draw(st.sampled_from(["{yes}", "{no}", "{yes,no}"])),
             draw(AGE), draw(NOTE)] for i in range(n)]
    dialect = {"sep": draw(st.sampled_from([",", ";", "\t", "|"])), "bom": draw(st.booleans()),
               "end": draw(st.sampled_from(["\n", "\r\n"])), "last_end": draw(st.booleans()),
               "quoting": draw(st.sampled_from([csv.QUOTE_MINIMAL, csv.QUOTE_ALL, csv.QUOTE_NONNUMERIC])),
               "blank": draw(st.sets(st.integers(0, n), max_size=3)), "qualtrics": draw(st.booleans())}
    return rows, dialect


def write_csv(path: Path, rows: list[list], d: dict) -> None:
    """The table as a CSV file in dialect ``d``, by Python's csv module."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter=d["sep"], lineterminator=d["end"], quoting=d["quoting"])
    writer.writerow(HEADER)
    if d["qualtrics"]:
        writer.writerow([f"What is your {c}?" for c in HEADER])
        writer.writerow([json.dumps({"ImportId": f"QID{i}"}) for i in range(len(HEADER))])
    for i, row in enumerate(rows):
        if i in d["blank"]:
            buffer.write(d["end"])
        writer.writerow(row)
    text = buffer.getvalue()
    if not d["last_end"]:
        text = text[: -len(d["end"])]
    path.write_bytes((b"\xef\xbb\xbf" if d["bom"] else b"") + text.encode("utf-8"))


def write_parquet(path: Path, rows: list[list]) -> None:
    columns = list(zip(*rows))
    age = pa.float64() if any(isinstance(v, float) for v in columns[3]) else pa.int64()
    pq.write_table(pa.table({"id": pa.array(columns[0], pa.int64()), "answer": pa.array(columns[1], pa.string()),
                             "response": pa.array(columns[2], pa.string()), "age": pa.array(columns[3], age),
                             "note": pa.array(columns[4], pa.string())}), path)


def run(capsys, *args: str) -> tuple[int, object]:
    """``designer ARGS --format json`` in-process: the exit status and the JSON (file names left out)."""
    capsys.readouterr()
    code = main([*args, "--format", "json", "--quiet"])
    out, err = capsys.readouterr()
    if code != 0:
        return code, re.sub(r"\S*(truth|data)\.(csv|parquet)", "FILE", err)
    return code, _without_files(json.loads(out))


def _without_files(value: object) -> object:
    if isinstance(value, dict):
        return {k: _without_files(v) for k, v in value.items() if k not in ("data", "file", "input", "path", "source",
                                                                           "sha256", "out", "manifest", "seconds")}
    if isinstance(value, list):
        return [_without_files(v) for v in value]
    if isinstance(value, str):
        return re.sub(r"\S*(truth|data)\.(csv|parquet)", "FILE", value)
    return value


def commands(capsys, data: Path, folder: Path) -> dict[str, object]:
    """What every command that reads a data table says of ``data`` (randomize: its output file's bytes)."""
    said = {"estimate": run(capsys, "estimate", str(data), "--mechanism", MECH),
            "regress": run(capsys, "regress", str(data), "--mechanism", MECH, "--formula", "response ~ age",
                           "--reference", "no")}
    out = folder / f"released-{data.suffix[1:]}.csv"
    code, _ = run(capsys, "randomize", str(data), "--mechanism", MECH, "--column", "answer", "--out", str(out),
                  "--keep", "id,note", "--seed", "7", "--simulation")
    said["randomize"] = (code, out.read_bytes() if code == 0 else b"")
    return said


def studio(data: Path, folder: Path) -> tuple[object, int, bytes]:
    """The studio's uploads of ``data``: the shares step 5 shows, and the release it offers for download."""
    from designer.studio.question_page import read_mechanism
    from designer.studio.session import Lab
    from designer.studio.state import Study, Upload

    loaded = read_mechanism(Upload.of(MECH, "q2x3.csv"))
    upload = Upload.of(str(data), f"answers{data.suffix}")
    study = Study(None, "", None, loaded, None, {}, answers=upload, answer_column="response", truth=upload,
                  truth_column="answer")
    lab = Lab(str(folder))
    shares = lab.estimate(study).to_dict()
    result, released = lab.release(study, draw=True)
    # the release is drawn from the system's CSPRNG: its answers are random, its rows and its header are not
    header = (Path(released) / "released.csv").read_bytes().split(b"\n", 1)[0]
    return _without_files(shares), result.to_dict()["n"], header


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                HealthCheck.too_slow])
@given(table=tables())
def test_every_command_reads_the_same_cells_in_any_dialect(capsys, table):
    rows, dialect = table
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        text, parquet = folder / "data.csv", folder / "data.parquet"
        write_csv(text, rows, dialect)
        write_parquet(parquet, rows)
        # the oracle reads the file back with the csv module: the file holds the table (the test writes it right)
        with open(text, newline="", encoding="utf-8-sig") as f:
            read = [r for r in csv.reader(f, delimiter=dialect["sep"]) if r]
        assert read[3 if dialect["qualtrics"] else 1:] == [[str(c) if isinstance(c, str | int) else repr(c) for c in r]
                                                           for r in rows]

        from_csv, from_parquet = commands(capsys, text, folder), commands(capsys, parquet, folder)
        assert from_csv["estimate"][0] == 0, from_csv["estimate"]
        assert from_csv == from_parquet
        assert studio(text, folder / "studio-csv") == studio(parquet, folder / "studio-parquet")


def test_a_dataframe_reads_as_its_csv_file(tmp_path):
    """The same table handed as a DataFrame: the library's estimate and regress give the CSV file's answer."""
    import designer

    rows = [[i + 1, "yes" if i % 3 else "no", ["{yes}", "{no}", "{yes,no}"][i % 3], 20 + 7 * i % 50,
             'say "a;b"\n' * (i % 2)] for i in range(12)]
    path = tmp_path / "data.csv"
    write_csv(path, rows, {"sep": ";", "bom": True, "end": "\r\n", "last_end": False, "quoting": csv.QUOTE_MINIMAL,
                           "blank": {3}, "qualtrics": True})
    frame = pd.DataFrame(rows, columns=HEADER)
    assert designer.estimate(frame, MECH).to_dict() == designer.estimate(str(path), MECH).to_dict()
    by_frame = designer.regress("response ~ age", frame, MECH, reference="no").to_dict()
    by_file = designer.regress("response ~ age", str(path), MECH, reference="no").to_dict()
    assert _without_files(by_frame) == _without_files(by_file)


def test_the_studio_takes_every_file_the_layer_reads(tmp_path):
    """The studio's answer boxes accept every suffix designer reads, and an upload of each gives the shares its
    CSV file gives (Arrow IPC through pyarrow, SPSS and Stata through pyreadstat: writers that are not designer's)."""
    import pyarrow.feather as feather
    import pyreadstat

    from designer.studio.answers_page import ACCEPT
    from designer.tables.inputs import ARROW_SUFFIXES, STAT_SUFFIXES

    assert {".csv", ".tsv", ".parquet", *ARROW_SUFFIXES, *STAT_SUFFIXES} <= set(ACCEPT)
    rows = [[i + 1, "yes" if i % 3 else "no", ["{yes}", "{no}", "{yes,no}"][i % 4 % 3], 20 + 7 * i % 50, "x"]
            for i in range(15)]
    frame = pd.DataFrame(rows, columns=HEADER)
    write_csv(tmp_path / "data.csv", rows, {"sep": "\t", "bom": False, "end": "\n", "last_end": True,
                                            "quoting": csv.QUOTE_MINIMAL, "blank": set(), "qualtrics": False})
    feather.write_feather(pa.Table.from_pandas(frame, preserve_index=False), tmp_path / "data.feather")
    pyreadstat.write_sav(frame, str(tmp_path / "data.sav"))
    pyreadstat.write_dta(frame, str(tmp_path / "data.dta"))
    expected = studio(tmp_path / "data.csv", tmp_path / "csv")
    for suffix in (".feather", ".sav", ".dta"):
        assert studio(tmp_path / f"data{suffix}", tmp_path / suffix[1:]) == expected, suffix


def test_a_cell_not_utf8_matters_only_where_a_command_reads_it(tmp_path, capsys):
    """The same bytes, the same answer: a latin-1 cell in a column no command here uses is never decoded (regress
    in memory as in chunks, estimate, randomize); once a command uses the column, every one refuses it in the same
    one line naming the file, the line and the column, exit 2."""
    data = tmp_path / "data.csv"
    data.write_bytes(b"id,answer,response,age,note\n" + b"".join(
        f"{i},{'yes' if i % 2 else 'no'},\"{['{yes}', '{no}', '{yes,no}'][i % 3]}\",{20 + i},".encode()
        + (b"caf\xe9" if i == 4 else b"ok") + b"\n" for i in range(1, 13)))
    regress = ["regress", str(data), "--mechanism", MECH, "--reference", "no", "--formula"]
    fits = [run(capsys, *regress, "response ~ age"), run(capsys, *regress, "response ~ age", "--chunk-rows", "1000")]
    assert fits[0][0] in (0, 3) and fits[0] == fits[1]  # written (3: 12 respondents leave the slope unbounded)
    assert run(capsys, "estimate", str(data), "--mechanism", MECH)[0] == 0
    out = tmp_path / "out.csv"
    assert run(capsys, "randomize", str(data), "--mechanism", MECH, "--column", "answer", "--out", str(out),
               "--keep", "id")[0] == 0
    refusals = [run(capsys, *regress, "response ~ age + note"),
                run(capsys, *regress, "response ~ age + note", "--chunk-rows", "1000"),
                run(capsys, "estimate", str(data), "--mechanism", MECH, "--column", "note"),
                run(capsys, "randomize", str(data), "--mechanism", MECH, "--column", "answer", "--out",
                    str(tmp_path / "out2.csv"), "--keep", "note")]
    said = "designer: error: FILE: line 5, column 'note': not UTF-8 text; save the file as UTF-8\n"
    assert refusals == [(2, said)] * 4
    assert not (tmp_path / "out2.csv").exists()


def test_a_ragged_row_is_the_same_line_through_every_command(tmp_path, capsys):
    """A row with a cell too many, after a blank line and a quoted line break: every command refuses it in the
    same one line naming the file's line (blank lines not counted), exit 2, and writes nothing."""
    data = tmp_path / "data.csv"
    rows = [f'{i},{"yes" if i % 2 else "no"},"{["{yes}", "{no}", "{yes,no}"][i % 3]}",{20 + i},"a\nb"'
            for i in range(1, 9)]
    rows[5] += ",extra"
    data.write_text("id,answer,response,age,note\n\n" + "\n".join(rows) + "\n", newline="")
    regress = ["regress", str(data), "--mechanism", MECH, "--reference", "no", "--formula", "response ~ age"]
    said = [run(capsys, *regress), run(capsys, *regress, "--chunk-rows", "1000"),
            run(capsys, "estimate", str(data), "--mechanism", MECH),
            run(capsys, "randomize", str(data), "--mechanism", MECH, "--column", "answer", "--out",
                str(tmp_path / "out.csv"))]
    assert said == [(2, "designer: error: FILE: line 7: 6 cells where the header has 5; every row needs one cell per "
                        "column (a separator too many or too few, or a cell holding the separator that is not "
                        "quoted?)\n")] * 4
    assert not (tmp_path / "out.csv").exists()
