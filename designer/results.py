"""One shape for every result: a status, warnings, a JSON object, a table and a summary.

Every result the library returns (a design, estimated shares, a group fit, a regression, a plan, a device, a
release) is a :class:`Result`. Like a statsmodels results object, it answers the same questions whatever made
it:

``status``
    How the computation behind it ended, one :class:`FitStatus`. An estimate is never shown without it.
``warnings``
    What the reader should know, in words (a tuple of str, empty when there is nothing to say).
``to_dict()``
    The JSON object of the command that prints it (``--format json``), numbers as :func:`json_tree` writes them.
``to_frame()``
    Its main table as a pandas DataFrame (the ``--format csv`` table).
``summary()``
    The table as text with the status and the warnings (the ``--format table`` output).
``conf_int(level)``
    Confidence intervals ``(k, 2)`` at ``level`` where the result has intervals.

A subclass gives :meth:`Result.to_dict` and :meth:`Result.table`; the rest follows. See docs/architecture.md.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from ._internal.render import cell, fmt, json_tree, render_csv, render_json, render_table
from .exceptions import DesignerError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["FitStatus", "Result", "check_level", "render"]

#: A result's main table: the column names and the rows (cells are numbers, strings, bools or None).
TableData = tuple[list[str], list[list[Any]]]


class FitStatus(StrEnum):
    """How the computation behind a result ended (docs/fits.md).

    A member is its string (``FitStatus.CONVERGED == "converged"``), so JSON, CSV and tables write the word.

    Examples
    --------
    >>> import designer
    >>> fit = designer.estimate(["{yes}"] * 30 + ["{no}"] * 50, designer.Q_WRR(1.0))
    >>> fit.status is designer.FitStatus.CONVERGED, fit.status == "converged"
    (True, True)
    """

    #: The fit reached its optimum and the information there is well conditioned: standard errors are shown.
    CONVERGED = "converged"
    #: Estimates run off to infinity along a direction (complete or quasi-complete separation): no standard errors
    #: for the terms in it.
    SEPARATION = "separation"
    #: The information is well conditioned but the fit did not meet its tolerance: no standard errors.
    NOT_CONVERGED = "not_converged"
    #: The answers do not identify some parameters (aliased terms, a flat likelihood): those have no standard error.
    NOT_IDENTIFIED = "not_identified"
    #: The maximum lies on the edge of the parameter space (a share of 0 or 1, Remark 3.8): the estimate is the
    #: maximum, but a Wald interval is not valid there; intervals are the profile likelihood's.
    BOUNDARY = "boundary"
    #: A design's program was solved and its mechanism certified in exact arithmetic, optimal to the stated
    #: tolerance (Thm 3.10); a mechanism that cannot be certified is never returned.
    OPTIMAL = "optimal"
    #: A design certified in exact arithmetic whose optimality is proved only within a stated gap: the program
    #: solved a restriction of the problem (e.g. precise answers under WLDP, a focal-set restriction or a lying
    #: bound with a variance objective), and ``optimality_gap`` bounds how far the optimum can lie below it.
    LOCAL = "local"
    #: Computed without an iterative fit: closed forms, counts, exact tables (plans, devices, releases).
    EXACT = "exact"


class Result:
    """The base of every result (see the module's docstring).

    A subclass has the attributes ``status`` (a :class:`FitStatus`) and ``warnings`` (a tuple of str), and
    defines :meth:`to_dict` and :meth:`table`; it may define :meth:`conf_int` and a better :meth:`summary`.
    Results are frozen dataclasses; :meth:`_check_status` turns a status given as a word into the enum.

    Examples
    --------
    Every front door returns one; the command line prints it through :func:`render`:

    >>> import designer
    >>> result = designer.audit(designer.Q_WRR(1.0))
    >>> isinstance(result, designer.Result), str(result.status)
    (True, 'exact')
    >>> sorted(result.to_dict())[:3]
    ['bayesian', 'eps_bel', 'eps_pl']
    """

    status: FitStatus
    warnings: tuple[str, ...]

    #: The first line of :meth:`summary`.
    title: str = "Result"

    def _check_status(self) -> None:
        """Make ``status`` a :class:`FitStatus` (a word is accepted and checked) and ``warnings`` a tuple."""
        try:
            status = FitStatus(self.status)
        except ValueError:
            words = ", ".join(s.value for s in FitStatus)
            raise DesignerError(f"status {self.status!r} is not one of {words}") from None
        object.__setattr__(self, "status", status)
        object.__setattr__(self, "warnings", tuple(str(w) for w in self.warnings))

    def to_dict(self) -> dict[str, Any]:
        """The result as the JSON object its command prints (``--format json``); numbers are plain floats,
        infinities and NaN the strings ``"inf"``, ``"-inf"``, ``"nan"``."""
        raise NotImplementedError(f"{type(self).__name__} does not define to_dict")

    def table(self) -> TableData:
        """The main table ``(columns, rows)``: the rows of :meth:`to_frame` and of the CSV output."""
        raise NotImplementedError(f"{type(self).__name__} does not define table")

    def to_frame(self) -> pd.DataFrame:
        """The main table as a pandas DataFrame (one row per line of :meth:`table`)."""
        import pandas as pd

        columns, rows = self.table()
        return pd.DataFrame(rows, columns=columns)

    def summary(self) -> str:
        """The table as text, headed by :attr:`title` and the status, followed by the warnings."""
        columns, rows = self.table()
        shown = [[fmt(v) if isinstance(v, float) else ("" if v is None else v) for v in row] for row in rows]
        lines = [f"{self.title} (status: {self.status})", render_table(columns, shown)]
        lines += [f"warning: {w}" for w in self.warnings]
        return "\n".join(lines)

    def conf_int(self, level: float = 0.95) -> NDArray[np.float64]:
        """Confidence intervals ``(k, 2)`` (low, high) at ``level`` (a probability in (0, 1))."""
        raise DesignerError(f"a {type(self).__name__} has no confidence intervals")

    def __str__(self) -> str:
        return self.summary()


def check_level(level: float) -> float:
    """``level`` as a float in (0, 1), or a :class:`DesignerError` naming it.

    Examples
    --------
    >>> from designer.results import check_level
    >>> check_level(0.9)
    0.9
    """
    try:
        value = float(level)
    except (TypeError, ValueError):
        raise DesignerError(f"level must be a number in (0, 1), not {level!r}") from None
    if not 0.0 < value < 1.0:
        raise DesignerError(f"level must be in (0, 1), not {level!r}")
    return value


def render(result: Result, fmt_name: str) -> str:
    """``result`` in one output format: ``table`` (:meth:`Result.summary`), ``json`` (:meth:`Result.to_dict`) or
    ``csv`` (:meth:`Result.table` with every digit). The command line prints every result through here.

    Examples
    --------
    >>> import designer
    >>> from designer.results import render
    >>> print(render(designer.audit(designer.Q_2x3(0.6, 0.2)), "csv").splitlines()[0])
    loss,eps,e^eps,attained at
    """
    if fmt_name == "json":
        return render_json(json_tree(result.to_dict()))
    if fmt_name == "csv":
        columns, rows = result.table()
        return render_csv(columns, [[cell(v) for v in row] for row in rows])
    if fmt_name == "table":
        return result.summary()
    raise DesignerError(f"format must be table, json or csv, not {fmt_name!r}")
