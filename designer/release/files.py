"""A released mechanism file carries its guarantee: the budget, the semantics and the certificate it was
released with, re-checked in exact arithmetic whenever the file is read (docs/theory.md, section 7.4).

A JSON mechanism file written by ``designer design --out NAME.json`` holds, beside ``inputs``, ``frame``,
``focal_sets`` and ``matrix``, a ``release`` object::

    "release": {"epsilon": 1.0, "semantics": "sldp", "certified": true, "certificate": "exact",
                "certificate_detail": {...}, "designer": "0.2.0"}

Reading such a file decides every loss of its semantics against its epsilon exactly (Def 3.1, Def 3.13); a
file whose masses were edited after the release no longer meets it and is refused where it would be used
(``estimate``, ``randomize``, ``regress``, ...) and reported by ``audit``. CSV files carry no release.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._internal.bundled import resolve
from ..exceptions import InvalidMechanismError
from ..mechanism import Mechanism
from ..privacy import is_private, worst_case
from ..vocabulary import Loss, Semantics

__all__ = ["RELEASE_KEY", "MechanismFile", "Release", "open_mechanism_file", "read_mechanism_file", "release_block",
           "unmet_losses"]

#: The key of the release object in a mechanism JSON file.
RELEASE_KEY = "release"


@dataclass(frozen=True)
class Release:
    """The guarantee a mechanism file states.

    Attributes
    ----------
    epsilon : float
        The budget (nats) it was certified within.
    semantics : Semantics
        ``SLDP`` (Shafer loss), ``WLDP`` (Walley loss) or ``BOTH``.
    certificate : Mapping
        The certificate as written (``certified``, ``certificate``, ``certificate_detail``), for the record.

    Examples
    --------
    >>> from designer import Semantics
    >>> from designer.release.files import Release
    >>> release = Release(1.0, Semantics.SLDP, {"certified": True})
    >>> release.epsilon, str(release.semantics)
    (1.0, 'sldp')
    """

    epsilon: float
    semantics: Semantics
    certificate: Mapping[str, Any]

    def describe(self) -> str:
        names = " and ".join(loss.value.capitalize() for loss in self.semantics.losses)
        return f"{names} loss <= {self.epsilon:g} ({self.semantics.value})"


def release_block(epsilon: float, semantics: Semantics, certificate: Mapping[str, Any]) -> dict[str, Any]:
    """The ``release`` object of a mechanism file: budget, semantics, the certificate's JSON fields
    (:func:`designer.optimal.result.certificate_fields`) and the designer version that wrote it.

    Examples
    --------
    >>> from designer import Semantics
    >>> from designer.release.files import release_block
    >>> sorted(release_block(1.0, Semantics.SLDP, {"certified": True, "certificate": "exact"}))
    ['certificate', 'certified', 'designer', 'epsilon', 'semantics']
    """
    from .._version import __version__

    return {"epsilon": float(epsilon), "semantics": Semantics.parse(semantics).value, **certificate,
            "designer": __version__}


def _stated(obj: Any, source: str) -> Release | None:
    raw = obj.get(RELEASE_KEY) if isinstance(obj, dict) else None
    if raw is None:
        return None
    where = f"{source}: key '{RELEASE_KEY}'"
    if not isinstance(raw, dict):
        raise InvalidMechanismError(f"{where} must be an object with epsilon and semantics")
    eps = raw.get("epsilon")
    if isinstance(eps, bool) or not isinstance(eps, int | float) or not math.isfinite(eps) or eps <= 0:
        raise InvalidMechanismError(f"{where}: epsilon must be a positive number, got {eps!r}")
    semantics = Semantics.parse(raw.get("semantics"), f"{where}: semantics")
    certificate = {k: v for k, v in raw.items() if k not in ("epsilon", "semantics")}
    return Release(float(eps), semantics, certificate)


def unmet_losses(mech: Mechanism, release: Release) -> list[Loss]:
    """The losses of ``release.semantics`` that ``mech`` does not keep within ``release.epsilon``, decided
    exactly on the stored floats; empty when the release holds.

    Examples
    --------
    ``Q_2x3(0.7, 0.1)`` (Shafer loss ``ln 7``) does not keep a release of eps = 1:

    >>> from designer import Semantics
    >>> import designer
    >>> from designer.release.files import Release, unmet_losses
    >>> unmet_losses(designer.Q_2x3(0.7, 0.1), Release(1.0, Semantics.SLDP, {}))
    [<Loss.SHAFER: 'shafer'>]
    """
    return [loss for loss in release.semantics.losses
            if not is_private(mech, release.epsilon, semantics=loss, exact=True)]


def _unmet_on_table(mech: Mechanism, release: Release, exact: tuple[Any, Any]) -> list[Loss]:
    """The losses of ``release.semantics`` that the file's exact table (integer counts over per-row denominators)
    does not keep within ``release.epsilon``, decided with integers."""
    from ..guarantees.exact_table import counts_private

    counts, dens = exact
    focal = [int(b) for b in mech.focal]
    names = {Loss.SHAFER: "sldp", Loss.WALLEY: "wldp"}
    return [loss for loss in release.semantics.losses
            if not counts_private(counts, focal, release.epsilon, names[loss], dens)]


@dataclass(frozen=True)
class MechanismFile:
    """Everything a mechanism file holds, read in one pass (:func:`open_mechanism_file`).

    Attributes
    ----------
    path : str
    mechanism : Mechanism
    release : Release or None
        The guarantee the file states (``None`` for CSV or a JSON file without one).
    exact : (counts, denominators) or None
        An invariant design's exact table: ``(k, F)`` integer counts and ``(k,)`` per-row denominators.
    prior : tuple of Fraction or None
        The prior the exact table keeps invariant, when it states one.
    words : dict of str to tuple of str
        The ``answers`` words (word -> frame labels); empty when the file has none.

    Examples
    --------
    A designed mechanism written as JSON with its ``release`` (what ``design --out gwrr.json`` writes), then read back:

    >>> import json, os, tempfile
    >>> import designer
    >>> from designer.certificate import certificate_fields
    >>> from designer.release.files import open_mechanism_file, read_mechanism_file, release_block, unmet_losses
    >>> problem = designer.DesignProblem(inputs=("yes", "no"), epsilon=1.0, dont_know=0.2, objective="truthful")
    >>> result = designer.design(problem)
    >>> document = result.mechanism.to_json_dict()
    >>> document["release"] = release_block(1.0, problem.semantics, certificate_fields(result.certificate))
    >>> folder = tempfile.TemporaryDirectory()
    >>> path = os.path.join(folder.name, "gwrr.json")
    >>> with open(path, "w") as file:
    ...     _ = file.write(json.dumps(document))
    >>> opened = open_mechanism_file(path)
    >>> opened.path == path, opened.exact, opened.words  # no invariant table, no answer words in this file
    (True, None, {})
    >>> folder.cleanup()
    """

    path: str
    mechanism: Mechanism
    release: Release | None = None
    exact: tuple[Any, Any] | None = None
    prior: tuple[Any, ...] | None = None
    words: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


def _exact_block(obj: Any, mech: Mechanism, p: str) -> tuple[tuple[Any, Any] | None, tuple[Any, ...] | None]:
    """An invariant design's exact table (its ``exact`` block: counts and per-row denominators) and the prior it
    keeps (Fractions, or None when the block states none), checked against the file's masses (each the double
    nearest its fraction) and the invariance in rational arithmetic; ``(None, None)`` without a block."""
    from fractions import Fraction

    block = obj.get("exact") if isinstance(obj, dict) else None
    if block is None:
        return None, None
    try:
        counts = np.array(block["counts"], dtype=np.int64)
        dens = np.array(block["denominators"], dtype=np.int64)
        prior = [Fraction(v) for v in block.get("invariant_prior", [])]
    except (KeyError, TypeError, ValueError, OverflowError, ZeroDivisionError, AttributeError):
        raise InvalidMechanismError(f"{p}: key 'exact': expected counts (integers, one row per input), "
                                    "denominators (one per input) and invariant_prior (fractions)") from None
    if counts.shape != mech.matrix.shape or dens.shape != (mech.k,) or np.any(counts < 0) or np.any(dens <= 0):
        raise InvalidMechanismError(f"{p}: key 'exact': the table's shape does not match the masses")
    if any(float(Fraction(int(c), int(d))) != float(v) for row, d, mrow in zip(counts, dens, mech.matrix)
           for c, v in zip(row, mrow)) or not np.array_equal(counts.sum(axis=1), dens):
        raise InvalidMechanismError(f"{p}: the exact table does not give the file's masses: one of them was "
                                    "changed after designer wrote it; design the mechanism again")
    if prior:
        from ..guarantees.exact_table import invariance_holds

        column = [list(mech.frame).index(x) if x in mech.frame else -1 for x in mech.inputs]
        if len(prior) != mech.k or min(column) < 0 or not invariance_holds(counts, dens, prior, column):
            raise InvalidMechanismError(f"{p}: the exact table does not keep the prior it states invariant")
    return (counts, dens), (tuple(prior) if prior else None)


def open_mechanism_file(path: str | os.PathLike[str], *, check: bool = True) -> MechanismFile:
    """Read a mechanism file once: the mechanism, the release it states, an exact table and its answer words.

    Parameters
    ----------
    path : str or path-like
        ``.json`` (the JSON layout, optionally with ``release``, ``exact`` and ``answers``) or CSV.
    check : bool, default True
        Refuse a file whose masses do not meet its stated release (:class:`InvalidMechanismError` naming the
        file, the loss and its value); ``audit`` reads with ``check=False`` to report it instead.

    Returns
    -------
    MechanismFile

    Examples
    --------
    >>> import json, os, tempfile
    >>> import designer
    >>> from designer.certificate import certificate_fields
    >>> from designer.release.files import open_mechanism_file, read_mechanism_file, release_block, unmet_losses
    >>> problem = designer.DesignProblem(inputs=("yes", "no"), epsilon=1.0, dont_know=0.2, objective="truthful")
    >>> result = designer.design(problem)
    >>> document = result.mechanism.to_json_dict()
    >>> document["release"] = release_block(1.0, problem.semantics, certificate_fields(result.certificate))
    >>> folder = tempfile.TemporaryDirectory()
    >>> path = os.path.join(folder.name, "gwrr.json")
    >>> with open(path, "w") as file:
    ...     _ = file.write(json.dumps(document))
    >>> opened = open_mechanism_file(path)
    >>> opened.mechanism.inputs, opened.release.epsilon, str(opened.release.semantics)
    (('yes', 'no'), 1.0, 'sldp')
    >>> folder.cleanup()
    """
    from ..estimation.answers import answer_words_of

    path = resolve(path, "mechanism", error=InvalidMechanismError)  # a file that exists, else designer's own
    p = str(path)
    mech, obj = Mechanism.read_document(path)
    if obj is None:
        return MechanismFile(p, mech)
    release = _stated(obj, p)
    exact, prior = _exact_block(obj, mech, p)
    if check and release is not None:
        # An exact table is what is released and drawn: its integers decide the budget (the masses are the doubles
        # nearest its fractions, and rounding to them may move a ratio at the budget by an ulp either way).
        unmet = _unmet_on_table(mech, release, exact) if exact is not None else unmet_losses(mech, release)
        if unmet:
            loss = unmet[0]
            value = worst_case(mech, loss.value).eps
            raise InvalidMechanismError(
                f"{p}: the file states {release.describe()}, but its masses have {loss.value.capitalize()} loss "
                f"{value:.6g}: they were changed after designer certified them; design the mechanism again (or "
                f"run 'designer audit {p}' to see its losses)")
    return MechanismFile(p, mech, release, exact, prior, answer_words_of(obj, p))


def read_mechanism_file(path: str | os.PathLike[str], *, check: bool = True) -> tuple[Mechanism, Release | None]:
    """``(mechanism, release)`` of :func:`open_mechanism_file`.

    Examples
    --------
    >>> import json, os, tempfile
    >>> import designer
    >>> from designer.certificate import certificate_fields
    >>> from designer.release.files import open_mechanism_file, read_mechanism_file, release_block, unmet_losses
    >>> problem = designer.DesignProblem(inputs=("yes", "no"), epsilon=1.0, dont_know=0.2, objective="truthful")
    >>> result = designer.design(problem)
    >>> document = result.mechanism.to_json_dict()
    >>> document["release"] = release_block(1.0, problem.semantics, certificate_fields(result.certificate))
    >>> folder = tempfile.TemporaryDirectory()
    >>> path = os.path.join(folder.name, "gwrr.json")
    >>> with open(path, "w") as file:
    ...     _ = file.write(json.dumps(document))
    >>> mechanism, release = read_mechanism_file(path)
    >>> unmet_losses(mechanism, release)  # re-checked exactly on reading: the release holds
    []
    >>> folder.cleanup()
    """
    file = open_mechanism_file(path, check=check)
    return file.mechanism, file.release
