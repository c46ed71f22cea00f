"""Exact tables and the release path of ``randomize`` (designer.guarantees.exact_table, docs/theory.md section 7.5).

The tables are checked with arithmetic designer does not use here: Fractions of the counts against 60-digit
``Decimal`` exponentials, every event enumerated for the Walley loss. Draws are checked with injected words at the
boundaries of every cumulative count, and the operating system's draws with a chi-square test.
"""

from __future__ import annotations

import json
import math
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import chisquare

from designer import DesignProblem, Mechanism, design, load_problem
from designer.cli import main
from designer.constructors import Q_GWRR, Q_WRR, Q_2x3
from designer.estimation.sampling import draw_rows, precise_distributions
from designer.guarantees.exact_table import (
    WIDE_DENOMINATOR,
    ExactTable,
    OsRandom,
    SeededRandom,
    counts_private,
    exact_table,
    grid_counts,
)
from designer.vocabulary import Semantics


def _exp(eps: float) -> Fraction:
    with localcontext() as ctx:
        ctx.prec = 60
        return Fraction(Decimal(eps).exp())


def _shafer_ok(counts: np.ndarray, eps: float) -> bool:
    bound = _exp(eps) * (1 + Fraction(1, 10**50))  # 60 digits: any ratio this close is not a counterexample
    k = counts.shape[0]
    return all(int(counts[x, j]) <= bound * int(counts[y, j]) for x in range(k) for y in range(k) if x != y
               for j in range(counts.shape[1]))


def _walley_ok(table: ExactTable, focal: list[int], l: int, eps: float) -> bool:
    bound = _exp(eps) * (1 + Fraction(1, 10**50))
    for event in range(1, 2**l - 1):
        pl = [sum(int(c) for c, b in zip(row, focal) if b & event) for row in table.counts]
        bel = [sum(int(c) for c, b in zip(row, focal) if b & ~event == 0) for row in table.counts]
        if any(pl[x] > bound * bel[y] for x in range(len(pl)) for y in range(len(pl)) if x != y):
            return False
    return True


CASES = [(Q_WRR(1.0), "sldp"), (Q_2x3(0.6, 0.2), "sldp"), (Q_2x3(0.6, 0.2), "wldp"), (Q_GWRR(1.0, 0.5), "both")]


@pytest.mark.parametrize("mech, semantics", CASES)
def test_tables_are_within_the_mechanisms_own_loss_exactly(mech, semantics):
    table = exact_table(mech, semantics=semantics)
    assert table.denominator == WIDE_DENOMINATOR == 2**53 and table.words == 2
    assert np.all(table.counts.sum(axis=1) == 2**53) and np.all(table.counts >= 0)
    if semantics in ("sldp", "both"):
        assert _shafer_ok(table.counts, table.epsilon)
    if semantics in ("wldp", "both"):
        assert _walley_ok(table, [int(b) for b in mech.focal], mech.l, table.epsilon)
    assert table.max_change <= table.mix_weight + 2.0**-52
    assert len(table.sha256) == 64 and table.sha256 == exact_table(mech, semantics=semantics).sha256


@pytest.mark.parametrize("name", ["gwrr-dont-know", "frequency-16"])
def test_designs_at_their_budget_get_a_table_within_it(name):
    problem = load_problem(f"problems/{name}.toml")
    result = design(problem)
    table = exact_table(result.mechanism, epsilon=problem.epsilon, semantics="sldp")
    assert table.epsilon == problem.epsilon and _shafer_ok(table.counts, problem.epsilon)
    assert table.max_change < 1e-5


def test_a_mechanism_over_the_budget_has_no_table():
    from designer.exceptions import CertificationError

    with pytest.raises(CertificationError, match="not within that budget"):
        exact_table(Q_WRR(2.0), epsilon=1.0)


