"""Where a regression reads its data from: the whole table in memory, or chunks of a large CSV file or Parquet
dataset fitted from sufficient statistics (:mod:`designer.regression.chunked`), the passes optionally run on a
Dask cluster, one Parquet part a task (:mod:`designer.regression.remote`).

Files are opened through :mod:`designer.tables.inputs`; every failure is one
:class:`~designer.exceptions.DataError` line naming the file.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from ..exceptions import DataError
from ..tables.inputs import ColumnarFile

__all__ = ["CHUNK_ROWS", "IN_MEMORY_BYTES", "IN_MEMORY_ROWS", "as_codes", "chunk_source", "cluster_plan", "columns_of",
           "in_chunks", "map_on_cluster", "numeric_labels", "part_chunks", "read_frame"]

#: A Parquet dataset of more rows than this, or a CSV file of more bytes, is read in chunks.
IN_MEMORY_ROWS = 1_000_000
IN_MEMORY_BYTES = 100 << 20
#: Rows per chunk when reading in chunks (``chunk_rows`` sets it).
CHUNK_ROWS = 250_000
#: What a regression's data file is, for the error lines.
WHAT = "a CSV table with the answers and the covariates (a header row, one row per respondent)"


def numeric_labels(path: str, formula: str, answers: str) -> dict[str, dict[str, float]]:
    """The value-labelled columns of an SPSS, Stata or SAS file that the formula uses as numbers (not inside
    ``C()``), each as ``{label: code}``: read back as their codes, as R's haven keeps a labelled number a number
    (the labels, alphabetically ordered categories, would silently change the model). ``C(col)`` asks for the
    labels as categories. Refused in one line when two codes share a label (the code cannot be told)."""
    from ..tables.inputs import is_stat
    from ..tables.writers import column_meta
    from .data import _categorical, formula_columns

    if os.path.isdir(path) or not is_stat(path) or "~" not in formula:
        return {}
    rhs = formula.split("~", 1)[1]
    labels = column_meta(path, formula_columns(rhs, columns_of(path))).value_labels
    out: dict[str, dict[str, float]] = {}
    for column, coded in labels.items():
        if column == answers or _categorical(rhs, column):
            continue
        words: dict[str, float] = {}
        for code, word in coded.items():
            if words.get(word, code) != code:
                raise DataError(f"{path}: column {column!r} gives the label {word!r} to the codes {words[word]:g} and "
                                f"{code:g}, so its numbers cannot be read back: write C({column}) to use its labels "
                                "as categories")
            words[word] = float(code)
        out[column] = words
    return out


def as_codes(data: Any, labels: dict[str, dict[str, float]]) -> Any:
    """``data`` with each column of ``labels`` (``{label: code}``) read back as numbers: a label as its code, a code
    without a label (written as its number) as that number, a missing cell missing."""
    import pandas as pd

    for column, words in labels.items():
        if column in data.columns:
            text = data[column].astype("object")
            data[column] = pd.to_numeric(text.map(lambda v, w=words: w.get(v, v) if isinstance(v, str) else v),
                                         errors="coerce")
    return data


def read_frame(path: str, answers: str, formula: str = "", extra: Sequence[str | None] = ()) -> Any:
    """The data file as a pandas DataFrame (a small one, see :func:`in_chunks`), the cells typed by
    :mod:`designer.tables.cells`: the ``answers`` column as text, empty cells and R's ``NA`` missing, value-labelled
    numbers as numbers (:func:`numeric_labels`, from the ``formula``); ``attrs["first_line"]`` is the file's line of
    the first data row (a Qualtrics export's two extra header rows skipped), ``attrs["file_columns"]`` the file's
    header. Of a CSV file, with a ``formula``, only the columns the fit uses are read (the answers, the formula's, the
    ``extra`` ones: weights, clusters, groups), as :func:`part_chunks` reads a large one: the cells of another column
    are never decoded."""
    import pandas as pd
    import pyarrow as pa

    from ..tables.cells import typed_columns
    from ..tables.csv_text import csv_tables
    from ..tables.inputs import is_columnar, parquet_answers

    if is_columnar(path):
        try:
            table = ColumnarFile(path).read_table()
        except (pa.ArrowInvalid, OSError, ValueError) as exc:
            raise DataError(f"{path}: not a readable Parquet or Arrow file ({' '.join(str(exc).split())[:200]})"
                            ) from None
        data = table.to_pandas()
        data.columns = [str(c).strip() for c in data.columns]
        if answers in table.column_names:  # as CSV text: integers as 1, not 1.0; a null is missing
            data[answers] = parquet_answers(table.column(answers))
        if len(data) == 0:
            raise DataError(f"{path}: no rows")
        return as_codes(data, numeric_labels(path, formula, answers))
    header = every = columns_of(path)
    if formula:
        from ..exceptions import RegressionError
        from .data import formula_columns, split_formula

        try:
            rhs = split_formula(formula, header)[1]
        except RegressionError:
            rhs = None  # every column read: the fit words the formula's error
        if rhs is not None:
            named = {answers, *formula_columns(rhs, header), *(c for c in extra if c)}
            header = [c for c in header if c in named]
    first, data = None, []
    for line, table in csv_tables(path, header, 1 << 62):
        first = line if first is None else first
        data.append(table)
    frame = pd.DataFrame(typed_columns(pa.concat_tables(data), {answers}))
    frame.attrs["first_line"] = first
    frame.attrs["file_columns"] = list(every)  # what an error names: the file's columns, not only those read
    return frame


def parquet_parts(path: str) -> list[str]:
    """The ``.parquet`` files of a dataset folder (sorted), or the file itself."""
    from ..tables.inputs import dataset_parts

    return dataset_parts(path) if os.path.isdir(path) else [path]


def in_chunks(path: str, chunk_rows: int | None, scheduler: str | None) -> bool:
    """Whether ``path`` is read in chunks: a folder, ``chunk_rows`` or ``scheduler`` given, a Parquet file above
    :data:`IN_MEMORY_ROWS` rows or a CSV file above :data:`IN_MEMORY_BYTES`."""
    from ..tables.inputs import is_columnar

    if os.path.isdir(path) or chunk_rows is not None or scheduler:
        return True
    try:
        size = os.path.getsize(path)
    except OSError as exc:  # the path goes to designer._internal.io only for the message
        from .._internal.io import unopened

        raise DataError(unopened(path, exc)) from None
    if is_columnar(path):
        rows = ColumnarFile(path).num_rows  # None: a file that does not say (SAS transport): by its size
        return bool(rows > IN_MEMORY_ROWS) if rows is not None else size > IN_MEMORY_BYTES
    return size > IN_MEMORY_BYTES


def columns_of(path: str) -> list[str]:
    """The column names of a CSV file, a Parquet file or the first part of a Parquet dataset."""
    from ..tables.inputs import is_columnar, sniff

    parts = parquet_parts(path) if os.path.isdir(path) else [path]
    if is_columnar(parts[0]):
        return list(ColumnarFile(parts[0]).names)
    return sniff(path, WHAT)[0]


def part_chunks(path: str, needed: list[str], answers: str, chunk_rows: int, first: int = 0,
                labels: dict[str, dict[str, float]] | None = None) -> Iterator[tuple[int, Any]]:
    """``(first_row, chunk)`` of one CSV or Parquet file: the ``needed`` columns, the answers as text (a
    Parquet cell as its CSV text), numbers as numbers (value-labelled ones too, ``labels``: :func:`as_codes`);
    ``first_row`` counts data rows from ``first``."""
    import pandas as pd

    from ..tables.cells import typed_columns
    from ..tables.csv_text import csv_tables
    from ..tables.inputs import is_columnar, parquet_answers

    if is_columnar(path):
        source = ColumnarFile(path)
        header = list(source.names)
        missing = [c for c in needed if c not in header]
        if missing:
            raise DataError(f"{path}: no column {missing[0]!r}; the columns are {header}")
        for batch in source.iter_batches(chunk_rows, needed):
            chunk = batch.to_pandas()
            if answers in chunk.columns:
                chunk[answers] = parquet_answers(batch.column(batch.schema.get_field_index(answers)))
            yield first, as_codes(chunk, labels or {})
            first += len(chunk)
        return
    for _, table in csv_tables(path, needed, chunk_rows):
        chunk = pd.DataFrame(typed_columns(table, {answers}))
        yield first, chunk
        first += len(chunk)


def chunk_source(path: str, needed: list[str], answers: str, chunk_rows: int,
                 labels: dict[str, dict[str, float]] | None = None) -> Callable[[], Iterator[Any]]:
    """A :data:`~designer.regression.chunked.ChunkSource` over a file or every part of a Parquet dataset (``labels``:
    value-labelled numbers read back as numbers, :func:`numeric_labels`)."""
    parts = parquet_parts(path)

    def chunks() -> Iterator[tuple[int, Any]]:
        first = 0
        for part in parts:
            for start, chunk in part_chunks(part, needed, answers, chunk_rows, first, labels):
                yield start, chunk
                first = start + len(chunk)
    return chunks


def map_on_cluster(scheduler: str, function: Callable[..., Any], items: Sequence[Sequence[Any]], **shared: Any
                   ) -> list[Any]:
    """``function(*item, **shared)`` for every item on the Dask cluster at ``scheduler``, results in order; a
    worker's :class:`~designer.exceptions.DesignerError` (a bad row of a part) is raised as its one line, any other
    failure says what the workers need."""
    from ..exceptions import DesignerError
    from ..optimal.sweep import check_scheduler_address

    try:
        from distributed import Client
    except ImportError:
        raise DataError("--scheduler needs Dask's distributed scheduler: pip install 'designer[dask]'") from None
    check_scheduler_address(scheduler)
    client = Client(scheduler, timeout="10s", set_as_default=False)
    try:
        futures = [client.submit(function, *item, pure=False, **shared) for item in items]
        try:
            return list(client.gather(futures))
        except DesignerError as exc:
            raise DataError(str(exc)) from None
        except Exception as exc:
            raise DataError(f"a Dask worker failed ({type(exc).__name__}: {' '.join(str(exc).split())}); the "
                            "workers need designer installed and the parts' paths readable") from None
    finally:
        client.close()


def cluster_plan(scheduler: str, path: str, needed: list[str], answers: str, chunk_rows: int,
                 labels: dict[str, dict[str, float]] | None = None) -> Any:
    """The :class:`~designer.regression.remote.ClusterPlan` of a Parquet file or dataset on the Dask cluster at
    ``scheduler``: one part a task, each read by :func:`part_chunks`."""
    import functools

    from ..tables.inputs import is_columnar
    from .remote import ClusterPlan

    parts = parquet_parts(path)
    if not all(is_columnar(p) for p in parts):
        raise DataError(f"{path}: --scheduler reads a Parquet (or Arrow) file or a Parquet dataset folder (one "
                        "part a task)")
    return ClusterPlan(map=functools.partial(map_on_cluster, scheduler), parts=tuple(parts), reader=part_chunks,
                       reader_kwargs={"needed": needed, "answers": answers, "chunk_rows": chunk_rows,
                                      "labels": labels or {}})
