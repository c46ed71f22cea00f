"""Sphinx configuration of designer's documentation site (``make docs`` builds it into docs/_build/html)."""

from __future__ import annotations

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(DOCS / "_ext"))

import designer_docs  # noqa: E402

import designer  # noqa: E402  (after the path: the extension and the package)

# The generated reference pages are written now, before Sphinx lists the sources: autosummary only generates the
# stubs of pages it found (a page written at builder-inited is read, but its stubs are missing on a fresh clone).
designer_docs.write_api(DOCS / "reference" / "api.rst")
designer_docs.write_cli(DOCS / "reference" / "cli.rst")

project = "designer"
author = "the designer developers"
copyright = "2026, the designer developers"
version = release = designer.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    # MathJax 3.2.2 shipped with the site (copied into _static/mathjax): the maths is typeset without the network.
    "sphinx-mathjax-offline",
    "sphinx.ext.intersphinx",
    "numpydoc",
    "myst_parser",
    "sphinx_design",
    "sphinx_gallery.gen_gallery",
    "designer_docs",
]

# Flags and code as typed: no "--kind" turned into an en dash, no curly quotes (tests/test_site_offline.py
# checks the built site).
smartquotes = False

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_generated", "sg_execution_times.rst", "**.ipynb_checkpoints", "auto_examples/*.ipynb",
                    "auto_examples/*.py", "auto_examples/*.zip", "auto_examples/*.json"]
templates_path = ["_templates"]

# MyST: docs/theory.md is included as it is; $...$ maths, heading anchors for the guide's cross-links.
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3

autosummary_generate = True
autosummary_imported_members = True
autodoc_typehints = "none"  # numpydoc documents the types in its Parameters sections
autodoc_default_options = {"inherited-members": False}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_validation_checks: set[str] = set()

intersphinx_mapping: dict[str, tuple[str, None]] = {}

html_theme = "pydata_sphinx_theme"
html_title = f"designer {release}"
html_theme_options = {
    "navbar_align": "left",
    "header_links_before_dropdown": 3,
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version", "theme-version"],
    "secondary_sidebar_items": ["page-toc"],
}
html_sidebars = {"*": []}  # the top-level pages (home, theory, layout, ...) have no section to navigate
html_static_path = ["_static"]
html_css_files = ["designer.css"]
html_show_sourcelink = False

# The gallery: every examples/plot_*.py script (and affairs.py, which draws a figure too), run at build time with
# its figures; the hooks are in _ext/gallery_hooks.py.
sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"(/plot_\w+|/affairs)\.py$",
    # Only those scripts are in the gallery (the others print tables that the guide shows): any other name is ignored.
    "ignore_pattern": r"^(?!(?:.*/)?(?:plot_\w+|affairs)\.py$)",
    "reset_argv": "gallery_hooks.reset_argv",
    "image_scrapers": ("gallery_hooks.png_scraper", "matplotlib"),
    "download_all_examples": False,
    "remove_config_comments": True,
    "plot_gallery": "True",
    "abort_on_example_error": True,
    "only_warn_on_example_error": False,
    "show_memory": False,
    "min_reported_time": 10**6,
}

nitpicky = False
suppress_warnings: list[str] = []
