"""Answer sets chosen for the structure: the columns of a variance design assigned to distinct admissible answer
sets so that the lying bound, the don't-know mass and the focal sets hold (docs/theory.md, section 5.8).

A design's information depends on its columns only; which answer set a column reports enters its lie masses (an
input lies on a set without its true answer), its don't-know mass (the whole frame) and the focal-set restriction.
A column may also be split into proportional parts reported as different sets: proportional columns carry the
information of their sum (``u u' / (pi . u)`` is homogeneous of degree 1). Columns of different directions must
answer different sets (merging them would lose information). Choosing the parts is a small mixed-integer linear
program, solved exactly by HiGHS: binaries ``z[j, A]`` (column ``j`` has a part on set ``A``), fractions
``f[j, A] <= z[j, A]`` summing to 1 per column, at most one column per set; with a lying bound the first feasible
assignment is taken, without one the largest lie mass is minimised.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from .problem import DesignProblem

__all__ = ["MAX_ASSIGNMENT_VARIABLES", "assign_answer_sets", "assigned_seeds"]

#: Largest number of (column, set) pairs the assignment program is built for.
MAX_ASSIGNMENT_VARIABLES = 200_000
#: The assignment program's relative gap on the largest lie mass (no lying bound), its branch-and-bound nodes
#: (deterministic: a feasible assignment found within them is used) and a time limit as a last resort.
MIP_GAP = 1e-2
MIP_NODES = 5000
MIP_SECONDS = 30.0
#: Parts below this fraction of a column are dropped (the rest of the column's parts renormalised).
MIN_PART = 1e-9
#: The lying bound and the don't-know cap are met with this much room (relative), for the exact certificate of the
#: cleaned design.
LIE_ROOM = 1e-9


def assign_answer_sets(problem: DesignProblem, columns: NDArray[np.float64]
                       ) -> tuple[NDArray[np.float64], NDArray[np.int64], float] | None:
    """Assign the columns of a design to distinct admissible answer sets meeting the problem's structure.

    Parameters
    ----------
    problem : DesignProblem
        Its ``lie_max``, ``dont_know`` / ``dont_know_max`` and ``focal_sets`` are the structure to meet.
    columns : (k, r) ndarray
        The columns (masses per input; rows summing to 1), pairwise not proportional.

    Returns
    -------
    (columns, sets, lie) or None
        The parts (``(k, r')``, each a fraction of one of the given columns), the answer set of each (distinct
        bitmasks of the frame) and the largest lie mass; None when no assignment meets the structure (or the
        program would exceed :data:`MAX_ASSIGNMENT_VARIABLES` pairs).

    Examples
    --------
    >>> import numpy as np
    >>> from designer.optimal import DesignProblem
    >>> from designer.optimal.answer_sets import assign_answer_sets
    >>> e = np.exp(2.0)
    >>> krr = (np.eye(3) * (e - 1) + 1) / (e + 2)
    >>> p = DesignProblem(inputs=["a", "b", "c"], prior=[0.5, 0.3, 0.2], epsilon=2.0, lie_max=0.15)
    >>> parts, sets, lie = assign_answer_sets(p, krr)
    >>> bool(lie <= 0.15), len(set(sets.tolist())) == len(sets)
    (True, True)
    """
    from scipy.optimize import Bounds, LinearConstraint, milp

    k, r = columns.shape
    l = problem.l
    full = (1 << l) - 1
    sets = np.asarray(problem.family(), dtype=np.int64)
    exact_dk = problem.dont_know is not None and problem.dont_know > 0
    no_dk = problem.dont_know == 0.0 or problem.dont_know_max == 0.0
    constant = np.ptp(columns, axis=0) <= 1e-12 * np.max(columns, axis=0)
    if no_dk:
        sets = sets[sets != full]
    if sets.size * r > MAX_ASSIGNMENT_VARIABLES or sets.size == 0:
        return None
    n_sets = sets.size
    truth = problem.truth()
    # lie[x, A]: input x's true answer is not in set A (an input without a label lies nowhere it can be counted)
    lies = np.array([[(t >= 0) and not (int(A) >> int(t)) & 1 for A in sets] for t in truth], dtype=float)
    nv = 2 * r * n_sets + 1  # f (r x n_sets), z (r x n_sets), t
    F = np.arange(r * n_sets).reshape(r, n_sets)
    Z = F + r * n_sets
    T = nv - 1
    rows: list[sp.spmatrix] = []
    lo: list[NDArray[np.float64]] = []
    hi: list[NDArray[np.float64]] = []

    def add(a: sp.spmatrix, low: NDArray[np.float64] | float, high: NDArray[np.float64] | float) -> None:
        rows.append(sp.csr_matrix(a))
        lo.append(np.broadcast_to(np.asarray(low, dtype=float), (a.shape[0],)).copy())
        hi.append(np.broadcast_to(np.asarray(high, dtype=float), (a.shape[0],)).copy())

    # each column split into parts summing to 1
    a = sp.csr_matrix((np.ones(r * n_sets), (np.repeat(np.arange(r), n_sets), F.ravel())), shape=(r, nv))
    add(a, 1.0, 1.0)
    # a part only on a set the column holds: f - z <= 0
    idx = np.arange(r * n_sets)
    a = sp.csr_matrix((np.r_[np.ones(idx.size), -np.ones(idx.size)], (np.r_[idx, idx], np.r_[F.ravel(), Z.ravel()])),
                      shape=(idx.size, nv))
    add(a, -np.inf, 0.0)
    # each set answered by one column at most
    a = sp.csr_matrix((np.ones(r * n_sets), (np.tile(np.arange(n_sets), r), Z.ravel())), shape=(n_sets, nv))
    add(a, -np.inf, 1.0)
    # the lie masses: sum_{j, A} f[j, A] m_j(x) lie[x, A] - t <= 0
    coef = columns[:, :, None] * lies[:, None, :]  # (k, r, n_sets)
    a = sp.hstack([sp.csr_matrix(coef.reshape(k, -1)), sp.csr_matrix((k, r * n_sets)), sp.csr_matrix(-np.ones((k, 1)))])
    add(a, -np.inf, 0.0)
    frame_at = np.flatnonzero(sets == full)
    upper = np.ones(nv)
    upper[T] = np.inf
    lower = np.zeros(nv)
    if frame_at.size:
        fa = int(frame_at[0])
        if exact_dk:  # the fixed don't-know mass is the constant column's, and only it answers the whole frame
            if not np.any(constant):
                return None
            upper[F[~constant, fa]] = 0.0
            upper[Z[~constant, fa]] = 0.0
            lower[F[constant, fa]] = 1.0
        elif problem.dont_know_max is not None:
            a = sp.csr_matrix((columns.ravel(), (np.repeat(np.arange(k), r), np.tile(F[:, fa], k))), shape=(k, nv))
            add(a, -np.inf, float(problem.dont_know_max) * (1.0 - LIE_ROOM))
    elif exact_dk:
        return None
    if problem.lie_max is not None:
        upper[T] = float(problem.lie_max) * (1.0 - LIE_ROOM)
    cost = np.zeros(nv)
    cost[T] = 0.0 if problem.lie_max is not None else 1.0  # within the bound any assignment serves (feasibility)
    integrality = np.zeros(nv)
    integrality[Z.ravel()] = 1
    table = LinearConstraint(sp.vstack(rows, format="csr"), np.concatenate(lo), np.concatenate(hi))
    out = milp(cost, constraints=table, integrality=integrality, bounds=Bounds(lower, upper),
               options={"node_limit": MIP_NODES, "time_limit": MIP_SECONDS, "mip_rel_gap": MIP_GAP})
    if out.x is None or out.status not in (0, 1):
        return None
    f = np.clip(out.x[F.ravel()].reshape(r, n_sets), 0.0, 1.0)
    f[f < MIN_PART] = 0.0
    f /= f.sum(axis=1, keepdims=True)
    j, s = np.nonzero(f)
    parts = columns[:, j] * f[j, s][None, :]
    lie = float(np.max(np.sum(parts * lies[:, s], axis=1), initial=0.0))
    if problem.lie_max is not None and lie > problem.lie_max:
        return None
    if problem.dont_know_max is not None and np.any(
            np.sum(parts[:, sets[s] == full], axis=1) > problem.dont_know_max):
        return None
    return parts, sets[s], lie


def assigned_seeds(problem: DesignProblem) -> list[tuple[str, NDArray[np.float64], NDArray[np.int64], float]]:
    """k-RR and subset selection (every subset size whose columns the family can hold), each with its columns
    assigned to the structure by :func:`assign_answer_sets`: ``(name, columns, sets, objective)`` for those that
    meet it (finite objective only).

    Examples
    --------
    >>> from designer.optimal import DesignProblem
    >>> from designer.optimal.answer_sets import assigned_seeds
    >>> p = DesignProblem(inputs=["a", "b", "c", "d"], prior=[0.4, 0.3, 0.2, 0.1], epsilon=1.0,
    ...                   objective="variance", lie_max=0.5)
    >>> [name for name, *_ in assigned_seeds(p)][:1]
    ['k-RR']
    """
    import math
    from itertools import combinations

    from .share_variance import scenario_values

    k = problem.k
    e = problem.budget.lp_factor
    family = problem.family().size
    out = []
    for d in range(1, k):
        count = math.comb(k, d)
        if count > family or count > 64:
            continue
        subsets = list(combinations(range(k), d))
        m = np.array([[e if x in s else 1.0 for s in subsets] for x in range(k)])
        m /= m.sum(axis=1, keepdims=True)
        assigned = assign_answer_sets(problem, m)
        if assigned is None:
            continue
        parts, sets, _ = assigned
        value = float(np.max(scenario_values(problem, parts)))
        if math.isfinite(value):
            out.append(("k-RR" if d == 1 else f"subset selection (d = {d})", parts, sets, value))
    return out

