"""The front door of ``designer tradeoff``: :func:`tradeoff` draws the trade-off curve of the test between two inputs
of a mechanism (a file or a :class:`~designer.mechanism.Mechanism`) with its bound, and returns a
:class:`TradeoffResult`."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Any

from .._internal.keywords import say
from .._internal.render import fmt, json_number, render_table
from ..exceptions import InvalidArgumentError, InvalidArgumentTypeError
from ..mechanism import Mechanism
from ..results import FitStatus, Result, TableData

__all__ = ["KINDS", "MAX_FOLD", "MAX_POINTS", "TradeoffResult", "tradeoff"]

#: The curves (Thm 3.5 for Shafer's, Thm 3.18 for Walley's).
KINDS = ("pessimistic", "optimistic", "shafer_lower", "shafer_upper")
#: Most levels a trade-off curve is drawn at, and most answers per respondent (the product frame grows as l**fold;
#: composition refuses what would not fit in memory).
MAX_POINTS = 100_001
MAX_FOLD = 12


@dataclass(frozen=True, eq=False)
class TradeoffResult(Result):
    """A trade-off curve and its bound (``designer tradeoff``).

    Attributes
    ----------
    kind : str
        One of :data:`KINDS`.
    null, alt : str
        The inputs of H0 and H1.
    worst_pair : bool
        Whether the pair was chosen as the most powerful test's.
    fold : int
        Answers per respondent (Cor 3.6, Cor 3.19).
    eps : float
        The loss bounding the curve for one answer (nats); the bound is at ``eps * fold``.
    heading : str
        The curve in words (the table output's first line and the plot's title).
    plot : str or None
        The PNG the curve was drawn to.
    rows : list of list of float
        ``alpha``, ``beta``, ``power`` and ``bound`` per level.
    status : FitStatus
        ``EXACT``.
    warnings : tuple of str

    Examples
    --------
    >>> import designer
    >>> curve = designer.tradeoff(designer.Q_WRR(1.0), null="yes", alt="no", points=3)
    >>> curve.kind, len(curve.rows) >= 3
    ('pessimistic', True)
    """

    kind: str
    null: str
    alt: str
    worst_pair: bool
    fold: int
    eps: float
    heading: str
    plot: str | None
    rows: list[list[float]]
    status: FitStatus = FitStatus.EXACT
    warnings: tuple[str, ...] = ()

    title = "Trade-off curve"
    columns = ("alpha", "beta", "power", "bound")

    def __post_init__(self) -> None:
        self._check_status()

    def to_dict(self) -> dict[str, Any]:
        """The ``designer tradeoff --format json`` object: the test, the bound and a list per column."""
        return {"kind": self.kind, "null": self.null, "alt": self.alt, "worst_pair": self.worst_pair,
                "fold": self.fold, "eps_bound": json_number(self.eps * self.fold), "title": self.heading,
                "plot": self.plot,
                **{h: [json_number(r[i]) for r in self.rows] for i, h in enumerate(self.columns)}}

    def table(self) -> TableData:
        """``alpha``, ``beta``, ``power`` and ``bound`` per level (every digit)."""
        return list(self.columns), [list(r) for r in self.rows]

    def summary(self) -> str:
        """The ``designer tradeoff`` table output: the heading, the curve (6 digits) and the plot's file."""
        return (self.heading + "\n" + render_table(list(self.columns), [[fmt(v, 6) for v in r] for r in self.rows])
                + (f"\nplot written to {self.plot}" if self.plot else ""))


def _worst_pair(mech: Mechanism, kind: str, fold: int, alpha: float | None) -> tuple[int, int]:
    """The ordered pair whose test is most powerful: least beta at ``alpha``, else least area under the curve."""
    import numpy as np

    from ..composition import power
    from ..estimation.hypothesis_tests import tradeoff as beta_at

    m = power(mech, fold) if fold > 1 else mech
    levels = np.array([alpha]) if alpha is not None else np.linspace(0.0, 1.0, 201)
    best, pair = math.inf, (0, 1)
    for x in range(mech.k):
        for x2 in range(mech.k):
            if x != x2:
                beta = beta_at(m, x, x2, kind, levels)
                score = float(beta[0] if alpha is not None else np.trapezoid(beta, levels))
                if score < best - 1e-12:
                    best, pair = score, (x, x2)
    return pair


