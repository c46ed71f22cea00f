"""Kept columns come out as they went in, or are refused in one line where the output's format cannot hold them
(issue 49, item 3): a hypothesis property test over every input x output format pair randomize supports (input:
CSV, Parquet, Arrow, a DataFrame, SPSS, Stata; output: CSV, Parquet, Arrow, SPSS, Stata) and the types that broke
(64-bit integers beyond 2^53 with a null, unsigned 64-bit, booleans, timestamps with and without a zone, decimals,
float32, NaN beside null, text with spaces and line breaks, dates).

The oracle is independent of the release code: a CSV cell is parsed back with Python's own parsers (``int``,
``Decimal``, ``float`` and ``numpy.float32``, ``datetime.fromisoformat``) and must give the value exactly (sign of
zero, a decimal's scale); a Parquet or Arrow column is compared value by value with what pyarrow reads from the
input; an SPSS or Stata file is read back with pyreadstat. A refusal is allowed exactly where the format has no
place for a value (stated per type below) and must then be one line naming the column.
"""

from __future__ import annotations

import csv
import datetime as dt
import decimal
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from designer.exceptions import DesignerError
from designer.verbs.randomize_verb import randomize

pyreadstat = pytest.importorskip("pyreadstat")

INPUTS = ["csv", "parquet", "arrow", "frame", "sav", "dta"]
OUTPUTS = ["csv", "parquet", "arrow", "sav", "dta"]
TEXT = st.text(alphabet=st.sampled_from(list("ab Z9,;\"'é\t\n\r-.")), max_size=8)
DATES = st.dates(min_value=dt.date(1600, 1, 1), max_value=dt.date(2200, 12, 31))
MOMENTS = st.datetimes(min_value=dt.datetime(1600, 1, 1), max_value=dt.datetime(2200, 12, 31))

#: Each type: its Arrow type and a strategy for its values (None is added by the lists).
TYPES = {
    "int64": (pa.int64(), st.integers(-2**63, 2**63 - 1) | st.sampled_from([2**53, 2**53 + 1, -(2**53) - 1])),
    "uint64": (pa.uint64(), st.integers(0, 2**64 - 1) | st.sampled_from([2**64 - 1, 2**53 + 1, 7])),
    "bool": (pa.bool_(), st.booleans()),
    "float32": (pa.float32(), st.floats(width=32)),
    "float64": (pa.float64(), st.floats()),
    "decimal": (pa.decimal128(12, 3), st.decimals(min_value=-10**8, max_value=10**8, places=3, allow_nan=False)),
    "date": (pa.date32(), DATES),
    "timestamp": (pa.timestamp("us"), MOMENTS),
    "zoned": (pa.timestamp("s", tz="Europe/Paris"), st.integers(-10**10, 10**10)),
    "string": (pa.string(), TEXT),
}
#: What each input format can carry (CSV carries text; a statistics package numbers, text, dates and moments).
CARRIES = {"csv": {"string"}, "sav": {"float64", "string", "date", "timestamp"},
           "dta": {"float64", "string", "date", "timestamp"}}


@st.composite
def columns(draw, source: str):
    n = draw(st.integers(1, 6))
    kinds = [k for k in TYPES if k in CARRIES.get(source, TYPES)]
    chosen = draw(st.lists(st.sampled_from(kinds), min_size=1, max_size=3))
    out = {}
    for i, kind in enumerate(chosen):
        kind_type, values = TYPES[kind]
        cells = draw(st.lists(st.none() | values, min_size=n, max_size=n))
        if source in ("sav", "dta"):  # what the packages can be given at all
            if kind == "float64":
                cells = [None if v is None or math.isnan(v) or math.isinf(v) else v for v in cells]
                if source == "dta":  # Stata keeps the doubles from 2**1023 up for its missing values
                    cells = [None if v is None or abs(v) >= 2.0**1023 else v for v in cells]
            if kind == "string":
                cells = ["" if v is None else v.replace("\r", "") for v in cells]
                if source == "sav":
                    cells = [v.rstrip(" ") for v in cells]
            if kind == "timestamp":
                cells = [None if v is None else v.replace(microsecond=0) for v in cells]
        if source == "csv":
            cells = ["" if v is None else v for v in cells]
        out[f"c{i}_{kind}"] = (kind, pa.array(cells, type=kind_type))
    return n, out


