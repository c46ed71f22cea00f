"""The layers of ``designer/``, lowest first: a module imports only from its own layer or lower ones.

A name is a top-level module or a package of ``designer/`` (never a dotted name): a package is one floor, so every
module under ``designer/release/`` is in ``release``'s layer. The test in ``test_api.py`` checks every import
against this table, and the drawing in ``docs/layout.md`` is written from it: ``python -m tests.layers`` rewrites
that drawing.
"""

from __future__ import annotations

import pathlib

#: (names, what the layer does), lowest layer first.
LAYERS: list[tuple[set[str], str]] = [
    ({"_version", "exceptions", "vocabulary", "budget", "certificate", "setfunctions", "results", "_internal"},
     "errors, enums, budgets, certificates, results, set functions, exact arithmetic, files, solvers"),
    ({"tables"}, "reading and writing tables: every source as Arrow record batches, every format written from them"),
    ({"mechanism"}, "the mechanism: masses of answer sets given each input"),
    ({"constructors", "privacy", "composition", "credal", "closed_forms", "guarantees", "estimation"},
     "losses, credal sets, composition, closed forms, certified tables and noise; shares, tests, fits, simulations"),
    ({"optimal"}, "optimal mechanisms: problems, programs, routes, certificates"),
    ({"planning", "regression", "devices", "release", "verbs"},
     "sample sizes, regression, devices, randomized releases, mechanism files and exports; the front doors"),
    ({"cli", "__main__", "studio"}, "parse the command line (or serve the studio) and render; nothing is decided here"),
]

LAYOUT = pathlib.Path(__file__).resolve().parents[1] / "docs" / "layout.md"


def layer_of(module: str) -> int:
    """The layer of a dotted module name under ``designer``: that of its package (its first name), one floor for
    every module the package holds."""
    head = module.split(".")[0]
    for layer, (names, _) in enumerate(LAYERS):
        if head in names:
            return layer
    raise KeyError(f"designer.{module}: {head} is in no layer of tests/layers.py")


def drawing() -> str:
    """The drawing of :data:`LAYERS`, top layer first, as ``docs/layout.md`` shows it."""
    lines = []
    for layer in range(len(LAYERS) - 1, -1, -1):
        names, words = LAYERS[layer]
        lines.append(f"{layer}  {'  '.join(sorted(names))}")
        lines.append(f"   -- {words}")
    return "\n".join(lines) + "\n"


def rewrite_layout() -> None:
    """Replace the first fenced block of ``docs/layout.md`` by :func:`drawing`."""
    text = LAYOUT.read_text()
    head, _, rest = text.partition("```\n")
    _, _, tail = rest.partition("```")
    LAYOUT.write_text(head + "```\n" + drawing() + "```" + tail)


if __name__ == "__main__":
    rewrite_layout()
