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
        Whether the constrained maximum was reached (its KKT conditions checked at ``constrained``).

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
    """The shares maximising ``sum_E c_E log (pi m)_E`` over the simplex with ``pi[share] = null``, ``m`` ``(k, F)``.
    Returns ``(pi, converged)``.

    The other shares are ``(1 - null) sigma`` with ``sigma`` on the simplex of the other inputs, and
    ``pi m = sigma (null m[share] + (1 - null) m[others])`` since ``sum sigma = 1``: the constrained maximum is the
    unconstrained maximum of the mechanism whose rows are ``null m[share] + (1 - null) m[x]`` (each still a
    distribution over the answers), found by the same fit as the estimate
    (:func:`~designer.estimation.mle.mle_newton`). ``converged`` is that fit's verdict, its KKT conditions and
    log-likelihood gap checked at the returned point (docs/theory.md section 8.4); ``start`` only changes the
    work. Some ``sigma`` may be 0 (the constrained maximum on the simplex's edge). Where an observed answer has
    probability 0 under every such ``pi`` the likelihood is 0 there: the returned point then has log-likelihood
    ``-inf`` and ``converged`` is True (every point is a maximum).

    Examples
    --------
    >>> from designer.estimation.share_tests import constrained_shares
    >>> import numpy as np
    >>> warner = np.array([[0.75, 0.25], [0.25, 0.75]])  # Warner's design, p = 0.75
    >>> pi, converged = constrained_shares(warner, np.array([60.0, 40.0]), 0, 0.5)
    >>> pi.tolist(), converged
    ([0.5, 0.5], True)
    """
    from .mle import mle_newton

    c = np.asarray(counts, dtype=np.float64)
    k = m.shape[0]
    others = [j for j in range(k) if j != share]
    pi = np.zeros(k)
    pi[share] = null
    if k == 1 or null >= 1.0:
        return pi, True
    if len(others) == 1:
        pi[others[0]] = 1.0 - null
        return pi, True
    reduced = null * m[share][None, :] + (1.0 - null) * m[others]
    used = c > 0
    if np.any(reduced[:, used].max(axis=0) <= 0):  # an observed answer impossible whatever the others are
        pi[others] = (1.0 - null) / len(others)
        return pi, True
    first = None
    if start is not None and float(np.sum(np.asarray(start)[others])) > 0:
        first = np.asarray(start, dtype=np.float64)[others]
    sigma, _, converged = mle_newton(reduced, c, start=first)
    pi[others] = (1.0 - null) * sigma
    return pi, bool(converged)


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
