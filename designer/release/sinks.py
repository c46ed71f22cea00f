"""A release's rows written to CSV, Parquet, Arrow, SPSS or Stata, every kept column as it was or refused in one
line where the format cannot hold it (docs/guide/release.md, "Kept columns").

- **Parquet, Arrow**: each kept column in its own type (64-bit and unsigned integers, decimals, dates, timestamps
  with their zone, float32, NaN apart from null, text with its spaces); a column Parquet has no type for is
  refused (write Arrow). A statistics package's labelled column is written as its labels.
- **CSV**: each value as Arrow's text for it, which reads back as the same value of the same type (integers
  digit for digit, floats as their shortest exact text in their own width, ``nan`` for NaN, dates and timestamps
  in ISO 8601, a timestamp with a zone as its instant in UTC with ``Z``, decimals with their scale); a missing
  value is an empty cell, so a text column holding both a missing value and an empty text is refused (a CSV file
  cannot tell them apart), and so are binary columns.
- **SPSS (.sav, .zsav), Stata (.dta)**: numbers as doubles (refused beyond 2^53, which a double cannot hold, for
  a column holding both NaN and a missing value, and beyond the largest value the format stores), dates and
  timestamps as the formats' dates (refused with a time zone), booleans as 0 and 1 labelled ``false`` and
  ``true``, text as text (SPSS drops trailing spaces: refused); decimals, times and binary columns are refused.
  A file of the same package keeps its value labels, formats and SPSS missing values. The written file is read
  back and compared with what was meant, and any difference refused naming the column and the row.

Every sink writes to a path in the release's staging folder (:mod:`designer.release.staging`), never to the
temporary folder.
"""

from __future__ import annotations

import datetime
import math
import os
import sys
from typing import Any

import numpy as np

from ..exceptions import DataError
from ..tables.inputs import is_arrow, is_columnar, is_stat
from ..tables.writers import CsvSink
from .rows import KeptMeta

#: Stata's largest double (larger ones are its missing values).
STATA_LARGEST = 8.98846567431158e307

#: The last time an SPSS or Stata file gives back (their times are doubles, which round a later one past year
#: 9999, where a reader's dates end).
LAST_TIME = datetime.datetime(9999, 12, 31, 23, 59, 59)

#: Largest integer every double holds exactly (and every one below it): SPSS and Stata store numbers as doubles.
EXACT_INTEGERS = 2**53


def _refuse(out: str, column: str, why: str, fix: str = "write CSV, Parquet or Arrow") -> DataError:
    return DataError(f"{out}: column {column!r} {why}; {fix}")


def _decoded(array: Any) -> Any:
    import pyarrow as pa

    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if pa.types.is_dictionary(array.type):
        array = array.dictionary_decode()
    return array


def _labelled_words(array: Any, labels: Any) -> Any:
    """A labelled column's codes as its words (what designer reads; a user-missing code's label too), a pyarrow
    string array."""
    import pyarrow as pa

    from .rows import _labelled_text

    words = _labelled_text(array, labels, [])
    nulls = array.is_null().to_numpy(zero_copy_only=False)
    return pa.array([None if n else w for w, n in zip(words.tolist(), nulls)], type=pa.string())


def _both_missing_and_empty(array: Any) -> bool:
    import pyarrow as pa
    import pyarrow.compute as pc

    if not (pa.types.is_string(array.type) or pa.types.is_large_string(array.type)) or array.null_count == 0:
        return False
    return bool(pc.any(pc.equal(array, "")).as_py())


