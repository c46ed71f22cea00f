"""``design(problem)``: validate, build the program, solve, symmetrise, certify, report (DESIGN.md 5).

A thin front end in the manner of ``scipy.optimize.linprog``: the solver's claims (objective, budget)
are recomputed from the released mechanism, and an infeasible problem is explained, with the change
that would make it feasible.
"""

from __future__ import annotations

import contextvars
import dataclasses
import math
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .. import setfunctions as sf
from ..closed_forms import wldp_min_answer_mass
from ..estimation import chi2_information, estimator_variance
from ..exceptions import DesignWarning, InfeasibleDesignError, InvalidProblemError
from ..mechanism import Mechanism
from ..privacy import eps_shafer, eps_walley
from .certify import Certificate, CertificationError, bisect_threshold, certify, clean_solution
from .problem import DesignProblem
from .programs import (
    LinearProgram,
    SolverOutcome,
    WarmStart,
    linear_program,
    objective_matrix,
    solve,
    staircase_mechanism,
    staircase_program,
)
from .symmetric import (
    SymmetricMechanism,
    best_chi2_classes,
    certify_symmetric,
    chi2_class_information,
    from_solution,
    symmetric_objective,
    symmetric_program,
)

__all__ = ["DesignResult", "design", "is_symmetric", "objective_value", "orbit_average"]

#: Largest budget tried when explaining an infeasible problem (e^64 is beyond any meaningful privacy).
MAX_EPSILON_SEARCH = 64.0

#: ``path="auto"`` takes the symmetric path above this many inputs (the general path is exact and
#: returns the full mechanism below it).
SYMMETRIC_AUTO_INPUTS = 10
#: Full mechanisms of the symmetric path are expanded up to this many inputs.
EXPAND_INPUTS = 16
#: The general path refuses frames larger than this without a focal-set restriction.
GENERAL_MAX_INPUTS = 16

#: The general path refuses programs with more (estimated) constraint nonzeros than this: about 300 bytes
#: each at peak (measured: WLDP k = l = 12, 7.5e6 nonzeros, 2.1 GiB), so about 8 GiB.
MAX_NONZEROS = 27_000_000


def program_nonzeros(problem: DesignProblem) -> int:
    """Estimated constraint nonzeros of the general program of ``problem`` (DESIGN.md 5).

    SLDP envelopes: ``6 k F + 2 F``; WLDP: two per pair row (``k (k-1) (2**l - 2)`` rows) plus the belief
    definitions, ``k`` times the inclusion of the focal family in the proper subsets.
    """
    k, l = problem.k, problem.l
    family = problem.family()
    F = family.size
    total = k * F
    if problem.semantics in ("sldp", "both"):
        total += 6 * k * F + 2 * F
    if problem.semantics in ("wldp", "both") and l > 1:
        proper = (1 << l) - 2
        sizes = np.bitwise_count(family).astype(np.int64)
        inclusion_nnz = int(np.sum(np.left_shift(np.int64(1), l - sizes)))  # supersets of each focal set
        total += 2 * k * (k - 1) * proper + k * (inclusion_nnz + proper)
    return int(total)


#: Relative budget margins of the re-solves tried when a solver answer cannot be certified otherwise.
RESOLVE_MARGINS = (1e-9, 1e-7, 1e-5)


@dataclass(frozen=True)
class DesignResult:
    """A certified optimal mechanism and what was checked about it.

    Attributes
    ----------
    problem : DesignProblem
    mechanism : Mechanism or None
        The released mechanism (certified; see ``certificate``). On the symmetric path it is expanded only
        for ``k <= EXPAND_INPUTS`` (it has ``2**k - 1`` columns); ``compact`` always holds it.
    objective_value : float
        The objective recomputed from the released mechanism.
    solver_objective : float
        The optimum the solver reported (before cleaning, symmetrising and repair).
    eps_shafer, eps_walley : float
        Losses of the released mechanism (Def 3.1, Def 3.13), recomputed.
    variance : float
        Asymptotic variance of the MLE of the prior from one set-valued answer (mean over inputs;
        ``Var(pi_hat)`` for two inputs), at the problem's prior.
    status : str
        Solver status (``"optimal"``, ...).
    solver : str
    path : str
        ``"linear program"`` or ``"staircase LP"``, plus ``" + orbit average"`` for symmetric problems.
    certificate : Certificate
    seconds : float
        Wall time of the whole design.
    compact : SymmetricMechanism or None
        The size-class form on the symmetric path (DESIGN.md 5).
    warnings : tuple of str
        What the user should know about the released design, also issued as :class:`DesignWarning`
        (e.g. a chi2 optimum at a skewed prior that lumps rare inputs together and so does not identify
        every share: its ``variance`` is then ``inf``).
    """

    problem: DesignProblem
    mechanism: Mechanism | None
    objective_value: float
    solver_objective: float
    eps_shafer: float
    eps_walley: float
    variance: float
    status: str
    solver: str
    path: str
    certificate: Certificate
    seconds: float
    compact: SymmetricMechanism | None = None
    warnings: tuple[str, ...] = ()

    @property
    def certified(self) -> bool:
        """Always True for a returned result: an unverified mechanism is never released."""
        return True

    def to_json_dict(self) -> dict[str, Any]:
        """The ``designer design --format json`` object."""
        from ..cli import json_number

        out: dict[str, Any] = {"name": self.problem.name, "inputs": list(self.problem.inputs),
                               "frame": list(self.problem.frame)}
        if self.mechanism is not None:
            mech = self.mechanism
            out.update(focal_sets=[list(s) for s in mech.focal_sets], columns=mech.columns,
                       matrix=[[float(v) for v in row] for row in mech.matrix])
        if self.compact is not None:
            out["compact"] = self.compact.to_json_dict()
        out.update({
            "epsilon": self.problem.epsilon,
            "semantics": self.problem.semantics,
            "objective": self.problem.objective,
            "objective_value": self.objective_value,
            "solver_objective": json_number(self.solver_objective),
            "eps_shafer": json_number(self.eps_shafer),
            "eps_walley": json_number(self.eps_walley),
            "variance": json_number(self.variance),
            "status": self.status,
            "solver": self.solver,
            "path": self.path,
            "certified": self.certified,
            "certificate": self.certificate.method,
            "certificate_detail": {
                "losses": list(self.certificate.losses),
                "margin": self.certificate.margin,
                "repaired": self.certificate.repaired,
                "mix_weight": self.certificate.mix_weight,
                "reference": self.certificate.reference,
                "violation_before_repair": json_number(self.certificate.violation),
            },
            "seconds": self.seconds,
            "warnings": list(self.warnings),
        })
        return out


