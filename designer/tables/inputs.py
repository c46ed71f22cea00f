"""Every source a command reads, one stream of Arrow record batches, one set of rules, errors and limits.

A source is a CSV or TSV file (:mod:`designer.tables.csv_text`, designer's one CSV reader), a Parquet file or a
folder of Parquet parts, an Arrow IPC (Feather) file, an SPSS, Stata or SAS file (:mod:`designer.tables.stat_files`,
through pyreadstat), or a table in memory. Only regular files and folders are read (a FIFO or a device is refused
before it is opened), a folder at most :data:`MAX_DEPTH` deep. :func:`read_chunks` gives the named columns as the
text every command reads (each cell stripped, a missing value empty); the kept columns of a release are read as
stored (:mod:`designer.release.rows`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ..exceptions import DataError
from .csv_text import SEPARATORS, column_names, csv_tables, is_qualtrics_row, regular_file, sniff, stripped

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    from numpy.typing import NDArray

__all__ = ["ARROW_SUFFIXES", "CHUNK_ROWS", "MAX_DEPTH", "SEPARATORS", "STAT_SUFFIXES", "ColumnarFile",
           "column_names", "dataset_parts", "is_arrow", "is_columnar", "is_parquet", "is_qualtrics_export",
           "is_stat", "numbers", "parquet_answers", "parquet_text", "read_chunks", "regular_file", "sniff", "stripped"]

#: How deep a dataset folder's parts may lie below it.
MAX_DEPTH = 16

#: Respondents per chunk (about 100 MB of strings at most for a few short columns).
CHUNK_ROWS = 500_000

def is_qualtrics_export(frame: pd.DataFrame) -> bool:
    """Whether a table's first two rows are a Qualtrics CSV export's extra header rows (question texts, then
    ``{"ImportId": ...}`` in every non-empty cell of the second).

    Examples
    --------
    >>> import pandas as pd
    >>> from designer.tables.inputs import is_qualtrics_export
    >>> is_qualtrics_export(pd.DataFrame({"Q1": ["Have you ever cheated?", '{"ImportId":"QID1"}', "yes"]}))
    True
    """
    return len(frame) >= 2 and is_qualtrics_row(frame.iloc[1].tolist())


def parquet_text(column: Any) -> list[str]:
    """An Arrow column as the text a CSV cell would hold: Arrow's own cast to string (integers as ``1``, not
    through a float), nulls empty, surrounding space stripped.

    Examples
    --------
    >>> import pyarrow as pa
    >>> from designer.tables.inputs import parquet_text
    >>> parquet_text(pa.array([1, None, 3]))  # integers as a CSV cell holds them, a null empty
    ['1', '', '3']
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    try:
        text = column.cast(pa.string())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return ["" if v is None else str(v).strip() for v in column.to_pylist()]
    return list(pc.fill_null(pc.utf8_trim_whitespace(text), "").to_pylist())


