"""The mechanism a released column was drawn from, read from the release manifest ``randomize`` writes
(docs/theory.md section 7.6), and the manifest held to what it describes: the data given must be the release it
records (its SHA-256; a folder's parts, each with its SHA-256 and no other file; a DataFrame's canonical
SHA-256), the design file the one drawn from (its SHA-256), and a repaired
column's drawn channel present and unchanged. Paths in a manifest are relative to its own folder."""

from __future__ import annotations

import json
import os
from typing import Any

from .._internal.io import file_sha256 as _sha256
from ..exceptions import DataError

__all__ = ["drawn_columns", "manifest_beside", "manifest_mechanism", "read_manifest", "refuse_plain_design"]


def _resolve(manifest: str, path: Any) -> str:
    """A path the manifest records, resolved against the manifest's folder (not the current one)."""
    path = str(path)
    return path if os.path.isabs(path) else os.path.join(os.path.dirname(os.path.abspath(manifest)), path)


#: Largest manifest read (a folder of 100,000 parts records about 12 MB).
MAX_MANIFEST_BYTES = 16 * 2**20
#: Deepest nesting of a manifest's JSON (randomize writes six levels).
MAX_MANIFEST_DEPTH = 32


def _read(manifest: str) -> dict[str, Any]:
    """A release manifest read as a regular file only (a pipe or a device is refused without being waited on),
    of at most :data:`MAX_MANIFEST_BYTES` and :data:`MAX_MANIFEST_DEPTH` levels of nesting."""
    import stat

    from .._internal.formats import _depth

    what = "(--manifest: the release manifest randomize wrote)"
    try:
        fd = os.open(manifest, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise DataError(f"{manifest}: no such file {what}") from None
    except IsADirectoryError:
        raise DataError(f"{manifest}: is a folder, not a file {what}") from None
    except OSError as exc:
        raise DataError(f"{manifest}: cannot be opened ({exc.strerror}) {what}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = ("a named pipe" if stat.S_ISFIFO(mode) else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
                else "a folder" if stat.S_ISDIR(mode) else "a socket" if stat.S_ISSOCK(mode) else "not a file")
        raise DataError(f"{manifest}: is {kind}, not a regular file; a manifest is read from a regular file "
                        "(--manifest: the OUT.manifest.json randomize wrote)")
    with os.fdopen(fd, "rb") as f:
        try:
            data = f.read(MAX_MANIFEST_BYTES + 1)
        except OSError as exc:
            raise DataError(f"{manifest}: cannot be read ({exc.strerror}) {what}") from None
    if len(data) > MAX_MANIFEST_BYTES:
        raise DataError(f"{manifest}: larger than {MAX_MANIFEST_BYTES // 2**20} MiB, not a release manifest {what}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise DataError(f"{manifest}: not UTF-8 text, not a release manifest {what}") from None
    if _depth(text) > MAX_MANIFEST_DEPTH:
        raise DataError(f"{manifest}: JSON nested more than {MAX_MANIFEST_DEPTH} levels deep, not a release "
                        f"manifest {what}")
    try:
        record: Any = json.loads(text)
        if not isinstance(record, dict) or not isinstance(record["variables"], list):
            raise TypeError
    except (RecursionError, ValueError, KeyError, TypeError, AttributeError):
        raise DataError(f"{manifest}: not a release manifest (JSON with 'variables', as randomize writes)") from None
    return record


def read_manifest(manifest: str | os.PathLike[str]) -> dict[str, Any]:
    """A release manifest's record, read as :func:`manifest_mechanism` reads it: a regular file only, at most
    16 MiB and 32 levels deep, an object with a ``variables`` list; every failure one :class:`DataError` line.

    Examples
    --------
    >>> import os, tempfile
    >>> from designer.estimation.manifest_channel import read_manifest
    >>> folder = tempfile.TemporaryDirectory()
    >>> path = os.path.join(folder.name, "m.json")
    >>> with open(path, "w") as f:
    ...     _ = f.write('{"variables": []}')
    >>> read_manifest(path)
    {'variables': []}
    >>> read_manifest(folder.name)
    Traceback (most recent call last):
    ...
    designer.exceptions.DataError: ...: is a folder, not a regular file; a manifest is read from a regular file ...
    >>> folder.cleanup()
    """
    return _read(os.fspath(manifest))


def drawn_columns(record: dict[str, Any]) -> list[str]:
    """The released columns of a manifest's record drawn from a channel other than their design (a repaired
    release): they are estimated through the manifest only.

    Examples
    --------
    >>> from designer.estimation.manifest_channel import drawn_columns
    >>> drawn_columns({"variables": [{"column": "a", "output_column": "response", "drawn_from": "drawn_mechanism"}]})
    ['response']
    """
    out = []
    for v in record.get("variables", []):
        if not isinstance(v, dict):
            continue
        certificate = v.get("certificate")
        summary = str(certificate.get("summary", "")) if isinstance(certificate, dict) else ""
        if v.get("drawn_from") == "drawn_mechanism" or v.get("drawn_mechanism") is not None or \
                "not the design" in summary:
            out.append(str(v.get("output_column", v.get("column"))))
    return out


def check_release_data(manifest: str, record: dict[str, Any], data: Any) -> None:
    """Refuse ``data`` unless it is the release ``record`` describes: a file whose SHA-256 is the output's, a folder
    holding exactly the recorded parts, a DataFrame whose canonical SHA-256 is the rows'."""
    output = record.get("output")
    if not isinstance(output, dict):
        raise DataError(f"{manifest}: records no output (its SHA-256 and rows): it was written by an older designer "
                        "or edited; randomize again, or give --mechanism")
    rows = output.get("rows")
    if data is None:
        return
    if not isinstance(data, str | os.PathLike):
        if hasattr(data, "shape") and hasattr(data, "columns"):
            _check_frame(manifest, output, data)
        return
    path = os.fspath(data)
    if os.path.isdir(path):
        _check_parts(manifest, record, path)
        return
    if not os.path.isfile(path):
        return  # the reader's own message names a missing file
    if _sha256(path) != output.get("sha256"):
        raise DataError(f"{path}: is not the release {manifest} records (SHA-256 {str(output.get('sha256'))[:12]}..., "
                        f"{rows} rows): another release's manifest, or the data changed after the release")


def _check_frame(manifest: str, output: dict[str, Any], frame: Any) -> None:
    """Refuse a DataFrame that is not the release: its canonical SHA-256 (:mod:`designer._internal.canonical`)
    must be the one the manifest records of the released rows."""
    from .._internal.canonical import frame_sha256

    rows, recorded = output.get("rows"), output.get("frame_sha256")
    if frame.shape[0] != rows:
        raise DataError(f"{manifest}: describes a release of {rows} rows, not these {frame.shape[0]}: another "
                        "release's manifest?")
    if not isinstance(recorded, str):
        raise DataError(f"{manifest}: records no canonical SHA-256 of its rows (frame_sha256): it was written by an "
                        "older designer or edited; give the released file's path instead of a DataFrame")
    try:
        found = frame_sha256(frame)
    except ValueError as exc:
        raise DataError(f"the DataFrame given: {exc}") from None
    if found != recorded:
        raise DataError(f"the DataFrame given is not the release {manifest} records (canonical SHA-256 "
                        f"{recorded[:12]}..., {rows} rows): a row, a cell or a column differs; read the released "
                        "file as it was written")


def _check_parts(manifest: str, record: dict[str, Any], path: str) -> None:
    """Refuse a folder that is not the release: every part the manifest lists present with its SHA-256, the list
    not empty, and no other file in the folder (a part added after the release would be read with the rest)."""
    parts = record.get("parts")
    if not isinstance(parts, list):
        raise DataError(f"{manifest}: describes one file, not the folder {path}: another release's manifest?")
    if not parts:
        raise DataError(f"{manifest}: lists no parts: a folder release lists each part with its SHA-256 and rows; "
                        "restore the manifest randomize wrote")
    listed: set[str] = set()
    for part in parts:
        name = part.get("part") if isinstance(part, dict) else None
        if not isinstance(name, str) or not name or os.path.basename(name) != name or name in (".", ".."):
            raise DataError(f"{manifest}: a part is recorded without a plain file name ({part!r}); restore the "
                            "manifest randomize wrote")
        if not isinstance(part.get("sha256"), str) or not isinstance(part.get("rows"), int):
            raise DataError(f"{manifest}: part {name!r} is recorded without its SHA-256 and rows; restore the "
                            "manifest randomize wrote")
        listed.add(name)
        file = os.path.join(path, name)
        if not os.path.isfile(file) or _sha256(file) != part.get("sha256"):
            raise DataError(f"{file}: missing or changed since the release {manifest} records (SHA-256): another "
                            "release's manifest, or a part changed after the release")
    foreign = sorted(name for name in os.listdir(path) if name not in listed)
    if foreign:
        raise DataError(f"{path}: holds {len(foreign)} file(s) the release {manifest} does not list "
                        f"({', '.join(repr(f) for f in foreign[:3])}{', ...' if len(foreign) > 3 else ''}): a part "
                        "added after the release; remove it or analyse the parts the manifest lists")


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
        canonical SHA-256 for a DataFrame, :mod:`designer._internal.canonical`).

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
    if column in drawn_columns(record):
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
    if not os.path.isfile(path) and os.sep not in design and "/" not in design:  # a bundled design, by name
        from .._internal.bundled import resolve

        try:
            path = os.fspath(resolve(design, ("mechanism", "problem"), error=DataError))
        except DataError:
            pass
    if not os.path.isfile(path):
        raise DataError(f"{manifest}: the design {path} it names is missing; keep it beside the release, or give "
                        "--mechanism")
    if _sha256(path) != entry["design_sha256"]:
        raise DataError(f"{path}: its SHA-256 differs from the one {manifest} records: the design file was swapped "
                        "or changed after the release; give the design the answers were drawn from")
    return path


def manifest_beside(data: Any) -> str | None:
    """The manifest randomize wrote beside a released file or folder (``DATA.manifest.json``), or None.

    Examples
    --------
    >>> from designer.estimation.manifest_channel import manifest_beside
    >>> manifest_beside("no-such-release.csv") is None
    True
    """
    if not isinstance(data, str | os.PathLike):
        return None
    candidate = os.fspath(data).rstrip("/" + os.sep) + ".manifest.json"
    return candidate if os.path.isfile(candidate) else None


def refuse_plain_design(data: Any, column: str, mechanism: Any) -> None:
    """Refuse to estimate ``column`` of a repaired release through its plain design: when the manifest found by
    name beside ``data`` (:func:`manifest_beside`) records the column as drawn from a channel other than its design,
    only that channel (``--manifest``, or its own file) gives the law the answers were drawn from.

    Examples
    --------
    >>> from designer.estimation.manifest_channel import refuse_plain_design
    >>> refuse_plain_design("no-such-release.csv", "response", "warner.json")  # no manifest beside: nothing to hold
    """
    found = manifest_beside(data)
    if found is None:
        return
    try:
        record = _read(found)
    except DataError:
        return  # not a manifest this reads: the design given stands
    if column not in drawn_columns(record):
        return
    entry = next(v for v in record["variables"] if isinstance(v, dict)
                 and str(v.get("output_column", v.get("column"))) == column)
    drawn = entry.get("drawn_mechanism")
    if isinstance(mechanism, str | os.PathLike) and os.path.isfile(mechanism) and isinstance(drawn, dict) \
            and _sha256(mechanism) == drawn.get("sha256"):
        return  # the drawn channel itself
    raise DataError(f"{found}: column {column!r} of {os.fspath(data)} was drawn from a repaired channel, not from "
                    f"its design: give --manifest {found} instead of --mechanism")
