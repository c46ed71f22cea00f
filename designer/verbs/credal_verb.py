"""The front door of ``designer credal``: :func:`credal` gives the belief and plausibility of every event for each input
of a mechanism (a file or a :class:`~designer.mechanism.Mechanism`) and, for a gamble, its lower and upper
expectations, as a :class:`CredalResult`."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._internal.keywords import read_number, shown
from .._internal.render import fmt, render_table
from .._internal.validation import format_set
from ..exceptions import InvalidArgumentError, InvalidArgumentTypeError
from ..mechanism import Mechanism
from ..results import FitStatus, Result, TableData

__all__ = ["CredalResult", "credal", "parse_gamble"]


@dataclass(frozen=True, eq=False)
class CredalResult(Result):
    """The credal sets of a mechanism's rows (``designer credal``; Def 3.13's lower and upper probabilities).

    Attributes
    ----------
    mechanism : Mechanism
    events : list of str
        The ``2**l - 1`` nonempty events, in mask order.
    bel, pl : (k, 2**l - 1) ndarray
        Belief and plausibility of each event per input.
    gamble : dict of str to float, optional
        A payoff per answer.
    gamble_text : str
        The gamble as given.
    lower, upper : list of float
        The gamble's lower and upper expectations per input (empty without a gamble).
    status : FitStatus
        ``EXACT``.
    warnings : tuple of str

    Examples
    --------
    >>> import designer
    >>> from designer.verbs.credal_verb import credal
    >>> print(credal(designer.Q_WRR(1.0)).summary().splitlines()[2])
    yes    {yes}     0.731059  0.731059
    """

    mechanism: Mechanism
    events: list[str]
    bel: NDArray[np.float64]
    pl: NDArray[np.float64]
    gamble: dict[str, float] | None = None
    gamble_text: str = ""
    lower: tuple[float, ...] = ()
    upper: tuple[float, ...] = ()
    status: FitStatus = FitStatus.EXACT
    warnings: tuple[str, ...] = ()

    title = "Credal sets"

    def __post_init__(self) -> None:
        self._check_status()

    def to_dict(self) -> dict[str, Any]:
        """The ``designer credal --format json`` object."""
        mech = self.mechanism
        obj: dict[str, Any] = {"inputs": list(mech.inputs), "frame": list(mech.frame), "events": self.events,
                               "bel": self.bel.tolist(), "pl": self.pl.tolist()}
        if self.gamble is not None:
            obj.update(gamble=self.gamble, lower_expectation=list(self.lower), upper_expectation=list(self.upper))
        return obj

    def _events_table(self) -> TableData:
        rows = [[x, ev, self.bel[i, e], self.pl[i, e]] for i, x in enumerate(self.mechanism.inputs)
                for e, ev in enumerate(self.events)]
        return ["input", "event", "bel", "pl"], rows

    def table(self) -> TableData:
        """The ``--format csv`` table: the gamble's expectations per input when there is a gamble, else ``bel``
        and ``pl`` of every event per input."""
        if self.gamble is not None:
            return (["input", "lower_expectation", "upper_expectation"],
                    [[x, lo, hi] for x, lo, hi in zip(self.mechanism.inputs, self.lower, self.upper)])
        return self._events_table()

    def summary(self) -> str:
        """The ``designer credal`` table output: bel and pl of every event, then the gamble's expectations."""
        columns, rows = self._events_table()
        text = render_table(columns, [[r[0], r[1], fmt(r[2]), fmt(r[3])] for r in rows])
        if self.gamble is not None:
            text += f"\n\ngamble {self.gamble_text}\n" + render_table(
                ["input", "lower expectation", "upper expectation"],
                [[x, fmt(lo), fmt(hi)] for x, lo, hi in zip(self.mechanism.inputs, self.lower, self.upper)])
        return text


def parse_gamble(text: str) -> dict[str, float]:
    """``yes=1,no=0`` -> ``{"yes": 1.0, "no": 0.0}`` (values as :func:`~designer._internal.keywords.read_number`
    reads them: ``yes=1/2`` too).

    Examples
    --------
    >>> from designer.verbs.credal_verb import parse_gamble
    >>> parse_gamble("yes=1,no=1/2")
    {'yes': 1.0, 'no': 0.5}
    """
    out: dict[str, float] = {}
    for part in text.split(","):
        if not part.strip():
            continue
        if "=" not in part:
            raise InvalidArgumentError(f"{shown('gamble')} {text!r}: write label=value pairs such as yes=1,no=0")
        label, value = part.split("=", 1)
        try:
            out[label.strip()] = read_number(value)
        except ValueError:
            raise InvalidArgumentError(f"{shown('gamble')} {text!r}: {value.strip()!r} is not a number") from None
    return out


def credal(mechanism: Mechanism | str | os.PathLike[str], *, gamble: str | Mapping[str, float] | None = None
           ) -> CredalResult:
    """Belief and plausibility of every nonempty event for each input (the lower and upper probabilities of the
    row's credal set, Def 3.13) and, for a ``gamble``, its lower and upper expectations (Choquet integrals against
    bel and pl).

    Parameters
    ----------
    mechanism : Mechanism, str or os.PathLike
        A mechanism, or its file (refused when it states a release its masses do not meet).
    gamble : str or mapping of str to float, optional
        A payoff per answer: ``"yes=1,no=0"`` or ``{"yes": 1, "no": 0}``.

    Returns
    -------
    CredalResult
        ``to_dict()`` is ``designer credal --format json``, ``table()`` its CSV and ``summary()`` its table output.

    Examples
    --------
    Belief and plausibility of every event for each input of ``Q_2x3(0.6, 0.2)``, and the lower and upper
    expectations of a gamble:

    >>> import designer
    >>> from designer.verbs.credal_verb import credal
    >>> result = credal(designer.Q_2x3(0.6, 0.2), gamble="yes=1,no=0")
    >>> result.events
    ['{yes}', '{no}', '{yes,no}']
    >>> result.bel[0].tolist(), result.pl[0].tolist()  # input yes
    ([0.6, 0.2, 1.0], [0.8, 0.4, 1.0])
    """
    from ..credal import lower_expectation, upper_expectation

    if isinstance(mechanism, Mechanism):
        mech = mechanism
    elif isinstance(mechanism, (str, os.PathLike)):
        from ..release.files import open_mechanism_file

        mech = open_mechanism_file(mechanism).mechanism
    else:
        raise InvalidArgumentTypeError(f"credal() takes a Mechanism or the path of a mechanism file, got "
                                       f"{type(mechanism).__name__}")
    bel, pl = mech.bel(), mech.pl()
    events = [format_set([mech.frame[i] for i in range(mech.l) if e >> i & 1]) for e in range(1, 1 << mech.l)]
    if gamble is None:
        return CredalResult(mech, events, bel[:, 1:], pl[:, 1:])
    text = gamble if isinstance(gamble, str) else ",".join(f"{k}={v}" for k, v in gamble.items())
    payoff = parse_gamble(gamble) if isinstance(gamble, str) else {str(k): float(v) for k, v in gamble.items()}
    lower = tuple(lower_expectation(mech, x, payoff) for x in mech.inputs)
    upper = tuple(upper_expectation(mech, x, payoff) for x in mech.inputs)
    return CredalResult(mech, events, bel[:, 1:], pl[:, 1:], payoff, text, lower, upper)
