"""The budget ledger of randomize (docs/guide/release.md, "The budget ledger"): each release of a file records a
keyed fingerprint of the randomized column, the design and its loss; a further release of the same data states the
composed loss (sequential composition: the losses add, Lemma 3.3) and ``--budget-cap`` refuses one past the cap.

One pass over the input (:func:`scan_input`) computes the fingerprints and finds kept columns that copy a randomized
one verbatim (refused: the copy would release the truth).

A fingerprint is ``HMAC-SHA256(key, "designer-fingerprint-v1" || for each row: position || length || text)`` of the
column's cells as text (the row's position in the input is its identity), under the ledger's own random 256-bit
key: it identifies the same data in the same order, and without the key says nothing of the values (a guess of the
column cannot be checked against it).
"""

from __future__ import annotations

import datetime
import hashlib
import hmac
import json
import os
import secrets
import struct
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from ..exceptions import DataError
from ..exceptions import InvalidArgumentError as CommandError
from ..results import FitStatus, Result, TableData

__all__ = ["Ledger", "LedgerEntry", "LedgerHistory", "Scan", "default_ledger_path", "ledger_history", "nats",
           "scan_input", "settle"]

#: The name of the ledger randomize keeps beside its input by default.
LEDGER_NAME = "designer-ledger.json"
#: The ``kind`` a ledger file declares.
LEDGER_KIND = "designer budget ledger"
#: Largest ledger read (about 40,000 releases).
MAX_LEDGER_BYTES = 32 * 2**20
_TAG = b"designer-fingerprint-v1"


@dataclass(frozen=True)
class Scan:
    """What one pass over a release's input found: each randomized column's fingerprint (keyed by the ledger's
    key; empty without a key) and the rows read.

    Examples
    --------
    >>> from designer.release.ledger import Scan
    >>> Scan({"answer": "ab" * 32}, 2).rows
    2
    """

    fingerprints: dict[str, str]
    rows: int


def scan_input(inp: Any, randomized: list[str], kept: list[str], key: bytes | None) -> Scan:
    """Read the input once: refuse a kept column that is an exact copy of a randomized one (one line naming them),
    and fingerprint each randomized column under ``key`` (none when ``key`` is None).

    Parameters
    ----------
    inp : designer.release.rows.ReleaseInput
        The release's input (its ``chunks()``: the randomized columns as text, the kept ones as stored).
    randomized, kept : list of str
        The columns randomized, and those copied to the output.
    key : bytes or None
        The ledger's key.

    Returns
    -------
    Scan

    Raises
    ------
    InvalidArgumentError
        A kept column holding, row for row, the text of a randomized column.

    Examples
    --------
    >>> import pandas as pd
    >>> from designer.release.ledger import scan_input
    >>> from designer.release.rows import ReleaseInput
    >>> frame = pd.DataFrame({"answer": ["yes", "no"], "copy": ["yes", "no"], "id": [1, 2]})
    >>> scan_input(ReleaseInput(frame, "data", ["answer"], ["id"]), ["answer"], ["id"], b"k").rows
    2
    >>> scan_input(ReleaseInput(frame, "data", ["answer"], ["id", "copy"]), ["answer"], ["id", "copy"], None)
    Traceback (most recent call last):
    ...
    designer.exceptions.InvalidArgumentError: --keep copies the randomized column 'answer' verbatim as 'copy' ...
    """
    from .._internal.canonical import cell_text

    macs = {c: hmac.new(key, _TAG, hashlib.sha256) for c in randomized} if key is not None else {}
    same = {(k, c): True for k in kept for c in randomized}
    rows = 0
    for chunk in inp.chunks():
        texts = {c: ["" if v is None else str(v) for v in chunk.text[c]] for c in randomized}
        for c, mac in macs.items():
            mac.update(b"".join(struct.pack("<QQ", rows + i, len(raw)) + raw
                                for i, raw in enumerate(t.encode("utf-8", "surrogatepass") for t in texts[c])))
        for k, c in [pair for pair, equal in same.items() if equal]:
            values = [cell_text(v) for v in chunk.kept.column(k).to_pylist()]
            same[(k, c)] = all((v or "") == t for v, t in zip(values, texts[c]))
        rows += chunk.rows
    copies = [(k, c) for (k, c), equal in same.items() if equal and rows > 0]
    if copies:
        said = "; ".join(f"the randomized column {c!r} verbatim as {k!r}" for k, c in copies)
        names = ", ".join(repr(k) for k in dict.fromkeys(k for k, _ in copies))
        raise CommandError(f"--keep copies {said} (every row holds its true answer): drop {names} from --keep")
    return Scan({c: mac.hexdigest() for c, mac in macs.items()}, rows)


