"""Answer files read in chunks: randomize and estimate never hold a whole survey in memory."""

from __future__ import annotations

import io
import os
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, BinaryIO

from ..exceptions import DataError

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    from numpy.typing import NDArray

    from .stat_files import StatSink

__all__ = ["ARROW_SUFFIXES", "CHUNK_ROWS", "SEPARATORS", "STAT_SUFFIXES", "ColumnarFile", "CsvSink", "ParquetSink",
           "answer_codes", "column_meta", "column_names", "dataset_parts", "is_arrow", "is_columnar", "is_parquet",
           "is_qualtrics_export", "is_stat", "parquet_answers", "parquet_text", "read_chunks", "sniff", "table_sink",
           "text_writer"]

#: Respondents per chunk (about 100 MB of strings at most for a few short columns).
CHUNK_ROWS = 500_000

#: A CSV file of at most this many bytes is read with the standard library's csv module (no pandas: a command on a
#: small file starts fast); a larger one with pandas' C parser, chunk by chunk. Both give the same chunks.
SMALL_CSV_BYTES = 10 * 2**20


#: Separators a data file may use (the first that splits the header is taken, in this order of preference).
SEPARATORS = (",", ";", "\t", "|")


def column_names(path: str, names: Sequence[object]) -> list[str]:
    """A data file's column names as every reader uses them (surrounding spaces removed), refused in one error line
    naming the file when one is blank or two are the same name once stripped (``smoke`` and `` smoke``): read as
    one, their values would be interleaved row by row.

    Examples
    --------
    >>> from designer.estimation.survey_files import column_names
    >>> column_names("answers.csv", [" id", "smoke "])
    ['id', 'smoke']
    >>> column_names("answers.csv", ["smoke", " smoke"])
    Traceback (most recent call last):
    ...
    designer.exceptions.DataError: answers.csv: columns 1 ('smoke') and 2 (' smoke') have the same name 'smoke' ...
    """
    seen: dict[str, int] = {}
    stripped = []
    for i, raw in enumerate(names):
        name = str(raw).strip()
        if not name:
            hint = " (an index column written by pandas' to_csv? write with index=False)" if i == 0 else ""
            raise DataError(f"{path}: column {i + 1} of the header has no name{hint}; give every column a name")
        if name in seen:
            j = seen[name]
            raise DataError(f"{path}: columns {j + 1} ({str(names[j])!r}) and {i + 1} ({str(raw)!r}) have the same "
                               f"name {name!r} (surrounding spaces are ignored); rename one of them")
        seen[name] = i
        stripped.append(name)
    return stripped


def sniff(path: str, what: str = "a CSV table (a header row, then one row per respondent)") -> tuple[list[str], str]:
    """The header and the separator of a data file; one error line when it is another kind of file.

    The separator is the one of :data:`SEPARATORS` that splits the header into the most columns (commas win
    ties), so a semicolon file from a spreadsheet with a decimal comma reads as it was meant. A TOML or JSON
    file (a problem or a mechanism given where data is expected) is named as such.

    Examples
    --------
    A semicolon-separated answers file in a temporary folder:

    >>> import os, tempfile
    >>> folder = tempfile.TemporaryDirectory()
    >>> path = os.path.join(folder.name, "answers.csv")
    >>> with open(path, "w") as file:
    ...     _ = file.write("id;response\\n1;{yes}\\n2;{no}\\n3;I don't know\\n")
    >>> from designer.estimation.survey_files import sniff
    >>> sniff(path)  # the header and the separator that splits it
    (['id', 'response'], ';')
    >>> folder.cleanup()
    """
    import csv

    from .._internal.io import opening_errors

    try:
        with opening_errors(path, DataError), open(path, encoding="utf-8-sig", newline="") as fh:
            first = fh.readline()
    except UnicodeDecodeError:
        raise DataError(f"{path}: not UTF-8 text; save the file as UTF-8") from None
    head = first.strip()
    kind = ("TOML" if path.lower().endswith(".toml") or (head.startswith("[") and head.endswith("]"))
            or (" = " in head and "," not in head) or head.startswith("#") else
            "JSON" if path.lower().endswith(".json") or head.startswith(("{", "[")) else "")
    if kind:
        raise DataError(f"{path}: this looks like a {kind} file (a problem or a mechanism?); expected {what}")
    if not head:
        raise DataError(f"{path}: the file is empty; expected a header row")
    try:
        line = first.rstrip("\r\n")  # the names as written: a trailing space is part of the last one
        counts = {sep: len(next(csv.reader([line], delimiter=sep))) for sep in SEPARATORS}
        sep = max(SEPARATORS, key=lambda s: (counts[s], -SEPARATORS.index(s)))
        with open(path, encoding="utf-8-sig", newline="") as fh:  # the header as pandas reads it: a quoted name
            header = next(csv.reader(fh, delimiter=sep))          # may hold a line break
    except csv.Error as exc:
        raise DataError(f"{path}: not valid CSV: {exc}") from None
    except UnicodeDecodeError:
        raise DataError(f"{path}: not UTF-8 text; save the file as UTF-8") from None
    return column_names(path, header), sep


