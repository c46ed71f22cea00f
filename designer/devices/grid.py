"""Optimal designs on a device's grid: every mass a multiple of ``1/D``, certified exactly.

With integer counts ``C[x, E]`` (outcomes of the device that make input ``x`` answer ``E``, ``sum_E C[x, E] =
D``) the design program becomes a mixed-integer program (HiGHS, through ``scipy.optimize.milp``). Privacy is
exact for integers: ``C_x <= e^eps C_x'`` holds for counts up to ``D`` exactly when ``C_x <= r C_x'`` with
``r`` the largest fraction ``a/b <= e^eps`` with ``b <= D`` (any larger fraction with such a denominator exceeds
``e^eps``), and a violated integer row misses by at least ``1/D``, far beyond the solver's tolerance. The
released counts are then checked in exact integer arithmetic (Def 3.1, Def 3.13 with bel/pl as integer sums,
Lemma 3.14). The non-linear objectives (``chi2``, the variances) are searched around the rounded continuous optimum
(an integer program for the nearest feasible grid design, then single-outcome moves while the objective improves),
with the gap
stated. ``docs/theory.md`` section 11.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..certificate import Certificate
from ..exceptions import InfeasibleDesignError
from ..mechanism import Mechanism
from ..optimal.problem import DesignProblem
from ..results import FitStatus, Result, TableData
from .device import Device, DeviceError
from .program import GridProgram, certify_counts, certify_grid, grid_bound, grid_mechanism, snap_count
from .search import MILP_NODE_LIMIT, GridSearch, chi2_grid, run_milp

__all__ = ["CANDIDATE_DENOMINATORS", "GridDesign", "certify_counts", "grid_bound", "grid_design", "is_invariant"]

#: Denominators tried, in order, for "which D comes within 1% of the continuous optimum".
CANDIDATE_DENOMINATORS = (2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 30, 32, 36, 40, 48, 52, 60, 64, 72, 100, 120,
                          128, 200, 256, 360, 500, 512, 1000)
#: Branch-and-bound nodes spent, over all candidates, looking for the grid that comes within 1% of the
#: continuous optimum: work, not time, so the answer is the same on any machine.
WITHIN_1PCT_NODES = 60


@dataclass(frozen=True)
class GridDesign(Result):
    """A design on a device's grid, a :class:`~designer.results.Result`.

    ``status`` is :attr:`FitStatus.OPTIMAL <designer.results.FitStatus.OPTIMAL>` when the counts are proven
    optimal on the grid (MIP gap 0) and :attr:`FitStatus.NOT_CONVERGED <designer.results.FitStatus.NOT_CONVERGED>`
    when the search stopped short of a proof (``chi2``'s local search, or the node limit), with a warning saying
    so; either way the counts are certified in exact arithmetic. ``to_dict()`` is ``designer design --device
    --format json``, ``table()`` its CSV (the mechanism) and ``summary()`` its table output.

    Attributes
    ----------
    device : Device
    counts : (k, F) int ndarray
        Outcomes per input and focal set (rows sum to ``D``).
    mechanism : Mechanism
        The masses ``counts / D`` (floats; ``matrix_exact`` holds the exact fractions).
    objective_value, continuous_objective_value : float
        The grid design's objective and the certified continuous optimum's.
    variance, continuous_variance : float or None
        Reported variances (per respondent, at the prior) of both; ``None`` where the figure could not be
        computed (``variance_reason`` says why; the design is released all the same).
    optimal : bool
        Proven optimal on the grid (HiGHS's MIP gap 0); False for ``chi2`` (a local search).
    symmetric : bool
        Whether the released counts are invariant under relabelling.
    notes : tuple of str
    within_1pct : int or None
        The smallest candidate ``D`` whose grid optimum is within 1% of the continuous objective; ``None`` when
        none is found within :data:`WITHIN_1PCT_NODES` branch-and-bound nodes.
    certificate : Certificate
        The exact check of the counts (:func:`~designer.devices.program.certify_counts`), the same kind of
        certificate as every released design's.
    variance_kind : str
        A key of :data:`~designer.optimal.objectives.VARIANCE_KINDS`.
    variance_reason : str
        Why ``variance`` is ``None`` (empty otherwise).

    Examples
    --------
    >>> import designer
    >>> from designer import devices
    >>> spinner = devices.parse_device("spinner:10")
    >>> problem = designer.DesignProblem(inputs=("yes", "no"), epsilon=1.0, dont_know=0.2, objective="truthful")
    >>> grid = devices.grid_design(problem, spinner)
    >>> grid.symmetric, grid.within_1pct  # the best design is not symmetric; 60 outcomes come within 1%
    (False, 60)
    >>> grid.certificate.describe()
    '1-private (Shafer loss), checked exactly (integer counts over 10)'
    """

    device: Device
    problem: DesignProblem
    counts: NDArray[np.int64]
    mechanism: Mechanism
    objective_value: float
    continuous_objective_value: float
    variance: float | None
    continuous_variance: float | None
    optimal: bool
    symmetric: bool
    notes: tuple[str, ...]
    within_1pct: int | None
    certificate: Certificate
    variance_kind: str = "sldp_mle"
    variance_reason: str = ""
    status: FitStatus = FitStatus.OPTIMAL
    warnings: tuple[str, ...] = ()

    title = "Design on a device"

    def __post_init__(self) -> None:
        if not self.optimal:
            object.__setattr__(self, "status", FitStatus.NOT_CONVERGED)
        if not self.optimal and not self.warnings:
            object.__setattr__(self, "warnings", ("the grid design is not proven optimal: "
                                                  + ("the best found around the rounded continuous optimum"
                                                     if not self.problem.objective.linear
                                                     else "the search stopped at its node limit"),))
        self._check_status()

    def to_dict(self) -> dict[str, Any]:
        """The design as ``designer design --device ... --format json`` writes it."""
        from .grid_text import grid_object

        return grid_object(self)

    def table(self) -> TableData:
        """The mechanism's CSV table (``input`` and a column per answer set used; ``--format csv``)."""
        return ["input", *self.mechanism.columns], [[x, *(float(v) for v in row)] for x, row in
                                                    zip(self.mechanism.inputs, self.mechanism.matrix)]

    def summary(self, instructions: str | os.PathLike[str] | None = None) -> str:
        """The table output of ``designer design --device``: with ``instructions`` (the file they were written
        to) a line naming it, else the respondent's instructions in text."""
        from .grid_text import grid_lines

        return grid_lines(self, instructions)

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
        """Relative objective lost to the grid: ``1 - grid / continuous``, for a variance objective (made small)
        ``grid / continuous - 1`` (0 when nothing is lost)."""
        c = self.continuous_objective_value
        if c == 0:
            return 0.0
        return self.objective_value / c - 1.0 if self.problem.objective.minimised else 1.0 - self.objective_value / c

    @property
    def variance_ratio(self) -> float | None:
        if self.variance is None or self.continuous_variance is None:
            return None
        return self.variance / self.continuous_variance if self.continuous_variance > 0 else math.nan


@dataclass(frozen=True)
class _Search:
    """The best grid counts found on ``program``, whether proven optimal, notes (symmetry, node limit), and the
    branch-and-bound nodes it took."""

    program: GridProgram
    counts: NDArray[np.int64] | None
    proven: bool
    notes: tuple[str, ...]
    nodes: int


def _linear_grid(program: GridProgram, problem: DesignProblem, symmetric: bool, node_limit: int) -> GridSearch:
    """The grid optimum of a linear objective (MIP gap 0)."""
    from ..optimal.objectives import objective_matrix

    c = -objective_matrix(problem, program.family).ravel() / program.d
    bounds, constraints = program.milp_parts()
    if symmetric:
        constraints.append(program.symmetry_rows())
    res = run_milp(c, np.ones(c.size), bounds, constraints, node_limit=node_limit)
    if res.x is None:
        return GridSearch(None, False, res.nodes)
    counts = np.rint(res.x).astype(np.int64).reshape(program.k, program.f)
    return GridSearch(counts, res.proven, res.nodes) if program.feasible(counts) else GridSearch(None, False, res.nodes)


def _best(problem: DesignProblem, device: Device, target: NDArray[np.float64] | None, *,
          node_limit: int = MILP_NODE_LIMIT) -> _Search:
    """The best grid counts of ``problem`` on ``device`` (each integer program within ``node_limit`` nodes)."""
    from ..optimal.objectives import objective_value
    from ..optimal.symmetry import is_symmetric

    program = GridProgram(problem, device.denominator)
    linear = problem.objective.linear
    spent = 0

    def solve(symmetric: bool) -> tuple[NDArray[np.int64] | None, bool]:
        nonlocal spent
        if linear:
            found = _linear_grid(program, problem, symmetric, node_limit)
        else:
            assert target is not None
            found = chi2_grid(program, problem, target, symmetric, node_limit=node_limit)
        spent += found.nodes
        return found.counts, found.proven

    free, proven = solve(False)
    notes: list[str] = []
    if linear and free is not None and not proven:
        notes.append(f"the grid optimum is not proven: the integer program stopped at its limit of {node_limit:,} "
                     "branch-and-bound nodes with the best design found so far")
    if free is None or not is_symmetric(problem):
        return _Search(program, free, proven, tuple(notes), spent)
    sym, _ = solve(True)

    sign = -1.0 if problem.objective.minimised else 1.0

    def val(c: NDArray[np.int64]) -> float:
        return objective_value(problem, grid_mechanism(problem, program, c))

    if sym is not None and sign * val(sym) >= sign * val(free) - 1e-12:
        return _Search(program, sym, proven, tuple(notes), spent)
    if sym is None:
        notes.append(f"no grid design with 1/{device.denominator} steps is symmetric under relabelling: the "
                     "released one is not")
    else:
        worse = abs(1 - val(sym) / val(free)) * 100
        notes.append(f"the best grid design is not symmetric: the best symmetric one reaches {val(sym):.6g} "
                     f"({worse:.3g}% {'higher' if problem.objective.minimised else 'lower'})")
    return _Search(program, free, proven, tuple(notes), spent)


def grid_design(problem: DesignProblem, device: Device, *, find_within_1pct: bool = True) -> GridDesign:
    """The best design of ``problem`` with every mass a multiple of ``1 / device.denominator``, certified.

    Linear objectives are solved to proven optimality (MIP gap 0); ``chi2`` is searched around the rounded
    continuous optimum. Raises :class:`DeviceError` (an exact don't-know mass off the grid, with the nearest
    feasible values) or :class:`InfeasibleDesignError` when no grid design meets the problem.

    Examples
    --------
    GWRR with don't-know mass 0.2 on a spinner of ten sectors (the don't-know mass is two sectors), proven optimal
    on the grid and certified with integers:

    >>> import designer
    >>> from designer import devices
    >>> spinner = devices.parse_device("spinner:10")
    >>> problem = designer.DesignProblem(inputs=("yes", "no"), epsilon=1.0, dont_know=0.2, objective="truthful")
    >>> grid = devices.grid_design(problem, spinner)
    >>> grid.counts.tolist()  # sectors per answer {yes}, {no}, {yes,no}, for a yes and for a no
    [[6, 2, 2], [3, 5, 2]]
    >>> grid.objective_value, grid.optimal, round(grid.continuous_objective_value, 4)
    (0.55, True, 0.5848)
    """
    from ..optimal.engine import design
    from ..optimal.objectives import objective_value, variance_figure

    problem, snapped = _snap_dont_know(problem, device)
    continuous = design(problem)
    target = None
    if not problem.objective.linear and continuous.mechanism is not None:
        cols = {int(m): j for j, m in enumerate(continuous.mechanism.focal)}
        target = np.zeros((problem.k, len(problem.family())))
        for j, m in enumerate(problem.family()):
            if int(m) in cols:
                target[:, j] = continuous.mechanism.matrix[:, cols[int(m)]]
    search = _best(problem, device, target)
    counts, optimal, notes = search.counts, search.proven, list(search.notes)
    if counts is None:
        raise InfeasibleDesignError(f"no design with masses in steps of 1/{device.denominator} ({device.name}) meets "
                                    "the problem's budget and structure; try a device with more outcomes")
    mech = grid_mechanism(problem, search.program, counts)
    certificate = certify_grid(search.program, problem, counts, mech)
    value = objective_value(problem, mech)
    within = None
    if find_within_1pct:
        within = _within_1pct(problem, continuous.objective_value, target)
    sym = is_invariant(problem, search.program, counts)
    variance, kind, reason = variance_figure(problem, mech)
    cost = _variance_cost(problem, device, value, continuous.objective_value, variance, continuous.variance)
    return GridDesign(device=device, problem=problem, counts=counts, mechanism=mech, objective_value=value,
                      continuous_objective_value=continuous.objective_value, variance=variance,
                      continuous_variance=continuous.variance, optimal=optimal, symmetric=sym,
                      notes=tuple(snapped + notes + cost), within_1pct=within, certificate=certificate,
                      variance_kind=kind, variance_reason=reason)


#: A grid design whose variance exceeds the continuous optimum's by this factor gets a note (the objective's
#: small loss can hide a large loss of accuracy).
VARIANCE_RATIO_NOTE = 1.25


def _variance_cost(problem: DesignProblem, device: Device, value: float, continuous: float,
                   variance: float | None, continuous_variance: float | None) -> list[str]:
    if variance is None or continuous_variance is None or not continuous_variance > 0:
        return []
    ratio = variance / continuous_variance
    if not ratio > VARIANCE_RATIO_NOTE:
        return []
    if problem.objective.minimised:
        return []  # the objective is the variance itself: its cost is the objective's
    loss = (1 - value / continuous) * 100 if continuous else 0.0
    return [f"on the {device.name} grid the variance is {ratio:.3g} times the continuous optimum's, although the "
            f"objective ({problem.objective.value}) loses only {loss:.3g}%: the estimates need {ratio:.3g} times "
            "the respondents; a device with more outcomes keeps the variance down, and so may objective variance"]


def _snap_dont_know(problem: DesignProblem, device: Device) -> tuple[DesignProblem, list[str]]:
    """An exact don't-know mass written as a rounded decimal of one multiple of ``1 / d`` (``0.1944`` for 7/36)
    becomes that multiple, with a note; off the grid otherwise (:class:`DeviceError` from the program)."""
    d, mass = device.denominator, problem.dont_know
    if mass is None or abs(mass * d - round(mass * d)) <= 1e-9:
        return problem, []
    count = snap_count(mass, d)
    if count is None:
        return problem, []
    return problem.replace(dont_know=count / d), [
        f"the don't-know mass {mass!r} is read as {count}/{d} = {count / d:.6g}, the one multiple of 1/{d} "
        f"({device.name}) that rounds to it"]


def is_invariant(problem: DesignProblem, program: GridProgram, counts: NDArray[np.int64]) -> bool:
    from ..optimal.symmetry import is_symmetric

    if not is_symmetric(problem):
        return False
    values = program.symmetry_rows().A @ counts.ravel()
    return bool(np.all(values == 0))


def _within_1pct(problem: DesignProblem, continuous: float, target: NDArray[np.float64] | None,
                 nodes: int = WITHIN_1PCT_NODES) -> int | None:
    """The first candidate denominator whose grid design comes within 1% of ``continuous``, searched within
    ``nodes`` branch-and-bound nodes in all; ``None`` when none is found within them."""
    from ..optimal.objectives import objective_value

    left = nodes
    for d in CANDIDATE_DENOMINATORS:
        if left <= 0:
            return None
        try:
            search = _best(problem, Device(f"grid:{d}", d), target, node_limit=left)
        except DeviceError:
            continue
        left -= search.nodes
        if search.counts is None:
            continue
        found = grid_mechanism(problem, search.program, search.counts)
        value = objective_value(problem, found)
        if (value <= continuous / 0.99 + 1e-12 if problem.objective.minimised
                else value >= 0.99 * continuous - 1e-12):
            return d
    return None

