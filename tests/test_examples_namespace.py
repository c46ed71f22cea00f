"""Every public Example runs when copied into an empty interpreter (issue 58).

The suite's doctests run in an empty namespace (the root conftest.py); this test says so for the public ones
without running them again: each name an Example reads is bound by the Example itself (an import, an assignment,
a loop or a definition) or is a builtin.
"""

from __future__ import annotations

import ast
import builtins
import doctest

from .test_docstring_examples import examples_of, public_callables

_PARSER = doctest.DocTestParser()


def _unbound_names(text: str) -> set[str]:
    """Names read by the Example's statements (in order) before any statement of the Example binds them."""
    bound = set(dir(builtins))
    missing: set[str] = set()
    for example in _PARSER.get_examples(text):
        tree = ast.parse(example.source)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                bound |= {(a.asname or a.name).split(".")[0] for a in node.names}
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                bound.add(node.id)
            elif isinstance(node, ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef):
                bound.add(node.name)
                bound |= {a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)}
            elif isinstance(node, ast.Lambda):
                bound |= {a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)}
            elif isinstance(node, ast.ExceptHandler) and node.name:
                bound.add(node.name)
            elif isinstance(node, ast.comprehension):
                bound |= {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in bound:
                missing.add(node.id)
    return missing


def test_every_public_example_imports_what_it_uses():
    unbound = {name: sorted(names) for name, obj in public_callables().items()
               if (names := _unbound_names(examples_of(obj) or ""))}
    assert unbound == {}, f"Examples using names they never import: {unbound}"


def test_the_check_sees_a_missing_import():
    assert _unbound_names(">>> Mechanism([[1.0]])\n") == {"Mechanism"}
    assert _unbound_names(">>> from designer import Mechanism\n>>> Mechanism([[1.0]])\n") == set()
    assert _unbound_names(">>> [x for x in range(3)]\n[0, 1, 2]\n") == set()


def test_doctests_get_an_empty_namespace(request):
    """The root conftest.py empties each doctest's globals (pytest hands it the module's by default)."""
    import _pytest.doctest

    items = [i for i in request.session.items if isinstance(i, _pytest.doctest.DoctestItem)]
    assert all(set(i.dtest.globs) <= {"__name__", "__builtins__"} for i in items if i.dtest is not None)
