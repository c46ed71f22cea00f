"""A release's files made whole in a hidden staging folder beside the output, then placed together, the data
last (docs/theory.md section 7.5).

``randomize`` holds a lock on its output's name (``.OUT.designer-lock``, an advisory ``flock`` that the system
drops when the process dies, even under SIGKILL), writes everything into ``.OUT.designer-release-XXXXXXXX``, and
places the files with ``link`` (never replacing a file) or, for a folder, ``rename``: the stratum designs and the
drawn channels first, then the manifest, then the randomized data. Before the first placement it writes a journal
of what goes where, with every file's SHA-256. A release killed between two placements has placed designs or a
manifest, never data without its manifest; the next ``randomize`` to the same output takes the lock, reads the
journal, removes what that release had placed (the files whose SHA-256 it recorded) and its staging folder, and
says so. The staging folder holds only released values (randomized answers and kept columns), never a true
answer.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .._internal.io import file_sha256 as _digest
from ..exceptions import InvalidArgumentError

JOURNAL = "journal.json"


def _hidden(out: str, what: str) -> str:
    folder, name = os.path.split(os.path.abspath(out))
    return os.path.join(folder, f".{name}.designer-{what}")


def staging_prefix(out: str) -> str:
    """The path prefix of ``out``'s staging folders (``.OUT.designer-release-``)."""
    return _hidden(out, "release-")


@contextlib.contextmanager
def output_lock(out: str) -> Iterator[None]:
    """Hold ``out``'s lock for the ``with`` block: one ``randomize`` at a time writes an output; another is refused
    in one line. The lock file is removed when the block ends (a killed process leaves it unlocked, and the next
    holder removes it)."""
    import fcntl
    import signal

    path = _hidden(out, "lock")
    # SIGTERM and SIGINT wait while the lock is taken: delivered between the file's creation and the block below,
    # they would leave the lock file behind; delivered once the block is entered, its finally removes it
    stopping = {signal.SIGTERM, signal.SIGINT}
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, stopping)
    try:
        while True:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                raise InvalidArgumentError(f"{out}: another randomize is writing it now (it holds {path}); wait for "
                                           "it to finish, or choose another --out") from None
            try:
                same = os.stat(path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)  # the previous holder removed the file between our open and our lock: take the new one
    except BaseException:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        raise
    try:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # a signal that waited is raised here, inside the block
        yield
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)
        os.close(fd)


@dataclass(frozen=True)
class Placement:
    """One file or folder of a release: where it is staged and where it goes."""

    staged: str
    target: str


def _fingerprint(path: str) -> dict[str, str]:
    """Every file under ``path`` (or ``path`` itself) by its relative name, with its SHA-256."""
    if not os.path.isdir(path):
        return {"": _digest(path)}
    out = {}
    for root, _, files in os.walk(path):
        for name in files:
            full = os.path.join(root, name)
            out[os.path.relpath(full, path)] = _digest(full)
    return out


def _remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)


def _ours(target: str, fingerprint: dict[str, str]) -> bool:
    """Whether ``target`` holds exactly the files a journal recorded (so it was placed by that release)."""
    try:
        return os.path.lexists(target) and _fingerprint(target) == fingerprint
    except OSError:
        return False


@dataclass
class Staging:
    """The staging folder of one release (inside :func:`output_lock`): :meth:`path` names a file in it,
    :meth:`commit` places the staged files, :meth:`discard` removes everything staged."""

    out: str
    folder: str = field(init=False)

    def __post_init__(self) -> None:
        parent = os.path.dirname(os.path.abspath(self.out))
        self.folder = tempfile.mkdtemp(prefix=os.path.basename(staging_prefix(self.out)), dir=parent)

    def path(self, *names: str) -> str:
        return os.path.join(self.folder, *names)

    def discard(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)

    def commit(self, placements: list[Placement]) -> None:
        """Place ``placements`` in order (the data last), each refused if its target exists; the journal written
        first lets the next release undo a placement cut short by SIGKILL. On an error the placed ones are removed
        again and the staging folder discarded."""
        journal = [{"target": os.path.abspath(p.target), "files": _fingerprint(p.staged)} for p in placements]
        tmp = self.path(JOURNAL + ".tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump({"placements": journal}, f)
            f.flush()
            os.fsync(f.fileno())
        os.rename(tmp, self.path(JOURNAL))
        placed: list[str] = []
        try:
            for p in placements:
                if os.path.lexists(p.target):
                    raise InvalidArgumentError(f"{p.target}: already exists; randomize never replaces a file "
                                               "(choose another name)")
                if os.path.isdir(p.staged):
                    os.rename(p.staged, p.target)
                else:
                    try:
                        os.link(p.staged, p.target)
                    except FileExistsError:
                        raise InvalidArgumentError(f"{p.target}: already exists; randomize never replaces a file "
                                                   "(choose another name)") from None
                    except OSError:  # a file system without hard links
                        os.rename(p.staged, p.target)
                placed.append(p.target)
        except BaseException:
            for target in placed:
                _remove(target)
            self.discard()
            raise
        self.discard()


def clean_remains(out: str) -> list[str]:
    """Remove what interrupted releases to ``out`` left (call it holding :func:`output_lock`): their staging
    folders and, when a release was killed while placing its files, the files it had placed (those its journal
    records, byte for byte) unless its data was placed too (then the release is complete). Returns one sentence per
    folder removed."""
    prefix = staging_prefix(out)
    parent = os.path.dirname(prefix)
    notes = []
    for name in sorted(os.listdir(parent)):
        folder = os.path.join(parent, name)
        if not folder.startswith(prefix) or not os.path.isdir(folder):
            continue
        undone = []
        try:
            with open(os.path.join(folder, JOURNAL), encoding="utf-8") as f:
                journal: Any = json.load(f)["placements"]
        except (OSError, ValueError, KeyError, TypeError):
            journal = []
        if journal and not _ours(journal[-1]["target"], journal[-1]["files"]):
            for entry in journal:
                if _ours(entry["target"], entry["files"]):
                    _remove(entry["target"])
                    undone.append(entry["target"])
        shutil.rmtree(folder, ignore_errors=True)
        notes.append(f"removed {folder}, left by an interrupted release of {out}"
                     + (f", and the files it had placed ({', '.join(undone)})" if undone else ""))
    return notes
