"""Doctests run in an empty namespace: an Example of a public docstring runs as a reader copies it into a fresh
interpreter, so it imports every name it uses (pytest's default hands it the module's globals)."""

from __future__ import annotations

import pytest
from _pytest.doctest import DoctestItem


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if isinstance(item, DoctestItem) and item.dtest is not None:
            item.dtest.globs = {"__name__": "__main__"}
