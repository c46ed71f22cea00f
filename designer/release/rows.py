"""The rows of a release's input, read once, in chunks: the columns to randomize (and the stratum column) as the
text every reader of designer sees, and the columns written out as they are stored (docs/theory.md section 7.8).

A kept column is carried as an Arrow array of the file's own type: a CSV cell's text exactly as written (spaces
kept), a Parquet or Arrow column as stored (64-bit integers, unsigned ones, decimals, dates, timestamps, float32,
NaN apart from null), a statistics package's column as its codes, dates and strings (with its value labels, formats
and SPSS missing values in :class:`KeptMeta`), a DataFrame's column through ``pyarrow``. A CSV row with more or
fewer cells than the header is refused naming its line; a pipe or a FIFO (read once, or never) is refused before
it is opened.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from ..exceptions import DataError
from ..tables.csv_text import csv_tables
from ..tables.inputs import (
    CHUNK_ROWS,
    ColumnarFile,
    dataset_parts,
    is_columnar,
    is_stat,
    parquet_text,
    regular_file,
    sniff,
    stripped,
)
from ..tables.stat_files import ColumnMeta, StatFile


class Chunk(NamedTuple):
    """Rows of the input: the file line of the first (the header is line 1), the text columns (stripped text, as
    :func:`designer.tables.inputs.read_chunks` reads them), the kept columns as stored, and (a DataFrame)
    the rows' positions in the frame."""

    line: int
    text: dict[str, NDArray[np.object_]]
    kept: Any
    positions: NDArray[np.int64] | None = None

    @property
    def rows(self) -> int:
        return int(self.kept.num_rows)


@dataclasses.dataclass(frozen=True)
class KeptMeta(ColumnMeta):
    """What an input says about its kept columns beyond their values: value labels and descriptions
    (:class:`~designer.tables.stat_files.ColumnMeta`), and, from a statistics package's file, its kind
    (``SPSS``, ``Stata``, ``SAS``), the display formats (``F8.2``, ``DATE11``, ``%td``) and SPSS's user-missing
    values, written back to a file of the same kind."""

    kind: str = ""
    formats: Mapping[str, str] = dataclasses.field(default_factory=dict)
    missing_ranges: Mapping[str, list[Any]] = dataclasses.field(default_factory=dict)
    measures: Mapping[str, str] = dataclasses.field(default_factory=dict)

    def only(self, columns: list[str]) -> KeptMeta:
        keep = set(columns)
        return dataclasses.replace(
            self, value_labels={c: v for c, v in self.value_labels.items() if c in keep},
            column_labels={c: v for c, v in self.column_labels.items() if c in keep},
            numeric=self.numeric & keep, integer=self.integer & keep,
            formats={c: v for c, v in self.formats.items() if c in keep},
            missing_ranges={c: v for c, v in self.missing_ranges.items() if c in keep},
            measures={c: v for c, v in self.measures.items() if c in keep})


def _is_date_format(fmt: str) -> bool:
    """Whether a Stata display format is a date's (``%td``, ``%d``): pandas reads those as timestamps at
    midnight. (pyreadstat reads SPSS's date formats as dates already.)"""
    f = fmt.lower()
    return f.startswith(("%td", "%d"))


class RawStatFile(StatFile):
    """A statistics package's file read with its columns as stored: a labelled column's codes (its labels in
    :attr:`meta`), dates as dates, SPSS's user-missing codes as themselves (their ranges in :attr:`meta`)."""

    def _metadata(self) -> tuple[list[str], int | None, ColumnMeta]:
        names, rows, base = super()._metadata()
        _, meta = self._call(metadataonly=True)
        ranges = {}
        for column, spans in (getattr(meta, "missing_ranges", None) or {}).items():
            ranges[str(column)] = [{"lo": s["lo"], "hi": s["hi"]} for s in spans]
        for column, values in (getattr(meta, "missing_user_values", None) or {}).items():
            ranges.setdefault(str(column), []).extend(values)
        return names, rows, KeptMeta(
            value_labels=base.value_labels, column_labels=base.column_labels, numeric=base.numeric,
            kind=self.kind.split()[0], formats={str(c): str(f) for c, f in
                                                 (meta.original_variable_types or {}).items()},
            missing_ranges=ranges, measures={str(c): str(m) for c, m in (meta.variable_measure or {}).items()
                                             if m and m != "unknown"})

    def _call(self, **kwargs: Any) -> Any:
        if os.path.splitext(self.path.lower())[1] in (".sav", ".zsav"):
            kwargs.setdefault("user_missing", True)
        return super()._call(**kwargs)

    def _batch(self, frame: Any) -> Any:
        import pyarrow as pa

        arrays = []
        formats = getattr(self.meta, "formats", {})
        for name in frame.columns:
            column = frame[name]
            if column.dtype == object:
                values = [None if v is None or (isinstance(v, float) and math.isnan(v)) else v
                          for v in column.tolist()]
                try:
                    array = pa.array(values)
                except (pa.ArrowInvalid, pa.ArrowTypeError):
                    array = pa.array([None if v is None else str(v) for v in values], type=pa.string())
            else:
                array = pa.Array.from_pandas(column)
            if pa.types.is_timestamp(array.type) and _is_date_format(formats.get(str(name), "")):
                array = array.cast(pa.date32())
            arrays.append(array)
        return pa.RecordBatch.from_arrays(arrays, names=[str(c) for c in frame.columns])


