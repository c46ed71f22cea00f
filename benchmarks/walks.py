"""The data, walked: which modules of ``designer/`` a file's data passes through on its way down (issue 60).

Runs three commands in a scratch copy of ``examples/``, in this process, under ``sys.setprofile``, and prints for
each the modules ("rooms") of the frames that receive the data, in order, until the data reaches its end: the
likelihood (``estimate``, ``regress``) or the writer (``randomize``)::

    designer randomize answers.csv --mechanism mechanisms/q2x3.csv --column answer --out released.csv \
        --seed 1 --simulation
    designer estimate released.csv --mechanism mechanisms/q2x3.csv
    designer regress regress.csv --mechanism mechanisms/gwrr.csv --formula "response ~ age"

What "the data" is, so that the count can be repeated:

* It starts as the value the command's parser stored for its file argument (``args.answers``,
  ``args.responses``, ``args.data``), taken when the command's ``cmd_*`` function of ``designer/cli/`` is
  entered; that function is the first step.
* A frame *receives* the data when one of its arguments (positional, keyword, ``*args`` or ``**kwargs``) is the
  data, or is a list, tuple, set or dict directly holding it (a dict by its values).
* What a frame that received the data returns or yields becomes the data too (any Python frame, of designer or
  not: ``Path(data)``, a reader, its record batches, the answer codes, the counts, the design matrix), unless it
  is a scalar (``None``, a bool, a number, a string or bytes) other than a string naming the same file (a
  resolved path). Objects are compared by identity (the tracer keeps
  them alive, so an identity is never reused). An object made by calling a class with the data among its fields
  (a request, a ``ReleaseInput``) is not the data (its ``__init__`` returns nothing): a frame that receives only
  such an object does not receive the data.
* So is, by value, any numpy array, Arrow table, record batch, array or chunked array, pandas frame or series
  with as many rows as the file has data rows, any list with as many items, and any numeric numpy vector of
  non-negative entries summing to that number of rows (the counts): these catch a copy made inside a frame
  (``np.asarray(counts, float)``, a column's ``to_pylist()``) that identity misses.

A *step* is a call of a function of ``designer/`` whose frame receives the data; a generator's later resumptions
are not new steps. Its *room* is the function's module (its file under ``designer/``). Consecutive steps in one
room are one *visit*: ``moves`` is the number of visits less one, ``rooms`` the number of different rooms, and
``returns`` the number of visits to a room the data had visited and left. A move is a *climb* when the frame that
receives the data is not called (directly or not) from the frame of the step before it: the data had come back
up the stack. The walk ends at the first step in the end room, which is the last step counted.

Run: ``python benchmarks/walks.py [--markdown]``; tests/test_walks.py checks docs/architecture.md against it.
"""

from __future__ import annotations

import contextlib
import io
import os
import pathlib
import shutil
import sys
import tempfile
import types
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "designer"

#: The commands walked: (name, argv, the file argument's attribute of ``args``, the end room).
COMMANDS: list[tuple[str, list[str], str, str]] = [
    ("randomize", ["randomize", "answers.csv", "--mechanism", "mechanisms/q2x3.csv", "--column", "answer",
                   "--out", "released.csv", "--seed", "1", "--simulation"], "answers", "tables/writers.py"),
    ("estimate", ["estimate", "released.csv", "--mechanism", "mechanisms/q2x3.csv"], "responses",
     "estimation/mle.py"),
    ("regress", ["regress", "regress.csv", "--mechanism", "mechanisms/gwrr.csv", "--formula", "response ~ age"],
     "data", "regression/likelihood.py"),
]

_SCALARS = (type(None), bool, int, float, complex, str, bytes)


@dataclass
class Step:
    """One call that received the data: its room (module path under ``designer/``), function, and whether the
    data had climbed back up the stack to reach it."""

    room: str
    function: str
    climb: bool