def order_free(table: Any) -> Any:
    """``table`` with nothing in its encoding that could carry the input's order (issue 56): a dictionary column
    as its values (its dictionary, built in the input's order of first appearance, would give each row's input
    position; Parquet builds its own from the released rows), no schema or field metadata (a pandas index, a
    writer's notes). Row groups and statistics are written from the released rows.

    Examples
    --------
    >>> import pyarrow as pa
    >>> from designer.release.sinks import order_free
    >>> table = pa.table({"city": pa.array(["b", "a", "b"]).dictionary_encode()}).replace_schema_metadata({"k": "v"})
    >>> released = order_free(table)
    >>> released.schema.field("city").type, released.schema.metadata, released.column("city").to_pylist()
    (DataType(string), None, ['b', 'a', 'b'])
    """
    import pyarrow as pa

    columns, fields = [], []
    for field, column in zip(table.schema, table.columns):
        if pa.types.is_dictionary(field.type):
            column = _decoded(column)
        columns.append(column)
        fields.append(pa.field(field.name, column.type, field.nullable))
    return pa.Table.from_arrays(columns, schema=pa.schema(fields))


def csv_text(out: str, name: str, array: Any, meta: KeptMeta) -> list[str]:
    """One kept column as CSV cells: Arrow's text of each value, a missing value empty."""
    import pyarrow as pa
    import pyarrow.compute as pc

    array = _decoded(array)
    labels = meta.value_labels.get(name)
    if labels:
        array = _labelled_words(array, labels)
    kind = array.type
    if pa.types.is_binary(kind) or pa.types.is_large_binary(kind) or pa.types.is_fixed_size_binary(kind):
        raise _refuse(out, name, f"holds bytes ({kind}), which a CSV file cannot hold as text",
                      "write Parquet or Arrow")
    if _both_missing_and_empty(array):
        raise _refuse(out, name, "holds both missing values and empty text, which a CSV file cannot tell apart",
                      "write Parquet or Arrow")
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        text = array
    elif pa.types.is_timestamp(kind) and kind.tz is not None:
        # the instant in UTC, exactly (Arrow writes a zone's offset in whole minutes, and historical offsets such as
        # Paris's +0:09:21 have seconds); the zone's name has no place in a CSV cell
        utc = array.cast(pa.timestamp(kind.unit)).cast(pa.string())
        text = pc.binary_join_element_wise(utc, pa.scalar("Z"), "")
    else:
        try:
            text = array.cast(pa.string())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            raise _refuse(out, name, f"holds {kind}, which designer cannot write as text",
                          "write Parquet or Arrow") from None
    return ["" if v is None else v for v in text.to_pylist()]  # pc.fill_null's scalar would import pandas