#: The warm-start session of the running :func:`design` call (None: every LP is solved cold by cvxpy).
_WARM: contextvars.ContextVar[WarmStart | None] = contextvars.ContextVar("designer_warm_start", default=None)


def _solve(lp: LinearProgram, *, solver: str | None, solver_args: dict[str, Any] | None) -> SolverOutcome:
    return solve(lp, solver=solver, solver_args=solver_args, warm=_WARM.get())


def identification_warnings(problem: DesignProblem, mech: Mechanism | None, variance: float) -> tuple[str, ...]:
    """Why a design with an infinite MLE variance does not identify every share (empty when it does)."""
    if math.isfinite(variance):
        return ()
    what = "the answers do not separate every input"
    if mech is not None:
        groups: dict[bytes, list[str]] = {}
        for x, row in zip(mech.inputs, np.round(mech.matrix, 12)):
            groups.setdefault(row.tobytes(), []).append(x)
        alike = [g for g in groups.values() if len(g) > 1]
        if alike:
            what = "; ".join("inputs " + ", ".join(g) + " answer alike" for g in alike)
    hint = ("; the chi2 objective weighs inputs by their prior and can gain by lumping rare ones together: use a "
            "flatter (e.g. uniform) prior, or objective truthful, if every share must be estimated"
            if problem.objective == "chi2" else "")
    return (f"the released mechanism does not identify every share (MLE variance infinite): {what}{hint}",)


def _with_warnings(result: DesignResult) -> DesignResult:
    notes = identification_warnings(result.problem, result.mechanism, result.variance)
    for note in notes:
        warnings.warn(note, DesignWarning, stacklevel=3)
    return dataclasses.replace(result, warnings=notes) if notes else result


# ---------------------------------------------------------------------------- objective
def objective_value(problem: DesignProblem, mech: Mechanism) -> float:
    """The problem's objective evaluated on a mechanism.

    ``chi2`` is the chi-square information of the set-valued answers (SLDP), and under WLDP of the least
    informative precise mechanism in the credal sets (two inputs: :func:`walley_worst_binary`).
    """
    if problem.objective == "chi2":
        if problem.semantics != "sldp" and not mech.is_bayesian and mech.k == 2 and mech.l == 2:
            return chi2_information(walley_worst_binary(mech), problem.prior)
        return chi2_information(mech, problem.prior)
    g = objective_matrix(problem, np.asarray(mech.focal, dtype=np.int64))
    return float(np.sum(g * mech.matrix))


# ---------------------------------------------------------------------------- symmetry
def _permutations(k: int) -> list[NDArray[np.int64]]:
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


