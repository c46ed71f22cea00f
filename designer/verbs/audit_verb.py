"""The front door of ``designer audit``: :func:`audit` computes every privacy loss of a mechanism (a file or a
:class:`~designer.mechanism.Mechanism`), re-checks the release a file states, and returns an :class:`AuditResult`."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Any

from .._internal.render import fmt, json_number, render_table
from ..exceptions import InvalidArgumentTypeError
from ..mechanism import Mechanism
from ..results import FitStatus, Result, TableData

__all__ = ["AuditResult", "audit"]

#: Frames up to this many answers are printed whole in the title; larger ones are cut after ten answers.
TITLE_FRAME = 12


def _exp(eps: float) -> float:
    return math.exp(eps) if eps < 700 else math.inf


@dataclass(frozen=True, eq=False)
class AuditResult(Result):
    """The privacy losses of a mechanism (``designer audit``), each with the pair and event attaining it.

    Attributes
    ----------
    source : str
        The file read (or ``"mechanism"``), named in the table output's first line.
    mechanism : Mechanism
    losses : dict of str to Witness
        :func:`designer.privacy.privacy_losses`: every loss of :data:`designer.privacy.LOSSES` (Def 3.1, Def 3.13,
        ...), in nats, with its witness.
    release : Release or None
        The release the file states (budget and semantics), re-checked exactly.
    unmet : list of Loss
        The release's losses the mechanism does not keep (empty when it holds, or without a release).
    status : FitStatus
        ``EXACT``: the losses are computed, not fitted.
    warnings : tuple of str

    Examples
    --------
    >>> import designer
    >>> result = designer.audit(designer.Q_2x3(0.6, 0.2))
    >>> print(result.summary().splitlines()[3])
    eps_shafer  1.09861   3      m_no({no}) / m_yes({no})
    """

    source: str
    mechanism: Mechanism
    losses: dict[str, Any]
    release: Any = None
    unmet: tuple[Any, ...] = ()
    status: FitStatus = FitStatus.EXACT
    warnings: tuple[str, ...] = ()

    title = "Audit"

    def __post_init__(self) -> None:
        self._check_status()

    def to_dict(self) -> dict[str, Any]:
        """The ``designer audit --format json`` object: the mechanism's layout, every loss, its witness and the
        release re-checked."""
        mech = self.mechanism
        out: dict[str, Any] = {"inputs": list(mech.inputs), "frame": list(mech.frame),
                               "focal_sets": [list(s) for s in mech.focal_sets], "bayesian": mech.is_bayesian}
        for name, w in self.losses.items():
            out[f"eps_{name}"] = json_number(w.eps)
        out["witness"] = {
            f"eps_{name}": None if w.x is None else {"x": w.x, "x2": w.x2, "event": list(w.event or ())}
            for name, w in self.losses.items()
        }
        release = self.release
        out["release"] = None if release is None else {
            "epsilon": release.epsilon, "semantics": release.semantics.value, "met": not self.unmet,
            "unmet": [loss.value for loss in self.unmet]}
        return out

    def table(self) -> TableData:
        """``loss``, ``eps``, ``e^eps`` and ``attained at``, a row per loss (every digit)."""
        return (["loss", "eps", "e^eps", "attained at"],
                [[f"eps_{n}", w.eps, _exp(w.eps), w.describe()] for n, w in self.losses.items()])

    def summary(self) -> str:
        """The ``designer audit`` table output: the mechanism in a line, the losses (6 digits) and the release's
        verdict."""
        mech = self.mechanism
        kind = "Bayesian" if mech.is_bayesian else "evidential"
        frame = (",".join(mech.frame) if mech.l <= TITLE_FRAME
                 else ",".join(mech.frame[:10]) + f",... ({mech.l} answers)")
        title = f"{self.source}: {mech.k} inputs, frame {{{frame}}}, {len(mech.focal)} focal sets ({kind})"
        columns, rows = self.table()
        text = title + "\n" + render_table(columns, [[r[0], fmt(r[1]), fmt(r[2]), r[3]] for r in rows])
        if self.release is not None:
            verdict = "met" if not self.unmet else "NOT met: " + ", ".join(
                f"{loss.value.capitalize()} loss {self.losses[loss.value].eps:.6g} > {self.release.epsilon:g}"
                for loss in self.unmet)
            text += f"\nrelease: the file states {self.release.describe()}; re-checked exactly: {verdict}"
        return text


def audit(mechanism: Mechanism | str | os.PathLike[str]) -> AuditResult:
    """Every privacy loss of ``mechanism`` (``designer audit``): the Shafer loss (Def 3.1), the Walley loss
    (Def 3.13) and the others of :data:`designer.privacy.LOSSES`, each with the inputs and event attaining it; a
    file's stated release (budget and semantics) is re-checked in exact arithmetic and reported, never refused.

    Parameters
    ----------
    mechanism : Mechanism, str or os.PathLike
        A mechanism, or its file (CSV or JSON, docs/formats.md).

    Returns
    -------
    AuditResult
        ``to_dict()`` is ``designer audit --format json``, ``table()`` its CSV and ``summary()`` its table output.

    Raises
    ------
    InvalidMechanismError
        A file that cannot be read as a mechanism (the message names it).

    Examples
    --------
    The four losses of ``Q_2x3(0.6, 0.2)``: ``ln 3`` for the set answers (Def 3.1), ``ln 4`` for the precise ones
    (Def 3.13):

    >>> import designer
    >>> losses = designer.audit(designer.Q_2x3(0.6, 0.2)).to_dict()
    >>> [round(losses[k], 4) for k in ("eps_shafer", "eps_bel", "eps_pl", "eps_walley")]
    [1.0986, 1.0986, 0.6931, 1.3863]
    """
    from ..privacy import privacy_losses
    from ..release.files import read_mechanism_file, unmet_losses

    release = None
    if isinstance(mechanism, Mechanism):
        mech, source = mechanism, "mechanism"
    elif isinstance(mechanism, (str, os.PathLike)):
        mech, release = read_mechanism_file(mechanism, check=False)  # a broken release is reported, not refused
        source = os.fspath(mechanism)
    else:
        raise InvalidArgumentTypeError(f"audit() takes a Mechanism or the path of a mechanism file, got "
                                       f"{type(mechanism).__name__}")
    losses = privacy_losses(mech)
    unmet = tuple(unmet_losses(mech, release)) if release is not None else ()
    return AuditResult(str(source), mech, dict(losses), release, unmet)
