"""The version of designer and where it lives on the web: the one place each is written.

``pyproject.toml`` reads :data:`__version__` (``[tool.setuptools.dynamic]``) and lists :data:`URLS` as its
``project.urls`` (``tests/test_packaging.py`` checks they agree); the command line's ``--version`` and ``--help``,
``help(designer)`` and the files designer writes (a released mechanism's ``release`` block, a randomized release's
manifest, an exported randomizer) read them from here, not from the package root. :func:`show_versions` (and
``designer --version --verbose``) adds Python's, the platform's and every dependency's, for a bug report.
"""

from __future__ import annotations

import re
import sys
from typing import TextIO

__all__ = ["DISTRIBUTION", "DOCS_URL", "SOURCE_URL", "URLS", "__version__", "show_versions", "versions"]

__version__ = "0.2.0"

#: The distribution's name on the package index (the import package and the command are ``designer``).
DISTRIBUTION = "designer-ldp"

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


#: The extras whose packages designer itself uses when they are installed (``pyproject.toml``'s
#: ``optional-dependencies``: the studio, Dask clusters); ``test`` and ``docs`` are the developers' toolchains.
RUNTIME_EXTRAS = ("studio", "dask")

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_EXTRA = re.compile(r"""extra\s*==\s*["']([^"']+)["']""")


def _dependencies() -> tuple[list[str], list[str]] | None:
    """The distribution names designer requires, and those of :data:`RUNTIME_EXTRAS`, in the order of its
    metadata (``pyproject.toml``); ``None`` when the metadata are missing (a source tree not installed)."""
    from importlib import metadata

    try:
        requires = metadata.requires(DISTRIBUTION) or []
    except metadata.PackageNotFoundError:
        return None
    required: list[str] = []
    optional: list[str] = []
    for requirement in requires:
        match = _NAME.match(requirement)
        if match is None:
            continue
        extra = _EXTRA.search(requirement)
        into = required if extra is None else optional if extra.group(1) in RUNTIME_EXTRAS else None
        if into is not None and match.group() not in into:
            into.append(match.group())
    return required, optional


def _installed(name: str) -> str:
    """The installed version of the distribution ``name``, or ``"not installed"``."""
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def versions() -> list[tuple[str, list[tuple[str, str]]]]:
    """What :func:`show_versions` prints, as ``(section, [(name, value), ...])`` pairs: ``system`` (Python, its
    executable, the platform, the number of CPUs, where designer is imported from), ``dependencies`` (every
    distribution designer requires) and ``optional`` (those of :data:`RUNTIME_EXTRAS`, ``"not installed"`` when
    absent). Reads installed metadata only: no dependency is imported."""
    import os
    import pathlib
    import platform

    system = [("python", " ".join(sys.version.split())), ("executable", sys.executable or "unknown"),
              ("platform", platform.platform()), ("cpus", str(os.cpu_count() or "unknown")),
              ("designer", str(pathlib.Path(__file__).resolve().parent))]
    found = _dependencies()
    if found is None:
        return [("system", system),
                ("dependencies", [(DISTRIBUTION, "metadata not found (designer is not installed: pip install .)")])]
    required, optional = found
    return [("system", system), ("dependencies", [(name, _installed(name)) for name in required]),
            (f"optional ({', '.join(RUNTIME_EXTRAS)} extras)", [(name, _installed(name)) for name in optional])]


def show_versions(file: TextIO | None = None) -> None:
    """Print the versions of designer, Python, the platform and every dependency, for a bug report.

    The same as ``designer --version --verbose``: designer's version, then Python, its executable, the platform,
    the number of CPUs and the folder designer is imported from, then the installed version of each distribution
    designer requires (``pyproject.toml``'s ``dependencies``) and of the optional ones its extras add (the
    ``studio`` and ``dask`` extras; ``not installed`` when absent). The versions are read from the installed
    packages' metadata; nothing is imported, so it runs in a fraction of a second even where a dependency is
    broken.

    Parameters
    ----------
    file : text stream, optional
        Where to print; standard output by default.

    Returns
    -------
    None

    See Also
    --------
    designer.__version__ : designer's version alone.

    Examples
    --------
    >>> import designer
    >>> designer.show_versions()  # doctest: +ELLIPSIS
    designer ...
    <BLANKLINE>
    system:
      python ...
    dependencies:
      numpy ...
    """
    sections = versions()
    width = max(len(name) for _, rows in sections for name, _ in rows) + 2
    out = sys.stdout if file is None else file
    lines = [f"designer {__version__}"]
    for title, rows in sections:
        lines += ["", f"{title}:"]
        lines += [f"  {name:<{width}}{value}" for name, value in rows]
    print("\n".join(lines), file=out)
