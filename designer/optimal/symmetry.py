"""Problems invariant under relabelling the answers, and orbit averages (docs/theory.md, section 5.3).

A problem is *symmetric* when permuting the frame's labels (and the inputs with them) maps it onto
itself: inputs equal to the frame's labels, a uniform prior, and an objective and structure that single
out no answer. Such a problem has an optimum whose masses depend only on the size of the answered set
and on whether it holds the true answer; :func:`orbit_average` turns any optimum into that one.
"""

from __future__ import annotations

import functools

import numpy as np
from numpy.typing import NDArray

from .. import setfunctions as sf
from ..mechanism import Mechanism
from ..vocabulary import Objective
from .problem import DesignProblem

__all__ = ["is_symmetric", "orbit_average"]

#: A gain table is checked for invariance up to this frame size (it has 2**l columns).
MAX_GAIN_CHECK = 16


def _generators(k: int) -> list[NDArray[np.int64]]:
    """Generators of the symmetric group: a transposition and a k-cycle."""
    gens = [np.r_[1, 0, np.arange(2, k)].astype(np.int64)]
    if k > 2:
        gens.append(np.r_[np.arange(1, k), 0].astype(np.int64))
    return gens


def _permute_masks(masks: NDArray[np.int64], perm: NDArray[np.int64]) -> NDArray[np.int64]:
    out = np.zeros_like(masks)
    for i, target in enumerate(perm):
        out |= ((masks >> i) & 1) << int(target)
    return out


@functools.lru_cache(maxsize=256)  # problems are immutable and hashed by value
def is_symmetric(problem: DesignProblem) -> bool:
    """Whether relabelling answers (with inputs alike) leaves the problem unchanged.

    Needs the inputs to be exactly the frame's labels, a uniform prior, and objective and structure
    invariant under the transposition and the cycle that generate all permutations (docs/theory.md,
    5.3). Cached per problem (equal problems share the answer).

    Examples
    --------
    Inputs equal to the frame's labels at a uniform prior are symmetric; a skewed prior singles out an answer:

    >>> import designer
    >>> from designer.optimal import is_symmetric
    >>> is_symmetric(designer.DesignProblem(inputs=("a", "b", "c"), epsilon=1.0))
    True
    >>> is_symmetric(designer.DesignProblem(inputs=("a", "b", "c"), epsilon=1.0, prior=(0.5, 0.25, 0.25)))
    False
    """
    k, l = problem.k, problem.l
    if k != l or set(problem.inputs) != set(problem.frame) or k < 2:
        return False
    if np.ptp(problem.prior) > 1e-12:
        return False
    if problem.objective.variance and (
            problem.contrasts is not None or problem.priors is not None
            or (problem.variance_weights is not None and np.ptp(problem.variance_weights) > 0)):
        return False  # targets or scenarios that single out some answers
    truth = problem.truth()  # frame index of input x
    inv = np.argsort(truth)  # input of frame index y
    family = problem.family() if problem.focal_sets is not None else None
    for perm in _generators(l):  # perm acts on frame indices; inputs follow by labels
        if family is not None and set(_permute_masks(family, perm).tolist()) != set(family.tolist()):
            return False
        xperm = inv[perm[truth]]  # input x -> input with label perm(y(x))
        if problem.objective is Objective.GAIN:
            if l > MAX_GAIN_CHECK:
                return False
            g = problem.gain
            assert g is not None
            all_sets = np.arange(1 << l, dtype=np.int64)
            if not np.allclose(g[xperm][:, _permute_masks(all_sets, perm)], g, rtol=0, atol=1e-12):
                return False
        if problem.objective.utility:
            u = problem.utility
            assert u is not None
            if not np.allclose(u[np.ix_(xperm, perm)], u, rtol=0, atol=1e-12):
                return False
    return True


def orbit_average(mech: Mechanism, truth: NDArray[np.int64]) -> Mechanism:
    """Average a mechanism over all relabellings of the answers (inputs relabelled alike).

    The mass of ``(x, E)`` becomes the mean over its orbit, which is fixed by ``|E|`` and whether
    ``y(x)`` lies in ``E``. Same objective for invariant linear and chi2 objectives, same budget
    (the losses are maxima of quasi-convex ratios over a set that permutations map onto itself).

    Parameters
    ----------
    mech : Mechanism
        ``k`` inputs on a frame of ``l = k`` answers.
    truth : (k,) int ndarray
        Frame index of each input's true answer.

    Examples
    --------
    Swapping yes and no (with the inputs alike) averages a row's masses on ``{yes}`` and ``{no}`` by whether they hold
    the truth:

    >>> import numpy as np
    >>> import designer
    >>> from designer.optimal import orbit_average
    >>> skewed = designer.Mechanism(np.array([[0, 0.7, 0.1, 0.2], [0, 0.2, 0.6, 0.2]]), inputs=("yes", "no"))
    >>> orbit_average(skewed, np.array([0, 1])).matrix.round(12).tolist()
    [[0.65, 0.15, 0.2], [0.15, 0.65, 0.2]]
    """
    l = mech.l
    focal = np.asarray(mech.focal, dtype=np.int64)
    dense = np.zeros((mech.k, 1 << l))
    dense[:, focal] = mech.matrix
    sets = np.arange(1 << l, dtype=np.int64)
    size = sf.popcount(sets)
    inside = (sets[None, :] >> truth[:, None]) & 1  # (k, 2**l)
    key = size[None, :] * 2 + inside  # orbit id of (x, E)
    sums = np.bincount(key.ravel(), weights=dense.ravel(), minlength=2 * (l + 1) + 2)
    counts = np.bincount(key.ravel(), minlength=2 * (l + 1) + 2)
    avg = np.where(counts > 0, sums / np.maximum(counts, 1), 0.0)[key]
    avg[:, 0] = 0.0
    used = np.flatnonzero(avg.any(axis=0))
    return Mechanism(avg[:, used], inputs=mech.inputs, frame=mech.frame, focal=used.tolist())
