"""Every format written from columns: CSV, Parquet, Arrow IPC (Feather), SPSS and Stata (:func:`table_sink`).

A release's writers (:mod:`designer.release.sinks`) build on these; a name whose format designer does not write
(``.xlsx``, a SAS file) is refused before anything is written.
"""

from __future__ import annotations

import io
import os
from typing import TYPE_CHECKING, Any, BinaryIO

from ..exceptions import DataError
from .inputs import ColumnarFile, column_names, dataset_parts, is_arrow, is_columnar, is_stat

if TYPE_CHECKING:
    from .stat_files import StatSink

__all__ = ["WRITTEN", "CsvSink", "ParquetSink", "check_output", "column_meta", "table_sink", "text_writer"]

#: The suffixes of the files designer writes (a name without a suffix is written as CSV).
WRITTEN = (".csv", ".txt", ".parquet", ".pq", ".arrow", ".feather", ".ipc", ".sav", ".zsav", ".dta")


def check_output(path: str) -> None:
    """Refuse, in one line, an output name whose suffix designer does not write (``.xlsx``, ``.tsv``, a SAS
    file): its text would not be what the name says.

    Examples
    --------
    >>> from designer.tables.writers import check_output
    >>> check_output("released.parquet")
    >>> check_output("released.xlsx")
    Traceback (most recent call last):
    ...
    designer.exceptions.DataError: released.xlsx: designer does not write .xlsx files; write .csv, .parquet, ...
    """
    suffix = os.path.splitext(os.path.basename(str(path)).lower())[1]
    if suffix and suffix not in WRITTEN:
        does = "reads this format but does not write it" if is_stat(str(path)) else f"does not write {suffix} files"
        raise DataError(f"{path}: designer {does}; write .csv, .parquet, .arrow, .sav, .zsav or .dta")


def text_writer(binary: BinaryIO) -> io.TextIOWrapper:
    """A UTF-8 text view of a binary file for csv writing (detach it before the file is closed).

    Examples
    --------
    >>> import io
    >>> from designer.tables.writers import text_writer
    >>> binary = io.BytesIO()
    >>> writer = text_writer(binary)
    >>> _ = writer.write("a,b\\n")
    >>> writer.flush()
    >>> _ = writer.detach()
    >>> binary.getvalue()
    b'a,b\\n'
    """
    return io.TextIOWrapper(binary, encoding="utf-8", newline="")


class CsvSink:
    """Rows of columns into a CSV file (the header first), lines ending in LF.

    A cell holding a carriage return is quoted: the csv module quotes only the line end it writes (LF), and a bare
    CR splits the row for every reader that takes CR for a line end (pandas, spreadsheets).

    Examples
    --------
    A cell holding a carriage return is quoted:

    >>> import io
    >>> from designer.tables.writers import CsvSink
    >>> binary = io.BytesIO()
    >>> sink = CsvSink(binary, ["id", "response"])
    >>> sink.write([[1, 2], ["{yes}", "a\\rb"]])
    >>> sink.close()
    >>> binary.getvalue()
    b'id,response\\n1,{yes}\\n2,"a\\rb"\\n'
    """

    def __init__(self, binary: BinaryIO, names: list[str]) -> None:
        import csv

        self.text = text_writer(binary)
        self.writer = csv.writer(self.text, lineterminator="\n")
        self._row = io.StringIO()
        self._crlf = csv.writer(self._row, lineterminator="\r\n")  # quotes CR and LF alike
        self.write([[name] for name in names])

    def write(self, columns: list[Any]) -> None:
        if not any(isinstance(v, str) and "\r" in v for column in columns for v in column):
            self.writer.writerows(zip(*columns))
            return
        for row in zip(*columns):
            self._row.seek(0)
            self._row.truncate()
            self._crlf.writerow(row)
            self.text.write(self._row.getvalue()[:-2] + "\n")

    def close(self) -> None:
        self.text.flush()
        self.text.detach()


