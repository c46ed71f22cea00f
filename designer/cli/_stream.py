"""Answer files read in chunks: randomize and estimate never hold a whole survey in memory."""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import TYPE_CHECKING, BinaryIO

from ._common import CommandError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["CHUNK_ROWS", "read_chunks", "text_writer"]

#: Respondents per chunk (about 100 MB of strings at most for a few short columns).
CHUNK_ROWS = 500_000


def _header(path: str) -> list[str]:
    import csv

    from .._io import opening_errors

    try:
        with opening_errors(path, CommandError), open(path, encoding="utf-8-sig", newline="") as fh:
            first = next(csv.reader(fh), None)
    except UnicodeDecodeError:
        raise CommandError(f"{path}: not UTF-8 text; save the file as UTF-8") from None
    except csv.Error as exc:
        raise CommandError(f"{path}: not valid CSV: {exc}") from None
    if not first:
        raise CommandError(f"{path}: the file is empty; expected a header row")
    return [h.strip() for h in first]


def read_chunks(path: str, columns: list[str], *, chunk_rows: int = CHUNK_ROWS
                ) -> Iterator[tuple[int, pd.DataFrame]]:
    """The named columns of a CSV file as string DataFrames of at most ``chunk_rows`` rows.

    Yields ``(first_line, chunk)`` with the file line number of the chunk's first row (the header is
    line 1). Errors (missing file or column, malformed rows, no rows) are one :class:`CommandError` line.
    """
    import pandas as pd

    header = _header(path)
    for name in columns:
        if name not in header:
            raise CommandError(f"{path}: no column {name!r}; the columns are {header}")
    try:
        reader = pd.read_csv(path, dtype=str, keep_default_na=False, chunksize=chunk_rows, usecols=columns,
                             encoding="utf-8-sig", skipinitialspace=False)
        line, seen = 2, 0
        with reader:
            for chunk in reader:
                chunk = chunk.apply(lambda col: col.str.strip())
                yield line, chunk
                line += len(chunk)
                seen += len(chunk)
    except (pd.errors.ParserError, ValueError, UnicodeDecodeError) as exc:
        raise CommandError(f"{path}: not a valid CSV table ({' '.join(str(exc).split())})") from None
    if seen == 0:
        raise CommandError(f"{path}: a header but no rows")


def text_writer(binary: BinaryIO) -> io.TextIOWrapper:
    """A UTF-8 text view of a binary file for csv writing (detach it before the file is closed)."""
    return io.TextIOWrapper(binary, encoding="utf-8", newline="")