@dataclass
class Walk:
    """The steps of one command's data, and the counts read off them."""

    command: str
    steps: list[Step] = field(default_factory=list)
    reached: bool = False

    def visits(self) -> list[list[Step]]:
        """The steps grouped into visits: consecutive steps in one room."""
        out: list[list[Step]] = []
        for step in self.steps:
            if out and out[-1][0].room == step.room:
                out[-1].append(step)
            else:
                out.append([step])
        return out

    def counts(self) -> dict[str, int]:
        """``rooms``, ``moves``, ``returns`` and ``climbs`` of the walk."""
        visits = self.visits()
        seen: set[str] = set()
        returns = 0
        for visit in visits:
            returns += visit[0].room in seen
            seen.add(visit[0].room)
        climbs = sum(visit[0].climb for visit in visits[1:])
        return {"rooms": len(seen), "moves": max(len(visits) - 1, 0), "returns": returns, "climbs": climbs}

    def markdown(self) -> str:
        """The walk as docs/architecture.md lists it: one numbered line per visit, ``file:function`` of its steps,
        then the counts."""
        lines = []
        for i, visit in enumerate(self.visits(), 1):
            names: list[str] = []
            for step in visit:
                if step.function not in names:
                    names.append(step.function)
            first = f"`designer/{visit[0].room}:{names[0]}`"
            rest = "".join(f", `{n}`" for n in names[1:])
            up = " (back up)" if i > 1 and visit[0].climb else ""
            lines.append(f"{i}. {first}{rest}{up}")
        c = self.counts()
        lines.append("")
        lines.append(f"**{self.command}: rooms {c['rooms']}, moves {c['moves']}, returns {c['returns']}, "
                     f"climbs {c['climbs']}**")
        return "\n".join(lines)

    def text(self) -> str:
        """The walk as numbered visits, ``file:function`` of each step in the visit."""
        lines = [f"{self.command}:"]
        for i, visit in enumerate(self.visits(), 1):
            names: list[str] = []
            for step in visit:
                if step.function not in names:
                    names.append(step.function)
            up = " (climb)" if i > 1 and visit[0].climb else ""
            lines.append(f"{i:3}. designer/{visit[0].room}: {', '.join(names)}{up}")
        c = self.counts()
        end = "" if self.reached else " (the end room was NOT reached)"
        lines.append(f"     rooms {c['rooms']}, moves {c['moves']}, returns {c['returns']}, climbs {c['climbs']}{end}")
        return "\n".join(lines)