class ParquetSink:
    """Chunks of columns into one Parquet file, a row group per chunk (or, with ``arrow``, an Arrow IPC file, a
    record batch per chunk): text columns (``typed=False``, what ``randomize`` writes: the cells as they were
    read; the ``numeric`` ones, numbers in the file they came from, as doubles or, ``integer``, whole numbers), or
    each column's own type inferred
    from the first chunk (``typed=True``: ids as integers, numbers as numbers).

    Examples
    --------
    >>> import os, tempfile
    >>> from designer.tables import inputs, writers
    >>> folder = tempfile.TemporaryDirectory()
    >>> path = os.path.join(folder.name, "answers.parquet")
    >>> with open(path, "wb") as binary:
    ...     sink = writers.table_sink(path, binary, ["id", "response"])
    ...     sink.write([["1", "2"], ["{yes}", "{no}"]])
    ...     sink.close()
    >>> inputs.ColumnarFile(path).read_table().to_pydict()
    {'id': ['1', '2'], 'response': ['{yes}', '{no}']}
    >>> folder.cleanup()
    """

    def __init__(self, binary: BinaryIO, names: list[str], *, typed: bool = False, arrow: bool = False,
                 numeric: frozenset[str] = frozenset(), integer: frozenset[str] = frozenset()) -> None:
        import pyarrow as pa

        self.names, self.typed, self.arrow = names, typed, arrow
        kinds = {name: pa.int64() if name in integer else pa.float64() for name in numeric}
        self.schema = None if typed else pa.schema([(name, kinds.get(name, pa.string())) for name in names])
        self.binary: Any = binary
        self.writer: Any = None

    def write(self, columns: list[Any]) -> None:
        import pyarrow as pa

        if self.schema is None:
            arrays = [pa.array(list(c) if not hasattr(c, "dtype") else c) for c in columns]
            self.schema = pa.schema([(name, a.type) for name, a in zip(self.names, arrays)])
        arrays = [_numbers(c, field.type)
                  if not self.typed and (pa.types.is_floating(field.type) or pa.types.is_integer(field.type))
                  else pa.array(list(c) if not (self.typed and hasattr(c, "dtype")) else c, type=field.type)
                  for c, field in zip(columns, self.schema)]
        if self.writer is None:
            self.writer = self._open(self.schema)
        self.writer.write_table(pa.table(arrays, schema=self.schema))

    def _open(self, schema: Any) -> Any:
        import pyarrow as pa
        import pyarrow.parquet as pq

        return pa.ipc.new_file(self.binary, schema) if self.arrow else pq.ParquetWriter(self.binary, schema)

    def __del__(self) -> None:
        # A write abandoned by an error: its file is closed and discarded (atomic_writer), so the Parquet writer
        # must not finish it when collected ("Exception ignored in ParquetWriter.__del__" on stderr).
        if getattr(self.binary, "closed", False) and getattr(self.writer, "is_open", False):
            self.writer.is_open = False

    def close(self) -> None:
        if self.writer is None:  # no rows: the schema alone
            assert self.schema is not None or self.typed
            import pyarrow as pa

            schema = self.schema or pa.schema([(name, pa.string()) for name in self.names])
            self.writer = self._open(schema)
        self.writer.close()


