"""``--manifest FILE`` of estimate and regress: the mechanism a released column was drawn from, read from the
release manifest randomize wrote (docs/theory.md section 7.6): the drawn channel of a repaired release (its
SHA-256 checked), else the design file the manifest names."""

from __future__ import annotations

import json
import os
from typing import Any

from ._common import CommandError


def manifest_mechanism(manifest: str, column: str, mechanisms: list[str] | None) -> str:
    """The mechanism file ``column`` of the release recorded in ``manifest`` was drawn from.

    Parameters
    ----------
    manifest : str
        A release manifest (``OUT.manifest.json``).
    column : str
        The analysed column of the randomized file (``response``, or the variable's name with ``--variable``).
    mechanisms : list of str or None
        ``--mechanism`` as given: refused beside ``--manifest`` (the manifest says which channel was drawn).

    Returns
    -------
    str
        A mechanism file's path (relative paths as the manifest records them: from randomize's folder).
    """
    from .randomize_parts import sha256_of

    if mechanisms:
        raise CommandError("give --mechanism or --manifest, not both: the manifest names the channel the release "
                           "was drawn from")
    try:
        with open(manifest, encoding="utf-8") as f:
            record: Any = json.load(f)
        variables = record["variables"]
        found = [v for v in variables if v.get("output_column", v.get("column")) == column]
    except FileNotFoundError:
        raise CommandError(f"{manifest}: no such file (--manifest: the release manifest randomize wrote)") from None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        raise CommandError(f"{manifest}: not a release manifest (JSON with 'variables', as randomize writes)") \
            from None
    if not found:
        names = [v.get("output_column", v.get("column")) for v in variables if isinstance(v, dict)]
        raise CommandError(f"{manifest}: no released column {column!r}; it records {names} (--column)")
    entry = found[0]
    drawn = entry.get("drawn_mechanism")
    if isinstance(drawn, dict):
        path = str(drawn.get("path"))
        if not os.path.exists(path):
            raise CommandError(f"{manifest}: the drawn channel {path} it names is missing; keep it beside the release")
        if sha256_of(path) != drawn.get("sha256"):
            raise CommandError(f"{path}: its SHA-256 differs from the one {manifest} records: the drawn channel was "
                               "changed after the release")
        return path
    if "strata" in entry:
        raise CommandError(f"{manifest}: column {column!r} was released by strata: give each stratum's design with "
                           "--mechanism STRATUM=FILE and --group (randomize printed the command)")
    design = str(entry.get("design", ""))
    if design.endswith(".toml"):
        raise CommandError(f"{manifest}: column {column!r} was drawn from a design made on the fly from {design}; "
                           f"design it to a file (designer design {design} --out FILE.json) and give --mechanism")
    return design
