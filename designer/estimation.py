"""Estimation of the input distribution from set-valued answers (Remark 3.8; DESIGN.md 7).

Under Shafer's semantics the analyst sees the focal set itself, so each focal set is an output with
probability ``pi . m(E)``; the Fisher information of the prior ``pi`` (on the simplex) is
``I = sum_E m(E) m(E)^T / (pi . m(E))`` and the asymptotic covariance of the MLE is its inverse on the
tangent space ``{d : sum d = 0}``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from .mechanism import Mechanism

__all__ = ["chi2_information", "estimator_variance", "fisher_information"]


def _prior(mech: Mechanism, prior: Sequence[float] | NDArray[np.float64] | None) -> NDArray[np.float64]:
    if prior is None:
        return np.full(mech.k, 1.0 / mech.k)
    pi = np.asarray(prior, dtype=np.float64)
    if pi.shape != (mech.k,) or not np.all(np.isfinite(pi)) or np.any(pi < 0) or abs(pi.sum() - 1) > 1e-9:
        raise ValueError(f"prior must be {mech.k} non-negative numbers summing to 1, got {list(np.ravel(pi))}")
    return pi


def fisher_information(mech: Mechanism, prior: Sequence[float] | None = None) -> NDArray[np.float64]:
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


def chi2_information(mech: Mechanism, prior: Sequence[float] | None = None) -> float:
    """Chi-square information ``sum_E mu(m(E))``, ``mu(v) = sum_x pi_x (v_x - pi.v)^2 / (pi.v)``.

    The estimation objective of the design engine (DESIGN.md 5, "staircase" LP).
    """
    pi = _prior(mech, prior)
    cols = mech.matrix
    out = cols.T @ pi
    used = out > 0
    dev = cols[:, used] - out[used]
    return float(np.sum(pi[:, None] * dev**2 / out[used]))


def estimator_variance(
    mech: Mechanism,
    prior: Sequence[float] | None = None,
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
    pi = _prior(mech, prior)
    k = mech.k
    info = fisher_information(mech, pi)
    basis = np.vstack([np.eye(k - 1), -np.ones((1, k - 1))])  # columns e_i - e_k span {sum d = 0}
    reduced = basis.T @ info @ basis
    try:
        if np.linalg.cond(reduced) > 1e14:
            raise np.linalg.LinAlgError
        cov = basis @ np.linalg.inv(reduced) @ basis.T / n
        per_input = np.clip(np.diag(cov), 0.0, None)
    except np.linalg.LinAlgError:
        per_input = np.full(k, np.inf)
    if reduce == "none":
        return per_input
    if reduce == "sum":
        return float(per_input.sum())
    if reduce == "mean":
        return float(per_input.mean())
    raise ValueError(f"reduce must be 'mean', 'sum' or 'none', got {reduce!r}")
