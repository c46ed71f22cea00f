"""The exact sampler's promises, checked fast and directly (written for the mutation run of the sampler part of
designer.guarantees.exact_table: docs/mutation.md, benchmarks/mutation/report.md; docs/theory.md section 7.5).

Every expected value is worked out here with Python integers, ``fractions.Fraction``, ``hashlib`` and numpy's own
generator, not read off designer: the thresholds ``S_j * floor(2^(32 w) / d)`` and limits of a plan, the column a
given word stream selects (numbers at or above the limit drawn again, in the respondents' order, all their words),
the words each draw consumes, the bytes ``os.urandom`` gives as words, the words a seed gives, the table a
simulation draws from and the fields of a table's certificate. The tables are small and hand-made (no design is
solved), so the whole file runs in a few seconds.
"""

from __future__ import annotations

import hashlib
import math
import os
from fractions import Fraction

import numpy as np
import pytest
from scipy.stats import chisquare

from designer.certificate import certificate_fields
from designer.exceptions import InvalidArgumentError
from designer.guarantees import exact_table as module
from designer.guarantees.exact_table import (
    DrawPlan,
    ExactTable,
    OsRandom,
    SeededRandom,
    sample_counts,
    sample_grid,
    table_of,
    words_per_draw,
)
from designer.vocabulary import Semantics

# ---------------------------------------------------------------- hand-made tables: (counts rows, denominators)

TABLES = {
    # one word, d = 6 (a die): numbers at or above 6 * floor(2^32 / 6) = 2^32 - 4 are drawn again
    "die": ([[5, 1, 0], [1, 5, 0], [0, 3, 3]], [6, 6, 6]),
    # one word, quarters over 2^32: nothing is drawn again; a zero column in the middle
    "quarters": ([[3 * 2**30, 0, 2**30], [2**30, 0, 3 * 2**30]], [2**32, 2**32]),
    # one word, rows over their own denominators (3, 2^32 - 1, 1): every row but d = 1 has a rejection limit
    "own": ([[1, 2, 0], [2**31, 0, 2**31 - 1], [0, 1, 0]], [3, 2**32 - 1, 1]),
    # two words, over 2^53: nothing drawn again; a row ending in zero counts
    "wide": ([[2**52, 2**51, 2**51], [2**53 - 3, 3, 0]], [2**53, 2**53]),
    # two words, own denominators with rejection, one of them one word wide and one of them 1
    "two-own": ([[2, 1, 0, 0], [2**40, 1, 0, 0], [0, 0, 1, 0], [2**62 - 1, 0, 0, 1]], [3, 2**40 + 1, 1, 2**62]),
    # Python-integer counts (a denominator above 2^62): 2^64 (nothing drawn again) and 2^63 + 5 (rejection)
    "python": ([[2**63, 0, 2**63 - 1, 1], [5, 2**63, 0, 0], [1, 1, 1, 0]], [2**64, 2**63 + 5, 3]),
    # a denominator above 2^63 beside small ones and no 2^64: numpy would read such a list as floats
    "mixed": ([[2**63 + 4, 1, 0], [1, 1, 1]], [2**63 + 5, 3]),
    # exactly 2^63: past int64 (the plan must take Python integers)
    "half": ([[2**62, 2**62], [1, 2**63 - 1]], [2**63, 2**63]),
    # 40 columns (more than FEW_COLUMNS = 32: the thresholds are counted row by row), one word, zero-ending rows
    "forty": ([[1] * 40, [0] * 5 + [7] * 5 + [0] * 30, [20] + [0] * 19 + [20] + [0] * 19], [40, 35, 40]),
    # 40 columns, two words
    "forty-wide": ([[2**28] * 32 + [0] * 8, [0] * 39 + [2**33], [2**32] * 2 + [0] * 38], [2**33] * 3),
}


def _counts(name):
    rows, dens = TABLES[name]
    assert [sum(r) for r in rows] == dens
    return np.array(rows, dtype=object if max(dens) > 2**62 else np.int64), dens


def _width(dens):
    return 1 if max(dens) <= 2**32 else 2


