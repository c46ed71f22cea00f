"""The fit of a design's identified terms, and its result in the covariates' own terms (docs/theory.md section 9).

:func:`design_plan` judges the covariates and the answers before the fit (:mod:`designer.regression.identify`: a
singular design refused, aliased terms dropped and named) and standardizes the kept columns; the fit runs there and
:func:`in_covariates` maps its coefficients and their covariance back (``beta = M theta``), the dropped terms without
an estimate. Shared by the in-memory fit, the counted rows (a frame of distinct rows) and the streamed passes, so
every reading path gives one verdict.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..results import FitStatus
from .fit_result import RegressionResult, fit_statistics
from .flat import CRITICAL, FlatTerm, LimitSearch, PassedSearch
from .identify import (
    DesignPlan,
    Moments,
    Standardization,
    column_range,
    informative_rows,
    plan_design,
    standardization,
)
from .status import DIRECTION_SHARE, Diagnosis, separation_warning

__all__ = ["design_plan", "flat_warning", "in_covariates"]


def design_plan(z: Any, names: list[str], weights: NDArray[np.float64] | None,
                channel_columns: NDArray[np.float64] | None) -> tuple[DesignPlan, Standardization, Any]:
    """The verdict on a design ``z`` ``(n, q)`` (frequency ``weights`` or None) and the ``(k, n)`` likelihoods of
    its answers (None: the answers are not judged), its standardization, and the standardized design."""
    std = standardization(z, weights)
    u = std.apply(z)
    largest = column_range(z)
    moments = Moments.of(u, weights, largest)
    informative = None
    if channel_columns is not None:
        informative = Moments.of(u, weights, largest, rows=informative_rows(channel_columns))
    return plan_design(moments, std, names, informative=informative), std, u


def in_covariates(fit: RegressionResult, std: Standardization, plan: DesignPlan, names: list[str],
                  outcomes: list[str], *, diagnosis: Diagnosis | None = None,
                  variance: NDArray[np.float64] | None = None,
                  search: LimitSearch | PassedSearch | None = None
                  ) -> RegressionResult:
    """``fit`` (on the kept standardized columns ``plan.kept``) with its coefficients, their covariance and its table
    in the terms ``names`` of the covariates: ``beta = M theta`` per outcome (:meth:`Standardization.matrix`).

    With the fit's ``diagnosis`` and its ``variance`` on the identified subspace
    (:func:`~designer.regression.variance.identified_covariance`), each coefficient is a function ``c' theta``: it
    runs off (``+-inf``) when it moves along a direction the estimate runs off along (by at least 5% of the most
    any coefficient moves, each in units of its column's size), and it has a standard error when it does not and the
    weak directions add at most 1% to its variance (:meth:`~designer.regression.status.Spectrum.identified`): an
    intercept beside a separated dummy keeps its own. Without them a coefficient leaning on a parameter without
    standard error has none. A dropped or unidentified term has no estimate. The fit statistics (log-likelihood, AIC,
    BIC and the likelihood-ratio test, counted over the kept terms) are kept; the plan's warnings lead, and a fit
    that dropped terms is ``not_identified`` where it would be ``converged``.

    ``search``: the fit's :class:`~designer.regression.flat.LimitSearch`; a coefficient that would have a standard
    error but whose likelihood-ratio interval it proves unbounded on one side (the log-likelihood at infinity
    within :data:`~designer.regression.flat.CRITICAL` / 2 of the maximum) has none, no test and no interval; it is
    named in a warning and in :attr:`RegressionResult.flat`, and a ``converged`` fit becomes ``not_identified``."""
    q, o = len(names), len(outcomes)
    kept = list(plan.kept)
    r = len(kept)
    full = np.array([t * q + j for t in range(o) for j in kept], dtype=np.int64)  # kept parameter -> full index
    big = np.kron(np.eye(o), std.matrix())
    rows = big[:, full]  # each coefficient as a function of the kept parameters, (q o, r o)
    beta = rows @ fit.params[:r * o]
    shown_theta = np.asarray(fit.coefficient_columns["estimate"], dtype=np.float64)
    dropped = np.ones(q * o, dtype=bool)
    dropped[full] = False
    blank = (np.abs(rows[:, np.isnan(shown_theta)]) > 0).any(axis=1)
    running = np.zeros(q * o)
    if diagnosis is not None and variance is not None and diagnosis.spectrum is not None:
        size = np.kron(np.ones(o), np.hypot(std.centre, std.scale))  # a coefficient's column, per unit
        for run in diagnosis.runs:
            move = rows @ (run * diagnosis.spectrum.scale) * size
            hit = (np.abs(move) >= DIRECTION_SHARE * np.abs(move).max()) & (running == 0)
            running[hit] = np.sign(move[hit])
        good = diagnosis.spectrum.identified(np.asarray(rows, dtype=np.float64)) & (running == 0) & ~blank & ~dropped
        kernel = np.asarray(variance, dtype=np.float64)
        with np.errstate(over="ignore", invalid="ignore"):
            cov = rows @ variance @ rows.T
    else:  # no spectrum: a coefficient leaning on a parameter without standard error has none
        cov_theta = np.asarray(fit.covariance, dtype=np.float64)[:r * o, :r * o]
        bad = ~np.isfinite(np.diag(cov_theta)) | ~np.isfinite(shown_theta)
        kernel = np.nan_to_num(cov_theta, nan=0.0, posinf=0.0, neginf=0.0)
        with np.errstate(over="ignore", invalid="ignore"):
            cov = rows @ kernel @ rows.T
        running = (rows[:, np.isinf(shown_theta)] @ np.sign(shown_theta[np.isinf(shown_theta)])).astype(float)
        running = np.sign(running) * ((np.abs(rows[:, np.isinf(shown_theta)]) > 0).any(axis=1))
        good = ~(np.abs(rows[:, bad]) > 0).any(axis=1) & ~dropped & ~blank
    flat: list[FlatTerm] = []
    above = False  # the log-likelihood at infinity exceeds the estimate's: not the maximum
    if search is not None:
        flat = search.terms(np.asarray(rows, dtype=np.float64), candidates=good.copy())
        for term in flat:
            good[term.index] = False
        above = any(term.limit > search.loglik + 1e-9 * max(1.0, abs(search.loglik)) for term in flat)
        if above and fit.status is not FitStatus.SEPARATION:  # a local maximum: no standard errors at all (a
            good[:] = False  # separated fit is judged conditionally on its runs: only the flagged terms lose theirs
    shown = beta.copy()
    shown[running != 0] = running[running != 0] * np.inf
    shown[dropped | blank] = np.nan
    cov[~good, :] = np.nan
    cov[:, ~good] = np.nan
    table = fit_statistics(beta, cov, names, outcomes, fit.level, shown, loglik=fit.loglik, null_loglik=0.0,
                           n=max(fit.n, 1), k=o + 1, sandwich=True,
                           stderr=_stderr(np.asarray(rows, dtype=np.float64), kernel, good)
                           ).coefficient_columns
    labels = [f"{x}:{t}" if o > 1 else t for x in outcomes for t in names]
    warnings = [w for w in fit.warnings if not w.startswith("separation: the estimates of")]
    if (running != 0).any():
        warnings.insert(0, separation_warning([labels[i] for i in np.flatnonzero(running)]))
    if flat and search is not None:
        warnings.insert(0, flat_warning([labels[t.index] for t in flat], [t.side for t in flat],
                                        [search.loglik - t.limit for t in flat]))
    status = fit.status
    if (plan.unidentified or flat) and fit.status is FitStatus.CONVERGED:
        status = FitStatus.NOT_IDENTIFIED
    if above and status is not FitStatus.SEPARATION:
        status = FitStatus.NOT_CONVERGED
    return dataclasses.replace(fit, coefficient_columns=table, params=beta, covariance=cov, status=status,
                               converged=status is FitStatus.CONVERGED, warnings=(*plan.warnings, *warnings),
                               flat=tuple(flat))


def flat_warning(labels: list[str], sides: list[float], drops: list[float]) -> str:
    """The warning of a fit whose named coefficients have a likelihood-ratio interval unbounded on one side
    (``sides``), the log-likelihood at infinity ``drops`` below its maximum."""
    named = ", ".join(f"{label!r} (to {'+' if side > 0 else '-'}inf, " + (f"{drop:.3g} below)" if drop >= 0 else
                                                                            f"{-drop:.3g} above)")
                      for label, side, drop in zip(labels, sides, drops))
    if min(drops) < 0:
        return ("not converged: the log-likelihood out at infinity is higher than at the estimate along " + named
                + ": the estimate is a local maximum, not the likelihood's; no standard errors, tests or intervals "
                "(too few respondents for these terms through this design); more respondents, a less noisy design, "
                "fewer terms, or --penalty firth")
    return ("not identified: the log-likelihood stays within " + f"{CRITICAL / 2:.3g}" + " of its maximum out to "
            "infinity along " + named + ": their 0.95 likelihood-ratio intervals are unbounded on that side, so "
            "they have no standard error, test or interval (too few respondents for them through this design); "
            "more respondents, a less noisy design, fewer terms, or --penalty firth")


def _stderr(rows: NDArray[np.float64], kernel: NDArray[np.float64], good: NDArray[np.bool_]) -> NDArray[np.float64]:
    """``sqrt(r' V r)`` of every row ``r`` of ``rows`` (NaN where not ``good``), each row divided by its largest entry
    first: the standard error of a coefficient of a covariate of size 1e-200 is about 1e200, its variance beyond
    the floating-point range (the covariance matrix then holds ``inf`` there, the standard error does not)."""
    out = np.full(rows.shape[0], np.nan)
    for i in np.flatnonzero(good):
        top = float(np.abs(rows[i]).max(initial=0.0))
        if top == 0 or not np.isfinite(top):
            continue
        r = rows[i] / top
        value = float(r @ kernel @ r)
        if value > 0 and np.isfinite(value):
            out[i] = top * np.sqrt(value)
    return out
