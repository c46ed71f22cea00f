"""The symmetric path: problems invariant under relabelling, solved in size classes (docs/theory.md section 5).

For a uniform prior, inputs equal to the frame's labels and an invariant objective and structure, an
optimum exists whose mass ``M[x, E]`` depends only on ``s = |E|`` and on whether ``y(x)`` is in ``E``.
Its variables are the class totals of one row:

* ``A_s``: mass on all size-``s`` sets containing the true answer (``C(k-1, s-1)`` sets, ``s = 1..k``);
* ``B_s``: mass on all size-``s`` sets without it (``C(k-1, s)`` sets, ``s = 1..k-1``).

One set then carries ``a_s = A_s / C(k-1, s-1)`` or ``b_s = B_s / C(k-1, s)``, and

* eps-SLDP: ``a_s <= e^eps b_s`` and ``b_s <= e^eps a_s``, i.e. ``A_s (k - s) <= e^eps s B_s`` and
  ``s B_s <= e^eps (k - s) A_s``;
* eps-WLDP: with ``bel_in(t) = sum_s r(t-1, s-1) A_s + r'(t-1, s) B_s`` (set of size ``t`` containing the
  truth), ``bel_out(t) = sum_s r'(t, s) B_s``, ``pl_in(t) = 1 - bel_out(k - t)``, ``pl_out(t) = 1 - bel_in(k - t)``
  and the ratios of binomials ``r(u, v) = C(u, v) / C(k-1, v)`` (:func:`class_coefficients`), the pairs
  ``(in, in)``, ``(in, out)``, ``(out, in)``, ``(out, out)`` of ``pl <= e^eps bel`` for every size ``t``.

That is ``2k`` variables and ``O(k^2)`` nonzeros (sparse, built by blocks of classes): ``k = 1000`` solves in
about a second, ``k = 5000`` in about ten.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray
from scipy.special import gammaln

from .. import setfunctions as sf
from .._internal.solvers import LinearProgram
from ..budget import Budget
from ..exceptions import InvalidProblemError
from ..mechanism import Mechanism
from ..vocabulary import Objective
from .problem import DesignProblem

__all__ = [
    "SymmetricMechanism",
    "best_compact_variance",
    "chi2_class_information",
    "from_solution",
    "symmetric_objective",
    "symmetric_program",
]

#: WLDP coefficients below this are left out of the LP (most of them at large k: ratios of binomials).
DROP_BELOW = 1e-15


def _log_binom(n: ArrayLike, r: ArrayLike) -> NDArray[np.float64]:
    n, r = np.asarray(n, dtype=float), np.asarray(r, dtype=float)
    out = np.full(np.broadcast(n, r).shape, -np.inf)
    ok = (r >= 0) & (r <= n)
    nn, rr = np.broadcast_to(n, out.shape)[ok], np.broadcast_to(r, out.shape)[ok]
    out[ok] = gammaln(nn + 1) - gammaln(rr + 1) - gammaln(nn - rr + 1)
    return out


#: Classes of the WLDP program built at a time (bounds the dense scratch to ``k x CLASS_CHUNK`` floats).
CLASS_CHUNK = 256


class Belief(StrEnum):
    """The four set functions of an invariant mechanism's row, by event size ``t``: the belief or plausibility
    of an event of ``t`` answers that holds (``IN``) or does not hold (``OUT``) the row's true answer."""

    BEL_IN = "bel_in"
    BEL_OUT = "bel_out"
    PL_IN = "pl_in"
    PL_OUT = "pl_out"

    @property
    def complement(self) -> Belief:
        """The belief of the complementary event that gives a plausibility: ``pl_in(t) = total - bel_out(k - t)``
        and ``pl_out(t) = total - bel_in(k - t)``."""
        if self is Belief.PL_IN:
            return Belief.BEL_OUT
        if self is Belief.PL_OUT:
            return Belief.BEL_IN
        raise ValueError(f"{self.value} is a belief; only a plausibility has a complementary belief")