def parquet_answers(column: Any) -> Any:
    """An Arrow column of answers as an object array of :func:`parquet_text`'s text, ``None`` for a null or empty
    cell (a missing answer), in Arrow's own loops.

    Examples
    --------
    >>> import pyarrow as pa
    >>> from designer.tables.inputs import parquet_answers
    >>> parquet_answers(pa.array(["{yes}", None, ""])).tolist()  # a null or empty cell: a missing answer
    ['{yes}', None, None]
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    try:
        text = pc.utf8_trim_whitespace(column.cast(pa.string()))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        import numpy

        return numpy.array([v or None for v in parquet_text(column)], dtype=object)
    return pc.if_else(pc.equal(text, ""), pa.scalar(None, pa.string()), text).to_numpy(zero_copy_only=False)


def is_parquet(path: str) -> bool:
    """Whether ``path`` names a Parquet file (by its extension, ``.parquet`` or ``.pq``).

    Examples
    --------
    >>> from designer.tables.inputs import is_parquet
    >>> is_parquet("answers.parquet"), is_parquet("answers.pq"), is_parquet("answers.csv")
    (True, True, False)
    """
    return str(path).lower().endswith((".parquet", ".pq"))


#: Extensions of Arrow IPC files (Feather version 2 is the same format).
ARROW_SUFFIXES = (".arrow", ".feather", ".ipc")


def is_arrow(path: str) -> bool:
    """Whether ``path`` names an Arrow IPC (Feather) file, by its extension.

    Examples
    --------
    >>> from designer.tables.inputs import is_arrow
    >>> is_arrow("answers.feather"), is_arrow("answers.parquet")
    (True, False)
    """
    return str(path).lower().endswith(ARROW_SUFFIXES)


#: Extensions of the statistics packages' files read through pyreadstat (:mod:`designer.tables.stat_files`).
STAT_SUFFIXES = (".sav", ".zsav", ".por", ".dta", ".sas7bdat", ".xpt")


def is_stat(path: str) -> bool:
    """Whether ``path`` names an SPSS, Stata or SAS file, by its extension.

    Examples
    --------
    >>> from designer.tables.inputs import is_stat
    >>> is_stat("survey.sav"), is_stat("survey.dta"), is_stat("survey.csv")
    (True, True, False)
    """
    return str(path).lower().endswith(STAT_SUFFIXES)


def is_columnar(path: str) -> bool:
    """Whether ``path`` names a Parquet, an Arrow IPC or a statistics package's file: read in record batches
    (:class:`ColumnarFile`), written with a schema.

    Examples
    --------
    >>> from designer.tables.inputs import is_columnar
    >>> is_columnar("answers.parquet"), is_columnar("survey.sav"), is_columnar("answers.csv")
    (True, True, False)
    """
    return is_parquet(path) or is_arrow(path) or is_stat(path)


class ColumnarFile:
    """A Parquet, Arrow IPC (Feather), SPSS, Stata or SAS file behind one reader: its column ``names`` (stripped,
    checked by :func:`column_names`), ``num_rows`` (``None`` when the file does not say), record batches of some
    columns, or the whole table, the columns named as in ``names``.

    A statistics package's file (:mod:`designer.tables.stat_files`) has its value labels applied: a labelled
    column's codes are read as their labels, the words the mechanisms use.

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
    >>> columnar = inputs.ColumnarFile(path)
    >>> columnar.names, columnar.num_rows, columnar.arrow
    (['id', 'response'], 2, False)
    >>> folder.cleanup()
    """

    def __init__(self, path: str) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        from .._internal.io import opening_errors

        regular_file(path)
        self.path, self.arrow, self._stat = path, is_arrow(path), None
        if is_stat(path):
            from .stat_files import StatFile

            self._stat = StatFile(path)
            raw = list(self._stat.names)
            self.num_rows: int | None = self._stat.num_rows
        else:
            kind = "Arrow IPC (Feather)" if self.arrow else "Parquet"
            try:
                with opening_errors(path, DataError):
                    if self.arrow:
                        self._ipc = pa.ipc.open_file(pa.memory_map(path))
                        raw = [str(n) for n in self._ipc.schema.names]
                        self.num_rows = sum(self._ipc.get_batch(i).num_rows
                                            for i in range(self._ipc.num_record_batches))
                    else:
                        self._pq = pq.ParquetFile(path)
                        raw = [str(n) for n in self._pq.schema_arrow.names]
                        self.num_rows = int(self._pq.metadata.num_rows)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OSError) as exc:
                raise DataError(f"{path}: not a readable {kind} file ({' '.join(str(exc).split())[:200]})"
                                   ) from None
            self._check_flat(raw)
        self.names = column_names(path, raw)
        self._raw = dict(zip(self.names, raw))

    def _check_flat(self, raw: list[str]) -> None:
        """Nested columns (struct, list, map) refused: a cell of a survey table is one value."""
        import pyarrow as pa

        schema = self._ipc.schema if self.arrow else self._pq.schema_arrow
        for name, field in zip(raw, schema):
            kind = field.type.value_type if pa.types.is_dictionary(field.type) else field.type
            if pa.types.is_nested(kind):
                raise DataError(f"{self.path}: column {name!r} is nested ({field.type}); designer reads flat "
                                   "columns, one value a cell: flatten it before")

    def _named(self, batch: Any) -> Any:
        """``batch`` (a record batch or table) with the stripped names."""
        back = {raw: name for name, raw in self._raw.items()}
        return batch.rename_columns([back.get(n, n) for n in batch.schema.names])

    def iter_batches(self, batch_size: int, columns: list[str]) -> Iterator[Any]:
        """Record batches of at most ``batch_size`` rows holding ``columns`` (names as in :attr:`names`)."""
        if self._stat is not None:
            yield from self._stat.iter_batches(batch_size, columns)
            return
        raw = [self._raw.get(c, c) for c in columns]
        if not self.arrow:
            for batch in self._pq.iter_batches(batch_size=batch_size, columns=raw):
                yield self._named(batch)
            return
        for i in range(self._ipc.num_record_batches):
            batch = self._ipc.get_batch(i).select(raw)
            for start in range(0, batch.num_rows, batch_size):
                yield self._named(batch.slice(start, batch_size))

    def read_table(self) -> Any:
        """The whole file as an Arrow table (names as in :attr:`names`)."""
        if self._stat is not None:
            return self._stat.read_table()
        return self._named(self._ipc.read_all() if self.arrow else self._pq.read())


def dataset_parts(path: str) -> list[str]:
    """The ``.parquet`` / ``.pq`` files under a dataset folder, in name order (refused when there are none).

    A part with a schema but no rows (Spark and Dask write them) adds no row: it is left out when another part has
    rows, so every command reads the folder alike; a folder of such parts only is refused by its readers.

    Examples
    --------
    >>> import os, shutil, tempfile
    >>> from designer.tables import inputs, writers
    >>> folder = tempfile.TemporaryDirectory()
    >>> for part in ("b.parquet", "a.parquet"):
    ...     path = os.path.join(folder.name, part)
    ...     with open(path, "wb") as binary:
    ...         sink = writers.table_sink(path, binary, ["response"])
    ...         sink.write([["{yes}"]])
    ...         sink.close()
    >>> [os.path.basename(p) for p in inputs.dataset_parts(folder.name)]
    ['a.parquet', 'b.parquet']
    >>> folder.cleanup()
    """
    regular_file(path)
    parts = []
    top = os.path.abspath(path)
    for folder, subfolders, files in os.walk(top):
        depth = os.path.relpath(folder, top).count(os.sep) + (folder != top)
        if depth > MAX_DEPTH:
            raise DataError(f"{path}: parts more than {MAX_DEPTH} folders deep; give a dataset folder of at most "
                            f"{MAX_DEPTH} levels")
        subfolders.sort()
        parts += [os.path.join(folder, f) for f in files if is_parquet(f) and os.path.isfile(os.path.join(folder, f))]
    parts = sorted(os.path.join(path, os.path.relpath(p, top)) for p in parts)
    if not parts:
        raise DataError(f"{path}: a folder without .parquet parts; give a CSV or Parquet file, or the folder of a "
                        "partitioned Parquet dataset")
    rows = [_footer_rows(p) for p in parts]
    if any(rows):
        parts = [p for p, n in zip(parts, rows) if n != 0]
    return parts


def _footer_rows(path: str) -> int | None:
    """The rows a Parquet part's footer counts; ``None`` when it cannot be read (its reader then says why)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return int(pq.read_metadata(path).num_rows)
    except (pa.ArrowException, OSError, ValueError):
        return None


