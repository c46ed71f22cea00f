"""A mechanism as a table of integers, certified exactly, and sampled exactly from a cryptographic source
(docs/theory.md section 7.5).

A released randomizer must realise the certified probabilities exactly and draw from a source nobody can replay
(no float inverse-CDF, no seed). Each row is integer counts over a denominator ``d``, certified with integers
(:func:`counts_private`); a draw reads uniform 32-bit words as one number ``W`` (one word when every ``d <= 2**32``,
else two, the first the most significant), draws again while ``W`` is at or above the largest multiple of ``d``
that fits (no modulo bias), and returns the column whose cumulative counts times ``2**(32 words) // d`` bracket
``W`` (:class:`DrawPlan`): column ``j`` has probability ``C[x, j] / d`` exactly. Float masses are written over
``d = 2**53`` (a mass moves by at most ``2**-53``) after mixing with a row every input shares by the smallest
weight ``2^-48 2^j`` that certifies; a device's fractions (every mass the double nearest ``c / D``, ``D`` up to
:data:`MAX_GRID`) are kept over ``D``; an invariant design's rows are over their own denominators up to ``2**53``.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from .._internal.exact import ratio_at_most_exp
from ..certificate import Certificate, certificate_fields
from ..exceptions import CertificationError, InvalidArgumentError
from ..mechanism import Mechanism
from ..privacy import worst_case
from ..vocabulary import Semantics

__all__ = ["DENOMINATOR", "MAX_DENOMINATOR", "MAX_GRID", "WIDE_DENOMINATOR", "DrawPlan", "ExactTable", "OsRandom",
           "SeededRandom", "counts_private", "exact_table", "grid_counts", "invariance_holds", "round_rows",
           "sample_counts", "sample_grid", "table_of", "words_per_draw"]

#: One 32-bit word: the largest denominator drawn with one word per draw (and the range of a word).
DENOMINATOR = 2**32
#: Denominator of a table rounded from float masses: counts over 2**53, drawn with two 32-bit words; every count
#: and every count / D is a double exactly (and a JSON or JavaScript number), and the rounding moves a mass by at
#: most 2**-53, so the certifying mix can start at :data:`FIRST_MIX`.
WIDE_DENOMINATOR = 2**53
#: Largest row denominator of any table (two 32-bit words per draw; counts exact as doubles).
MAX_DENOMINATOR = 2**53
#: Largest denominator recognised as a design's exact grid (a device's outcomes: designer.devices' limit).
MAX_GRID = 100_000
#: First weight of the uniform row mixed in before rounding over 2^53, doubled until the rounded table certifies
#: (a ratio at the budget moves by about 2^-53 / mass in the rounding; the mix costs about its weight).
FIRST_MIX = 2.0**-48
#: The reference a table's certificate names when rows were mixed before rounding.
MIX_REFERENCE = "row every input shares (uniform over the answers)"


class WordSource(Protocol):
    """Where uniform 32-bit words come from."""
    name: str

    def words(self, n: int) -> NDArray[np.uint64]: ...


class OsRandom:
    """The operating system's cryptographic generator (``os.urandom``): nothing to replay.

    Examples
    --------
    >>> from designer.guarantees.exact_table import OsRandom
    >>> words = OsRandom().words(4)  # four 32-bit words from os.urandom
    >>> words.shape, str(words.dtype)
    ((4,), 'uint64')
    """

    name = "os.urandom (the operating system's CSPRNG)"

    def words(self, n: int) -> NDArray[np.uint64]:
        return np.frombuffer(os.urandom(4 * n), dtype="<u4").astype(np.uint64)


def _whole(v: Any) -> bool:
    return isinstance(v, int | np.integer) and not isinstance(v, bool | np.bool_) and int(v) >= 0


def _seed_value(seed: Any) -> Any:
    """The seed as numpy takes it; anything but a whole number >= 0, a non-empty sequence of them, a SeedSequence
    or a bit generator is refused (a bool, a float, a string, a negative number)."""
    if isinstance(seed, np.random.SeedSequence | np.random.BitGenerator):
        return seed
    if _whole(seed):
        return int(seed)
    if isinstance(seed, Sequence | np.ndarray) and not isinstance(seed, str | bytes) and len(seed) > 0 and all(
            _whole(v) for v in seed):
        return [int(v) for v in seed]
    raise InvalidArgumentError(f"seed must be a whole number >= 0, a sequence of them or a SeedSequence, "
                               f"got {seed!r}")


@dataclass
class SeededRandom:
    """numpy's PCG64 from a seed (a whole number >= 0 of any size, a sequence of them, a SeedSequence or a bit
    generator; else :class:`~designer.exceptions.InvalidArgumentError`): reproducible, for simulation only (anyone
    who knows the seed can redo the draw).

    Examples
    --------
    >>> from designer.guarantees.exact_table import SeededRandom
    >>> source = SeededRandom(1)
    >>> source.name, source.words(3).tolist() == SeededRandom(1).words(3).tolist()  # reproducible
    ('seeded simulation (numpy PCG64)', True)
    """

    seed: int | Sequence[int] | np.random.SeedSequence | np.random.BitGenerator
    name: str = field(default="seeded simulation (numpy PCG64)")

    def __post_init__(self) -> None:
        self._rng = np.random.default_rng(_seed_value(self.seed))

    def words(self, n: int) -> NDArray[np.uint64]:
        return self._rng.integers(0, DENOMINATOR, size=n, dtype=np.uint64)


def words_per_draw(denominators: Sequence[int] | NDArray[np.int64]) -> int:
    """How many 32-bit words one draw reads: 1 when every row's denominator is at most ``2**32``, else 2 (up to
    ``2**64``; designer's own tables stay at most :data:`MAX_DENOMINATOR`). The words of a draw are one number, the
    first word the most significant.

    Examples
    --------
    >>> from designer.guarantees.exact_table import words_per_draw
    >>> words_per_draw([6, 2**32]), words_per_draw([2**53])
    (1, 2)
    """
    values = [int(d) for d in np.ravel(np.asarray(denominators, dtype=object))]
    if not 1 <= min(values) <= max(values) <= 2**64:
        raise InvalidArgumentError(f"a table's denominators must lie in [1, 2^64], got {min(values)} to "
                                   f"{max(values)}")
    return 1 if max(values) <= DENOMINATOR else 2


@dataclass(frozen=True, eq=False)
class DrawPlan:
    """The integers a draw compares its words with (docs/theory.md section 7.5), shared by the Python sampler and
    every export.

    A draw reads ``words`` 32-bit words as one number ``W < 2**(32 words)`` (first word most significant), draws
    again while ``W >= limits[x]``, and returns the number of the row's thresholds at or below ``W``. With ``s_x =
    2**(32 words) // d_x`` (``d_x`` the row's denominator, ``S`` its cumulative counts), ``limits[x] = s_x d_x`` and
    the thresholds are ``S_j s_x`` for the columns ``j`` before the row's last positive count: every outcome
    ``o = floor(W / s_x)`` below ``d_x`` has exactly ``s_x`` numbers, so column ``j`` has probability
    ``C[x, j] / d_x``.

    Attributes: ``words`` (1 or 2); ``limits``, ``(k,)`` Python ints up to ``2**(32 words)`` (equal to it: nothing
    is drawn again); ``cuts``, ``(k, F - 1)`` uint64, row ``x``'s increasing thresholds in its first ``ends[x]``
    entries (``(k,)`` int64), 0 after.

    Examples
    --------
    >>> import designer
    >>> from designer.guarantees.exact_table import exact_table
    >>> plan = exact_table(designer.Q_WRR(1.0)).plan
    >>> plan.words, plan.limits == (2**64, 2**64)  # nothing is drawn again: 2**53 divides 2**64
    (2, True)
    """

    words: int
    limits: tuple[int, ...]
    cuts: NDArray[np.uint64]
    ends: NDArray[np.int64]

    @staticmethod
    def of(counts: NDArray[np.int64], denominators: Sequence[int] | NDArray[np.int64]) -> DrawPlan:
        """The plan of ``counts`` (``(k, F)``, row ``x`` summing to ``denominators[x]``)."""
        dens = [int(d) for d in np.ravel(np.asarray(denominators, dtype=object))]
        width = words_per_draw(dens)
        scales = [(1 << (32 * width)) // d for d in dens]
        limits = tuple(s * d for s, d in zip(scales, dens))
        if max(dens) > 2**62:  # counts beyond int64's sums: Python integers
            rows = [[int(c) for c in row] for row in np.asarray(counts, dtype=object)]
            cums = [list(itertools.accumulate(row[:-1])) for row in rows]
            kept = [[c * s for c in cum if c < d] for cum, s, d in zip(cums, scales, dens)]
            cuts = np.zeros((len(rows), max(len(r) for r in rows) - 1), dtype=np.uint64)
            for x, row in enumerate(kept):
                cuts[x, :len(row)] = row
            return DrawPlan(words=width, limits=limits, cuts=cuts,
                            ends=np.array([len(r) for r in kept], dtype=np.int64))
        counts = np.asarray(counts, dtype=np.int64)
        cum = np.cumsum(counts[:, :-1], axis=1, dtype=np.int64)
        valid = cum < np.asarray(dens, dtype=np.int64)[:, None]  # a prefix of each row: cumulative counts grow
        scale = np.array([min(v, 2**64 - 1) for v in scales], dtype=np.uint64)  # 2^64 only for d = 1 (cuts 0)
        cuts = np.where(valid, cum, 0).astype(np.uint64) * scale[:, None]  # each below 2^64: S_j < d_x
        return DrawPlan(words=width, limits=limits, cuts=cuts, ends=valid.sum(axis=1).astype(np.int64))

    def record(self) -> dict[str, Any]:
        """The plan as the exports carry it: ``words``, and per row the limit and the thresholds as ``[high, low]``
        32-bit halves (``high`` is ``2**32`` for a limit of ``2**64``), integers JavaScript's doubles hold exactly."""
        def halves(v: Any) -> list[int]:
            return [int(v) >> 32, int(v) & 0xFFFFFFFF]
        return {"words": self.words, "limits": [halves(v) for v in self.limits],
                "cuts": [[halves(v) for v in self.cuts[x, :int(self.ends[x])]] for x in range(len(self.limits))]}


