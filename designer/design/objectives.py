"""What a design maximises, evaluated on a mechanism (docs/theory.md, section 5).

The linear objectives are ``sum_x pi_x sum_E G[x, E] M[x, E]`` for a table ``G`` (:func:`objective_matrix`);
``chi2`` is the chi-square information of the answers, and under WLDP (precise answers) that of the least
informative precise mechanism in the credal sets.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from .. import setfunctions as sf
from ..estimation import chi2_information
from ..mechanism import Mechanism
from ..vocabulary import Objective, Semantics
from .problem import DesignProblem

__all__ = ["objective_matrix", "objective_value", "walley_worst_binary"]


def objective_matrix(problem: DesignProblem, family: NDArray[np.int64]) -> NDArray[np.float64]:
    """The prior-weighted table ``pi_x G[x, E]`` of a linear objective on the sets ``family``.

    Parameters
    ----------
    problem : DesignProblem
        With a linear objective (not ``chi2``).
    family : (F,) int ndarray
        Bitmasks of the sets (columns).

    Returns
    -------
    (k, F) ndarray
    """
    pi = problem.prior[:, None]
    objective = problem.objective
    if objective is Objective.TRUTHFUL:
        return pi * (family[None, :] == (1 << problem.truth())[:, None])
    if objective is Objective.GAIN:
        assert problem.gain is not None
        return pi * problem.gain[:, family]
    if objective.utility:
        assert problem.utility is not None
        members = sf.members(family, problem.l)  # (F, l)
        u = problem.utility[:, None, :]  # (k, 1, l)
        if objective is Objective.WORST_CASE_UTILITY:
            vals = np.where(members[None], u, np.inf).min(axis=2)
        else:
            vals = np.where(members[None], u, -np.inf).max(axis=2)
        return pi * vals
    raise ValueError(f"objective {objective.value!r} is not linear")


def walley_worst_binary(mech: Mechanism) -> Mechanism:
    """The least informative precise mechanism in the credal sets of a binary mechanism (``lambda = 0``).

    Each row's don't-know mass goes to the *other* answer: the worst-case Fisher information ``nu_W`` is
    attained there (docs/theory.md, section 4; Ex 3.7).
    """
    full = (1 << mech.l) - 1
    focal = [int(m) for m in mech.focal]
    out = np.zeros((2, 2))
    for x in range(2):
        for j, m in enumerate(focal):
            v = mech.matrix[x, j]
            if m == full:
                out[x, 1 - x] += v  # frame index of the other input's answer (inputs == frame, k = 2)
            else:
                out[x, m.bit_length() - 1] += v
    return Mechanism(out, inputs=mech.inputs, frame=mech.frame, focal=[1, 2])


def objective_value(problem: DesignProblem, mech: Mechanism) -> float:
    """The problem's objective evaluated on a mechanism.

    ``chi2`` is the chi-square information of the set-valued answers (SLDP), and under WLDP of the least
    informative precise mechanism in the credal sets (two inputs: :func:`walley_worst_binary`).
    """
    if problem.objective is Objective.CHI2:
        if problem.semantics is not Semantics.SLDP and not mech.is_bayesian and mech.k == 2 and mech.l == 2:
            return chi2_information(walley_worst_binary(mech), problem.prior)
        return chi2_information(mech, problem.prior)
    g = objective_matrix(problem, np.asarray(mech.focal, dtype=np.int64))
    return float(np.sum(g * mech.matrix))
