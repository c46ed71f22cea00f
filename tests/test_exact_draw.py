"""Every path of the exact sampler (designer.guarantees.exact_table: DrawPlan, sample_grid, sample_counts,
ExactTable.sample,
OsRandom, SeededRandom) and its JavaScript twin (designer.release.exports.DRAW_JS, in the module, the page and the
platform
snippets), docs/theory.md section 7.5.

The answers are checked against a reference written here with Python integers and division (``W // s`` bracketed
by the cumulative counts), not the thresholds designer compares with: one- and two-word tables, tables of fewer and
more than 32 columns, rows over different denominators, at every boundary number (0, the largest, each threshold and
one below and above it, the rejection limit and the number below it), and the same words through Node give the
same answers as the Python sampler.
"""

from __future__ import annotations

import json
import re
import secrets
import shutil
import subprocess
from fractions import Fraction

import numpy as np
import pytest
from scipy.stats import chisquare

from designer import DesignProblem, Mechanism, design
from designer.constructors import Q_2x3, Q_kRR
from designer.exceptions import InvalidArgumentError
from designer.guarantees.exact_table import (
    DENOMINATOR,
    WIDE_DENOMINATOR,
    DrawPlan,
    OsRandom,
    SeededRandom,
    exact_table,
    sample_grid,
    words_per_draw,
)
from designer.release.exports import DRAW_JS, export_html, export_js, randomizer_for
from designer.release.platforms import platform_script

NODE = shutil.which("node") or shutil.which("nodejs")


class Stream:
    """Injected 32-bit words served in order, however many each call asks for."""

    name = "injected words"

    def __init__(self, words):
        self.left = [int(w) for w in words]

    def words(self, n):
        taken, self.left = self.left[:n], self.left[n:]
        assert len(taken) == n, "the sampler asked for more words than given"
        return np.asarray(taken, dtype=np.uint64)


def reference(counts_row, d, words, w=None):
    """The column a draw gives, and the words it used: ``w`` words per number (the table's: 1 when every row's
    denominator is at most 2^32; default this row's), numbers at or above ``d * floor(2^(32 w) / d)`` skipped, the
    outcome ``W // floor(2^(32 w) / d)`` bracketed by the cumulative counts."""
    w = w or (1 if d <= 2**32 else 2)
    s = 2 ** (32 * w) // d
    i = 0
    while True:
        number = 0
        for word in words[i:i + w]:
            number = (number << 32) | int(word)
        i += w
        if number < s * d:
            break
    outcome, total = number // s, 0
    for j, c in enumerate(counts_row):
        total += int(c)
        if outcome < total:
            return j, i
    raise AssertionError("counts do not sum to the denominator")


def as_words(number, w):
    return [number >> 32, number & 0xFFFFFFFF] if w == 2 else [number]


def boundary_cases(counts, dens):
    """Per row, word lists at every boundary: 0, the largest number, each threshold S_j s and the numbers beside it,
    and for a row with a rejection limit L < 2^(32 w): L and L - 1, and L followed by a good number."""
    cases = []
    w = 1 if max(int(d) for d in dens) <= 2**32 else 2  # the table's words per draw
    for x, (row, d) in enumerate(zip(counts, dens)):
        s = 2 ** (32 * w) // int(d)
        limit, top = s * int(d), 2 ** (32 * w)
        numbers = {0, limit - 1}
        cum = 0
        for c in row[:-1]:
            cum += int(c)
            for v in (cum * s - 1, cum * s, cum * s + 1):
                if 0 <= v < limit:
                    numbers.add(v)
        for v in sorted(numbers):
            cases.append((x, as_words(v, w)))
        if limit < top:
            for bad in (limit, top - 1):
                cases.append((x, as_words(bad, w) + as_words(0, w)))
                cases.append((x, as_words(bad, w) + as_words(limit - 1, w)))
        else:
            cases.append((x, as_words(top - 1, w)))
    return cases


def _die_table():
    from designer.devices import grid_design, parse_device

    problem = DesignProblem(inputs=("yes", "no"), epsilon=1.0, objective="chi2", dont_know_max=0.3)
    mech = grid_design(problem, parse_device("die")).mechanism
    return mech, exact_table(mech, epsilon=1.0)


def _invariant():
    problem = DesignProblem(objective="truthful",
                            inputs=("a", "b", "c"), prior=(0.001, 0.3, 0.699), epsilon=1.0, invariant=True)
    result = design(problem)
    exact = (result.exact_table.counts, result.exact_table.denominators)
    return result.mechanism, exact_table(result.mechanism, epsilon=1.0, exact=exact), exact


def _wide():
    """k-RR over 40 answers: a two-word table of more than 32 columns."""
    return Q_kRR(2.0, 40)


