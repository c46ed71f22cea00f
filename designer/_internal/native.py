"""Keep native libraries off the standard output (docs/theory.md, section 6.1).

designer's standard output carries only a command's result (a table, JSON or CSV). Compiled solvers
may write there on their own: HiGHS 1.16 prints a two-line banner from its constructor, before any
option (``output_flag``) can be set, and other native code may print from C ``printf``. Python-level
redirection (``contextlib.redirect_stdout``) cannot catch that, so :func:`native_output_silenced`
points file descriptor 1 at ``/dev/null`` for the duration of a native call and flushes the C library's
buffers before it points it back, so nothing buffered there reaches the real stdout later.

The guard is process-wide (a file descriptor belongs to the process) and re-entrant: nested or
concurrent guards in several threads keep descriptor 1 silenced until the last one leaves.
"""

from __future__ import annotations

import ctypes
import functools
import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import ParamSpec, TypeVar

__all__ = ["native_output_silenced", "silenced"]

_LOCK = threading.Lock()
_DEPTH = 0
_SAVED: int | None = None

P = ParamSpec("P")
R = TypeVar("R")


def _flush_c_streams() -> None:
    """``fflush(NULL)``: write out whatever the C library holds for any stream (no-op where unavailable)."""
    try:
        ctypes.CDLL(None).fflush(None)
    except (OSError, AttributeError):  # pragma: no cover - a platform without a C library handle
        pass


def _flush_python_stdout() -> None:
    stream = sys.stdout
    if stream is not None:
        try:
            stream.flush()
        except (OSError, ValueError):  # closed or broken stdout: nothing of ours is waiting there
            pass


@contextmanager
def native_output_silenced() -> Iterator[None]:
    """Within this block, whatever native code writes to file descriptor 1 is discarded.

    Python's own ``sys.stdout`` is flushed on entry, so nothing designer already printed is lost; the C
    library's buffers are flushed on exit, before descriptor 1 is restored.
    """
    global _DEPTH, _SAVED
    with _LOCK:
        if _DEPTH == 0:
            _flush_python_stdout()
            try:
                saved = os.dup(1)
            except OSError:  # no descriptor 1 at all: nothing to protect
                saved = None
            if saved is not None:
                devnull = os.open(os.devnull, os.O_WRONLY)
                try:
                    os.dup2(devnull, 1)
                finally:
                    os.close(devnull)
            _SAVED = saved
        _DEPTH += 1
    try:
        yield
    finally:
        with _LOCK:
            _DEPTH -= 1
            if _DEPTH == 0:
                _flush_c_streams()
                if _SAVED is not None:
                    os.dup2(_SAVED, 1)
                    os.close(_SAVED)
                _SAVED = None


def silenced(func: Callable[P, R]) -> Callable[P, R]:
    """Decorator: run ``func`` inside :func:`native_output_silenced`."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with native_output_silenced():
            return func(*args, **kwargs)

    return wrapper
