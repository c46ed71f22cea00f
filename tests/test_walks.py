"""docs/architecture.md's "The data, walked" states what benchmarks/walks.py measures: the three walks (the room
of every visit, in order) and their counts (rooms, moves, returns, climbs) are those the tracer prints today, so
the page cannot drift from the code. The tracer runs in a fresh process (about 5 s): caches filled by other tests
would hide calls from it."""

from __future__ import annotations

import importlib.util
import pathlib
import re
import subprocess
import sys
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "architecture.md"
TRACER = ROOT / "benchmarks" / "walks.py"
COUNTS = re.compile(r"^\*\*(\w+): rooms (\d+), moves (\d+), returns (\d+), climbs (\d+)\*\*$", re.M)


def _tracer() -> Any:
    spec = importlib.util.spec_from_file_location("walks", TRACER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["walks"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def _page_walks() -> dict[str, str]:
    text = PAGE.read_text(encoding="utf-8")
    section = text[text.index("\n## The data, walked"):]
    parts = re.split(r"^### `(\w+)`\n", section, flags=re.M)
    return {name: body.strip() for name, body in zip(parts[1::2], parts[2::2])}


def _rooms(block: str) -> list[str]:
    """The room of every visit of a walk as the page lists it (``1. `designer/x/y.py:function` ...``)."""
    return re.findall(r"^\d+\. `designer/([\w/]+\.py):", block, flags=re.M)


def test_the_page_states_the_walks_the_tracer_measures():
    """The rooms of every visit, in order, and the counts; the functions named in a room may change without
    changing the walk. After a change that moves the data: ``python benchmarks/walks.py --markdown`` prints the
    lists for the page, the counts' table and the text above them."""
    printed = subprocess.run([sys.executable, str(TRACER), "--markdown"], capture_output=True, text=True,
                             check=True, cwd=ROOT).stdout.strip()
    measured = {COUNTS.search(block).group(1): block.strip()  # type: ignore[union-attr]
                for block in re.split(r"(?<=\*\*)\n\n", printed)}
    page = _page_walks()
    assert sorted(page) == sorted(measured) == ["estimate", "randomize", "regress"]
    text = PAGE.read_text(encoding="utf-8")
    for command, block in measured.items():
        assert _rooms(page[command]) == _rooms(block), f"docs/architecture.md: the walk of {command} has drifted"
        counts = COUNTS.search(block).groups()  # type: ignore[union-attr]
        assert COUNTS.search(page[command]).groups() == counts, command  # type: ignore[union-attr]
        row = re.search(rf"^\| `{command}` \| [^|]+ \| ([^|]+) \|", text, flags=re.M)  # the table of counts
        assert row is not None and row.group(1).strip() == ", ".join(counts[1:]), command


def test_the_counts_of_a_walk():
    """Rooms, moves, returns and climbs of a walk written by hand: A, A, B, A (back up), C."""
    walks = _tracer()
    step = walks.Step
    walk = walks.Walk("x", [step("a.py", "f", False), step("a.py", "g", False), step("b.py", "h", False),
                            step("a.py", "k", True), step("c.py", "m", False)])
    assert [v[0].room for v in walk.visits()] == ["a.py", "b.py", "a.py", "c.py"]
    assert walk.counts() == {"rooms": 3, "moves": 3, "returns": 1, "climbs": 1}
