"""File helpers: strict UTF-8 reading with clear errors, and atomic writing."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

#: Largest text file read whole (mechanism and problem files are far smaller; answer files are streamed).
MAX_TEXT_BYTES = 64 * 2**20


def file_sha256(path: str | os.PathLike[str]) -> str:
    """The SHA-256 of a file's bytes (hexadecimal), read in blocks of 1 MiB."""
    import hashlib

    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def unopened(path: str | os.PathLike[str], exc: OSError) -> str:
    """The one line naming ``path`` for a failure ``exc`` to open or read it."""
    if isinstance(exc, FileNotFoundError):
        return f"{path}: no such file"
    if isinstance(exc, IsADirectoryError):
        return f"{path}: is a directory, expected a file"
    return f"{path}: cannot read ({exc.strerror})"


@contextlib.contextmanager
def opening_errors(path: str | os.PathLike[str], error: type[Exception]) -> Iterator[None]:
    """Turn a failure to open or read ``path`` into one ``error`` line naming the file (:func:`unopened`)."""
    try:
        yield
    except OSError as exc:
        raise error(unopened(path, exc)) from None


def read_text(path: str | os.PathLike[str], *, error: type[Exception] = ValueError,
              max_bytes: int = MAX_TEXT_BYTES) -> str:
    """Read a UTF-8 text file (a BOM is allowed) of at most ``max_bytes``; every failure is one clear ``error``."""
    p = Path(path)
    with opening_errors(p, error), p.open("rb") as fh:
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise error(f"{p}: larger than {max_bytes // 2**20} MiB; this is not a file of the expected kind")
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
    """Write ``data`` to ``path`` atomically; see :func:`atomic_writer`."""
    with atomic_writer(path, overwrite=overwrite) as fh:
        fh.write(data)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _anonymous(folder: Path) -> int | None:
    """An unnamed file in ``folder`` (Linux's ``O_TMPFILE``), given the permissions the umask allows: it vanishes
    when its last descriptor closes, even when the process is killed. ``None`` where the system or the file system
    has no such files."""
    flag = getattr(os, "O_TMPFILE", None)
    if flag is None or not os.path.isdir("/proc/self/fd"):
        return None
    try:
        return os.open(folder, flag | os.O_WRONLY | os.O_CLOEXEC, 0o666)  # the mode is masked by the umask
    except OSError:  # EOPNOTSUPP, EISDIR or EINVAL: a file system without unnamed files
        return None


def _name(fd: int, path: Path) -> None:
    """Give the unnamed file ``fd`` the name ``path`` (``linkat`` following ``/proc/self/fd/N``; a directory
    descriptor is passed so that Python calls ``linkat``, not ``link``, which would link the symbolic link)."""
    root = os.open("/", os.O_RDONLY | os.O_CLOEXEC)
    try:
        os.link(f"/proc/self/fd/{fd}", path, src_dir_fd=root, follow_symlinks=True)
    finally:
        os.close(root)


#: A named temporary file left by a writer killed on a file system without unnamed files is removed by the next
#: writer to the same name once it is this old (seconds) and no process holds its lock.
STALE_SECONDS = 10.0


def _remove_stale(folder: Path, name: str) -> None:
    """Remove the temporary files ``.NAME.*.tmp`` of writers that died (each live writer holds an advisory lock on
    its own)."""
    import fcntl
    import time

    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        if not (entry.name.startswith(f".{name}.") and entry.name.endswith(".tmp")):
            continue
        try:
            if time.time() - entry.stat(follow_symlinks=False).st_mtime < STALE_SECONDS:
                continue
            fd = os.open(entry.path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            pass  # a live writer holds it
        else:
            with contextlib.suppress(OSError):
                os.unlink(entry.path)
        finally:
            os.close(fd)


def _is_device(p: Path) -> bool:
    """True when ``p`` exists and is neither a regular file nor a folder (a character or block device, a FIFO, a
    socket), following links."""
    import stat

    try:
        mode = os.stat(p).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


@contextlib.contextmanager
def atomic_writer(path: str | os.PathLike[str], *, overwrite: bool = True) -> Iterator[BinaryIO]:
    """A binary file that becomes ``path`` only when the ``with`` block ends without an exception.

    It is written as an unnamed file in the same folder (Linux's ``O_TMPFILE``; elsewhere a hidden temporary file
    ``.NAME.XXXX.tmp``), synced, given the permissions the umask allows (``0644`` under umask ``022``) and linked or
    renamed into place, so a reader never sees a half-written file and an interrupted write (exception, Ctrl-C,
    SIGTERM through the CLI) leaves nothing behind. Killed outright (SIGKILL), an unnamed file leaves nothing
    either; a named one is removed by the next write to the same name.

    Raises
    ------
    FileExistsError
        If ``overwrite`` is False and ``path`` exists (checked again at the rename: no race with another
        writer).
    """
    p = Path(path)
    taken = f"{p}: already exists; choose another name or remove it first"
    if not overwrite and p.exists():
        raise FileExistsError(taken)
    if overwrite and _is_device(p):
        # A device or a pipe (``--out /dev/null``, a FIFO a reader waits on) is written in place: renaming a file
        # over it would replace the device itself (run as root, ``/dev/null`` became a regular file).
        with open(p, "wb") as fh:
            yield fh
        return
    folder = p.parent if str(p.parent) else Path(".")
    fd = _anonymous(folder)
    if fd is not None:
        try:
            with os.fdopen(fd, "wb", closefd=False) as fh:
                yield fh
                fh.flush()
                os.fsync(fh.fileno())
            if not overwrite:
                try:
                    _name(fd, p)
                except FileExistsError:
                    raise FileExistsError(taken) from None
            else:
                import secrets

                named = folder / f".{p.name}.{secrets.token_hex(6)}.tmp"
                _name(fd, named)
                try:
                    os.replace(named, p)
                except BaseException:
                    with contextlib.suppress(OSError):
                        os.unlink(named)
                    raise
        finally:
            os.close(fd)
        return
    _remove_stale(folder, p.name)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=folder)
    try:
        import fcntl

        fcntl.flock(fd, fcntl.LOCK_EX)  # held while this writer lives: the sign that the file is not stale
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        if not overwrite:
            # link() fails if the target appeared meanwhile: no race with another writer.
            try:
                os.link(tmp, p)
            except FileExistsError:
                raise FileExistsError(taken) from None
            except OSError:  # file systems without hard links
                if p.exists():
                    raise FileExistsError(taken) from None
                os.replace(tmp, p)
            else:
                os.unlink(tmp)
        else:
            os.replace(tmp, p)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
