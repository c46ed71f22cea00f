"""The mechanism a released column was drawn from, read from the release manifest ``randomize`` writes
(docs/theory.md section 7.6): the drawn channel of a repaired release (its SHA-256 checked), else the design file
the manifest names."""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

from ..exceptions import DataError

__all__ = ["manifest_mechanism"]


def _sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def manifest_mechanism(manifest: str | os.PathLike[str], column: str) -> str:
    """The mechanism file ``column`` of the release recorded in ``manifest`` was drawn from.

    Parameters
    ----------
    manifest : str or path-like
        A release manifest (``OUT.manifest.json``).
    column : str
        The analysed column of the randomized file (``response``, or the variable's name).

    Returns
    -------
    str
        A mechanism file's path (relative paths as the manifest records them: from randomize's folder).

    Raises
    ------
    DataError
        A missing or unreadable manifest, a column it does not record, a drawn channel that is missing or changed
        since the release (SHA-256), a column released by strata or designed on the fly.
    """
    manifest = os.fspath(manifest)
    try:
        with open(manifest, encoding="utf-8") as f:
            record: Any = json.load(f)
        variables = record["variables"]
        found = [v for v in variables if v.get("output_column", v.get("column")) == column]
    except FileNotFoundError:
        raise DataError(f"{manifest}: no such file (--manifest: the release manifest randomize wrote)") from None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        raise DataError(f"{manifest}: not a release manifest (JSON with 'variables', as randomize writes)") from None
    if not found:
        names = [v.get("output_column", v.get("column")) for v in variables if isinstance(v, dict)]
        raise DataError(f"{manifest}: no released column {column!r}; it records {names} (--column)")
    entry = found[0]
    drawn = entry.get("drawn_mechanism")
    if isinstance(drawn, dict):
        path = str(drawn.get("path"))
        if not os.path.exists(path):
            raise DataError(f"{manifest}: the drawn channel {path} it names is missing; keep it beside the release")
        if _sha256(path) != drawn.get("sha256"):
            raise DataError(f"{path}: its SHA-256 differs from the one {manifest} records: the drawn channel was "
                            "changed after the release")
        return path
    if "strata" in entry:
        raise DataError(f"{manifest}: column {column!r} was released by strata: give each stratum's design with "
                        "--mechanism STRATUM=FILE and --group (randomize printed the command)")
    design = str(entry.get("design", ""))
    if design:  # a file, else the bare name of designer's own mechanism or problem
        from .._internal.bundled import resolve

        source = os.fspath(resolve(design, ("mechanism", "problem"), error=DataError))
        if source.endswith(".toml"):
            raise DataError(f"{manifest}: column {column!r} was drawn from a design made on the fly from {design}; "
                            f"design it to a file (designer design {design} --out FILE.json) and give --mechanism")
        return source
    return design