def _labelled_text(array: Any, labels: Mapping[float, str], missing: list[Any]) -> NDArray[np.object_]:
    """A labelled column's codes as the words designer reads (its labels; a user-missing code as missing)."""
    import pyarrow as pa

    from ..tables.stat_files import _labelled

    if pa.types.is_floating(array.type) or pa.types.is_integer(array.type):
        codes = array.cast(pa.float64()).to_numpy(zero_copy_only=False)
        codes = np.where(_user_missing(codes, missing), np.nan, codes)
        out = _labelled(codes, labels)
    else:
        out = np.array([None if v is None else labels.get(_as_float(v), str(v)) for v in array.to_pylist()],
                       dtype=object)
    return np.array(["" if v is None else str(v).strip() for v in out], dtype=object)


def _as_float(v: Any) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def _user_missing(codes: NDArray[np.float64], missing: list[Any]) -> NDArray[np.bool_]:
    out = np.zeros(codes.shape, dtype=bool)
    for spec in missing:
        if isinstance(spec, dict):
            out |= (codes >= float(spec["lo"])) & (codes <= float(spec["hi"]))
        elif isinstance(spec, (int, float)):
            out |= codes == float(spec)
    return out


class ReleaseInput:
    """The input of a release: a CSV, Parquet, Arrow, SPSS, Stata or SAS file, a Parquet dataset folder, or a
    DataFrame.

    Parameters
    ----------
    data : str or pandas.DataFrame
    name : str
        How messages name it (the path, or "the DataFrame given").
    text : list of str
        The columns read as text (the answers to randomize, the stratum column).
    kept : list of str
        The columns written out, as they are stored.
    """

    def __init__(self, data: Any, name: str, text: list[str], kept: list[str]) -> None:
        self.data, self.name = data, name
        self.text, self.kept = list(dict.fromkeys(text)), list(dict.fromkeys(kept))
        self.columns = list(dict.fromkeys([*self.text, *self.kept]))
        self.frame = None if isinstance(data, str) else data
        self.meta: KeptMeta = KeptMeta()
        if self.frame is not None:
            header = [str(c) for c in self.frame.columns]
            for col in self.columns:
                if col not in header:
                    raise DataError(f"{name}: no column {col!r} (columns: {', '.join(header)})")
                if header.count(col) > 1:
                    raise DataError(f"{name}: two columns are named {col!r}; rename one of them")
            if len(self.frame) == 0:
                raise DataError(f"{name}: a table without rows")
            return
        path = data
        if os.path.isdir(path):
            self.parts = dataset_parts(path)
            return
        if is_stat(path):
            regular_file(path)  # pyreadstat would wait on a FIFO; ColumnarFile and sniff refuse one themselves
            self._stat = RawStatFile(path)
            header = list(self._stat.names)
            self.meta = self._stat.meta.only(self.kept)
        elif is_columnar(path):
            header = ColumnarFile(path).names
        else:
            header, self._sep = sniff(path)
        for col in self.columns:
            if col not in header:
                raise DataError(f"{path}: no column {col!r}; the columns are {header}")
        self._header = header

    @property
    def is_folder(self) -> bool:
        return self.frame is None and os.path.isdir(self.data)

    def rows_bound(self) -> int:
        """At least the number of rows (read from the files' metadata, or the line breaks of a CSV file)."""
        if self.frame is not None:
            return len(self.frame)
        if self.is_folder:
            return sum(self.part_rows(p) for p in self.parts)
        return self.part_rows(self.data)

    def part_rows(self, path: str) -> int:
        if is_stat(path):
            rows = StatFile(path).num_rows if not hasattr(self, "_stat") else self._stat.num_rows
            return int(rows) if rows is not None else os.path.getsize(path) // 8 + 1
        if is_columnar(path):
            rows = ColumnarFile(path).num_rows
            return int(rows) if rows is not None else os.path.getsize(path) // 8 + 1
        lf = cr = 1
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 22), b""):
                lf, cr = lf + block.count(b"\n"), cr + block.count(b"\r")
        return max(lf, cr)  # line ends of either kind: at least the rows

    def chunks(self, chunk_rows: int = CHUNK_ROWS) -> Iterator[Chunk]:
        """The rows, at most ``chunk_rows`` a chunk."""
        if self.frame is not None:
            yield from self._frame_chunks(chunk_rows)
            return
        if self.is_folder:
            before = 0
            for part in self.parts:
                seen = 0
                for chunk in self._columnar_chunks(part, chunk_rows):
                    yield chunk._replace(line=chunk.line + before)
                    seen += chunk.rows
                before += seen
            return
        if hasattr(self, "_stat") or is_columnar(self.data):
            yield from self._columnar_chunks(self.data, chunk_rows)
            return
        yield from self._csv_chunks(chunk_rows)

    def part_chunks(self, part: str, chunk_rows: int, first_line: int) -> Iterator[Chunk]:
        """The rows of one part of a dataset folder (its first row at file line ``first_line``)."""
        for chunk in self._columnar_chunks(part, chunk_rows):
            yield chunk._replace(line=chunk.line + first_line - 2)

    def _frame_chunks(self, chunk_rows: int) -> Iterator[Chunk]:
        import pyarrow as pa

        from ..estimation.survey_reading import _cell

        frame = self.frame
        assert frame is not None
        by_name = {str(c): c for c in frame.columns}
        for start in range(0, len(frame), chunk_rows):
            part = frame.iloc[start:start + chunk_rows]
            text = {c: np.array([_cell(v) for v in part[by_name[c]].tolist()], dtype=object) for c in self.text}
            arrays = []
            for c in self.kept:
                try:
                    arrays.append(pa.Array.from_pandas(part[by_name[c]]))
                except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as exc:
                    raise DataError(f"{self.name}: column {c!r} cannot be written to a file as it is "
                                    f"({' '.join(str(exc).split())[:160]}); give it one type") from None
            kept = pa.table(arrays, names=self.kept) if self.kept else _no_columns(len(part))
            yield Chunk(start + 2, text, kept, np.arange(start, start + len(part), dtype=np.int64))

    def _columnar_chunks(self, path: str, chunk_rows: int) -> Iterator[Chunk]:
        import pyarrow as pa

        if path == self.data and hasattr(self, "_stat"):
            batches = self._stat.iter_batches(chunk_rows, self.columns)
            meta: Any = self._stat.meta
        else:
            source = ColumnarFile(path)
            for col in self.columns:
                if col not in source.names:
                    raise DataError(f"{path}: no column {col!r}; the columns are {source.names}")
            batches, meta = source.iter_batches(chunk_rows, self.columns), ColumnMeta()
        line, seen = 2, 0
        for batch in batches:
            text = {}
            for c in self.text:
                column = batch.column(batch.schema.get_field_index(c))
                labels = meta.value_labels.get(c)
                if labels:
                    text[c] = _labelled_text(column, labels, getattr(meta, "missing_ranges", {}).get(c, []))
                else:
                    text[c] = np.array(parquet_text(column), dtype=object)
            kept = pa.Table.from_batches([batch.select(self.kept)]) if self.kept else _no_columns(batch.num_rows)
            yield Chunk(line, text, kept)
            line += batch.num_rows
            seen += batch.num_rows
        if seen == 0:
            raise DataError(f"{path}: a schema but no rows")

    def _csv_chunks(self, chunk_rows: int) -> Iterator[Chunk]:
        for line, table in csv_tables(self.data, self.columns, chunk_rows, header=self._header, sep=self._sep):
            text = {c: stripped(table.column(c)) for c in self.text}
            kept = table.select(self.kept) if self.kept else _no_columns(table.num_rows)
            yield Chunk(line, text, kept)


def _no_columns(n: int) -> Any:
    """A table of ``n`` rows and no columns."""
    import pyarrow as pa

    return pa.table({"_": pa.nulls(n)}).drop_columns(["_"])
