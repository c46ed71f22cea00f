"""The textbook designs for k answers (the peers of designer's variance designs, docs/guide/peers.md): k-ary
randomized response, d-subset selection and optimized unary encoding, each with the variance of its textbook
estimator and of the maximum-likelihood estimate from its own outputs, at any prior.

Variances are per respondent unless ``n`` is given; ``reduce`` gives their mean over the ``k`` shares (the default,
the figure ``design`` prints), the largest, or the vector.
"""

from __future__ import annotations

import math
from typing import Literal, overload

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._internal.numeric import rr_probabilities
from .._internal.validation import check_epsilon, check_int, check_prior
from ..exceptions import InvalidArgumentError

__all__ = [
    "ESTIMATORS",
    "MAX_OUTPUTS",
    "REDUCTIONS",
    "krr_variance",
    "mle_share_variances",
    "oue_probabilities",
    "oue_variance",
    "subset_selection_best_d",
    "subset_selection_variance",
]


def _prior(prior: ArrayLike | None, k: int) -> NDArray[np.float64]:
    return check_prior(prior, k)


#: How a per-share variance vector is summarised: its mean (the default), its largest entry, or the vector.
REDUCTIONS = ("mean", "max", "none")
#: Which estimator's variance: the peer's textbook (unbiased, per-item) estimator or the MLE of its own outputs.
ESTIMATORS = ("textbook", "mle")
#: The most outputs a peer's MLE variance is computed over (``2^k`` for OUE, ``binom(k, d)`` for subset selection).
MAX_OUTPUTS = 1 << 20


def _reduce(per_share: NDArray[np.float64], reduce: str) -> float | NDArray[np.float64]:
    if reduce == "mean":
        return float(per_share.mean())
    if reduce == "max":
        return float(per_share.max())
    if reduce == "none":
        return per_share
    raise InvalidArgumentError(f"reduce must be one of {', '.join(map(repr, REDUCTIONS))}, got {reduce!r}")


def _check_estimator(estimator: str) -> str:
    if estimator not in ESTIMATORS:
        raise InvalidArgumentError(f"estimator must be 'textbook' or 'mle', got {estimator!r}")
    return estimator


def mle_share_variances(probabilities: ArrayLike, prior: ArrayLike | None = None, n: int = 1) -> NDArray[np.float64]:
    """Asymptotic ``Var(pi_hat_x)`` of the maximum-likelihood estimate of the shares from a mechanism's outputs.

    With ``q = pi'M`` (answers no input reaches dropped) and the Fisher information ``F = M diag(1/q) M'``,
    rows summing to 1 give ``F pi = 1``, and the covariance of the MLE per respondent on the simplex is
    ``C = F^-1 - pi pi'`` (docs/guide/peers.md). This is the diagonal of ``C / n``.

    Parameters
    ----------
    probabilities : (k, m) array_like
        ``M[x, o]``, the probability of output ``o`` given input ``x``; rows sum to 1. Any outputs: answer sets,
        bit vectors (OUE's all-zero vector included), items.
    prior : (k,) array_like, optional
        The input distribution ``pi`` (default uniform).
    n : int, default 1
        Number of respondents.

    Returns
    -------
    (k,) ndarray
        ``inf`` everywhere when the shares are not identified (``F`` singular or nearly so).

    References
    ----------
    Remark 3.8 of the paper (the likelihood of set answers); the asymptotic covariance of a maximum-likelihood
    estimate is the inverse Fisher information, here on the simplex's tangent space (docs/guide/peers.md).

    Examples
    --------
    >>> from designer.closed_forms.kary import mle_share_variances
    >>> import numpy as np
    >>> e = np.exp(1.0)
    >>> warner = np.array([[e, 1], [1, e]]) / (e + 1)
    >>> [round(float(v), 6) for v in mle_share_variances(warner, [0.3, 0.7])]
    [1.130674, 1.130674]
    >>> from designer.closed_forms import warner_variance
    >>> round(warner_variance(float(e / (e + 1)), 0.3), 6)
    1.130674
    """
    matrix = np.asarray(probabilities, dtype=np.float64)
    if matrix.ndim != 2 or matrix.shape[0] < 2 or not np.all(np.isfinite(matrix)) or np.any(matrix < 0) \
            or not np.allclose(matrix.sum(axis=1), 1.0, atol=1e-9):
        raise InvalidArgumentError("probabilities must be a (k, m) array of non-negative rows summing to 1, k >= 2")
    k = matrix.shape[0]
    pi = _prior(prior, k)
    n = check_int(n, "n", low=1)
    q = pi @ matrix
    used = q > 0
    cols = matrix[:, used]
    info = (cols / q[used]) @ cols.T
    if np.linalg.cond(info) > 1e13:
        return np.full(k, math.inf)
    return np.clip(np.diag(np.linalg.inv(info)) - pi**2, 0.0, None) / n


