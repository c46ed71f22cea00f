"""The output blocks of the documentation's pages, checked against and rewritten from the real output.

A page shows what its code prints with an *output block*: the line ``<!-- output -->`` and, right after it, a
```` ```text ```` block. It shows the output of the nearest code block above the marker: for a ```` ```sh ````
block, the standard output of its last ``designer`` line; for a ```` ```python ```` block, what the block prints.
The page runs as the tests run it: in a scratch folder holding copies of ``examples/`` and ``problems/``, every
``designer`` line in order (with ``--quiet``), then every Python block in order. Nothing is cut or abridged; the
scratch folder's path is printed as ``.`` (:func:`normalise`), and timings are left out of the comparison
(:func:`comparable`), since they differ on every run.

A ```` ```console ```` block is a session whose output is checked as a whole: its ``$ designer ...`` lines run
after the page's other code, each followed by what it prints (standard output, then standard error: the place for a
command that fails), and ``$ echo $?`` by the exit status of the line before.

``tests/test_docs_commands.py`` fails when a block differs from the real output; this module rewrites the blocks
(from the repository root):

    python -m docs._ext.refresh_outputs            # every page of docs/ and docs/guide/
    python -m docs._ext.refresh_outputs --check    # list the pages whose blocks are out of date, exit 1 if any
    python -m docs._ext.refresh_outputs docs/guide/plan.md
"""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import shlex
import shutil
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1]
ROOT = DOCS.parent
#: The marker line before an output block.
MARK = "<!-- output -->"
#: Commands shown but never run (the studio serves a web app until it is stopped).
NOT_RUN = ("studio",)
_FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)
_OUTPUT = re.compile(r"^" + re.escape(MARK) + r"[ \t]*\n```text[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)
#: Timings, which differ on every run: a design's ``path: ...; 0.36 s`` and JSON ``"seconds"``.
_TIMINGS = (re.compile(r"(?m)^(path: .*; )\d+\.\d+( s)$"), re.compile(r'("seconds": )[-+.\deE]+()'))
#: Round-off that differs between numpy builds (a KKT violation of a few ulps): compared as ``<round-off>``.
_ROUNDOFF = re.compile(r"(?<=KKT violation )\d+(?:\.\d+)?(?:e[-+]?\d+)?")
#: The largest KKT violation taken for round-off.
ROUNDOFF = 1e-12


def pages() -> list[Path]:
    """The pages whose code the tests run: the guide, then every other page of docs/."""
    return sorted((DOCS / "guide").glob("*.md")) + sorted(DOCS.glob("*.md"))


def command_lines(text: str) -> list[tuple[int, str]]:
    """``(offset, line)`` of every ``designer ...`` line of the page's ```sh blocks, comments removed, in order."""
    found = []
    for block in _FENCE.finditer(text):
        if block.group(1) != "sh":
            continue
        start = block.start(2)
        for line in block.group(2).splitlines(keepends=True):
            if line.startswith("designer "):
                found.append((start, line.split("  #", 1)[0].strip()))
            start += len(line)
    return found


def python_blocks(text: str) -> list[tuple[int, str]]:
    """``(offset, code)`` of every ```python block of the page, in order."""
    return [(block.start(2), block.group(2)) for block in _FENCE.finditer(text) if block.group(1) == "python"]


@dataclass(frozen=True)
class OutputBlock:
    """One output block: what it shows (``("line", i)``: the page's i-th ``designer`` line; ``("python", i)``: its
    i-th Python block) and where its text sits in the page."""

    source: tuple[str, int]
    start: int  # offset of the block's first character of text
    end: int  # offset just after its last line
    text: str


def console_blocks(text: str) -> list[OutputBlock]:
    """The page's ```console sessions, in order (``source`` ``("console", i)``; ``text`` the session)."""
    return [OutputBlock(("console", i), block.start(2), block.end(2), block.group(2))
            for i, block in enumerate(b for b in _FENCE.finditer(text) if b.group(1) == "console")]


def output_blocks(text: str) -> list[OutputBlock]:
    """The page's output blocks, each with the code block above it."""
    code = sorted([(offset, ("line", i)) for i, (offset, _) in enumerate(command_lines(text))]
                  + [(offset, ("python", i)) for i, (offset, _) in enumerate(python_blocks(text))])
    lines = command_lines(text)
    blocks = []
    for match in _OUTPUT.finditer(text):
        above = [source for offset, source in code if offset < match.start()]
        if not above:
            raise ValueError(f"the output block at offset {match.start()} has no designer line or Python block above")
        if above[-1][0] == "line" and lines[above[-1][1]][1].split()[1] in NOT_RUN:
            raise ValueError(f"an output block shows a command that is not run: {lines[above[-1][1]][1]}")
        blocks.append(OutputBlock(above[-1], match.start(1), match.end(1), match.group(1)))
    marks = len(re.findall(r"^" + re.escape(MARK), text, flags=re.M))
    if marks != len(blocks):
        raise ValueError(f"{marks} '{MARK}' markers but {len(blocks)} output blocks: a marker must be followed "
                         f"directly by a ```text block")
    return blocks


def normalise(out: str, folder: Path | str) -> str:
    """Output as a page shows it: the scratch folder's path (it differs on every run) printed as ``.``, and ending
    with one newline, so the block's fence closes on its own line."""
    folder = str(folder)
    out = out.replace(folder + "/", "").replace(folder, ".")
    return out if out.endswith("\n") else out + "\n"


def comparable(out: str) -> str:
    """An output block or a real output with its timings replaced by ``<seconds>``: the page keeps the timing of the
    run that wrote it, and the tests compare everything else."""
    for pattern in _TIMINGS:
        out = pattern.sub(r"\1<seconds>\2", out)
    return _ROUNDOFF.sub(lambda m: "<round-off>" if float(m.group()) <= ROUNDOFF else m.group(), out)


@contextlib.contextmanager
def scratch_folder() -> Iterator[Path]:
    """A temporary working folder with copies of examples/ and problems/, as the pages' commands expect."""
    with tempfile.TemporaryDirectory(prefix="designer-docs-") as tmp, contextlib.chdir(tmp):
        for folder in ("examples", "problems"):
            shutil.copytree(ROOT / folder, Path(tmp) / folder, ignore=shutil.ignore_patterns("output"))
        yield Path(tmp)


def run_line(line: str) -> tuple[int, str, str]:
    """Run one page line in the current folder as the tests do; ``(exit code, stdout, stderr)``."""
    from designer.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([*shlex.split(line)[1:], "--quiet"])
    return code, out.getvalue(), err.getvalue()


def run_console(session: str) -> str:
    """A ```console session run in the current folder: its ``$`` lines, each followed by its real output."""
    shown, status = [], 0
    for line in session.splitlines():
        if not line.startswith("$ "):
            continue
        shown.append(line)
        command = line[2:].strip()
        if command == "echo $?":
            shown.append(str(status))
        elif command.startswith("designer "):
            status, out, err = run_line(command)
            shown += (out + err).splitlines()
        else:
            raise ValueError(f"a console session runs only designer lines and 'echo $?': {line}")
    return "\n".join(shown) + "\n"


def run_python(code: str, name: str) -> str:
    """Run one Python block of a page in the current folder, in a namespace of its own; what it prints."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, name, "exec"), {})
    return out.getvalue()


def real_outputs(text: str, name: str = "page") -> dict[tuple[str, int], str]:
    """The page's code run in a scratch folder (its lines in order, then its Python blocks, then its console
    sessions): ``{source: normalised output}`` for what the output blocks and the sessions show."""
    wanted = {block.source for block in output_blocks(text)}
    outputs: dict[tuple[str, int], str] = {}
    with scratch_folder() as folder:
        for index, (_, line) in enumerate(command_lines(text)):
            if line.split()[1] in NOT_RUN:
                continue
            code, out, err = run_line(line)
            if code != 0:
                raise RuntimeError(f"{name}: exit {code}: {line}\n{err}")
            if ("line", index) in wanted:
                outputs["line", index] = normalise(out, folder)
        for index, (_, block) in enumerate(python_blocks(text)):
            out = run_python(block, name)
            if ("python", index) in wanted:
                outputs["python", index] = normalise(out, folder)
        for session in console_blocks(text):
            outputs[session.source] = normalise(run_console(session.text), folder)
    return outputs


def refreshed(text: str, outputs: dict[tuple[str, int], str]) -> str:
    """The page with every output block replaced by the output it shows."""
    parts, last = [], 0
    for block in sorted(output_blocks(text) + console_blocks(text), key=lambda b: b.start):
        parts += [text[last:block.start], outputs[block.source]]
        last = block.end
    return "".join(parts) + text[last:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m docs._ext.refresh_outputs",
                                     description="Rewrite the output blocks of the documentation from the real output.")
    parser.add_argument("pages", nargs="*", type=Path, help="pages to refresh (default: every page of docs/)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a block is out of date")
    args = parser.parse_args(argv)
    stale = []
    for page in [p.resolve() for p in args.pages] or pages():
        text = page.read_text()
        if not output_blocks(text) and not console_blocks(text):
            continue
        new = refreshed(text, real_outputs(text, page.name))
        if comparable(new) != comparable(text):
            stale.append(page)
        if page in stale and not args.check:
            page.write_text(new)
        state = "out of date" if page in stale else "up to date"
        print(f"{state}: {page.relative_to(ROOT)}{' (rewritten)' if page in stale and not args.check else ''}")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