def _expected_plan(rows, dens):
    """(words, limits, cuts rows, ends) by hand: s = 2^(32 w) // d, limit s d, thresholds S_j s for the cumulative
    counts S_j of the columns before the last, while S_j < d."""
    w = _width(dens)
    limits, cuts = [], []
    for row, d in zip(rows, dens):
        s = 2 ** (32 * w) // d
        limits.append(s * d)
        total, mine = 0, []
        for c in row[:-1]:
            total += int(c)
            if total < d:
                mine.append(total * s)
        cuts.append(mine)
    return w, limits, cuts


class Stream:
    """Injected 32-bit words served in order; asks for more than given fail the test."""

    name = "injected words"

    def __init__(self, words, kind=np.uint64):
        self.left = [int(v) for v in words]
        self.calls = []
        self.kind = kind  # how the words are served: uint64 (a WordSource's), uint32 or a Python list

    def words(self, n):
        self.calls.append(n)
        taken, self.left = self.left[:n], self.left[n:]
        assert len(taken) == n, "the sampler asked for more words than given"
        return taken if self.kind is list else np.asarray(taken, dtype=self.kind)


def _column(row, d, number, w):
    """The column of an accepted number: its outcome ``number // s`` bracketed by the cumulative counts."""
    s = 2 ** (32 * w) // d
    assert number < s * d
    outcome, total = number // s, 0
    for j, c in enumerate(row):
        total += int(c)
        if outcome < total:
            return j
    raise AssertionError("counts do not sum to the denominator")