def test_precise_member_tables_and_a_ratio_at_the_budget():
    """Warner at exactly ln 4 (0.8 / 0.2): rounding alone may cross e^eps by a unit; the mixed table does not."""
    mech = Mechanism([[0.8, 0.2], [0.2, 0.8]], inputs=["yes", "no"], frame=["yes", "no"], focal=[1, 2])
    table = exact_table(mech, epsilon=math.log(4.0))
    assert _shafer_ok(table.counts, math.log(4.0))
    q = Q_2x3(0.6, 0.2)
    member = exact_table(q, semantics="wldp", probabilities=precise_distributions(q, 0.5), outputs=tuple(q.frame))
    assert member.outputs == ("yes", "no") and _shafer_ok(member.counts, member.epsilon)


class _Words:
    name = "injected"

    def __init__(self, words):
        self._words = np.asarray(words, dtype=np.uint64)

    def words(self, n):
        assert n == self._words.size
        return self._words


def test_a_word_selects_the_column_its_cumulative_counts_bracket():
    """A table over 2^53 reads two words per draw, W = 2^32 w1 + w2, each of the 2^53 outcomes 2^11 numbers long:
    W = S_j 2^11 is column j + 1's first number, one below it column j's last."""
    table = exact_table(Q_2x3(0.6, 0.2))
    for x in range(2):
        cum = [sum(int(c) for c in table.counts[x][:j + 1]) for j in range(table.counts.shape[1])]
        numbers, expected = [0, 2**64 - 1], [int(np.flatnonzero(table.counts[x])[0]),
                                             int(np.flatnonzero(table.counts[x])[-1])]
        for j in range(len(cum) - 1):
            if table.counts[x, j] > 0:
                numbers += [cum[j] * 2**11 - 1]
                expected += [j]
            if table.counts[x, j + 1] > 0:
                numbers += [cum[j] * 2**11]
                expected += [j + 1]
        words = [w for v in numbers for w in (v >> 32, v & 0xFFFFFFFF)]
        got = table.sample(np.full(len(numbers), x), _Words(words))
        assert list(got) == expected


def test_operating_system_draws_fit_the_table():
    table = exact_table(Q_2x3(0.6, 0.2))
    n = 200_000
    for x in range(2):
        drawn = table.sample(np.full(n, x), OsRandom())
        observed = np.bincount(drawn, minlength=table.counts.shape[1])
        expected = table.counts[x] / table.denominator * n
        assert chisquare(observed, expected).pvalue > 1e-6