def is_symmetric(problem: DesignProblem) -> bool:
    """Whether relabelling answers (with inputs alike) leaves the problem unchanged (DESIGN.md 5).

    Needs the inputs to be exactly the frame's labels, a uniform prior, and objective and structure
    invariant under the transposition and the cycle that generate all permutations.
    """
    k, l = problem.k, problem.l
    if k != l or set(problem.inputs) != set(problem.frame) or k < 2:
        return False
    if np.ptp(problem.prior) > 1e-12:
        return False
    truth = problem.truth()  # frame index of input x
    inv = np.argsort(truth)  # input of frame index y
    family = problem.family() if problem.focal_sets is not None else None
    for perm in _permutations(l):  # perm acts on frame indices; inputs follow by labels
        if family is not None:
            if set(_permute_masks(family, perm).tolist()) != set(family.tolist()):
                return False
        xperm = inv[perm[truth]]  # input x -> input with label perm(y(x))
        if problem.objective == "gain":
            if l > 16:
                return False  # a (k, 2**l) gain table is not checked for invariance beyond 16 answers
            g = problem.gain
            assert g is not None
            all_sets = np.arange(1 << l, dtype=np.int64)
            if not np.allclose(g[xperm][:, _permute_masks(all_sets, perm)], g, rtol=0, atol=1e-12):
                return False
        if problem.objective in ("worst_case_utility", "best_case_utility"):
            u = problem.utility
            assert u is not None
            if not np.allclose(u[np.ix_(xperm, perm)], u, rtol=0, atol=1e-12):
                return False
    return True


def orbit_average(mech: Mechanism, truth: NDArray[np.int64]) -> Mechanism:
    """Average a mechanism over all relabellings of the answers (inputs relabelled alike).

    The mass of ``(x, E)`` becomes the mean over its orbit, which is fixed by ``|E|`` and whether
    ``y(x)`` lies in ``E``. Same objective for invariant linear and chi2 objectives, same budget.
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


# ---------------------------------------------------------------------------- infeasibility
def _feasible(problem: DesignProblem, *, privacy: bool = True, solver: str | None = None,
              solver_args: dict[str, Any] | None = None) -> bool:
    if privacy and is_symmetric(problem):
        # Orbit averaging keeps feasibility: the size-class program decides it, with 2k variables.
        lp = symmetric_program(problem)
    elif problem.objective == "chi2" and privacy:
        lp = staircase_program(problem).lp
    else:
        lp = linear_program(problem, privacy=privacy)
    lp.c[:] = 0.0
    if privacy:
        solver_args = _default_solver_args(problem, solver, solver_args)
    return solve(lp, solver=solver, solver_args=solver_args).status.startswith("optimal")


def _explain_infeasible(problem: DesignProblem, solver: str | None, solver_args: dict[str, Any] | None) -> str:
    sem = problem.semantics.upper()
    eps = problem.epsilon
    head = f"no {sem} mechanism satisfies '{problem.name or 'the problem'}' at epsilon = {eps:g}"
    # The binary closed form (DESIGN.md 6).
    if (problem.semantics in ("wldp", "both") and problem.k == 2 and problem.l == 2
            and set(problem.inputs) == set(problem.frame) and problem.dont_know is not None):
        c = 1.0 - problem.dont_know
        bound = wldp_min_answer_mass(eps)
        if c < bound:
            return (f"{head}: a binary WLDP mechanism with don't-know mass {problem.dont_know:g} (c = {c:g}) "
                    f"needs c >= 2/(1+e^eps) = {bound:.6g}; use dont_know <= tanh(eps/2) = {1 - bound:.6g} "
                    f"or epsilon >= ln((2-c)/c) = {math.log((2 - c) / c):.6g}")
    if not _feasible(problem, privacy=False, solver=solver, solver_args=solver_args):
        return (f"{head}: the structure alone is infeasible (don't-know, lying bound and focal sets "
                "contradict each other, whatever the budget); relax lie_max, dont_know or focal_sets")
    def feasible_with(key: str) -> Callable[[float], bool]:
        return lambda v: _feasible(problem.replace(**{key: v}), solver=solver, solver_args=solver_args)

    hints = []
    # Smallest epsilon: double until feasible, then bisect.
    hi = eps
    while hi < MAX_EPSILON_SEARCH:
        hi = min(2.0 * hi, MAX_EPSILON_SEARCH)
        if feasible_with("epsilon")(hi):
            hints.append(f"epsilon >= {bisect_threshold(feasible_with('epsilon'), bad=eps, good=hi):.6g}")
            break
    if problem.dont_know and feasible_with("dont_know")(0.0):
        largest = bisect_threshold(feasible_with("dont_know"), bad=problem.dont_know, good=0.0)
        hints.append(f"dont_know <= {largest:.6g}")
    if problem.lie_max is not None and feasible_with("lie_max")(1.0):
        hints.append(f"lie_max >= {bisect_threshold(feasible_with('lie_max'), bad=problem.lie_max, good=1.0):.6g}")
    if not hints:
        return (f"{head}, and no epsilon up to {MAX_EPSILON_SEARCH:g} helps; relax the structure "
                "(under WLDP every proper event needs positive belief: allow singletons among focal_sets)")
    return f"{head}; it becomes feasible with " + ", or with ".join(hints) + " (found by bisection)"


# ---------------------------------------------------------------------------- front end
def _losses(problem: DesignProblem) -> tuple[str, ...]:
    return {"sldp": ("shafer",), "wldp": ("walley",), "both": ("shafer", "walley")}[problem.semantics]


def _solve_linear(problem: DesignProblem, solver: str | None, solver_args: dict[str, Any] | None
                  ) -> tuple[SolverOutcome, NDArray[np.float64] | None, NDArray[np.int64]]:
    lp = linear_program(problem)
    out = _solve(lp, solver=solver, solver_args=_default_solver_args(problem, solver, solver_args))
    cols = None if out.z is None else lp.mechanism(out.z)
    return out, cols, lp.family


#: HiGHS options for WLDP programs (many sparse pair rows): interior point, then crossover to a vertex.
#: Measured at k = l = 8: 0.3 s against 2.1 s for the default simplex.
WLDP_HIGHS_OPTIONS = {"highs_options": {"solver": "ipm"}}

def _default_solver_args(problem: DesignProblem, solver: str | None,
                         solver_args: dict[str, Any] | None) -> dict[str, Any] | None:
    """The caller's solver arguments, or the measured HiGHS default for WLDP programs."""
    if solver is None and solver_args is None and problem.semantics in ("wldp", "both"):
        return WLDP_HIGHS_OPTIONS
    return solver_args


