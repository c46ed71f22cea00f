"""Estimation of the input distribution from set-valued answers (Remark 3.8; docs/theory.md section 8).

Under Shafer's semantics the analyst sees the focal set itself, so each focal set is an output with
probability ``pi . m(E)``; the Fisher information of the prior ``pi`` (on the simplex) is
``I = sum_E m(E) m(E)^T / (pi . m(E))`` and the asymptotic covariance of the MLE is its inverse on the
tangent space ``{d : sum d = 0}``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._numeric import two_sided_z
from ._validation import check_prior, check_real
from .exceptions import InvalidArgumentError, InvalidMechanismError
from .mechanism import Mechanism
from .mle import KKT_TOL, _loglik, em, kkt_violation, mle_convex, mle_newton
from .solvers import minimize

__all__ = [
    "Estimate",
    "IdentifiedSet",
    "chi2_information",
    "em",
    "estimate_sldp",
    "estimator_variance",
    "fisher_information",
    "identified_set",
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
    a, b = info[:-1, :-1], info[:-1, -1]
    reduced = a - b[:, None] - b[None, :] + info[-1, -1]
    try:
        factor, _ = cho_factor(reduced, lower=True, check_finite=False)
        rcond, status = lapack.dpocon(factor, np.abs(reduced).sum(axis=0).max(), uplo="L")
        if status != 0 or not rcond > 1e-14:
            raise LinAlgError
        # diag(B reduced^-1 B') = column sums of X**2 with X = L^-1 B'.
        x = solve_triangular(factor, np.hstack([np.eye(k - 1), -np.ones((k - 1, 1))]), lower=True,
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
class Estimate:
    """Estimated input distribution from set-valued answers (Shafer semantics).

    Attributes
    ----------
    estimate, stderr, ci_low, ci_high : (k,) ndarray
        MLE of ``pi``, inverse-Fisher standard errors, and the ``level`` confidence interval
        (normal approximation, clipped to [0, 1]).
    n : int
        Number of answers.
    loglik : float
    method : str
    iterations : int
    converged : bool
        The KKT conditions of the likelihood hold to ``KKT_TOL`` (relative); False also when an iteration cap
        was reached.
    kkt_violation : float
        The relative KKT violation at the estimate (:func:`designer.mle.kkt_violation`).
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


def response_columns(mech: Mechanism, responses: Sequence[Any], words: Any = None) -> NDArray[np.int64]:
    """The column of ``mech`` (focal set) of every answer, shape ``(n,)``.

    Answers are written as :mod:`designer.answers` reads them (``{yes}`` in any label order, a bare label, the
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
    column indices (:func:`response_columns`)."""
    return np.bincount(response_columns(mech, responses), minlength=len(mech.focal)).astype(np.float64)


def _identified_by(m: NDArray[np.float64], counts: NDArray[np.float64], pi: NDArray[np.float64]) -> bool:
    """Whether the observed answers identify the shares: the observed information, on the simplex's
    tangent space, is nonsingular (it is 0 when every observed answer is equally likely for every input)."""
    k = m.shape[0]
    if k < 2:
        return True
    seen = counts > 0
    cols = m[:, seen]
    p = pi @ cols
    weights = counts[seen] / np.maximum(p, 1e-300) ** 2
    info = (cols * weights) @ cols.T  # (k, k)
    basis = np.eye(k)[:, :-1] - np.eye(k)[:, -1:]  # directions that keep the shares summing to 1
    tangent = basis.T @ info @ basis
    eig = np.linalg.eigvalsh(tangent)
    return bool(eig.max() > 0 and eig.min() > 1e-12 * eig.max())


