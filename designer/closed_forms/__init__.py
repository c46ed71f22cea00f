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

from .._internal.numeric import rr_probabilities
from .._internal.validation import check_epsilon, check_int, check_real
from ..exceptions import InfeasibleDesignError, InvalidArgumentError
from .kary import (
    ESTIMATORS,
    MAX_OUTPUTS,
    REDUCTIONS,
    krr_variance,
    mle_share_variances,
    oue_probabilities,
    oue_variance,
    subset_selection_best_d,
    subset_selection_variance,
)

__all__ = [
    "ESTIMATORS",
    "MAX_OUTPUTS",
    "REDUCTIONS",
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

    Examples
    --------
    At eps = 1 with don't-know mass 0.2 (``c = 0.8``): ``p = c e / (e + 1)``, ``q = c / (e + 1)``

    >>> from designer.closed_forms import gwrr_sldp
    >>> [round(v, 6) for v in gwrr_sldp(1.0, 0.8)]
    [0.584847, 0.215153]
    """
    eps = check_epsilon(eps)
    c = check_real(c, "c", low=0, high=1, low_open=True)
    p, q = rr_probabilities(eps, 1.0)
    return c * p, c * q


def wldp_min_answer_mass(eps: float) -> float:
    """Smallest answer mass ``c`` of a binary eps-WLDP mechanism: ``2 / (1 + e^eps)`` (docs/theory.md section 4).

    Equivalently the don't-know mass is at most ``tanh(eps / 2)``.

    Examples
    --------
    >>> import math
    >>> from designer.closed_forms import wldp_min_answer_mass
    >>> round(wldp_min_answer_mass(1.0), 6), round(1 - math.tanh(0.5), 6)  # don't-know mass at most tanh(eps / 2)
    (0.537883, 0.537883)
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

    Examples
    --------
    >>> from designer.closed_forms import gwrr_wldp
    >>> [round(v, 6) for v in gwrr_wldp(1.0, 0.8)]  # q = 1 / (1 + e), p = c - q
    [0.531059, 0.268941]
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
    """Warner's estimator ``(n_yes/n - (1 - p)) / (2p - 1)`` (Ex 3.7; the paper's ``(p-1)n`` is a typo).

    Examples
    --------
    620 yes of 1000 answers with truthful probability 0.75: ``(0.62 - 0.25) / 0.5``

    >>> from designer.closed_forms import warner_mle
    >>> round(warner_mle(620, 1000, 0.75), 6)
    0.74
    """
    p = check_real(p, "p", low=0, high=1)
    if p == 0.5:
        raise InvalidArgumentError("p = 1/2 carries no information: the estimator is undefined")
    return (n_yes / n - (1 - p)) / (2 * p - 1)


def warner_variance(p: float, pi: float, n: int = 1) -> float:
    """Variance of Warner's estimator (Eq 1): ``pi(1-pi)/n + p(1-p)/(n (2p-1)^2)``.

    Examples
    --------
    >>> from designer.closed_forms import warner_variance
    >>> round(warner_variance(0.75, 0.3), 6)  # 0.3 * 0.7 + 0.75 * 0.25 / 0.5**2, per respondent
    0.96
    >>> round(warner_variance(0.75, 0.3, n=1000), 6)
    0.00096
    """
    p = check_real(p, "p", low=0, high=1)
    pi = check_real(pi, "pi", low=0, high=1)
    if p == 0.5:
        return math.inf
    return pi * (1 - pi) / n + p * (1 - p) / (n * (2 * p - 1) ** 2)


def q2x3_mle(n1: int, n2: int, p: float, q: float) -> float:
    """MLE of ``pi`` from ``Q_2x3(p, q)`` counts (Eq 2): ``(n2 q - n1 p) / ((n1 + n2)(q - p))``.

    Examples
    --------
    30 answers ``{yes}`` and 50 ``{no}`` (don't-know answers carry no information) from ``Q_2x3(0.6, 0.2)``:

    >>> from designer.closed_forms import q2x3_mle
    >>> round(q2x3_mle(30, 50, 0.6, 0.2), 6)  # (50 * 0.2 - 30 * 0.6) / (80 * (0.2 - 0.6))
    0.25
    """
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

    Examples
    --------
    >>> from designer.closed_forms import q2x3_variance_approx, q2x3_variance_exact
    >>> round(q2x3_variance_exact(0.6, 0.2, 0.3, 100), 6), round(q2x3_variance_approx(0.6, 0.2, 0.3, 100), 6)
    (0.01203, 0.01203)
    """
    n = check_int(n, "n", low=1)
    q3 = max(0.0, 1.0 - p - q)
    j = np.arange(n)
    from scipy import stats

    a = float(np.sum(stats.binom.pmf(j, n, q3) / (n - j)))
    return _q2x3_core(p, q, pi) * a / (1.0 - q3**n)


def q2x3_variance_approx(p: float, q: float, pi: float, n: int) -> float:
    """The paper's ``nu_S(p, q)``: Thm 3.10 with ``A ~ 1 / ((n + 1)(p + q) - 1)``.

    Examples
    --------
    >>> from designer.closed_forms import q2x3_variance_approx
    >>> round(q2x3_variance_approx(0.6, 0.2, 0.3, 100), 8)
    0.01203008
    """
    n = check_int(n, "n", low=1)
    return _q2x3_core(p, q, pi) / ((n + 1) * (p + q) - 1)


def _check_pq(p: float, q: float) -> tuple[float, float]:
    p = check_real(p, "p", low=0, high=1)
    q = check_real(q, "q", low=0, high=1)
    if p + q > 1 + 1e-12:
        raise InvalidArgumentError(f"p + q must be at most 1, got {p + q}")
    return p, q


def q2x3_eps_shafer(p: float, q: float) -> float:
    """Shafer loss of ``Q_2x3(p, q)``: ``ln(p / q)`` (Cor 3.12; ``p >= q``).

    Examples
    --------
    >>> import math
    >>> from designer.closed_forms import q2x3_eps_shafer
    >>> math.isclose(q2x3_eps_shafer(0.6, 0.2), math.log(3))
    True
    """
    p, q = _check_pq(p, q)
    return math.inf if q == 0 else abs(math.log(p / q))


def q2x3_nu_shafer(p: float, q: float, pi: float, n: int) -> float:
    """The paper's accuracy ``nu_S(p, q)`` of ``Q_2x3``: Thm 3.10 with the approximation of ``A``.

    Examples
    --------
    >>> from designer.closed_forms import q2x3_nu_shafer, q2x3_variance_approx
    >>> q2x3_nu_shafer(0.6, 0.2, 0.3, 100) == q2x3_variance_approx(0.6, 0.2, 0.3, 100)
    True
    """
    p, q = _check_pq(p, q)
    return q2x3_variance_approx(p, q, pi, n)


def q2x3_eps_walley(p: float, q: float) -> float:
    """Walley loss of ``Q_2x3(p, q)``: ``ln((1 - q) / q)`` (the ``lambda = 1`` matrix's loss, Def 3.13).

    Examples
    --------
    >>> import math
    >>> from designer.closed_forms import q2x3_eps_walley
    >>> math.isclose(q2x3_eps_walley(0.6, 0.2), math.log(4))  # ln((1 - q) / q)
    True
    """
    p, q = _check_pq(p, q)
    return math.inf if q == 0 else math.log((1 - q) / q)


def q2x3_nu_walley(p: float, q: float, pi: float, n: int) -> float:
    """Walley accuracy ``nu_W``: ``[-(pi - 1/2)^2 + 1/(4 (2p - 1)^2)] / n``, the ``lambda = 0`` matrix (Cor 3.20).

    Examples
    --------
    >>> from designer.closed_forms import q2x3_nu_walley
    >>> round(q2x3_nu_walley(0.6, 0.2, 0.3, 100), 6)  # (-(0.3 - 0.5)**2 + 1 / (4 * 0.2**2)) / 100
    0.0621
    """
    p, q = _check_pq(p, q)
    if p == 0.5:
        return math.inf
    return (-((pi - 0.5) ** 2) + 1.0 / (4.0 * (2 * p - 1) ** 2)) / n


def _lambda_truthful_range(p: float, q: float) -> tuple[float, float]:
    """``Q_lambda`` is Warner's RR with truthful probability ``a`` in ``[p, 1 - q]`` (lambda 0 to 1)."""
    return p, 1.0 - q


def q2x3_eps_optimistic(p: float, q: float) -> float:
    """Smallest loss over the redistributions ``Q_lambda`` of ``Q_2x3(p, q)`` (the optimistic corner of Fig 5).

    Examples
    --------
    The member of ``Q_2x3(0.6, 0.2)``'s redistributions closest to a coin flip answers truthfully with probability 0.6:

    >>> import math
    >>> from designer.closed_forms import q2x3_eps_optimistic
    >>> math.isclose(q2x3_eps_optimistic(0.6, 0.2), math.log(0.6 / 0.4))
    True
    """
    p, q = _check_pq(p, q)
    lo, hi = _lambda_truthful_range(p, q)
    a = min(max(0.5, lo), hi)  # the truthful probability closest to 1/2
    return math.inf if a in (0.0, 1.0) else abs(math.log(a / (1 - a)))


def q2x3_nu_optimistic(p: float, q: float, pi: float, n: int) -> float:
    """Smallest variance over ``Q_lambda``: Warner's Eq 1 at the truthful probability farthest from 1/2.

    Examples
    --------
    >>> from designer.closed_forms import q2x3_nu_optimistic, warner_variance
    >>> round(q2x3_nu_optimistic(0.6, 0.2, 0.3, 100), 6), round(warner_variance(0.8, 0.3, 100), 6)  # a = 1 - q
    (0.006544, 0.006544)
    """
    p, q = _check_pq(p, q)
    lo, hi = _lambda_truthful_range(p, q)
    a = lo if abs(lo - 0.5) > abs(hi - 0.5) else hi
    return warner_variance(a, pi, n)


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

    References
    ----------
    Cor 3.12 and Thm 3.10 of the paper; S. L. Warner, "Randomized response: a survey technique for eliminating
    evasive answer bias", JASA 60, 1965.

    Examples
    --------
    >>> from designer.closed_forms import gwrr_variance, warner_variance
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
