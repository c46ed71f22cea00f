"""The limits of every source: regular files and folders only, folders not too deep, names a reader can tell
apart."""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence

from ..exceptions import DataError

__all__ = ["MAX_DEPTH", "column_names", "regular_file"]

#: How deep a dataset folder's parts may lie below it.
MAX_DEPTH = 16


def regular_file(path: str, what: str = "the input") -> None:
    """Refuse, without opening it, a path that is not a regular file or a folder: a FIFO would block until a writer
    comes (a named pipe) or could be read only once (process substitution), a device never ends.

    Examples
    --------
    >>> from designer.tables.checks import regular_file
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
    >>> from designer.tables.checks import column_names
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
