"""A mechanism as a table of integers, certified exactly, and sampled exactly from a cryptographic source
(docs/theory.md section 7.5).

A released randomizer should realise the certified probabilities exactly and draw from a source nobody can
replay. Floats do neither: an inverse-CDF draw compares a float uniform with float cumulative sums, and a seeded
generator can be re-run by anyone who learns the seed. Here each row of the mechanism is written as counts over
the denominator ``D = 2**32`` (every ``count / D`` is a double exactly), the table is certified against the budget
by :func:`designer.privacy.is_private` in exact arithmetic, and a draw takes one 32-bit word ``w`` and returns
the column whose cumulative counts bracket it: the probability of column ``j`` is exactly ``C[x, j] / D``.

A design whose masses are a device's fractions (every mass the double nearest ``c / D`` for one ``D`` up to
:data:`MAX_GRID`, e.g. sixths for a die) keeps them: its table is the counts over that ``D``, certified with
integers (:func:`counts_private`), and a draw rejects the words at or above the largest multiple of ``D`` below
``2**32`` (no modulo bias) before bracketing ``w`` by the cumulative counts times ``2**32 // D``.
"""

from __future__ import annotations

import hashlib
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from ._exact import ratio_at_most_exp
from .certificate import Certificate, certificate_fields
from .exceptions import CertificationError, InvalidArgumentError
from .mechanism import Mechanism
from .privacy import is_private, worst_case
from .vocabulary import Semantics

__all__ = ["DENOMINATOR", "MAX_GRID", "ExactTable", "OsRandom", "SeededRandom", "counts_private", "exact_table",
           "grid_counts", "invariance_holds", "round_rows", "sample_counts", "sample_grid", "table_of"]

#: Every table's denominator: counts are integers over 2**32, so count / D is a double exactly.
DENOMINATOR = 2**32
#: Largest denominator recognised as a design's exact grid (a device's outcomes: designer.devices' limit).
MAX_GRID = 100_000
#: First weight of the uniform row mixed in before rounding, doubled until the rounded table certifies.
FIRST_MIX = 2.0**-24
#: The reference a table's certificate names when rows were mixed before rounding.
MIX_REFERENCE = "row every input shares (uniform over the answers)"


class WordSource(Protocol):
    """Where uniform 32-bit words come from."""

    name: str

    def words(self, n: int) -> NDArray[np.uint64]: ...


class OsRandom:
    """The operating system's cryptographic generator (``os.urandom``): nothing to replay."""

    name = "os.urandom (the operating system's CSPRNG)"

    def words(self, n: int) -> NDArray[np.uint64]:
        return np.frombuffer(os.urandom(4 * n), dtype="<u4").astype(np.uint64)


@dataclass
class SeededRandom:
    """numpy's PCG64 from a seed: reproducible, for simulation only (anyone who knows the seed can redo the draw)."""

    seed: int | np.random.SeedSequence
    name: str = field(default="seeded simulation (numpy PCG64)")

    def __post_init__(self) -> None:
        self._rng = np.random.default_rng(self.seed)

    def words(self, n: int) -> NDArray[np.uint64]:
        return self._rng.integers(0, DENOMINATOR, size=n, dtype=np.uint64)