def _read(words: Callable[[int], NDArray[np.uint64]], n: int, width: int) -> NDArray[np.uint64]:
    """``n`` numbers of ``width`` words each from ``words``, in order (first word the most significant)."""
    raw = np.asarray(words(n * width), dtype=np.uint64)
    if width == 1:
        return raw.copy()
    pairs = raw.reshape(n, 2)
    return (pairs[:, 0] << np.uint64(32)) | pairs[:, 1]


def sample_grid(counts: NDArray[np.int64], denominator: int | NDArray[np.int64], rows: NDArray[np.int64],
                words: Callable[[int], NDArray[np.uint64]]) -> NDArray[np.int64]:
    """One column per respondent of row ``rows[i]`` of ``counts`` (``(k, F)``, row ``x`` summing to
    ``denominator`` or ``denominator[x]``, at most ``2**64``): numbers of one 32-bit word from ``words(n)`` (two,
    the first the most significant, when a denominator exceeds ``2**32``), drawn again (all their words, in order)
    while at or above the row's :class:`DrawPlan` limit, then :func:`sample_counts`: column ``j`` has probability
    ``counts[x, j] / d_x`` exactly, with no float and no modulo bias.

    Examples
    --------
    A die's table (``5/6`` truthful) for three respondents, one 32-bit word each:

    >>> import numpy as np
    >>> from designer.guarantees.exact_table import SeededRandom, sample_grid
    >>> columns = sample_grid(np.array([[5, 1], [1, 5]]), 6, np.array([0, 0, 1]), SeededRandom(1).words)
    >>> columns.shape, set(columns.tolist()) <= {0, 1}
    ((3,), True)
    """
    dens = np.broadcast_to(np.asarray(denominator, dtype=object), (np.shape(counts)[0],))
    rows = np.asarray(rows, dtype=np.int64)
    _check_grid(counts, dens, rows)
    return _draw(DrawPlan.of(counts, dens), rows, words)