def _write_input(folder: Path, source: str, n: int, cols: dict) -> tuple[object, dict]:
    """The input file (or frame) and each kept column as the input holds it (the oracle's "what it was")."""
    answers = pa.array(["yes" if i % 2 else "no" for i in range(n)])
    rowid = pa.array(range(n), type=pa.int64())
    table = pa.table({"answer": answers, "rowid": rowid, **{c: a for c, (_, a) in cols.items()}})
    if source == "csv":
        path = folder / "in.csv"
        with open(path, "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f, lineterminator="\r\n")  # a cell holding a CR is quoted
            w.writerow(table.column_names)
            w.writerows(zip(*(table.column(c).to_pylist() for c in table.column_names)))
        return path, {c: ["" if v is None else str(v) for v in table.column(c).to_pylist()] for c in cols}
    if source in ("parquet", "arrow"):
        path = folder / f"in.{source}"
        if source == "parquet":
            pq.write_table(table, path)
            back = pq.read_table(path)
        else:
            with pa.OSFile(str(path), "wb") as f, pa.ipc.new_file(f, table.schema) as w:
                w.write_table(table)
            back = table
        return path, {c: back.column(c).to_pylist() for c in cols}
    if source == "frame":
        frame = table.to_pandas(types_mapper=pd.ArrowDtype)
        return frame, {c: table.column(c).to_pylist() for c in cols}
    path = folder / f"in.{source}"
    frame = pd.DataFrame({c: table.column(c).to_pylist() for c in table.column_names})
    for c, (kind, _) in cols.items():
        if kind == "timestamp":
            frame[c] = pd.to_datetime(frame[c])
        elif kind == "float64":
            frame[c] = frame[c].astype(float)
    (pyreadstat.write_sav if source == "sav" else pyreadstat.write_dta)(frame, str(path))
    read, _ = (pyreadstat.read_sav if source == "sav" else pyreadstat.read_dta)(str(path))
    return path, {c: [None if _missing(v) else v for v in read[c].tolist()] for c in cols}


def _missing(v: object) -> bool:
    return v is None or v is pd.NaT or (isinstance(v, float) and math.isnan(v))


def _same_float(a: object, b: object) -> bool:
    if _missing(a) and a is None:
        return b is None
    a, b = float(a), float(b)
    return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))


def _parse(kind: str, text: str) -> object:
    """A CSV cell read back as the type it came from, by Python's own parsers (empty: missing)."""
    if text == "":
        return None
    if kind in ("int64", "uint64"):
        return int(text)
    if kind == "bool":
        return {"true": True, "false": False}[text]
    if kind == "float64":
        return float(text)
    if kind == "float32":
        return np.float32(text)
    if kind == "decimal":
        return decimal.Decimal(text)
    if kind == "date":
        return dt.date.fromisoformat(text)
    if kind in ("timestamp", "zoned"):
        return dt.datetime.fromisoformat(text)
    return text


def _may_refuse(kind: str, values: list, out: str, source: str) -> str | None:
    """The words of the refusal the output's format may give for this column, or None when it must hold it."""
    present = [v for v in values if v is not None]
    if out == "csv":
        if kind == "string" and None in values and "" in values:
            return "cannot tell apart"
        return None
    if out in ("parquet", "arrow"):
        return None
    nan = any(isinstance(v, float) and math.isnan(v) for v in present)
    if kind in ("int64", "uint64") and any(abs(v) > 2**53 for v in present):
        return "beyond 2^53"
    if kind in ("float32", "float64") and nan and None in values:
        return "cannot tell apart"
    if kind in ("decimal",):
        return "cannot hold"
    if kind == "zoned":
        return "time zone"
    if kind == "string" and None in values and "" in values:
        return "cannot tell apart"
    if kind == "string" and out == "sav" and any(v != v.rstrip(" ") for v in present):
        return "ends in spaces"
    if kind == "timestamp" and any(v.microsecond for v in present):
        return "would be read back"
    largest = 8.98846567431158e307 if out == "dta" else 1.7976931348623157e308
    if kind in ("float32", "float64") and any(largest <= abs(v) and (out == "dta" or not math.isinf(v))
                                              for v in present):  # Stata: its largest double and up, infinities too
        return "beyond the largest number"
    return None


def _check(kind: str, meant: list, got: list, out: str, source: str) -> None:
    assert len(meant) == len(got)
    for a, b in zip(meant, got):
        if out == "csv":
            if source == "csv" or kind == "string" or isinstance(a, str):  # (an all-missing column a package wrote
                assert b == ("" if a is None else a)                     # as text reads back as text)
                continue
            parsed = _parse(kind, b)
            if a is None:
                assert parsed is None
            elif kind in ("float32", "float64"):
                assert _same_float(a, parsed), (a, b)
            elif kind == "decimal":
                assert parsed == a and parsed.as_tuple() == a.as_tuple(), (a, b)  # the scale too
            elif kind == "zoned":  # the same instant (compared in seconds: PEP 495 makes an aware datetime with
                assert parsed.timestamp() == a.timestamp(), (a, b)  # fold=1 unequal to any other zone's)
            else:
                want = a.to_pydatetime() if isinstance(a, pd.Timestamp) else a
                assert parsed == want and isinstance(parsed, type(want)), (a, b)
        elif out in ("parquet", "arrow"):
            if kind in ("float32", "float64") and a is not None:
                assert _same_float(a, b), (a, b)
            else:
                assert a == b, (a, b)
        else:
            if a is None or (isinstance(a, float) and math.isnan(a)):
                assert _missing(b) or b == "", (a, b)
            elif kind in ("int64", "uint64", "bool", "float32", "float64"):
                assert float(b) == float(a), (a, b)
            elif kind == "timestamp":
                assert pd.Timestamp(b).to_pydatetime() == pd.Timestamp(a).to_pydatetime(), (a, b)
            else:
                assert b == a, (a, b)


