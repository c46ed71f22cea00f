"""How a regression fit ended, judged at the estimate, never by an iteration count alone (docs/theory.md,
section 9).

``converged``
    The Newton decrement is below the tolerance and the observed information is well conditioned on every
    term: its smallest eigenvalue, after scaling each term by its covariate column's norm, is above
    :data:`RCOND_TOL` times the largest and above :data:`ABS_TOL`. Standard errors come from its inverse.
``separation``
    The information is near-singular along a direction in which the log-likelihood still rises (or stays
    level) on one side and falls on the other: the estimates of the terms in that direction run off to infinity
    (complete or quasi-complete separation, or a runaway fit with more terms than the answers carry). They are
    reported as diverging, without standard error, z, p or interval.
``not_identified``
    The information is near-singular along a direction in which the log-likelihood is flat both ways (aliased
    terms) or falls both ways but is curved too little to trust: those terms have no standard error.
``not_converged``
    The information is well conditioned but the decrement is not below the tolerance: no standard errors.

After the fit, :mod:`designer.regression.flat` looks for coefficients whose likelihood-ratio interval is unbounded
on one side (the log-likelihood at infinity along a witness direction within 1.92 of the maximum): they lose their
standard error and a ``converged`` fit becomes ``not_identified``; a witness whose limit is above the estimate's
log-likelihood makes it ``not_converged`` (a local maximum), without standard errors
(:func:`~designer.regression.fit_terms.in_covariates`).

The other terms keep standard errors on the identified subspace: the inverse of the information over every term
that does not run off, given to a term only while the weak directions add at most :data:`WEAK_SHARE` to its
variance (so it comes from the well-conditioned part); a term that leans on a weak direction has none. Terms that
run off are conditioned on (their information vanishes in the limit).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..results import FitStatus
from .design import COLLINEAR_TOL as DESIGN_COLLINEAR_TOL

__all__ = ["ABS_TOL", "COLLINEAR_TOL", "FIT_STATUSES", "RCOND_TOL", "WEAK_SHARE", "Diagnosis", "Spectrum",
           "design_blind", "diagnose", "separation_warning"]

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


#: A term keeps its standard error beside weak directions only while they add at most this share to its variance:
#: the standard error then comes from the well-conditioned part of the information (docs/fits.md).
WEAK_SHARE = 0.01


@dataclass(frozen=True)
class Spectrum:
    """The information on the subspace the estimate does not run off along, in the scaled coordinates ``phi =
    theta * norms``: its eigenvalues ``values`` (floored at 1e-16 of the largest), eigenvectors ``vectors``
    ``(p, m)``, which of them are ``strong`` (above ``max(RCOND_TOL top, ABS_TOL)``), the parameters' ``scale``
    (``1 / norms``) and the directions the estimate runs off along, ``runs`` ``(p, r)`` (orthonormal, in the scaled
    coordinates).

    A linear function ``c' theta`` that does not move along a run has the variance ``c_phi' V c_phi`` (``c_phi = c *
    scale``, ``V`` the inverse on this subspace: :meth:`inverse`); it is *identified* when the weak eigenvalues add at
    most :data:`WEAK_SHARE` of the variance the strong ones give (:meth:`identified`)."""

    values: NDArray[np.float64]
    vectors: NDArray[np.float64]
    strong: NDArray[np.bool_]
    scale: NDArray[np.float64]
    runs: NDArray[np.float64]

    @classmethod
    def of(cls, information: NDArray[np.float64], norms: NDArray[np.float64],
           runs: list[NDArray[np.float64]] | None = None) -> Spectrum:
        """The spectrum of ``information`` ``(p, p)`` scaled by ``norms``, without the run directions ``runs``
        (vectors in the scaled coordinates)."""
        from scipy.linalg import null_space

        p = information.shape[0]
        scale = 1.0 / np.where(norms > 0, norms, 1.0)
        scaled = information * scale[:, None] * scale[None, :]
        scaled = (scaled + scaled.T) / 2
        ran = np.zeros((p, 0))
        basis = np.eye(p)
        if runs:
            # an orthonormal basis of their span: two probes may find one direction twice (an eigenvector and the
            # term's unit vector), which a QR would complete with an arbitrary direction
            left, sizes, _ = np.linalg.svd(np.column_stack(runs), full_matrices=False)
            ran = left[:, sizes > 1e-8 * sizes[0]]
            basis = null_space(ran.T) if ran.shape[1] < p else np.zeros((p, 0))
        values, inner = np.linalg.eigh(basis.T @ scaled @ basis) if basis.shape[1] else (np.zeros(0),
                                                                                           np.zeros((0, 0)))
        top = max(float(values[-1]) if values.size else 0.0, 1e-300)
        strong = values > max(RCOND_TOL * top, ABS_TOL)
        return cls(np.maximum(values, 1e-16 * top), basis @ inner, strong, scale, ran)

    def _loads(self, c: NDArray[np.float64]) -> NDArray[np.float64]:
        """``(c_phi' u_k)^2 / lambda_k`` for every eigenpair and function: ``(f, m)`` for ``c`` ``(f, p)``."""
        along = np.atleast_2d(c * self.scale) @ self.vectors
        return np.asarray(along**2 / self.values[None, :])

    def inverse(self) -> NDArray[np.float64]:
        """The inverse of the information on this subspace, in the parameters' own coordinates ``(p, p)``."""
        v = (self.vectors / self.values[None, :]) @ self.vectors.T
        return np.asarray(v * self.scale[:, None] * self.scale[None, :])

    def identified(self, c: NDArray[np.float64]) -> NDArray[np.bool_]:
        """Whether each function ``c`` ``(f, p)`` (rows) has its variance from the strong part: the weak directions
        add at most :data:`WEAK_SHARE` of it (a function along a run is the caller's to refuse)."""
        c = np.atleast_2d(c)
        size = np.abs(c * self.scale).max(axis=1, keepdims=True)  # the verdict is the same for t c: scaled to 1
        loads = self._loads(c / np.where(size > 0, size, 1.0))
        weak = loads[:, ~self.strong].sum(axis=1)
        return np.asarray(weak <= WEAK_SHARE * loads[:, self.strong].sum(axis=1))


@dataclass(frozen=True)
class Diagnosis:
    """How a fit ended, judged at its estimate: ``status`` (a :class:`~designer.results.FitStatus`, one of
    :data:`FIT_STATUSES`), ``warnings`` in words, the parameter indices whose estimates
    diverge (with the sign they run to) and those that are not identified, and the covariance of the others
    (``NaN`` rows and columns for the problem terms). ``aliased``: for each direction along which the
    log-likelihood is flat, the last term in it, which a refit without it (held at 0, R's ``glm``) identifies
    the others. ``spectrum``: the information on the identified subspace (:class:`Spectrum`), for the variance of
    functions of the parameters (the covariates' coefficients of a standardized fit); ``runs``: the directions the
    estimate runs off along, each pointing the way it runs (in the scaled coordinates of :class:`Spectrum`)."""

    status: FitStatus
    warnings: tuple[str, ...]
    diverging: dict[int, float]
    unidentified: tuple[int, ...]
    covariance: NDArray[np.float64]
    aliased: tuple[int, ...] = ()
    spectrum: Spectrum | None = None
    runs: tuple[NDArray[np.float64], ...] = ()


def diagnose(loglike: Callable[[NDArray[np.float64]], float], params: NDArray[np.float64],
             information: NDArray[np.float64], decrement_ok: bool, labels: list[str],
             norms: NDArray[np.float64], *, gram: NDArray[np.float64] | None = None) -> Diagnosis:
    """Judge a fit at ``params`` from its observed ``information`` (``-H``, ``(p, p)``) and ``loglike``.

    ``norms`` ``(p,)``: the Euclidean norm of each parameter's covariate column. The information is scaled by
    them, not by its own diagonal: a separated term's curvature collapses (its fitted probabilities reach 0
    or 1) while its column does not, which a self-scaling would hide.

    Each weak direction ``v`` is probed at ``params +- R v``: flat both ways (within 1e-9 relative) is aliased;
    no lower on one side than here is a run to infinity that way (separation); lower on both sides is a finite but
    weakly curved maximum (``not_identified``).

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
    if len(weak) >= 2:  # a weak plane: its eigenvectors mix the terms, and a term that runs off alone (an intercept
        # when every answer is the same) may be lower both ways along each mixture: probe the terms mostly in it too
        inside = np.sum(vectors[:, weak] ** 2, axis=1)
        weak += [p + int(j) for j in np.flatnonzero(inside >= 0.5)]
    if bad_diag.any():
        weak += [p + int(j) for j in np.flatnonzero(bad_diag) if p + int(j) not in weak]  # no curvature at all
    if not weak:
        if not decrement_ok:
            return Diagnosis(FitStatus.NOT_CONVERGED, ("the optimizer stopped before the maximum (Newton decrement "
                                               "above tolerance); estimates are the last iterate, without "
                                               "standard errors",), {}, (), nan)
        return Diagnosis(FitStatus.CONVERGED, (), {}, (), np.asarray(np.linalg.inv(information), dtype=np.float64),
                         spectrum=Spectrum.of(information, norms))
    diverging: dict[int, float] = {}
    runs: list[NDArray[np.float64]] = []
    flat: set[int] = set()
    aliased: set[int] = set()
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
            unit = np.zeros(p)
            unit[i - p] = 1.0
        else:
            unit = vectors[:, i]
        direction = unit * scale
        direction /= np.abs(direction).max()
        terms = [j for j in range(p) if abs(direction[j]) >= DIRECTION_SHARE]
        if design is not None and i < p:
            if float(unit @ design @ unit) <= COLLINEAR_TOL * design_top:
                # the covariates nearly vanish along it: a finite, far maximum. Its terms are read off the scaled
                # direction (free of the covariates' units: an intercept and a constant age of 30 share it equally)
                shares = np.abs(unit) / np.abs(unit).max()
                collinear.update(j for j in range(p) if shares[j] >= DIRECTION_SHARE)
                continue
        sign = 1.0 if float(direction @ params) >= 0 else -1.0
        ahead = loglike(params + sign * reach * direction) - base
        back = loglike(params - sign * reach * direction) - base
        if abs(ahead) <= tol and abs(back) <= tol:
            flat.update(terms)  # aliased: the likelihood does not move
            aliased.add(terms[-1])
        elif max(ahead, back) >= -tol:  # no lower further out on one side: the estimate runs off that way
            way = sign if ahead >= back else -sign
            runs.append(way * unit)
            for j in terms:  # several weak directions share a term: the sign it ran to at the estimate
                diverging[j] = float(np.sign(params[j]) or np.sign(way * direction[j]) or 1.0)
        else:
            flat.update(terms)  # lower both ways: a finite maximum, curved too little to trust
    if not diverging and not collinear and np.any(params):
        # far out along a separation that mixes terms, each weak eigenvector, probed alone, moves the separating
        # hyperplane and is lower both ways: probe the estimate's own ray as well (no lower further out along it,
        # lower at the origin: the estimate runs off along it)
        direction = params / np.abs(params).max()
        ahead = loglike(params + reach * direction) - base
        back = loglike(np.zeros(p)) - base
        if ahead >= -tol and back < -tol:
            unit = direction / scale
            runs.append(unit / np.linalg.norm(unit))
            for j in range(p):
                if abs(direction[j]) >= DIRECTION_SHARE:  # (a flat term that runs off is dropped from flat below)
                    diverging[j] = float(np.sign(params[j]))
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
    if not diverging:
        runs = []
    return _conclude(Spectrum.of(information, norms, runs), diverging, flat, labels, decrement_ok, lead=lead,
                     named=frozenset(collinear), aliased=aliased - set(diverging), runs=tuple(runs))


def _conclude(spectrum: Spectrum, diverging: dict[int, float], flat: set[int], labels: list[str],
              decrement_ok: bool, *, lead: tuple[str, ...] = (), named: frozenset[int] = frozenset(),
              aliased: set[int] | None = None, runs: tuple[NDArray[np.float64], ...] = ()) -> Diagnosis:
    """The status, warnings and covariance of a fit whose problem terms are known: ``diverging`` (run off) and
    ``flat`` (not identified). The others' covariance is the inverse of the information on the subspace the
    estimate does not run off along (:class:`Spectrum`: conditional on the runs, whose information vanishes in the
    limit), given to the terms whose variance comes from its well-conditioned part. ``lead`` warnings come first;
    terms in ``named`` are left out of the "not identified" list (a lead names them already)."""
    p = spectrum.scale.size
    flat = set(flat) - set(diverging)
    good = spectrum.identified(np.eye(p))
    flat.update(j for j in range(p) if not good[j] and j not in diverging)
    chosen = [j for j in range(p) if good[j] and j not in flat and j not in diverging]
    cov = np.full((p, p), np.nan)
    if chosen:
        cov[np.ix_(chosen, chosen)] = spectrum.inverse()[np.ix_(chosen, chosen)]
    warnings = list(lead)
    if diverging:
        status = FitStatus.SEPARATION
        warnings.append(separation_warning([labels[j] for j in sorted(diverging)]))
    else:
        status = FitStatus.NOT_IDENTIFIED
    listed = sorted(flat - named)
    if listed:
        warnings.append("not identified: " + ", ".join(repr(labels[j]) for j in listed)
                        + " (the information is near-singular along them: aliased terms, or too little data); "
                        "no standard errors for them")
    if not decrement_ok and status is FitStatus.NOT_IDENTIFIED:
        warnings.append("the optimizer also stopped before its tolerance")
    return Diagnosis(status, tuple(warnings), diverging, tuple(sorted(flat)), cov, tuple(sorted(aliased or ())),
                     spectrum, runs)


def separation_warning(names: list[str]) -> str:
    """The warning of a fit whose named terms run off to infinity."""
    return ("separation: the estimates of " + ", ".join(map(repr, names)) + " run off to infinity (the "
            "log-likelihood keeps rising): no finite maximum. Use --penalty firth (Firth's penalized likelihood), or "
            "drop or merge those terms")


def design_blind(fit: Diagnosis, information: NDArray[np.float64], terms: list[int], labels: list[str],
                 inputs: list[str], decrement_ok: bool, *, norms: NDArray[np.float64] | None = None,
                 reason: str | None = None) -> Diagnosis:
    """``fit`` with ``terms`` (parameter indices) unidentified by the design itself: ``inputs`` give answer
    distributions that are linearly dependent, so no data identify these terms. The status becomes
    ``not_identified`` (a separation found along these terms is the flat likelihood of the design, not
    separation); the other terms keep their diagnosis and their covariance. ``reason``: the lead warning, when the
    answers (not the design) leave these inputs open."""
    blind = frozenset(terms)
    lead = (reason or f"the design cannot tell {', '.join(map(repr, inputs))} apart (their answer distributions are "
            "linearly dependent): " + ", ".join(repr(labels[j]) for j in sorted(blind)) + " are not identified "
            "by any data and have no estimate; merge those inputs, or see 'designer estimate' for the identified "
            "interval of each share",)
    diverging = {j: s for j, s in fit.diverging.items() if j not in blind}
    runs = tuple(r for r in fit.runs if any(abs(r[j]) >= DIRECTION_SHARE * np.abs(r).max() for j in diverging))
    spectrum = fit.spectrum
    if spectrum is None or len(runs) != len(fit.runs):  # runs along the blind terms are the design's flat likelihood
        spectrum = Spectrum.of(information, np.ones(information.shape[0]) if norms is None else norms, list(runs))
    return _conclude(spectrum, diverging, set(fit.unidentified) | blind, labels, decrement_ok, lead=lead,
                     named=blind, aliased=set(fit.aliased) - blind, runs=runs)