def _check_grid(counts: Any, dens: Any, rows: NDArray[np.int64]) -> None:
    """Refuse a table :func:`sample_grid` would draw from with other probabilities than it states: a negative count,
    a row not summing to its denominator, a respondent's row outside the table (numpy would wrap ``-1``)."""
    k = int(np.shape(counts)[0])
    top = max(int(d) for d in dens)
    if top <= 2**32 and np.shape(counts)[1] < 2**30 and np.asarray(counts).dtype.kind in "iu":  # int64 sums suffice
        grid = np.asarray(counts, dtype=np.int64)
        d64 = np.array([int(d) for d in dens], dtype=np.int64)
        fits = bool(((grid >= 0) & (grid <= d64[:, None])).all())  # then each row's sum is below 2^62
        bad = np.flatnonzero((grid.sum(axis=1) != d64) | (d64 < 1)) if fits else np.arange(k)
    else:
        bad = np.arange(k)
    for x in bad.tolist():  # exactly, in Python integers: the fast test above passes every valid table
        row, d = [int(c) for c in np.asarray(counts, dtype=object)[x]], int(dens[x])
        if min(row) < 0 or sum(row) != d or d < 1:
            raise InvalidArgumentError(f"row {x} of the table has counts {row} summing to {sum(row)}; every row "
                                       f"must hold counts >= 0 summing to its denominator {d}")
    if rows.size and (int(rows.min()) < 0 or int(rows.max()) >= k):
        raise InvalidArgumentError(f"rows must index the table's {k} rows (0 to {k - 1}); got "
                                   f"{int(rows.min())} to {int(rows.max())}")