def is_qualtrics_export(frame: pd.DataFrame) -> bool:
    """Whether a table's first two rows are a Qualtrics CSV export's extra header rows (question texts, then
    ``{"ImportId": ...}`` in every non-empty cell of the second).

    Examples
    --------
    >>> import pandas as pd
    >>> from designer.estimation.survey_files import is_qualtrics_export
    >>> is_qualtrics_export(pd.DataFrame({"Q1": ["Have you ever cheated?", '{"ImportId":"QID1"}', "yes"]}))
    True
    """
    from .csv_chunks import is_qualtrics_row

    return len(frame) >= 2 and is_qualtrics_row(frame.iloc[1].tolist())


def parquet_text(column: Any) -> list[str]:
    """An Arrow column as the text a CSV cell would hold: Arrow's own cast to string (integers as ``1``, not
    through a float), nulls empty, surrounding space stripped.

    Examples
    --------
    >>> import pyarrow as pa
    >>> from designer.estimation.survey_files import parquet_text
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
    >>> from designer.estimation.survey_files import parquet_answers
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
    >>> from designer.estimation.survey_files import is_parquet
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
    >>> from designer.estimation.survey_files import is_arrow
    >>> is_arrow("answers.feather"), is_arrow("answers.parquet")
    (True, False)
    """
    return str(path).lower().endswith(ARROW_SUFFIXES)


#: Extensions of the statistics packages' files read through pyreadstat (:mod:`designer.estimation.stat_files`).
STAT_SUFFIXES = (".sav", ".zsav", ".por", ".dta", ".sas7bdat", ".xpt")


def is_stat(path: str) -> bool:
    """Whether ``path`` names an SPSS, Stata or SAS file, by its extension.

    Examples
    --------
    >>> from designer.estimation.survey_files import is_stat
    >>> is_stat("survey.sav"), is_stat("survey.dta"), is_stat("survey.csv")
    (True, True, False)
    """
    return str(path).lower().endswith(STAT_SUFFIXES)


def is_columnar(path: str) -> bool:
    """Whether ``path`` names a Parquet, an Arrow IPC or a statistics package's file: read in record batches
    (:class:`ColumnarFile`), written with a schema.

    Examples
    --------
    >>> from designer.estimation.survey_files import is_columnar
    >>> is_columnar("answers.parquet"), is_columnar("survey.sav"), is_columnar("answers.csv")
    (True, True, False)
    """
    return is_parquet(path) or is_arrow(path) or is_stat(path)