def _read_output(path: Path, out: str) -> dict[str, list]:
    if out == "csv":
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.reader(f))
        return {name: [r[i] for r in rows[1:]] for i, name in enumerate(rows[0])}
    if out == "parquet":
        table = pq.read_table(path)
    elif out == "arrow":
        table = pa.ipc.open_file(str(path)).read_all()
    else:
        frame, _ = (pyreadstat.read_sav if out == "sav" else pyreadstat.read_dta)(str(path))
        return {c: frame[c].tolist() for c in frame.columns}
    return {c: table.column(c).to_pylist() for c in table.column_names}


@pytest.mark.parametrize("out", OUTPUTS)
@pytest.mark.parametrize("source", INPUTS)
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_kept_columns_are_kept_or_refused_in_one_line(tmp_path_factory, source, out, data):
    folder = tmp_path_factory.mktemp("kept")
    n, cols = data.draw(columns(source))
    inp, meant = _write_input(folder, source, n, cols)
    (folder / "m.csv").write_text("input,{yes},{no}\nyes,0.75,0.25\nno,0.25,0.75\n")
    target = folder / f"out.{out}"
    refusals = {c: _may_refuse(kind, meant[c], out, source) for c, (kind, _) in cols.items()}
    try:
        randomize(inp, str(folder / "m.csv"), column="answer", keep=["rowid", *cols], out=target)
    except DesignerError as exc:
        message = str(exc)
        assert "\n" not in message
        named = [c for c in cols if f"column {c!r}" in message]
        assert named and refusals[named[0]] and refusals[named[0]] in message, (message, refusals)
        assert not target.exists()
        return
    assert not any(refusals.values()) or all(
        r is None or r == "would be read back" for r in refusals.values()), refusals
    got = _read_output(target, out)
    order = np.argsort([int(float(v)) for v in got["rowid"]])  # rows come out shuffled: put them back
    for c, (kind, _) in cols.items():
        _check(kind, meant[c], [got[c][i] for i in order], out, source)


@pytest.mark.parametrize("ext", ["sav", "dta"])
def test_a_packages_file_keeps_its_labels_formats_and_missing_values(tmp_path, ext):
    """.sav into .sav (and .dta into .dta): value labels, descriptions, display formats and SPSS's user-missing
    ranges kept; dates stay dates, moments moments (they were strings and all-null doubles)."""
    frame = pd.DataFrame({
        "answer": ["yes", "no", "yes", "no"],
        "lab": [1.0, 2.0, 99.0, np.nan],
        "day": [dt.date(2020, 1, 2), None, dt.date(1900, 3, 4), dt.date(1970, 1, 1)],
        "moment": pd.to_datetime(["2020-01-02 03:04:05", None, "1999-12-31 23:59:59", "2000-01-01 00:00:00"]),
        "x": [1.5, np.nan, 2.0**53, -3.25],
    })
    labels = {"lab": {1: "yes", 2: "no", 99: "refused"}}
    path, out = tmp_path / f"in.{ext}", tmp_path / f"out.{ext}"
    if ext == "sav":
        pyreadstat.write_sav(frame, str(path), variable_value_labels=labels, column_labels={"x": "an x"},
                             missing_ranges={"lab": [99]}, variable_format={"x": "F10.3"})
    else:
        pyreadstat.write_dta(frame, str(path), variable_value_labels=labels, column_labels={"x": "an x"})
    (tmp_path / "m.csv").write_text("input,{yes},{no}\nyes,0.75,0.25\nno,0.25,0.75\n")
    randomize(path, str(tmp_path / "m.csv"), column="answer", keep=["lab", "day", "moment", "x"], out=out,
              keep_order=True)
    read = pyreadstat.read_sav if ext == "sav" else pyreadstat.read_dta
    options = {"user_missing": True} if ext == "sav" else {}
    before, meta_in = read(str(path), **options)
    after, meta_out = read(str(out), **options)
    for column in ("lab", "day", "moment", "x"):
        assert [None if _missing(v) else v for v in after[column]] == [None if _missing(v) else v
                                                                         for v in before[column]], column
    assert meta_out.variable_value_labels["lab"] == meta_in.variable_value_labels["lab"]
    assert meta_out.column_names_to_labels["x"] == "an x"
    for column in ("lab", "day", "moment", "x"):
        assert meta_out.original_variable_types[column] == meta_in.original_variable_types[column], column
    if ext == "sav":
        assert meta_out.missing_ranges == meta_in.missing_ranges == {"lab": [{"lo": 99.0, "hi": 99.0}]}
    parquet = tmp_path / "out.parquet"
    randomize(path, str(tmp_path / "m.csv"), column="answer", keep=["lab", "day", "x"], out=parquet,
              keep_order=True)
    table = pq.read_table(parquet)
    assert str(table.schema.field("day").type) == "date32[day]" and table.column("day").to_pylist()[0] == \
        dt.date(2020, 1, 2)
    assert table.column("lab").to_pylist() == ["yes", "no", "refused", None]  # the words designer reads