def default_ledger_path(answers: str | None, out: str) -> str:
    """The ledger's default path: ``designer-ledger.json`` in the input's folder (a dataset folder's parent), or in
    the output's when the input is a DataFrame or one of designer's own example files.

    Examples
    --------
    >>> import os
    >>> from designer.release.ledger import default_ledger_path
    >>> default_ledger_path(os.path.join("survey", "truth.csv"), "r.csv") == os.path.join(
    ...     os.path.abspath("survey"), "designer-ledger.json")
    True
    """
    from importlib import resources

    import designer

    owns = [os.path.dirname(os.path.abspath(designer.__file__))]
    for package in ("designer.examples", "designer.problems"):  # outside designer/ in a source checkout
        owns.append(os.path.abspath(str(resources.files(package))))
    if answers is not None:
        full = os.path.abspath(answers.rstrip("/" + os.sep) or answers)
        if all(os.path.commonpath([full, own]) != own for own in owns):
            return os.path.join(os.path.dirname(full), LEDGER_NAME)
    return os.path.join(os.path.dirname(os.path.abspath(out)), LEDGER_NAME)


@dataclass
class Ledger:
    """A budget ledger: its key and the releases it records, read from and written to ``path`` (JSON).

    Examples
    --------
    >>> import os, tempfile
    >>> from fractions import Fraction
    >>> from designer.release.ledger import Ledger
    >>> folder = tempfile.TemporaryDirectory()
    >>> ledger = Ledger.open(os.path.join(folder.name, "ledger.json"))
    >>> ledger.record({"answer": "f1"}, {"answer": "warner.json"}, {"answer": Fraction(1)}, Fraction(1), "r1.csv",
    ...               "r1.csv.manifest.json")
    >>> ledger.composed({"answer": "f1"}, Fraction(1))  # a second release of the same data: the losses add
    (Fraction(2, 1), [1])
    >>> folder.cleanup()
    """

    path: str
    key: bytes
    releases: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def open(cls, path: str) -> Ledger:
        """The ledger at ``path``, or a new one with a fresh random key when no file is there; refused when its
        folder cannot take it (the release is checked before anything is written)."""
        folder = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(folder):
            raise DataError(f"{path}: the budget ledger's folder {folder} does not exist; create it or give "
                            "--ledger PATH in a folder that does")
        if not os.access(folder, os.W_OK | os.X_OK):
            raise DataError(f"{path}: the budget ledger cannot be written in {folder} (permission denied); give "
                            "--ledger PATH in a folder you can write")
        if not os.path.lexists(path):
            return cls(path, secrets.token_bytes(32))
        record = _read(path)
        try:
            if record.get("kind") != LEDGER_KIND:
                raise ValueError
            key = bytes.fromhex(record["key"])
            releases = record["releases"]
            if len(key) < 16 or not isinstance(releases, list) or not all(
                    isinstance(r, dict) and isinstance(r.get("variables"), list) for r in releases):
                raise ValueError
            for r in releases:
                Fraction(str(r["loss_exact"]))
                for v in r["variables"]:
                    str(v["fingerprint"])
        except (ValueError, KeyError, TypeError, AttributeError, ZeroDivisionError):
            raise DataError(f"{path}: not a budget ledger designer wrote ('kind', 'key', 'releases'); give another "
                            "--ledger") from None
        return cls(path, key, releases)

    def composed(self, fingerprints: dict[str, str], loss: Fraction) -> tuple[Fraction, list[int]]:
        """The composed loss of a new release of loss ``loss`` whose columns have ``fingerprints``: its loss plus
        that of every earlier release sharing a fingerprint with it (Lemma 3.3: the losses add), and those releases'
        numbers."""
        mine = set(fingerprints.values())
        earlier = [r for r in self.releases if mine & {str(v["fingerprint"]) for v in r["variables"]}]
        return loss + sum((Fraction(str(r["loss_exact"])) for r in earlier), Fraction(0)), \
            [int(r.get("release", i + 1)) for i, r in enumerate(earlier)]

    def record(self, fingerprints: dict[str, str], designs: dict[str, str], epsilons: dict[str, Fraction],
               loss: Fraction, out: str, manifest: str) -> None:
        """Append a release and write the ledger (:func:`_write`: owner-only, atomically; an interrupted write
        leaves the old ledger and no temporary file)."""
        composed, _ = self.composed(fingerprints, loss)
        self.releases.append({
            "release": len(self.releases) + 1,
            "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            "output": os.path.abspath(out), "manifest": os.path.abspath(manifest),
            "loss_exact": str(loss), "loss": float(loss),
            "composed_exact": str(composed), "composed": float(composed),
            "variables": [{"column": c, "fingerprint": f, "design": designs.get(c, ""),
                           "epsilon_exact": str(epsilons.get(c, "")), "epsilon": float(epsilons.get(c, 0))}
                          for c, f in fingerprints.items()]})
        text = json.dumps({"kind": LEDGER_KIND, "version": 1, "key": self.key.hex(),
                           "note": "fingerprints are HMAC-SHA256 under this key of each randomized column and its "
                                   "rows' positions, never the values; keep this file as private as the data",
                           "releases": self.releases}, indent=2) + "\n"
        _write(self.path, text)


