"""The design programs as sparse linear programs (docs/theory.md, section 5.1).

Every program is a :class:`~designer._internal.solvers.LinearProgram` with the mechanism ``M`` (``k x F`` over the
focal family, row-major) as the first ``k F`` variables. Each constraint family is assembled as one
``scipy.sparse`` block by index arithmetic (no loop emitting one constraint per subset, no dense
``2**l x 2**l`` inclusion matrix).

* eps-SLDP (Def 3.1): envelopes ``lo_E <= M[x, E] <= hi_E``, ``hi_E <= e^eps lo_E`` (``2kF + F`` rows).
* eps-WLDP (Def 3.13, Lemma 3.14): ``pl_x(E) <= e^eps bel_x'(E)`` for ``x != x'`` and proper ``E``,
  written ``1 - B[x, Y \\ E] - e^eps B[x', E] <= 0`` with belief variables ``B = Inc M`` where ``Inc``
  is the inclusion of the focal family in the subsets (``3**l`` nonzeros at most).
* The estimation objective is the "staircase" LP (Kairouz, Oh & Viswanath 2016) over columns
  ``s in {1, e^eps}^k`` (:func:`staircase_program`).

The coefficients ``e^eps`` are kept apart (:attr:`DesignProgram.A_ub_exp`), so one built program serves
every budget (:meth:`DesignProgram.at_epsilon`): the infeasibility explanations bisect over epsilon
without rebuilding.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from .. import setfunctions as sf
from .._internal.solvers import LinearProgram, SolverOutcome
from ..budget import Budget
from ..estimation.shares import column_information
from ..exceptions import InvalidProblemError
from .objectives import objective_matrix
from .problem import DesignProblem

__all__ = ["DesignProgram", "Solved", "Staircase", "inclusion", "linear_program", "program_nonzeros",
           "staircase_mechanism", "staircase_program"]

#: Largest input count of the staircase LP (2**k columns).
MAX_STAIRCASE_INPUTS = 20

#: WLDP programs with frames from this size on are solved by row generation (designer.optimal.lazy).
LAZY_MIN_FRAME = 3



@dataclass
class DesignProgram(LinearProgram):
    """A design LP: ``A_ub = A_ub_fixed + e^eps A_ub_exp`` and the map from variables to a mechanism.

    Attributes
    ----------
    k : int
        Inputs (rows of the mechanism part).
    family : (F,) int ndarray
        Bitmasks of the mechanism's columns.
    A_ub_exp : sparse matrix or None
        The pattern multiplied by ``e^eps`` in the inequality rows (None: the program has no such term).
    """

    k: int = 0
    family: NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    A_ub_exp: sp.csr_matrix | None = None
    A_ub_fixed: sp.csr_matrix | None = None
    #: Where the structure's bounds sit: ``{"lie_max": ("ub", rows), ...}``, for :meth:`with_bound`.
    bound_rows: dict[str, tuple[str, slice]] = field(default_factory=dict)
    #: Row generation's program: the events whose beliefs it defines, in the order of their variables and of
    #: their definition rows (the last equality rows, ``k`` per event); None for other programs.
    events: NDArray[np.int64] | None = None
    #: First of the Shafer rows in ``A_ub`` (``M[x, j] <= hi_j`` for every mass, then ``lo_j <= M[x, j]``, then
    #: ``hi_j <= e^eps lo_j`` per column), for the pricing of answer sets (designer.optimal.columns); None without.
    shafer_start: int | None = None

    def mechanism(self, z: NDArray[np.float64]) -> NDArray[np.float64]:
        """The ``(k, F)`` mechanism part of a solution vector."""
        return z[: self.k * self.family.size].reshape(self.k, self.family.size)

    def at_epsilon(self, eps: float) -> DesignProgram:
        """The same program at another budget (only the ``e^eps`` coefficients change)."""
        if self.A_ub_exp is None or self.A_ub_fixed is None:
            return self
        e = Budget(eps).lp_factor
        return replace(self, A_ub=(self.A_ub_fixed + e * self.A_ub_exp).tocsr())

    def with_bound(self, key: str, value: float) -> DesignProgram | None:
        """The same program with the structure bound ``key`` (``dont_know``, ``dont_know_max``,
        ``lie_max``) set to ``value``; None when the program has no such rows."""
        if key not in self.bound_rows:
            return None
        side, rows = self.bound_rows[key]
        if side == "eq":
            b_eq = self.b_eq.copy()
            b_eq[rows] = value
            return replace(self, b_eq=b_eq)
        b_ub = self.b_ub.copy()
        b_ub[rows] = value
        return replace(self, b_ub=b_ub)


def program_nonzeros(problem: DesignProblem) -> int:
    """Estimated constraint nonzeros of the general program of ``problem`` (decided before building it).

    SLDP envelopes: ``6 k F + 2 F``; WLDP: two per pair row (``k (k-1) (2**l - 2)`` rows) plus the belief
    definitions, ``k`` times the inclusion of the focal family in the proper subsets.
    """
    k, l = problem.k, problem.l
    family = problem.family()
    F = family.size
    total = k * F
    if problem.semantics.shafer:
        total += 6 * k * F + 2 * F
    if problem.semantics.walley and l > 1 and problem.objective.linear and l >= LAZY_MIN_FRAME and k > 1:
        # row generation (designer.optimal.lazy): starts with the singletons and their complements, each event's
        # beliefs defined once (a focal set lies within {y}^c unless it holds y), two entries per row
        sizes = np.bitwise_count(family).astype(np.int64)
        within_complements = int(np.sum(l - sizes))
        total += k * (within_complements + F + 2 * l) + 2 * k * (k - 1) * 2 * l
    elif problem.semantics.walley and l > 1:
        proper = (1 << l) - 2
        sizes = np.bitwise_count(family).astype(np.int64)
        inclusion_nnz = int(np.sum(np.left_shift(np.int64(1), l - sizes)))  # supersets of each focal set
        total += 2 * k * (k - 1) * proper + k * (inclusion_nnz + proper)
    return int(total)


def _stack(blocks: list[sp.spmatrix], n: int) -> sp.csr_matrix:
    if not blocks:
        return sp.csr_matrix((0, n))
    return sp.vstack(blocks, format="csr")


def inclusion(family: NDArray[np.int64], l: int, sets: NDArray[np.int64]) -> sp.csr_matrix:
    """Sparse ``Inc[i, j] = [family[j] subset of sets[i]]`` (rows: sets, columns: focal family)."""
    rows, cols = [], []
    chunk = max(1, 4_000_000 // max(1, family.size))
    for start in range(0, sets.size, chunk):
        block = sets[start:start + chunk]
        r, c = np.nonzero((block[:, None] & family[None, :]) == family[None, :])
        rows.append(r + start)
        cols.append(c)
    r = np.concatenate(rows) if rows else np.zeros(0, np.int64)
    c = np.concatenate(cols) if cols else np.zeros(0, np.int64)
    return sp.csr_matrix((np.ones(r.size), (r, c)), shape=(sets.size, family.size))


#: An inequality block: (fixed part, right-hand side, part multiplied by e^eps or None).
UbBlock = tuple[sp.spmatrix, NDArray[np.float64], sp.spmatrix | None]
#: An equality block: (matrix, right-hand side).
EqBlock = tuple[sp.spmatrix, NDArray[np.float64]]


def linear_program(problem: DesignProblem, *, privacy: bool = True) -> DesignProgram:
    """Assemble the LP of a problem with a linear objective.

    Variables: the masses ``M[x, E]`` (row-major, ``k F`` of them), then per semantics the auxiliary ones
    (Shafer: a column's smallest and largest mass; Walley: every input's belief of every proper event).

    Parameters
    ----------
    problem : DesignProblem
    privacy : bool, default True
        Include the privacy constraints (False: only the structure, to diagnose infeasibility).
    """
    k, l = problem.k, problem.l
    family = problem.family()
    nm = k * family.size
    rows = np.repeat(np.arange(k), family.size)  # rows sum to 1
    eq_blocks: list[EqBlock] = [(sp.csr_matrix((np.ones(nm), (rows, np.arange(nm))), shape=(k, nm)), np.ones(k))]
    ub_blocks, structure_eq, bound_rows = _structure_blocks(problem, family)
    eq_blocks += structure_eq
    n = nm
    shafer_start = None
    if privacy and problem.semantics.shafer and k > 1:
        shafer_start = sum(a.shape[0] for a, _, _ in ub_blocks)
        shafer, n = _shafer_blocks(k, family.size, n)
        ub_blocks += shafer
    if privacy and problem.semantics.walley and k > 1 and l > 1:
        walley, define, n = _walley_blocks(k, l, family, n)
        ub_blocks.append(walley)
        eq_blocks.append(define)

    def widen(a: sp.spmatrix) -> sp.csr_matrix:
        a = sp.csr_matrix(a)
        if a.shape[1] < n:
            a = sp.hstack([a, sp.csr_matrix((a.shape[0], n - a.shape[1]))], format="csr")
        return a

    A_fixed = _stack([widen(a) for a, _, _ in ub_blocks], n)
    A_exp = _stack([widen(x if x is not None else sp.csr_matrix(a.shape)) for a, _, x in ub_blocks], n)
    b_ub = np.concatenate([b for _, b, _ in ub_blocks]) if ub_blocks else np.zeros(0)
    A_eq = _stack([widen(a) for a, _ in eq_blocks], n)
    b_eq = np.concatenate([b for _, b in eq_blocks])
    c = np.zeros(n)
    if problem.objective.linear:
        c[:nm] = objective_matrix(problem, family).ravel()
    # Warm starts skip HiGHS's presolve, which this program needs (SLDP k = l = 12, ten budgets: 25 s cold,
    # 29 s warm): the general programs are solved cold.
    program = DesignProgram(c=c, A_ub=A_fixed, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq, lb=np.zeros(n),
                            ub=np.full(n, np.inf), warm_start=False, k=k, family=family,
                            A_ub_exp=A_exp if A_exp.nnz else None, A_ub_fixed=A_fixed, bound_rows=bound_rows,
                            shafer_start=shafer_start)
    return program.at_epsilon(problem.epsilon)


def _structure_blocks(problem: DesignProblem, family: NDArray[np.int64]
                      ) -> tuple[list[UbBlock], list[EqBlock], dict[str, tuple[str, slice]]]:
    """The don't-know (exact or at most) and lying rows over the masses, and where each sits (``bound_rows``:
    name -> (``"eq"`` or ``"ub"``, its rows), for the infeasibility diagnosis)."""
    k, F = problem.k, family.size
    nm = k * F
    full = (1 << problem.l) - 1
    ub_blocks: list[UbBlock] = []
    eq_blocks: list[EqBlock] = []
    bound_rows: dict[str, tuple[str, slice]] = {}
    if problem.dont_know is not None or problem.dont_know_max is not None:
        jy = np.flatnonzero(family == full)
        if jy.size:
            a = sp.csr_matrix((np.ones(k), (np.arange(k), np.arange(k) * F + jy[0])), shape=(k, nm))
            if problem.dont_know is not None:
                bound_rows["dont_know"] = ("eq", slice(k, 2 * k))
                eq_blocks.append((a, np.full(k, problem.dont_know)))
            else:
                bound_rows["dont_know_max"] = ("ub", slice(0, k))
                ub_blocks.append((a, np.full(k, problem.dont_know_max), None))
    if problem.lie_max is not None:
        lies = ((family[None, :] >> problem.truth()[:, None]) & 1) == 0  # (k, F): set without the true answer
        x, j = np.nonzero(lies)
        a = sp.csr_matrix((np.ones(x.size), (x, x * F + j)), shape=(k, nm))
        bound_rows["lie_max"] = ("ub", slice(k * len(ub_blocks), k * len(ub_blocks) + k))
        ub_blocks.append((a, np.full(k, problem.lie_max), None))
    return ub_blocks, eq_blocks, bound_rows


def _shafer_blocks(k: int, F: int, n: int) -> tuple[list[UbBlock], int]:
    """Shafer's rows (Def 3.1) through each column's smallest ``lo_j`` and largest ``hi_j`` mass, two new
    variables per column placed after the first ``n``: ``M[x, j] <= hi_j``, ``lo_j <= M[x, j]``,
    ``hi_j <= e^eps lo_j``. Returns the blocks and the new number of variables."""
    nm = k * F
    lo, hi = n, n + F
    n += 2 * F
    x = np.repeat(np.arange(k), F)
    j = np.tile(np.arange(F), k)
    r = np.arange(nm)
    upper = sp.csr_matrix((np.r_[np.ones(nm), -np.ones(nm)], (np.r_[r, r], np.r_[x * F + j, hi + j])), shape=(nm, n))
    lower = sp.csr_matrix((np.r_[-np.ones(nm), np.ones(nm)], (np.r_[r, r], np.r_[x * F + j, lo + j])), shape=(nm, n))
    jj = np.arange(F)
    ratio = sp.csr_matrix((np.ones(F), (jj, hi + jj)), shape=(F, n))
    ratio_exp = sp.csr_matrix((-np.ones(F), (jj, lo + jj)), shape=(F, n))
    return [(upper, np.zeros(nm), None), (lower, np.zeros(nm), None), (ratio, np.zeros(F), ratio_exp)], n


def _walley_blocks(k: int, l: int, family: NDArray[np.int64], n: int) -> tuple[UbBlock, EqBlock, int]:
    """Walley's rows (Def 3.13, through Lemma 3.14) over beliefs ``B[x, E]`` of every proper event, ``k P``
    new variables after the first ``n`` defined by ``B = Inc M``: ``pl_x(E) = 1 - B[x, E^c] <= e^eps
    B[x2, E]`` for ``x != x2``. Returns the pair rows, the definition and the new number of variables."""
    nm = k * family.size
    full = (1 << l) - 1
    proper = np.arange(1, full, dtype=np.int64)  # proper nonempty subsets E
    P = proper.size
    b0 = n
    n += k * P
    inc = inclusion(family, l, proper)  # (P, F)
    bel_map = sp.kron(sp.eye(k), inc, format="csr")  # (kP, kF): B = Inc M, per input
    define = sp.hstack([-bel_map, sp.csr_matrix((k * P, n - nm - k * P)), sp.eye(k * P)], format="csr")
    xs, x2s = np.nonzero(~np.eye(k, dtype=bool))
    E = np.tile(proper, xs.size)
    X = np.repeat(xs, P)
    X2 = np.repeat(x2s, P)
    comp_col = b0 + X * P + ((full ^ E) - 1)
    e_col = b0 + X2 * P + (E - 1)
    r = np.arange(E.size)
    pairs = sp.csr_matrix((-np.ones(E.size), (r, comp_col)), shape=(E.size, n))
    pairs_exp = sp.csr_matrix((-np.ones(E.size), (r, e_col)), shape=(E.size, n))
    return (pairs, -np.ones(E.size), pairs_exp), (define, np.zeros(k * P)), n


# ---------------------------------------------------------------------------- staircase (chi2)
def staircase_patterns(k: int) -> NDArray[np.int64]:
    """Bit patterns ``s`` of the non-constant staircase columns: bit ``x`` set means entry ``e^eps``."""
    return np.arange(1, (1 << k) - 1, dtype=np.int64)


@dataclass
class Staircase:
    """The staircase LP and how its columns map to focal sets."""

    lp: DesignProgram
    patterns: NDArray[np.int64]
    sets: NDArray[np.int64]
    values: NDArray[np.float64]  # (k, S): column entries 1 or e^eps
    constant: bool  # last variable is the constant ("don't know") column


def staircase_program(problem: DesignProblem) -> Staircase:
    """The estimation-optimal SLDP program (docs/theory.md section 5): columns ``s in {1, e^eps}^k``.

    Column ``s`` is reported as the focal set ``T(s) = {y(x) : s_x = e^eps}``; the constant column is
    the whole frame ("don't know"), with zero information. Maximise ``sum_s mu(s) theta_s`` subject to
    ``sum_s s theta_s + t 1 = 1`` (rows), the don't-know mass ``t``, the lying bound and the focal family.
    """
    k, l = problem.k, problem.l
    if k > MAX_STAIRCASE_INPUTS:
        raise InvalidProblemError(
            f"the staircase LP has 2**{k} columns; k = {k} is above its limit of {MAX_STAIRCASE_INPUTS}"
        )
    truth = problem.truth()
    if np.any(truth < 0):
        raise InvalidProblemError(
            f"objective 'chi2' reports sets of true answers; inputs {problem.missing_truth()} have no frame "
            "label of the same name"
        )
    full = (1 << l) - 1
    patterns = staircase_patterns(k)
    bits = sf.members(patterns, k).T.astype(np.int64)  # (k, S)
    sets = (bits * (1 << truth)[:, None]).sum(axis=0).astype(np.int64)
    allowed = set(problem.family().tolist())
    keep = np.array([s in allowed for s in sets.tolist()], dtype=bool)
    patterns, sets, bits = patterns[keep], sets[keep], bits[:, keep]
    if patterns.size == 0:  # only the whole frame (or sets no pattern reports): every design is constant
        raise InvalidProblemError(
            f"'{problem.name or 'the problem'}': no allowed answer set separates any two inputs (the focal sets leave "
            f"only the whole frame), so every design answers alike whatever the truth and objective "
            f"'{problem.objective}' is 0; allow more answer sets (structure.focal_sets)")
    e = problem.budget.lp_factor
    values = np.where(bits == 1, e, 1.0)
    S = patterns.size
    constant = full in allowed and (problem.dont_know is not None or problem.dont_know_max is not None
                                    or problem.lie_max is not None)
    n = S + (1 if constant else 0)
    c = np.zeros(n)
    c[:S] = column_information(values, problem.prior)
    eq_rows = [sp.csr_matrix(np.hstack([values, np.ones((k, 1))]) if constant else values)]
    b_eq = [np.ones(k)]
    ub_rows: list[sp.spmatrix] = []
    b_ub: list[NDArray[np.float64]] = []
    if constant:
        t = sp.csr_matrix(([1.0], ([0], [S])), shape=(1, n))
        if problem.dont_know is not None:
            eq_rows.append(t)
            b_eq.append(np.array([problem.dont_know]))
        elif problem.dont_know_max is not None:
            ub_rows.append(t)
            b_ub.append(np.array([problem.dont_know_max]))
    elif problem.dont_know:
        raise InvalidProblemError("dont_know > 0 needs the whole frame among the focal sets")
    if problem.lie_max is not None:
        lie = np.where(bits == 0, 1.0, 0.0)  # entry 1 on inputs whose answer is outside T(s)
        ub_rows.append(sp.csr_matrix(np.hstack([lie, np.zeros((k, n - S))])))
        b_ub.append(np.full(k, problem.lie_max))
    lp = DesignProgram(
        c=c,
        A_ub=_stack(ub_rows, n),
        b_ub=np.concatenate(b_ub) if b_ub else np.zeros(0),
        A_eq=sp.vstack(eq_rows, format="csr"),
        b_eq=np.concatenate(b_eq),
        lb=np.zeros(n),
        ub=np.full(n, np.inf),
        k=k,
        family=sets,
    )
    return Staircase(lp, patterns, sets, values, constant)


def staircase_mechanism(st: Staircase, z: NDArray[np.float64], l: int) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """Mechanism columns ``(k, F)`` and their focal masks from a staircase solution."""
    S = st.patterns.size
    theta = np.clip(z[:S], 0.0, None)
    used = np.flatnonzero(theta > 0)  # columns of zero weight are not answers (2**k - 2 of them at most)
    cols = st.values[:, used] * theta[None, used]
    masks = st.sets[used]
    if st.constant:
        cols = np.hstack([cols, np.full((st.values.shape[0], 1), max(0.0, float(z[S])))])
        masks = np.r_[masks, (1 << l) - 1]
    return cols, masks


@dataclass(frozen=True)
class Solved:
    """A solved design program: the solver's outcome, the mechanism's columns and their focal sets.

    ``cols`` is None when the solver returned no point (see ``outcome.status``); ``path`` names the
    program (``"linear program"``, ``"staircase LP"``, ...); ``bound`` is a proved bound on the optimum of the
    problem's whole class where the program gives one (a lower bound for a minimised objective; None elsewhere:
    a linear program's optimum is its own certificate).
    """

    outcome: SolverOutcome
    cols: NDArray[np.float64] | None
    masks: NDArray[Any]
    path: str
    bound: float | None = None
