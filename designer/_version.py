"""The version of designer and where it lives on the web: the one place each is written.

``pyproject.toml`` reads :data:`__version__` (``[tool.setuptools.dynamic]``) and lists :data:`URLS` as its
``project.urls`` (``tests/test_packaging.py`` checks they agree); the command line's ``--version`` and ``--help``,
``help(designer)`` and the files designer writes (a released mechanism's ``release`` block, a randomized release's
manifest, an exported randomizer) read them from here, not from the package root.
"""

from __future__ import annotations

__all__ = ["DOCS_URL", "SOURCE_URL", "URLS", "__version__"]

__version__ = "0.2.0"

#: The repository on GitHub.
SOURCE_URL = "https://github.com/designer-ldp/designer"
#: The documentation site (Read the Docs, built from docs/ on every tag and on main).
DOCS_URL = "https://designer-ldp.readthedocs.io"

#: ``project.urls`` of the distribution, in the order the package index shows them.
URLS = {
    "Documentation": DOCS_URL,
    "Source": SOURCE_URL,
    "Changelog": f"{SOURCE_URL}/blob/main/CHANGELOG.md",
    "Issues": f"{SOURCE_URL}/issues",
}