def _unary_shares(p: float, q: float, pi: np.ndarray, n: int) -> NDArray[np.float64]:
    """``Var(pi_hat_x)`` of the per-item estimators ``(f_x - q)/(p - q)``, ``f_x`` the share of reports holding
    item ``x`` (held with ``p`` by the item's owners, ``q`` by the others): ``P_x (1 - P_x) / (n (p - q)^2)``."""
    big_p = q + pi * (p - q)
    return np.asarray(big_p * (1 - big_p) / (n * (p - q) ** 2), dtype=np.float64)


@overload
def krr_variance(eps: float, k: int, n: int = ..., prior: ArrayLike | None = ..., *,
                 reduce: Literal["mean", "max"] = ...) -> float: ...
@overload
def krr_variance(eps: float, k: int, n: int = ..., prior: ArrayLike | None = ..., *,
                 reduce: Literal["none"]) -> NDArray[np.float64]: ...
def krr_variance(eps: float, k: int, n: int = 1, prior: ArrayLike | None = None, *,
                 reduce: str = "mean") -> float | NDArray[np.float64]:
    """Share variances of k-ary randomized response (Kairouz et al. 2016): its estimator is also the MLE's.

    ``p = e^eps/(e^eps + k - 1)``, ``q = 1/(e^eps + k - 1)``; ``Var(pi_hat_x) = P_x (1 - P_x) / (n (p - q)^2)`` with
    ``P_x = q + pi_x (p - q)``. The inversion estimator ``(f_x - q)/(p - q)`` is the MLE wherever it lies in the
    simplex, and its variance equals the MLE's asymptotic one (:func:`mle_share_variances` of
    :func:`~designer.constructors.Q_kRR`). For ``k = 2`` this is Warner's Eq 1 (Ex 3.7).

    Parameters
    ----------
    eps : float
        Privacy budget, > 0.
    k : int
        Number of answers, >= 2.
    n : int, default 1
        Number of respondents.
    prior : (k,) array_like, optional
        The true shares ``pi`` (default uniform).
    reduce : {"mean", "max", "none"}, default "mean"
        The mean over the ``k`` shares, the largest, or the ``(k,)`` vector.

    Returns
    -------
    float or (k,) ndarray

    References
    ----------
    P. Kairouz, K. Bonawitz, D. Ramage, "Discrete distribution estimation under local privacy", ICML 2016.

    Examples
    --------
    >>> from designer.closed_forms.kary import krr_variance
    >>> round(krr_variance(0.5, 6), 4)
    14.5891
    >>> round(krr_variance(2.0, 5, prior=[0.4, 0.3, 0.15, 0.1, 0.05], reduce="max"), 6)
    0.68233
    """
    eps = check_epsilon(eps)
    k = check_int(k, "k", low=2)
    n = check_int(n, "n", low=1)
    p, q = rr_probabilities(eps, k - 1)
    return _reduce(_unary_shares(p, q, _prior(prior, k), n), reduce)


def _subset_probabilities(eps: float, k: int, d: int) -> tuple[float, float]:
    """``(p, q)``: the true item is reported with ``p = d e^eps/(d e^eps + k - d)``; another with
    ``q = p (d-1)/(k-1) + (1-p) d/(k-1)``."""
    p = rr_probabilities(eps, (k - d) / d)[0]
    return p, p * (d - 1) / (k - 1) + (1 - p) * d / (k - 1)


def _check_subset(k: int, d: int) -> int:
    d = check_int(d, "d", low=1)
    if d >= k:
        raise InvalidArgumentError(f"subset size d must be below k = {k}, got {d}")
    return d


@overload
def subset_selection_variance(eps: float, k: int, d: int | None = ..., n: int = ..., prior: ArrayLike | None = ..., *,
                              estimator: str = ..., reduce: Literal["mean", "max"] = ...) -> float: ...
@overload
def subset_selection_variance(eps: float, k: int, d: int | None = ..., n: int = ..., prior: ArrayLike | None = ..., *,
                              estimator: str = ..., reduce: Literal["none"]) -> NDArray[np.float64]: ...