@dataclass(frozen=True)
class ExactTable:
    """Integer counts over :data:`DENOMINATOR` per input and output, certified within ``epsilon``.

    Attributes
    ----------
    inputs, outputs : tuple of str
        Row and column labels (outputs: the answer sets, or the frame labels of precise answers).
    counts : (k, F) ndarray of int64
        Each row sums to ``denominator``.
    epsilon : float
        The budget the table is certified within (exactly).
    semantics : Semantics
    mix_weight : float
        Weight of the input-independent row mixed in before rounding (0: the rounding alone certified).
    max_change : float
        Largest ``|count / D - mass|`` over the table: the rounding's cost (0 up to the masses' own float
        rounding for a design's exact grid).
    denominator : int
        ``D``: :data:`DENOMINATOR` (``2**32``) for a rounded table, else the design's own grid (a die's 6).
    denominators : tuple of int
        Per-row denominators (an invariant design's rows ``x`` are over ``a_x M``, docs/theory.md section 12);
        empty when every row is over ``denominator``.
    """

    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    counts: NDArray[np.int64]
    epsilon: float
    semantics: Semantics
    mix_weight: float
    max_change: float
    denominator: int = DENOMINATOR
    denominators: tuple[int, ...] = ()

    @property
    def row_denominators(self) -> NDArray[np.int64]:
        """``(k,)``: each row's denominator."""
        if self.denominators:
            return np.asarray(self.denominators, dtype=np.int64)
        return np.full(len(self.inputs), self.denominator, dtype=np.int64)

    @property
    def scale(self) -> int:
        """``2**32 // D``: the 32-bit words per outcome of the grid."""
        return DENOMINATOR // self.denominator

    @property
    def limit(self) -> int:
        """Words at or above ``scale * D`` are drawn again (none when ``D`` divides ``2**32``)."""
        return self.scale * self.denominator

    @property
    def arithmetic(self) -> str:
        """How the table was obtained, in words."""
        if self.denominators:
            return "the design's exact fractions: integer counts over a denominator per row"
        if self.denominator == DENOMINATOR:
            return "integer counts over 2^32"
        return f"the design's exact fractions: integer counts over {self.denominator}"

    @property
    def certificate(self) -> Certificate:
        """The table's :class:`~designer.certificate.Certificate`, the shape every released object carries."""
        return Certificate(epsilon=self.epsilon, losses=self.semantics.losses, repaired=self.mix_weight > 0,
                           mix_weight=self.mix_weight, reference=MIX_REFERENCE if self.mix_weight > 0 else "",
                           arithmetic=self.arithmetic)

    def certificate_record(self) -> dict[str, Any]:
        """The table's certificate as JSON (an export's, a release manifest's): the method and the detail of
        :func:`~designer.certificate.certificate_fields`, with the table's ``denominators``, ``max_change`` and
        ``sha256``."""
        fields = certificate_fields(self.certificate)
        return {"method": fields["certificate"], **fields["certificate_detail"],
                "denominators": [int(d) for d in self.row_denominators], "max_change": self.max_change,
                "sha256": self.sha256}

    @property
    def sha256(self) -> str:
        """SHA-256 of the table (labels, denominator and counts, one canonical text)."""
        over = (f"denominators {' '.join(map(str, self.denominators))}" if self.denominators
                else f"denominator {self.denominator}")
        text = "\n".join(["designer exact table v1", over,
                          "inputs " + "\t".join(self.inputs), "outputs " + "\t".join(self.outputs),
                          *("\t".join(str(int(c)) for c in row) for row in self.counts)])
        return hashlib.sha256(text.encode()).hexdigest()

    def sample(self, rows: NDArray[np.int64], source: WordSource) -> NDArray[np.int64]:
        """One output column per respondent of row ``rows[i]``: column ``j`` with probability
        ``counts[rows[i], j] / D`` exactly (one 32-bit word each, drawn again while at or above :attr:`limit`)."""
        return sample_grid(self.counts, self.row_denominators, np.asarray(rows, dtype=np.int64), source.words)