def _draw(plan: DrawPlan, rows: NDArray[np.int64], words: Callable[[int], NDArray[np.uint64]]) -> NDArray[np.int64]:
    """Numbers of ``plan.words`` words per respondent, each drawn again (all its words, in order) while at or above
    its row's limit, then :func:`sample_counts`."""
    top = 1 << (32 * plan.words)
    limit = np.array([min(v, top - 1) for v in plan.limits], dtype=np.uint64)[rows]
    bounded = np.array([v < top for v in plan.limits], dtype=bool)[rows]  # a limit of 2^(32 w): nothing redrawn
    drawn = _read(words, rows.size, plan.words)
    again = np.flatnonzero(bounded & (drawn >= limit))
    while again.size:
        drawn[again] = _read(words, again.size, plan.words)
        again = again[drawn[again] >= limit[again]]
    return sample_counts(plan, rows, drawn)


#: Up to this many columns a draw counts the thresholds below its word column by column (else by row).
FEW_COLUMNS = 32


def sample_counts(plan: DrawPlan, rows: NDArray[np.int64], words: NDArray[np.uint64]) -> NDArray[np.int64]:
    """The column of each drawn number: the count of row ``rows[i]``'s thresholds in ``plan`` at or below
    ``words[i]`` (every number below its row's limit), i.e. ``j`` with ``S_{j-1} s <= words[i] < S_j s``; the one
    sampler of designer (tables of up to :data:`FEW_COLUMNS` columns column by column, wider ones row by row).

    Examples
    --------
    The smallest and the largest number two words can make fall in the first and the last column of any row:

    >>> import numpy as np
    >>> import designer
    >>> from designer.guarantees.exact_table import exact_table, sample_counts
    >>> plan = exact_table(designer.Q_WRR(1.0)).plan
    >>> sample_counts(plan, np.array([0, 1]), np.array([0, 2**64 - 1], dtype=np.uint64)).tolist()
    [0, 1]
    """
    cuts, ends = plan.cuts, plan.ends
    if cuts.shape[1] + 1 <= FEW_COLUMNS:
        out = np.zeros(rows.size, dtype=np.int64)
        for j in range(cuts.shape[1]):  # the number of thresholds <= w
            out += (np.take(ends, rows) > j) & (np.take(cuts[:, j], rows) <= words)
        return out
    out = np.empty(rows.size, dtype=np.int64)
    for r in np.unique(rows):
        sel = rows == r
        out[sel] = np.searchsorted(cuts[r, :int(ends[r])], words[sel], side="right")
    return out