def nats(loss: Fraction) -> str:
    """A loss as stated on stderr: its float and, unless it is a whole number, the exact fraction.

    Examples
    --------
    >>> from fractions import Fraction
    >>> from designer.release.ledger import nats
    >>> nats(Fraction(2)), nats(Fraction(7, 3))
    ('2 nats', '2.33333 nats (exactly 7/3)')
    """
    return f"{loss} nats" if loss.denominator == 1 else f"{float(loss):.6g} nats (exactly {loss})"


#: The permissions of a ledger file whatever the umask: read and written by its owner only (it holds the key).
LEDGER_MODE = 0o600


def _write(path: str, text: str) -> None:
    """Write a ledger: owner-only (:data:`LEDGER_MODE`, whatever the umask: the file holds the key), atomically (a
    file in the same folder, synced and renamed into place by :func:`designer._internal.io.atomic_writer`; an
    interrupted write leaves the old ledger and no temporary file). What is at ``path`` is replaced only when it is
    a ledger (a regular file whose ``kind`` is :data:`LEDGER_KIND`); a link to a ledger is kept and the ledger it
    names replaced."""
    import stat

    from .._internal.io import atomic_writer

    target = os.path.realpath(path)
    if os.path.lexists(target) and _read(target).get("kind") != LEDGER_KIND:  # _read: regular files only
        raise DataError(f"{path}: no longer a budget ledger designer wrote (replaced during the release); the "
                        "release is written but not recorded: give --ledger PATH")
    try:
        with atomic_writer(target) as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                raise DataError(f"{path}: is not a regular file; a budget ledger is a JSON file (--ledger)")
            os.fchmod(fh.fileno(), LEDGER_MODE)
            fh.write(text.encode("utf-8"))
    except OSError as exc:
        raise DataError(f"{path}: the budget ledger cannot be written ({exc.strerror or exc}); give "
                        "--ledger PATH in a folder you can write") from None


def _read(path: str) -> dict[str, Any]:
    """A ledger file read as a regular file only (a pipe or a device refused without waiting), at most
    :data:`MAX_LEDGER_BYTES`."""
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise DataError(f"{path}: the budget ledger cannot be opened ({exc.strerror}); give another --ledger") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise DataError(f"{path}: is not a regular file; a budget ledger is a JSON file (--ledger)")
    with os.fdopen(fd, "rb") as f:
        data = f.read(MAX_LEDGER_BYTES + 1)
    if len(data) > MAX_LEDGER_BYTES:
        raise DataError(f"{path}: larger than {MAX_LEDGER_BYTES // 2**20} MiB, not a budget ledger (--ledger)")
    from .._internal.formats import _depth

    try:
        text = data.decode("utf-8")
        if _depth(text) > 16:
            raise ValueError
        record = json.loads(text)
        if not isinstance(record, dict):
            raise ValueError
    except (ValueError, RecursionError):
        raise DataError(f"{path}: not a budget ledger designer wrote (JSON); give another --ledger") from None
    return record


