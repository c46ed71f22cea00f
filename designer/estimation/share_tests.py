"""Tests of one share against a null value: the Wald test and the likelihood-ratio test (docs/theory.md section
8.3).

With few respondents the Wald statistic ``((pi_s - v) / se)^2`` leans on a variance computed at the estimate,
which near the simplex's edge or with a noisy mechanism is far from the variance under the null; the
likelihood-ratio statistic ``2 (l(pi) - l(pi~))`` compares the likelihoods themselves, ``pi~`` maximising the
likelihood (Def 3.1's ``sum_E c_E log (pi M)_E``) with ``pi_s`` held at ``v``. Both are referred to the chi-square
distribution with one degree of freedom (two-sided).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..exceptions import InvalidArgumentError
from ..mechanism import Mechanism
from .mle import _loglik

__all__ = ["ShareTest", "constrained_mle", "constrained_shares", "share_test", "wald_test"]

#: EM for the constrained maximum stops when the log-likelihood gains less than this (relative) in a step.
EM_TOL = 1e-14
#: ... or after this many steps (the result then says it did not converge).
EM_MAX_STEPS = 200_000


@dataclass(frozen=True, kw_only=True)
class ShareTest:
    """The Wald and likelihood-ratio tests of ``pi[share] = null``.

    Attributes
    ----------
    share : str
    null : float
    wald_statistic, wald_pvalue : float
        ``((pi_s - null) / se)^2`` and its chi-square(1) upper tail; NaN without a standard error.
    lr_statistic, lr_pvalue : float
        ``2 (l(pi) - l(pi~))`` (at least 0) and its chi-square(1) upper tail.
    constrained : (k,) ndarray
        ``pi~``, the maximum of the likelihood with the share held at ``null``.
    converged : bool
        Whether the constrained maximum was reached (EM's gain below :data:`EM_TOL`).

    Examples
    --------
    >>> import designer
    >>> from designer.estimation.share_tests import share_test
    >>> test = share_test(designer.Q_2x3(0.6, 0.2), [30, 50, 20], [0.25, 0.75], [0.108253, 0.108253], "yes", 0.3)
    >>> test.share, test.null, test.constrained.round(9).tolist()
    ('yes', 0.3, [0.3, 0.7])
    """

    share: str
    null: float
    wald_statistic: float
    wald_pvalue: float
    lr_statistic: float
    lr_pvalue: float
    constrained: NDArray[np.float64]
    converged: bool


def constrained_mle(mech: Mechanism, counts: ArrayLike, share: int, null: float) -> tuple[NDArray[np.float64], bool]:
    """The shares maximising ``sum_E c_E log (pi M)_E`` with ``pi[share] = null`` (:func:`constrained_shares` on the
    mechanism's matrix). Returns ``(pi, converged)``.

    Examples
    --------
    >>> import designer
    >>> from designer.estimation.share_tests import constrained_mle
    >>> pi, converged = constrained_mle(designer.Q_2x3(0.6, 0.2), [30, 50, 20], 0, 0.3)
    >>> pi.round(9).tolist(), converged
    ([0.3, 0.7], True)
    """
    return constrained_shares(mech.matrix, np.asarray(counts, dtype=np.float64), share, null)


def constrained_shares(m: NDArray[np.float64], counts: NDArray[np.float64], share: int, null: float, *,
                       start: NDArray[np.float64] | None = None) -> tuple[NDArray[np.float64], bool]:
    """The shares maximising ``sum_E c_E log (pi m)_E`` over the simplex with ``pi[share] = null``, ``m`` ``(k, F)``:
    the other shares are ``(1 - null) sigma`` with ``sigma`` on the simplex, fitted by EM (the share's input is a
    component of fixed weight), accelerated by SQUAREM's extrapolation (each extrapolation followed by an EM step and
    kept only when it fits no worse than two plain EM steps, so every iteration raises the likelihood), from
    ``start``'s other shares (default: equal). Returns ``(pi, converged)``.

    Examples
    --------
    >>> from designer.estimation.share_tests import constrained_shares
    >>> import numpy as np
    >>> warner = np.array([[0.75, 0.25], [0.25, 0.75]])  # Warner's design, p = 0.75
    >>> pi, converged = constrained_shares(warner, np.array([60.0, 40.0]), 0, 0.5)
    >>> pi.tolist(), converged
    ([0.5, 0.5], True)
    """
    c = np.asarray(counts, dtype=np.float64)
    k = m.shape[0]
    others = [j for j in range(k) if j != share]
    pi = np.zeros(k)
    pi[share] = null
    if k == 1 or null >= 1.0:
        return pi, True
    sigma = np.full(len(others), 1.0 / len(others))
    if start is not None and float(np.sum(start[others])) > 0:
        sigma = np.clip(np.asarray(start, dtype=np.float64)[others], 1e-12, None)
        sigma /= sigma.sum()
    fixed = null * m[share]
    rest = m[others]
    used = c > 0

    def value_of(sig: NDArray[np.float64]) -> float:
        p = fixed[used] + (1.0 - null) * (sig @ rest[:, used])
        return float(np.sum(c[used] * np.log(p))) if np.all(p > 0) else -math.inf

    def em_step(sig: NDArray[np.float64]) -> NDArray[np.float64] | None:
        p = fixed + (1.0 - null) * (sig @ rest)
        weights = np.where(p > 0, c / np.where(p > 0, p, 1.0), 0.0)
        expected = sig * (rest @ weights)  # expected respondents of each other input, up to (1 - null)
        total = expected.sum()
        return expected / total if total > 0 else None

    last = value_of(sigma)
    for _ in range(EM_MAX_STEPS // 3):  # SQUAREM (Varadhan and Roland 2008): two EM steps and an extrapolation
        one = em_step(sigma)
        if one is None:
            break
        two = em_step(one)
        if two is None:
            break
        r, v = one - sigma, two - 2 * one + sigma
        alpha = -math.sqrt(float(r @ r) / float(v @ v)) if float(v @ v) > 0 else -1.0
        jump = np.clip(sigma - 2 * alpha * r + alpha * alpha * v, 0.0, None) if alpha < -1 else two
        jump = jump / jump.sum() if jump.sum() > 0 else two
        settled = em_step(jump)  # one EM step from the extrapolation keeps it stable
        candidate = settled if settled is not None and value_of(settled) >= value_of(two) else two
        value = value_of(candidate)
        sigma = candidate
        if math.isfinite(last) and value - last <= EM_TOL * max(1.0, abs(value)):
            pi[others] = (1.0 - null) * sigma
            return pi, True
        last = value
    pi[others] = (1.0 - null) * sigma
    return pi, False


def wald_test(estimate: float, stderr: float, null: float) -> tuple[float, float]:
    """``((estimate - null) / stderr)^2`` and its chi-square(1) upper tail; NaN for both without a standard
    error.

    Examples
    --------
    >>> from designer.estimation.share_tests import wald_test
    >>> [round(v, 4) for v in wald_test(0.25, 0.108253, 0.3)]  # ((0.25 - 0.3) / 0.108253)^2 and its p-value
    [0.2133, 0.6442]
    """
    from .._internal.numeric import chi2_sf

    if not (stderr > 0 and math.isfinite(stderr)):
        return math.nan, math.nan
    statistic = ((estimate - null) / stderr) ** 2
    return float(statistic), float(chi2_sf(statistic, 1))


def share_test(mech: Mechanism, counts: ArrayLike, estimate: ArrayLike, stderr: ArrayLike, share: str | int,
               null: float) -> ShareTest:
    """Wald and likelihood-ratio tests of ``pi[share] = null`` from the answer ``counts`` ``(F,)``, the MLE
    ``estimate`` ``(k,)`` and its standard errors ``stderr`` ``(k,)``
    (:func:`~designer.estimation.shares.estimate_sldp`).

    Raises :class:`InvalidArgumentError` for a share that is not an input or a null outside (0, 1).

    Examples
    --------
    The tests of ``pi[yes] = 0.3`` from 30 ``{yes}``, 50 ``{no}`` and 20 "don't know" answers (MLE 0.25):

    >>> import designer
    >>> from designer.estimation.share_tests import share_test
    >>> test = share_test(designer.Q_2x3(0.6, 0.2), [30, 50, 20], [0.25, 0.75], [0.108253, 0.108253], "yes", 0.3)
    >>> round(test.wald_pvalue, 3), round(test.lr_pvalue, 3), test.converged
    (0.644, 0.647, True)
    """
    from .._internal.numeric import chi2_sf

    s = mech.input_index(share) if isinstance(share, str) else int(share)
    if not (isinstance(null, float | int) and 0.0 < float(null) < 1.0):
        raise InvalidArgumentError(f"the null value of a share must lie strictly between 0 and 1, got {null!r}")
    c = np.asarray(counts, dtype=np.float64)
    pi = np.asarray(estimate, dtype=np.float64)
    wald, wald_p = wald_test(float(pi[s]), float(np.asarray(stderr, dtype=np.float64)[s]), float(null))
    constrained, converged = constrained_mle(mech, c, s, float(null))
    lr = max(2.0 * (_loglik(mech.matrix, c, pi) - _loglik(mech.matrix, c, constrained)), 0.0)
    return ShareTest(share=mech.inputs[s], null=float(null), wald_statistic=wald, wald_pvalue=wald_p,
                     lr_statistic=float(lr), lr_pvalue=float(chi2_sf(lr, 1)), constrained=constrained,
                     converged=converged)