def test_a_seeded_draw_can_be_undone_and_the_release_path_has_no_seed(tmp_path, capsys):
    """The attack: with the seed, the words are known; for Warner at eps = 1 a word below min(C_yes) or above
    max(C_yes) gives the same answer whatever the truth, any other word gives away the truth. The release path
    refuses --seed without --simulation (exit 2) and records no seed."""
    rng = np.random.default_rng(0)
    truth = rng.choice(["yes", "no"], 10_000)
    src = tmp_path / "truth.csv"
    src.write_text("answer\n" + "\n".join(truth) + "\n")
    mech = tmp_path / "warner.csv"
    Q_WRR(1.0).to_csv(mech)
    out = tmp_path / "out.csv"
    assert main(["randomize", str(src), "--mechanism", str(mech), "--column", "answer", "--out", str(out), "--seed",
                 "2", "--simulation"]) == 0
    assert "anyone who knows the seed can undo it" in capsys.readouterr().err
    from designer.release.shuffle import keys_for, uniform_permutation

    order = uniform_permutation(truth.size, keys_for(2))  # the seed gives the rows' order away too
    released = np.empty(truth.size, dtype=object)
    released[order] = out.read_text().split()[1:]
    table = exact_table(Q_WRR(1.0))
    pairs = SeededRandom(2).words(2 * truth.size).reshape(-1, 2)  # two words per draw over 2^53
    numbers = [(int(a) << 32) | int(b) for a, b in pairs]
    cut_yes, cut_no = (int(table.counts[x, 0]) * table.plan.limits[x] // table.denominator for x in (0, 1))
    low, high = min(cut_yes, cut_no), max(cut_yes, cut_no)  # column 0 is {yes}
    revealing = np.array([low <= v < high for v in numbers])
    guess = np.where(np.asarray(released) == "{yes}", "yes", "no")  # the answer that only the truth gives there
    recovered = guess[revealing]
    assert revealing.mean() > 0.4 and np.all(recovered == truth[revealing])
    assert main(["randomize", str(src), "--mechanism", str(mech), "--column", "answer", "--out",
                 str(tmp_path / "o2.csv"), "--seed", "2"]) == 2
    assert "--simulation" in capsys.readouterr().err and not (tmp_path / "o2.csv").exists()


def test_three_variables_in_one_release(tmp_path, capsys):
    rng = np.random.default_rng(1)
    n = 500
    data = tmp_path / "people.csv"
    rows = zip(range(n), rng.choice(["yes", "no"], n), rng.choice(["yes", "no"], n), rng.choice(["yes", "no"], n))
    data.write_text("id,drugs,tax,vote\n" + "".join(f"{i},{a},{b},{c}\n" for i, a, b, c in rows))
    warner, q23 = tmp_path / "warner.csv", tmp_path / "q23.csv"
    Q_WRR(1.0).to_csv(warner)
    Q_2x3(0.6, 0.2).to_csv(q23)
    out = tmp_path / "release.csv"
    args = ["randomize", str(data), "--variable", f"drugs={warner}", "--variable", f"tax={q23}", "--variable",
            "vote=problems/gwrr-dont-know.toml", "--keep", "id", "--out", str(out)]
    assert main([*args, "--budget", "2.5"]) == 2
    assert "above --budget 2.5" in capsys.readouterr().err and not out.exists()
    assert main([*args, "--format", "json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    eps = [1.0, math.log(0.6 / 0.2), load_problem("problems/gwrr-dont-know.toml").epsilon]
    assert summary["epsilon_total"] == pytest.approx(sum(eps), rel=1e-9)
    assert summary["random_source"].startswith("os.urandom")
    import csv

    rows_out = list(csv.reader(out.read_text().splitlines()))
    assert rows_out[0] == ["id", "drugs", "tax", "vote"] and len(rows_out) == n + 1
    for row in rows_out[1:]:  # every randomized cell is a reported set, never a true value
        assert all(cell.startswith("{") and cell.endswith("}") for cell in row[1:]), row
    manifest = json.loads((tmp_path / "release.csv.manifest.json").read_text())
    assert manifest["random_source"].startswith("os.urandom") and "seed" not in manifest
    assert [v["column"] for v in manifest["variables"]] == ["drugs", "tax", "vote"]
    assert manifest["epsilon_total"] == pytest.approx(sum(eps), rel=1e-9)
    assert all(len(v["sha256"]) == 64 for v in manifest["variables"])


@pytest.mark.parametrize("name", ["frequency-16", "gwrr-dont-know-wldp", "gwrr-dont-know", "survey-5-options-utility",
                                  "survey-5-options", "warner"])
def test_every_bundled_problem_exports_a_table_within_its_budget(name):
    """The table `designer export` writes for each bundled problem, checked within the problem's budget with
    Fractions (Shafer) and every event (Walley), as its semantics asks."""
    from designer.release.exports import randomizer_for

    problem = load_problem(f"problems/{name}.toml")
    mech = design(problem).mechanism
    table = randomizer_for(mech, epsilon=problem.epsilon, semantics=problem.semantics.value).table
    assert table.epsilon == problem.epsilon and np.all(table.counts.sum(axis=1) == table.denominator)
    assert table.denominator in (2**53, 2**32) or (table.denominator <= 100_000 and table.words == 1)
    if problem.semantics.shafer:
        assert _shafer_ok(table.counts, problem.epsilon)
    if problem.semantics.walley:
        assert _walley_ok(table, [int(b) for b in mech.focal], mech.l, problem.epsilon)


class _Stream:
    """Injected words served in order, however many each call asks for."""

    name = "injected stream"

    def __init__(self, words):
        self._words = list(words)

    def words(self, n):
        taken, self._words = self._words[:n], self._words[n:]
        assert len(taken) == n
        return np.asarray(taken, dtype=np.uint64)


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_integer_certificates_agree_with_fractions_over_every_event(data):
    """counts_private against Fractions and every event enumerated, at budgets on both sides of the table's own
    loss (ln of its worst ratio, rounded either way)."""
    k, l = data.draw(st.integers(2, 3)), data.draw(st.integers(2, 3))
    focal = data.draw(st.lists(st.integers(1, 2**l - 1), min_size=1, max_size=2**l - 1, unique=True))
    d = data.draw(st.integers(2, 12))
    counts = np.array([np.bincount(data.draw(st.lists(st.integers(0, len(focal) - 1), min_size=d, max_size=d)),
                                   minlength=len(focal)) for _ in range(k)])
    table = ExactTable(inputs=tuple(f"x{i}" for i in range(k)), outputs=tuple(map(str, focal)), counts=counts,
                       epsilon=1.0, semantics=Semantics.SLDP, mix_weight=0.0, max_change=0.0, denominator=d)
    for loss in ("sldp", "wldp"):
        ratios = [Fraction(int(a), int(b)) for a, b in _pairs(counts, focal, l, loss) if a > 0 and b > 0]
        budgets = [0.3, 2.5] + [math.log(float(max(ratios))) * f for f in (1 - 1e-12, 1 + 1e-12) if ratios and
                                max(ratios) > 1]
        for eps in budgets:
            expected = _shafer_ok(counts, eps) if loss == "sldp" else _walley_ok(table, focal, l, eps)
            assert counts_private(counts, focal, eps, loss) is expected


def _pairs(counts, focal, l, loss):
    k = counts.shape[0]
    if loss == "sldp":
        return [(counts[x, j], counts[y, j]) for x in range(k) for y in range(k) if x != y
                for j in range(len(focal))]
    out = []
    for event in range(1, 2**l - 1):
        pl = [sum(int(c) for c, b in zip(row, focal) if b & event) for row in counts]
        bel = [sum(int(c) for c, b in zip(row, focal) if b & ~event == 0) for row in counts]
        out += [(pl[x], bel[y]) for x in range(k) for y in range(k) if x != y]
    return out


def test_a_device_design_keeps_its_fractions_and_words_past_the_limit_are_drawn_again():
    """A die's design: the table is its sixths in lowest terms; a word at or above 3 * floor(2^32 / 3) is drawn
    again, and the words of each third are exactly floor(2^32 / 3) long. A float design is no grid."""
    from designer.devices import grid_design, parse_device

    problem = DesignProblem(inputs=("yes", "no"), epsilon=1.0, objective="chi2", dont_know_max=0.3)
    mech = grid_design(problem, parse_device("die")).mechanism
    counts, d = grid_counts(mech.matrix)
    assert [[Fraction(int(c), d) for c in row] for row in counts] == [
        [Fraction(v).limit_denominator(6) for v in row] for row in mech.matrix]
    table = exact_table(mech, epsilon=1.0)
    assert table.denominator == d == 3 and table.max_change < 1e-16 and table.mix_weight == 0
    assert np.array_equal(table.counts, counts) and table.arithmetic.endswith("over 3")
    scale = 2**32 // 3
    assert (table.scale, table.limit) == (scale, 3 * scale)
    x = 0
    first = int(np.flatnonzero(counts[x])[0])
    edge = int(counts[x, first]) * scale  # the first word of the second column
    second = int(np.flatnonzero(counts[x])[1])
    # three words, the first two past the limit: they are replaced by the next two, in order
    words = [3 * scale, 2**32 - 1, edge - 1, edge, 0]
    got = table.sample(np.zeros(3, dtype=np.int64), _Stream(words))
    assert list(got) == [second, first, first]
    assert grid_counts(Q_WRR(1.0).matrix) is None and exact_table(Q_WRR(1.0)).denominator == WIDE_DENOMINATOR
    n = 120_000
    drawn = table.sample(np.full(n, 1), OsRandom())
    assert chisquare(np.bincount(drawn, minlength=2), counts[1] / 3 * n).pvalue > 1e-6
    simulated = draw_rows(mech.matrix, np.full(n, 1), np.random.default_rng(5))
    assert chisquare(np.bincount(simulated, minlength=2), counts[1] / 3 * n).pvalue > 1e-6
