"""The canonical SHA-256 of released files, read as pandas reads them (a manifest binds a release by it)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from .._internal.canonical import PANDAS_NA, TableDigest, cell_text
from .csv_text import csv_text_columns

__all__ = ["released_sha256"]

_INT = re.compile(r"[+-]?[0-9]+")
_FLOAT = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?|[+-]?(inf|Inf|INF|infinity|Infinity)")
_TRUE, _FALSE = frozenset(["True", "TRUE", "true"]), frozenset(["False", "FALSE", "false"])


def _csv_kind(values: list[str | None]) -> str:
    """How pandas' ``read_csv`` types a column of these cells (missing ones None): ``int``, ``float``, ``bool`` or
    ``text``."""
    present = [v for v in values if v is not None]
    if present and all(_INT.fullmatch(v) for v in present):
        return "int" if len(present) == len(values) else "float"
    if present and all(_FLOAT.fullmatch(v) for v in present):
        return "float"
    if present and len(present) == len(values) and all(v in _TRUE or v in _FALSE for v in present):
        return "bool"
    return "text"


def _csv_cell(v: str | None, kind: str) -> str | None:
    if v is None:
        return None
    if kind == "int":
        return str(int(v))
    if kind == "float":
        return cell_text(float(v))
    if kind == "bool":
        return str(v in _TRUE)
    return v.strip()


def released_sha256(files: list[str]) -> str:
    """The canonical SHA-256 of the rows of released files (one file, or a folder's parts in order) as pandas'
    reader of their format reads them (``read_csv`` with its default types and missing cells, ``read_parquet``,
    Arrow IPC, ``read_spss``, ``read_stata``): CSV, Parquet and Arrow computed with Arrow alone.

    Examples
    --------
    >>> import os, tempfile
    >>> import pandas as pd
    >>> from designer._internal.canonical import frame_sha256
    >>> from designer.tables.digests import released_sha256
    >>> folder = tempfile.TemporaryDirectory()
    >>> path = os.path.join(folder.name, "r.csv")
    >>> with open(path, "w") as f:
    ...     _ = f.write("id,response,w\\n007,{yes},1.50\\n8,{no},\\n")
    >>> as_read = pd.DataFrame({"id": [7, 8], "response": ["{yes}", "{no}"], "w": [1.5, float("nan")]})
    >>> released_sha256([path]) == frame_sha256(as_read)  # what pandas reads: 007 a number, the empty cell NaN
    True
    >>> folder.cleanup()
    """
    digest = TableDigest()
    for path in files:
        for names, columns in _file_columns(path):
            digest.update_columns(names, columns)
    return digest.hexdigest()


def _file_columns(path: str) -> Iterator[tuple[list[str], list[list[str | None]]]]:
    import os

    suffix = os.path.splitext(path)[1].lower()
    if suffix == ".csv":
        names, raw = csv_text_columns(path, PANDAS_NA)
        yield names, [[_csv_cell(v, kind) for v in column] for column, kind in
                      ((column, _csv_kind(column)) for column in raw)]
    elif suffix in (".parquet", ".pq", ".arrow", ".feather", ".ipc"):
        import pyarrow as pa

        if suffix in (".parquet", ".pq"):
            import pyarrow.parquet as pq

            batches: Any = pq.ParquetFile(path).iter_batches(batch_size=65536)
        else:
            source = pa.memory_map(path)
            try:
                reader: Any = pa.ipc.open_file(source)
                batches = (reader.get_batch(i) for i in range(reader.num_record_batches))
            except pa.ArrowInvalid:
                source.seek(0)
                batches = iter(pa.ipc.open_stream(source))
        for batch in batches:
            yield batch.schema.names, [[cell_text(v) for v in batch.column(i).to_pylist()]
                                       for i in range(batch.num_columns)]
    elif suffix in (".sav", ".dta"):
        import pandas as pd

        frame = pd.read_spss(path) if suffix == ".sav" else pd.read_stata(path)
        yield [str(c) for c in frame.columns], [[cell_text(v) for v in frame[c].tolist()] for c in frame.columns]
    else:
        raise ValueError(f"{path}: no canonical reader for {suffix or 'a file without a suffix'}")