@dataclass(frozen=True)
class ExactTable:
    """Integer counts per input and output over a denominator per row, certified within ``epsilon``.

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
        ``D``: :data:`WIDE_DENOMINATOR` (``2**53``, two words per draw) for a table rounded from float masses,
        ``2**32`` for masses on a power of two's grid, else the design's own grid (a die's 6).
    denominators : tuple of int
        Per-row denominators (an invariant design's rows ``x`` are over ``a_x M``, docs/theory.md section 12);
        empty when every row is over ``denominator``.

    Examples
    --------
    Drawing four respondents (two yes, two no) through Warner's table in a seeded simulation:

    >>> import numpy as np
    >>> import designer
    >>> from designer.guarantees.exact_table import SeededRandom, exact_table
    >>> table = exact_table(designer.Q_WRR(1.0))
    >>> table.outputs, table.words  # two 32-bit words a draw: the denominator is 2**53
    (('{yes}', '{no}'), 2)
    >>> columns = table.sample(np.array([0, 0, 1, 1]), SeededRandom(1))
    >>> columns.shape, set(columns.tolist()) <= {0, 1}
    ((4,), True)
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
    def words(self) -> int:
        """32-bit words per draw: 1 when every row's denominator is at most ``2**32``, else 2."""
        return words_per_draw(self.row_denominators)

    @functools.cached_property
    def plan(self) -> DrawPlan:
        """The thresholds every draw from the table compares its words with (:class:`DrawPlan`)."""
        return DrawPlan.of(self.counts, self.row_denominators)

    scale = property(lambda self: (1 << (32 * self.words)) // self.denominator,
                     doc="``2**(32 words) // D``: the numbers a draw reads per outcome of the grid.")
    limit = property(lambda self: self.scale * self.denominator,
                     doc="Numbers at or above ``scale * D`` are drawn again (none when ``D`` divides 2^(32 words)).")

    @property
    def arithmetic(self) -> str:
        """How the table was obtained, in words."""
        if self.denominators:
            return "the design's exact fractions: integer counts over a denominator per row"
        if self.denominator == DENOMINATOR:
            return "integer counts over 2^32"
        if self.denominator == WIDE_DENOMINATOR:
            return "integer counts over 2^53 (two 32-bit words per draw)"
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
        ``counts[rows[i], j] / d`` exactly (:attr:`words` 32-bit words each, drawn again while at or above the
        row's limit; :func:`sample_grid`)."""
        return _draw(self.plan, np.asarray(rows, dtype=np.int64), source.words)


def round_rows(matrix: NDArray[np.float64], denominator: int = DENOMINATOR) -> NDArray[np.int64]:
    """Counts over ``denominator`` (a power of two up to ``2**53``) with each row summing to it exactly: the floors
    of the masses times it (exact: a power of two), a row whose floats do not sum to 1 exactly moved towards it in
    proportion to its masses, then the largest remainders get one more (the largest counts one less).

    Examples
    --------
    >>> import numpy as np
    >>> from designer.guarantees.exact_table import round_rows
    >>> round_rows(np.array([[0.6, 0.2, 0.2]]), 16).tolist()  # 9.6, 3.2, 3.2: floors 9, 3, 3 and the largest remainder
    [[10, 3, 3]]
    """
    scaled = np.clip(np.asarray(matrix, dtype=np.float64), 0.0, None) * denominator
    base = np.floor(scaled).astype(np.int64)
    for x in range(base.shape[0]):
        short = denominator - int(base[x].sum())
        if abs(short) >= base.shape[1]:  # only over 2^53: the floats' own sum is off 1 by many units
            share = np.floor(short * (scaled[x] / scaled[x].sum())).astype(np.int64)
            base[x] += np.maximum(share, -base[x])
            short = denominator - int(base[x].sum())
        positive = np.flatnonzero(scaled[x] > 0)
        if short > 0:
            order = positive[np.argsort(-(scaled[x, positive] - np.floor(scaled[x, positive])), kind="stable")]
            np.add.at(base[x], order[np.arange(short) % order.size], 1)
        elif short < 0:
            order = positive[np.argsort(-base[x, positive], kind="stable")]
            np.add.at(base[x], order[np.arange(-short) % order.size], -1)
    return base


def grid_counts(matrix: NDArray[np.float64]) -> tuple[NDArray[np.int64], int] | None:
    """The counts and denominator ``D <= MAX_GRID`` whose fractions ``c / D`` round to exactly the given masses
    (``(k, F)``), rows summing to ``D``; ``None`` when the masses are not such a grid (``D`` the least common
    denominator).

    Examples
    --------
    >>> import numpy as np
    >>> from designer.guarantees.exact_table import grid_counts
    >>> counts, denominator = grid_counts(np.array([[1 / 6, 5 / 6], [1 / 2, 1 / 2]]))
    >>> counts.tolist(), denominator
    ([[1, 5], [3, 3]], 6)
    """
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
    rounded over ``2**32`` (:func:`round_rows`; one word per draw, a simulation needs no more); with its
    denominator.

    Examples
    --------
    >>> import designer
    >>> from designer.guarantees.exact_table import table_of
    >>> counts, denominator = table_of(designer.Q_2x3(0.6, 0.2).matrix)  # fifths: a grid
    >>> counts.tolist(), denominator
    ([[3, 1, 1], [1, 3, 1]], 5)
    """
    grid = grid_counts(probabilities)
    if grid is not None and DENOMINATOR % grid[1] != 0:
        return grid
    return round_rows(np.asarray(probabilities, dtype=np.float64)), DENOMINATOR


def invariance_holds(counts: NDArray[np.int64], denominators: NDArray[np.int64], prior: Sequence[Fraction],
                     column: Sequence[int]) -> bool:
    """Whether the table keeps ``prior`` invariant: ``sum_x pi_x C[x, y(z)] / d_x == pi_z`` for every input ``z``
    (``column[z]`` its category's column), in rational arithmetic (docs/theory.md section 12).

    Examples
    --------
    >>> from fractions import Fraction
    >>> import numpy as np
    >>> from designer.guarantees.exact_table import invariance_holds
    >>> half = [Fraction(1, 2), Fraction(1, 2)]
    >>> invariance_holds(np.array([[3, 1], [1, 3]]), np.array([4, 4]), half, [0, 1])
    True
    """
    return all(sum((prior[x] * Fraction(int(counts[x, column[z]]), int(denominators[x]))
                    for x in range(len(prior))), Fraction(0)) == prior[z] for z in range(len(prior)))


def counts_private(counts: NDArray[np.int64], focal: list[int], eps: float, loss: str,
                   denominators: NDArray[np.int64] | None = None) -> bool:
    """Whether the table ``counts / D`` (``(k, F)`` integers, columns the focal sets as bitmasks; row ``x`` over
    ``denominators[x]`` when given) is within ``eps``, decided with integers: Shafer (Def 3.1) per column the
    largest count against the smallest; Walley (Def 3.13 through Lemma 3.14) per proper event ``E`` the largest
    ``pl_x(E)`` against the smallest ``bel_x'(E)`` over ``x != x'``. Rows over different denominators are first
    brought to their least common multiple (Python integers, any size).

    Examples
    --------
    Counts ``3, 1`` against ``1, 3`` (columns ``{y0}``, ``{y1}``) have ratio 3: within ``ln 3``, not within 1:

    >>> import math
    >>> import numpy as np
    >>> from designer.guarantees.exact_table import counts_private
    >>> counts = np.array([[3, 1], [1, 3]])
    >>> counts_private(counts, [1, 2], math.log(3), "shafer"), counts_private(counts, [1, 2], 1.0, "shafer")
    (True, False)
    """
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
    :mod:`designer.optimal.invariant`), used as it is when within ``epsilon`` (else :class:`CertificationError`).
    A mechanism whose masses are a grid's fractions (:func:`grid_counts`; a device design) gets those counts over
    their own denominator when they are within ``epsilon``. Otherwise the rows are mixed with a row every input
    shares (uniform over the singleton answers when each label has one, whose plausibility equals its belief;
    else uniform over the answers) by the smallest weight ``2^-48 * 2^j`` whose table rounded over ``2**53``
    (:func:`round_rows`) is private in exact arithmetic, so a mechanism exactly at its budget stays within it: such
    a mixture never raises a Shafer loss, nor a Walley loss when the shared row is Bayesian. Raises
    :class:`CertificationError` when no weight below 1/2 certifies.

    Examples
    --------
    ``Q_2x3(0.6, 0.2)`` as counts over ``2**53``, each row summing to it, certified within its own Shafer loss:

    >>> import designer
    >>> from designer.guarantees.exact_table import exact_table
    >>> table = exact_table(designer.Q_2x3(0.6, 0.2))
    >>> table.denominator == 2**53, (table.counts.sum(axis=1) == 2**53).tolist(), round(table.epsilon, 6)
    (True, [True, True], 1.098612)
    >>> float(table.max_change) <= 2**-53  # the largest change of a probability by the rounding
    True
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
    if len(singles) == len(frame) and "wldp" in losses:
        # a Bayesian row: its plausibility equals its belief, so no Walley ratio grows (a Shafer loss alone is
        # served by the row uniform over every answer, which also lowers the ratios of set answers at the budget)
        uniform[:, singles] = 1.0 / len(singles)
    else:
        uniform[:] = 1.0 / matrix.shape[1]
    if exact is not None:
        given = [np.asarray(part, dtype=object).ravel() for part in exact]
        if not all((isinstance(v, int | np.integer) and not isinstance(v, bool | np.bool_))
                   or (isinstance(v, float | np.floating) and v.is_integer())
                   for part in given for v in part):  # 4.5 is not cast to 4, nor True to 1
            raise InvalidArgumentError("exact: counts and denominators must be whole numbers (integers, or floats "
                                       "holding one)")
        counts, dens = np.asarray(exact[0], dtype=np.int64), np.asarray(exact[1], dtype=np.int64)
        if not (counts.shape == matrix.shape and np.all(counts >= 0) and np.array_equal(counts.sum(axis=1), dens)
                and np.all((dens >= 1) & (dens <= MAX_DENOMINATOR))):
            raise InvalidArgumentError("exact: counts must match the mechanism's shape, be >= 0 and sum per row to "
                                       "that row's denominator (at most 2^53)")
        if not all(counts_private(counts, focal, float(epsilon), loss, dens) for loss in losses):
            raise CertificationError(f"the design's exact table is not within eps = {epsilon:g}")
        change = float(np.abs(counts / dens[:, None] - matrix).max())
        uniform_rows = bool(np.all(dens == dens[0]))
        return ExactTable(inputs=tuple(mech.inputs), outputs=labels, counts=counts, epsilon=float(epsilon),
                          semantics=sem, mix_weight=0.0, max_change=change, denominator=int(dens[0]),
                          denominators=() if uniform_rows else tuple(int(d) for d in dens))
    grid = grid_counts(matrix)
    if grid is not None:  # exact fractions: a device's over its own D, a power of two's as counts over 2^32
        counts, denominator = grid
        if DENOMINATOR % denominator == 0:
            counts, denominator = counts * (DENOMINATOR // denominator), DENOMINATOR
        if all(counts_private(counts, focal, float(epsilon), loss) for loss in losses):
            change = float(np.abs(counts / denominator - matrix).max())
            return ExactTable(inputs=tuple(mech.inputs), outputs=labels, counts=counts, epsilon=float(epsilon),
                              semantics=sem, mix_weight=0.0, max_change=change, denominator=denominator)
    weight = 0.0
    while weight < 0.5:
        counts = round_rows((1 - weight) * matrix + weight * uniform, WIDE_DENOMINATOR)
        if all(counts_private(counts, focal, float(epsilon), loss) for loss in losses):
            change = float(np.abs(counts / WIDE_DENOMINATOR - matrix).max())
            return ExactTable(inputs=tuple(mech.inputs), outputs=labels, counts=counts, epsilon=float(epsilon),
                              semantics=sem, mix_weight=weight, max_change=change, denominator=WIDE_DENOMINATOR)
        weight = FIRST_MIX if weight == 0 else 2 * weight
    raise CertificationError(f"no table over 2^53 of this mechanism is within eps = {epsilon:g} even mixed half "
                             "with the uniform row: the mechanism is not within that budget")