class Coefficients(StrEnum):
    """Which class coefficients :func:`class_coefficients` computes (see there)."""

    IN_A = "in_a"
    IN_B = "in_b"
    OUT = "out"


def class_coefficients(k: int, sizes: ArrayLike, kind: Coefficients) -> NDArray[np.float64]:
    """Share of a class's total that one event of each size ``t = 0..k`` believes: ``(k + 1, len(sizes))``.

    ``kind`` is ``IN_A`` (events holding the true answer, classes ``A_s``: ``C(t-1, s-1) / C(k-1, s-1)``),
    ``IN_B`` (same events, classes ``B_s``: ``C(t-1, s) / C(k-1, s)``) or ``OUT`` (events without it,
    classes ``B_s``: ``C(t, s) / C(k-1, s)``). Computed downwards from the largest event (coefficient 1)
    by one ratio of small integers and one product per step, so every entry carries at most ``2k``
    roundings: relative error at most ``2k u / (1 - 2k u)`` (``u = 2**-53``), plus ``2k 2**-1074`` absolute
    where products run into subnormal numbers (docs/theory.md section 7).
    """
    s = np.asarray(sizes, dtype=np.float64)[None, :]
    top, shift_num, shift_den = {Coefficients.IN_A: (k, 0, 1), Coefficients.IN_B: (k, 1, 1),
                                 Coefficients.OUT: (k - 1, 0, 0)}[kind]
    t = np.arange(top, 0, -1, dtype=np.float64)[:, None]  # the factor at t takes c(t) to c(t - 1)
    den = t - shift_den
    with np.errstate(divide="ignore", invalid="ignore"):
        factors = np.where(den > 0, np.clip(t - shift_num - s, 0.0, None) / den, 0.0)
    chain = np.cumprod(np.vstack([np.ones((1, s.shape[1])), factors]), axis=0)  # c(top), c(top - 1), .., c(0)
    out = np.zeros((k + 1, s.shape[1]))
    out[: top + 1] = chain[::-1]
    return out