class ReleaseSink:
    """Tables of released rows (the kept columns as stored, then the randomized ones as text) into one file at
    ``path`` (the staged file), its format given by ``name`` (the output's name)."""

    def __init__(self, name: str, path: str, names: list[str], meta: KeptMeta, kept: list[str]) -> None:
        from ..tables.inputs import column_names
        from ..tables.writers import check_output

        column_names(name, names)
        check_output(name)
        self.name, self.path, self.names, self.meta, self.kept = name, path, list(names), meta, set(kept)
        self.rows = 0
        self._file: Any = None
        self._writer: Any = None
        self._schema: Any = None
        self._held: list[Any] = []
        if is_stat(name):
            self.kind = "stat"
            _check_stat_names(name, names)
        elif is_columnar(name):
            self.kind = "arrow" if is_arrow(name) else "parquet"
        else:
            self.kind = "csv"
            self._file = open(path, "xb")
            self._csv = CsvSink(self._file, self.names)

    def write(self, table: Any) -> None:
        """Append ``table`` (columns in the order of ``names``), re-encoded from the released order
        (:func:`order_free`)."""
        table = order_free(table)
        self.rows += table.num_rows
        if self.kind == "csv":
            self._csv.write([csv_text(self.name, n, table.column(n), self.meta) if n in self.kept
                             else table.column(n).to_pylist() for n in self.names])
        elif self.kind == "stat":
            self._held.append(table)
        else:
            self._write_arrow(table)

    def _write_arrow(self, table: Any) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        columns = []
        for n in self.names:
            array = table.column(n)
            labels = self.meta.value_labels.get(n) if n in self.kept else None
            if labels:
                array = _labelled_words(_decoded(array), labels)
            columns.append(array)
        table = pa.table(columns, names=self.names)
        if self._schema is None:
            self._schema = table.schema
            self._file = open(self.path, "xb")
            try:
                self._writer = pa.ipc.new_file(self._file, self._schema) if self.kind == "arrow" else \
                    pq.ParquetWriter(self._file, self._schema)
            except (pa.ArrowNotImplementedError, pa.ArrowInvalid, TypeError) as exc:
                raise self._unwritable(exc) from None
        elif table.schema != self._schema:
            try:
                table = table.cast(self._schema)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, ValueError):
                for field, other in zip(self._schema, table.schema):
                    if field.type != other.type:
                        raise _refuse(self.name, field.name, f"is {other.type} in some rows and {field.type} in "
                                      "others (parts of different types)", "give the parts one type") from None
                raise
        try:
            self._writer.write_table(table)
        except (pa.ArrowNotImplementedError, pa.ArrowInvalid) as exc:
            raise self._unwritable(exc) from None

    def _unwritable(self, exc: BaseException) -> DataError:
        import pyarrow as pa
        import pyarrow.parquet as pq

        for field in self._schema:
            try:
                pq.ParquetWriter(pa.BufferOutputStream(), pa.schema([field])).close()
            except (pa.ArrowNotImplementedError, pa.ArrowInvalid, TypeError):
                return _refuse(self.name, field.name, f"holds {field.type}, which Parquet has no type for",
                               "write Arrow (.arrow) or CSV")
        return DataError(f"{self.name}: cannot be written as {self.kind} ({' '.join(str(exc).split())[:200]})")

    def close(self) -> None:
        """Finish the file (an SPSS or Stata file is written here, from every row, and read back)."""
        if self.kind == "csv":
            self._csv.close()
            self._file.close()
        elif self.kind == "stat":
            self._write_stat()
        else:
            if self._writer is None:
                import pyarrow as pa

                self._write_arrow(pa.table({n: pa.array([], type=pa.string()) for n in self.names}))
            self._writer.close()
            self._file.close()

    def abandon(self) -> None:
        """Close the file without finishing it (the staging folder is discarded)."""
        if self._writer is not None:
            try:
                self._writer.is_open = False  # a Parquet writer must not finish a file being thrown away
            except AttributeError:
                pass
        if self._file is not None:
            self._file.close()

    def _write_stat(self) -> None:
        import pandas as pd
        import pyarrow as pa

        from ..tables.stat_files import WRITERS, _pyreadstat

        suffix = os.path.splitext(self.name.lower())[1]
        if suffix not in WRITERS:
            raise DataError(f"{self.name}: designer reads this format but does not write it; write .sav, .zsav, "
                            ".dta, .csv, .parquet or .arrow")
        package = WRITERS[suffix]
        table = pa.concat_tables(self._held) if self._held else pa.table(
            {n: pa.array([], type=pa.string()) for n in self.names})
        same = self.meta.kind == package
        data, labels, formats = {}, {}, {}
        for n in self.names:
            array = _decoded(table.column(n))
            if n in self.kept:
                data[n], kept_labels = stat_column(self.name, n, array, self.meta, package)
                if kept_labels:
                    labels[n] = kept_labels
                if same and n in self.meta.formats:
                    formats[n] = self.meta.formats[n]
            else:
                data[n] = pd.Series(array.to_pylist(), dtype=object)
        frame = pd.DataFrame(data, columns=self.names)
        descriptions = {n: self.meta.column_labels[n] for n in self.names if n in self.meta.column_labels}
        reader = _pyreadstat(self.name)
        try:
            if package == "SPSS":
                missing = {n: [dict(r) if isinstance(r, dict) else r for r in v]
                           for n, v in self.meta.missing_ranges.items() if same and n in self.kept}
                reader.write_sav(frame, self.path, compress=suffix == ".zsav", variable_value_labels=labels or None,
                                 column_labels=descriptions or None, missing_ranges=missing or None,
                                 variable_format=formats or None,
                                 variable_measure={n: m for n, m in self.meta.measures.items()
                                                   if same and n in self.kept} or None)
            else:
                reader.write_dta(frame, self.path, variable_value_labels=labels or None,
                                 column_labels=descriptions or None, variable_format=formats or None)
        except Exception as exc:  # pyreadstat's refusal of a value or a format the file cannot hold
            detail = " ".join(str(exc).split())[:200] or type(exc).__name__
            raise DataError(f"{self.name}: cannot be written as a {package} file ({detail}); write CSV or "
                            "Parquet") from None
        _read_back(self.name, self.path, frame, [n for n in self.names if n in self.kept], package)