@dataclass(frozen=True)
class LedgerHistory(Result):
    """The releases a budget ledger records (``designer audit --ledger PATH``), and for each data fingerprint the
    composed loss of the releases that hold it (Lemma 3.3: the losses add), exactly and as a float.

    Attributes
    ----------
    path : str
        The ledger read.
    releases : tuple of dict
        The releases as recorded: number, date, output and manifest, ``loss_exact`` and ``loss``, ``composed_exact``
        and ``composed`` (the data's composed loss when it was released), and each variable's column,
        fingerprint, design and ``epsilon_exact``.
    status : FitStatus
        ``EXACT``: read and summed in rational arithmetic.
    warnings : tuple of str

    Examples
    --------
    >>> import os, tempfile
    >>> from fractions import Fraction
    >>> from designer.release.ledger import Ledger, ledger_history
    >>> folder = tempfile.TemporaryDirectory()
    >>> path = os.path.join(folder.name, "ledger.json")
    >>> for out in ("r1.csv", "r2.csv"):
    ...     Ledger.open(path).record({"answer": "ab" * 32}, {"answer": "warner.json"}, {"answer": Fraction(1, 3)},
    ...                              Fraction(1, 3), out, out + ".manifest.json")
    >>> history = ledger_history(path)
    >>> history.to_dict()["data"][0]["composed_exact"], history.to_dict()["data"][0]["releases"]
    ('2/3', [1, 2])
    >>> print(history.summary().splitlines()[2].split("; ")[1])  # the second release's line, after its columns
    release loss 0.333333 nats (exactly 1/3), composed loss 0.666667 nats (exactly 2/3) -> r2.csv
    >>> folder.cleanup()
    """

    path: str
    releases: tuple[dict[str, Any], ...]
    status: FitStatus = FitStatus.EXACT
    warnings: tuple[str, ...] = ()
    title = "Budget ledger"

    def __post_init__(self) -> None:
        self._check_status()

    def data(self) -> list[dict[str, Any]]:
        """Per data fingerprint, in order of first release: its columns, the releases that hold it and their
        composed loss (the sum of those releases' losses, exactly as a fraction's text and as a float)."""
        seen: dict[str, dict[str, Any]] = {}
        for i, r in enumerate(self.releases):
            for v in r["variables"]:
                entry = seen.setdefault(str(v["fingerprint"]), {"columns": [], "releases": [], "sum": Fraction(0)})
                if v["column"] not in entry["columns"]:
                    entry["columns"].append(str(v["column"]))
                number = int(r.get("release", i + 1))
                if number not in entry["releases"]:
                    entry["releases"].append(number)
                    entry["sum"] += Fraction(str(r["loss_exact"]))
        return [{"fingerprint": f, "columns": e["columns"], "releases": e["releases"],
                 "composed_exact": str(e["sum"]), "composed": float(e["sum"])} for f, e in seen.items()]

    def to_dict(self) -> dict[str, Any]:
        """The ``designer audit --ledger PATH --format json`` object: the ledger, its releases as recorded and the
        composed loss per data fingerprint (never the key)."""
        return {"ledger": self.path, "releases": [dict(r) for r in self.releases], "data": self.data(),
                "note": "losses of releases of the same data add (Lemma 3.3); the ledger sees only the releases "
                        "recorded in it"}

    def table(self) -> TableData:
        """The ``--format csv`` rows: one per release and column."""
        return (["release", "date", "output", "column", "fingerprint", "design", "epsilon_exact", "loss_exact",
                 "composed_exact"],
                [[r.get("release"), r.get("date"), os.path.basename(str(r.get("output"))), v["column"],
                  v["fingerprint"], v["design"], str(v["epsilon_exact"]), str(r["loss_exact"]),
                  str(r["composed_exact"])] for r in self.releases for v in r["variables"]])

    def summary(self) -> str:
        """The ``--format table`` text: a line on the ledger, then one line per release (date, each column's
        fingerprint (its first 10 digits), design and loss, the release's loss and its data's composed loss)."""
        lines = [f"{self.path}: {len(self.releases)} release(s); losses of releases of the same data add (Lemma 3.3)"]
        for r in self.releases:
            columns = ", ".join(f"column {v['column']!r} (data {str(v['fingerprint'])[:10]}..., design "
                                f"{v['design']}, {nats(Fraction(str(v['epsilon_exact'])))})" for v in r["variables"])
            lines.append(f"#{r.get('release')} {r.get('date')} {columns}; release loss "
                         f"{nats(Fraction(str(r['loss_exact'])))}, composed loss "
                         f"{nats(Fraction(str(r['composed_exact'])))} -> {os.path.basename(str(r.get('output')))}")
        return "\n".join(lines)


def ledger_history(path: str) -> LedgerHistory:
    """The history of the ledger at ``path`` (``designer audit --ledger PATH``; :class:`LedgerHistory`).

    Examples
    --------
    >>> from designer.release.ledger import ledger_history
    >>> ledger_history("no-such-ledger.json")
    Traceback (most recent call last):
    ...
    designer.exceptions.DataError: no-such-ledger.json: no such budget ledger (--ledger: the designer-ledger.json ...
    """
    if not os.path.lexists(path):
        raise DataError(f"{path}: no such budget ledger (--ledger: the designer-ledger.json randomize wrote)")
    return LedgerHistory(path, tuple(Ledger.open(path).releases))


