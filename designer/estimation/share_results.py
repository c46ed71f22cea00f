"""What ``estimate`` returns: the shares of one survey with how they were read and fitted, in the estimate
command's three shapes (one design, several designs or non-compliance, precise answers; docs/theory.md section 8).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._internal.render import fmt, render_table
from ..exceptions import DesignerError
from ..results import FitStatus, Result, TableData, check_level
from .groups import GroupEstimate
from .identification import IdentifiedSet
from .shares import Estimate, share_intervals

__all__ = ["ShareEstimates", "ShareTestReport", "bounds_note"]


def _cell(v: float) -> float | None:
    """A figure for JSON: None when absent (NaN)."""
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)


@dataclass(frozen=True)
class ShareTestReport:
    """A test of one share against a null value (``test="yes=0.3"``): the Wald test and, from the answer counts,
    the likelihood-ratio test (none under weights or clusters, whose pseudo-likelihood is not a likelihood).

    Attributes
    ----------
    share : str
    null : float
    wald_statistic, wald_pvalue : float
        NaN without a standard error.
    lr_statistic, lr_pvalue : float or None
        None without a likelihood (``note`` says why).
    constrained : dict of str to float or None
        The shares' maximum under the null.
    lr_converged : bool or None
    note : str or None

    Examples
    --------
    ``estimate(..., test="yes=0.3")``'s Wald and likelihood-ratio tests of one share:

    >>> import designer
    >>> fit = designer.estimate(["{yes}"] * 30 + ["{no}"] * 50 + ["{yes,no}"] * 20, designer.Q_2x3(0.6, 0.2),
    ...                         test="yes=0.3")
    >>> fit.test.share, fit.test.null, round(fit.test.wald_pvalue, 3), round(fit.test.lr_pvalue, 3)
    ('yes', 0.3, 0.644, 0.647)
    """

    share: str
    null: float
    wald_statistic: float
    wald_pvalue: float
    lr_statistic: float | None = None
    lr_pvalue: float | None = None
    constrained: dict[str, float] | None = None
    lr_converged: bool | None = None
    note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON object ``test`` of ``estimate --format json``."""
        out: dict[str, Any] = {"share": self.share, "null": self.null,
                               "wald": {"statistic": _cell(self.wald_statistic), "pvalue": _cell(self.wald_pvalue)}}
        if self.lr_statistic is None:
            out["lr"] = None
            out["note"] = self.note
            return out
        out["lr"] = {"statistic": self.lr_statistic, "pvalue": self.lr_pvalue, "constrained": self.constrained,
                     "converged": self.lr_converged}
        return out

    def cells(self) -> list[Any]:
        """The CSV cells ``test_null``, ``wald_statistic``, ``wald_pvalue``, ``lr_statistic``, ``lr_pvalue``."""
        return [self.null, _cell(self.wald_statistic), _cell(self.wald_pvalue), self.lr_statistic, self.lr_pvalue]

    def line(self) -> str:
        """The test as one line of text."""
        line = (f"test of {self.share} = {self.null:g} (two-sided, chi-square 1 df): Wald "
                + ("-" if _cell(self.wald_statistic) is None
                   else f"{self.wald_statistic:.4g}, p = {self.wald_pvalue:.4g}"))
        if self.lr_statistic is None:
            return line + f"; {self.note}"
        return line + f"; likelihood ratio {self.lr_statistic:.4g}, p = {self.lr_pvalue:.4g}"


def bounds_note(level: float) -> str:
    """The line explaining the bound columns under cheater detection (docs/fits.md).

    Examples
    --------
    >>> from designer.estimation.share_results import bounds_note
    >>> bounds_note(0.95).startswith("bounds: each prevalence lies between low and high")
    True
    """
    return (f"bounds: each prevalence lies between low and high; low_ci and high_ci are their {level:g} intervals, "
            f"and low_ci_low to high_ci_high covers the prevalence with probability at least {level:g}\n")


def _dropped(dropped: int) -> str:
    return f" ({dropped} row(s) without an answer dropped)" if dropped else ""


def _empty(v: Any) -> Any:
    """A CSV cell: an absent figure (None, NaN) empty."""
    return "" if v is None or (isinstance(v, float) and math.isnan(v)) else v