def subset_selection_variance(eps: float, k: int, d: int | None = None, n: int = 1,
                              prior: ArrayLike | None = None, *, estimator: str = "textbook",
                              reduce: str = "mean") -> float | NDArray[np.float64]:
    """Share variances of d-subset selection (Wang et al. 2016; Ye and Barg 2018): report ``d`` of the ``k`` items.

    Each ``d``-subset holding the true item is reported with ``e^eps`` times the probability of each one that does
    not (the mechanism :func:`~designer.constructors.Q_subset_selection`). The true item is in the report with
    ``p = d e^eps / (d e^eps + k - d)``, another item with ``q = p (d-1)/(k-1) + (1-p) d/(k-1)``.

    Parameters
    ----------
    eps : float
        Privacy budget, > 0.
    k : int
        Number of items, >= 2.
    d : int, optional
        Subset size in ``1..k-1`` (``d = 1`` is k-RR). Without it, the ``d`` that minimises the returned figure
        (the estimator's ``reduce`` at this prior; with ``reduce="none"``, the mean) is used.
    n : int, default 1
        Number of respondents.
    prior : (k,) array_like, optional
        The true shares ``pi`` (default uniform).
    estimator : {"textbook", "mle"}, default "textbook"
        ``"textbook"``: the per-item estimators ``(f_x - q)/(p - q)`` (``f_x`` the share of reports holding ``x``),
        variance ``P_x (1 - P_x)/(n (p - q)^2)``, ``P_x = q + pi_x (p - q)``. ``"mle"``: the MLE of the shares from
        the reported subsets (:func:`mle_share_variances`), never larger, and equal at the uniform prior.
    reduce : {"mean", "max", "none"}, default "mean"
        The mean over the ``k`` shares, the largest, or the ``(k,)`` vector.

    Returns
    -------
    float or (k,) ndarray

    References
    ----------
    S. Wang, L. Huang, P. Wang, Y. Nie, H. Xu, W. Yang, X.-Y. Li, C. Qiao, "Mutual information optimally local
    private discrete distribution estimation", arXiv:1607.08025, 2016. M. Ye, A. Barg, "Optimal schemes for
    discrete distribution estimation under locally differential privacy", IEEE Trans. Inf. Theory 64(8), 2018.

    Examples
    --------
    >>> from designer.closed_forms.kary import subset_selection_variance, subset_selection_best_d
    >>> round(subset_selection_variance(0.5, 6), 4)
    10.9843
    >>> subset_selection_best_d(0.5, 6)
    2
    >>> skewed = [0.4, 0.3, 0.15, 0.1, 0.05]
    >>> [round(subset_selection_variance(2.0, 5, prior=skewed, estimator=e), 6) for e in ("textbook", "mle")]
    [0.491419, 0.491419]
    """
    eps = check_epsilon(eps)
    k = check_int(k, "k", low=2)
    n = check_int(n, "n", low=1)
    _check_estimator(estimator)
    pi = _prior(prior, k)
    if d is None:
        d = subset_selection_best_d(eps, k, pi, estimator=estimator, reduce="mean" if reduce == "none" else reduce)
    d = _check_subset(k, d)
    if estimator == "textbook":
        return _reduce(_unary_shares(*_subset_probabilities(eps, k, d), pi, n), reduce)
    if math.comb(k, d) > MAX_OUTPUTS:
        raise InvalidArgumentError(f"estimator='mle' of {d}-subset selection over {k} items has binom({k}, {d}) = "
                                   f"{math.comb(k, d)} outputs, more than {MAX_OUTPUTS}: use estimator='textbook'")
    from ..constructors import Q_subset_selection

    return _reduce(mle_share_variances(Q_subset_selection(eps, k, d).matrix, pi, n), reduce)


def subset_selection_best_d(eps: float, k: int, prior: ArrayLike | None = None, *, estimator: str = "textbook",
                            reduce: str = "mean") -> int:
    """The subset size ``d`` in ``1..k-1`` minimising :func:`subset_selection_variance` (the smallest on ties).

    At the uniform prior (the default) it is near ``k / (e^eps + 1)`` (Ye and Barg 2018).

    Parameters
    ----------
    eps : float
        Privacy budget, > 0.
    k : int
        Number of items, >= 2.
    prior : (k,) array_like, optional
        The true shares (default uniform).
    estimator : {"textbook", "mle"}, default "textbook"
        The estimator whose variance is minimised (see :func:`subset_selection_variance`).
    reduce : {"mean", "max"}, default "mean"
        The figure minimised: the mean share variance or the largest.

    Returns
    -------
    int

    References
    ----------
    M. Ye, A. Barg, "Optimal schemes for discrete distribution estimation under locally differential privacy",
    IEEE Trans. Inf. Theory 64(8), 2018.

    Examples
    --------
    >>> from designer.closed_forms.kary import subset_selection_best_d
    >>> subset_selection_best_d(0.5, 8), subset_selection_best_d(4.0, 8)
    (3, 1)
    """
    eps = check_epsilon(eps)
    k = check_int(k, "k", low=2)
    pi = _prior(prior, k)
    if reduce not in ("mean", "max"):
        raise InvalidArgumentError(f"reduce must be 'mean' or 'max' to choose a subset size, got {reduce!r}")
    figure: Literal["mean", "max"] = "max" if reduce == "max" else "mean"
    values = [subset_selection_variance(eps, k, d, 1, pi, estimator=estimator, reduce=figure) for d in range(1, k)]
    return 1 + int(np.argmin(values))


