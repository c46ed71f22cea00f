"""How a regression fit ended, judged at the estimate, never by an iteration count alone (docs/theory.md,
section 9).

``converged``
    The Newton decrement is below the tolerance and the observed information is well conditioned on every
    term: its smallest eigenvalue, after scaling each term by its covariate column's norm, is above
    :data:`RCOND_TOL` times the largest and above :data:`ABS_TOL`. Standard errors come from its inverse.
``separation``
    The information is near-singular along a direction in which the log-likelihood still rises (or stays
    flat) when the estimate moves further the way it ran and falls when it moves back: the estimates of the
    terms in that direction run off to infinity (complete or quasi-complete separation, or a runaway fit with
    more terms than the answers carry). They are reported as diverging, without standard error, z, p or
    interval.
``not_identified``
    The information is near-singular along a direction in which the log-likelihood is flat both ways (aliased
    terms) or curved too little to trust: those terms have no standard error.
``not_converged``
    The information is well conditioned but the decrement is not below the tolerance: no standard errors.

The terms outside the problem directions keep standard errors from the inverse of their own block of the
information (conditional on the others), which is well conditioned by construction.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..results import FitStatus
from .design import COLLINEAR_TOL as DESIGN_COLLINEAR_TOL

__all__ = ["ABS_TOL", "COLLINEAR_TOL", "FIT_STATUSES", "RCOND_TOL", "Diagnosis", "design_blind", "diagnose"]

#: The statuses a regression fit may end with (the words of the fit members of :class:`~designer.results.FitStatus`).
FIT_STATUSES: tuple[str, ...] = tuple(s.value for s in (FitStatus.CONVERGED, FitStatus.SEPARATION,
                                                          FitStatus.NOT_CONVERGED, FitStatus.NOT_IDENTIFIED))
#: Smallest eigenvalue of the scaled information, relative to the largest, for a well-conditioned fit.
RCOND_TOL = 1e-9
#: Smallest eigenvalue of the scaled information (per unit squared column norm) for a term to count as
#: carried by the data at all: a fit whose every curvature collapsed is not well conditioned just because its
#: curvatures collapsed alike.
ABS_TOL = 1e-10
#: A term belongs to a problem direction when its weight in the direction is at least this share of the largest.
DIRECTION_SHARE = 0.05
#: How far (in units of the largest estimate, at least 10) the log-likelihood is probed along a direction.
PROBE = 10.0
#: A weak direction along which the scaled covariates' Gram matrix is at most this share of its largest
#: eigenvalue is near-collinearity of the covariates (``not_identified``), not separation.
COLLINEAR_TOL = DESIGN_COLLINEAR_TOL


@dataclass(frozen=True)
class Diagnosis:
    """How a fit ended, judged at its estimate: ``status`` (a :class:`~designer.results.FitStatus`, one of
    :data:`FIT_STATUSES`), ``warnings`` in words, the parameter indices whose estimates
    diverge (with the sign they run to) and those that are not identified, and the covariance of the others
    (``NaN`` rows and columns for the problem terms)."""

    status: FitStatus
    warnings: tuple[str, ...]
    diverging: dict[int, float]
    unidentified: tuple[int, ...]
    covariance: NDArray[np.float64]


def diagnose(loglike: Callable[[NDArray[np.float64]], float], params: NDArray[np.float64],
             information: NDArray[np.float64], decrement_ok: bool, labels: list[str],
             norms: NDArray[np.float64], *, gram: NDArray[np.float64] | None = None) -> Diagnosis:
    """Judge a fit at ``params`` from its observed ``information`` (``-H``, ``(p, p)``) and ``loglike``.

    ``norms`` ``(p,)``: the Euclidean norm of each parameter's covariate column. The information is scaled by
    them, not by its own diagonal: a separated term's curvature collapses (its fitted probabilities reach 0
    or 1) while its column does not, which a self-scaling would hide.

    ``gram`` ``(p, p)``: the covariates' own cross-products ``Z'Z`` for each parameter (block diagonal over the
    outcomes), when known. A weak direction of the information along which the scaled covariates themselves
    nearly vanish (``v' S Z'Z S v <= COLLINEAR_TOL`` times the largest) is near-collinearity, not separation:
    the likelihood's maximum is finite (far out), the terms are ``not_identified`` and named as collinear.
    """
    p = params.size
    nan = np.full((p, p), np.nan)
    diag = np.diag(information).copy()
    bad_diag = ~(diag > 0)
    scale = 1.0 / np.where(norms > 0, norms, 1.0)
    scaled = information * scale[:, None] * scale[None, :]
    values, vectors = np.linalg.eigh((scaled + scaled.T) / 2)
    top = max(float(values[-1]), 1e-300)
    weak = [i for i in range(p) if values[i] <= max(RCOND_TOL * top, ABS_TOL)]
    if bad_diag.any():
        weak += [p + int(j) for j in np.flatnonzero(bad_diag)]  # a term with no curvature at all
    if not weak:
        if not decrement_ok:
            return Diagnosis(FitStatus.NOT_CONVERGED, ("the optimizer stopped before the maximum (Newton decrement "
                                               "above tolerance); estimates are the last iterate, without "
                                               "standard errors",), {}, (), nan)
        return Diagnosis(FitStatus.CONVERGED, (), {}, (), np.asarray(np.linalg.inv(information), dtype=np.float64))
    diverging: dict[int, float] = {}
    flat: set[int] = set()
    collinear: set[int] = set()
    design = None
    if gram is not None:
        design = gram * scale[:, None] * scale[None, :]
        design_top = max(float(np.linalg.eigvalsh((design + design.T) / 2)[-1]), 1e-300)
    reach = PROBE * max(1.0, float(np.abs(params).max()))
    base = loglike(params)
    tol = 1e-9 * max(1.0, abs(base))
    for i in weak:
        if i >= p:
            direction = np.zeros(p)
            direction[i - p] = 1.0
        else:
            direction = vectors[:, i] * scale
        direction /= np.abs(direction).max()
        terms = [j for j in range(p) if abs(direction[j]) >= DIRECTION_SHARE]
        if design is not None and i < p:
            v = vectors[:, i]
            if float(v @ design @ v) <= COLLINEAR_TOL * design_top:
                # the covariates nearly vanish along it: a finite, far maximum. Its terms are read off the scaled
                # direction (free of the covariates' units: an intercept and a constant age of 30 share it equally)
                shares = np.abs(v) / np.abs(v).max()
                collinear.update(j for j in range(p) if shares[j] >= DIRECTION_SHARE)
                continue
        sign = 1.0 if float(direction @ params) >= 0 else -1.0
        ahead = loglike(params + sign * reach * direction) - base
        back = loglike(params - sign * reach * direction) - base
        if abs(ahead) <= tol and abs(back) <= tol:
            flat.update(terms)  # aliased: the likelihood does not move
        elif ahead >= back - tol:  # higher (or no lower) further out than back towards zero: runs off
            for j in terms:  # the way the estimate ran (several weak directions share a term: its own sign)
                diverging[j] = float(np.sign(params[j]) or np.sign(sign * direction[j]) or 1.0)
        else:
            flat.update(terms)  # curved, but too little to trust
    lead: tuple[str, ...] = ()
    if collinear:
        named = sorted(collinear)
        lead = ("not identified: " + ", ".join(repr(labels[j]) for j in named) + " are nearly collinear (the "
                "covariates' columns are almost a linear combination of each other, so the data barely tell "
                "these terms apart): not separation, the likelihood's maximum is finite, but these terms have no "
                "standard error and their estimates split what they share (the combination the data barely see "
                "held at 0); drop one of them or combine them",)
        for j in named:
            diverging.pop(j, None)
        flat.update(collinear)
    return _conclude(information, diverging, flat, labels, decrement_ok, lead=lead, named=frozenset(collinear))


def _conclude(information: NDArray[np.float64], diverging: dict[int, float], flat: set[int], labels: list[str],
              decrement_ok: bool, *, lead: tuple[str, ...] = (), named: frozenset[int] = frozenset()) -> Diagnosis:
    """The status, warnings and covariance of a fit whose problem terms are known: ``diverging`` (run off) and
    ``flat`` (not identified). The other terms get the inverse of their own block of ``information``.
    ``lead`` warnings come first; terms in ``named`` are left out of the "not identified" list (a lead names
    them already)."""
    p = information.shape[0]
    flat = set(flat) - set(diverging)
    good = [j for j in range(p) if j not in diverging and j not in flat]
    cov = np.full((p, p), np.nan)
    if good:
        try:
            cov[np.ix_(good, good)] = np.linalg.inv(information[np.ix_(good, good)])
        except np.linalg.LinAlgError:
            flat.update(good)
    warnings = list(lead)
    if diverging:
        status = FitStatus.SEPARATION
        warnings.append("separation: the estimates of " + ", ".join(repr(labels[j]) for j in sorted(diverging))
                        + " run off to infinity (the log-likelihood keeps rising): no finite maximum. Use "
                        "--penalty firth (Firth's penalized likelihood), or drop or merge those terms")
    else:
        status = FitStatus.NOT_IDENTIFIED
    listed = sorted(flat - named)
    if listed:
        warnings.append("not identified: " + ", ".join(repr(labels[j]) for j in listed)
                        + " (the information is near-singular along them: aliased terms, or too little data); "
                        "no standard errors for them")
    if not decrement_ok and status is FitStatus.NOT_IDENTIFIED:
        warnings.append("the optimizer also stopped before its tolerance")
    return Diagnosis(status, tuple(warnings), diverging, tuple(sorted(flat)), cov)


def design_blind(fit: Diagnosis, information: NDArray[np.float64], terms: list[int], labels: list[str],
                 inputs: list[str], decrement_ok: bool) -> Diagnosis:
    """``fit`` with ``terms`` (parameter indices) unidentified by the design itself: ``inputs`` give answer
    distributions that are linearly dependent, so no data identify these terms. The status becomes
    ``not_identified`` (a separation found along these terms is the flat likelihood of the design, not
    separation); the other terms keep their diagnosis and their covariance, from their own block."""
    blind = frozenset(terms)
    lead = (f"the design cannot tell {', '.join(map(repr, inputs))} apart (their answer distributions are "
            "linearly dependent): " + ", ".join(repr(labels[j]) for j in sorted(blind)) + " are not identified "
            "by any data and have no estimate; merge those inputs, or see 'designer estimate' for the identified "
            "interval of each share",)
    diverging = {j: s for j, s in fit.diverging.items() if j not in blind}
    return _conclude(information, diverging, set(fit.unidentified) | blind, labels, decrement_ok, lead=lead,
                     named=blind)
