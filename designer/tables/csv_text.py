"""designer's one CSV reader: ``pyarrow.csv`` (Arrow's C++ parser), the same rules for every command.

Every command that takes a data table as a CSV or TSV file (estimate, regress, randomize, the studio's uploads, which
call designer.estimate and designer.randomize) reads it here, so the same bytes give the same cells everywhere
(tests/test_tables_dialect.py); export, synthesize and audit read a mechanism or a problem, not a data table (a
mechanism's CSV file is read by :mod:`designer._internal.formats`):

* the separator is the one of :data:`SEPARATORS` that splits the first line into the most cells (commas win ties);
* a UTF-8 byte order mark is skipped; a file that is not UTF-8 is refused naming the line and the column;
* a quoted cell may hold the separator, quotes (doubled) and line breaks;
* an empty or whitespace-only line is skipped and not counted; every other row has exactly one cell per column of
  the header: a row with more or fewer is refused naming its line;
* every cell is text, exactly as written (``NA``, ``1e400``, ``007`` stay what they are; what a cell means is the
  reader's business above), so a kept column passes through untouched;
* a Qualtrics export's two extra header rows (question texts, then ``{"ImportId": ...}``) are left out.

A row's line number counts the header as line 1 and every row above it (blank lines are not counted, as pandas
counts them). Errors are one :class:`~designer.exceptions.DataError` line naming the file, the line and the column.

The limits every source of :mod:`designer.tables` shares (:func:`regular_file`: regular files and folders only;
:func:`column_names`: names a reader can tell apart) and the text every command reads from a column
(:func:`stripped`) are here too, so that a CSV file's path and its cells stay in this module from the first check
to the last cell (docs/architecture.md, "The data, walked").
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from ..exceptions import DataError

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = ["BLOCK_BYTES", "SEPARATORS", "column_names", "csv_tables", "csv_text_columns", "is_qualtrics_row",
           "regular_file", "sniff", "stripped"]

#: Separators a data file may use (the one that splits the header into the most cells; ties in this order).
SEPARATORS = (",", ";", "\t", "|")

#: Bytes the parser reads at a time: a row (its quoted line breaks included) must fit in one block.
BLOCK_BYTES = 1 << 22

#: The longest header line read to find the separator.
HEADER_BYTES = 1 << 20


def is_qualtrics_row(cells: Sequence[Any]) -> bool:
    """Whether a table's second row is a Qualtrics CSV export's import ids (``{"ImportId": ...}`` in every
    non-empty cell): that row and the question texts above it are not answers.

    Examples
    --------
    >>> from designer.tables.csv_text import is_qualtrics_row
    >>> is_qualtrics_row(['{"ImportId":"QID1"}', '']), is_qualtrics_row(['{yes}'])
    (True, False)
    """
    shown = [str(v).strip() for v in cells if v is not None and str(v).strip() not in ("", "nan", "None")]
    return bool(shown) and all(c.startswith('{"ImportId"') for c in shown)


def regular_file(path: str, what: str = "the input") -> None:
    """Refuse, without opening it, a path that is not a regular file or a folder: a FIFO would block until a writer
    comes (a named pipe) or could be read only once (process substitution), a device never ends.

    Examples
    --------
    >>> from designer.tables.csv_text import regular_file
    >>> regular_file("/dev/zero")
    Traceback (most recent call last):
    ...
    designer.exceptions.DataError: /dev/zero: not a regular file; the input must be a file or a folder: save it ...
    """
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return  # the reader's own message names a missing file
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        kind = "a pipe" if stat.S_ISFIFO(mode) else "not a regular file"
        raise DataError(f"{path}: {kind}; {what} must be a file or a folder: save it to a file first")


def column_names(path: str, names: Sequence[object]) -> list[str]:
    """A data file's column names as every reader uses them (surrounding spaces removed), refused in one error line
    naming the file when one is blank or two are the same name once stripped (``smoke`` and `` smoke``): read as
    one, their values would be interleaved row by row.

    Examples
    --------
    >>> from designer.tables.csv_text import column_names
    >>> column_names("answers.csv", [" id", "smoke "])
    ['id', 'smoke']
    >>> column_names("answers.csv", ["smoke", " smoke"])
    Traceback (most recent call last):
    ...
    designer.exceptions.DataError: answers.csv: columns 1 ('smoke') and 2 (' smoke') have the same name 'smoke' ...
    """
    seen: dict[str, int] = {}
    out = []
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
        out.append(name)
    return out


def stripped(column: Any) -> NDArray[np.object_]:
    """An Arrow column of text as an object array, each cell without surrounding space (the text every command
    reads).

    Examples
    --------
    >>> import pyarrow as pa
    >>> from designer.tables.csv_text import stripped
    >>> stripped(pa.array([" {yes} ", ""])).tolist()
    ['{yes}', '']
    """
    import numpy as np
    import pyarrow.compute as pc

    out = np.empty(len(column), dtype=object)  # to_pylist: Arrow's to_numpy would import pandas (+0.3 s)
    out[:] = pc.utf8_trim_whitespace(column).to_pylist()
    return out


def _parse_options(sep: str, handler: Any = None) -> Any:
    import pyarrow.csv as pcsv

    return pcsv.ParseOptions(delimiter=sep, newlines_in_values=True, invalid_row_handler=handler)


def sniff(path: str, what: str = "a CSV table (a header row, then one row per respondent)") -> tuple[list[str], str]:
    """The header (names stripped, checked by :func:`~designer.tables.inputs.column_names`) and the separator of a
    CSV file; one error line when it is another kind of file (a TOML or JSON file is named as such).

    Examples
    --------
    >>> import os, tempfile
    >>> folder = tempfile.TemporaryDirectory()
    >>> path = os.path.join(folder.name, "answers.csv")
    >>> with open(path, "w") as file:
    ...     _ = file.write("id;response\\n1;{yes}\\n2;{no}\\n3;I don't know\\n")
    >>> from designer.tables.csv_text import sniff
    >>> sniff(path)  # the header and the separator that splits it
    (['id', 'response'], ';')
    >>> folder.cleanup()
    """
    import io

    import pyarrow as pa
    import pyarrow.csv as pcsv

    regular_file(path)
    try:
        with open(path, "rb") as fh:  # one read: the header's line, and the block the header is parsed from
            block = fh.read(BLOCK_BYTES + 1)
    except OSError as exc:  # the path goes to designer._internal.io only for the message
        from .._internal.io import unopened

        raise DataError(unopened(path, exc)) from None
    end = block.find(b"\n", 0, HEADER_BYTES)
    raw = block[:end + 1] if end >= 0 else block[:HEADER_BYTES]  # as readline(HEADER_BYTES) reads it
    try:
        first = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise DataError(f"{path}: line 1: not UTF-8 text; save the file as UTF-8") from None
    head = first.strip()
    kind = ("TOML" if path.lower().endswith(".toml") or (head.startswith("[") and head.endswith("]"))
            or (" = " in head and "," not in head) or head.startswith("#") else
            "JSON" if path.lower().endswith(".json") or head.startswith(("{", "[")) else "")
    if kind:
        raise DataError(f"{path}: this looks like a {kind} file (a problem or a mechanism?); expected {what}")
    if not head:
        raise DataError(f"{path}: the file is empty; expected a header row")
    line = first.rstrip("\r\n").encode()  # the names as written: a trailing space is part of the last one

    def width(sep: str) -> int:
        try:
            return int(pcsv.read_csv(io.BytesIO(line + b"\n"), parse_options=pcsv.ParseOptions(delimiter=sep)
                                     ).num_columns)
        except pa.ArrowInvalid:  # an unclosed quote: the header goes on past this line
            return 1

    counts = {sep: width(sep) for sep in SEPARATORS}
    sep = max(SEPARATORS, key=lambda s: (counts[s], -SEPARATORS.index(s)))
    # A file that fits in one block is parsed from memory: a reader on the path reads ahead on Arrow's I/O thread,
    # and a command that stops at the header (a refused name) could exit while that read runs (SIGABRT at exit)
    source: Any = pa.BufferReader(block) if len(block) <= BLOCK_BYTES else path
    try:  # the header as the rows are read: a quoted name may hold a line break
        names = pcsv.open_csv(source, read_options=pcsv.ReadOptions(use_threads=False, block_size=BLOCK_BYTES),
                              parse_options=_parse_options(sep, lambda row: "skip"),
                              convert_options=pcsv.ConvertOptions(include_columns=[])).schema.names
    except UnicodeDecodeError:  # a quoted name holding a line break, the header's next line not UTF-8
        raise DataError(f"{path}: line 1: the header is not UTF-8 text; save the file as UTF-8") from None
    except (pa.ArrowInvalid, OSError) as exc:
        raise DataError(f"{path}: line 1: not a valid CSV header ({_said(exc)})") from None
    return column_names(path, names), sep


def _said(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:200]


class _Rows:
    """The invalid-row handler: whitespace-only lines skipped (and counted, to give later lines their number), any
    other row of the wrong width refused naming its line."""

    def __init__(self, path: str, width: int) -> None:
        self.path, self.width, self.blank, self.error = path, width, 0, ""

    def __call__(self, row: Any) -> str:
        if not row.text.strip():
            self.blank += 1
            return "skip"
        line = row.number - self.blank if row.number is not None else "?"
        self.error = (f"{self.path}: line {line}: {row.actual_columns} cells where the header has "
                      f"{row.expected_columns}; every row needs one cell per column (a separator too many or too "
                      "few, or a cell holding the separator that is not quoted?)")
        return "error"


def csv_tables(path: str, columns: list[str], chunk_rows: int, *, header: list[str] | None = None,
               sep: str | None = None, present: bool = False) -> Iterator[tuple[int, Any]]:
    """``(first_line, table)``: the named columns of a CSV file as Arrow tables of text, exactly as written, at most
    ``chunk_rows`` rows each (the module's rules). ``header`` and ``sep`` are :func:`sniff`'s (found when not
    given); a missing column, a ragged row, a cell that is not UTF-8, a file without rows: one error line.
    ``present``: the named columns the file has, in its order (a name it lacks is no error).

    Examples
    --------
    >>> import os, tempfile
    >>> folder = tempfile.TemporaryDirectory()
    >>> path = os.path.join(folder.name, "answers.csv")
    >>> with open(path, "w") as file:
    ...     _ = file.write("id,response\\n1, {yes}\\n\\n2,\\"{no,dk}\\"\\n")
    >>> from designer.tables.csv_text import csv_tables
    >>> [(line, table.to_pydict()) for line, table in csv_tables(path, ["response"], 10)]
    [(2, {'response': [' {yes}', '{no,dk}']})]
    >>> folder.cleanup()
    """
    import pyarrow as pa
    import pyarrow.csv as pcsv

    if header is None or sep is None:
        header, sep = sniff(path)
    if present:
        named = set(columns)
        columns = [c for c in header if c in named]
        if not columns:
            raise DataError(f"{path}: none of the columns {sorted(named)}; the columns are {header}")
    for name in columns:
        if name not in header:
            raise DataError(f"{path}: no column {name!r}; the columns are {header}")
    rows = _Rows(path, len(header))
    try:
        reader = pcsv.open_csv(
            # the header skipped as a parsed row, not as a line: a quoted name may hold a line break
            path, read_options=pcsv.ReadOptions(column_names=header, skip_rows_after_names=1,
                                                 block_size=BLOCK_BYTES, use_threads=False),
            parse_options=_parse_options(sep, rows),
            convert_options=pcsv.ConvertOptions(column_types={c: pa.binary() for c in header},
                                                include_columns=list(columns), strings_can_be_null=False,
                                                quoted_strings_can_be_null=False))
    except (pa.ArrowInvalid, OSError) as exc:
        raise _error(path, exc, rows) from None
    line, seen, pending, checked = 2, 0, None, False
    try:
        for batch in _batches(reader):
            table = _text(path, pa.Table.from_batches([batch]), line + (pending.num_rows if pending is not None else 0))
            if pending is not None:
                table = pa.concat_tables([pending, table])
            if not checked and (table.num_rows >= 2 or batch.num_rows == 0):
                checked = True
                if table.num_rows >= 2 and is_qualtrics_row([table.column(c)[1].as_py() for c in columns]):
                    table, line = table.slice(2), line + 2  # two rows of question texts and import ids
            while checked and table.num_rows >= chunk_rows:
                yield line, table.slice(0, chunk_rows)
                line, seen, table = line + chunk_rows, seen + chunk_rows, table.slice(chunk_rows)
            pending = table
    except (pa.ArrowInvalid, OSError) as exc:
        raise _error(path, exc, rows) from None
    if pending is not None and pending.num_rows:
        if not checked and pending.num_rows >= 2 and is_qualtrics_row([pending.column(c)[1].as_py()
                                                                         for c in columns]):
            pending, line = pending.slice(2), line + 2
        if pending.num_rows:
            yield line, pending
            seen += pending.num_rows
    if seen == 0:
        raise DataError(f"{path}: a header but no rows")


def _text(path: str, table: Any, first_line: int) -> Any:
    """The binary cells as UTF-8 text; a cell that is not, named by its line and column."""
    import pyarrow as pa

    out = []
    for name, column in zip(table.column_names, table.columns):
        try:
            out.append(column.cast(pa.string()))
        except pa.ArrowInvalid:
            values = column.to_pylist()
            for i, v in enumerate(values):
                try:
                    v.decode("utf-8")
                except UnicodeDecodeError:
                    raise DataError(f"{path}: line {first_line + i}, column {name!r}: not UTF-8 text; save the "
                                    "file as UTF-8") from None
            raise
    return pa.table(out, names=table.column_names)


def _error(path: str, exc: BaseException, rows: _Rows) -> DataError:
    """A CSV file the parser refused, in one line."""
    if rows.error:
        return DataError(rows.error)
    message = _said(exc)
    if "straddling" in message or "block" in message:
        return DataError(f"{path}: a row longer than {BLOCK_BYTES >> 20} MiB (an unclosed quote?)")
    return DataError(f"{path}: not a valid CSV table ({message})")


def _batches(reader: Any) -> Iterator[Any]:
    while True:
        try:
            batch = reader.read_next_batch()
        except StopIteration:
            return
        yield batch


def csv_text_columns(path: str, missing: frozenset[str]) -> tuple[list[str], list[list[str | None]]]:
    """A comma-separated file's header and whole columns as text, the cells in ``missing`` as None: how the
    canonical digest of a released CSV file reads it (:func:`designer.tables.digests.released_sha256`).

    Examples
    --------
    >>> import os, tempfile
    >>> from designer.tables.csv_text import csv_text_columns
    >>> folder = tempfile.TemporaryDirectory()
    >>> path = os.path.join(folder.name, "r.csv")
    >>> with open(path, "w") as f:
    ...     _ = f.write("id,response\\n007,\\"{yes,no}\\"\\n8,NA\\n")
    >>> csv_text_columns(path, frozenset(["NA"]))
    (['id', 'response'], [['007', '8'], ['{yes,no}', None]])
    >>> folder.cleanup()
    """
    import pyarrow as pa
    import pyarrow.csv as pacsv

    parse = pacsv.ParseOptions(newlines_in_values=True)
    with open(path, "rb") as f:
        names = pacsv.open_csv(f, parse_options=parse).schema.names
    convert = pacsv.ConvertOptions(column_types={n: pa.string() for n in names}, strings_can_be_null=False,
                                   quoted_strings_can_be_null=False)
    columns: list[list[str | None]] = [[] for _ in names]
    with open(path, "rb") as f:
        for batch in pacsv.open_csv(f, parse_options=parse, convert_options=convert):
            for i in range(len(names)):
                cells = batch.column(i).to_pylist()
                columns[i].extend(None if c is None or c in missing else c for c in cells)
    return names, columns