@dataclass(frozen=True)
class LedgerEntry:
    """A release's place in its ledger, settled before its files are written: the ledger, the columns'
    fingerprints, designs and losses, the release's loss and the composed loss of its data with the earlier
    releases it shares data with.

    Examples
    --------
    >>> import os, tempfile
    >>> from fractions import Fraction
    >>> from designer.release.ledger import Ledger, LedgerEntry
    >>> folder = tempfile.TemporaryDirectory()
    >>> entry = LedgerEntry(Ledger.open(os.path.join(folder.name, "l.json")), {"answer": "f"}, {}, {},
    ...                     Fraction(1), Fraction(1), [])
    >>> entry.warning() is None, entry.manifest_record()["composed_epsilon_exact"]
    (True, '1')
    >>> folder.cleanup()
    """

    ledger: Ledger
    fingerprints: dict[str, str]
    designs: dict[str, str]
    epsilons: dict[str, Fraction]
    loss: Fraction
    composed: Fraction
    earlier: list[int]

    def warning(self) -> str | None:
        """The stderr line of a further release of data already in the ledger (None for a first release)."""
        if not self.earlier:
            return None
        terms = " + ".join(f"{float(Fraction(str(r['loss_exact']))):.6g}" for r in self.ledger.releases
                           if int(r.get("release", 0)) in self.earlier)
        return (f"this data was released before ({len(self.earlier)} earlier release(s) in {self.ledger.path}: "
                f"#{', #'.join(map(str, self.earlier))}): a respondent's composed loss is now {nats(self.composed)}, "
                f"{terms} + {float(self.loss):.6g} (the losses of releases of the same answers add, Lemma 3.3)")

    def manifest_record(self) -> dict[str, Any]:
        """What the manifest records of the ledger: its file name only (the ledger stays with the data, and the
        folder it is in is nobody's business once the release is published)."""
        return {"path": os.path.basename(self.ledger.path), "fingerprints": dict(self.fingerprints),
                "earlier_releases": list(self.earlier), "release_epsilon_exact": str(self.loss),
                "composed_epsilon_exact": str(self.composed), "composed_epsilon": float(self.composed),
                "note": "sequential composition: the losses of every release of the same data add; the ledger sees "
                        "only the releases recorded in it"}

    def record(self, out: str, manifest: str) -> None:
        """Append the release (once its files are in place)."""
        self.ledger.record(self.fingerprints, self.designs, self.epsilons, self.loss, out, manifest)


def settle(path: str, inp: Any, randomized: list[str], kept: list[str], designs: dict[str, str],
           epsilons: dict[str, Fraction], loss: Fraction, cap: Fraction | None) -> LedgerEntry:
    """Open the ledger at ``path``, read the input once (:func:`scan_input`: kept copies of a randomized column
    refused, fingerprints) and compose the release's loss with the earlier releases of the same data; refuse it
    when that exceeds ``cap`` (``--budget-cap``, compared exactly).

    Examples
    --------
    >>> import os, tempfile
    >>> from fractions import Fraction
    >>> import pandas as pd
    >>> from designer.release.ledger import settle
    >>> from designer.release.rows import ReleaseInput
    >>> folder = tempfile.TemporaryDirectory()
    >>> path = os.path.join(folder.name, "ledger.json")
    >>> inp = ReleaseInput(pd.DataFrame({"answer": ["yes", "no"]}), "data", ["answer"], [])
    >>> first = settle(path, inp, ["answer"], [], {"answer": "w.json"}, {"answer": Fraction(1)}, Fraction(1), None)
    >>> first.record("r1.csv", "r1.csv.manifest.json")
    >>> settle(path, inp, ["answer"], [], {"answer": "w.json"}, {"answer": Fraction(1)}, Fraction(1), None).composed
    Fraction(2, 1)
    >>> settle(path, inp, ["answer"], [], {}, {}, Fraction(1), Fraction(3, 2))
    Traceback (most recent call last):
    ...
    designer.exceptions.InvalidArgumentError: --budget-cap 1.5: this release (1 nats) would bring its data's ...
    >>> folder.cleanup()
    """
    ledger = Ledger.open(path)
    scan = scan_input(inp, randomized, kept, ledger.key)
    composed, earlier = ledger.composed(scan.fingerprints, loss)
    if cap is not None and composed > cap:
        before = f"with release #{', #'.join(map(str, earlier))} in {path}" if earlier else "on its own"
        raise CommandError(f"--budget-cap {float(cap):g}: this release ({nats(loss)}) would bring its data's composed "
                           f"loss to {nats(composed)} {before}; the data has no budget left for it")
    return LedgerEntry(ledger, scan.fingerprints, designs, epsilons, loss, composed, earlier)
