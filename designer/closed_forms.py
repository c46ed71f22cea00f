"""Closed forms of the paper and of the literature, used as references for designs (docs/theory.md section 4).

Variances are *per respondent* (``n = 1`` unless given) and, for k-ary mechanisms, the mean over the
``k`` inputs of ``Var(pi_hat_x)``; for a binary mechanism that is ``Var(pi_hat)`` of the paper.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._internal.numeric import rr_probabilities
from ._internal.validation import check_epsilon, check_int, check_prior, check_real
from .exceptions import InfeasibleDesignError, InvalidArgumentError

__all__ = [
    "gwrr_sldp",
    "gwrr_variance",
    "gwrr_wldp",
    "krr_variance",
    "mle_share_variances",
    "oue_probabilities",
    "oue_variance",
    "q2x3_eps_optimistic",
    "q2x3_eps_shafer",
    "q2x3_eps_walley",
    "q2x3_mle",
    "q2x3_nu_optimistic",
    "q2x3_nu_shafer",
    "q2x3_nu_walley",
    "q2x3_variance_approx",
    "q2x3_variance_exact",
    "subset_selection_best_d",
    "subset_selection_variance",
    "warner_mle",
    "warner_variance",
    "wldp_min_answer_mass",
]


def gwrr_sldp(eps: float, c: float) -> tuple[float, float]:
    """Optimal generalised Warner mechanism under eps-SLDP with answer mass ``c`` (Cor 3.12).

    Returns
    -------
    (p, q) : tuple of float
        ``p = c e^eps / (e^eps + 1)``, ``q = c / (e^eps + 1)``.
    """
    eps = check_epsilon(eps)
    c = check_real(c, "c", low=0, high=1, low_open=True)
    p, q = rr_probabilities(eps, 1.0)
    return c * p, c * q


def wldp_min_answer_mass(eps: float) -> float:
    """Smallest answer mass ``c`` of a binary eps-WLDP mechanism: ``2 / (1 + e^eps)`` (docs/theory.md section 4).

    Equivalently the don't-know mass is at most ``tanh(eps / 2)``.
    """
    eps = check_epsilon(eps)
    return 2.0 * rr_probabilities(eps, 1.0)[1]


def gwrr_wldp(eps: float, c: float) -> tuple[float, float]:
    """Optimal binary mechanism under eps-WLDP with answer mass ``c`` (docs/theory.md section 4, LP-checked).

    ``q = 1 / (1 + e^eps)``, ``p = c - q``; feasible iff ``c >= 2 / (1 + e^eps)``.

    Raises
    ------
    InfeasibleDesignError
        If ``c < 2 / (1 + e^eps)``.
    """
    eps = check_epsilon(eps)
    c = check_real(c, "c", low=0, high=1, low_open=True)
    bound = wldp_min_answer_mass(eps)
    if c < bound:
        raise InfeasibleDesignError(
            f"under WLDP a binary mechanism with answer mass c = {c:g} (don't-know {1 - c:g}) needs "
            f"c >= 2/(1+e^eps) = {bound:.6g} at eps = {eps:g}; allow at most {1 - bound:.6g} don't-know "
            f"(tanh(eps/2)) or raise epsilon to ln((2-c)/c) = {math.log((2 - c) / c):.6g}"
        )
    q = rr_probabilities(eps, 1.0)[1]
    return c - q, q


def warner_mle(n_yes: int, n: int, p: float) -> float:
    """Warner's estimator ``(n_yes/n - (1 - p)) / (2p - 1)`` (Ex 3.7; the paper's ``(p-1)n`` is a typo)."""
    p = check_real(p, "p", low=0, high=1)
    if p == 0.5:
        raise InvalidArgumentError("p = 1/2 carries no information: the estimator is undefined")
    return (n_yes / n - (1 - p)) / (2 * p - 1)


def warner_variance(p: float, pi: float, n: int = 1) -> float:
    """Variance of Warner's estimator (Eq 1): ``pi(1-pi)/n + p(1-p)/(n (2p-1)^2)``."""
    p = check_real(p, "p", low=0, high=1)
    pi = check_real(pi, "pi", low=0, high=1)
    if p == 0.5:
        return math.inf
    return pi * (1 - pi) / n + p * (1 - p) / (n * (2 * p - 1) ** 2)