class ColumnarFile:
    """A Parquet, Arrow IPC (Feather), SPSS, Stata or SAS file behind one reader: its column ``names`` (stripped,
    checked by :func:`column_names`), ``num_rows`` (``None`` when the file does not say), record batches of some
    columns, or the whole table, the columns named as in ``names``.

    A statistics package's file (:mod:`designer.estimation.stat_files`) has its value labels applied: a labelled
    column's codes are read as their labels, the words the mechanisms use.

    Examples
    --------
    >>> import os, tempfile
    >>> from designer.estimation import survey_files
    >>> folder = tempfile.TemporaryDirectory()
    >>> path = os.path.join(folder.name, "answers.parquet")
    >>> with open(path, "wb") as binary:
    ...     sink = survey_files.table_sink(path, binary, ["id", "response"])
    ...     sink.write([["1", "2"], ["{yes}", "{no}"]])
    ...     sink.close()
    >>> columnar = survey_files.ColumnarFile(path)
    >>> columnar.names, columnar.num_rows, columnar.arrow
    (['id', 'response'], 2, False)
    >>> folder.cleanup()
    """

    def __init__(self, path: str) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        from .._internal.io import opening_errors

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

    Examples
    --------
    >>> import os, shutil, tempfile
    >>> from designer.estimation import survey_files
    >>> folder = tempfile.TemporaryDirectory()
    >>> for part in ("b.parquet", "a.parquet"):
    ...     path = os.path.join(folder.name, part)
    ...     with open(path, "wb") as binary:
    ...         sink = survey_files.table_sink(path, binary, ["response"])
    ...         sink.write([["{yes}"]])
    ...         sink.close()
    >>> [os.path.basename(p) for p in survey_files.dataset_parts(folder.name)]
    ['a.parquet', 'b.parquet']
    >>> folder.cleanup()
    """
    from pathlib import Path

    parts = sorted(str(p) for p in Path(path).rglob("*") if p.is_file() and is_parquet(str(p)))
    if not parts:
        raise DataError(f"{path}: a folder without .parquet parts; give a CSV or Parquet file, or the folder of a "
                           "partitioned Parquet dataset")
    return parts


def _parquet_chunks(path: str, columns: list[str], chunk_rows: int) -> Iterator[tuple[int, pd.DataFrame]]:
    """Row batches of a Parquet file as text, like a CSV read: missing values empty, numbers as written by
    ``str`` (``line`` numbers count the header as line 1, as for CSV, so messages name the same row)."""
    import pandas as pd

    source = ColumnarFile(path)
    header = list(source.names)
    for name in columns:
        if name not in header:
            raise DataError(f"{path}: no column {name!r}; the columns are {header}")
    line, seen = 2, 0
    for batch in source.iter_batches(chunk_rows, columns):
        chunk = pd.DataFrame({name: parquet_text(batch.column(batch.schema.get_field_index(name)))
                              for name in columns}, dtype=object)
        yield line, chunk
        line += len(chunk)
        seen += len(chunk)
    if seen == 0:
        raise DataError(f"{path}: a schema but no rows")


def read_chunks(path: str, columns: list[str], *, chunk_rows: int = CHUNK_ROWS
                ) -> Iterator[tuple[int, pd.DataFrame]]:
    """The named columns of a CSV or Parquet file as string DataFrames of at most ``chunk_rows`` rows.

    Yields ``(first_line, chunk)`` with the file line number of the chunk's first row (the header is
    line 1; for Parquet, the row number plus one; for a Parquet dataset folder, its parts in name order, the rows
    counted across them). Errors (missing file or column, malformed rows, no rows) are one :class:`DataError`
    line.

    Examples
    --------
    A semicolon-separated answers file in a temporary folder:

    >>> import os, tempfile
    >>> folder = tempfile.TemporaryDirectory()
    >>> path = os.path.join(folder.name, "answers.csv")
    >>> with open(path, "w") as file:
    ...     _ = file.write("id;response\\n1;{yes}\\n2;{no}\\n3;I don't know\\n")
    >>> from designer.estimation.survey_files import read_chunks
    >>> [(line, chunk["response"].tolist()) for line, chunk in read_chunks(path, ["response"])]
    [(2, ['{yes}', '{no}', "I don't know"])]
    >>> folder.cleanup()
    """
    if os.path.isdir(path):
        before = 0  # rows of the parts already read
        for part in dataset_parts(path):
            seen = 0
            for line, chunk in _parquet_chunks(part, columns, chunk_rows):
                yield line + before, chunk
                seen += len(chunk)
            before += seen
        return
    if is_columnar(path):
        yield from _parquet_chunks(path, columns, chunk_rows)
        return
    header, sep = sniff(path)
    for name in columns:
        if name not in header:
            raise DataError(f"{path}: no column {name!r}; the columns are {header}")
    if os.path.getsize(path) <= SMALL_CSV_BYTES:  # the standard library's csv: no pandas to import
        from .csv_chunks import read_small_csv

        yield from read_small_csv(path, columns, header, sep, chunk_rows)
        return
    import pandas as pd

    from .csv_chunks import first_row_fits

    try:
        first_row_fits(path, len(header), sep)  # a first row one cell too long would become pandas' row labels
        reader = pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False, chunksize=chunk_rows, index_col=False,
                             usecols=lambda c: str(c).strip() in columns, encoding="utf-8-sig", skipinitialspace=False)
        line, seen = 2, 0
        with reader:
            for chunk in reader:
                chunk.columns = [str(c).strip() for c in chunk.columns]
                chunk = chunk.apply(lambda col: col.str.strip())
                if seen == 0 and is_qualtrics_export(chunk):  # two rows of question texts and import ids
                    chunk, line = chunk.iloc[2:].reset_index(drop=True), line + 2
                yield line, chunk
                line += len(chunk)
                seen += len(chunk)
    except (pd.errors.ParserError, ValueError, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: not a valid CSV table ({' '.join(str(exc).split())})") from None
    if seen == 0:
        raise DataError(f"{path}: a header but no rows")


def answer_codes(path: str, values: Any, first_line: int, vocabulary: Any, skip: Any = None, *, unit: str = "line"
                 ) -> NDArray[np.int64]:
    """Columns of recorded answers by :class:`designer.estimation.answers.AnswerVocabulary`, the ``skip`` positions left
    out; an unknown answer is one error line naming the file and its line (``first_line`` is the file line of
    ``values[0]``; ``unit`` the word for it: ``row`` for a data frame's rows).

    Examples
    --------
    A semicolon-separated answers file in a temporary folder:

    >>> import os, tempfile
    >>> folder = tempfile.TemporaryDirectory()
    >>> path = os.path.join(folder.name, "answers.csv")
    >>> with open(path, "w") as file:
    ...     _ = file.write("id;response\\n1;{yes}\\n2;{no}\\n3;I don't know\\n")
    >>> import designer
    >>> from designer.estimation.answers import AnswerVocabulary
    >>> from designer.estimation.survey_files import answer_codes
    >>> words = AnswerVocabulary(designer.Q_2x3(0.6, 0.2))
    >>> answer_codes(path, ["{yes}", "no", "I don't know"], 2, words).tolist()
    [0, 1, 2]
    >>> answer_codes(path, ["{yes}", "maybe"], 2, words)
    Traceback (most recent call last):
    ...
    designer.exceptions.DataError: ...: line 3: 'maybe' is not an answer of the mechanism: ...
    >>> folder.cleanup()
    """
    import numpy as np

    from .answers import describe_unknown

    values = np.asarray(values, dtype=object)
    codes = vocabulary.columns(values)
    if skip is not None:
        codes[np.asarray(skip, dtype=bool)] = 0
    if np.any(codes < 0):
        pos, message = describe_unknown(values, codes, vocabulary)
        raise DataError(f"{path}: {unit} {first_line + pos}: {message}")
    return np.asarray(codes if skip is None else codes[~np.asarray(skip, dtype=bool)], dtype=np.int64)


def text_writer(binary: BinaryIO) -> io.TextIOWrapper:
    """A UTF-8 text view of a binary file for csv writing (detach it before the file is closed).

    Examples
    --------
    >>> import io
    >>> from designer.estimation.survey_files import text_writer
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
    >>> from designer.estimation.survey_files import CsvSink
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
    >>> from designer.estimation import survey_files
    >>> folder = tempfile.TemporaryDirectory()
    >>> path = os.path.join(folder.name, "answers.parquet")
    >>> with open(path, "wb") as binary:
    ...     sink = survey_files.table_sink(path, binary, ["id", "response"])
    ...     sink.write([["1", "2"], ["{yes}", "{no}"]])
    ...     sink.close()
    >>> survey_files.ColumnarFile(path).read_table().to_pydict()
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
    >>> from designer.estimation import survey_files
    >>> folder = tempfile.TemporaryDirectory()
    >>> path = os.path.join(folder.name, "answers.parquet")
    >>> with open(path, "wb") as binary:
    ...     sink = survey_files.table_sink(path, binary, ["id", "response"])
    ...     sink.write([["1", "2"], ["{yes}", "{no}"]])
    ...     sink.close()
    >>> survey_files.column_meta(path, ["id"]).numeric  # text columns, no labels
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
    an SPSS or Stata one for ``.sav`` / ``.zsav`` / ``.dta`` (:class:`~designer.estimation.stat_files.StatSink`: the
    value labels, descriptions and numeric columns of ``meta``, a
    :class:`~.stat_files.ColumnMeta` such as :func:`column_meta` of the
    input, kept), else CSV. A SAS or SPSS portable name (read only) is refused, and so are ``names`` a reader
    would refuse (:func:`column_names`: a blank name, two of one name).

    Examples
    --------
    A Parquet file of two text columns, written chunk by chunk (here one):

    >>> import os, tempfile
    >>> from designer.estimation import survey_files
    >>> folder = tempfile.TemporaryDirectory()
    >>> path = os.path.join(folder.name, "answers.parquet")
    >>> with open(path, "wb") as binary:
    ...     sink = survey_files.table_sink(path, binary, ["id", "response"])
    ...     sink.write([["1", "2"], ["{yes}", "{no}"]])
    ...     sink.close()
    >>> type(sink).__name__, survey_files.ColumnarFile(path).num_rows
    ('ParquetSink', 2)
    >>> folder.cleanup()
    """
    column_names(path, names)
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
