"""Problems invariant under relabelling the answers, and orbit averages (docs/theory.md, section 5.3).

A problem is *symmetric* when permuting the frame's labels (and the inputs with them) maps it onto
itself: inputs equal to the frame's labels, a uniform prior, and an objective and structure that single
out no answer. Such a problem has an optimum whose masses depend only on the size of the answered set
and on whether it holds the true answer; :func:`orbit_average` turns any optimum into that one.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from .. import setfunctions as sf
from ..mechanism import Mechanism
from .problem import is_symmetric

__all__ = ["is_symmetric", "orbit_average"]

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
