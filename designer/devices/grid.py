"""Optimal designs on a device's grid: every mass a multiple of ``1/D``, certified exactly.

With integer counts ``C[x, E]`` (outcomes of the device that make input ``x`` answer ``E``, ``sum_E C[x, E] =
D``) the design program becomes a mixed-integer program (HiGHS, through ``scipy.optimize.milp``). Privacy is
exact for integers: ``C_x <= e^eps C_x'`` holds for counts up to ``D`` exactly when ``C_x <= r C_x'`` with
``r`` the largest fraction ``a/b <= e^eps`` with ``b <= D`` (any larger fraction with such a denominator exceeds
``e^eps``), and a violated integer row misses by at least ``1/D``, far beyond the solver's tolerance. The
released counts are then checked in exact integer arithmetic (Def 3.1, Def 3.13 with bel/pl as integer sums,
Lemma 3.14). The non-linear ``chi2`` objective is searched around the rounded continuous optimum (an integer
program for the nearest feasible grid design, then single-outcome moves while chi2 improves), with the gap
stated. ``docs/theory.md`` section 11.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._exact import exp_bounds, ratio_at_most_exp
from ..design.problem import DesignProblem
from ..exceptions import CertificationError, InfeasibleDesignError
from ..mechanism import Mechanism
from ..vocabulary import Objective, Semantics
from .device import Device, DeviceError

__all__ = ["CANDIDATE_DENOMINATORS", "GridDesign", "certify_counts", "grid_bound", "grid_design", "is_invariant"]

#: Denominators tried, in order, for "which D comes within 1% of the continuous optimum".
CANDIDATE_DENOMINATORS = (2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 30, 32, 36, 40, 48, 52, 60, 64, 72, 100, 120,
                          128, 200, 256, 360, 500, 512, 1000)
#: Time spent looking for the grid that comes within 1% of the continuous optimum (seconds).
WITHIN_1PCT_SECONDS = 5.0
#: Time limit of one integer program (seconds).
MILP_TIME_LIMIT = 60.0


def grid_bound(eps: float, denominator: int) -> Fraction:
    """The largest fraction ``a/b <= e^eps`` with ``1 <= b <= denominator`` (exact)."""
    if eps >= 40:  # e^eps exceeds any count ratio: only "zero follows zero" remains
        return Fraction(denominator + 1)
    lo = exp_bounds(eps)[0]  # below e^eps by ~1e-60 relative: no fraction with b <= D fits in between
    best_a, best_b = 0, 1
    for b in range(1, denominator + 1):
        a = (lo.numerator * b) // lo.denominator
        if a * best_b > best_a * b:
            best_a, best_b = a, b
    return Fraction(best_a, best_b)


@dataclass(frozen=True)
class GridDesign:
    """A design on a device's grid.

    Attributes
    ----------
    device : Device
    counts : (k, F) int ndarray
        Outcomes per input and focal set (rows sum to ``D``).
    mechanism : Mechanism
        The masses ``counts / D`` (floats; ``matrix_exact`` holds the exact fractions).
    objective_value, continuous_objective_value : float
        The grid design's objective and the certified continuous optimum's.
    variance, continuous_variance : float
        Reported variances (per respondent, at the prior) of both.
    optimal : bool
        Proven optimal on the grid (HiGHS's MIP gap 0); False for ``chi2`` (a local search).
    symmetric : bool
        Whether the released counts are invariant under relabelling.
    notes : tuple of str
    within_1pct : int or None
        The smallest candidate ``D`` whose grid optimum is within 1% of the continuous objective.
    """

    device: Device
    problem: DesignProblem
    counts: NDArray[np.int64]
    mechanism: Mechanism
    objective_value: float
    continuous_objective_value: float
    variance: float
    continuous_variance: float
    optimal: bool
    symmetric: bool
    notes: tuple[str, ...]
    within_1pct: int | None

    @property
    def matrix_exact(self) -> list[list[str]]:
        """The masses as reduced fractions ``"a/b"`` (``"0/1"`` for 0)."""
        d = self.device.denominator
        return [[f"{Fraction(int(c), d).numerator}/{Fraction(int(c), d).denominator}" for c in row]
                for row in self.counts]

    @property
    def focal_sets(self) -> list[tuple[str, ...]]:
        """The answer sets of the columns of ``counts`` (every set the problem allows, zero columns included)."""
        frame = self.problem.frame
        return [tuple(frame[i] for i in range(len(frame)) if int(m) >> i & 1) for m in self.problem.family()]

    @property
    def objective_cost(self) -> float:
        """Relative objective lost to the grid: ``1 - grid / continuous`` (0 when nothing is lost)."""
        c = self.continuous_objective_value
        return 0.0 if c == 0 else 1.0 - self.objective_value / c

    @property
    def variance_ratio(self) -> float:
        return self.variance / self.continuous_variance if self.continuous_variance > 0 else math.nan


class _Program:
    """The constraint rows of a problem on the grid, as integer data (shared by the MILP and the checks)."""

    def __init__(self, problem: DesignProblem, denominator: int) -> None:
        self.problem, self.d = problem, denominator
        self.family = np.asarray(problem.family(), dtype=np.int64)
        self.k, self.f = problem.k, len(self.family)
        self.bound = grid_bound(problem.epsilon, denominator)
        full = (1 << problem.l) - 1
        self.full = np.flatnonzero(self.family == full)
        self.truth = problem.truth()
        events = np.arange(1, full, dtype=np.int64)
        self.inter = ((events[:, None] & self.family[None, :]) != 0).astype(np.int64)  # (E, F): F meets E
        self.inside = ((self.family[None, :] & ~events[:, None]) == 0).astype(np.int64)  # (E, F): F within E
        self.sldp = problem.semantics in (Semantics.SLDP, Semantics.BOTH)
        self.wldp = problem.semantics in (Semantics.WLDP, Semantics.BOTH)

    def _structure(self) -> tuple[int | None, int | None, int | None]:
        p, d = self.problem, self.d
        exact = None
        if p.dont_know is not None:
            value = p.dont_know * d
            if abs(value - round(value)) > 1e-9:
                raise DeviceError(self._dont_know_advice(p.dont_know))
            exact = round(value)
        cap = math.floor(p.dont_know_max * d + 1e-9) if p.dont_know_max is not None else None
        lie = math.floor(p.lie_max * d + 1e-9) if p.lie_max is not None else None
        return exact, cap, lie

    def _dont_know_advice(self, mass: float) -> str:
        d = self.d
        low, high = math.floor(mass * d), math.ceil(mass * d)
        works = [name for name, size in (("die", 6), ("dice2", 36), ("cards", 52), ("spinner:10", 10),
                                          ("spinner:20", 20), ("coins:4", 16), ("spinner:100", 100))
                 if abs(mass * size - round(mass * size)) <= 1e-9]
        fits = ", ".join(works) if works else f"spinner:{Fraction(mass).limit_denominator(10**6).denominator}"
        return (f"an exact don't-know mass of {mass:g} is not a multiple of 1/{d}: the nearest feasible values "
                f"are {low}/{d} ({low / d:.4g}) or {high}/{d} ({high / d:.4g}); or use a device whose outcomes "
                f"divide it: {fits}")

    def milp_parts(self) -> tuple[Any, list[Any]]:
        """``(bounds, constraints)`` for ``scipy.optimize.milp`` (variables: counts, row-major)."""
        from scipy.optimize import Bounds, LinearConstraint
        from scipy.sparse import coo_matrix, csr_matrix, kron, vstack
        from scipy.sparse import eye as speye

        k, f, d = self.k, self.f, self.d
        n = k * f
        r = float(self.bound)
        upper = np.full(n, float(d))
        lower = np.zeros(n)
        exact, cap, lie = self._structure()
        rows: list[Any] = [kron(speye(k), np.ones((1, f)))]
        lo, hi = [np.full(k, float(d))], [np.full(k, float(d))]
        for j in self.full:
            for x in range(k):
                if exact is not None:
                    lower[x * f + j] = upper[x * f + j] = exact
                elif cap is not None:
                    upper[x * f + j] = min(upper[x * f + j], cap)
        if lie is not None:
            data = np.zeros((k, n))
            for x in range(k):
                t = self.truth[x]
                if t >= 0:
                    data[x, x * f:(x + 1) * f] = ((self.family >> t) & 1) == 0
            rows.append(csr_matrix(data))
            lo.append(np.full(k, -np.inf))
            hi.append(np.full(k, float(lie)))
        pairs = [(x, y) for x in range(k) for y in range(k) if x != y]
        if self.sldp:
            r_eff = min(r, 2.0 * d)  # beyond D a ratio bound only says "zero follows zero"
            blocks = []
            for x, y in pairs:
                sel = np.zeros((1, k))
                sel[0, x] = 1.0
                other = np.zeros((1, k))
                other[0, y] = -r_eff
                blocks.append(kron(csr_matrix(sel + other), speye(f)))
            rows.append(vstack(blocks))
            lo.append(np.full(len(pairs) * f, -np.inf))
            hi.append(np.zeros(len(pairs) * f))
        if self.wldp:
            e = self.inter.shape[0]
            blocks = []
            for x, y in pairs:
                block = np.zeros((e, n))
                block[:, x * f:(x + 1) * f] = self.inter
                block[:, y * f:(y + 1) * f] -= min(r, 4.0 * d) * self.inside
                blocks.append(coo_matrix(block))
            rows.append(vstack(blocks))
            lo.append(np.full(len(pairs) * e, -np.inf))
            hi.append(np.zeros(len(pairs) * e))
        matrix = vstack([csr_matrix(m) for m in rows]).tocsr()
        return Bounds(lower, upper), [LinearConstraint(matrix, np.concatenate(lo), np.concatenate(hi))]

    def symmetry_rows(self) -> Any:
        """Equalities ``C[s(x), s(E)] = C[x, E]`` for a transposition and a cycle of the labels (they generate
        every relabelling)."""
        from scipy.optimize import LinearConstraint
        from scipy.sparse import coo_matrix

        k, f = self.k, self.f
        where = {int(m): j for j, m in enumerate(self.family)}
        rows, cols, vals = [], [], []
        count = 0
        for perm in ([1, 0, *range(2, k)], [*range(1, k), 0]):
            for x in range(k):
                for j, m in enumerate(self.family):
                    image = sum(1 << perm[i] for i in range(self.problem.l) if int(m) >> i & 1)
                    jj = where.get(image)
                    if jj is None:
                        continue
                    rows += [count, count]
                    cols += [x * f + j, perm[x] * f + jj]
                    vals += [1.0, -1.0]
                    count += 1
        matrix = coo_matrix((vals, (rows, cols)), shape=(count, k * f)).tocsr()
        return LinearConstraint(matrix, np.zeros(count), np.zeros(count))

    def feasible(self, counts: NDArray[np.int64]) -> bool:
        """Every constraint, in exact integer arithmetic."""
        a, b = self.bound.numerator, self.bound.denominator
        exact, cap, lie = self._structure()
        if np.any(counts < 0) or np.any(counts.sum(axis=1) != self.d):
            return False
        for j in self.full:
            col = counts[:, j]
            if (exact is not None and np.any(col != exact)) or (cap is not None and np.any(col > cap)):
                return False
        if lie is not None:
            for x in range(self.k):
                t = self.truth[x]
                if t >= 0 and counts[x, ((self.family >> t) & 1) == 0].sum() > lie:
                    return False
        big = counts.astype(object)
        if self.sldp:
            lhs, rhs = big[:, None, :] * b, big[None, :, :] * a  # (x, y, F): C_x b <= a C_y
            if np.any(lhs > rhs):
                return False
        if self.wldp:
            pl, bel = (counts @ self.inter.T).astype(object), (counts @ self.inside.T).astype(object)
            off = ~np.eye(self.k, dtype=bool)
            if np.any((pl[:, None, :] * b > bel[None, :, :] * a)[off]):
                return False
        return True


def certify_counts(problem: DesignProblem, counts: NDArray[np.int64], denominator: int) -> None:
    """Raise :class:`CertificationError` unless the counts meet the budget and the structure exactly: every
    loss ratio is decided against ``e^eps`` with integers (Def 3.1; Def 3.13 through Lemma 3.14)."""
    program = _Program(problem, denominator)
    eps = problem.epsilon
    if program.sldp:
        for x in range(program.k):
            for y in range(program.k):
                for cx, cy in zip(counts[x], counts[y]):
                    if x != y and not ratio_at_most_exp(int(cx), int(cy), eps):
                        raise CertificationError(f"the grid design breaks the Shafer budget: {cx}/{cy} > e^{eps:g}")
    if program.wldp:
        pl, bel = counts @ program.inter.T, counts @ program.inside.T
        for x in range(program.k):
            for y in range(program.k):
                if x != y and not all(ratio_at_most_exp(int(p), int(q), eps) for p, q in zip(pl[x], bel[y])):
                    raise CertificationError("the grid design breaks the Walley budget")
    if not program.feasible(counts):
        raise CertificationError("the grid design breaks a structure constraint of the problem")


def _solve(program: _Program, c: NDArray[np.float64], symmetric: bool) -> NDArray[np.int64] | None:
    from scipy.optimize import milp

    bounds, constraints = program.milp_parts()
    if symmetric:
        constraints.append(program.symmetry_rows())
    res = milp(c, integrality=np.ones(c.size), bounds=bounds, constraints=constraints,
               options={"time_limit": MILP_TIME_LIMIT, "mip_rel_gap": 0.0, "disp": False})
    if res.x is None:
        return None
    counts = np.rint(res.x).astype(np.int64).reshape(program.k, program.f)
    return counts if program.feasible(counts) else None


def _linear_grid(program: _Program, problem: DesignProblem, symmetric: bool) -> NDArray[np.int64] | None:
    from ..design.objectives import objective_matrix

    c = -objective_matrix(problem, program.family).ravel() / program.d
    return _solve(program, c, symmetric)


def _chi2_grid(program: _Program, problem: DesignProblem, target: NDArray[np.float64], symmetric: bool
               ) -> NDArray[np.int64] | None:
    """The feasible grid design nearest (L1) the continuous optimum, then one-outcome moves while chi2 grows."""
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import csr_matrix, hstack, vstack
    from scipy.sparse import eye as speye


    bounds, constraints = program.milp_parts()
    if symmetric:
        constraints.append(program.symmetry_rows())
    n = program.k * program.f
    goal = (target * program.d).ravel()
    # variables (C, t): t >= |C - goal|
    lifted = [LinearConstraint(hstack([c.A, csr_matrix((c.A.shape[0], n))]).tocsr(), c.lb, c.ub) for c in constraints]
    eye = speye(n)
    lifted.append(LinearConstraint(vstack([hstack([eye, -eye]), hstack([-eye, -eye])]).tocsr(),
                                   np.concatenate([np.full(n, -np.inf), np.full(n, -np.inf)]),
                                   np.concatenate([goal, -goal])))
    res = milp(np.concatenate([np.zeros(n), np.ones(n)]), integrality=np.concatenate([np.ones(n), np.zeros(n)]),
               bounds=Bounds(np.concatenate([bounds.lb, np.zeros(n)]), np.concatenate([bounds.ub, np.full(n, np.inf)])),
               constraints=lifted, options={"time_limit": MILP_TIME_LIMIT, "disp": False})
    if res.x is None:
        return None
    counts = np.rint(res.x[:n]).astype(np.int64).reshape(program.k, program.f)
    if not program.feasible(counts) or symmetric:
        return counts if program.feasible(counts) else None
    return _climb(program, problem, counts)


def _climb(program: _Program, problem: DesignProblem, counts: NDArray[np.int64]) -> NDArray[np.int64]:
    """Best-improvement moves of one outcome between answers of one input while chi2 grows and every share
    stays identified (a chi2 optimum at a skewed prior may lump inputs; the grid design must not start to)."""
    from ..design.objectives import objective_value
    from ..estimation import column_information

    pi, d = problem.prior, program.d
    sldp = problem.semantics is Semantics.SLDP

    def total(cts: NDArray[np.int64]) -> float:
        if sldp:
            return float(column_information(cts / d, pi).sum())
        return objective_value(problem, _mechanism(problem, program, cts))

    def full_rank(cts: NDArray[np.int64]) -> bool:
        return bool(np.linalg.matrix_rank(cts.astype(float)) == program.k)

    if not full_rank(counts):  # first make every share identified, at the least cost in chi2
        repaired = [t for t in _moves(program, counts) if program.feasible(t) and full_rank(t)]
        if repaired:
            counts = max(repaired, key=total)
    identified = full_rank(counts)
    best = total(counts)
    for _ in range(10 * program.k * d):
        move, gain = None, 1e-12 * max(1.0, abs(best))
        base = column_information(counts / d, pi) if sldp else None
        for x in range(program.k):
            for j in np.flatnonzero(counts[x]):
                for jj in range(program.f):
                    if jj == j:
                        continue
                    trial = counts.copy()
                    trial[x, j] -= 1
                    trial[x, jj] += 1
                    if sldp:
                        assert base is not None
                        pair = [int(j), int(jj)]
                        new = column_information(trial[:, pair] / d, pi).sum() - base[pair].sum()
                        g = float(new)
                    else:
                        g = total(trial) - best
                    if g > gain and program.feasible(trial) and (
                            not identified or np.linalg.matrix_rank(trial.astype(float)) == program.k):
                        move, gain = trial, g
        if move is None:
            break
        counts, best = move, total(move)
    return counts


def _moves(program: _Program, counts: NDArray[np.int64]) -> list[NDArray[np.int64]]:
    """Every design one outcome away (one input moves one outcome to another answer)."""
    out = []
    for x in range(program.k):
        for j in np.flatnonzero(counts[x]):
            for jj in range(program.f):
                if jj != j:
                    trial = counts.copy()
                    trial[x, j] -= 1
                    trial[x, jj] += 1
                    out.append(trial)
    return out


def _mechanism(problem: DesignProblem, program: _Program, counts: NDArray[np.int64]) -> Mechanism:
    return Mechanism(counts / program.d, inputs=problem.inputs, frame=problem.frame,
                     focal=[int(m) for m in program.family])


def _best(problem: DesignProblem, device: Device, target: NDArray[np.float64] | None
          ) -> tuple[NDArray[np.int64] | None, bool, list[str]]:
    """The best grid counts, whether proven optimal, and notes (symmetry)."""
    from ..design.objectives import objective_value
    from ..design.symmetry import is_symmetric

    program = _Program(problem, device.denominator)
    linear = problem.objective is not Objective.CHI2

    def solve(symmetric: bool) -> NDArray[np.int64] | None:
        if linear:
            return _linear_grid(program, problem, symmetric)
        assert target is not None
        return _chi2_grid(program, problem, target, symmetric)

    free = solve(False)
    notes: list[str] = []
    if free is None or not is_symmetric(problem):
        return free, linear, notes
    sym = solve(True)

    def val(c: NDArray[np.int64]) -> float:
        return objective_value(problem, _mechanism(problem, program, c))

    if sym is not None and val(sym) >= val(free) - 1e-12:
        return sym, linear, notes
    if sym is None:
        notes.append(f"no grid design with 1/{device.denominator} steps is symmetric under relabelling: the "
                     "released one is not")
    else:
        notes.append(f"the best grid design is not symmetric: the best symmetric one reaches {val(sym):.6g} "
                     f"({100 * (1 - val(sym) / val(free)):.3g}% lower)")
    return free, linear, notes


def grid_design(problem: DesignProblem, device: Device, *, find_within_1pct: bool = True) -> GridDesign:
    """The best design of ``problem`` with every mass a multiple of ``1 / device.denominator``, certified.

    Linear objectives are solved to proven optimality (MIP gap 0); ``chi2`` is searched around the rounded
    continuous optimum. Raises :class:`DeviceError` (an exact don't-know mass off the grid, with the nearest
    feasible values) or :class:`InfeasibleDesignError` when no grid design meets the problem.
    """
    from ..design.engine import design
    from ..design.objectives import objective_value, reported_variance

    continuous = design(problem)
    target = None
    if problem.objective is Objective.CHI2 and continuous.mechanism is not None:
        cols = {int(m): j for j, m in enumerate(continuous.mechanism.focal)}
        target = np.zeros((problem.k, len(problem.family())))
        for j, m in enumerate(problem.family()):
            if int(m) in cols:
                target[:, j] = continuous.mechanism.matrix[:, cols[int(m)]]
    counts, optimal, notes = _best(problem, device, target)
    if counts is None:
        raise InfeasibleDesignError(f"no design with masses in steps of 1/{device.denominator} ({device.name}) meets "
                                    "the problem's budget and structure; try a device with more outcomes")
    certify_counts(problem, counts, device.denominator)
    program = _Program(problem, device.denominator)
    mech = _mechanism(problem, program, counts)
    value = objective_value(problem, mech)
    within = None
    if find_within_1pct:
        within = _within_1pct(problem, continuous.objective_value, target)
    sym = is_invariant(problem, program, counts)
    return GridDesign(device, problem, counts, mech, value, continuous.objective_value,
                      reported_variance(problem, mech)[0], continuous.variance, optimal, sym, tuple(notes), within)


def is_invariant(problem: DesignProblem, program: _Program, counts: NDArray[np.int64]) -> bool:
    from ..design.symmetry import is_symmetric

    if not is_symmetric(problem):
        return False
    values = program.symmetry_rows().A @ counts.ravel()
    return bool(np.all(values == 0))


def _within_1pct(problem: DesignProblem, continuous: float, target: NDArray[np.float64] | None) -> int | None:
    import time

    from ..design.objectives import objective_value

    start = time.perf_counter()
    for d in CANDIDATE_DENOMINATORS:
        if time.perf_counter() - start > WITHIN_1PCT_SECONDS:
            return None
        try:
            counts, _, _ = _best(problem, Device(f"grid:{d}", d), target)
        except DeviceError:
            continue
        if counts is None:
            continue
        program = _Program(problem, d)
        if objective_value(problem, _mechanism(problem, program, counts)) >= 0.99 * continuous - 1e-12:
            return d
    return None