@dataclass(frozen=True)
class SymmetricMechanism:
    """A relabelling-invariant mechanism in compact form (docs/theory.md section 5).

    Attributes
    ----------
    labels : tuple of str
        Inputs = frame labels (``k`` of them).
    A, B : (k,) ndarray
        Class totals of one row: ``A[s-1]`` on size-``s`` sets containing the true answer, ``B[s-1]`` on
        those without it (``B[k-1] = 0``: the whole frame contains every answer).
    """

    labels: tuple[str, ...]
    A: NDArray[np.float64]
    B: NDArray[np.float64]

    @property
    def k(self) -> int:
        return len(self.labels)

    def per_set(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Mass of *one* size-``s`` set containing / not containing the true answer (may underflow to 0
        for huge classes; see :meth:`log_per_set`)."""
        la, lb = self.log_per_set()
        return np.exp(la), np.exp(lb)

    def log_per_set(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Natural logs of :meth:`per_set` (``-inf`` for 0)."""
        s = np.arange(1, self.k + 1)
        with np.errstate(divide="ignore"):
            la = np.log(self.A) - _log_binom(self.k - 1, s - 1)
            lb = np.full(self.k, -np.inf)
            lb[:-1] = np.log(self.B[:-1]) - _log_binom(self.k - 1, s[:-1])
        return la, lb

    def eps_shafer(self) -> float:
        """Shafer loss (Def 3.1) from the compact form: ``max |ln(a_s / b_s)|`` over sizes with both kinds."""
        la, lb = self.log_per_set()
        la, lb = la[: self.k - 1], lb[: self.k - 1]
        both_zero = np.isinf(la) & np.isinf(lb)
        one_zero = np.isinf(la) ^ np.isinf(lb)
        if np.any(one_zero):
            return math.inf
        d = np.abs(la[~both_zero] - lb[~both_zero])
        return float(d.max()) if d.size else 0.0

    def bel_pl(self) -> dict[str, NDArray[np.float64]]:
        """Each :class:`Belief` for set sizes ``t = 0..k`` (keyed by the member) and the row's ``"total"``.

        Only the classes with mass enter (:func:`class_coefficients`): ``O(k)`` memory per used class.
        """
        k = self.k
        sa, sb = np.flatnonzero(self.A) + 1, np.flatnonzero(self.B[: k - 1]) + 1
        bel_in = (class_coefficients(k, sa, Coefficients.IN_A) @ self.A[sa - 1]
                  + class_coefficients(k, sb, Coefficients.IN_B) @ self.B[sb - 1])
        bel_out = class_coefficients(k, sb, Coefficients.OUT) @ self.B[sb - 1]
        total = math.fsum(self.A) + math.fsum(self.B)
        return {Belief.BEL_IN: bel_in, Belief.BEL_OUT: bel_out, Belief.PL_IN: total - bel_out[::-1],
                Belief.PL_OUT: total - bel_in[::-1], "total": np.array([total])}

    def eps_walley(self) -> float:
        """Walley loss (Def 3.13, Lemma 3.14) from the compact form, over the four kinds of pairs.

        In floats: entries below 1e-15 of the row are taken as rounding of zero (the exact decision is
        :func:`designer.optimal.compact_exact.walley_private`).
        """
        f = {name: np.clip(v, 0.0, None) for name, v in self.bel_pl().items()}
        k = self.k
        t = np.arange(1, k)
        best = 1.0
        for num, den, keep in walley_pairs(k):
            a, b = f[num][t][keep], f[den][t][keep]
            informative = (a > 1e-15) | (b > 1e-15)
            a, b = a[informative], b[informative]
            if np.any(b <= 1e-300):
                return math.inf
            if a.size:
                best = max(best, float(np.max(a / b)))
        return math.log(best)

    def chi2(self) -> float:
        """Chi-square information at the uniform prior (the ``chi2`` objective), from the class totals."""
        k = self.k
        s = np.arange(1, k)
        alpha = k * self.A[: k - 1] / s  # C(k, s) a_s
        beta = k * self.B[: k - 1] / (k - s)  # C(k, s) b_s
        m = (s * alpha + (k - s) * beta) / k
        used = m > 0
        dev = s[used] * (alpha[used] - m[used]) ** 2 + (k - s[used]) * (beta[used] - m[used]) ** 2
        return float(np.sum(dev / (k * m[used])))

    def variance(self) -> float:
        """Mean per-input asymptotic variance of the MLE (one respondent): ``(k-1)^2 / (k^2 chi2)``.

        For an invariant mechanism at the uniform prior the Fisher information on the simplex is a multiple
        of the identity, fixed by the chi-square information.
        """
        c = self.chi2()
        return math.inf if c <= 0 else (self.k - 1) ** 2 / (self.k**2 * c)

    def truthful(self) -> float:
        """Probability of answering exactly the true singleton: ``A_1``."""
        return float(self.A[0])

    def to_mechanism(self, max_inputs: int = 16) -> Mechanism:
        """Expand to the full mechanism (``2**k - 1`` columns); refused above ``max_inputs``."""
        k = self.k
        if k > max_inputs:
            raise InvalidProblemError(
                f"the full mechanism of {k} inputs has 2**{k} - 1 columns; keep the compact form "
                f"(or raise max_inputs, at most about 20)"
            )
        a, b = self.per_set()
        sets = np.arange(1, 1 << k, dtype=np.int64)
        size = np.bitwise_count(sets).astype(np.int64)
        inside = sf.members(sets, k).T
        matrix = np.where(inside == 1, a[size - 1][None, :], b[size - 1][None, :])
        used = matrix.any(axis=0)
        return Mechanism(matrix[:, used], inputs=self.labels, frame=self.labels, focal=sets[used].tolist())

    def to_json_dict(self) -> dict[str, Any]:
        a, b = self.per_set()
        return {"sizes": list(range(1, self.k + 1)), "A_total_with_truth": self.A.tolist(),
                "B_total_without_truth": self.B.tolist(), "mass_one_set_with_truth": a.tolist(),
                "mass_one_set_without_truth": b.tolist()}


def chi2_class_information(k: int, eps: float) -> NDArray[np.float64]:
    """Chi-square information per unit of row mass of each staircase size class, uniform prior.

    Class ``s`` (``s = 1..k``) answers sets of size ``s``: ``e^eps`` on the inputs whose answer is in the
    set, 1 elsewhere (mean ``m``). A row budget of 1 buys ``1/m`` columns' worth, so the class gives
    ``mu(s)/m`` (docs/theory.md section 5); ``s = k`` ("don't know") gives 0. Entry ``s - 1`` holds class ``s``; the
    best ``s < k`` is subset selection's best subset size.
    """
    s = np.arange(1, k + 1, dtype=np.float64)
    e = Budget(eps).lp_factor
    m = (s * e + (k - s)) / k
    mu = (s * (e - m) ** 2 + (k - s) * (1.0 - m) ** 2) / (k * m)
    return mu / m


def symmetric_objective(problem: DesignProblem) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Objective coefficients on ``A`` and ``B`` (per unit of class total) of an invariant problem."""
    k = problem.k
    s = np.arange(1, k + 1)
    if problem.objective is Objective.TRUTHFUL:
        ca, cb = np.zeros(k), np.zeros(k)
        ca[0] = 1.0
        return ca, cb
    if problem.objective.estimation:  # chi2; and the variances, which the size classes order alike (5.7)
        return chi2_class_information(k, problem.epsilon), np.zeros(k)
    truth = problem.truth()
    x, y = 0, int(truth[0])
    other = int(truth[1])
    if problem.objective is Objective.GAIN:
        assert problem.gain is not None
        # representative sets: the first s frame indices, rotated to contain / avoid y(x)
        rep_in = np.array([_rep(k, int(n), y, True) for n in s])
        rep_out = np.array([_rep(k, int(n), y, False) if n < k else 0 for n in s])
        return problem.gain[x, rep_in], np.where(s < k, problem.gain[x, rep_out], 0.0)
    u = problem.utility
    assert u is not None
    same, diff = float(u[x, y]), float(u[x, other])
    if problem.objective is Objective.WORST_CASE_UTILITY:
        ca = np.where(s == 1, same, min(same, diff))
    else:
        ca = np.where(s == 1, same, max(same, diff))
    return ca, np.full(k, diff)


def _rep(k: int, size: int, y: int, contains: bool) -> int:
    members = [y] if contains else []
    for i in range(k):
        if len(members) == size:
            break
        if i != y:
            members.append(i)
    return sum(1 << i for i in members)


def _allowed_sizes(problem: DesignProblem) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    k = problem.k
    if problem.focal_sets is None:
        return np.ones(k, bool), np.r_[np.ones(k - 1, bool), False]
    fam = np.asarray(problem.focal_sets, dtype=np.int64)
    sizes = np.bitwise_count(fam).astype(int)
    allowed = np.zeros(k, bool)
    allowed[np.unique(sizes) - 1] = True
    return allowed, allowed & (np.arange(1, k + 1) < k)


def symmetric_program(problem: DesignProblem) -> LinearProgram:
    """The size-class LP of an invariant problem: variables ``z = [A_1..A_k, B_1..B_k]`` (``B_k = 0``)."""
    k = problem.k
    e = problem.budget.lp_factor
    n = 2 * k
    s = np.arange(1, k + 1, dtype=float)
    ca, cb = symmetric_objective(problem)
    c = np.r_[ca, cb]
    allow_a, allow_b = _allowed_sizes(problem)
    chi2 = problem.objective.estimation
    if chi2:
        allow_b = np.zeros(k, bool)  # staircase classes carry their mass in A (see symmetric_objective)
    ub = np.r_[np.where(allow_a, np.inf, 0.0), np.where(allow_b, np.inf, 0.0)]
    eq_rows = [np.r_[np.ones(k), np.ones(k)][None, :]]
    b_eq = [1.0]
    ub_rows: list[NDArray[np.float64] | sp.spmatrix] = []
    b_ub: list[NDArray[np.float64]] = []
    if problem.dont_know is not None:
        row = np.zeros((1, n))
        row[0, k - 1] = 1.0
        eq_rows.append(row)
        b_eq.append(problem.dont_know)
    elif problem.dont_know_max is not None:
        row = np.zeros((1, n))
        row[0, k - 1] = 1.0
        ub_rows.append(row)
        b_ub.append(np.array([problem.dont_know_max]))
    if problem.lie_max is not None:
        row = np.zeros((1, n))
        if chi2:
            row[0, :k] = (k - s) / (s * e + k - s)  # share of a staircase class on sets without the truth
        else:
            row[0, k:] = 1.0
        ub_rows.append(row)
        b_ub.append(np.array([problem.lie_max]))
    sldp = problem.semantics.shafer and not chi2
    wldp = problem.semantics.walley
    if chi2 and wldp:
        raise InvalidProblemError(
            f"objective '{problem.objective}' is an SLDP objective on the symmetric path; use semantics = \"sldp\"")
    if sldp:
        idx = np.arange(k - 1)
        rows = np.r_[idx, idx, k - 1 + idx, k - 1 + idx]
        cols = np.r_[idx, k + idx, k + idx, idx]
        vals = np.r_[k - s[idx], -e * s[idx], s[idx], -e * (k - s[idx])]
        ub_rows.append(sp.csr_matrix((vals, (rows, cols)), shape=(2 * (k - 1), n)))
        b_ub.append(np.zeros(2 * (k - 1)))
    if wldp:
        _walley_rows(k, e, ub_rows, b_ub)
    a_ub = sp.vstack([sp.csr_matrix(r) for r in ub_rows], format="csr") if ub_rows else sp.csr_matrix((0, n))
    return LinearProgram(
        c=c, A_ub=a_ub, b_ub=np.concatenate(b_ub) if b_ub else np.zeros(0),
        A_eq=sp.csr_matrix(np.vstack(eq_rows)), b_eq=np.array(b_eq, dtype=float),
        lb=np.zeros(n), ub=ub,
    )


def _walley_rows(k: int, e: float, ub_rows: list[Any], b_ub: list[NDArray[np.float64]]) -> None:
    """Append the rows ``-bel(k - t) - e^eps bel'(t) <= -1`` (i.e. ``pl <= e^eps bel``) of every pair kind.

    Built ``CLASS_CHUNK`` classes (columns) at a time from :func:`class_coefficients` and stored sparse: at
    ``k = 5000`` dense coefficient maps would take gigabytes; the program keeps coefficients above
    ``DROP_BELOW``.
    """
    t = np.arange(1, k)
    pairs = walley_pairs(k)
    parts: list[list[tuple[int, NDArray[np.int64], Any]]] = [[] for _ in pairs]
    for start in range(1, k + 1, CLASS_CHUNK):
        s = np.arange(start, min(k, start + CLASS_CHUNK - 1) + 1)
        in_a = class_coefficients(k, s, Coefficients.IN_A)
        in_b = np.where(s < k, class_coefficients(k, s, Coefficients.IN_B), 0.0)  # B_k does not exist
        out_b = np.where(s < k, class_coefficients(k, s, Coefficients.OUT), 0.0)
        zero = np.zeros((t.size, s.size))
        # coefficients on [A_s | B_s] of bel_in, bel_out at t and of the complements' beliefs at k - t
        bel = {Belief.BEL_IN: (in_a[t], in_b[t]), Belief.BEL_OUT: (zero, out_b[t])}
        comp = {Belief.PL_IN: (zero, out_b[k - t]), Belief.PL_OUT: (in_a[k - t], in_b[k - t])}
        for j, (num, den, keep) in enumerate(pairs):
            for side in (0, 1):
                block = -comp[num][side][keep] - e * bel[den][side][keep]
                # Binomial ratios below DROP_BELOW move a row by at most 2k DROP_BELOW: far below solver
                # tolerance, and the released mechanism is certified exactly on the compact form anyway.
                block[np.abs(block) < DROP_BELOW] = 0.0
                parts[j].append((side, s, sp.coo_matrix(block)))
    for j, (_, _, keep) in enumerate(pairs):
        rows = int(keep.sum())
        r, c, v = [], [], []
        for side, s, block in parts[j]:
            r.append(block.row)
            c.append(block.col + side * k + s[0] - 1)
            v.append(block.data)
        ub_rows.append(sp.csr_matrix((np.concatenate(v), (np.concatenate(r), np.concatenate(c))), shape=(rows, 2 * k)))
        b_ub.append(-np.ones(rows))


def walley_pairs(k: int) -> list[tuple[Belief, Belief, NDArray[np.bool_]]]:
    """The four kinds of ``(pl_x(E), bel_x'(E))`` pairs of an invariant mechanism, over sizes ``t = 1..k-1``.

    ``in`` / ``out``: whether ``E`` holds the true answer of the input on that side. ``E`` holding ``y(x)``
    but not ``y(x')`` pairs ``pl_in`` with ``bel_out``; holding both needs ``t >= 2``; neither ``t <= k - 2``.
    Returns ``(numerator, denominator, sizes kept)`` with a boolean mask over ``t = 1..k-1``.
    """
    t = np.arange(1, k)
    every = np.ones(t.size, bool)
    return [(Belief.PL_IN, Belief.BEL_OUT, every), (Belief.PL_OUT, Belief.BEL_IN, every),
            (Belief.PL_IN, Belief.BEL_IN, t >= 2), (Belief.PL_OUT, Belief.BEL_OUT, t <= k - 2)]


def best_chi2_classes(problem: DesignProblem) -> NDArray[np.float64] | None:
    """The exact optimum of the chi2 size-class program when it has no lying bound (else None).

    Without ``lie_max`` the program maximises ``c.w`` over the simplex (minus a fixed don't-know class),
    so all mass goes to the best allowed class. Solvers stop within their tolerance of that, and near
    the optimum the objective is flat in ``s`` (about 1e-6 relative between neighbouring sizes at
    eps = 0.1, k = 1000), so the solver's class is replaced by the exact argmax.
    """
    if not problem.objective.estimation or problem.lie_max is not None:
        return None
    k = problem.k
    ca, _ = symmetric_objective(problem)
    allow_a, _ = _allowed_sizes(problem)
    allow = allow_a.copy()
    allow[k - 1] = False  # the whole frame carries no information (fixed don't-know mass aside)
    if not allow.any():
        return None
    z = np.zeros(2 * k)
    best = int(np.argmax(np.where(allow, ca, -np.inf)))
    z[best] = 1.0 - (problem.dont_know or 0.0)
    if problem.dont_know:
        z[k - 1] = problem.dont_know
    return z


def best_compact_variance(problem: DesignProblem) -> float:
    """The least mean share variance of the size classes at the uniform prior without a lying bound: the best
    subset selection (with the problem's don't-know mass), per respondent; the bound of a symmetric variance design
    (docs/theory.md, 5.7)."""
    plain = problem.replace(objective="chi2", lie_max=None)
    z = best_chi2_classes(plain)
    return math.inf if z is None else from_solution(plain, z).variance()


def from_solution(problem: DesignProblem, z: NDArray[np.float64]) -> SymmetricMechanism:
    """Class totals from a solution of :func:`symmetric_program` (staircase classes split for chi2)."""
    k = problem.k
    a, b = np.clip(z[:k], 0.0, None), np.clip(z[k:], 0.0, None)
    a[a < 1e-15] = 0.0
    b[b < 1e-15] = 0.0
    if problem.objective.estimation:
        s = np.arange(1, k + 1, dtype=float)
        e = problem.budget.lp_factor
        w = a
        a, b = w * s * e / (s * e + k - s), w * (k - s) / (s * e + k - s)
    b[k - 1] = 0.0
    if problem.dont_know is not None:
        rest = a[: k - 1].sum() + b.sum()
        scale = (1.0 - problem.dont_know) / rest if rest > 0 else 0.0
        a, b = a * scale, b * scale
        a[k - 1] = problem.dont_know
    else:
        total = a.sum() + b.sum()
        a, b = a / total, b / total
    return SymmetricMechanism(problem.inputs, a, b)
