"""sdcMicro's invariant PRAM beside designer's invariant design at the same privacy loss (docs/theory.md
section 12.3).

sdcMicro's ``pram`` (R) builds its transition matrix from a minimum diagonal ``pd`` and an amount ``alpha``: a
matrix ``P`` with diagonal ``d_i`` (drawn uniformly in ``[pd, 1]``) and ``(1 - d_i) / (L - 1)`` elsewhere in row
``i``; the backward matrix ``Q[k, j] = P[j, k] p_j / sum_i p_i P[i, k]`` for the file's distribution ``p``;
``R = P Q``, which keeps ``p``; and ``alpha R + (1 - alpha) I``. It states no privacy loss. Here the same
construction (with every ``d_i = pd``, the draw that perturbs most, or given draws) is audited for its loss, and
designer's invariant design at exactly that loss is set beside it: the share of records released unchanged and
the variance the randomization adds to the released shares.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..mechanism import Mechanism
from ..privacy import eps_shafer
from .problem import DesignProblem

__all__ = ["PramComparison", "compare_with_sdcmicro", "released_share_variance", "sdcmicro_invariant_pram"]


def sdcmicro_invariant_pram(prior: Sequence[float] | NDArray[np.float64], pd: float = 0.8, alpha: float = 0.5,
                            diagonal: Sequence[float] | None = None) -> NDArray[np.float64]:
    """sdcMicro's invariant transition matrix (``(L, L)``, rows the true category) for the distribution
    ``prior``, with the diagonal of its first matrix ``diagonal`` (default every entry ``pd``: sdcMicro draws
    them uniformly in ``[pd, 1]``)."""
    p = np.asarray(prior, dtype=np.float64)
    size = p.size
    d = np.full(size, pd) if diagonal is None else np.asarray(diagonal, dtype=np.float64)
    first = np.repeat(((1 - d) / (size - 1))[:, None], size, axis=1)
    np.fill_diagonal(first, d)
    backward = (first * p[:, None]).T / (p @ first)[:, None]  # Q[k, j] = P[j, k] p_j / sum_i p_i P[i, k]
    return alpha * (first @ backward) + (1 - alpha) * np.eye(size)


def released_share_variance(matrix: NDArray[np.float64], prior: Sequence[float] | NDArray[np.float64]) -> float:
    """Per record, the variance the randomization adds to the released shares, summed over the categories:
    ``sum_y sum_x pi_x P[x, y] (1 - P[x, y])`` (given the true file, each record's released category is an
    independent draw from its row)."""
    p = np.asarray(prior, dtype=np.float64)
    return float(np.sum(p[:, None] * matrix * (1 - matrix)))


@dataclass(frozen=True)
class PramComparison:
    """sdcMicro's invariant PRAM and designer's invariant design at the same loss, for one distribution.

    Attributes
    ----------
    prior : tuple of float
    epsilon : float
        The privacy loss of sdcMicro's matrix (nats; Def 3.1 with singleton answers: local differential privacy).
    sdcmicro, designer : ndarray
        The two ``(L, L)`` matrices.
    unchanged_sdcmicro, unchanged_designer : float
        Share of records released unchanged, ``sum_x pi_x P[x, x]``.
    variance_sdcmicro, variance_designer : float
        :func:`released_share_variance` of each.
    """

    prior: tuple[float, ...]
    epsilon: float
    sdcmicro: NDArray[np.float64]
    designer: NDArray[np.float64]
    unchanged_sdcmicro: float
    unchanged_designer: float
    variance_sdcmicro: float
    variance_designer: float


def compare_with_sdcmicro(prior: Sequence[float], pd: float = 0.8, alpha: float = 0.5) -> PramComparison:
    """Audit sdcMicro's invariant PRAM for ``prior`` (:func:`sdcmicro_invariant_pram`) and design the invariant
    mechanism at its loss (objective ``truthful``: records released unchanged)."""
    from .invariant import design_invariant

    p = np.asarray(prior, dtype=np.float64)
    labels = tuple(f"c{i + 1}" for i in range(p.size))
    theirs = sdcmicro_invariant_pram(p, pd, alpha)
    eps = eps_shafer(Mechanism(theirs, inputs=labels, frame=labels, focal=[1 << j for j in range(p.size)]))
    ours = design_invariant(DesignProblem(inputs=labels, prior=p, epsilon=eps, invariant=True))
    assert ours.mechanism is not None
    matrix = ours.mechanism.matrix
    return PramComparison(prior=tuple(float(v) for v in p), epsilon=eps, sdcmicro=theirs, designer=matrix,
                          unchanged_sdcmicro=float(p @ np.diag(theirs)), unchanged_designer=float(p @ np.diag(matrix)),
                          variance_sdcmicro=released_share_variance(theirs, p),
                          variance_designer=released_share_variance(matrix, p))
