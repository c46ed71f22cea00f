"""The canonical serialization of a table and its SHA-256 (docs/guide/release.md, "Manifests"): what a release
manifest records of its rows so that a DataFrame can be checked against it by content, not by its length.

The serialization is defined cell by cell, so it is the same however the rows are chunked:

- the columns in the order of their names (sorted by their UTF-8 bytes); the row index is not part of it (a fresh
  index ``0..n-1``);
- each cell as the text a CSV file holds: a missing value (None, NaN, NA, NaT) is *null*; a whole float is written
  without its point (``3.0`` as ``3``, as a whole number read back from a float column); a label tuple as
  ``{a,b}``; anything else ``str(value)`` with outer blanks stripped;
- per column, the bytes ``len(name) || name`` and, for every row in order, ``0xFFFFFFFFFFFFFFFF`` for null or the
  cell's UTF-8 length (8 bytes, little-endian) followed by the cell's bytes;
- the SHA-256 of ``"designer-table-v1" || rows (8 bytes) || columns (8 bytes)`` followed by each column's SHA-256.

A released file is serialized as pandas' reader of its format reads it
(:func:`designer.tables.digests.released_sha256`): a CSV column is typed as ``read_csv`` types it by default (whole
numbers, numbers, ``true``/``false``, text; its default missing cells such as ``NA`` and the empty cell), so a
DataFrame read back from the release has the release's SHA-256.
"""

from __future__ import annotations

import hashlib
import math
import struct
from collections.abc import Iterable
from typing import Any

__all__ = ["TableDigest", "cell_text", "chunks_sha256", "frame_sha256"]

_NULL = b"\xff" * 8
_TAG = b"designer-table-v1"


def cell_text(v: Any) -> str | None:
    """A cell as the canonical serialization writes it (None for a missing value).

    Examples
    --------
    >>> from designer._internal.canonical import cell_text
    >>> cell_text(3.0), cell_text(" yes "), cell_text(float("nan")), cell_text(("a", "b"))
    ('3', 'yes', None, '{a,b}')
    """
    if v is None:
        return None
    if isinstance(v, float):  # numpy's float64 too
        if math.isnan(v):
            return None
        return str(int(v)) if v.is_integer() else repr(float(v))
    if isinstance(v, (tuple, list, set, frozenset)):
        return "{" + ",".join(map(str, v)) + "}"
    module = type(v).__module__
    if module.startswith("pandas"):
        import pandas as pd

        if v is pd.NA or v is pd.NaT:
            return None
    elif module == "numpy":
        import numpy as np

        if isinstance(v, np.floating):
            return cell_text(float(v))
    return str(v).strip()


class TableDigest:
    """The canonical SHA-256 of a table fed chunk by chunk (each chunk a DataFrame with the same columns).

    Examples
    --------
    >>> import pandas as pd
    >>> from designer._internal.canonical import TableDigest
    >>> digest = TableDigest()
    >>> digest.update(pd.DataFrame({"b": [1, 2], "a": ["x", "y"]}))
    >>> digest.update(pd.DataFrame({"b": [3.0], "a": ["z"]}))
    >>> whole = TableDigest()
    >>> whole.update(pd.DataFrame({"a": ["x", "y", "z"], "b": [1, 2, 3]}, index=[9, 8, 7]))
    >>> digest.hexdigest() == whole.hexdigest()
    True
    """

    def __init__(self) -> None:
        self._columns: list[str] | None = None
        self._hashes: list[Any] = []
        self.rows = 0

    def update(self, frame: Any) -> None:
        """Add the rows of the DataFrame ``frame`` (its columns are the first chunk's, in any order)."""
        self.update_columns([str(c) for c in frame.columns],
                            [[cell_text(v) for v in frame.iloc[:, i].tolist()] for i in range(frame.shape[1])])

    def update_columns(self, names: list[str], columns: list[list[str | None]]) -> None:
        """Add rows given as columns of canonical cells (:func:`cell_text`), named ``names``."""
        if len(set(names)) != len(names):
            raise ValueError(f"two columns share a name among {names}")
        if self._columns is None:
            self._columns = sorted(names, key=lambda s: s.encode("utf-8", "surrogatepass"))
            for name in self._columns:
                h = hashlib.sha256()
                raw = name.encode("utf-8", "surrogatepass")
                h.update(struct.pack("<Q", len(raw)) + raw)
                self._hashes.append(h)
        elif sorted(names) != sorted(self._columns):
            raise ValueError(f"a chunk's columns {names} are not the table's {self._columns}")
        by_name = dict(zip(names, columns))
        for name, h in zip(self._columns, self._hashes):
            h.update(b"".join(_encoded(v) for v in by_name[name]))
        self.rows += len(columns[0]) if columns else 0

    def hexdigest(self) -> str:
        """The table's SHA-256 (hexadecimal)."""
        top = hashlib.sha256(_TAG + struct.pack("<QQ", self.rows, len(self._hashes)))
        for h in self._hashes:
            top.update(h.digest())
        return top.hexdigest()


def _encoded(text: str | None) -> bytes:
    if text is None:
        return _NULL
    raw = text.encode("utf-8", "surrogatepass")
    return struct.pack("<Q", len(raw)) + raw


def frame_sha256(frame: Any) -> str:
    """The canonical SHA-256 of a DataFrame (this module's serialization): equal for frames holding the same cells
    in the same rows whatever their index or the order of their columns.

    Parameters
    ----------
    frame : pandas.DataFrame

    Returns
    -------
    str
        64 hexadecimal digits.

    Examples
    --------
    >>> import pandas as pd
    >>> from designer._internal.canonical import frame_sha256
    >>> a = pd.DataFrame({"response": ["{yes}", "{no}"], "id": [1, 2]})
    >>> frame_sha256(a) == frame_sha256(a[["id", "response"]].set_axis([5, 6]))
    True
    >>> frame_sha256(a) == frame_sha256(a.assign(response=["{no}", "{no}"]))
    False
    """
    digest = TableDigest()
    digest.update(frame)
    return digest.hexdigest()


def chunks_sha256(chunks: Iterable[Any]) -> str:
    """The canonical SHA-256 of a table given as DataFrame chunks (see :class:`TableDigest`)."""
    digest = TableDigest()
    for chunk in chunks:
        digest.update(chunk)
    return digest.hexdigest()


#: The cells pandas' ``read_csv`` reads as missing by default.
PANDAS_NA = frozenset(["", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
                       "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"])