@dataclass(frozen=True)
class ShareEstimates(Result):
    """The shares of a survey's inputs from its randomized answers (:func:`designer.estimate`).

    One of three fits, by what was asked: :class:`~designer.estimation.shares.Estimate` (one design, the
    maximum-likelihood shares, Remark 3.8), :class:`~designer.estimation.groups.GroupEstimate` (several designs,
    non-compliance, an unrelated question), or :class:`~designer.estimation.identification.IdentifiedSet`
    (precise answers, ``semantics="wldp"``: each share's identified interval, Def 3.13).

    Attributes
    ----------
    fit : Estimate, GroupEstimate or IdentifiedSet
    semantics : {"sldp", "wldp"}
    dropped : int
        Rows without an answer (or a group, weight, cluster) dropped (``missing="drop"``).
    mechanisms : dict of str to str
        Each group's mechanism as named in the output (``{"": "five.csv"}`` for one design).
    weights, weight_kind, cluster : str or None
        The survey's columns (and the weights' kind) the fit used.
    test : ShareTestReport or None
    status : FitStatus
        The fit's (``exact`` for an identified set: linear programs, no iterative fit).
    warnings : tuple of str

    Examples
    --------
    What :func:`designer.estimate` returns:

    >>> import designer
    >>> fit = designer.estimate(["{yes}"] * 30 + ["{no}"] * 50 + ["{yes,no}"] * 20, designer.Q_2x3(0.6, 0.2))
    >>> str(fit.status), fit.estimate.round(4).tolist()
    ('converged', [0.25, 0.75])
    >>> fit.conf_int().shape, fit.to_frame()["estimate"].round(4).tolist()
    ((2, 2), [0.25, 0.75])
    """

    fit: Estimate | GroupEstimate | IdentifiedSet
    semantics: str = "sldp"
    dropped: int = 0
    mechanisms: Mapping[str, str] = field(default_factory=dict)
    weights: str | None = None
    weight_kind: str | None = None
    cluster: str | None = None
    test: ShareTestReport | None = None
    status: FitStatus = FitStatus.EXACT
    warnings: tuple[str, ...] = ()
    refit: Callable[[float], Any] | None = field(default=None, compare=False, repr=False)

    title = "Shares"

    def __post_init__(self) -> None:
        self._check_status()

    # ----------------------------------------------------------------- the figures a caller reads
    @property
    def inputs(self) -> tuple[str, ...]:
        """The mechanism's inputs, in the order of every array."""
        return tuple(self.fit.inputs)

    @property
    def level(self) -> float:
        """The intervals' confidence level."""
        return float(self.fit.level if self.fit.level is not None else math.nan)

    @property
    def n(self) -> int:
        """Respondents (the sum of the weights under frequency weights)."""
        if isinstance(self.fit, GroupEstimate):
            return int(sum(self.fit.group_sizes))
        return int(self.fit.n)

    @property
    def estimate(self) -> NDArray[np.float64]:
        """``(k,)`` shares (an identified set has none: its intervals are :meth:`conf_int`)."""
        if isinstance(self.fit, IdentifiedSet):
            raise DesignerError("precise answers (semantics wldp) identify only an interval of each share: read "
                                "conf_int() (lower, upper)")
        return self.fit.estimate

    @property
    def stderr(self) -> NDArray[np.float64]:
        """``(k,)`` standard errors, NaN where the information gives none."""
        if isinstance(self.fit, IdentifiedSet):
            return np.full(len(self.inputs), np.nan)
        return self.fit.stderr

    def conf_int(self, level: float | None = None) -> NDArray[np.float64]:
        """``(k, 2)``: each share's interval (``ci_low``, ``ci_high``; an identified set's ``lower``, ``upper``) at
        ``level`` (default: the fit's, the printed one; another level refits the same counts)."""
        if level is not None and check_level(level) != self.level and self.refit is not None:
            other = self.refit(check_level(level))
            return ShareEstimates(fit=other, semantics=self.semantics).conf_int()
        if isinstance(self.fit, IdentifiedSet):
            return np.column_stack([self.fit.lower, self.fit.upper]).astype(np.float64)
        return share_intervals(self.fit, level)

    # ----------------------------------------------------------------- the three outputs
    def to_dict(self) -> dict[str, Any]:
        """``designer estimate --format json``'s object."""
        fit = self.fit
        if isinstance(fit, IdentifiedSet):
            return {"semantics": "wldp", "n": fit.n, "dropped": self.dropped, "level": fit.level,
                    "misfit": fit.misfit, "lower": dict(zip(fit.inputs, fit.lower.tolist())),
                    "upper": dict(zip(fit.inputs, fit.upper.tolist()))}
        if isinstance(fit, GroupEstimate):
            d = fit.to_dict()
            key, share = fit.share_key()
            groups = {name: {"mechanism": self.mechanisms.get(name, name), "n": size}
                      for name, size in zip(fit.groups, fit.group_sizes)}
            cells = {k: d[k] for k in ("estimate", "stderr", "ci_low", "ci_high", "low", "high")}
            return {"semantics": "sldp", "n": d["n"], "dropped": self.dropped, "level": fit.level, "groups": groups,
                    "status": fit.status, "warnings": list(fit.warnings), "variance": fit.variance,
                    "loglik": fit.loglik, **cells, **({"bounds": d["bounds"]} if "bounds" in d else {}), key: share}
        d = fit.to_dict()
        return {"semantics": "sldp", "n": fit.n, "dropped": self.dropped, "level": fit.level, "method": fit.method,
                "status": fit.status, "warnings": list(fit.warnings), "iterations": fit.iterations,
                "variance": fit.variance, "weights": self.weights,
                "weight_kind": self.weight_kind if self.weights else None, "cluster": self.cluster,
                "converged": fit.converged, "kkt_violation": fit.kkt_violation,
                **{k: d[k] for k in ("estimate", "stderr", "ci_low", "ci_high", "identified")},
                **({"test": self.test.to_dict()} if self.test is not None else {})}

    def table(self) -> TableData:
        """``designer estimate --format csv``'s table (absent figures empty)."""
        fit = self.fit
        if isinstance(fit, IdentifiedSet):
            return ["input", "lower", "upper"], [[x, float(fit.lower[i]), float(fit.upper[i])]
                                                 for i, x in enumerate(fit.inputs)]
        columns, rows = fit.table()
        head = [fit.status, fit.variance]
        if isinstance(fit, GroupEstimate) or self.test is None:
            return ["status", "variance", *columns], [[*head, *map(_empty, row)] for row in rows]
        test = self.test
        extra = ["test_null", "wald_statistic", "wald_pvalue", "lr_statistic", "lr_pvalue"]
        return (["status", "variance", *columns, *extra],
                [[*head, *map(_empty, row), *(map(_empty, test.cells()) if row[0] == test.share else [""] * 5)]
                 for row in rows])

    def summary(self) -> str:
        """``designer estimate``'s table output: what was read and how it was fitted, the status, the warnings and
        the shares."""
        fit = self.fit
        if isinstance(fit, IdentifiedSet):
            rows = [[x, fmt(fit.lower[i]), fmt(fit.upper[i])] for i, x in enumerate(fit.inputs)]
            return (f"{fit.n} precise answers{_dropped(self.dropped)}; identified set of each share at level "
                    f"{fit.level:g} (misfit {fit.misfit:.3g})\n" + render_table(["input", "lower", "upper"], rows))
        status = f"status: {fit.status.replace('_', ' ')}" + "".join(f"\nwarning: {w}" for w in fit.warnings)
        if isinstance(fit, GroupEstimate):
            columns, rows = fit.table()
            groups = ", ".join(f"{name or 'all'}: {size} through {self.mechanisms.get(name, name)}"
                               for name, size in zip(fit.groups, fit.group_sizes))
            shown = [[r[0], *("-" if v is None or np.isnan(float(v)) else fmt(float(v)) for v in r[1:])]
                     for r in rows]
            return (f"{sum(fit.group_sizes)} set-valued answers{_dropped(self.dropped)} in {len(fit.groups)} group(s) "
                    f"({groups}); maximum likelihood, {fit.level:g} intervals, standard errors from the "
                    f"{fit.variance}\n{status}\n" + ("" if fit.bounds is None else bounds_note(fit.bounds.level))
                    + render_table(columns, shown))
        state = (f"converged in {fit.iterations} Newton steps (KKT violation {fit.kkt_violation:.1e})"
                 if fit.converged else
                 f"NOT converged (KKT violation {fit.kkt_violation:.1e} after {fit.iterations} iterations)")
        loose = fit.status == FitStatus.NOT_IDENTIFIED
        columns, rows = fit.table()
        shown = [[r[0], *("-" if v is None else fmt(float(v)) for v in r[1:5])]
                 + ([f"[{fmt(float(r[5]))}, {fmt(float(r[6]))}]"] if loose else []) for r in rows]
        return (f"{fit.n} set-valued answers{_dropped(self.dropped)}; maximum likelihood, {state}; {fit.level:g} "
                f"intervals, standard errors from the {fit.variance}"
                + (" (projected confidence bands where a share is not identified)" if loose else "")
                + f"\n{status}\n" + render_table(columns[:5] + (["identified"] if loose else []), shown)
                + ("" if self.test is None else "\n" + self.test.line()))
