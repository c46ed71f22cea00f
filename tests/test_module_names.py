"""The docs and the benchmarks name only modules that exist: a module moved or deleted (round 6: csv_chunks.py,
survey_files.py, studio/cells.py) leaves no path or dotted name behind in docs/ or benchmarks/. The walk of
docs/architecture.md before the refactoring names the modules of its commit, and is left out."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: ``designer/x/y.py`` as a path, ``designer.x.y`` as a dotted name, and a studio module by its bare file name.
PATH = re.compile(r"\bdesigner/[A-Za-z_/]+\.py\b")
DOTTED = re.compile(r"\bdesigner(?:\.[A-Za-z_][A-Za-z0-9_]*)+")


def _exists(dotted: str) -> bool:
    """Whether a dotted name is a module, a package, or something in one (its longest module prefix exists)."""
    parts = dotted.split(".")
    for end in range(len(parts), 0, -1):
        base = ROOT.joinpath(*parts[:end])
        if base.with_suffix(".py").is_file() or (base / "__init__.py").is_file():
            return end >= len(parts) - 2  # at most a class and its attribute beyond the module
    return False


def test_docs_and_benchmarks_name_existing_modules():
    files = [*(ROOT / "docs").rglob("*.md"), *(ROOT / "benchmarks").glob("*.py"), ROOT / "benchmarks/README.md"]
    missing = set()
    for file in files:
        text = file.read_text(encoding="utf-8")
        if file.name == "architecture.md":  # its "Before" walk names the modules of an old commit
            text = text[text.index("\n## After"):]
        missing |= {f"{file.relative_to(ROOT)}: {p}" for p in PATH.findall(text) if not (ROOT / p).is_file()}
        missing |= {f"{file.relative_to(ROOT)}: {d}" for d in DOTTED.findall(text) if not _exists(d.rstrip("."))}
    studio = {p.name for p in (ROOT / "designer/studio").glob("*.py")}
    developers = (ROOT / "docs/studio.md").read_text(encoding="utf-8").split("## For developers", 1)[1]
    for name in re.findall(r"`([a-z_]+\.py)`", developers):
        if name not in studio:
            missing.add(f"docs/studio.md: {name}")
    assert not missing, sorted(missing)
