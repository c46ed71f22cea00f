"""Files that come with designer, and the one rule that turns a name given for a file into a file.

The repository keeps its design problems in ``problems/`` and its example data and mechanisms in ``examples/``; the
package carries both (``designer.problems``, ``designer.examples``, read through :mod:`importlib.resources`, in a
wheel and in an editable install alike). Wherever a file is taken (a problem, a mechanism, a questionnaire, a data
file), :func:`resolve` decides what a name means:

1. a path that exists is that file (or folder), whatever its name; so is a bare name whose file with the kind's
   extension is in the current folder (``warner`` is ``./warner.toml`` after ``designer problems copy warner``);
2. else a bare name (no folder; the extension may be left out) is the bundled file of that name and kind:
   ``gwrr-dont-know`` is ``problems/gwrr-dont-know.toml``, ``three-by-four`` is
   ``examples/mechanisms/three-by-four.csv``, ``sex2-answers`` is ``examples/data/sex2-answers.csv``;
3. else one error line naming what was given and the closest bundled names.

A bare name read from the current folder while designer has a file of that name is said with a
:class:`~designer.exceptions.ShadowedNameWarning` (the command line prints it as one ``designer: note:`` line).
"""

from __future__ import annotations

import atexit
import contextlib
import difflib
import os
import warnings
from dataclasses import dataclass
from importlib import resources
from pathlib import Path, PurePath

from ..exceptions import DesignerError, ShadowedNameWarning

__all__ = ["KINDS", "Bundled", "bundled", "find", "resolve", "unknown"]


@dataclass(frozen=True)
class Kind:
    """A kind of bundled file: where the files lie (package, folders under it) and their extensions."""

    word: str
    package: str
    folders: tuple[str, ...]
    suffixes: tuple[str, ...]


#: The kinds of file designer carries, in the order a name is looked up when several kinds are accepted.
KINDS: dict[str, Kind] = {
    "problem": Kind("problem", "designer.problems", ("",), (".toml",)),
    "survey": Kind("questionnaire", "designer.examples", ("surveys",), (".toml",)),
    "mechanism": Kind("mechanism", "designer.examples", ("mechanisms",), (".json", ".csv")),
    "data": Kind("data file", "designer.examples", ("", "data"), (".csv", ".parquet")),
}


@dataclass(frozen=True)
class Bundled:
    """One bundled file: its name (the file's name without the extension), kind, path on disk, and its place in the
    repository (``problems/warner.toml``, ``examples/mechanisms/q2x3.csv``)."""

    name: str
    kind: str
    path: str
    where: str


_files: contextlib.ExitStack | None = None


def _on_disk(item: resources.abc.Traversable) -> str:
    """A bundled file as a path the readers can open (extracted once, for a package that is not on disk)."""
    global _files
    if isinstance(item, Path):
        return str(item)
    if _files is None:  # pragma: no cover - designer installed as a zip: never by pip
        _files = contextlib.ExitStack()
        atexit.register(_files.close)
    return str(_files.enter_context(resources.as_file(item)))  # pragma: no cover


def bundled(kind: str) -> dict[str, Bundled]:
    """The bundled files of ``kind`` (a key of :data:`KINDS`) by name, in name order.

    Examples
    --------
    >>> from designer._internal.bundled import bundled
    >>> bundled("problem")["warner"].where
    'problems/warner.toml'
    >>> "three-by-four" in bundled("mechanism")
    True
    """
    spec = KINDS[kind]
    top = "problems" if spec.package == "designer.problems" else "examples"
    found: dict[str, Bundled] = {}
    root = resources.files(spec.package)
    for folder in spec.folders:
        where = root.joinpath(folder) if folder else root
        if not where.is_dir():
            continue
        for item in where.iterdir():
            suffix = PurePath(item.name).suffix.lower()
            if item.is_file() and suffix in spec.suffixes:
                name = item.name[: -len(suffix)]
                place = "/".join(p for p in (top, folder, item.name) if p)
                found.setdefault(name, Bundled(name, kind, _on_disk(item), place))
    return dict(sorted(found.items()))