def sample_grid(counts: NDArray[np.int64], denominator: int | NDArray[np.int64], rows: NDArray[np.int64],
                words: Callable[[int], NDArray[np.uint64]]) -> NDArray[np.int64]:
    """One column per respondent of row ``rows[i]`` of ``counts`` (``(k, F)``, row ``x`` summing to
    ``denominator`` or ``denominator[x]``): 32-bit words from ``words(n)``, those at or above the largest
    multiple of the row's denominator below ``2**32`` drawn again, then :func:`sample_counts` on the counts in
    words (times ``2**32 //`` the row's denominator)."""
    dens = np.broadcast_to(np.asarray(denominator, dtype=np.int64), (np.shape(counts)[0],))
    scale = (DENOMINATOR // dens).astype(np.int64)
    limit = (scale * dens).astype(np.uint64)[rows]
    drawn = words(rows.size)
    again = np.flatnonzero(drawn >= limit)
    while again.size:
        drawn[again] = words(again.size)
        again = again[drawn[again] >= limit[again]]
    return sample_counts(np.asarray(counts, dtype=np.int64) * scale[:, None], rows, drawn)


#: Up to this many columns a draw counts the cumulative counts below its word column by column (else by row).
FEW_COLUMNS = 32


def sample_counts(counts: NDArray[np.int64], rows: NDArray[np.int64], words: NDArray[np.uint64]
                  ) -> NDArray[np.int64]:
    """The column whose cumulative counts bracket each word: ``j`` with ``S_{j-1} <= words[i] < S_j`` in row
    ``rows[i]`` of ``counts`` (``(k, F)``, rows summing to at most :data:`DENOMINATOR`, every word below the
    sum); the one sampler of designer."""
    cum = np.cumsum(counts, axis=1, dtype=np.uint64)
    if cum.shape[1] <= FEW_COLUMNS:
        out = np.zeros(rows.size, dtype=np.int64)
        for j in range(cum.shape[1] - 1):  # the number of cumulative counts <= w
            out += np.take(cum[:, j], rows) <= words
        return out
    out = np.empty(rows.size, dtype=np.int64)
    for r in np.unique(rows):
        sel = rows == r
        out[sel] = np.searchsorted(cum[r], words[sel], side="right")
    return out


def round_rows(matrix: NDArray[np.float64]) -> NDArray[np.int64]:
    """Counts over D with each row summing to D exactly: floors, then the largest remainders get one more."""
    scaled = np.clip(matrix, 0.0, None) * DENOMINATOR
    base = np.floor(scaled).astype(np.int64)
    short = DENOMINATOR - base.sum(axis=1)
    order = np.argsort(-(scaled - base), axis=1, kind="stable")
    for x in range(matrix.shape[0]):
        base[x, order[x, : int(short[x])]] += 1
    return base


def grid_counts(matrix: NDArray[np.float64]) -> tuple[NDArray[np.int64], int] | None:
    """The counts and denominator ``D <= MAX_GRID`` whose fractions ``c / D`` round to exactly the given masses
    (``(k, F)``), rows summing to ``D``; ``None`` when the masses are not such a grid (``D`` the least common
    denominator)."""
    fractions: list[Fraction] = []
    denominator = 1
    for value in np.asarray(matrix, dtype=np.float64).ravel():
        fraction = Fraction(float(value)).limit_denominator(MAX_GRID)
        if float(fraction) != float(value) or fraction < 0:
            return None
        denominator = math.lcm(denominator, fraction.denominator)
        if denominator > MAX_GRID:
            return None
        fractions.append(fraction)
    counts = np.array([int(f * denominator) for f in fractions], dtype=np.int64).reshape(np.shape(matrix))
    if not np.all(counts.sum(axis=1) == denominator):
        return None
    return counts, denominator


def table_of(probabilities: NDArray[np.float64]) -> tuple[NDArray[np.int64], int]:
    """The integer table a simulation draws from: a grid's exact counts (:func:`grid_counts`), else the rows
    rounded over ``2**32`` (:func:`round_rows`); with its denominator."""
    grid = grid_counts(probabilities)
    if grid is not None and DENOMINATOR % grid[1] != 0:
        return grid
    return round_rows(np.asarray(probabilities, dtype=np.float64)), DENOMINATOR


def invariance_holds(counts: NDArray[np.int64], denominators: NDArray[np.int64], prior: Sequence[Fraction],
                     column: Sequence[int]) -> bool:
    """Whether the table keeps ``prior`` invariant: ``sum_x pi_x C[x, y(z)] / d_x == pi_z`` for every input ``z``
    (``column[z]`` its category's column), in rational arithmetic (docs/theory.md section 12)."""
    return all(sum((prior[x] * Fraction(int(counts[x, column[z]]), int(denominators[x]))
                    for x in range(len(prior))), Fraction(0)) == prior[z] for z in range(len(prior)))


def counts_private(counts: NDArray[np.int64], focal: list[int], eps: float, loss: str,
                   denominators: NDArray[np.int64] | None = None) -> bool:
    """Whether the table ``counts / D`` (``(k, F)`` integers, columns the focal sets as bitmasks; row ``x`` over
    ``denominators[x]`` when given) is within ``eps``, decided with integers: Shafer (Def 3.1) per column the
    largest count against the smallest; Walley (Def 3.13 through Lemma 3.14) per proper event ``E`` the largest
    ``pl_x(E)`` against the smallest ``bel_x'(E)`` over ``x != x'``. Rows over different denominators are first
    brought to their least common multiple (Python integers, any size)."""
    counts = np.asarray(counts, dtype=np.int64)
    if denominators is not None and len(set(int(d) for d in denominators)) > 1:
        common = math.lcm(*(int(d) for d in denominators))
        counts = np.array([[int(c) * (common // int(d)) for c in row] for row, d in zip(counts, denominators)],
                          dtype=object)
    if counts.shape[0] < 2:
        return True
    if loss in ("sldp", "shafer"):
        pairs = list(zip(counts.max(axis=0), counts.min(axis=0)))
    else:
        size = max(int(b) for b in focal).bit_length()
        masses = np.zeros((counts.shape[0], 1 << size), dtype=counts.dtype)
        masses[:, focal] = counts
        bel = masses.copy()
        for i in range(size):  # zeta transform: bel(E) = sum of the masses of the subsets of E
            view = bel.reshape(counts.shape[0], -1, 2, 1 << i)
            view[:, :, 1, :] += view[:, :, 0, :]
        total = counts.sum(axis=1, keepdims=True)
        pl = total - bel[:, ::-1]  # pl(E) = 1 - bel(complement of E)
        proper = slice(1, (1 << size) - 1)
        pl, bel = pl[:, proper], bel[:, proper]
        top = np.argsort(-pl, axis=0, kind="stable")[:2]
        low = np.argsort(bel, axis=0, kind="stable")[:2]
        cols = np.arange(pl.shape[1])
        p1, p2 = pl[top[0], cols], pl[top[1], cols]
        b1, b2 = bel[low[0], cols], bel[low[1], cols]
        same = top[0] == low[0]  # the largest pl and the smallest bel in one row: pair each with the runner-up
        nums = np.concatenate([p1, np.where(same, p2, p1)])
        dens = np.concatenate([np.where(same, b2, b1), np.where(same, b1, b1)])
        pairs = list(set(zip(nums.tolist(), dens.tolist())))
    return all(ratio_at_most_exp(int(a), int(b), eps) for a, b in pairs)


def exact_table(mech: Mechanism, *, epsilon: float | None = None, semantics: Any = "sldp",
                probabilities: NDArray[np.float64] | None = None, outputs: tuple[str, ...] | None = None,
                exact: tuple[NDArray[np.int64], NDArray[np.int64]] | None = None) -> ExactTable:
    """The table of ``mech`` (or of the precise ``probabilities`` of a credal member, ``(k, l)``, with their
    ``outputs``) certified within ``epsilon`` (default: the mechanism's own loss under ``semantics``).

    ``exact``: the design's own integer table, counts ``(k, F)`` with a denominator per row (an invariant design,
    :mod:`designer.design.invariant`), used as it is when within ``epsilon`` (else :class:`CertificationError`).
    A mechanism whose masses are a grid's fractions (:func:`grid_counts`; a device design) gets those counts over
    their own denominator when they are within ``epsilon``. Otherwise the rows are mixed with a row every input
    shares (uniform over the singleton answers when each label has one, whose plausibility equals its belief;
    else uniform over the answers) by the smallest weight ``2^-24 * 2^j``
    whose rounded table is private in exact arithmetic, so a mechanism exactly at its budget stays within it:
    such a mixture never raises a Shafer loss, nor a Walley loss when the shared row is Bayesian. Raises
    :class:`CertificationError` when no weight below 1/2 certifies.
    """
    sem = Semantics.parse(semantics, "semantics")
    precise = probabilities is not None
    matrix = np.asarray(mech.matrix if probabilities is None else probabilities, dtype=np.float64)
    labels = tuple(mech.columns) if outputs is None else tuple(outputs)
    focal = [1 << j for j in range(matrix.shape[1])] if precise else [int(b) for b in mech.focal]
    frame = list(labels) if precise else list(mech.frame)
    losses = ("sldp",) if precise else tuple(loss.value if loss.value != "shafer" else "sldp"
                                               for loss in sem.losses)
    losses = tuple("wldp" if loss == "walley" else loss for loss in losses)
    if epsilon is None:
        member = Mechanism(matrix, inputs=mech.inputs, frame=frame, focal=focal)
        epsilon = max(worst_case(member, "shafer" if loss == "sldp" else "walley").eps for loss in losses)
    if not (isinstance(epsilon, float | int) and math.isfinite(epsilon) and epsilon > 0):
        raise InvalidArgumentError(f"epsilon must be a finite number > 0, got {epsilon!r}")
    singles = [j for j, b in enumerate(focal) if b & (b - 1) == 0]
    uniform = np.zeros(matrix.shape)
    if len(singles) == len(frame):  # a Bayesian row: its plausibility equals its belief, so no Walley ratio grows
        uniform[:, singles] = 1.0 / len(singles)
    else:
        uniform[:] = 1.0 / matrix.shape[1]
    if exact is not None:
        counts, dens = np.asarray(exact[0], dtype=np.int64), np.asarray(exact[1], dtype=np.int64)
        if not (counts.shape == matrix.shape and np.all(counts >= 0) and np.array_equal(counts.sum(axis=1), dens)
                and np.all(dens <= DENOMINATOR)):
            raise InvalidArgumentError("exact: counts must match the mechanism's shape, be >= 0 and sum per row to "
                                       "that row's denominator (at most 2^32)")
        if not all(counts_private(counts, focal, float(epsilon), loss, dens) for loss in losses):
            raise CertificationError(f"the design's exact table is not within eps = {epsilon:g}")
        change = float(np.abs(counts / dens[:, None] - matrix).max())
        uniform_rows = bool(np.all(dens == dens[0]))
        return ExactTable(inputs=tuple(mech.inputs), outputs=labels, counts=counts, epsilon=float(epsilon),
                          semantics=sem, mix_weight=0.0, max_change=change, denominator=int(dens[0]),
                          denominators=() if uniform_rows else tuple(int(d) for d in dens))
    grid = grid_counts(matrix)
    if grid is not None and DENOMINATOR % grid[1] != 0:  # a device's fractions (a power of two is one over 2^32)
        counts, denominator = grid
        if all(counts_private(counts, focal, float(epsilon), loss) for loss in losses):
            change = float(np.abs(counts / denominator - matrix).max())
            return ExactTable(inputs=tuple(mech.inputs), outputs=labels, counts=counts, epsilon=float(epsilon),
                              semantics=sem, mix_weight=0.0, max_change=change, denominator=denominator)
    weight = 0.0
    while weight < 0.5:
        counts = round_rows((1 - weight) * matrix + weight * uniform)
        used = counts.sum(axis=0) > 0
        table = Mechanism(counts[:, used] / DENOMINATOR, inputs=mech.inputs, frame=frame,
                          focal=[b for b, u in zip(focal, used) if u])
        if all(is_private(table, float(epsilon), semantics=loss, exact=True) for loss in losses):
            change = float(np.abs(counts / DENOMINATOR - matrix).max())
            return ExactTable(inputs=tuple(mech.inputs), outputs=labels, counts=counts, epsilon=float(epsilon),
                              semantics=sem, mix_weight=weight, max_change=change)
        weight = FIRST_MIX if weight == 0 else 2 * weight
    raise CertificationError(f"no table over 2^32 of this mechanism is within eps = {epsilon:g} even mixed half "
                             "with the uniform row: the mechanism is not within that budget")
