"""Small CSV files read with the standard library: the chunks of
:func:`designer.estimation.survey_files.read_chunks` without importing pandas, so that a command on a file under
its ``SMALL_CSV_BYTES`` starts at the speed of numpy (a larger file is read by pandas' C parser, chunk by chunk).

A chunk is a :class:`TextChunk`: the named columns as object arrays of text, each cell stripped of surrounding
space, exactly the cells pandas' C parser gives ``read_chunks`` for the same file (``tests/test_csv_chunks.py``
compares them): blank and whitespace-only lines are skipped, a row shorter than the header has empty cells at its
end, a Qualtrics export's two extra header rows are left out. A row longer than the header is refused (pandas' reader
refuses a long first row too, which pandas alone would read shifted, its first cell a row label; it drops the extra
cells of a later one). The chunk answers the part of a pandas DataFrame's interface
the chunk readers use: ``chunk[name]``, ``len(chunk)``, ``chunk.columns``, ``chunk.loc[mask]``,
``chunk.reset_index(drop=True)``; a column is a :class:`TextColumn`, a numpy array with ``to_numpy``, ``iloc`` and
``isin``.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from ..exceptions import DataError


class TextColumn(np.ndarray):
    """One column of a :class:`TextChunk`: an object array of str with the Series methods the readers use."""

    @property
    def iloc(self) -> TextColumn:
        """Positional indexing (``column.iloc[3]``, ``column.iloc[rows]``), as a numpy array indexes."""
        return self

    def to_numpy(self, dtype: Any = None) -> np.ndarray:
        """The cells as a plain numpy array."""
        return np.asarray(self, dtype=dtype)

    def isin(self, values: Iterable[Any]) -> TextColumn:
        """Whether each cell is one of ``values`` (compared as text)."""
        return np.isin(np.asarray(self, dtype=object), list(values)).view(TextColumn)


class _Rows:
    """``chunk.loc[mask]``: the rows where a boolean mask is true."""

    def __init__(self, chunk: TextChunk) -> None:
        self._chunk = chunk

    def __getitem__(self, mask: Any) -> TextChunk:
        keep = np.asarray(mask, dtype=bool)
        return TextChunk({name: cells[keep] for name, cells in self._chunk.cells.items()})


class TextChunk:
    """Some rows of a small CSV file: ``cells`` maps each named column to an object array of its text."""

    def __init__(self, cells: dict[str, np.ndarray]) -> None:
        self.cells = cells
        self.columns = list(cells)

    def __len__(self) -> int:
        return len(next(iter(self.cells.values()))) if self.cells else 0

    def __getitem__(self, name: str) -> TextColumn:
        return self.cells[name].view(TextColumn)

    @property
    def loc(self) -> _Rows:
        return _Rows(self)

    def reset_index(self, drop: bool = True) -> TextChunk:
        """The same rows (a chunk has no row labels to reset)."""
        return self


def is_qualtrics_row(cells: Sequence[Any]) -> bool:
    """Whether a table's second row is a Qualtrics CSV export's import ids (``{"ImportId": ...}`` in every
    non-empty cell): that row and the question texts above it are not answers."""
    shown = [str(v) for v in cells if str(v) not in ("", "nan", "None")]
    return bool(shown) and all(c.startswith('{"ImportId"') for c in shown)


def too_long(path: str, line: int, cells: int, width: int, sep: str) -> DataError:
    """The error of a row with more cells than the header names columns."""
    return DataError(f"{path}: line {line}: {cells} cells, but the header names {width} columns; a cell holding the "
                     f"separator {sep!r} must be quoted")


def first_row_fits(path: str, width: int, sep: str) -> None:
    """Refuse a file whose first data row has more cells than the header names columns (pandas would read its first
    cell as a row label and shift the others: a later long row it refuses itself)."""
    with open(path, encoding="utf-8-sig", newline="") as fh:
        reader = csv.reader(fh, delimiter=sep)
        next(reader, None)
        for row in reader:
            if len(row) <= 1 and (not row or not row[0].strip()):
                continue
            if len(row) > width:
                raise too_long(path, 2, len(row), width, sep)
            return


def _chunk(rows: list[list[str]], index: list[int], columns: list[str]) -> TextChunk:
    cells = {}
    for name, j in zip(columns, index):
        column = np.empty(len(rows), dtype=object)
        column[:] = [row[j].strip() if j < len(row) else "" for row in rows]
        cells[name] = column
    return TextChunk(cells)


def read_small_csv(path: str, columns: list[str], header: list[str], sep: str, chunk_rows: int
                   ) -> Iterator[tuple[int, TextChunk]]:
    """``(first_line, chunk)`` of the named columns of a CSV file (its ``header`` and ``sep`` as
    :func:`~designer.estimation.survey_files.sniff` found them), at most ``chunk_rows`` rows a chunk; the header is
    line 1 and a row's line counts the rows above it (blank lines are not counted, as in pandas' reading)."""
    index = [header.index(name) for name in columns]
    width = len(header)
    rows: list[list[str]] = []
    try:
        with open(path, encoding="utf-8-sig", newline="") as fh:
            reader = csv.reader(fh, delimiter=sep)
            next(reader)  # the header, read by sniff
            for row in reader:
                if len(row) <= 1 and (not row or not row[0].strip()):
                    continue  # a blank (or whitespace) line
                if len(row) > width:
                    raise too_long(path, len(rows) + 2, len(row), width, sep)
                rows.append(row)
    except csv.Error as exc:
        raise DataError(f"{path}: not a valid CSV table ({exc})") from None
    except UnicodeDecodeError:
        raise DataError(f"{path}: not UTF-8 text; save the file as UTF-8") from None
    first = 2
    if len(rows) >= 2 and is_qualtrics_row([c.strip() for c in rows[1]]):
        rows, first = rows[2:], 4  # two rows of question texts and import ids
    if not rows:
        raise DataError(f"{path}: a header but no rows")
    for start in range(0, len(rows), chunk_rows):
        yield first + start, _chunk(rows[start:start + chunk_rows], index, columns)
