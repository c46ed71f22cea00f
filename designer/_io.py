"""File helpers: strict UTF-8 reading with clear errors, and atomic writing."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def read_text(path: str | os.PathLike[str], *, error: type[Exception] = ValueError) -> str:
    """Read a UTF-8 text file (a BOM is allowed); every failure becomes one clear ``error``."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise error(f"{p}: no such file") from None
    except IsADirectoryError:
        raise error(f"{p}: is a directory, expected a file") from None
    except OSError as exc:
        raise error(f"{p}: cannot read ({exc.strerror})") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise error(f"{p}: not UTF-8 text (bad byte at offset {exc.start}); save the file as UTF-8") from None
    if "\x00" in text:
        raise error(f"{p}: contains NUL bytes; expected a text file")
    return text


def atomic_write_text(path: str | os.PathLike[str], text: str, *, overwrite: bool = True) -> None:
    """Write ``text`` (UTF-8) atomically; see :func:`atomic_write_bytes`."""
    atomic_write_bytes(path, text.encode("utf-8"), overwrite=overwrite)


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes, *, overwrite: bool = True) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder and a rename.

    A reader never sees a half-written file, and an interrupted write leaves no partial output.

    Raises
    ------
    FileExistsError
        If ``overwrite`` is False and ``path`` exists.
    """
    p = Path(path)
    if not overwrite and p.exists():
        raise FileExistsError(f"{p}: already exists; choose another name or remove it first")
    folder = p.parent if str(p.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if not overwrite:
            # link() fails if the target appeared meanwhile: no race with another writer.
            try:
                os.link(tmp, p)
            except FileExistsError:
                raise FileExistsError(f"{p}: already exists; choose another name or remove it first") from None
            except OSError:  # file systems without hard links
                if p.exists():
                    raise FileExistsError(f"{p}: already exists; choose another name or remove it first") from None
                os.replace(tmp, p)
            else:
                os.unlink(tmp)
        else:
            os.replace(tmp, p)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