def find(name: str, kinds: tuple[str, ...]) -> Bundled | None:
    """The bundled file ``name`` (with or without its extension) of the first of ``kinds`` that has one."""
    for kind in kinds:
        files = bundled(kind)
        stem, suffix = os.path.splitext(name)
        if name in files:
            return files[name]
        if suffix.lower() in KINDS[kind].suffixes and stem in files:
            return files[stem]
    return None


def resolve(path: str | os.PathLike[str], kind: str | tuple[str, ...], *,
            error: type[DesignerError] = DesignerError) -> str | os.PathLike[str]:
    """The file a name given for a file means: ``path`` itself when it exists, else the bundled file of that name.

    Parameters
    ----------
    path : str or path-like
        What the user gave: a path, or a bare name such as ``"gwrr-dont-know"`` (no folder, the extension optional).
    kind : str or tuple of str
        The kinds of file accepted (keys of :data:`KINDS`), looked up in that order.
    error : type of DesignerError
        The error raised (the reader's own: ``InvalidProblemError``, ``InvalidMechanismError``, ``DataError``).

    Returns
    -------
    str or path-like
        ``path`` unchanged when it exists or is not a bare name the package has; the bundled file's path otherwise.

    Raises
    ------
    DesignerError
        Of type ``error``, one line, when ``path`` does not exist and names no bundled file: it names the closest
        bundled names of those kinds and the command that lists them.

    Examples
    --------
    >>> from designer._internal.bundled import resolve
    >>> resolve("gwrr-dont-know", "problem").endswith("gwrr-dont-know.toml")
    True
    >>> from designer.exceptions import DesignerError
    >>> try:
    ...     resolve("gwrr-dont-knw", "problem")
    ... except DesignerError as exc:
    ...     print(str(exc)[:80])
    gwrr-dont-knw: no such file, and designer has no problem of that name; did you m
    """
    kinds = (kind,) if isinstance(kind, str) else tuple(kind)
    text = os.fspath(path)
    base = os.path.basename(text.rstrip("/" + os.sep))
    if not text or os.path.exists(text):
        if text and base == text:
            _say_if_shadowed(text, text, kinds)
        return path
    if base == text:  # a bare name: a file here with the kind's extension, else the package's file of that name
        for suffix in dict.fromkeys(x for k in kinds for x in KINDS[k].suffixes):
            if os.path.isfile(text + suffix):
                _say_if_shadowed(text, text + suffix, kinds)
                return text + suffix
        hit = find(text, kinds)
        if hit is not None:
            return hit.path
    raise error(unknown(text, kinds))


def _say_if_shadowed(text: str, local: str, kinds: tuple[str, ...]) -> None:
    """Warn (:class:`ShadowedNameWarning`) when the bare name ``text``, read as the local file ``local``, is also
    the name of a file designer carries."""
    hit = find(text, kinds)
    if hit is not None:
        warnings.warn(f"{local} in this folder is read, not designer's own {KINDS[hit.kind].word} {hit.name} "
                      f"(rename the local file, or give its path as ./{local}, to keep this note away)",
                      ShadowedNameWarning, stacklevel=3)


def unknown(text: str, kinds: tuple[str, ...]) -> str:
    """The one line for a name that is neither a file nor a bundled name of ``kinds``: the closest bundled names."""
    base = os.path.basename(text.rstrip("/" + os.sep))
    listing = f"'designer problems{'' if kinds[0] == 'problem' else ' --kind ' + kinds[0]}' lists them"
    if base != text:  # a path with a folder: say so, and name the package's file of that name if there is one
        hit = find(base, kinds)
        if hit is None:
            return f"{text}: no such file"
        return f"{text}: no such file; designer's own {KINDS[hit.kind].word} {hit.name} is read by its bare name"
    words = " or ".join(dict.fromkeys(KINDS[k].word for k in kinds))
    names = [n for k in kinds for n in bundled(k)]
    close = difflib.get_close_matches(os.path.splitext(base)[0], names, n=3, cutoff=0.6)
    guess = f"; did you mean {' or '.join(close)}?" if close else ""
    return f"{text}: no such file, and designer has no {words} of that name{guess} ({listing})"
