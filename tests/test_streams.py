"""Every command as a separate process, in every format: its stdout parses as the format says and its
stderr holds only designer's own lines.

A separate process is the point: native libraries write to file descriptor 1 directly (HiGHS 1.16 prints
a banner from its first constructor in a process), which an in-process test with ``capsys`` never sees.
"""

from __future__ import annotations

import io
import json
import math
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from .test_outputs import CASES, folder  # noqa: F401 - the fixture is used by name

FORMATS = ("json", "csv", "table")


def _strict_json(text: str) -> object:
    def refuse(constant: str) -> float:
        raise ValueError(f"{constant} is not JSON")

    return json.loads(text, parse_constant=refuse)


def _run(cwd, argv: list[str]) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    return subprocess.run([sys.executable, "-m", "designer", *argv], cwd=cwd, capture_output=True, text=True,
                          timeout=300, env=env, stdin=subprocess.DEVNULL)


def _lines(line: str, fmt: str, tag: str) -> list[str]:
    argv = shlex.split(line.replace("{tmp}", f"stream-{tag}-{fmt}.csv"))
    return argv if fmt == "table" else [*argv, "--format", fmt]


@pytest.mark.parametrize("line", CASES)
def test_stdout_parses_in_every_format(folder, line):  # noqa: F811
    tag = str(abs(hash(line)))
    for fmt in FORMATS:
        proc = _run(folder, _lines(line, fmt, tag))
        assert proc.returncode == 0, proc.stderr
        assert "Running HiGHS" not in proc.stdout + proc.stderr
        foreign = [x for x in proc.stderr.splitlines() if x.strip() and not x.startswith("designer")]
        assert not foreign, f"stderr lines not designer's own: {foreign}"
        if fmt == "json":
            obj = _strict_json(proc.stdout)
            assert isinstance(obj, dict)
        elif fmt == "csv":
            table = pd.read_csv(io.StringIO(proc.stdout))
            assert len(table.columns) >= 2 and len(table) >= 1
            # rectangular: every data line has as many fields as the header
            widths = {len(r) for r in pd.read_csv(io.StringIO(proc.stdout), header=None, dtype=str).values}
            assert len(widths) == 1
        else:
            assert proc.stdout.strip(), "a table was expected"
            assert not proc.stdout.lstrip().startswith(("{", "[")), "the table format printed JSON"


def test_a_native_write_inside_the_guard_never_reaches_stdout(tmp_path):
    """printf from C inside the guard is discarded, even when buffered; Python output around it is kept."""
    script = tmp_path / "probe.py"
    script.write_text(
        "import ctypes, sys\n"
        "from designer._internal.native import native_output_silenced\n"
        "libc = ctypes.CDLL(None)\n"
        "print('before', flush=False)\n"
        "with native_output_silenced():\n"
        "    libc.printf(b'native chatter\\n')\n"
        "    with native_output_silenced():\n"
        "        libc.printf(b'nested chatter\\n')\n"
        "    libc.printf(b'still inside\\n')\n"
        "print('after')\n"
        "libc.printf(b'native after\\n'); libc.fflush(None)\n"
    )
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["before", "after", "native after"]


def test_the_first_highs_of_a_process_prints_nothing(tmp_path):
    """The design command's first solver call in a fresh process: stdout is exactly the JSON."""
    proc = _run(Path(__file__).resolve().parents[1], ["design", "problems/gwrr-dont-know.toml", "--format", "json"])
    assert proc.returncode == 0, proc.stderr
    obj = _strict_json(proc.stdout)
    assert isinstance(obj, dict) and math.isclose(obj["epsilon"], 1.0)
