"""docs/architecture.md walks the budget and an answers file through the code: every ``designer/...py:function`` its
"After" walk names exists in the tree (the files are parsed, nothing is imported), the "Before" walk's names exist at
the commit it walked (when git has that commit), and each walk's hops are numbered 1, 2, ... up to the total it
states."""

from __future__ import annotations

import ast
import pathlib
import re
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "architecture.md"
#: ``designer/x/y.py:name`` or ``designer/x/y.py:Class.method`` inside backticks (arguments after the name allowed).
REFERENCE = re.compile(r"`(designer/[\w/]+\.py):([A-Za-z_][\w.]*)")
HOP = re.compile(r"\bhop\s+(\d+)\b")
TOTAL = re.compile(r"\*\*Hops: ([^*]+)\*\*")


def _sections() -> dict[str, str]:
    """The page's ``## `` sections by their title's first word (``Before``, ``After``, ...)."""
    text = PAGE.read_text(encoding="utf-8")
    parts = re.split(r"^## (\S+)[^\n]*\n", text, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2]))


def _walks(section: str) -> dict[str, str]:
    """The ``### `` walks of a section by title."""
    parts = re.split(r"^### ([^\n]+)\n", section, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2]))


def _defines(source: str, qualname: str) -> bool:
    """Whether ``source`` defines ``qualname`` (a function, a class, ``Class.method``, or a module-level name)."""
    body: list[ast.stmt] = ast.parse(source).body
    parts = qualname.split(".")
    for i, part in enumerate(parts):
        found = None
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.name == part:
                found = node
            elif i == len(parts) - 1 and isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(isinstance(t, ast.Name) and t.id == part for t in targets):
                    return True
        if found is None:
            return False
        if i < len(parts) - 1:
            if not isinstance(found, ast.ClassDef):
                return False
            body = found.body
    return True


def _references(section: str) -> list[tuple[str, str]]:
    return sorted(set(REFERENCE.findall(section)))


def test_the_page_has_both_walks_before_and_after():
    sections = _sections()
    assert {"Before", "After"} <= set(sections)
    for name in ("Before", "After"):
        walks = _walks(sections[name])
        assert {"The budget", "The answers file"} <= set(walks), name


def test_every_function_the_after_walk_names_exists_in_the_tree():
    after = _sections()["After"]
    names = _references(after)
    assert len(names) >= 20  # both walks, step by step
    missing = []
    for path, qualname in names:
        file = ROOT / path
        if not file.is_file() or not _defines(file.read_text(encoding="utf-8"), qualname):
            missing.append(f"{path}:{qualname}")
    assert not missing, f"docs/architecture.md (After) names what the tree does not define: {missing}"


def test_every_function_the_before_walk_names_existed_at_its_commit():
    before = _sections()["Before"]
    commit = re.search(r"\(commit ([0-9a-f]{7,40})\)", PAGE.read_text(encoding="utf-8").split("\n## Before", 1)[1])
    assert commit is not None, "the Before section names the commit it walked"
    git = shutil.which("git")
    if git is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    if subprocess.run([git, "cat-file", "-e", f"{commit.group(1)}^{{commit}}"], cwd=ROOT,
                      capture_output=True).returncode != 0:
        pytest.skip(f"commit {commit.group(1)} is not in this clone")
    missing = []
    for path, qualname in _references(before):
        shown = subprocess.run([git, "show", f"{commit.group(1)}:{path}"], cwd=ROOT, capture_output=True, text=True)
        if shown.returncode != 0 or not _defines(shown.stdout, qualname):
            missing.append(f"{path}:{qualname}")
    assert not missing, f"docs/architecture.md (Before) names what {commit.group(1)} did not define: {missing}"


@pytest.mark.parametrize("section", ["Before", "After"])
def test_hops_are_numbered_in_order_up_to_the_stated_total(section):
    for title, walk in _walks(_sections()[section]).items():
        hops = [int(h) for h in HOP.findall(walk)]
        totals = TOTAL.findall(walk)
        if not hops and not totals:
            continue  # a walk still to be written
        assert hops == list(range(1, len(hops) + 1)), (section, title, hops)
        assert len(totals) == 1, (section, title, totals)
        stated = [int(n) for n in re.findall(r"\d+", totals[0])]
        assert stated[-1] == len(hops), (section, title, stated, len(hops))
        if len(stated) == 3:  # "a in design, b in randomize, a + b in all"
            assert stated[0] + stated[1] == stated[2], (section, title, stated)


def test_the_checker_tells_a_missing_name_from_a_present_one():
    source = "class A:\n    def f(self):\n        pass\n\ndef g():\n    pass\n\nX = 1\n"
    assert _defines(source, "A.f") and _defines(source, "g") and _defines(source, "A") and _defines(source, "X")
    assert not _defines(source, "A.g") and not _defines(source, "f") and not _defines(source, "g.f")
