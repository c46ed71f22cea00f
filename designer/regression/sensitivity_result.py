"""What a regression under WLDP without a named member returns: the coefficients' range over credal members.

Under WLDP the member of each credal set that produced a precise answer is unknown (Def 3.13), so the
coefficients are not identified; :func:`~designer.regression.model.sensitivity` fits each named member and
:class:`SensitivityResult` holds its table as a :class:`~designer.results.Result` (docs/theory.md section 9).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from ..exceptions import RegressionError
from ..results import FitStatus, Result, TableData, check_level

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["SensitivityResult"]


@dataclass(frozen=True)
class SensitivityResult(Result):
    """The range of every coefficient over named members of the credal sets (WLDP, no ``allocation``).

    Attributes
    ----------
    ranges : pandas.DataFrame
        :func:`~designer.regression.model.sensitivity`'s table, one row per (outcome, term): ``outcome``,
        ``term``, ``estimate[MEMBER]`` for each member, ``low``, ``high`` (their range) and ``ci_low``,
        ``ci_high`` (the widest Wald interval at ``level`` over the members).
    formula : str
    mechanism_label : str
        The mechanism as the output names it (a file's path).
    n : int
        Respondents fitted.
    dropped : int
        Rows dropped for a missing value (``missing="drop"``).
    level : float
    status : FitStatus
        Always ``not_identified``: no member is singled out by the data.
    warnings : tuple of str

    Examples
    --------
    2000 respondents whose log-odds of yes are ``-2 + 0.03 age``, their answers drawn through ``Q_2x3(0.6, 0.2)`` as
    precise answers (each don't-know answer resolved to yes or no at random):

    >>> import numpy as np, pandas as pd
    >>> import designer
    >>> from designer import regression
    >>> rng = np.random.default_rng(0)
    >>> age = rng.integers(18, 80, 2000)
    >>> truth = np.where(rng.random(2000) < 1 / (1 + np.exp(2 - 0.03 * age)), "yes", "no")
    >>> people = pd.DataFrame({"answer": truth, "age": age})
    >>> q = designer.Q_2x3(0.6, 0.2)
    >>> drawn = designer.randomize(people, q, column="answer", keep="age", seed=1, simulation=True, semantics="wldp",
    ...                            allocation=0.5)
    >>> result = designer.regress("response ~ age", drawn.frame, q, semantics="wldp")
    >>> str(result.status), result.ranges["term"].tolist()
    ('not_identified', ['Intercept', 'age'])
    """

    ranges: pd.DataFrame
    formula: str
    mechanism_label: str
    n: int
    dropped: int
    level: float
    status: FitStatus = FitStatus.NOT_IDENTIFIED
    warnings: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        self._check_status()

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of ``designer regress --semantics wldp --format json`` (no ``--allocation``): the
        settings, ``identified: false`` and one object per coefficient, whose ``estimate`` is the uniform
        split's and ``stderr`` null."""
        from .._internal.render import json_number

        columns, rows = self.table()
        coefficients = [{h: json_number(v) if isinstance(v, float) else v for h, v in zip(columns, r)} for r in rows]
        for c in coefficients:
            c["estimate"], c["stderr"] = c.get("estimate[uniform]"), None
        return {"formula": self.formula, "mechanism": self.mechanism_label, "semantics": "wldp", "n": self.n,
                "dropped": self.dropped, "level": self.level, "identified": False, "coefficients": coefficients}

    def table(self) -> TableData:
        """The CSV table: :attr:`ranges` as it is (a missing number is ``nan``)."""
        return [str(c) for c in self.ranges.columns], self.ranges.to_numpy().tolist()

    def summary(self) -> str:
        """The table output of ``designer regress --semantics wldp``: what is not identified, then the range."""
        from .._internal.render import fmt, render_table

        columns, rows = self.table()
        dropped = f"; {self.dropped} row(s) with a missing value dropped" if self.dropped else ""
        head = (f"{self.n} precise answers (WLDP) through {self.mechanism_label}: the coefficients are not identified "
                f"(the member of each credal set that produced the answers is unknown){dropped}.\n"
                "Estimate under each named member "
                "(uniform split, lambda = share of the truth), their range, and the widest interval:")
        return head + "\n" + render_table(columns, [[r[0], r[1], *(fmt(v) for v in r[2:])] for r in rows])

    def conf_int(self, level: float | None = None) -> NDArray[np.float64]:
        """The widest Wald interval over the members ``(P, 2)``, at the fitted :attr:`level` only (another level
        needs the members refitted: call :func:`designer.regress` with it)."""
        if level is not None and not math.isclose(check_level(level), self.level):
            raise RegressionError(f"these ranges were fitted at level {self.level:g}; fit again with level={level!r}")
        return np.column_stack([self.ranges["ci_low"].to_numpy(dtype=np.float64),
                                self.ranges["ci_high"].to_numpy(dtype=np.float64)])
