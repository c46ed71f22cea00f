"""A mechanism as a table of integers, certified exactly, and sampled exactly from a cryptographic source
(docs/theory.md section 7.5).

A released randomizer should realise the certified probabilities exactly and draw from a source nobody can
replay. Floats do neither: an inverse-CDF draw compares a float uniform with float cumulative sums, and a seeded
generator can be re-run by anyone who learns the seed. Here each row of the mechanism is written as counts over
the denominator ``D = 2**32`` (every ``count / D`` is a double exactly), the table is certified against the budget
by :func:`designer.privacy.is_private` in exact arithmetic, and a draw takes one 32-bit word ``w`` and returns
the column whose cumulative counts bracket it: the probability of column ``j`` is exactly ``C[x, j] / D``.
"""

from __future__ import annotations

import hashlib
import math
import os
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from .exceptions import CertificationError, InvalidArgumentError
from .mechanism import Mechanism
from .privacy import is_private, worst_case
from .vocabulary import Semantics

__all__ = ["DENOMINATOR", "ExactTable", "OsRandom", "SeededRandom", "exact_table", "round_rows", "sample_counts"]

#: Every table's denominator: counts are integers over 2**32, so count / D is a double exactly.
DENOMINATOR = 2**32
#: First weight of the uniform row mixed in before rounding, doubled until the rounded table certifies.
FIRST_MIX = 2.0**-24


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

    seed: int
    name: str = field(init=False, default="seeded simulation (numpy PCG64)")

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
        Each row sums to :data:`DENOMINATOR`.
    epsilon : float
        The budget the table is certified within (exactly).
    semantics : Semantics
    mix_weight : float
        Weight of the input-independent row mixed in before rounding (0: the rounding alone certified).
    max_change : float
        Largest ``|count / D - mass|`` over the table: the rounding's cost.
    """

    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    counts: NDArray[np.int64]
    epsilon: float
    semantics: Semantics
    mix_weight: float
    max_change: float

    @property
    def sha256(self) -> str:
        """SHA-256 of the table (labels, denominator and counts, one canonical text)."""
        text = "\n".join(["designer exact table v1", f"denominator {DENOMINATOR}", "inputs " + "\t".join(self.inputs),
                          "outputs " + "\t".join(self.outputs),
                          *("\t".join(str(int(c)) for c in row) for row in self.counts)])
        return hashlib.sha256(text.encode()).hexdigest()

    def sample(self, rows: NDArray[np.int64], source: WordSource) -> NDArray[np.int64]:
        """One output column per respondent of row ``rows[i]``: column ``j`` with probability
        ``counts[rows[i], j] / D`` exactly (one 32-bit word each)."""
        rows = np.asarray(rows, dtype=np.int64)
        return sample_counts(self.counts, rows, source.words(rows.size))


#: Up to this many columns a draw counts the cumulative counts below its word column by column (else by row).
FEW_COLUMNS = 32


def sample_counts(counts: NDArray[np.int64], rows: NDArray[np.int64], words: NDArray[np.uint64]
                  ) -> NDArray[np.int64]:
    """The column whose cumulative counts bracket each word: ``j`` with ``S_{j-1} <= words[i] < S_j`` in row
    ``rows[i]`` of ``counts`` (``(k, F)``, rows summing to :data:`DENOMINATOR`); the one sampler of designer."""
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


def exact_table(mech: Mechanism, *, epsilon: float | None = None, semantics: Any = "sldp",
                probabilities: NDArray[np.float64] | None = None, outputs: tuple[str, ...] | None = None
                ) -> ExactTable:
    """The table of ``mech`` (or of the precise ``probabilities`` of a credal member, ``(k, l)``, with their
    ``outputs``) certified within ``epsilon`` (default: the mechanism's own loss under ``semantics``).

    The rows are mixed with a row every input shares (uniform over the singleton answers when each label has one,
    whose plausibility equals its belief; else uniform over the answers) by the smallest weight ``2^-24 * 2^j``
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