def _power_of_two():
    """Masses in quarters: counts over 2^32, one word per draw, nothing drawn again."""
    return Mechanism([[0.75, 0.25], [0.25, 0.75]], inputs=["yes", "no"], frame=["yes", "no"], focal=[1, 2])


TABLES = {
    "two words, 3 columns": lambda: exact_table(Q_2x3(0.6, 0.2)),
    "two words, 40 columns": lambda: exact_table(_wide()),
    "one word, a die (rejection)": lambda: _die_table()[1],
    "one word, quarters over 2^32": lambda: exact_table(_power_of_two()),
    "two words, rows over their own denominators (rejection)": lambda: _invariant()[1],
}


@pytest.mark.heavy
@pytest.mark.parametrize("name", list(TABLES))
@pytest.mark.parametrize("few", [32, 0, 10**6])
def test_every_boundary_number_gives_the_reference_column(name, few, monkeypatch):
    """Both ways of counting thresholds (column by column up to FEW_COLUMNS, by row above it) at every boundary."""
    from designer.guarantees import exact_table as module

    monkeypatch.setattr(module, "FEW_COLUMNS", few)
    table = TABLES[name]()
    dens = [int(d) for d in table.row_denominators]
    assert table.words == (1 if max(dens) <= 2**32 else 2)
    for x, words in boundary_cases(table.counts, dens):
        expected, used = reference(table.counts[x], dens[x], words)
        got = table.sample(np.array([x]), Stream(words[:used]))
        assert list(got) == [expected], (x, words)
        got = sample_grid(table.counts, table.row_denominators, np.array([x]), Stream(words[:used]).words)
        assert list(got) == [expected]


def test_many_respondents_in_one_call_use_their_words_in_order():
    """Rejected numbers are drawn again in the order of the respondents, each with all its words."""
    table = _invariant()[1]
    dens = [int(d) for d in table.row_denominators]
    rng = np.random.default_rng(4)
    rows = rng.integers(0, 3, 400)
    cases = boundary_cases(table.counts, dens)
    firsts = [cases[i][1][:2] for i in rng.integers(0, len(cases), rows.size)]
    got = table.sample(rows, Stream([w for f in firsts for w in f] + _refills(table, rows, firsts)))
    for x, f, g in zip(rows, firsts, got):
        s = 2**64 // dens[x]
        number = (f[0] << 32) | f[1]
        if number < s * dens[x]:
            assert g == reference(table.counts[x], dens[x], f)[0]
        else:
            assert g == reference(table.counts[x], dens[x], [0, 0])[0]  # refilled with the number 0


