"""What a pip user gets works from an empty folder: run the front door's commands against an installed wheel.

Usage (from .ci/run, after ``make dist`` and a clean virtual environment holding only the wheel)::

    python .ci/front_door.py VENV

The commands are read from the checkout: every ``designer ...`` line of the README's, the site's home page's and
the guide's first pages' ``sh`` and ``text`` blocks (a page's lines in order, in one fresh folder per page: a later
line may read what an earlier one wrote), the README's Python blocks (run by the wheel's Python in that folder),
and every ``e.g. designer ...`` example of the installed ``designer --help`` (each alone, in a fresh folder). They
run with only VENV/bin and the system's folders on the PATH, no PYTHONPATH, from folders outside the checkout, so
nothing but the wheel can be imported. ``designer studio`` lines serve until stopped: their ``--help`` runs instead.
Every command must exit 0; the script prints one line per command and exits 1 naming those that did not.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: The pages a new user reads first, in reading order (a page that does not exist yet is left out).
PAGES = ["README.md", "docs/index.md", "docs/guide/index.md", "docs/guide/getting-started.md"]
#: Commands that serve until stopped: their --help is run instead.
SERVES = ("studio",)
#: Seconds one command may take (the sweep example designs 300 problems on two workers).
TIMEOUT = 900


def shell_lines(text: str) -> list[str]:
    """The ``designer ...`` lines of a page's ``sh``, ``text``, ``console`` and ``bash`` blocks in the page's order,
    comments removed; a line continued with a backslash is joined."""
    lines: list[str] = []
    for block in re.findall(r"^```(?:sh|text|console|bash)\n(.*?)^```", text, flags=re.M | re.S):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.strip().removeprefix("$ ")
            if line.startswith("designer "):
                lines.append(line.split("  #", 1)[0].strip())
    return lines


def python_blocks(text: str) -> list[str]:
    return [b.split("```", 1)[0] for b in text.split("```python")[1:]]


def help_examples(env: dict[str, str]) -> list[str]:
    """The ``e.g. designer ...`` lines of the installed command's ``--help``."""
    out = subprocess.run(["designer", "--help"], env=env, capture_output=True, text=True, check=True, timeout=60)
    return [line.split("e.g. ", 1)[1].strip() for line in out.stdout.splitlines() if "e.g. designer " in line]


def run(argv: list[str], folder: Path, env: dict[str, str], label: str, failed: list[str]) -> None:
    """Run one command in ``folder``; print its status and time; remember a failure."""
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(argv, cwd=folder, env=env, capture_output=True, text=True, timeout=TIMEOUT,
                              stdin=subprocess.DEVNULL, check=False)
        code, err = proc.returncode, proc.stderr.strip()
    except subprocess.TimeoutExpired:
        code, err = -1, f"still running after {TIMEOUT} s"
    seconds = time.perf_counter() - t0
    print(f"  exit {code:>3}  {seconds:6.1f} s  {label}", flush=True)
    if code != 0:
        failed.append(label)
        for line in err.splitlines()[-5:]:
            print(f"           | {line}", flush=True)


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    venv = Path(sys.argv[1]).resolve()
    bin_dir = venv / "bin"
    if not (bin_dir / "designer").exists():
        print(f"front_door.py: {bin_dir / 'designer'} does not exist; install the wheel there first", file=sys.stderr)
        return 2
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env["PATH"] = os.pathsep.join([str(bin_dir), "/usr/local/bin", "/usr/bin", "/bin"])
    env["MPLBACKEND"] = "Agg"
    failed: list[str] = []
    count = 0
    with tempfile.TemporaryDirectory(prefix="designer-front-door-") as scratch:
        base = Path(scratch)
        for page in PAGES:
            path = ROOT / page
            if not path.exists():
                continue
            text = path.read_text()
            folder = base / page.replace("/", "_")
            folder.mkdir()
            print(f"{page}: in an empty folder, in order", flush=True)
            for line in shell_lines(text):
                argv = shlex.split(line)
                if argv[1] in SERVES:  # serves until stopped: its --help
                    argv, line = [argv[0], argv[1], "--help"], f"{line} (its --help: it serves until stopped)"
                run(argv, folder, env, line, failed)
                count += 1
            if page == "README.md":
                for i, block in enumerate(python_blocks(text), start=1):
                    run([str(bin_dir / "python"), "-c", block], folder, env, f"README.md python block {i}", failed)
                    count += 1
        print("designer --help: each example alone, in an empty folder", flush=True)
        for i, line in enumerate(help_examples(env)):
            folder = base / f"help-{i}"
            folder.mkdir()
            argv = shlex.split(line)
            if argv[1] in SERVES:
                argv, line = [argv[0], argv[1], "--help"], f"{line} (its --help: it serves until stopped)"
            run(argv, folder, env, line, failed)
            count += 1
    if failed:
        print(f"front door: {len(failed)} of {count} commands failed from an empty folder with only the wheel:",
              file=sys.stderr)
        for label in failed:
            print(f"  {label}", file=sys.stderr)
        return 1
    print(f"front door: all {count} commands exited 0 from empty folders with only the wheel installed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
