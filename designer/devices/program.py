"""The integer data of a design problem on a grid of ``D`` outcomes: bounds, privacy and structure rows,
symmetry equalities, and exact feasibility (``docs/theory.md`` section 11)."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._internal.exact import exp_bounds, ratio_at_most_exp
from ..certificate import Certificate
from ..exceptions import CertificationError
from ..mechanism import Mechanism
from ..optimal.problem import DesignProblem
from ..vocabulary import Semantics
from .device import DeviceError

__all__ = ["GridProgram", "certify_counts", "certify_grid", "grid_bound", "grid_mechanism", "snap_count"]


def grid_bound(eps: float, denominator: int) -> Fraction:
    """The largest fraction ``a/b <= e^eps`` with ``1 <= b <= denominator`` (exact).

    Examples
    --------
    The largest fraction with denominator at most 10 not above ``e``:

    >>> from designer import devices
    >>> devices.grid_bound(1.0, 10)
    Fraction(19, 7)
    """
    if eps >= 40:  # e^eps exceeds any count ratio: only "zero follows zero" remains
        return Fraction(denominator + 1)
    lo = exp_bounds(eps)[0]  # below e^eps by ~1e-60 relative: no fraction with b <= D fits in between
    best_a, best_b = 0, 1
    for b in range(1, denominator + 1):
        a = (lo.numerator * b) // lo.denominator
        if a * best_b > best_a * b:
            best_a, best_b = a, b
    return Fraction(best_a, best_b)


def snap_count(mass: float, d: int) -> int | None:
    """The count ``c`` with ``c / d`` the mass a person meant by ``mass``, or ``None``.

    ``mass * d`` within 1e-9 of an integer is that integer (a fraction such as 7/36 read as a float). Otherwise
    ``mass`` is read as the decimal it is written as (its shortest ``repr``, e.g. ``0.1944``): when exactly one
    multiple of ``1 / d`` rounds to it at that many decimals, that multiple; when none or several do (``0.2``
    on 36 outcomes lies within 0.05 of both 7/36 and 8/36), ``None``.
    """
    value = mass * d
    if abs(value - round(value)) <= 1e-9:
        return round(value)
    text = repr(float(mass))
    if "e" in text or "." not in text:
        return None
    written = Fraction(text)
    half = Fraction(1, 2 * 10 ** len(text.split(".")[1]))
    near = [c for c in range(math.floor(written * d) - 1, math.ceil(written * d) + 2)
            if 0 <= c <= d and abs(Fraction(c, d) - written) <= half]
    return near[0] if len(near) == 1 else None


class GridProgram:
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
            exact = snap_count(p.dont_know, d)
            if exact is None:
                raise DeviceError(self._dont_know_advice(p.dont_know))
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
                f"are {low}/{d} ({low / d:.4g}) or {high}/{d} ({high / d:.4g}), written as such (--dont-know "
                f"{low}/{d}, or dont_know = {low / d!r} in the file); or use a device whose outcomes divide it: {fits}")

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
        if not self.structure_ok(counts):
            return False
        a, b = self.bound.numerator, self.bound.denominator
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

    def structure_ok(self, counts: NDArray[np.int64]) -> bool:
        """Counts, row sums, don't-know and lying bounds, in integers (no privacy rows)."""
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
        return True


def certify_counts(problem: DesignProblem, counts: NDArray[np.int64], denominator: int) -> Certificate:
    """The certificate of grid counts, the same :class:`~designer.optimal.certify.Certificate` as every released
    design: every loss ratio decided against ``e^eps`` with integers (Def 3.1; Def 3.13 through Lemma 3.14) and
    the structure checked in integers. Raises :class:`CertificationError` naming the broken rule.

    Examples
    --------
    >>> import designer
    >>> from designer import devices
    >>> spinner = devices.parse_device("spinner:10")
    >>> problem = designer.DesignProblem(inputs=("yes", "no"), epsilon=1.0, dont_know=0.2, objective="truthful")
    >>> grid = devices.grid_design(problem, spinner)
    >>> devices.certify_counts(problem, grid.counts, 10).describe()
    '1-private (Shafer loss), checked exactly (integer counts over 10)'
    """
    program = GridProgram(problem, denominator)
    return certify_grid(program, problem, counts, grid_mechanism(problem, program, counts))


def certify_grid(program: GridProgram, problem: DesignProblem, counts: NDArray[np.int64],
                 mechanism: Mechanism) -> Certificate:
    """:func:`certify_counts` for a grid program already built and its ``mechanism`` (``counts / D``): the
    exact check runs on the integers, the certificate's float violation on the mechanism."""
    from ..privacy import worst_case

    denominator = program.d
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
    if not program.structure_ok(counts):  # privacy was decided above against e^eps itself
        raise CertificationError("the grid design breaks a structure constraint of the problem")
    losses = problem.semantics.losses
    float_loss = max(worst_case(mechanism, loss.value).eps for loss in losses)
    return Certificate(epsilon=eps, losses=losses, violation=float_loss - eps,
                       arithmetic=f"integer counts over {denominator}")


def grid_mechanism(problem: DesignProblem, program: GridProgram, counts: NDArray[np.int64]) -> Mechanism:
    return Mechanism(counts / program.d, inputs=problem.inputs, frame=problem.frame,
                     focal=[int(m) for m in program.family])