def _refills(table, rows, firsts):
    dens = [int(d) for d in table.row_denominators]
    bad = [i for i, (x, f) in enumerate(zip(rows, firsts))
           if ((f[0] << 32) | f[1]) >= (2**64 // dens[x]) * dens[x]]
    return [0, 0] * len(bad)


def test_a_plan_holds_thresholds_and_limits_exactly():
    table = _invariant()[1]
    plan = DrawPlan.of(table.counts, table.row_denominators)
    for x, (row, d) in enumerate(zip(table.counts, table.row_denominators)):
        s = 2**64 // int(d)
        cum = np.cumsum([int(c) for c in row])
        assert plan.limits[x] == s * int(d) < 2**64
        assert [int(v) for v in plan.cuts[x, :plan.ends[x]]] == [int(c) * s for c in cum[:-1] if c < int(d)]
    record = plan.record()
    assert record["words"] == 2 and all(0 <= low < 2**32 and 0 <= high <= 2**32 for row in record["cuts"]
                                        for high, low in row)
    wide = exact_table(Q_2x3(0.6, 0.2)).plan.record()
    assert wide["limits"] == [[2**32, 0], [2**32, 0]]  # 2^53 divides 2^64: nothing is drawn again
    assert words_per_draw([2**32]) == 1 and words_per_draw([2**32 + 1]) == 2 and words_per_draw([6, 2**64]) == 2
    for bad in ([0], [2**64 + 1], [5, -1]):
        with pytest.raises(InvalidArgumentError, match="denominators"):
            words_per_draw(bad)


@pytest.mark.parametrize("name", ["two words, 3 columns", "two words, rows over their own denominators (rejection)",
                                  "one word, a die (rejection)"])
def test_operating_system_draws_fit_the_table(name):
    table = TABLES[name]()
    n = 60_000
    for x in range(table.counts.shape[0]):
        drawn = table.sample(np.full(n, x), OsRandom())
        observed = np.bincount(drawn, minlength=table.counts.shape[1])
        keep = table.counts[x] > 0
        assert observed[~keep].sum() == 0
        expected = np.array([float(Fraction(int(c), int(table.row_denominators[x]))) for c in table.counts[x]])
        assert chisquare(observed[keep], expected[keep] * n).pvalue > 1e-6


@pytest.mark.parametrize("seed", [0, 1, 2**32, 2**64 + 7, 2**200, np.int64(5), np.uint32(9), [1, 2, 3],
                                  np.array([4, 5], dtype=np.uint64), np.random.SeedSequence(11)])
def test_every_seed_form_numpy_takes_is_accepted_and_replays(seed):
    a, b = SeededRandom(seed), SeededRandom(seed if not isinstance(seed, np.random.SeedSequence)
                                            else np.random.SeedSequence(11))
    first = a.words(1000)
    assert np.array_equal(first, b.words(1000)) and first.dtype == np.uint64 and int(first.max()) < DENOMINATOR
    assert SeededRandom(seed).name.startswith("seeded simulation")


def test_a_seed_that_is_not_a_whole_number_is_refused():
    for bad in (-1, True, False, 1.5, "3", None, [], [1, -2], [1.0], b"7"):
        with pytest.raises(InvalidArgumentError, match="seed must be a whole number >= 0"):
            SeededRandom(bad)
    assert not np.array_equal(SeededRandom(0).words(8), SeededRandom(1).words(8))


def test_the_os_source_gives_uniform_32_bit_words():
    words = OsRandom().words(200_000)
    assert words.dtype == np.uint64 and int(words.max()) < 2**32
    top_bits = np.bincount((words >> np.uint64(28)).astype(np.int64), minlength=16)
    assert chisquare(top_bits).pvalue > 1e-6
    assert int(words.max()) > 2**32 - 2**20 and int(words.min()) < 2**20  # the whole range is reached


def test_rounding_over_2_53_keeps_every_mass_to_2_53():
    """A float design's table: counts over 2^53 whose masses are the design's to a unit (2^-53) where no mix was
    needed; every count / D a double exactly."""
    mech = Q_kRR(1.0, 3)  # e / (e + 2): no grid of up to 100,000 outcomes
    table = exact_table(mech, epsilon=1.0 + 1e-9)
    assert table.denominator == WIDE_DENOMINATOR and table.mix_weight == 0
    assert np.abs(table.counts / 2**53 - mech.matrix).max() <= 2.0**-53
    assert all(float(Fraction(int(c), 2**53)) == int(c) / 2**53 for c in table.counts.ravel())


# ---------------------------------------------------------------------------------------------- JavaScript (Node)

RUNNER = """
import { pathToFileURL } from "node:url";
const mod = await import(pathToFileURL(process.argv[2]).href);
import { readFileSync } from "node:fs";
const cases = JSON.parse(readFileSync(process.argv[3], "utf8"));
console.log(JSON.stringify(cases.map(([x, words]) => mod.sample(mod.inputs[x], words))));
"""

DRAW_RUNNER = """
import { readFileSync } from "node:fs";
const [source, plan, cases] = JSON.parse(readFileSync(process.argv[2], "utf8"));
const draw = new Function(source + "\\nreturn designerDraw;")();
console.log(JSON.stringify(cases.map(([x, words]) => {
  let i = 0;
  return draw(plan, x, () => { if (i >= words.length) { throw new RangeError("out of words"); } return words[i++]; });
})));
"""


def _node(script, *args, tmp_path):
    path = tmp_path / "run.mjs"
    path.write_text(script)
    proc = subprocess.run([NODE, str(path), *map(str, args)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _python_answers(table, cases):
    return [int(table.sample(np.array([x]), Stream(words))[0]) for x, words in cases]


@pytest.mark.skipif(NODE is None, reason="Node.js is not installed (.ci/run installs it from Debian)")
@pytest.mark.parametrize("name", list(TABLES))
def test_the_module_and_the_python_sampler_agree_word_for_word(tmp_path, name):
    table = TABLES[name]()
    if name.startswith("one word, a die"):
        mech = _die_table()[0]
        randomizer = randomizer_for(mech, epsilon=1.0)
    elif name.startswith("two words, rows"):
        mech, _, exact = _invariant()
        randomizer = randomizer_for(mech, epsilon=1.0, exact=exact)
    else:
        randomizer = randomizer_for({"two words, 3 columns": Q_2x3(0.6, 0.2), "two words, 40 columns": _wide(),
                                     "one word, quarters over 2^32": _power_of_two()}[name])
    assert randomizer.table.sha256 == table.sha256
    cases = boundary_cases(table.counts, [int(d) for d in table.row_denominators])
    cases += [(x, as_words(secrets.randbelow(table.plan.limits[x]), table.words))
              for x in range(table.counts.shape[0]) for _ in range(20)]
    expected = _python_answers(table, [(x, words) for x, words in cases])
    module = tmp_path / "randomizer.mjs"
    module.write_text(export_js(randomizer))
    (tmp_path / "cases.json").write_text(json.dumps(cases))
    got = _node(RUNNER, module, tmp_path / "cases.json", tmp_path=tmp_path)
    assert got == [randomizer.answers[j] for j in expected]


@pytest.mark.skipif(NODE is None, reason="Node.js is not installed (.ci/run installs it from Debian)")
def test_the_page_and_the_platform_snippets_carry_the_same_plan_and_draw(tmp_path):
    """The page's and the snippets' table data hold the plan the Python sampler uses, and their draw function is
    DRAW_JS, which gives the Python sampler's answers for the same words (run in Node on the page's own data)."""
    mech, table, exact = _invariant()
    randomizer = randomizer_for(mech, epsilon=1.0, exact=exact)
    page = export_html(randomizer)
    data = json.loads(re.search(r'<script type="application/json" id="table">(.*?)</script>', page, re.S).group(1))
    assert data["draw"] == table.plan.record()
    assert DRAW_JS.replace("\n", "\n  ") in page
    for platform in ("qualtrics", "limesurvey"):
        script = platform_script(randomizer, platform)
        assert DRAW_JS.replace("\n", "\n  ") in script
        snippet = json.loads(re.search(r"var t = (\{.*?\});\n", script, re.S).group(1))
        assert snippet["draw"] == data["draw"]
    cases = boundary_cases(table.counts, [int(d) for d in table.row_denominators])
    (tmp_path / "cases.json").write_text(json.dumps([DRAW_JS, data["draw"], cases]))
    got = _node(DRAW_RUNNER, tmp_path / "cases.json", tmp_path=tmp_path)
    assert got == _python_answers(table, cases)


def _full_width():
    """Rows over 2^64 (one number per outcome, nothing drawn again), over 2^63 + 12345 (a number at or above it,
    almost half of them, drawn again) and over 3 * 2^61 + 1: counts beyond int64, as Python integers."""
    dens = [2**64, 2**63 + 12345, 3 * 2**61 + 1]
    rows = [[2**62, 2**63 + 1, 0, 2**62 - 1], [1, 2**62, 2**62 + 12344, 0], [2**61, 0, 2**61 + 1, 2**61]]
    assert [sum(r) for r in rows] == dens
    return np.array(rows, dtype=object), dens


@pytest.mark.parametrize("few", [32, 0])
def test_64_bit_tables_draw_exactly_at_every_boundary(few, monkeypatch):
    from designer.guarantees import exact_table as module

    monkeypatch.setattr(module, "FEW_COLUMNS", few)
    counts, dens = _full_width()
    plan = DrawPlan.of(counts, dens)
    assert plan.words == 2 and plan.limits == (2**64, 2**63 + 12345, 2 * (3 * 2**61 + 1))  # floor(2^64 / d) d
    for x, words in boundary_cases(counts, dens):
        expected, used = reference(counts[x], dens[x], words)
        assert list(sample_grid(counts, np.array(dens, dtype=object), np.array([x]),
                                Stream(words[:used]).words)) == [expected], (x, words)


@pytest.mark.skipif(NODE is None, reason="Node.js is not installed (.ci/run installs it from Debian)")
def test_64_bit_tables_draw_the_same_in_node(tmp_path):
    counts, dens = _full_width()
    cases = boundary_cases(counts, dens)
    limits = DrawPlan.of(counts, dens).limits
    cases += [(x, as_words(secrets.randbelow(limits[x]), 2)) for x in range(3) for _ in range(30)]
    expected = [int(sample_grid(counts, np.array(dens, dtype=object), np.array([x]), Stream(words).words)[0])
                for x, words in cases]
    (tmp_path / "cases.json").write_text(json.dumps([DRAW_JS, DrawPlan.of(counts, dens).record(), cases]))
    assert _node(DRAW_RUNNER, tmp_path / "cases.json", tmp_path=tmp_path) == expected


@pytest.mark.parametrize("dens, rows", [
    ([2**53, 2**53], [[2**52, 2**52, 0], [2**51, 3 * 2**51, 0]]),  # int64 counts, nothing drawn again
    ([2**64, 6], [[2**63, 2**63, 0], [0, 6, 0]]),  # Python-integer counts
    ([2**32, 3], [[2**31, 2**31, 0, 0], [1, 2, 0, 0]]),  # one word
])
def test_rows_ending_in_zero_counts_never_give_those_columns(dens, rows):
    """A row whose last answers have no count: its cumulative count reaches the denominator before the last
    column, where the threshold would be the limit itself (2^64 for a row over 2^53 or 2^64); the draw never
    goes past the row's last positive count."""
    counts = np.array(rows, dtype=object if max(dens) > 2**62 else np.int64)
    for x, words in boundary_cases(counts, dens):
        expected, used = reference(counts[x], dens[x], words, 1 if max(dens) <= 2**32 else 2)
        assert list(sample_grid(counts, np.array(dens, dtype=object), np.array([x]),
                                Stream(words[:used]).words)) == [expected], (x, words)
