"""The review step removes what a change made dead (issue 58): every function, class and constant defined at the
top of a module of designer/ is named somewhere else in the repository's code (designer/, tests/, benchmarks/,
examples/, docs/_ext/, .ci/) or in a string that names it (``__all__``, a lazy import table).

The command modules' ``cmd_<verb>`` and ``_configure_<verb>`` are named by composition (designer/cli/__init__.py's
``_verb``), so they count when their verb is in the command table. Parsed, nothing imported.
"""

from __future__ import annotations

import ast
import collections
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent
FOLDERS = ("designer", "tests", "benchmarks", "examples", "docs/_ext", ".ci")
#: Names a module defines for Python, not for its readers.
HOOKS = {"__all__", "__getattr__", "__dir__", "__version__", "main"}


def _composed(name: str, table: str) -> bool:
    """``cmd_audit`` / ``_configure_audit``: named through ``_verb(module, "audit")`` in the command table."""
    verb = re.fullmatch(r"(?:cmd|_configure)_(\w+)", name)
    return verb is not None and f'"{verb.group(1)}"' in table


def test_every_top_level_name_of_designer_is_used_somewhere_else():
    files = [p for folder in FOLDERS for p in (ROOT / folder).rglob("*.py")  # not CI's or a benchmark's venvs
             if not any(x.startswith(".") or x in ("venvs", "site-packages")
                        for x in p.relative_to(ROOT / folder).parts)]
    texts = {p: p.read_text(encoding="utf-8") for p in files}
    words = collections.Counter(w for text in texts.values() for w in re.findall(r"[A-Za-z_]\w*", text))
    table = (ROOT / "designer" / "cli" / "__init__.py").read_text(encoding="utf-8")
    unused = []
    for path, text in texts.items():
        if path.parts[len(ROOT.parts)] != "designer":
            continue
        for node in ast.parse(text).body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names = [node.name]
            elif isinstance(node, ast.Assign):
                names = [t.id for t in node.targets if isinstance(t, ast.Name)]
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                names = [node.target.id]
            else:
                continue
            unused += [f"{path.relative_to(ROOT)}:{name}" for name in names
                       if words[name] < 2 and name not in HOOKS and not _composed(name, table)]
    assert unused == [], f"defined and never used: {unused}"