def estimate_sldp(mech: Mechanism, counts: ArrayLike, *, method: str = "newton", level: float = 0.95) -> Estimate:
    """MLE of the input distribution from counts of set-valued answers, with standard errors.

    Parameters
    ----------
    mech : Mechanism
    counts : (F,) array_like
        Number of answers per focal set (``mech.columns`` order); see :func:`response_counts`.
    method : {"newton", "em", "convex"}
        Newton steps on the active face of the simplex (default; stops on the KKT conditions, relative
        violation <= ``KKT_TOL``), EM iterations, or the concave likelihood program.
    level : float, default 0.95
        Confidence level of the intervals.

    Returns
    -------
    Estimate
    """

    level = check_real(level, "level", low=0.0, high=1.0, low_open=True, high_open=True)
    c = np.asarray(counts, dtype=np.float64)
    if c.shape != (len(mech.focal),) or np.any(c < 0) or not np.all(np.isfinite(c)):
        raise InvalidMechanismError(f"counts must be {len(mech.focal)} non-negative numbers (one per focal set)")
    n = round(float(c.sum()))
    if n == 0:
        raise InvalidMechanismError("no answers to estimate from")
    m = mech.matrix
    if method == "newton":
        pi, iterations, _ = mle_newton(m, c)
    elif method == "em":
        pi, iterations = em(m, c)
    elif method == "convex":
        pi, iterations = mle_convex(m, c), 0
    else:
        raise InvalidArgumentError(f"method must be 'newton', 'em' or 'convex', got {method!r}")
    violation = kkt_violation(m, c, pi)
    var = np.asarray(estimator_variance(mech, pi, n, reduce="none"))
    if not _identified_by(m, c, pi):
        var = np.full(mech.k, np.inf)  # the observed answers do not depend on the shares (e.g. all "don't know")
    se = np.sqrt(var)
    z = two_sided_z(level)
    return Estimate(mech.inputs, pi, se, np.clip(pi - z * se, 0, 1), np.clip(pi + z * se, 0, 1), n,
                    _loglik(m, c, pi), method, iterations, level, violation <= KKT_TOL, violation)


@dataclass(frozen=True)
class IdentifiedSet:
    """Bounds on each input's share from precise answers (Walley semantics; docs/theory.md section 8).

    Attributes
    ----------
    lower, upper : (k,) ndarray
        Smallest and largest ``pi_j`` compatible with the answers.
    level : float or None
        With a level, the answer frequencies may move within simultaneous (Bonferroni) normal confidence
        bands, so the interval covers the population identified set with about that probability and
        shrinks to it as ``n`` grows; without, the frequencies are taken as exact.
    misfit : float
        Total distance by which the frequencies (or their bands) miss every reachable distribution;
        0 in the usual case. When positive, the bounds are over the closest reachable ones.
    n : int
    """

    inputs: tuple[str, ...]
    lower: NDArray[np.float64]
    upper: NDArray[np.float64]
    level: float | None
    misfit: float
    n: int