def q2x3_mle(n1: int, n2: int, p: float, q: float) -> float:
    """MLE of ``pi`` from ``Q_2x3(p, q)`` counts (Eq 2): ``(n2 q - n1 p) / ((n1 + n2)(q - p))``."""
    if n1 + n2 == 0:
        raise InvalidArgumentError("no precise answer (n1 + n2 = 0): the MLE is undefined (Thm 3.9 conditions on it)")
    if p == q:
        raise InvalidArgumentError("p = q carries no information")
    return (n2 * q - n1 * p) / ((n1 + n2) * (q - p))


def _q2x3_core(p: float, q: float, pi: float) -> float:
    return -((pi - 0.5) ** 2) + 0.25 * ((p + q) / (p - q)) ** 2


def q2x3_variance_exact(p: float, q: float, pi: float, n: int) -> float:
    """Exact ``Var(pi_hat | N1 + N2 > 0)`` for ``Q_2x3(p, q)`` (Thm 3.10 with ``1/(1 - q3^n)``; docs/theory.md, 4).

    ``A = sum_{j=0}^{n-1} binom.pmf(j; n, q3) / (n - j)``, ``q3 = 1 - p - q``.
    """
    n = check_int(n, "n", low=1)
    q3 = max(0.0, 1.0 - p - q)
    j = np.arange(n)
    from scipy import stats

    a = float(np.sum(stats.binom.pmf(j, n, q3) / (n - j)))
    return _q2x3_core(p, q, pi) * a / (1.0 - q3**n)


def q2x3_variance_approx(p: float, q: float, pi: float, n: int) -> float:
    """The paper's ``nu_S(p, q)``: Thm 3.10 with ``A ~ 1 / ((n + 1)(p + q) - 1)``."""
    n = check_int(n, "n", low=1)
    return _q2x3_core(p, q, pi) / ((n + 1) * (p + q) - 1)


def _check_pq(p: float, q: float) -> tuple[float, float]:
    p = check_real(p, "p", low=0, high=1)
    q = check_real(q, "q", low=0, high=1)
    if p + q > 1 + 1e-12:
        raise InvalidArgumentError(f"p + q must be at most 1, got {p + q}")
    return p, q


def q2x3_eps_shafer(p: float, q: float) -> float:
    """Shafer loss of ``Q_2x3(p, q)``: ``ln(p / q)`` (Cor 3.12; ``p >= q``)."""
    p, q = _check_pq(p, q)
    return math.inf if q == 0 else abs(math.log(p / q))


def q2x3_nu_shafer(p: float, q: float, pi: float, n: int) -> float:
    """The paper's accuracy ``nu_S(p, q)`` of ``Q_2x3``: Thm 3.10 with the approximation of ``A``."""
    p, q = _check_pq(p, q)
    return q2x3_variance_approx(p, q, pi, n)


def q2x3_eps_walley(p: float, q: float) -> float:
    """Walley loss of ``Q_2x3(p, q)``: ``ln((1 - q) / q)`` (the ``lambda = 1`` matrix's loss, Def 3.13)."""
    p, q = _check_pq(p, q)
    return math.inf if q == 0 else math.log((1 - q) / q)


def q2x3_nu_walley(p: float, q: float, pi: float, n: int) -> float:
    """Walley accuracy ``nu_W``: ``[-(pi - 1/2)^2 + 1/(4 (2p - 1)^2)] / n``, the ``lambda = 0`` matrix (Cor 3.20)."""
    p, q = _check_pq(p, q)
    if p == 0.5:
        return math.inf
    return (-((pi - 0.5) ** 2) + 1.0 / (4.0 * (2 * p - 1) ** 2)) / n


def _lambda_truthful_range(p: float, q: float) -> tuple[float, float]:
    """``Q_lambda`` is Warner's RR with truthful probability ``a`` in ``[p, 1 - q]`` (lambda 0 to 1)."""
    return p, 1.0 - q


def q2x3_eps_optimistic(p: float, q: float) -> float:
    """Smallest loss over the redistributions ``Q_lambda`` of ``Q_2x3(p, q)`` (the optimistic corner of Fig 5)."""
    p, q = _check_pq(p, q)
    lo, hi = _lambda_truthful_range(p, q)
    a = min(max(0.5, lo), hi)  # the truthful probability closest to 1/2
    return math.inf if a in (0.0, 1.0) else abs(math.log(a / (1 - a)))


def q2x3_nu_optimistic(p: float, q: float, pi: float, n: int) -> float:
    """Smallest variance over ``Q_lambda``: Warner's Eq 1 at the truthful probability farthest from 1/2."""
    p, q = _check_pq(p, q)
    lo, hi = _lambda_truthful_range(p, q)
    a = lo if abs(lo - 0.5) > abs(hi - 0.5) else hi
    return warner_variance(a, pi, n)


