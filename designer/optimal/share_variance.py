"""The variance objectives evaluated: the variances of the estimated shares and contrasts of a mechanism, per
respondent at a prior, and the objective as the largest of its pieces (docs/theory.md, section 5.7).

Per respondent the maximum-likelihood estimate of the shares from a mechanism's answers has the asymptotic
covariance given by the Fisher information on the simplex (Remark 3.8); :func:`target_variances` reads it in the
simplex's tangent coordinates, :func:`pieces` writes an objective as the largest of ``tr(R_p' H_p^-1 R_p)``, the
form the program of :mod:`designer.optimal.variance_program` minimises.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..exceptions import InvalidProblemError
from ..mechanism import Mechanism
from ..vocabulary import Objective
from .problem import DesignProblem

__all__ = ["Pieces", "pieces", "scenario_values", "share_covariance", "target_variances", "variance_objective"]


@dataclass(frozen=True)
class Pieces:
    """A variance objective as the largest of pieces ``tr(R_p' F_p^-1 R_p) - c_p``.

    Attributes
    ----------
    priors : (P, k) ndarray
        The scenarios (the problem's prior when it gives none).
    scenario : (N,) int ndarray
        The scenario of each piece.
    R : list of (k - 1, m) ndarray
        ``R_p R_p' = sum_j omega_j (B't_j)(B't_j)'`` over the piece's targets, in tangent coordinates.
    const : (N,) ndarray
        Zeros (tangent coordinates need no correction ``- (t . pi)^2``).
    targets : (m, k) ndarray
        The linear functionals ``t_j`` (rows of the identity for the shares).
    weights : (m,) ndarray
        ``omega_j`` of the mean (``variance``) objective: the weights divided by their sum; for ``max_variance``
        each piece has one target weighted by ``weight / max weight``.
    kind : Objective
    """

    priors: NDArray[np.float64]
    scenario: NDArray[np.int64]
    R: list[NDArray[np.float64]]
    const: NDArray[np.float64]
    targets: NDArray[np.float64]
    weights: NDArray[np.float64]
    kind: Objective


def pieces(problem: DesignProblem) -> Pieces:
    """The pieces of ``problem``'s variance objective (see :class:`Pieces`), in the simplex's tangent coordinates:
    ``Var(t . pi_hat) = (B't)' H^-1 (B't)`` with ``H = B' F B`` and ``B = [I; -1']``, so every ``c_p`` is 0."""
    if not problem.objective.variance:
        raise InvalidProblemError(f"objective '{problem.objective}' is not a variance objective")
    k = problem.k
    priors = problem.prior[None, :] if problem.priors is None else np.asarray(problem.priors)
    if problem.contrasts is not None:
        targets = np.asarray(problem.contrasts, dtype=np.float64)
        raw = np.ones(targets.shape[0])
    else:
        raw = np.ones(k) if problem.variance_weights is None else np.asarray(problem.variance_weights, float)
        keep = raw > 0
        targets, raw = np.eye(k)[keep], raw[keep]
    reduced = targets[:, :-1] - targets[:, -1:]  # B't, one row per target
    scenario: list[int] = []
    R: list[NDArray[np.float64]] = []
    if problem.objective is Objective.VARIANCE:
        omega = raw / raw.sum()
        gram = (reduced.T * omega[None, :]) @ reduced  # sum_j omega_j (B't_j)(B't_j)'
        values, vectors = np.linalg.eigh(gram)
        keep = values > 1e-14 * values.max()
        factor = vectors[:, keep] * np.sqrt(values[keep])[None, :]  # R R' = gram, at most k - 1 columns
        for p in range(len(priors)):
            scenario.append(p)
            R.append(factor)
    else:
        omega = raw / raw.max()
        for p in range(len(priors)):
            for j in range(len(targets)):
                scenario.append(p)
                R.append(np.sqrt(omega[j]) * reduced[j][:, None])
    return Pieces(priors, np.asarray(scenario, dtype=np.int64), R, np.zeros(len(R)), targets, omega,
                  problem.objective)


def share_covariance(matrix: NDArray[np.float64], prior: NDArray[np.float64]
                     ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """The Fisher information on the simplex of a mechanism's answers, in eigen-form.

    With ``B = [I; -1']`` (coordinates ``d`` of ``pi = pi_0 + B d``), the information of ``d`` is
    ``H = B' F B = sum_E (B'm_E)(B'm_E)' / q_E`` (computed from the differences ``B'm_E``, which keeps the
    information of a small budget, about ``eps^2``, clear of the constant part); ``Var(t . pi_hat) =
    (B't)' H^-1 (B't)`` per respondent for ``t`` in its range (Remark 3.8).

    Returns
    -------
    values, vectors : ndarray
        ``H = V diag(values) V'``.
    scale : ndarray
        ``max(values)`` (0-d), the reference for "zero".
    """
    q = prior @ matrix
    used = q > 0
    diff = matrix[:-1, used] - matrix[-1:, used]
    values, vectors = np.linalg.eigh((diff / q[used]) @ diff.T)
    return values, vectors, np.asarray(max(float(values.max(initial=0.0)), 1e-300))


def target_variances(matrix: NDArray[np.float64], prior: NDArray[np.float64], targets: NDArray[np.float64]
                     ) -> NDArray[np.float64]:
    """``Var(t_j . pi_hat)`` per respondent for each row ``t_j`` of ``targets`` (``inf`` when not identified)."""
    values, vectors, scale = share_covariance(matrix, prior)
    reduced = targets[:, :-1] - targets[:, -1:]  # B' t
    coords = reduced @ vectors  # (m, k-1)
    small = values <= 1e-12 * scale
    out = np.sum(np.where(small[None, :], 0.0, coords**2 / np.where(small, 1.0, values)[None, :]), axis=1)
    norms = np.linalg.norm(reduced, axis=1)
    lost = np.any(small[None, :] & (np.abs(coords) > 1e-7 * np.maximum(norms, 1e-300)[:, None]), axis=1)
    return np.where(lost, np.inf, np.clip(out, 0.0, None))


def scenario_values(problem: DesignProblem, matrix: NDArray[np.float64], *, parts: Pieces | None = None
                    ) -> NDArray[np.float64]:
    """The variance objective of a ``(k, F)`` mass matrix at each prior scenario (one value without scenarios):
    the weighted mean (``variance``) or the largest weighted (``max_variance``) target variance. ``parts``:
    ``pieces(problem)``, when the caller evaluates many matrices of one problem."""
    parts = pieces(problem) if parts is None else parts
    out = []
    for pi in parts.priors:
        v = target_variances(matrix, pi, parts.targets)
        if parts.kind is Objective.VARIANCE:
            out.append(float(parts.weights @ v) if np.all(np.isfinite(v[parts.weights > 0])) else math.inf)
        else:
            out.append(float(np.max(parts.weights * v)))
    return np.asarray(out)


def variance_objective(problem: DesignProblem, mech: Mechanism) -> float:
    """The variance objective of ``problem`` evaluated on a mechanism (the worst scenario; ``inf`` when a target
    is not identified). A mechanism of other answer sets is evaluated as it is: its answers are outputs."""
    return float(np.max(scenario_values(problem, np.asarray(mech.matrix, dtype=np.float64))))