class _Tracer:
    """The profile function: follows the data from frame to frame (see the module's docstring)."""

    def __init__(self, walk: Walk, attribute: str, end: str, rows: int) -> None:
        self.walk = walk
        self.attribute = attribute
        self.end = end
        self.rows = rows
        self.started = False
        self.done = False
        self.kept: dict[int, Any] = {}  # id -> object: the data by identity (kept alive)
        self.holding: dict[int, types.FrameType] = {}  # frames that received the data
        self.last: types.FrameType | None = None
        self.file = ""  # the real path of the file the command reads
        self._rooms: dict[str, str | None] = {}

    def room(self, filename: str) -> str | None:
        """The module path under ``designer/`` of a code's file, or None outside the package."""
        if filename not in self._rooms:
            try:
                self._rooms[filename] = pathlib.Path(filename).resolve().relative_to(PACKAGE).as_posix()
            except ValueError:
                self._rooms[filename] = None
        return self._rooms[filename]

    def mark(self, obj: Any, *, scalar: bool = False) -> None:
        if scalar or not isinstance(obj, _SCALARS) or self._same_file(obj):
            self.kept[id(obj)] = obj

    def _same_file(self, obj: Any) -> bool:
        return isinstance(obj, str) and bool(obj) and os.path.realpath(obj) == self.file

    def is_data(self, obj: Any) -> bool:
        if id(obj) in self.kept and self.kept[id(obj)] is obj:
            return True
        if isinstance(obj, _SCALARS):
            return False
        if isinstance(obj, (list, tuple, set, frozenset)):
            return self._by_value(obj) or any(self._held(x) for x in obj)
        if isinstance(obj, dict):
            return any(self._held(x) for x in obj.values())
        return self._by_value(obj)

    def _held(self, obj: Any) -> bool:
        if isinstance(obj, _SCALARS):
            return id(obj) in self.kept and self.kept[id(obj)] is obj
        return id(obj) in self.kept or self._by_value(obj)

    def _by_value(self, obj: Any) -> bool:
        if isinstance(obj, list):
            return len(obj) == self.rows
        kind = type(obj)
        module = kind.__module__ or ""
        if module.startswith("numpy") and kind.__name__ == "ndarray":
            if obj.ndim >= 1 and obj.shape[0] == self.rows:
                return True
            if obj.ndim == 1 and 0 < obj.size <= 10_000 and obj.dtype.kind in "iuf":
                total = float(obj.sum())
                return abs(total - self.rows) < 1e-6 and bool((obj >= 0).all())
            return False
        if module.startswith("pyarrow"):
            rows = getattr(obj, "num_rows", None)
            if rows is None and kind.__name__.endswith("Array"):
                with contextlib.suppress(TypeError):
                    rows = len(obj)
            return rows == self.rows
        if module.startswith("pandas") and kind.__name__ in ("DataFrame", "Series"):
            return len(obj) == self.rows
        return False

    def arguments(self, frame: types.FrameType) -> list[Any]:
        code = frame.f_code
        n = code.co_argcount + code.co_kwonlyargcount
        names = list(code.co_varnames[:n])
        if code.co_flags & 0x04:  # *args
            names.append(code.co_varnames[n])
            n += 1
        if code.co_flags & 0x08:  # **kwargs
            names.append(code.co_varnames[n])
        local = frame.f_locals
        out: list[Any] = []
        for name in names:
            if name not in local:
                continue
            value = local[name]
            if name == names[-1] and code.co_flags & 0x08 and isinstance(value, dict):
                out.extend(value.values())
            elif code.co_flags & 0x04 and isinstance(value, tuple) and name == code.co_varnames[
                    code.co_argcount + code.co_kwonlyargcount]:
                out.extend(value)
            else:
                out.append(value)
        return out

    def __call__(self, frame: types.FrameType, event: str, arg: Any) -> None:
        if self.done:
            return
        if event == "call":
            self._call(frame)
        elif event == "return" and id(frame) in self.holding and self.holding[id(frame)] is frame:
            self.mark(arg)

    def _call(self, frame: types.FrameType) -> None:
        code = frame.f_code
        room = self.room(code.co_filename)
        if not self.started:
            if room is not None and room.startswith("cli/") and code.co_name.startswith("cmd_"):
                args = frame.f_locals.get("args")
                value = getattr(args, self.attribute, None)
                if value is None:
                    return
                self.started = True
                self.file = os.path.realpath(os.fspath(value))
                self.mark(value, scalar=True)
                self.holding[id(frame)] = frame
                self._step(frame, room)
            return
        if id(frame) in self.holding and self.holding[id(frame)] is frame:
            return  # a generator resumed: not a new step
        arguments = self.arguments(frame)
        if not any(self.is_data(a) for a in arguments):
            return
        for a in arguments:  # a copy caught by value is the data from now on, by identity too
            if self._by_value(a):
                self.mark(a)
        self.holding[id(frame)] = frame
        if room is not None:
            self._step(frame, room)

    def _step(self, frame: types.FrameType, room: str) -> None:
        climb = True
        up: types.FrameType | None = frame.f_back
        while up is not None:
            if up is self.last:
                climb = False
                break
            up = up.f_back
        if self.last is None:
            climb = False
        self.walk.steps.append(Step(room, frame.f_code.co_qualname, climb))
        self.last = frame
        if room == self.end:
            self.walk.reached = True
            self.done = True


def _data_rows(path: pathlib.Path) -> int:
    import pyarrow.csv as pacsv

    return int(pacsv.read_csv(path).num_rows)


@contextlib.contextmanager
def scratch_examples() -> Iterator[pathlib.Path]:
    """A temporary copy of ``examples/``'s data files and mechanisms."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = pathlib.Path(tmp)
        for name in ("answers.csv", "regress.csv"):
            shutil.copy(ROOT / "examples" / name, folder / name)
        shutil.copytree(ROOT / "examples" / "mechanisms", folder / "mechanisms")
        yield folder


def walk_command(command: str, argv: list[str], attribute: str, end: str, folder: pathlib.Path) -> Walk:
    """Run one command in ``folder`` under the tracer and return the walk of its file's data."""
    from designer.cli import main

    rows = _data_rows(folder / argv[1])
    walk = Walk(command)
    tracer = _Tracer(walk, attribute, end, rows)
    here = os.getcwd()
    os.chdir(folder)
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            sys.setprofile(tracer)
            try:
                status = main(argv)
            finally:
                sys.setprofile(None)
    finally:
        os.chdir(here)
    if status != 0:
        raise RuntimeError(f"designer {' '.join(argv)} exited {status}: {err.getvalue().strip()}")
    return walk


def walks() -> list[Walk]:
    """The three walks, in the order of :data:`COMMANDS` (``randomize`` writes the file ``estimate`` reads)."""
    with scratch_examples() as folder:
        return [walk_command(name, argv, attribute, end, folder) for name, argv, attribute, end in COMMANDS]


def main() -> None:
    markdown = "--markdown" in sys.argv[1:]  # as docs/architecture.md lists the walks
    for walk in walks():
        print(walk.markdown() if markdown else walk.text())
        print()


if __name__ == "__main__":
    main()
