"""Exact tables and the release path of ``randomize`` (designer.exact_table, docs/theory.md section 7.5).

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
from scipy.stats import chisquare

from designer import Mechanism, design, load_problem
from designer.cli import main
from designer.constructors import Q_GWRR, Q_WRR, Q_2x3
from designer.exact_table import DENOMINATOR, ExactTable, OsRandom, SeededRandom, exact_table
from designer.sampling import precise_distributions


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
    assert np.all(table.counts.sum(axis=1) == DENOMINATOR) and np.all(table.counts >= 0)
    if semantics in ("sldp", "both"):
        assert _shafer_ok(table.counts, table.epsilon)
    if semantics in ("wldp", "both"):
        assert _walley_ok(table, [int(b) for b in mech.focal], mech.l, table.epsilon)
    assert table.max_change <= table.mix_weight + 2.0**-31
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
    table = exact_table(Q_2x3(0.6, 0.2))
    for x in range(2):
        cum = np.cumsum(table.counts[x])
        words, expected = [0, DENOMINATOR - 1], [int(np.flatnonzero(table.counts[x])[0]),
                                                 int(np.flatnonzero(table.counts[x])[-1])]
        for j in range(cum.size - 1):
            if table.counts[x, j] > 0:
                words += [int(cum[j]) - 1]
                expected += [j]
            if table.counts[x, j + 1] > 0:
                words += [int(cum[j])]
                expected += [j + 1]
        got = table.sample(np.full(len(words), x), _Words(words))
        assert list(got) == expected


def test_operating_system_draws_fit_the_table():
    table = exact_table(Q_2x3(0.6, 0.2))
    n = 200_000
    for x in range(2):
        drawn = table.sample(np.full(n, x), OsRandom())
        observed = np.bincount(drawn, minlength=table.counts.shape[1])
        expected = table.counts[x] / DENOMINATOR * n
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
    released = out.read_text().split()[1:]
    table = exact_table(Q_WRR(1.0))
    words = SeededRandom(2).words(truth.size)
    cut_yes, cut_no = int(table.counts[0, 0]), int(table.counts[1, 0])  # column 0 is {yes}
    low, high = min(cut_yes, cut_no), max(cut_yes, cut_no)
    revealing = (words >= low) & (words < high)
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
    from designer.exports import randomizer_for

    problem = load_problem(f"problems/{name}.toml")
    mech = design(problem).mechanism
    table = randomizer_for(mech, epsilon=problem.epsilon, semantics=problem.semantics.value).table
    assert table.epsilon == problem.epsilon and np.all(table.counts.sum(axis=1) == DENOMINATOR)
    if problem.semantics.shafer:
        assert _shafer_ok(table.counts, problem.epsilon)
    if problem.semantics.walley:
        assert _walley_ok(table, [int(b) for b in mech.focal], mech.l, problem.epsilon)