def tradeoff(mechanism: Mechanism | str | os.PathLike[str], *, null: str | None = None, alt: str | None = None,
             alpha: float | None = None, kind: str = "pessimistic", points: int = 101, fold: int = 1,
             plot: str | os.PathLike[str] | None = None, force: bool = False) -> TradeoffResult:
    """The trade-off curve (type II error ``beta`` against type I error ``alpha``) of the test of H0 ``null``
    against H1 ``alt`` from the answers of ``mechanism``, with its bound: Thm 3.5 at the Shafer loss (Def 3.1) for
    ``shafer_lower`` / ``shafer_upper``, Thm 3.18 at the Walley loss (Def 3.13) for ``pessimistic`` /
    ``optimistic``; with ``fold`` answers per respondent, at ``fold`` times the loss (Cor 3.6, Cor 3.19).

    Parameters
    ----------
    mechanism : Mechanism, str or os.PathLike
        A mechanism, or its file (refused when it states a release its masses do not meet).
    null, alt : str, optional
        Inputs of H0 and H1; neither: the pair of the most powerful test.
    alpha : float, optional
        One level in [0, 1] (beta and power there); default ``points`` levels on [0, 1].
    kind : {"pessimistic", "optimistic", "shafer_lower", "shafer_upper"}
    points : int, default 101
        Levels, 2 to :data:`MAX_POINTS`.
    fold : int, default 1
        Answers per respondent, 1 to :data:`MAX_FOLD`.
    plot : str or os.PathLike, optional
        Also draw the curve and its bound to this PNG (never over an existing file unless ``force``).

    Returns
    -------
    TradeoffResult
        ``to_dict()`` is ``designer tradeoff --format json``, ``table()`` its CSV and ``summary()`` its table output.

    Examples
    --------
    The pessimistic curve of ``Q_2x3(0.6, 0.2)`` between yes and no, and its bound at ``eps_walley = ln 4``
    (Thm 3.18):

    >>> import designer
    >>> curve = designer.tradeoff(designer.Q_2x3(0.6, 0.2), null="yes", alt="no", points=5)
    >>> [row[:2] for row in curve.rows[:3]]  # (alpha, beta)
    [[0.0, 1.0], [0.2, 0.7], [0.25, 0.625]]
    >>> round(curve.eps, 4)
    1.3863
    """
    import numpy as np

    from ..estimation.hypothesis_tests import tradeoff_curve
    from ..privacy import eps_shafer, eps_walley

    if kind not in KINDS:
        raise InvalidArgumentError(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")
    if isinstance(mechanism, Mechanism):
        mech, source = mechanism, "the mechanism"
    elif isinstance(mechanism, (str, os.PathLike)):
        from ..release.files import open_mechanism_file

        mech, source = open_mechanism_file(mechanism).mechanism, os.fspath(mechanism)
    else:
        raise InvalidArgumentTypeError(f"tradeoff() takes a Mechanism or the path of a mechanism file, got "
                                       f"{type(mechanism).__name__}")
    if plot is not None:
        from .._internal.keywords import check_output

        check_output(plot, [mechanism], force)
    if mech.k < 2:
        raise InvalidArgumentError(f"{source}: a test needs two inputs; the mechanism has {mech.k}")
    if (null is None) != (alt is None):
        raise InvalidArgumentError(say("give both {null} and {alt}, or neither (then the worst pair is used)"))
    worst = null is None
    if null is None or alt is None:
        first, second = _worst_pair(mech, kind, fold, alpha)
    else:
        first, second = mech.input_index(null), mech.input_index(alt)
        if first == second:
            raise InvalidArgumentError(say("{null} and {alt} must be different inputs"))
    x, x2 = mech.inputs[first], mech.inputs[second]
    walley = kind in ("pessimistic", "optimistic")
    eps = (eps_walley if walley else eps_shafer)(mech)
    answers = f"{fold} answers per respondent, " if fold > 1 else ""
    heading = (f"{kind} trade-off curve ({'Thm 3.18' if walley else 'Thm 3.5'}): H0 {x} vs H1 {x2}"
               f"{' (the worst pair: most powerful test)' if worst else ''}; {answers}bound at "
               f"{'eps_walley' if walley else 'eps_shafer'} = {fmt(eps, 6)}" + (f" x {fold}" if fold > 1 else ""))
    alphas = np.array([alpha]) if alpha is not None else None
    df = tradeoff_curve(mech, first, second, kind, points=points, alphas=alphas, fold=fold)
    df.insert(2, "power", 1.0 - df["beta"])
    if plot is not None:
        from .._internal.plots import plot_tradeoff

        full = df if alphas is None else tradeoff_curve(mech, first, second, kind, points=points, fold=fold)
        plot_tradeoff(full, os.fspath(plot), title=heading)
    rows = df[list(TradeoffResult.columns)].to_numpy().tolist()
    return TradeoffResult(kind, x, x2, worst, fold, eps, heading, None if plot is None else os.fspath(plot), rows)
