"""The mechanism a released column was drawn from, read from the release manifest ``randomize`` writes
(docs/theory.md section 7.6), and the manifest held to what it describes: the data given must be the release it
records (its SHA-256, or its rows for a DataFrame), the design file the one drawn from (its SHA-256), and a repaired
column's drawn channel present and unchanged. Paths in a manifest are relative to its own folder."""

from __future__ import annotations

import json
import os
from typing import Any

from .._internal.io import file_sha256 as _sha256
from ..exceptions import DataError

__all__ = ["manifest_mechanism"]


def _resolve(manifest: str, path: Any) -> str:
    """A path the manifest records, resolved against the manifest's folder (not the current one)."""
    path = str(path)
    return path if os.path.isabs(path) else os.path.join(os.path.dirname(os.path.abspath(manifest)), path)


def _read(manifest: str) -> dict[str, Any]:
    try:
        with open(manifest, encoding="utf-8") as f:
            record: Any = json.load(f)
        if not isinstance(record, dict) or not isinstance(record["variables"], list):
            raise TypeError
    except FileNotFoundError:
        raise DataError(f"{manifest}: no such file (--manifest: the release manifest randomize wrote)") from None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        raise DataError(f"{manifest}: not a release manifest (JSON with 'variables', as randomize writes)") from None
    return record


def check_release_data(manifest: str, record: dict[str, Any], data: Any) -> None:
    """Refuse ``data`` unless it is the release ``record`` describes: a file whose SHA-256 is the output's, a folder
    whose parts are the recorded parts, a DataFrame of the recorded number of rows."""
    output = record.get("output")
    if not isinstance(output, dict):
        raise DataError(f"{manifest}: records no output (its SHA-256 and rows): it was written by an older designer "
                        "or edited; randomize again, or give --mechanism")
    rows = output.get("rows")
    if data is None:
        return
    if not isinstance(data, str | os.PathLike):
        if hasattr(data, "shape") and data.shape[0] != rows:
            raise DataError(f"{manifest}: describes a release of {rows} rows, not these {data.shape[0]}: another "
                            "release's manifest?")
        return
    path = os.fspath(data)
    if os.path.isdir(path):
        parts = record.get("parts")
        if not isinstance(parts, list):
            raise DataError(f"{manifest}: describes one file, not the folder {path}: another release's manifest?")
        for part in parts:
            file = os.path.join(path, str(part.get("part")))
            if not os.path.isfile(file) or _sha256(file) != part.get("sha256"):
                raise DataError(f"{file}: missing or changed since the release {manifest} records (SHA-256): another "
                                "release's manifest, or a part changed after the release")
        return
    if not os.path.isfile(path):
        return  # the reader's own message names a missing file
    if _sha256(path) != output.get("sha256"):
        raise DataError(f"{path}: is not the release {manifest} records (SHA-256 {str(output.get('sha256'))[:12]}..., "
                        f"{rows} rows): another release's manifest, or the data changed after the release")


def manifest_mechanism(manifest: str | os.PathLike[str], column: str, data: Any = None) -> str:
    """The mechanism file ``column`` of the release recorded in ``manifest`` was drawn from.

    Parameters
    ----------
    manifest : str or path-like
        A release manifest (``OUT.manifest.json``).
    column : str
        The analysed column of the randomized file (``response``, or the variable's name).
    data : str, path-like or DataFrame, optional
        The data about to be analysed: refused unless it is the release the manifest records (its SHA-256, or its
        number of rows for a DataFrame).

    Returns
    -------
    str
        A mechanism file's path (a relative path the manifest records is resolved against the manifest's folder).

    Raises
    ------
    DataError
        A missing or unreadable manifest, data that is not its release, a column it does not record, a design file
        or a drawn channel that is missing or changed since the release (SHA-256), a repaired column whose drawn
        channel is not named, a column released by strata, designed on the fly or from an object in memory.

    Examples
    --------
    Four answers randomized with Warner's design read from a file (a seeded simulation), then the design read back
    from the manifest, the release checked by its SHA-256:

    >>> import os, tempfile
    >>> import pandas as pd
    >>> import designer
    >>> from designer.estimation.manifest_channel import manifest_mechanism
    >>> folder = tempfile.TemporaryDirectory()
    >>> design, out = os.path.join(folder.name, "warner.json"), os.path.join(folder.name, "released.csv")
    >>> designer.Q_WRR(1.0).write(design)
    >>> frame = pd.DataFrame({"answer": ["yes", "no", "yes", "no"]})
    >>> release = designer.randomize(frame, design, column="answer", out=out, seed=1, simulation=True)
    >>> manifest_mechanism(release.manifest, "response", data=out) == design
    True
    >>> manifest_mechanism(release.manifest, "answer")  # the true answers' column is not released
    Traceback (most recent call last):
    ...
    designer.exceptions.DataError: ...: no released column 'answer'; it records ['response'] (--column)
    >>> folder.cleanup()
    """
    manifest = os.fspath(manifest)
    record = _read(manifest)
    variables = record["variables"]
    try:
        found = [v for v in variables if v.get("output_column", v.get("column")) == column]
    except AttributeError:
        raise DataError(f"{manifest}: not a release manifest (JSON with 'variables', as randomize writes)") from None
    if not found:
        names = [v.get("output_column", v.get("column")) for v in variables if isinstance(v, dict)]
        raise DataError(f"{manifest}: no released column {column!r}; it records {names} (--column)")
    check_release_data(manifest, record, data)
    entry = found[0]
    drawn = entry.get("drawn_mechanism")
    certificate = entry.get("certificate")
    summary = str(certificate.get("summary", "")) if isinstance(certificate, dict) else ""
    if entry.get("drawn_from") == "drawn_mechanism" or drawn is not None or "not the design" in summary:
        if not isinstance(drawn, dict) or "path" not in drawn:
            raise DataError(f"{manifest}: column {column!r} was drawn from a repaired channel, but the manifest no "
                            "longer names it (drawn_mechanism): restore the manifest randomize wrote")
        path = _resolve(manifest, drawn["path"])
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
    if design.endswith(".toml"):
        raise DataError(f"{manifest}: column {column!r} was drawn from a design made on the fly from {design}; "
                        f"design it to a file (designer design {design} --out FILE.json) and give --mechanism")
    if "design_sha256" not in entry:
        raise DataError(f"{manifest}: column {column!r} was drawn from {design}, which it records no SHA-256 of (a "
                        "design given in memory, or a manifest edited or written by an older designer); give "
                        "--mechanism")
    path = _resolve(manifest, design)
    if not os.path.isfile(path):
        raise DataError(f"{manifest}: the design {path} it names is missing; keep it beside the release, or give "
                        "--mechanism")
    if _sha256(path) != entry["design_sha256"]:
        raise DataError(f"{path}: its SHA-256 differs from the one {manifest} records: the design file was swapped "
                        "or changed after the release; give the design the answers were drawn from")
    return path
