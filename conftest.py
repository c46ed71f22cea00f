"""Doctests run in an empty namespace: an Example of a public docstring runs as a reader copies it into a fresh
interpreter, so it imports every name it uses (pytest's default hands it the module's globals).

The suite runs one BLAS thread per process: set here, before numpy is imported, this reaches pytest-xdist's workers
and every command line a test starts. ``make test`` runs two workers on two cores, and two BLAS threads in each made
the same tests 18-26% slower (tests/optimal, regression and streams, measured side by side); a variable already set
is left as it is."""

from __future__ import annotations

import os

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import pytest  # noqa: E402
from _pytest.doctest import DoctestItem  # noqa: E402


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if isinstance(item, DoctestItem) and item.dtest is not None:
            item.dtest.globs = {"__name__": "__main__"}