def _prior(prior: ArrayLike | None, k: int) -> np.ndarray:
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

    Examples
    --------
    >>> import numpy as np
    >>> e = np.exp(1.0)
    >>> warner = np.array([[e, 1], [1, e]]) / (e + 1)
    >>> [round(float(v), 6) for v in mle_share_variances(warner, [0.3, 0.7])]
    [1.130674, 1.130674]
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
    from .constructors import Q_subset_selection

    return _reduce(mle_share_variances(Q_subset_selection(eps, k, d).matrix, pi, n), reduce)


def subset_selection_best_d(eps: float, k: int, prior: ArrayLike | None = None, *, estimator: str = "textbook",
                            reduce: str = "mean") -> int:
    """The subset size ``d`` in ``1..k-1`` minimising :func:`subset_selection_variance` (the smallest on ties).

    At the uniform prior (the default) it is near ``k / (e^eps + 1)`` (Ye and Barg 2018); ``prior``,
    ``estimator`` and ``reduce`` choose it for another prior, estimator or figure (``"mean"`` or ``"max"``).

    Examples
    --------
    >>> subset_selection_best_d(0.5, 8), subset_selection_best_d(4.0, 8)
    (3, 1)
    """
    eps = check_epsilon(eps)
    k = check_int(k, "k", low=2)
    pi = _prior(prior, k)
    if reduce not in ("mean", "max"):
        raise InvalidArgumentError(f"reduce must be 'mean' or 'max' to choose a subset size, got {reduce!r}")
    values = [subset_selection_variance(eps, k, d, 1, pi, estimator=estimator, reduce=reduce) for d in range(1, k)]
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

    Examples
    --------
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


def gwrr_variance(eps: float, c: float, pi: float, n: int = 1) -> float:
    """Asymptotic variance of the share estimate from Q_GWRR (Cor 3.12): Warner's on the ``c n`` precise answers.

    The don't-know answer carries no information, so the MLE (Eq 2) is Warner's estimator on the precise
    answers, whose number is about ``c n``: ``Var = [pi (1 - pi) + p'(1 - p')/(2p' - 1)^2] / (c n)`` with
    ``p' = e^eps/(e^eps + 1)``; equivalently Thm 3.10's ``[-(pi - 1/2)^2 + (1/4)((p + q)/(p - q))^2] / (c n)``.
    The same for both shares (yes and no); ``c = 1`` is Warner (Ex 3.7, Eq 1). The exact finite-``n`` variance
    is :func:`q2x3_variance_exact`.

    Parameters
    ----------
    eps : float
        Privacy budget (Shafer semantics), > 0.
    c : float
        Probability of a precise answer, ``0 < c <= 1`` (don't-know mass ``1 - c``).
    pi : float
        The true share of "yes".
    n : int, default 1
        Number of respondents.

    Examples
    --------
    >>> round(gwrr_variance(1.0, 1.0, 0.3), 6) == round(warner_variance(0.7310585786300049, 0.3), 6)
    True
    >>> round(gwrr_variance(1.0, 0.5, 0.3) / gwrr_variance(1.0, 1.0, 0.3), 12)
    2.0
    """
    eps = check_epsilon(eps)
    c = check_real(c, "c", low=0, high=1, low_open=True)
    pi = check_real(pi, "pi", low=0, high=1)
    n = check_int(n, "n", low=1)
    return warner_variance(rr_probabilities(eps, 1.0)[0], pi, 1) / (c * n)


def _deprecated(old: str, new: Callable[..., float]) -> Callable[..., float]:
    def alias(*args: Any, **kwargs: Any) -> float:
        warnings.warn(f"closed_forms.{old} is deprecated; use closed_forms.{new.__name__} (one vocabulary: "
                      "shafer, walley, optimistic)", DeprecationWarning, stacklevel=2)
        return new(*args, **kwargs)
    alias.__name__ = old
    alias.__doc__ = f"Deprecated alias of :func:`{new.__name__}` (kept for one release)."
    return alias


eps_s = _deprecated("eps_s", q2x3_eps_shafer)
nu_s = _deprecated("nu_s", q2x3_nu_shafer)
eps_w = _deprecated("eps_w", q2x3_eps_walley)
nu_w = _deprecated("nu_w", q2x3_nu_walley)
eps_o = _deprecated("eps_o", q2x3_eps_optimistic)
nu_o = _deprecated("nu_o", q2x3_nu_optimistic)