def identified_set(mech: Mechanism, counts: ArrayLike, *, level: float | None = 0.95) -> IdentifiedSet:
    """Interval of each ``pi_j`` compatible with observed precise answers (LPs over ``(pi, w)``).

    Variables ``w_x(B, y) >= 0`` with ``sum_{y in B} w_x(B, y) = pi_x m_x(B)`` and output frequencies
    ``sum_x sum_{B contains y} w_x(B, y) = f(y) + s(y)``, ``pi`` in the simplex (docs/theory.md section 8). The slack
    ``s(y)`` is bounded by the confidence band of ``f(y)`` (``level``) or 0; if that is infeasible, the
    least total slack is used instead (``misfit``). Then ``min`` and ``max`` of each ``pi_j``.

    Parameters
    ----------
    mech : Mechanism
    counts : (l,) array_like
        Number of answers per frame label.
    level : float or None, default 0.95
    """
    import scipy.sparse as sp
    from scipy import stats

    c = np.asarray(counts, dtype=np.float64)
    if c.shape != (mech.l,) or np.any(c < 0) or c.sum() <= 0:
        raise InvalidMechanismError(f"counts must be {mech.l} non-negative numbers with a positive total")
    n = float(c.sum())
    f = c / n
    k, l = mech.k, mech.l
    focal = np.asarray(mech.focal, dtype=np.int64)
    xs, js = np.nonzero(mech.matrix > 0)
    elems = [np.flatnonzero((focal[j] >> np.arange(l)) & 1) for j in js]
    sizes = np.array([e.size for e in elems])
    nw = int(sizes.sum())
    rw = np.repeat(np.arange(xs.size), sizes)
    cw = np.arange(nw)
    yy = np.concatenate(elems) if elems else np.zeros(0, dtype=np.int64)
    n_vars = k + nw + 2 * l  # pi, w, slack+, slack-
    alloc = sp.csr_matrix((np.r_[np.ones(nw), -mech.matrix[xs, js]],
                           (np.r_[rw, np.arange(xs.size)], np.r_[k + cw, xs])), shape=(xs.size, n_vars))
    out = sp.csr_matrix((np.r_[np.ones(nw), -np.ones(l), np.ones(l)],
                         (np.r_[yy, np.arange(l), np.arange(l)],
                          np.r_[k + cw, k + nw + np.arange(l), k + nw + l + np.arange(l)])), shape=(l, n_vars))
    simplex = sp.csr_matrix((np.ones(k), (np.zeros(k, dtype=int), np.arange(k))), shape=(1, n_vars))
    a_eq = sp.vstack([alloc, out, simplex], format="csr")
    b_eq = np.r_[np.zeros(xs.size), f, 1.0]
    band = np.zeros(l)
    if level is not None:
        if not 0 < level < 1:
            raise InvalidArgumentError(f"level must lie in (0, 1), got {level}")
        z = float(stats.norm.ppf(1 - (1 - level) / (2 * l)))
        band = z * np.sqrt(np.maximum(f * (1 - f), 1.0 / n) / n)
    bounds = [(0, None)] * (k + nw) + [(0, b) for b in band] * 2
    slack = np.zeros(n_vars)
    slack[k + nw:] = 1.0
    a_ub, b_ub, misfit = None, None, 0.0
    probe = minimize(np.zeros(n_vars), A_eq=a_eq, b_eq=b_eq, bounds=bounds)
    if probe.status != 0:  # the bands miss every reachable distribution: use the closest ones
        first = minimize(slack, A_eq=a_eq, b_eq=b_eq, bounds=(0, None))
        misfit = float(first.fun)
        bounds = [(0, None)] * n_vars
        a_ub, b_ub = sp.csr_matrix(slack[None, :]), [misfit * (1 + 1e-9) + 1e-12]
    lower, upper = np.zeros(k), np.zeros(k)
    for j in range(k):
        obj = np.zeros(n_vars)
        obj[j] = 1.0
        lo = minimize(obj, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=b_eq, bounds=bounds)
        hi = minimize(-obj, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=b_eq, bounds=bounds)
        lower[j], upper[j] = lo.fun, -hi.fun
    return IdentifiedSet(mech.inputs, np.clip(lower, 0, 1), np.clip(upper, 0, 1), level, misfit, round(n))


def inversion_estimate(m: NDArray[np.float64], counts: ArrayLike) -> NDArray[np.float64]:
    """Unbiased linear estimator ``f M^-1`` of a square invertible (Bayesian) mechanism, per replicate.

    For Warner's RR this is ``(n_yes/n - (1 - p)) / (2p - 1)`` (Ex 3.7); no clipping to [0, 1].
    """
    c = np.atleast_2d(np.asarray(counts, dtype=np.float64))
    if m.shape[0] != m.shape[1]:
        raise InvalidMechanismError("the inversion estimator needs as many answers as inputs")
    freq = c / c.sum(axis=1, keepdims=True)
    est = np.linalg.solve(m.T, freq.T).T
    return est[0] if np.ndim(counts) == 1 else est