def _check_stat_names(name: str, names: list[str]) -> None:
    from ..tables.stat_files import _NAMES, _SPSS_RESERVED, WRITERS

    package = WRITERS.get(os.path.splitext(name.lower())[1])
    if package is None:
        raise DataError(f"{name}: designer reads this format but does not write it; write .sav, .zsav, .dta, .csv, "
                        ".parquet or .arrow")
    for column in names:
        if not _NAMES[package].fullmatch(column) or (package == "SPSS" and column.upper() in _SPSS_RESERVED):
            rule = ("a letter or @#$ first, then letters, digits, _.@#$, at most 64" if package == "SPSS" else
                    "a letter or _ first, then letters, digits and _, at most 32")
            raise DataError(f"{name}: {package} cannot name a column {column!r} ({rule}); rename it in the input, "
                            "or write CSV or Parquet")


def stat_column(out: str, name: str, array: Any, meta: KeptMeta, package: str) -> tuple[Any, dict[Any, str] | None]:
    """One kept column as pyreadstat writes it to ``package`` (``SPSS`` or ``Stata``), and the value labels it
    keeps; refused in one line where the format cannot hold it."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.compute as pc

    kind = array.type
    labels = meta.value_labels.get(name)
    if pa.types.is_null(kind):  # a column of missing values only: numbers, all missing
        return pd.Series([math.nan] * len(array), dtype=float), None
    if labels and (pa.types.is_floating(kind) or pa.types.is_integer(kind)):
        codes = array.cast(pa.float64()).to_numpy(zero_copy_only=False)
        whole = all(float(c).is_integer() for c in labels)
        if package == "Stata" and not whole:
            raise _refuse(out, name, "has value labels on codes that are not whole numbers, which Stata cannot "
                          "label", "write .sav, CSV or Parquet")
        return pd.Series(codes, dtype=float), {(int(c) if whole else c): w for c, w in labels.items()}
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        if _both_missing_and_empty(array):
            raise _refuse(out, name, f"holds both missing values and empty text, which {package} cannot tell apart")
        values = pc.fill_null(array, "").to_pylist()
        if package == "SPSS":
            spaced = next((i for i, v in enumerate(values) if v != v.rstrip(" ")), None)
            if spaced is not None:
                raise _refuse(out, name, f"row {spaced + 1}: {values[spaced]!r} ends in spaces, which SPSS drops")
        return pd.Series(values, dtype=object), None
    if pa.types.is_boolean(kind):
        values = [math.nan if v is None else float(v) for v in array.to_pylist()]
        return pd.Series(values, dtype=float), {0: "false", 1: "true"}
    if pa.types.is_integer(kind):
        ints = array.to_pylist()
        bad = next((v for v in ints if v is not None and abs(v) > EXACT_INTEGERS), None)
        if bad is not None:
            raise _refuse(out, name, f"holds {bad}, beyond 2^53: {package} stores numbers as doubles, which cannot "
                          "hold it")
        values = [math.nan if v is None else float(v) for v in ints]
        return pd.Series(values, dtype=float), None
    if pa.types.is_floating(kind):
        nan = bool(pc.any(pc.is_nan(array)).as_py()) if len(array) and not pa.types.is_float16(kind) else False
        if nan and array.null_count:
            raise _refuse(out, name, f"holds both NaN and missing values, which {package} cannot tell apart")
        values = array.cast(pa.float64()).to_numpy(zero_copy_only=False)
        finite = values[~np.isnan(values)]
        reserved = finite[np.abs(finite) >= (STATA_LARGEST if package == "Stata" else sys.float_info.max)]
        if package == "SPSS":
            reserved = reserved[np.isfinite(reserved)]  # SPSS holds infinities; its missing value is -max
        if reserved.size:
            raise _refuse(out, name, f"holds {reserved[0]:g}, beyond the largest number {package} stores as a "
                          "value")
        return pd.Series(values, dtype=float), None
    if pa.types.is_date(kind):
        return pd.Series(array.cast(pa.date32()).to_pylist(), dtype=object), None
    if pa.types.is_timestamp(kind):
        if kind.tz is not None:
            raise _refuse(out, name, f"holds timestamps with a time zone ({kind.tz}), which {package} has no place "
                          "for", "write CSV, Parquet or Arrow, or convert it to local times first")
        last = pc.max(array).as_py()
        if last is not None and last > LAST_TIME:
            raise _refuse(out, name, f"holds {last}, past the last time a {package} file gives back ({LAST_TIME})")
        return pd.Series(array.to_pandas(), dtype=f"datetime64[{kind.unit}]"), None
    raise _refuse(out, name, f"holds {kind}, which {package} cannot hold")


def _same(a: Any, b: Any) -> bool:
    import datetime

    import pandas as pd

    missing_a = a is None or (isinstance(a, float) and math.isnan(a)) or a is pd.NaT
    missing_b = b is None or (isinstance(b, float) and math.isnan(b)) or b is pd.NaT
    if missing_a or missing_b:
        return (missing_a and missing_b) or (missing_a and b == "") or (missing_b and a == "")
    if isinstance(a, pd.Timestamp):
        a = a.to_pydatetime() if a.nanosecond == 0 else a
    if isinstance(b, pd.Timestamp):
        b = b.to_pydatetime() if b.nanosecond == 0 else b
    if isinstance(a, datetime.datetime) and isinstance(b, datetime.date) and not isinstance(b, datetime.datetime):
        return a == datetime.datetime.combine(b, datetime.time())
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


def _read_back(out: str, path: str, frame: Any, kept: list[str], package: str) -> None:
    """Read the written file and refuse it when a kept column does not read back as it was meant."""
    from ..tables.stat_files import _pyreadstat

    reader = _pyreadstat(out)
    if not kept:
        return
    try:
        if package == "SPSS":
            back, _ = reader.read_sav(path, user_missing=True, usecols=kept)
        else:
            back, _ = reader.read_dta(path, usecols=kept)
    except (OverflowError, ValueError) as exc:  # a value the file holds that its reader cannot give back
        raise DataError(f"{out}: a kept column cannot be read back from the {package} file "
                        f"({' '.join(str(exc).split())[:160]}); write CSV, Parquet or Arrow") from None
    for name in kept:
        meant = frame[name].tolist()
        got = back[name].tolist()
        for i, (a, b) in enumerate(zip(meant, got)):
            if not _same(a, b):
                raise _refuse(out, name, f"row {i + 1}: {a!r} would be read back from the {package} file as {b!r}",
                              "write CSV, Parquet or Arrow, where it is kept as it is")


def open_sink(name: str, path: str, names: list[str], meta: KeptMeta, kept: list[str]) -> ReleaseSink:
    """A :class:`ReleaseSink` writing the output ``name``'s format to the staged ``path``."""
    return ReleaseSink(name, path, names, meta, kept)