def numbers(values: Any) -> NDArray[np.float64]:
    """Cells of text as floats (surrounding space allowed), NaN where a cell is not a number.

    Examples
    --------
    >>> from designer.tables.inputs import numbers
    >>> numbers(["1", " 2.5", "", "x", "1e400"]).tolist()
    [1.0, 2.5, nan, nan, inf]
    """
    import numpy as np

    cells = np.asarray(values, dtype=object)
    try:
        return np.asarray(cells, dtype=np.float64)
    except (TypeError, ValueError):
        pass
    out = np.empty(len(cells), dtype=np.float64)
    for i, v in enumerate(cells):
        try:
            out[i] = float(v)
        except (TypeError, ValueError):
            out[i] = np.nan
    return out


def _columnar_texts(path: str, columns: list[str], chunk_rows: int
                    ) -> Iterator[tuple[int, dict[str, NDArray[np.object_]]]]:
    """Row batches of a Parquet, Arrow or statistics package's file as text, like a CSV read: missing values empty,
    numbers as Arrow writes them (``line`` numbers count the header as line 1, as for CSV, so messages name the same
    row)."""
    import numpy as np

    source = ColumnarFile(path)
    for name in columns:
        if name not in source.names:
            raise DataError(f"{path}: no column {name!r}; the columns are {source.names}")
    line, seen = 2, 0
    for batch in source.iter_batches(chunk_rows, columns):
        yield line, {name: np.array(parquet_text(batch.column(batch.schema.get_field_index(name))), dtype=object)
                     for name in columns}
        line += batch.num_rows
        seen += batch.num_rows
    if seen == 0:
        raise DataError(f"{path}: a schema but no rows")


def read_chunks(path: str, columns: list[str], *, chunk_rows: int = CHUNK_ROWS
                ) -> Iterator[tuple[int, dict[str, NDArray[np.object_]]]]:
    """The named columns of a file or a dataset folder as text (each cell stripped, a missing value empty), at most
    ``chunk_rows`` rows a chunk: ``(first_line, {name: object array})``.

    ``first_line`` is the file line of the chunk's first row (the header is line 1; for a columnar file, the row
    number plus one; for a dataset folder, its parts in name order, the rows counted across them). Errors (missing
    file or column, malformed rows, no rows) are one :class:`DataError` line.

    Examples
    --------
    >>> import os, tempfile
    >>> folder = tempfile.TemporaryDirectory()
    >>> path = os.path.join(folder.name, "answers.csv")
    >>> with open(path, "w") as file:
    ...     _ = file.write("id;response\\n1;{yes}\\n2;{no}\\n3;I don't know\\n")
    >>> from designer.tables.inputs import read_chunks
    >>> [(line, chunk["response"].tolist()) for line, chunk in read_chunks(path, ["response"])]
    [(2, ['{yes}', '{no}', "I don't know"])]
    >>> folder.cleanup()
    """
    if os.path.isdir(path):  # every branch refuses a FIFO or a device before opening it (regular_file)
        before = 0  # rows of the parts already read
        for part in dataset_parts(path):
            seen = 0
            for line, chunk in _columnar_texts(part, columns, chunk_rows):
                yield line + before, chunk
                seen += len(next(iter(chunk.values()))) if chunk else 0
            before += seen
        return
    if is_columnar(path):
        yield from _columnar_texts(path, columns, chunk_rows)
        return
    for line, table in csv_tables(path, columns, chunk_rows):
        yield line, {name: stripped(table.column(name)) for name in columns}
