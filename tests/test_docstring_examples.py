"""Every public callable has a runnable Examples section (issue 51).

Public: every name of ``designer.__all__`` and of each public module's ``__all__`` (the API reference's list,
docs/_ext/designer_docs.py) that is a function or a class. Its docstring has a numpydoc ``Examples`` section with
at least one ``>>>`` line, and the section runs anywhere: pytest's ``--doctest-modules designer`` runs it (addopts),
no example is skipped, and none reads a file by a path that exists only in a clone (``problems/...``,
``examples/...``): an example builds what it needs, or names a bundled file by its bare name.
"""

from __future__ import annotations

import importlib
import inspect
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "docs" / "_ext"))
import designer_docs  # noqa: E402

_SECTION = re.compile(r"^Examples\n-{8,}\n(.*?)(?=^\S[^\n]*\n-{3,}\n|\Z)", re.S | re.M)
_CLONE_PATH = re.compile(r"""["'](?:\./)?(?:problems|examples)/""")


def public_callables() -> dict[str, object]:
    """``{first public name: object}`` for every function and class of the public namespaces (once each)."""
    found: dict[int, tuple[str, object]] = {}
    for module_name, names in designer_docs.public_namespaces():
        module = importlib.import_module(module_name)
        for name in names:
            obj = getattr(module, name)
            if (inspect.isclass(obj) or inspect.isroutine(obj)) and id(obj) not in found:
                found[id(obj)] = (f"{module_name}.{name}", obj)
    return dict(found.values())


def examples_of(obj: object) -> str | None:
    """The text of the docstring's Examples section, or None."""
    match = _SECTION.search(inspect.getdoc(obj) or "")
    return match.group(1) if match else None


def test_every_public_callable_has_a_runnable_examples_section():
    callables = public_callables()
    assert len(callables) > 250
    missing = sorted(name for name, obj in callables.items() if ">>> " not in (examples_of(obj) or ""))
    assert not missing, f"{len(missing)} public callables without an Examples section: {missing}"


def test_no_example_is_skipped_or_needs_a_clone():
    for name, obj in public_callables().items():
        text = examples_of(obj) or ""
        assert "+SKIP" not in text, f"{name}: an example doctest skips runs nowhere"
        assert not _CLONE_PATH.search(text), f"{name}: its example reads a file of the clone; build the object or " \
                                             f"use a bundled file's bare name"