def oue_probabilities(eps: float, k: int) -> NDArray[np.float64]:
    """The output distribution of optimized unary encoding (Wang et al. 2017) over its ``2^k`` bit vectors.

    Input ``x`` is encoded as the one-hot vector of ``x``; its bit ``x`` is kept with ``p = 1/2``, every other bit
    set with ``q = 1/(e^eps + 1)``, independently. Column ``b`` (``0 <= b < 2^k``) is the bit vector with bit
    ``j`` of ``b`` for item ``j``; column 0, the all-zero vector, is an output too (which is why OUE is no
    set-valued mechanism of designer: the empty set is no answer there). Every ratio of a column's entries is
    at most ``e^eps``.

    Returns
    -------
    (k, 2^k) ndarray
        Rows sum to 1.

    References
    ----------
    T. Wang, J. Blocki, N. Li, S. Jha, "Locally differentially private protocols for frequency estimation",
    USENIX Security 2017.

    Examples
    --------
    >>> from designer.closed_forms.kary import oue_probabilities
    >>> m = oue_probabilities(1.0, 3)
    >>> m.shape, bool(abs(m.sum(axis=1) - 1).max() < 1e-15)
    ((3, 8), True)
    >>> round(float((m.max(axis=0) / m.min(axis=0)).max()), 6), round(float(__import__("math").e), 6)
    (2.718282, 2.718282)
    """
    eps = check_epsilon(eps)
    k = check_int(k, "k", low=2)
    if 1 << k > MAX_OUTPUTS:
        raise InvalidArgumentError(f"OUE over k = {k} items has 2^{k} outputs, more than {MAX_OUTPUTS}: "
                                   "use its estimator='textbook' variance")
    q = rr_probabilities(eps, 1.0)[1]
    bits = (np.arange(1 << k)[None, :] >> np.arange(k)[:, None]) & 1  # (k, 2^k): bit j of output b
    other = np.prod(np.where(bits == 1, q, 1.0 - q), axis=0)  # every bit at the "other item" rate
    own = np.where(bits == 1, 0.5 / q, 0.5 / (1.0 - q))  # the input's own bit at 1/2 instead
    return np.asarray(other[None, :] * own, dtype=np.float64)


@overload
def oue_variance(eps: float, k: int, n: int = ..., prior: ArrayLike | None = ..., *, estimator: str = ...,
                 reduce: Literal["mean", "max"] = ...) -> float: ...
@overload
def oue_variance(eps: float, k: int, n: int = ..., prior: ArrayLike | None = ..., *, estimator: str = ...,
                 reduce: Literal["none"]) -> NDArray[np.float64]: ...
def oue_variance(eps: float, k: int, n: int = 1, prior: ArrayLike | None = None, *, estimator: str = "textbook",
                 reduce: str = "mean") -> float | NDArray[np.float64]:
    """Share variances of optimized unary encoding (Wang et al. 2017): ``p = 1/2``, ``q = 1/(e^eps + 1)``.

    Parameters
    ----------
    eps : float
        Privacy budget, > 0.
    k : int
        Number of items, >= 2.
    n : int, default 1
        Number of respondents.
    prior : (k,) array_like, optional
        The true shares ``pi`` (default uniform).
    estimator : {"textbook", "mle"}, default "textbook"
        ``"textbook"``: the per-item estimators ``(f_x - q)/(p - q)``, variance ``P_x (1 - P_x)/(n (p - q)^2)``
        with ``P_x = q + pi_x (p - q)``. ``"mle"``: the MLE of the shares from the whole bit vectors, all
        ``2^k`` of them with the all-zero one (:func:`oue_probabilities`, :func:`mle_share_variances`); it uses
        that each report comes from one item, so it is never worse.
    reduce : {"mean", "max", "none"}, default "mean"
        The mean over the ``k`` shares, the largest, or the ``(k,)`` vector.

    Returns
    -------
    float or (k,) ndarray

    References
    ----------
    T. Wang, J. Blocki, N. Li, S. Jha, "Locally differentially private protocols for frequency estimation",
    USENIX Security 2017.

    Examples
    --------
    >>> from designer.closed_forms.kary import oue_variance
    >>> round(oue_variance(0.5, 6), 4), round(oue_variance(0.5, 6, estimator="mle"), 4)
    (15.9763, 13.2471)
    """
    eps = check_epsilon(eps)
    k = check_int(k, "k", low=2)
    n = check_int(n, "n", low=1)
    _check_estimator(estimator)
    pi = _prior(prior, k)
    if estimator == "mle":
        return _reduce(mle_share_variances(oue_probabilities(eps, k), pi, n), reduce)
    return _reduce(_unary_shares(0.5, rr_probabilities(eps, 1.0)[1], pi, n), reduce)