#: HiGHS options for the staircase LP (few rows, up to 2**k columns): primal simplex is fastest there.
STAIRCASE_HIGHS_OPTIONS = {"highs_options": {"simplex_strategy": 4}}


def walley_worst_binary(mech: Mechanism) -> Mechanism:
    """The least informative precise mechanism in the credal sets of a binary mechanism (lambda = 0).

    Each row's don't-know mass goes to the *other* answer (DESIGN.md 6: ``nu_W`` is attained there).
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


def best_subset_size(k: int, eps: float) -> tuple[int, float]:
    """The size ``d`` of the best uniform staircase pattern and its chi-square information (uniform prior).

    The argmax over ``d < k`` of :func:`~designer.design.symmetric.chi2_class_information` (DESIGN.md 5;
    the value of subset selection).

    Returns
    -------
    d : int
        In ``1..k-1``.
    information : float
        Chi-square information of the optimum (per respondent).
    """
    info = chi2_class_information(k, eps)[: k - 1]
    best = int(np.argmax(info))
    return best + 1, float(info[best])


#: Random candidates tried by :func:`regular_design` besides the contiguous circulant.
DESIGN_CANDIDATES = 256


def _design_cost(high: NDArray[np.bool_]) -> float:
    """``sum 1/sigma**2`` over the singular values of the pattern on the complement of the constant vector.

    For a regular pattern the uniform-prior Fisher information of :func:`cyclic_design` is proportional to
    ``N N^T`` there, so this is proportional to the MLE variance (``inf`` when singular).
    """
    k = high.shape[0]
    centred = high - high.mean(axis=0, keepdims=True)
    centred = centred - centred.mean(axis=1, keepdims=True)
    sigma = np.linalg.svd(centred, compute_uv=False)[: k - 1]
    return math.inf if sigma.min() < 1e-9 * max(1.0, sigma.max()) else float(np.sum(1.0 / sigma**2))


#: Swaps tried by the local search of :func:`regular_design` (fewer for large k: each costs one FFT), and
#: how many trials in a row without a 1e-4 relative gain end it.
SWAP_BUDGET = 20_000_000
STALL_LIMIT = 2000


def _circulant_cost(indicator: NDArray[np.float64], d: int) -> float:
    """``sum_{m != 0} 1/|lambda_m|**2`` of the circulant with connection set ``indicator`` (``inf``: singular)."""
    power = np.abs(np.fft.fft(indicator)[1:]) ** 2
    return math.inf if power.min() < 1e-9 * d * d else float(np.sum(1.0 / power))


def _improve_connection_set(indicator: NDArray[np.float64], cost: float, rng: np.random.Generator
                            ) -> NDArray[np.float64]:
    """Local search on a circulant's connection set: swap a member for a non-member while the variance
    proxy ``sum_{m != 0} 1/|lambda_m|**2`` drops (its floor, all ``|lambda_m|`` equal, is a difference
    set's: ``(k-1)**2 / (k d - d**2)``). Seeded trials, ended by a budget or ``STALL_LIMIT`` trials without
    progress, so the result is reproducible. k = 1000, d = 269: MLE variance 14.9 -> 5.1 (subset selection
    3.7)."""
    k = indicator.size
    d = int(indicator.sum())
    if d in (0, k):
        return indicator
    floor = (k - 1) ** 2 / (k * d - d * d)
    members, others = np.flatnonzero(indicator > 0.5), np.flatnonzero(indicator < 0.5)
    stalled = 0
    for _ in range(min(20_000, SWAP_BUDGET // k)):
        if cost <= floor * (1 + 1e-9) or stalled >= STALL_LIMIT:
            break
        stalled += 1
        a, b = int(rng.integers(d)), int(rng.integers(k - d))
        i, j = members[a], others[b]
        indicator[i], indicator[j] = 0.0, 1.0
        trial = _circulant_cost(indicator, d)
        if trial < cost:
            if trial < cost * (1 - 1e-4):
                stalled = 0
            cost = trial
            members[a], others[b] = j, i
        else:
            indicator[i], indicator[j] = 1.0, 0.0
    return indicator


def regular_design(k: int, d: int) -> NDArray[np.bool_] | None:
    """A nonsingular ``k x k`` 0/1 pattern with ``d`` ones in every row and column, of small variance.

    Circulants first: their singular values are ``|lambda_m| = |sum_{s in S} w**(s m)|`` (one FFT per
    connection set ``S``); the contiguous set is singular when ``gcd(d, k) > 1``, so seeded random sets
    are tried as well, the one of least ``sum_{m != 0} 1/|lambda_m|**2`` wins and is improved by swaps
    (a cyclic difference set, where one exists, would attain the variance of subset selection). When
    every candidate is singular (e.g. ``d = 2`` and ``4 | k``), degree-preserving switches of random
    entries are tried; None when they fail too (``k = 4, d = 2`` has no nonsingular pattern at all).
    ``d = 1`` and ``d = k - 1`` always work.
    """
    rng = np.random.default_rng(20260101 + 7919 * k + d)
    best, best_cost = None, math.inf
    for trial in range(DESIGN_CANDIDATES + 1):
        offsets = np.arange(d) if trial == 0 else rng.choice(k, size=d, replace=False)
        indicator = np.zeros(k)
        indicator[offsets] = 1.0
        cost = _circulant_cost(indicator, d)
        if cost < best_cost * (1 - 1e-12):
            best, best_cost = offsets, cost
    diff = (np.arange(k)[:, None] - np.arange(k)[None, :]) % k
    if best is not None:
        indicator = np.zeros(k)
        indicator[best] = 1.0
        indicator = _improve_connection_set(indicator, best_cost, rng)
        return (indicator > 0.5)[diff]
    pattern_best = None
    pattern = diff < d  # singular circulant: switch entries (rows and columns keep d ones each)
    for _ in range(DESIGN_CANDIDATES):
        trial = pattern.copy()
        for _ in range(4 * k):
            r1, r2 = rng.choice(k, size=2, replace=False)
            only1, only2 = np.flatnonzero(trial[r1] & ~trial[r2]), np.flatnonzero(trial[r2] & ~trial[r1])
            if only1.size == 0 or only2.size == 0:
                continue
            c1, c2 = rng.choice(only1, size=1), rng.choice(only2, size=1)
            trial[r1, c1], trial[r1, c2], trial[r2, c2], trial[r2, c1] = False, True, False, True
        cost = _design_cost(trial)
        if cost < best_cost:
            best_cost, pattern_best = cost, trial
            if trial.shape[0] > 64:
                break
    return pattern_best if math.isfinite(best_cost) else None


def cyclic_design(k: int, d: int, eps: float, high: NDArray[np.bool_] | None = None) -> NDArray[np.float64]:
    """A ``k x k`` precise mechanism with the chi-square information of subset selection of size ``d``.

    Output ``j`` answers "the truth is among the inputs ``x`` with ``high[x, j]``": entry ``e^eps theta``
    there and ``theta = 1/(d e^eps + k - d)`` elsewhere. Every row and column holds ``d`` high entries,
    so each output is one staircase column of subset selection (``k`` columns instead of ``C(k, d)``).

    Parameters
    ----------
    k, d : int
        Inputs (= outputs) and subset size, ``1 <= d < k``.
    eps : float
        Budget (nats); the loss of the result is the ratio ``e^eps`` of its two entries.
    high : (k, k) bool array, optional
        The pattern (default :func:`regular_design`: circulant when possible, always nonsingular).

    Returns
    -------
    (k, k) ndarray
        Rows are inputs, columns outputs; rows sum to 1.
    """
    if high is None:
        high = regular_design(k, d)
        if high is None:
            raise InvalidProblemError(f"no nonsingular design of {k} outputs with subset size {d} exists or "
                                      "was found; use d = 1 or d = k - 1")
    e = math.exp(eps)
    theta = 1.0 / (d * e + k - d)
    return np.where(high, e * theta, theta)


def _precise(problem: DesignProblem) -> bool:
    """chi2 under WLDP: a precise design over ``2**k`` staircase patterns, never a table over ``2**l`` sets."""
    return problem.objective == "chi2" and problem.semantics != "sldp"


def _singletons(l: int) -> NDArray[np.object_]:
    return np.array([1 << i for i in range(l)], dtype=object)  # Python ints: frames beyond 62 answers


def _precise_chi2(problem: DesignProblem, solver: str | None, solver_args: dict[str, Any] | None
                  ) -> tuple[SolverOutcome, NDArray[np.float64] | None, NDArray[np.int64], str]:
    """chi2 under WLDP: the best Bayesian mechanism with at most ``l`` outputs (DESIGN.md 5).

    The staircase LP has ``k`` equality rows, so a vertex uses at most ``k`` patterns: each gets an
    output of its own (truth-preferring assignment). Symmetric problems get the cyclic design of the
    best subset size instead of an arbitrary vertex (equal variance for every input).
    """
    k, l = problem.k, problem.l
    t0 = time.perf_counter()
    if is_symmetric(problem):
        d, info = best_subset_size(k, problem.epsilon)
        note = ""
        high = regular_design(k, d)
        if high is None:
            # No nonsingular pattern of the best size fits k outputs (e.g. k = 4, d = 2): the optimum is then
            # not attained by any mechanism that identifies the prior. Take the best size that has one.
            values = chi2_class_information(k, problem.epsilon)[: k - 1]
            for size in np.argsort(-values, kind="stable") + 1:
                high = regular_design(k, int(size))
                if high is not None:
                    note = (f"; size {d} has no nonsingular design with {k} outputs, so the optimum "
                            f"{info:.10g} is not attained")
                    d, info = int(size), float(values[size - 1])
                    break
        assert high is not None  # d = 1 always works
        truth = problem.truth()
        cols = np.zeros((k, l))
        cols[:, truth] = cyclic_design(k, d, problem.epsilon, high)  # output j = the answer of input j
        outcome = SolverOutcome("optimal", info, None, "closed form", 0.0, time.perf_counter() - t0)
        return outcome, cols, _singletons(l), f"regular design, subset size {d} (precise answers{note})"
    sub = problem.replace(frame=problem.inputs, semantics="sldp", focal_sets=None)
    st = staircase_program(sub)
    if solver is None and solver_args is None:
        solver_args = STAIRCASE_HIGHS_OPTIONS  # simplex: a vertex, hence at most k patterns
    out = _solve(st.lp, solver=solver, solver_args=solver_args)
    if out.z is None:
        return out, None, _singletons(0), "staircase LP"
    theta = np.clip(out.z[: st.patterns.size], 0.0, None)
    used = np.flatnonzero(theta > 1e-12 * max(1.0, float(theta.max())))
    if used.size > l:
        raise InvalidProblemError(
            f"objective 'chi2' under {problem.semantics.upper()} needs a precise mechanism with {used.size} "
            f"distinct outputs, but the frame has only {l} answers; use a frame with at least {problem.k} "
            "answers, semantics = \"sldp\", or objective truthful / gain / worst_case_utility"
        )
    cols_used = st.values[:, used] * theta[used][None, :]  # (k, m)
    from scipy.optimize import linear_sum_assignment

    truth = problem.truth()
    score = np.zeros((used.size, l))
    for x in range(k):
        if truth[x] >= 0:
            score[:, truth[x]] += cols_used[x]
    rows, outputs = linear_sum_assignment(score, maximize=True)
    cols = np.zeros((k, l))
    cols[:, outputs] = cols_used[:, rows]
    return out, cols, _singletons(l), "staircase LP vertex, one output per pattern"


def _solve_chi2(problem: DesignProblem, solver: str | None, solver_args: dict[str, Any] | None
                ) -> tuple[SolverOutcome, NDArray[np.float64] | None, NDArray[np.int64], str]:
    if problem.semantics in ("wldp", "both"):
        # DESIGN.md 5: under WLDP the analyst sees precise answers; chi2 is worst-case information.
        binary = problem.k == 2 and problem.l == 2 and set(problem.inputs) == set(problem.frame)
        if binary and (problem.dont_know or problem.dont_know_max) and is_symmetric(problem):
            # Worst case is the lambda = 0 Warner matrix, whose information grows with the truthful
            # mass p: the truthful LP under the same constraints is optimal (DESIGN.md 6).
            out, cols, masks = _solve_linear(problem.replace(objective="truthful"), None, None)
            return out, cols, masks, "linear program (worst-case information of two answers)"
        if problem.dont_know or problem.dont_know_max or problem.lie_max is not None \
                or problem.focal_sets is not None:
            raise InvalidProblemError(
                f"objective 'chi2' under {problem.semantics.upper()} designs a precise (Bayesian) mechanism, "
                "which has no don't-know mass, lying bound or focal-set restriction (solved with those only for "
                "two answers and a uniform prior); drop [structure], use semantics = \"sldp\", or objective "
                "truthful / gain / worst_case_utility"
            )
        return _precise_chi2(problem, solver, solver_args)
    if solver is None and solver_args is None:
        solver_args = STAIRCASE_HIGHS_OPTIONS
    st = staircase_program(problem)
    out = _solve(st.lp, solver=solver, solver_args=solver_args)
    if out.z is None:
        return out, None, st.sets, "staircase LP"
    cols, masks = staircase_mechanism(st, out.z, problem.l)
    return out, cols, masks, "staircase LP"


def design(
    problem: DesignProblem,
    *,
    solver: str | None = None,
    solver_args: dict[str, Any] | None = None,
    symmetrize: bool = True,
    path: str = "auto",
    warm: WarmStart | None = None,
) -> DesignResult:
    """Design the optimal certified mechanism for ``problem`` (DESIGN.md 5).

    .. math:: \\max_M \\sum_{x, E} \\pi_x G[x, E] M[x, E] \\quad \\text{s.t. } M \\ge 0,\\ M 1 = 1,
              \\ \\text{eps-SLDP and/or eps-WLDP, structure}

    (``chi2``: the staircase LP of Kairouz, Oh & Viswanath 2016.)

    Parameters
    ----------
    problem : DesignProblem
    solver : str, optional
        A cvxpy solver name (default ``"HIGHS"``; ``"CLARABEL"`` for large programs).
    solver_args : dict, optional
        Passed to the solver unchanged (e.g. ``{"highs_options": {"solver": "ipm"}}``).
    symmetrize : bool, default True
        Return the orbit average for problems invariant under relabelling (same objective; equal
        per-answer treatment).
    path : {"auto", "general", "symmetric"}
        ``auto`` takes the symmetric (size-class) path for invariant problems with more than
        ``SYMMETRIC_AUTO_INPUTS`` inputs, the general LP otherwise; ``result.path`` says which.
    warm : WarmStart, optional
        A session shared by successive calls (e.g. a sweep over epsilon): linear programs of the same
        shape start from the previous optimal basis (HiGHS simplex, called directly). Only with the
        default solver; the result is certified the same way.

    Returns
    -------
    DesignResult

    Raises
    ------
    InfeasibleDesignError
        With what would make the problem feasible (closed form or bisection).
    InvalidProblemError
        For an objective the semantics does not support.
    CertificationError
        If the solver's answer could not be certified (nothing is released).

    Examples
    --------
    >>> from designer.design import DesignProblem, design
    >>> r = design(DesignProblem(inputs=("yes", "no"), epsilon=1.0, dont_know=0.2))
    >>> round(r.mechanism.row("yes")[("yes",)], 6)  # Cor 3.12: 0.8 e / (e + 1)
    0.584847
    """
    if not isinstance(problem, DesignProblem):
        raise TypeError(f"design() takes a DesignProblem, got {type(problem).__name__}")
    if path not in ("auto", "general", "symmetric"):
        raise ValueError(f"path must be 'auto', 'general' or 'symmetric', got {path!r}")
    if warm is not None and not isinstance(warm, WarmStart):
        raise TypeError(f"warm must be a WarmStart session, got {type(warm).__name__}")
    token = _WARM.set(warm)
    try:
        return _with_warnings(_design(problem, solver, solver_args, symmetrize, path))
    finally:
        _WARM.reset(token)


def _design(problem: DesignProblem, solver: str | None, solver_args: dict[str, Any] | None, symmetrize: bool,
            path: str) -> DesignResult:
    t0 = time.perf_counter()
    symmetric = is_symmetric(problem)
    if path == "symmetric" and not symmetric:
        raise InvalidProblemError(
            "the symmetric path needs a problem invariant under relabelling: inputs equal to the frame's "
            "labels, a uniform prior, and objective and structure that do not single out any answer"
        )
    precise = _precise(problem)
    if not precise and (path == "symmetric" or (path == "auto" and symmetric and problem.k > SYMMETRIC_AUTO_INPUTS)):
        return _design_symmetric(problem, solver, solver_args, t0)
    if problem.l > GENERAL_MAX_INPUTS and problem.focal_sets is None and not precise:
        raise InvalidProblemError(
            f"a frame of {problem.l} answers has 2**{problem.l} candidate sets per input, too many for the "
            f"general path (limit {GENERAL_MAX_INPUTS}); restrict focal_sets, or make the problem symmetric "
            "(uniform prior, inputs = frame) for the size-class path"
        )
    if problem.objective != "chi2":
        nonzeros = program_nonzeros(problem)
        if nonzeros > MAX_NONZEROS:
            raise InvalidProblemError(
                f"the {problem.semantics.upper()} program of '{problem.name or 'the problem'}' would have about "
                f"{nonzeros:.2g} nonzeros (about {nonzeros * 300 / 2**30:.0f} GiB; limit {MAX_NONZEROS:.2g}); "
                "restrict focal_sets, use fewer answers, use semantics = \"sldp\" (no pair rows), or make the "
                "problem symmetric (uniform prior, inputs = frame) for the size-class path"
            )
    outcome, mech, path = _solve_prepared(problem, solver, solver_args, symmetrize)
    allowed = set(problem.family().tolist()) if problem.focal_sets is not None else None
    losses = _losses(problem)
    try:
        released, certificate = certify(mech, problem.epsilon, losses, allowed=allowed)
    except CertificationError:
        # No reference mechanism fits the structure: solve again slightly inside the budget and certify
        # that answer against the original budget.
        for margin in RESOLVE_MARGINS:
            inner = problem.replace(epsilon=problem.epsilon * (1.0 - margin))
            _, mech, path = _solve_prepared(inner, solver, solver_args, symmetrize)
            try:
                released, certificate = certify(mech, problem.epsilon, losses, allowed=allowed)
            except CertificationError:
                continue
            path += f" (re-solved at epsilon * (1 - {margin:g}) to certify)"
            break
        else:
            raise
    return DesignResult(
        problem=problem,
        mechanism=released,
        objective_value=objective_value(problem, released),
        solver_objective=outcome.objective,
        eps_shafer=eps_shafer(released),
        eps_walley=eps_walley(released) if released.l <= sf.MAX_DENSE_FRAME or released.is_bayesian else math.nan,
        variance=float(estimator_variance(released, problem.prior)),
        status=outcome.status,
        solver=outcome.solver,
        path=path,
        certificate=certificate,
        seconds=time.perf_counter() - t0,
    )


def _solve_prepared(problem: DesignProblem, solver: str | None, solver_args: dict[str, Any] | None,
                    symmetrize: bool) -> tuple[SolverOutcome, Mechanism, str]:
    """Solve, explain infeasibility, clean the solver noise and symmetrise: the mechanism to certify."""
    if problem.objective == "chi2":
        outcome, cols, masks, path = _solve_chi2(problem, solver, solver_args)
    else:
        outcome, cols, masks = _solve_linear(problem, solver, solver_args)
        path = "linear program"
    if outcome.status == "infeasible":
        raise InfeasibleDesignError(_explain_infeasible(problem, solver, solver_args))
    if cols is None:
        raise InfeasibleDesignError(
            f"the solver {outcome.solver} did not solve '{problem.name or 'the problem'}' (status "
            f"{outcome.status}); try solver='CLARABEL' or another solver"
        )
    full = (1 << problem.l) - 1
    masks_list = [int(m) for m in masks]
    fixed = problem.dont_know if (problem.dont_know is not None and full in masks_list) else None
    cleaned = clean_solution(cols, fixed_full=fixed,
                             full_index=masks_list.index(full) if fixed is not None else None)
    mech = Mechanism(cleaned, inputs=problem.inputs, frame=problem.frame, focal=masks_list)
    # (the binary WLDP chi2 case with a don't-know mass is solved as a set-valued truthful LP: averaged)
    precise = _precise(problem) and mech.is_bayesian
    if symmetrize and is_symmetric(problem) and not precise:
        # (A precise WLDP design is not averaged: that would merge its outputs and lose information.)
        mech = orbit_average(mech, problem.truth())
        path += " + orbit average"
    return outcome, mech, path


def _design_symmetric(problem: DesignProblem, solver: str | None, solver_args: dict[str, Any] | None,
                      t0: float) -> DesignResult:
    """The size-class path (DESIGN.md 5) for problems invariant under relabelling."""
    lp = symmetric_program(problem)
    outcome = _solve(lp, solver=solver, solver_args=solver_args)
    if outcome.status == "infeasible":
        raise InfeasibleDesignError(_explain_infeasible(problem, solver, solver_args)
                                    if problem.k <= GENERAL_MAX_INPUTS else
                                    f"no {problem.semantics.upper()} mechanism satisfies "
                                    f"'{problem.name or 'the problem'}' at epsilon = {problem.epsilon:g}; "
                                    "raise epsilon or relax the structure")
    if outcome.z is None:
        raise InfeasibleDesignError(f"the solver {outcome.solver} did not solve the size-class program "
                                    f"(status {outcome.status}); try solver='CLARABEL'")
    exact = best_chi2_classes(problem)
    if exact is not None:
        outcome = dataclasses.replace(outcome, z=exact)
    compact = from_solution(problem, outcome.z)
    losses = _losses(problem)
    allowed = problem.focal_sets is None or 1 in {int(m).bit_count() for m in problem.focal_sets}
    worst = max(compact.eps_shafer() if "shafer" in losses else -math.inf,
                compact.eps_walley() if "walley" in losses else -math.inf)
    try:
        released, info = certify_symmetric(compact, problem.epsilon, losses, allow_singletons=allowed)
    except ValueError:
        inner = problem.replace(epsilon=problem.epsilon * (1 - 1e-7))
        compact = from_solution(problem, _solve(symmetric_program(inner), solver=solver,
                                               solver_args=solver_args).z)
        released, info = certify_symmetric(compact, problem.epsilon, losses, allow_singletons=False)
    certificate = Certificate(problem.epsilon, losses, info["method"], info["margin"], info["repaired"],
                              info["mix_weight"], info["reference"], worst - problem.epsilon)
    ca, cb = symmetric_objective(problem)
    if problem.objective == "chi2":
        value = released.chi2()
    else:
        value = float(ca @ released.A + cb @ released.B)
    mechanism = None
    if problem.k <= EXPAND_INPUTS:
        # The per-set masses of the expansion are rounded quotients of the class totals: the released
        # full matrix gets a certificate of its own (exact when small), repaired if the rounding needs it.
        mechanism, certificate = certify(released.to_mechanism(), problem.epsilon, losses)
    return DesignResult(
        problem=problem, mechanism=mechanism, objective_value=value, solver_objective=outcome.objective,
        eps_shafer=released.eps_shafer(), eps_walley=released.eps_walley(), variance=released.variance(),
        status=outcome.status, solver=outcome.solver, path="symmetric size classes", certificate=certificate,
        seconds=time.perf_counter() - t0, compact=released,
    )