def _draws(rows_of_counts, dens, rows, words):
    """Respondents ``rows`` drawn from ``words``: first one number each in order, then the rejected ones again (in
    the respondents' order, all their words), round after round; the columns and the words used."""
    w = _width(dens)
    limits = [(2 ** (32 * w) // d) * d for d in dens]
    it = iter(int(v) for v in words)
    used = 0

    def number():
        nonlocal used
        value = 0
        for _ in range(w):
            value = (value << 32) | next(it)
            used += 1
        return value

    numbers = [number() for _ in rows]
    pending = [i for i, x in enumerate(rows) if numbers[i] >= limits[x]]
    while pending:
        for i in pending:
            numbers[i] = number()
        pending = [i for i in pending if numbers[i] >= limits[rows[i]]]
    return [_column(rows_of_counts[x], dens[x], numbers[i], w) for i, x in enumerate(rows)], used


def _words_of(number, w):
    return [number >> 32, number & 0xFFFFFFFF] if w == 2 else [number]


def _boundaries(rows, dens):
    """Per row, word lists at every boundary: 0, the number below the limit, each threshold and its neighbours, and
    where there is a rejection limit: the limit and the largest number, each followed by an accepted number."""
    w = _width(dens)
    top = 2 ** (32 * w)
    cases = []
    for x, (row, d) in enumerate(zip(rows, dens)):
        s = top // d
        limit = s * d
        numbers = {0, limit - 1}
        total = 0
        for c in row[:-1]:
            total += int(c)
            numbers |= {v for v in (total * s - 1, total * s, total * s + 1) if 0 <= v < limit}
        cases += [(x, _words_of(v, w)) for v in sorted(numbers)]
        if limit < top:
            for bad in sorted({limit, min(limit + 1, top - 1), top - 1}):
                cases += [(x, _words_of(bad, w) + _words_of(0, w)), (x, _words_of(bad, w) + _words_of(limit - 1, w))]
        else:
            cases.append((x, _words_of(top - 1, w)))
    return cases


def _table(name):
    counts, dens = _counts(name)
    k, f = counts.shape
    same = len(set(dens)) == 1
    return ExactTable(inputs=tuple(f"x{i}" for i in range(k)), outputs=tuple(f"y{j}" for j in range(f)),
                      counts=counts, epsilon=1.0, semantics=Semantics.parse("sldp", "semantics"), mix_weight=0.0,
                      max_change=0.0, denominator=dens[0], denominators=() if same else tuple(dens))


# ---------------------------------------------------------------- the plan


@pytest.mark.parametrize("name", list(TABLES))
def test_a_plan_is_the_thresholds_and_limits_worked_out_by_hand(name):
    """A plan's limits are ``floor(2^(32 w) / d) d`` exactly (Python ints), its cuts the thresholds ``S_j s`` of
    the columns before the row's last positive count, in order, then zeros; ``ends`` how many each row has."""
    counts, dens = _counts(name)
    plan = DrawPlan.of(counts, dens)
    w, limits, cuts = _expected_plan(TABLES[name][0], dens)
    assert plan.words == w
    assert plan.limits == tuple(limits) and all(type(v) is int for v in plan.limits)
    assert plan.cuts.dtype == np.uint64 and plan.cuts.shape == (len(dens), counts.shape[1] - 1)
    assert plan.ends.dtype == np.int64 and plan.ends.tolist() == [len(c) for c in cuts]
    assert [[int(v) for v in row] for row in plan.cuts] == [
        c + [0] * (counts.shape[1] - 1 - len(c)) for c in cuts]
    # the same plan from Python lists of counts and denominators, and from counts as Python integers
    for same in (DrawPlan.of(TABLES[name][0], dens), DrawPlan.of(np.array(TABLES[name][0], dtype=object), dens)):
        assert same.words == w and same.limits == plan.limits and same.ends.tolist() == plan.ends.tolist()
        assert same.cuts.dtype == np.uint64 and same.cuts.tolist() == plan.cuts.tolist()
    # the record the exports carry: every integer as 32-bit halves, a limit of 2^64 as [2^32, 0]
    assert plan.record() == {"words": w, "limits": [[v // 2**32, v % 2**32] for v in limits],
                             "cuts": [[[v // 2**32, v % 2**32] for v in row] for row in cuts]}


def test_a_plan_of_a_denominator_of_one_or_two_to_the_64():
    """A row over 1 has no threshold and nothing drawn again (limit ``2^(32 w)``), and a row over 2^64 neither."""
    plan = DrawPlan.of(np.array([[1, 0], [0, 1]]), [1, 1])
    assert (plan.words, plan.limits, plan.ends.tolist(), plan.cuts.tolist()) == (1, (2**32, 2**32), [0, 1], [[0], [0]])
    plan = DrawPlan.of(np.array([[2**53, 0], [0, 1]]), [2**53, 1])
    assert (plan.words, plan.limits, plan.ends.tolist(), plan.cuts.tolist()) == (2, (2**64, 2**64), [0, 1], [[0], [0]])
    plan = DrawPlan.of(np.array([[2**63, 2**63], [0, 1]], dtype=object), [2**64, 1])
    assert plan.limits == (2**64, 2**64) and plan.cuts.tolist() == [[2**63], [0]] and plan.ends.tolist() == [1, 1]
    assert plan.record()["limits"] == [[2**32, 0], [2**32, 0]]


def test_words_per_draw_is_one_up_to_2_32_and_two_up_to_2_64():
    assert words_per_draw([1]) == 1 and words_per_draw([6, 2**32]) == 1 and words_per_draw(np.array([2**32])) == 1
    assert words_per_draw([2**32 + 1]) == 2 and words_per_draw([3, 2**64]) == 2
    assert words_per_draw(np.array([[2, 2**40]], dtype=object)) == 2
    for bad, low, high in (([0], 0, 0), ([5, 0, 7], 0, 7), ([2**64 + 1, 3], 3, 2**64 + 1), ([-1], -1, -1),
                           ([0, 2**63 + 5], 0, 2**63 + 5)):
        with pytest.raises(InvalidArgumentError) as caught:
            words_per_draw(bad)
        assert str(caught.value) == f"a table's denominators must lie in [1, 2^64], got {low} to {high}"


# ---------------------------------------------------------------- a draw, word by word


@pytest.mark.parametrize("few", [32, 0, 10**6])
@pytest.mark.parametrize("name", list(TABLES))
def test_every_boundary_number_gives_its_column_and_uses_exactly_its_words(name, few, monkeypatch):
    """At 0, the number below the limit, every threshold and its neighbours, and past the limit (drawn again with
    all its words): the column the cumulative counts bracket, the words consumed exactly, one read per round; the
    same through ``sample_grid`` (per-row and one scalar denominator) and ``ExactTable.sample``, counted column by
    column (``few`` 32 or more) and row by row (``few`` 0)."""
    monkeypatch.setattr(module, "FEW_COLUMNS", few)
    counts, dens = _counts(name)
    rows = TABLES[name][0]
    table = _table(name) if max(dens) <= 2**53 else None
    w = _width(dens)
    for x, words in _boundaries(rows, dens):
        expected, used = _draws(rows, dens, [x], words)
        assert used == len(words)
        stream = Stream(words)
        assert sample_grid(counts, np.array(dens, dtype=object), np.array([x]), stream.words).tolist() == expected
        assert stream.left == [] and stream.calls == [w] * (used // w), (x, words)
        # counts and denominators as Python lists, words as a list or as uint32: the same draw
        for kind in (list, np.uint32):
            stream = Stream(words, kind)
            assert sample_grid(rows, dens, [x], stream.words).tolist() == expected and stream.left == []
        if max(dens) <= 2**53:  # designer's own tables (an ExactTable's denominators are int64)
            stream = Stream(words)
            got = table.sample([x], stream)
            assert got.dtype == np.int64 and got.tolist() == expected and stream.left == []
        if len(set(dens)) == 1:
            stream = Stream(words)
            assert sample_grid(counts, dens[0], np.array([x]), stream.words).tolist() == expected
            assert stream.left == []


@pytest.mark.parametrize("name", list(TABLES))
def test_many_respondents_draw_in_order_and_the_rejected_again_in_order(name):
    """Several respondents in one call: one number each in their order, then those at or above their row's limit
    again (all their words, in their order, round after round) until every number is below its limit."""
    counts, dens = _counts(name)
    rows_of_counts = TABLES[name][0]
    w = _width(dens)
    rng = np.random.default_rng(sum(dens) % 1000)
    cases = _boundaries(rows_of_counts, dens)
    picks = [cases[i] for i in rng.integers(0, len(cases), 60)]
    rows = [x for x, _ in picks]
    firsts = [wd[:w] for _, wd in picks]
    limits = [(2 ** (32 * w) // d) * d for d in dens]
    # the refills: for each rejected respondent, a rejected number again (where the row has one) and then an
    # accepted one, so the sampler needs three rounds
    refill_1, refill_2 = [], []
    for x, f in zip(rows, firsts):
        first = int("".join(f"{v:032b}" for v in f), 2)
        if first >= limits[x]:
            refill_1 += _words_of(limits[x], w)
            refill_2 += _words_of(limits[x] - 1 - x, w)
    words = [v for f in firsts for v in f] + refill_1 + refill_2
    expected, used = _draws(rows_of_counts, dens, rows, words)
    assert used == len(words)
    stream = Stream(words)
    assert sample_grid(counts, np.array(dens, dtype=object), np.array(rows), stream.words).tolist() == expected
    assert stream.left == []
    assert stream.calls == [w * len(rows)] + ([len(refill_1)] * 2 if refill_1 else [])


def test_no_respondents_draw_nothing():
    """An empty list of respondents gives an empty int64 array of columns and reads no word."""
    for name in ("die", "wide"):
        counts, dens = _counts(name)
        stream = Stream([])
        got = sample_grid(counts, dens[0], [], stream.words)
        assert got.dtype == np.int64 and got.shape == (0,) and stream.calls == [0]
        got = _table(name).sample([], Stream([]))
        assert got.dtype == np.int64 and got.shape == (0,)


def test_sample_counts_counts_the_thresholds_at_or_below_each_number():
    """``sample_counts`` on numbers below the limits: the column is the number of the row's thresholds at or
    below the number; a number equal to a threshold opens the next column with a positive count."""
    for name in TABLES:
        counts, dens = _counts(name)
        plan = DrawPlan.of(counts, dens)
        _, limits, cuts = _expected_plan(TABLES[name][0], dens)
        rows, numbers, expected = [], [], []
        for x, mine in enumerate(cuts):
            for v in {0, limits[x] - 1, *mine, *(c - 1 for c in mine if c), *(c + 1 for c in mine)}:
                if 0 <= v < limits[x]:
                    rows.append(x)
                    numbers.append(v)
                    expected.append(sum(c <= v for c in mine))
        for few in (0, 32, 10**6):
            module.FEW_COLUMNS, saved = few, module.FEW_COLUMNS
            try:
                got = sample_counts(plan, np.array(rows, dtype=np.int64), np.array(numbers, dtype=np.uint64))
            finally:
                module.FEW_COLUMNS = saved
            assert got.dtype == np.int64 and got.tolist() == expected, (name, few)


def test_the_given_words_are_not_written_to():
    """A source that serves views of its own buffer (a replay) finds it unchanged after draws that were rejected."""
    buffer = np.array([2**32 - 1, 5, 2**32 - 2, 7, 2**32 - 4, 4_000_000_000], dtype=np.uint64)
    kept = buffer.copy()
    served = [0]

    def words(n):
        out = buffer[served[0]:served[0] + n]
        served[0] += n
        return out

    got = sample_grid(np.array([[5, 1], [1, 5]]), 6, np.array([0, 1, 0]), words)
    assert np.array_equal(buffer, kept) and served[0] == 6
    expected, used = _draws([[5, 1], [1, 5]], [6, 6], [0, 1, 0], buffer.tolist())
    assert got.tolist() == expected and used == 6


# ---------------------------------------------------------------- sources of words


def test_os_random_reads_four_little_endian_bytes_per_word(monkeypatch):
    """``OsRandom.words(n)`` asks ``os.urandom`` for ``4 n`` bytes and reads them as little-endian 32-bit words."""
    asked = []

    def fake(n):
        asked.append(n)
        return bytes(range(1, n + 1))

    monkeypatch.setattr(os, "urandom", fake)
    words = OsRandom().words(3)
    assert asked == [12] and words.dtype == np.uint64
    assert words.tolist() == [int.from_bytes(bytes(range(1 + 4 * i, 5 + 4 * i)), "little") for i in range(3)]
    monkeypatch.setattr(os, "urandom", lambda n: b"\xff" * n)
    assert OsRandom().words(2).tolist() == [2**32 - 1, 2**32 - 1]


@pytest.mark.parametrize("seed, numpy_seed", [
    (0, 0), (7, 7), (np.int64(5), 5), (np.uint32(9), 9), (2**200, 2**200), ([0], [0]), ([1, 2, 3], [1, 2, 3]),
    ((4, 5), [4, 5]), (np.array([4, 5], dtype=np.uint64), [4, 5]), ([np.int64(0), 2**70], [0, 2**70])])
def test_a_seed_gives_numpys_pcg64_words_of_that_seed(seed, numpy_seed):
    """A seeded source is numpy's generator of that seed: its words are ``integers(0, 2^32)`` as uint64, the
    stream continuing from call to call, the same for the same seed."""
    expected = np.random.default_rng(numpy_seed).integers(0, 2**32, size=12, dtype=np.uint64)
    source = SeededRandom(seed)
    first, rest = source.words(5), source.words(7)
    assert first.dtype == np.uint64 and rest.dtype == np.uint64
    assert np.concatenate([first, rest]).tolist() == expected.tolist()
    assert source.name == "seeded simulation (numpy PCG64)"


def test_a_seed_sequence_or_bit_generator_is_used_as_it_is():
    expected = np.random.default_rng(np.random.SeedSequence(11)).integers(0, 2**32, size=6, dtype=np.uint64)
    assert SeededRandom(np.random.SeedSequence(11)).words(6).tolist() == expected.tolist()
    bits = np.random.PCG64(3)
    expected = np.random.default_rng(np.random.PCG64(3)).integers(0, 2**32, size=6, dtype=np.uint64)
    source = SeededRandom(bits)
    assert source.words(6).tolist() == expected.tolist()
    assert source._rng.bit_generator is bits  # the caller's generator itself, not a copy


def test_a_seeded_source_gives_every_word_from_0_to_2_32_minus_1():
    """The words are the generator's 32-bit outputs as they are: a PCG64 whose next 32-bit output is 0 (or
    2^32 - 1) gives that word, then the outputs that follow."""
    for word in (0, 2**32 - 1):
        bits = np.random.PCG64(0)
        state = bits.state
        state["has_uint32"], state["uinteger"] = 1, word  # the buffered half of the last 64-bit output
        bits.state = state
        following = np.random.default_rng(np.random.PCG64(0)).integers(0, 2**32, size=2, dtype=np.uint64)
        assert SeededRandom(bits).words(3).tolist() == [word, *following.tolist()]


@pytest.mark.parametrize("bad", [-1, True, False, np.bool_(True), 1.5, 2.0, "3", "", None, [], (), [1, -2],
                                 [1.0], [True], b"7", np.array([], dtype=np.int64), np.int64(-3), Fraction(3)])
def test_a_seed_that_is_not_a_whole_number_is_refused_in_words(bad):
    with pytest.raises(InvalidArgumentError) as caught:
        SeededRandom(bad)
    assert str(caught.value) == (f"seed must be a whole number >= 0, a sequence of them or a SeedSequence, "
                                 f"got {bad!r}")


def test_a_seeded_draw_replays_and_is_the_draw_of_the_seeds_words():
    """The draws of a seed are reproducible, and they are exactly the hand-computed draws of that seed's words
    (numbers past the limit of the die's rows drawn again); their counts fit the table (chi-square)."""
    rows_of_counts, dens = [[5, 1], [1, 5]], [6, 6]
    table = ExactTable(inputs=("a", "b"), outputs=("A", "B"), counts=np.array(rows_of_counts), epsilon=math.log(5),
                       semantics=Semantics.parse("sldp", "semantics"), mix_weight=0.0, max_change=0.0, denominator=6)
    rows = np.repeat([0, 1], 3000)
    got = table.sample(rows, SeededRandom(12))
    assert got.tolist() == table.sample(rows, SeededRandom(12)).tolist()
    words = np.random.default_rng(12).integers(0, 2**32, size=rows.size + 50, dtype=np.uint64).tolist()
    expected, _ = _draws(rows_of_counts, dens, rows.tolist(), words)
    assert got.tolist() == expected
    for x in (0, 1):
        observed = np.bincount(got[rows == x], minlength=2)
        share = [float(Fraction(c, 6)) for c in rows_of_counts[x]]
        assert chisquare(observed, np.array(share) * observed.sum()).pvalue > 1e-6


# ---------------------------------------------------------------- the table a simulation draws from


def test_table_of_keeps_a_grid_and_rounds_anything_else_over_2_32():
    """A grid whose denominator does not divide 2^32 is kept over it; a power of two's grid and masses that are no
    grid are counts over 2^32 (floors, then the largest remainders one more), each row summing to 2^32."""
    counts, d = table_of(np.array([[1 / 3, 2 / 3], [0.5, 0.5]]))
    assert (counts.tolist(), d) == ([[2, 4], [3, 3]], 6)
    counts, d = table_of([[0.3, 0.7], [0.7, 0.3]])
    assert (counts.tolist(), d) == ([[3, 7], [7, 3]], 10)
    counts, d = table_of(np.array([[0.75, 0.25], [0.5, 0.5]]))  # quarters: 4 divides 2^32
    assert (counts.tolist(), d) == ([[3 * 2**30, 2**30], [2**31, 2**31]], 2**32)
    p = math.pi / 4
    masses = [[p, 1 - p, 0.0], [0.1 * p, 0.2 * p, 1 - 0.3 * p]]
    counts, d = table_of(np.array(masses))
    assert d == 2**32 and counts.dtype == np.int64
    for row, got in zip(masses, counts.tolist()):
        exact = [Fraction(v) * 2**32 for v in row]
        floors = [math.floor(v) for v in exact]
        short = 2**32 - sum(floors)
        order = sorted(range(len(row)), key=lambda j: -(exact[j] - floors[j]))
        want = [f + (1 if j in order[:short] else 0) for j, f in enumerate(floors)]
        assert got == want and sum(got) == 2**32


# ---------------------------------------------------------------- the certificate a table carries


def test_certificate_record_is_the_certificate_with_the_tables_denominators_change_and_digest():
    table = ExactTable(inputs=("yes", "no"), outputs=("{yes}", "{no}"), counts=np.array([[3, 1], [1, 3]]),
                       epsilon=math.log(3), semantics=Semantics.parse("sldp", "semantics"), mix_weight=2.0**-47,
                       max_change=2.0**-50, denominator=4)
    text = "designer exact table v1\ndenominator 4\ninputs yes\tno\noutputs {yes}\t{no}\n3\t1\n1\t3"
    record = table.certificate_record()
    assert record["method"] == "exact"
    assert record["denominators"] == [4, 4] and all(type(d) is int for d in record["denominators"])
    assert record["max_change"] == 2.0**-50
    assert record["sha256"] == hashlib.sha256(text.encode()).hexdigest()
    assert record["losses"] == ["shafer"] and record["mix_weight"] == 2.0**-47 and record["repaired"] is True
    assert record["reference"] == "row every input shares (uniform over the answers)"
    assert record["arithmetic"] == "the design's exact fractions: integer counts over 4"
    detail = certificate_fields(table.certificate)["certificate_detail"]
    assert record == {"method": "exact", **detail, "denominators": [4, 4], "max_change": 2.0**-50,
                      "sha256": hashlib.sha256(text.encode()).hexdigest()}
    own = ExactTable(inputs=("a", "b"), outputs=("A", "B"), counts=np.array([[2, 1], [1, 4]]), epsilon=2.0,
                     semantics=Semantics.parse("sldp", "semantics"), mix_weight=0.0, max_change=0.0, denominator=3,
                     denominators=(3, 5))
    text = "designer exact table v1\ndenominators 3 5\ninputs a\tb\noutputs A\tB\n2\t1\n1\t4"
    record = own.certificate_record()
    assert record["denominators"] == [3, 5] and record["repaired"] is False and record["reference"] == ""
    assert record["sha256"] == hashlib.sha256(text.encode()).hexdigest() and record["max_change"] == 0.0


# ---------------------------------------------------------------- a table that is not one: refused, never drawn from

def _stream(n: int) -> np.ndarray:
    return np.arange(n, dtype=np.uint64)


@pytest.mark.parametrize(("counts", "denominator", "bad"), [
    ([[1, 1]], 4, "row 0"),  # sums to 2 of 4: drawn as it stood, column 1 had probability 3/4
    ([[5, 1], [1, 5]], [6, 7], "row 1"),  # the second row short of its own denominator
    ([[7, -1]], 6, "row 0"),  # the right sum through a negative count
    ([[0, 0]], 0, "row 0"),  # no denominator at all
    ([[2**63, 1]], 2**64, "row 0"),  # past int64: the exact check in Python integers
    ([[2**63, 2**63], [2**63, 2**63 - 1]], 2**64, "row 1"),
    ([[2**40, 2**40 - 1]], 2**41, "row 0"),  # two-word draws, counts in int64
])
def test_a_row_that_does_not_sum_to_its_denominator_is_refused(counts, denominator, bad):
    """Every row's counts are >= 0 and add up to its denominator, exactly, or nothing is drawn (the row named)."""
    table = np.array(counts, dtype=object) if max(map(max, counts)) >= 2**63 else np.array(counts, dtype=np.int64)
    with pytest.raises(InvalidArgumentError, match=bad):
        sample_grid(table, denominator, np.array([0]), _stream)


@pytest.mark.parametrize("rows", [[-1], [2], [0, 1, 5], [-3, 0]])
def test_a_respondent_outside_the_table_is_refused_not_wrapped(rows):
    """A row index outside 0..k-1 is refused (numpy would read -1 as the last row)."""
    with pytest.raises(InvalidArgumentError, match="rows must index the table's 2 rows"):
        sample_grid(np.array([[5, 1], [1, 5]]), 6, np.array(rows), _stream)


@pytest.mark.parametrize(("counts", "denominator"), [
    ([[5, 1], [1, 5]], 6), ([[6, 0], [0, 6]], [6, 6]), ([[2**63, 2**63]], 2**64), ([[2**40, 2**40]], 2**41),
    ([[1, 0, 0], [0, 3, 1]], [1, 4]),
])
def test_a_valid_table_is_drawn_from_and_no_respondent_is_drawn_from_none(counts, denominator):
    """The check passes every valid table (the columns drawn are those with a count), and no respondent is none."""
    table = np.array(counts, dtype=object) if max(map(max, counts)) >= 2**63 else np.array(counts, dtype=np.int64)
    rows = np.array([x % len(counts) for x in range(40)])
    got = sample_grid(table, denominator, rows, SeededRandom(3).words)
    assert all(counts[x][j] > 0 for x, j in zip(rows.tolist(), got.tolist()))
    assert sample_grid(table, denominator, np.array([], dtype=np.int64), _stream).tolist() == []