def column_meta(path: str, columns: list[str]) -> Any:
    """The value labels, descriptions and numeric columns among ``columns`` of a data file, a
    :class:`~.stat_files.ColumnMeta` for a sink that writes them back (:func:`table_sink`): a statistics
    package's file says all three, a Parquet or Arrow file which columns are numbers, a CSV file nothing.

    Examples
    --------
    >>> import os, tempfile
    >>> from designer.tables import inputs, writers
    >>> folder = tempfile.TemporaryDirectory()
    >>> path = os.path.join(folder.name, "answers.parquet")
    >>> with open(path, "wb") as binary:
    ...     sink = writers.table_sink(path, binary, ["id", "response"])
    ...     sink.write([["1", "2"], ["{yes}", "{no}"]])
    ...     sink.close()
    >>> writers.column_meta(path, ["id"]).numeric  # text columns, no labels
    frozenset()
    >>> folder.cleanup()
    """
    from .stat_files import ColumnMeta, StatFile

    if os.path.isdir(path):
        path = dataset_parts(path)[0]
    if is_stat(path):
        return StatFile(path).meta.only(columns)
    if not is_columnar(path):
        return ColumnMeta()
    import pyarrow as pa  # a columnar file's schema (a CSV file is read and written without pyarrow)

    source = ColumnarFile(path)
    schema = source._ipc.schema if source.arrow else source._pq.schema_arrow
    numeric = {name for name, field in zip(source.names, schema)
               if pa.types.is_integer(field.type) or pa.types.is_floating(field.type)}
    integer = {name for name, field in zip(source.names, schema) if pa.types.is_integer(field.type)}
    return ColumnMeta(numeric=frozenset(numeric & set(columns)), integer=frozenset(integer & set(columns)))


def _numbers(column: Any, kind: Any) -> Any:
    """A column of numbers read as text (a Parquet file's numeric column, :func:`parquet_text`) as a pyarrow array of
    ``kind`` (doubles, or whole numbers), empty cells missing."""
    import pandas as pd
    import pyarrow as pa

    values = pd.to_numeric(pd.Series(list(column), dtype=object).replace("", None), errors="coerce")
    if pa.types.is_integer(kind):
        return pa.array(values.astype("Int64"), type=kind)
    return pa.array(values.to_numpy(dtype="float64", na_value=float("nan")), type=kind, from_pandas=True)


def table_sink(path: str, binary: BinaryIO, names: list[str], *, typed: bool = False, meta: Any = None
               ) -> CsvSink | ParquetSink | StatSink:
    """A Parquet sink for a ``.parquet`` / ``.pq`` name, an Arrow IPC one for ``.arrow`` / ``.feather`` / ``.ipc``,
    an SPSS or Stata one for ``.sav`` / ``.zsav`` / ``.dta`` (:class:`~designer.tables.stat_files.StatSink`: the
    value labels, descriptions and numeric columns of ``meta``, a
    :class:`~.stat_files.ColumnMeta` such as :func:`column_meta` of the
    input, kept), else CSV. A SAS or SPSS portable name (read only) is refused, and so are ``names`` a reader
    would refuse (:func:`column_names`: a blank name, two of one name).

    Examples
    --------
    A Parquet file of two text columns, written chunk by chunk (here one):

    >>> import os, tempfile
    >>> from designer.tables import inputs, writers
    >>> folder = tempfile.TemporaryDirectory()
    >>> path = os.path.join(folder.name, "answers.parquet")
    >>> with open(path, "wb") as binary:
    ...     sink = writers.table_sink(path, binary, ["id", "response"])
    ...     sink.write([["1", "2"], ["{yes}", "{no}"]])
    ...     sink.close()
    >>> type(sink).__name__, inputs.ColumnarFile(path).num_rows
    ('ParquetSink', 2)
    >>> folder.cleanup()
    """
    column_names(path, names)
    check_output(path)
    if is_stat(path):
        from .stat_files import WRITERS, StatSink

        if os.path.splitext(path.lower())[1] not in WRITERS:
            raise DataError(f"{path}: designer reads this format but does not write it; write .sav, .zsav, .dta, "
                               ".csv, .parquet or .arrow")
        return StatSink(path, binary, names, meta=meta, typed=typed)
    if is_columnar(path):
        return ParquetSink(binary, names, typed=typed, arrow=is_arrow(path),
                           numeric=frozenset(getattr(meta, "numeric", ())),
                           integer=frozenset(getattr(meta, "integer", ())))
    return CsvSink(binary, names)
