"""Estimation of the input distribution from set-valued answers (Remark 3.8; docs/theory.md section 8).

Under Shafer's semantics the analyst sees the focal set itself, so each focal set is an output with
probability ``pi . m(E)``; the Fisher information of the prior ``pi`` (on the simplex) is
``I = sum_E m(E) m(E)^T / (pi . m(E))`` and the asymptotic covariance of the MLE is its inverse on the
tangent space ``{d : sum d = 0}`` (:func:`estimator_variance`: what a design promises). A fit's standard errors
come from the observed information of its answers, ``sum_E n_E m(E) m(E)^T / (pi . m(E))^2``, the same for one
design and for several (docs/fits.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._internal.numeric import wald_interval
from .._internal.validation import check_prior, check_real
from ..exceptions import InvalidArgumentError, InvalidMechanismError
from ..mechanism import Mechanism
from ..results import FitStatus, Result, TableData
from .boundary import at_boundary, boundary_warning, near_edge_intervals
from .identification import (
    IDENTIFIED_TOL,
    SHARE_RANGE,
    IdentifiedSet,
    _identified_by,
    identified_interval,
    identified_set,
    indistinguishable_inputs,
    observed_variance,
    unidentified_intervals,
    weak_warning,
    weakly_identified,
)
from .mle import (
    _loglik,
    at_maximum,
    em,
    kkt_violation,
    loglik_gap,
    mle_convex,
    mle_newton,
    share_functionals,
    tangent_form,
)

EM_ITERATIONS = 20_000
"""EM steps before the active-set Newton method finishes the fit (EM crawls sublinearly towards a share at 0)."""

__all__ = [
    "Estimate",
    "IdentifiedSet",
    "chi2_information",
    "em",
    "estimate_sldp",
    "estimator_variance",
    "fisher_information",
    "identified_interval",
    "identified_set",
    "indistinguishable_inputs",
    "inversion_estimate",
    "kkt_violation",
    "mle_convex",
    "mle_newton",
    "response_counts",
]


def _prior(mech: Mechanism, prior: ArrayLike | None) -> NDArray[np.float64]:
    return check_prior(prior, mech.k)


def fisher_information(mech: Mechanism, prior: ArrayLike | None = None) -> NDArray[np.float64]:
    """Fisher information of the prior in one set-valued answer (Shafer semantics).

    Parameters
    ----------
    mech : Mechanism
        ``k`` inputs, focal sets as outputs.
    prior : (k,) array_like, optional
        Input distribution ``pi`` (default uniform).

    Returns
    -------
    (k, k) ndarray
        ``sum_E m(E) m(E)^T / (pi . m(E))`` over focal sets with ``pi . m(E) > 0``.

    Examples
    --------
    ``sum_E m(E) m(E)' / (pi . m(E))`` for ``Q_2x3(0.6, 0.2)`` at the uniform prior:

    >>> import designer
    >>> from designer.estimation.shares import fisher_information
    >>> fisher_information(designer.Q_2x3(0.6, 0.2)).round(12).tolist()
    [[1.2, 0.8], [0.8, 1.2]]
    """
    pi = _prior(mech, prior)
    cols = mech.matrix
    out = pi @ cols
    used = out > 0
    v = cols[:, used]
    return (v / out[used]) @ v.T


def chi2_information(mech: Mechanism, prior: ArrayLike | None = None) -> float:
    """Chi-square information ``sum_E mu(m(E))``, ``mu(v) = sum_x pi_x (v_x - pi.v)^2 / (pi.v)``.

    The estimation objective of the design engine (docs/theory.md section 5, "staircase" LP).

    Examples
    --------
    >>> import designer
    >>> from designer.estimation.shares import chi2_information
    >>> round(chi2_information(designer.Q_2x3(0.6, 0.2)), 12)  # 0.1 from {yes}, 0.1 from {no}, 0 from don't know
    0.2
    """
    return float(np.sum(column_information(mech.matrix, _prior(mech, prior))))


def column_information(values: NDArray[np.float64], prior: NDArray[np.float64]) -> NDArray[np.float64]:
    """``mu(v) = sum_x pi_x (v_x - pi.v)^2 / (pi.v)`` of each column of ``values`` (k, n); 0 for a column
    no input reaches. The chi-square information of one answer, and the weight of a staircase column."""
    mean = prior @ values
    used = mean > 0
    out = np.zeros(values.shape[1])
    out[used] = (prior[:, None] * (values[:, used] - mean[used]) ** 2).sum(axis=0) / mean[used]
    return out


def estimator_variance(
    mech: Mechanism,
    prior: ArrayLike | None = None,
    n: int = 1,
    *,
    reduce: str = "mean",
) -> float | NDArray[np.float64]:
    """Asymptotic variance of the MLE of the prior from ``n`` set-valued answers (inverse Fisher).

    Parameters
    ----------
    mech : Mechanism
    prior : (k,) array_like, optional
        True input distribution (default uniform).
    n : int, default 1
        Number of respondents.
    reduce : {"mean", "sum", "none"}
        Mean over inputs of ``Var(pi_hat_x)`` (for two inputs: ``Var(pi_hat)``), their sum, or the
        ``(k,)`` vector.

    Returns
    -------
    float or (k,) ndarray
        ``inf`` where the prior is not identifiable from the answers.

    Examples
    --------
    The information along the simplex, ``(1, -1) I (1, -1)' = 0.8``, inverted: 1.25 per respondent:

    >>> import designer
    >>> from designer.estimation.shares import estimator_variance
    >>> round(estimator_variance(designer.Q_2x3(0.6, 0.2)), 9), estimator_variance(designer.Q_2x3(0.6, 0.2), n=100,
    ...                                                                            reduce="none").round(9).tolist()
    (1.25, [0.0125, 0.0125])
    """
    from scipy.linalg import LinAlgError, cho_factor, lapack, solve_triangular

    pi = _prior(mech, prior)
    k = mech.k
    spectrum = _circulant_spectrum(mech.matrix, pi)
    if spectrum is not None:
        per_input = np.full(k, np.inf)
        if spectrum[1:].min() > 1e-14 * spectrum.max():
            per_input[:] = float(np.sum(1.0 / spectrum[1:])) / (k * n)
        return _reduce(per_input, reduce)
    info = fisher_information(mech, pi)
    # Coordinates d_1..d_{k-1} with d_k = -sum: B = [I; -1'] spans {sum d = 0}, reduced = B' I B.
    reduced = tangent_form(info)
    try:
        factor, _ = cho_factor(reduced, lower=True, check_finite=False)
        rcond, status = lapack.dpocon(factor, np.abs(reduced).sum(axis=0).max(), uplo="L")
        if status != 0 or not rcond > 1e-14:
            raise LinAlgError
        # diag(B reduced^-1 B') = column sums of X**2 with X = L^-1 B'.
        x = solve_triangular(factor, share_functionals(k), lower=True,
                             check_finite=False)
        per_input = np.clip(np.sum(x * x, axis=0) / n, 0.0, None)
    except (LinAlgError, ValueError):
        per_input = np.full(k, np.inf)
    return _reduce(per_input, reduce)


def _reduce(per_input: NDArray[np.float64], reduce: str) -> float | NDArray[np.float64]:
    if reduce == "none":
        return per_input
    if reduce == "sum":
        return float(per_input.sum())
    if reduce == "mean":
        return float(per_input.mean())
    raise InvalidArgumentError(f"reduce must be 'mean', 'sum' or 'none', got {reduce!r}")


def _circulant_spectrum(matrix: NDArray[np.float64], pi: NDArray[np.float64]) -> NDArray[np.float64] | None:
    """Eigenvalues of the Fisher information of a square circulant mechanism at the uniform prior, else None.

    Row ``x`` of a circulant is row 0 shifted by ``x``; every answer then has probability ``p = sum(row 0) / k``
    and the information ``M M^T / p`` is circulant, diagonal in the Fourier basis with eigenvalues
    ``|fft(row 0)|**2 / p`` (index 0: the constant vector, outside the simplex's directions). The MLE's
    variance of every share is then ``sum_{m != 0} 1 / eigenvalue_m / k`` (docs/theory.md section 5.4):
    ``O(k log k)`` instead of the ``k x k`` factorization.
    """
    k, n = matrix.shape
    if n != k or k < 3 or not np.all(pi == pi[0]):
        return None
    first = matrix[0]
    if not all(np.array_equal(matrix[x], np.roll(first, x)) for x in range(1, k)):
        return None
    p = float(first.sum()) / k
    if not p > 0:
        return None
    return np.asarray(np.abs(np.fft.fft(first)) ** 2 / p)


# ---------------------------------------------------------------------------- estimators
@dataclass(frozen=True)
class Estimate(Result):
    """Estimated input distribution from set-valued answers (Shafer semantics; Remark 3.8), a
    :class:`~designer.results.Result`.

    Attributes
    ----------
    estimate, stderr, ci_low, ci_high : (k,) ndarray
        MLE of ``pi``, standard errors from the observed information, and the ``level`` confidence interval
        (normal approximation, clipped to [0, 1]; the profile likelihood's on the boundary).
    n : int
        Number of answers.
    loglik : float
    method : str
    iterations : int
    converged : bool
        The KKT conditions of the likelihood hold to ``KKT_TOL`` (relative) and the log-likelihood lies at
        most ``LOGLIK_TOL`` (absolute, :func:`designer.estimation.mle.loglik_gap`) below its maximum; False also when an
        iteration cap was reached.
    kkt_violation : float
        The relative KKT violation at the estimate (:func:`designer.estimation.mle.kkt_violation`).
    status : FitStatus
        ``converged``, ``not_converged``, ``not_identified`` when some share's identified interval is wider
        than ``IDENTIFIED_TOL`` (the answers' distribution is the same for every share in it: fewer answer sets
        than inputs, or answers that say nothing, such as only "don't know") or its standard error exceeds the
        share's range, or ``boundary`` when the maximum has a share at 0 held there by the constraint
        (profile-likelihood intervals, docs/fits.md).
    identified_low, identified_high : (k,) ndarray
        The smallest and largest share over every prior that gives the fitted answer distribution (every
        maximizer of the likelihood; two linear programs a share, docs/theory.md section 8). Equal to
        ``estimate`` where the share is identified.
    warnings : tuple of str
        What the status means for these inputs, in words.
    variance : str
        How ``stderr`` was computed, in words: the observed information at the estimate (``oim``), or a choice of
        :func:`designer.estimation.survey_design.estimate_survey` (sandwich, cluster-robust, weights).

    Notes
    -----
    ``stderr`` is NaN (absent) where the information does not identify the share; ``ci_low``, ``ci_high`` there
    project simultaneous confidence bands of the answer distribution onto the share (a conservative interval
    that covers the identified interval plus the sampling error; docs/theory.md section 8).

    Examples
    --------
    >>> import designer
    >>> from designer.estimation.shares import estimate_sldp
    >>> fit = estimate_sldp(designer.Q_2x3(0.6, 0.2), [30, 50, 20])
    >>> fit.inputs, fit.n, fit.level, fit.variance
    (('yes', 'no'), 100, 0.95, 'observed information')
    """

    inputs: tuple[str, ...]
    estimate: NDArray[np.float64]
    stderr: NDArray[np.float64]
    ci_low: NDArray[np.float64]
    ci_high: NDArray[np.float64]
    n: int
    loglik: float
    method: str
    iterations: int
    level: float
    converged: bool = True
    kkt_violation: float = 0.0
    status: FitStatus = FitStatus.CONVERGED
    identified_low: NDArray[np.float64] | None = None
    identified_high: NDArray[np.float64] | None = None
    warnings: tuple[str, ...] = ()
    variance: str = "observed information"

    title = "Shares (maximum likelihood)"

    def __post_init__(self) -> None:
        self._check_status()
        for name in ("estimate", "stderr", "ci_low", "ci_high", "identified_low", "identified_high"):
            value = getattr(self, name)
            if isinstance(value, np.ndarray):
                value = value.copy()
                value.setflags(write=False)  # a result is read, not edited
                object.__setattr__(self, name, value)

    def _identified(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        low = self.estimate if self.identified_low is None else self.identified_low
        high = self.estimate if self.identified_high is None else self.identified_high
        return low, high

    def to_dict(self) -> dict[str, Any]:
        """The fit as JSON: ``n``, ``level``, ``method``, ``status``, ``warnings``, ``iterations``, ``variance``,
        ``converged``, ``kkt_violation``, ``loglik``, then ``estimate``, ``stderr``, ``ci_low``, ``ci_high`` (each
        ``{input: value}``, ``None`` where absent) and ``identified`` (``{input: [low, high]}``)."""
        low, high = self._identified()
        return {"n": self.n, "level": self.level, "method": self.method, "status": self.status,
                "warnings": list(self.warnings), "iterations": self.iterations, "variance": self.variance,
                "converged": self.converged, "kkt_violation": self.kkt_violation, "loglik": self.loglik,
                **share_cells(self.inputs, self),
                "identified": {x: [float(lo), float(hi)] for x, lo, hi in zip(self.inputs, low, high)}}

    def table(self) -> TableData:
        """One row per input: ``input``, ``estimate``, ``stderr``, ``ci_low``, ``ci_high``, ``identified_low``,
        ``identified_high`` (``None`` where a figure is absent)."""
        low, high = self._identified()
        columns = ["input", "estimate", "stderr", "ci_low", "ci_high", "identified_low", "identified_high"]
        rows = [[x, *(_number(v[i]) for v in (self.estimate, self.stderr, self.ci_low, self.ci_high, low, high))]
                for i, x in enumerate(self.inputs)]
        return columns, rows

    def conf_int(self, level: float | None = None) -> NDArray[np.float64]:
        """The shares' intervals ``(k, 2)``: at the fit's ``level`` those it holds; at another level Wald
        intervals from ``stderr`` (clipped to [0, 1]), which need every standard error."""
        return share_intervals(self, level)


def _number(v: float) -> float | None:
    """A share's figure for a table or JSON: ``None`` when absent (NaN: a standard error the information does not
    give)."""
    return None if np.isnan(v) else float(v)


def share_cells(inputs: Sequence[str], fit: Any) -> dict[str, dict[str, float | None]]:
    """``estimate``, ``stderr``, ``ci_low`` and ``ci_high`` of a fit as JSON objects ``{input: value}``."""
    return {key: {x: _number(float(v)) for x, v in zip(inputs, getattr(fit, key))}
            for key in ("estimate", "stderr", "ci_low", "ci_high")}


def share_intervals(fit: Any, level: float | None) -> NDArray[np.float64]:
    """``(k, 2)`` intervals of a fit with ``estimate``, ``stderr``, ``ci_low``, ``ci_high`` and ``level``: its own
    at its level, else Wald intervals at ``level`` from its standard errors (refused where one is absent)."""
    from ..exceptions import DesignerError
    from ..results import check_level

    if level is None or check_level(level) == fit.level:
        return np.column_stack([fit.ci_low, fit.ci_high]).astype(np.float64)
    if not np.all(np.isfinite(fit.stderr)):
        raise DesignerError(f"intervals at level {level:g} need every standard error, and some shares have none "
                            f"(status {fit.status}): fit again at that level")
    low, high = wald_interval(fit.estimate, fit.stderr, check_level(level), low=0.0, high=1.0)
    return np.column_stack([low, high]).astype(np.float64)


def response_columns(mech: Mechanism, responses: Sequence[Any], words: Any = None) -> NDArray[np.int64]:
    """The column of ``mech`` (focal set) of every answer, shape ``(n,)``.

    Answers are written as :mod:`designer.estimation.answers` reads them (``{yes}`` in any label order, a bare label,
    the
    card's words such as ``I don't know``, or the ``words`` of an ``[answers]`` table: word -> frame labels),
    or given as label tuples or column indices. Each distinct written answer is looked up once.
    """
    from .answers import AnswerVocabulary, describe_unknown

    if isinstance(responses, np.ndarray) and responses.dtype.kind in "iu" and responses.ndim == 1:
        # column indices (what randomize returns): checked at once
        bad = np.flatnonzero((responses < 0) | (responses >= len(mech.focal)))
        if bad.size:
            raise InvalidMechanismError(f"answer {int(bad[0]) + 1}: column index {int(responses[bad[0]])} out of range")
        return responses.astype(np.int64, copy=False)
    vocabulary = AnswerVocabulary(mech, words)
    items = responses if isinstance(responses, np.ndarray) else list(responses)
    written: Any = []
    if len(items) and all(isinstance(v, str) for v in items[:1000]):
        written = np.asarray(items, dtype=object)  # strings: each distinct one is looked up once
    else:
        written = [_written(mech, pos, r) for pos, r in enumerate(items)]
    codes = vocabulary.columns(written)
    if np.any(codes < 0):
        pos, message = describe_unknown(items, codes, vocabulary)
        raise InvalidMechanismError(f"answer {pos + 1}: {message}")
    return codes


def _written(mech: Mechanism, pos: int, r: Any) -> str:
    """One answer given as a column index, a string or a tuple of labels, as a written answer."""
    if isinstance(r, (int, np.integer)) and not isinstance(r, bool):
        if not 0 <= int(r) < len(mech.focal):
            raise InvalidMechanismError(f"answer {pos + 1}: column index {int(r)} out of range")
        return mech.columns[int(r)]
    if isinstance(r, str):
        return r
    return "{" + ",".join(map(str, r)) + "}"


def response_counts(mech: Mechanism, responses: Sequence[Any]) -> NDArray[np.float64]:
    """Counts per focal set (column of ``mech``) from answers given as headers ``{yes}``, label tuples or
    column indices (:func:`response_columns`).

    Examples
    --------
    >>> import designer
    >>> from designer.estimation.shares import response_counts
    >>> response_counts(designer.Q_2x3(0.6, 0.2), ["{yes}", "{no}", "{no}", ("yes", "no"), 1]).tolist()
    [1.0, 3.0, 1.0]
    """
    return np.bincount(response_columns(mech, responses), minlength=len(mech.focal)).astype(np.float64)


def estimate_sldp(mech: Mechanism, counts: ArrayLike, *, method: str = "newton", level: float = 0.95) -> Estimate:
    """MLE of the input distribution from counts of set-valued answers, with standard errors.

    Parameters
    ----------
    mech : Mechanism
    counts : (F,) array_like
        Number of answers per focal set (``mech.columns`` order); see :func:`response_counts`.
    method : {"newton", "em", "convex"}
        Newton steps on the active face of the simplex (default; stops on the KKT conditions, relative
        violation <= ``KKT_TOL``), EM iterations, or the concave likelihood program. Where EM or the program
        stops short of the KKT conditions (EM crawls towards a share at 0), the active-set Newton steps finish from
        its point; every method's ``status`` is the verdict of the same test at the returned point
        (:func:`~designer.estimation.mle.at_maximum`), so the three agree at one maximum.
    level : float, default 0.95
        Confidence level of the intervals.

    Returns
    -------
    Estimate

    Examples
    --------
    30 answers ``{yes}``, 50 ``{no}`` and 20 "don't know" through ``Q_2x3(0.6, 0.2)``; the MLE is Eq 2's
    ``(50 * 0.2 - 30 * 0.6) / (80 * (0.2 - 0.6)) = 0.25``:

    >>> import numpy as np
    >>> import designer
    >>> q = designer.Q_2x3(0.6, 0.2)
    >>> counts = np.array([30.0, 50.0, 20.0])
    >>> from designer.estimation.shares import estimate_sldp
    >>> fit = estimate_sldp(q, counts)
    >>> fit.estimate.round(8).tolist(), fit.stderr.round(6).tolist(), str(fit.status)
    ([0.25, 0.75], [0.108253, 0.108253], 'converged')
    """

    level = check_real(level, "level", low=0.0, high=1.0, low_open=True, high_open=True)
    c = np.asarray(counts, dtype=np.float64)
    if c.shape != (len(mech.focal),) or np.any(c < 0) or not np.all(np.isfinite(c)):
        raise InvalidMechanismError(f"counts must be {len(mech.focal)} non-negative numbers (one per focal set)")
    if not c.sum() > 0:
        raise InvalidMechanismError("no answers to estimate from")
    n = round(float(c.sum()))  # respondents: frequency weights need not be whole numbers (docs/theory.md 8.1)
    m = mech.matrix
    if method == "newton":
        pi, iterations, _ = mle_newton(m, c)
    elif method in ("em", "convex"):
        pi, iterations = em(m, c, max_iter=EM_ITERATIONS) if method == "em" else (mle_convex(m, c), 0)
        if not at_maximum(m, c, pi):  # stopped short (EM's crawl to a share at 0): finished by the active set
            finished, more, verified = mle_newton(m, c, start=pi)
            if verified or _loglik(m, c, finished) >= _loglik(m, c, pi):
                pi, iterations = finished, iterations + more
    else:
        raise InvalidArgumentError(f"method must be 'newton', 'em' or 'convex', got {method!r}")
    violation = kkt_violation(m, c, pi)
    gap = loglik_gap(m, c, pi)
    converged = at_maximum(m, c, pi)
    low, high = pi.copy(), pi.copy()
    warnings: list[str] = []
    se = np.sqrt(observed_variance(m, c, pi))  # the observed information: oim, as for several designs
    edge = at_boundary(m, c, pi) if converged else np.zeros(mech.k, dtype=bool)
    weak = weakly_identified(se) & np.isfinite(se) & ~edge.any()  # a standard error above the range [0, 1]
    if _identified_by(m, c, pi) and not weak.any():
        ci_low, ci_high = wald_interval(pi, se, level, low=0.0, high=1.0)
    else:  # the observed answers do not pin every share down (e.g. all "don't know", fewer answers than inputs,
        # or inputs whose answer distributions barely differ)
        low, high, se, ci_low, ci_high = unidentified_intervals(m, c, pi, level)
    loose = [x for x, lo, hi, w in zip(mech.inputs, low, high, weak) if hi - lo > IDENTIFIED_TOL and not w]
    status = FitStatus.CONVERGED if converged else FitStatus.NOT_CONVERGED
    if not converged:
        warnings.append(f"the likelihood's maximum was not reached (KKT violation {violation:.1e}, log-likelihood "
                        f"up to {gap:.1e} below its maximum, after {iterations} iterations): these are not maximum "
                        "likelihood estimates")
    if loose:
        status = FitStatus.NOT_IDENTIFIED if converged else status
        warnings.append(f"not identified by the answers: {', '.join(map(repr, loose))}; every share in its "
                        "identified interval fits the answers equally well")
    elif edge.any():  # the maximum on the simplex's edge: no Wald interval for the shares on it (below)
        status = FitStatus.BOUNDARY
        se = np.where(se <= SHARE_RANGE, se, np.nan)
        ci_low, ci_high = wald_interval(pi, se, level, low=0.0, high=1.0)
        warnings.append(boundary_warning([x for x, e in zip(mech.inputs, edge) if e], level))
    if status in (FitStatus.CONVERGED, FitStatus.BOUNDARY):  # near the edge: the profile likelihood's intervals
        ci_low, ci_high = near_edge_intervals(m, c, pi, se, edge, level, ci_low, ci_high)
    if weak.any():
        status = FitStatus.NOT_IDENTIFIED if converged else status
        warnings.append(weak_warning([x for x, w in zip(mech.inputs, weak) if w], m))
    return Estimate(inputs=mech.inputs, estimate=pi, stderr=se, ci_low=ci_low, ci_high=ci_high, n=n,
                    loglik=_loglik(m, c, pi), method=method, iterations=iterations, level=level, converged=converged,
                    kkt_violation=violation, status=status, identified_low=low, identified_high=high,
                    warnings=tuple(warnings))


def inversion_estimate(m: NDArray[np.float64], counts: ArrayLike) -> NDArray[np.float64]:
    """Unbiased linear estimator ``f M^-1`` of a square invertible (Bayesian) mechanism, per replicate.

    For Warner's RR this is ``(n_yes/n - (1 - p)) / (2p - 1)`` (Ex 3.7); no clipping to [0, 1].

    Examples
    --------
    Warner's design at eps = 1, 620 yes of 1000: Ex 3.7's estimator:

    >>> import math
    >>> import designer
    >>> from designer.estimation.shares import inversion_estimate
    >>> p = math.e / (math.e + 1)
    >>> pi = inversion_estimate(designer.Q_WRR(1.0).matrix, [620, 380])
    >>> math.isclose(pi[0], (0.62 - (1 - p)) / (2 * p - 1))
    True
    """
    c = np.atleast_2d(np.asarray(counts, dtype=np.float64))
    if m.shape[0] != m.shape[1]:
        raise InvalidMechanismError("the inversion estimator needs as many answers as inputs")
    freq = c / c.sum(axis=1, keepdims=True)
    est = np.linalg.solve(m.T, freq.T).T
    return est[0] if np.ndim(counts) == 1 else est
