"""A release hides the order its input came in (docs/theory.md section 7.8): the rows are written in a uniformly
random order, in memory or in two passes through bucket files, kept columns and a frame's index travelling with
their row; a file sorted by its sensitive column gives an attacker who reads the release in order no more than
the answers themselves do. --keep-order keeps the input's order only with a warning on stderr and in the manifest.

The uniformity is checked by counting permutations (chi-square over all 24 orders of four rows) and the attack
against the number of answers that are right, with a margin of five standard deviations of two binomial counts."""

from __future__ import annotations

import csv
import itertools
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from designer.cli import main
from designer.release.shuffle import bucket_count, bucket_labels, keys_for, uniform_permutation
from designer.verbs.randomize_verb import randomize

ROOT = Path(__file__).resolve().parents[1]
PRAM = str(ROOT / "problems" / "pram-party.toml")
PARTIES = ["left", "centre", "right", "other"]
SHARES = [0.35, 0.30, 0.25, 0.10]


def _sorted_file(path: Path, n: int = 1000) -> list[str]:
    """A file of ``n`` party answers sorted by the answer (the order of a file is a function of its data)."""
    truth = [p for p, s in zip(PARTIES, SHARES) for _ in range(round(s * n))]
    with open(path, "w", newline="") as f:
        f.write("party\n" + "".join(t + "\n" for t in truth))
    return truth


def _sliding_majority(released: list[str], width: int = 41) -> list[str]:
    """The attack of issue 49: each row's guess is the most frequent released answer among its 41 neighbours."""
    half = width // 2
    out = []
    for i in range(len(released)):
        window = released[max(0, i - half): i + half + 1]
        counts = {p: window.count(p) for p in PARTIES}
        out.append(max(PARTIES, key=lambda p: counts[p]))
    return out


def _released_in_input_order(out: Path, n: int, seed: int) -> list[str]:
    """The released answers put back in the input's order: the seed gives the permutation away (a test may know
    it; a release is drawn from the operating system)."""
    with open(out, newline="") as f:
        column = [row["party"] for row in csv.DictReader(f)]
    back = [""] * n
    for position, row in enumerate(uniform_permutation(n, keys_for(seed))):
        back[row] = column[position]
    return back


def _cli(*argv) -> int:
    return main([str(a) for a in argv])


def _margin(n: int) -> float:
    """Five standard deviations of the difference of two binomial counts of ``n`` trials (each at most n/4)."""
    return 5 * math.sqrt(2 * n / 4)


@pytest.mark.parametrize("prior", [[], ["--invariant-prior", "data", "--prior-budget", "1"]])
def test_a_file_sorted_by_its_answers_gives_no_more_than_the_answers(tmp_path, capsys, prior):
    n, seed = 1000, 17
    truth = _sorted_file(tmp_path / "truth.csv", n)
    out = tmp_path / "r.csv"
    assert _cli("randomize", tmp_path / "truth.csv", "--variable", f"party={PRAM}", "--out", out, *prior,
                "--seed", seed, "--simulation") == 0
    capsys.readouterr()
    with open(out, newline="") as f:
        released = [row["party"] for row in csv.DictReader(f)]
    answers = _released_in_input_order(out, n, seed)
    right = sum(a == t for a, t in zip(answers, truth))  # what the answers themselves give, row by row
    # The attacker reads the release in its order: row i of the release is respondent order[i].
    order = uniform_permutation(n, keys_for(seed))
    at = [truth[row] for row in order]
    recovered = sum(g == t for g, t in zip(_sliding_majority(released), at))
    assert recovered <= right + _margin(n), (recovered, right)
    if prior:  # cut at the published noisy counts, as if the release were still sorted
        noisy = json.loads((tmp_path / "r.csv.manifest.json").read_text())["variables"][0]["noisy_counts"]
        cuts = np.cumsum([max(noisy[p], 0) for p in PARTIES])
        guess = [PARTIES[min(int(np.searchsorted(cuts, i, side="right")), 3)] for i in range(n)]
        assert sum(g == t for g, t in zip(guess, at)) <= right + _margin(n)
    # Kept in the input's order, the same attack recovers nearly every answer: the test can fail.
    assert _cli("randomize", tmp_path / "truth.csv", "--variable", f"party={PRAM}", "--out", tmp_path / "k.csv",
                *prior, "--seed", seed, "--simulation", "--keep-order") == 0
    assert "--keep-order writes the rows in the input's order" in capsys.readouterr().err
    with open(tmp_path / "k.csv", newline="") as f:
        kept = [row["party"] for row in csv.DictReader(f)]
    assert sum(g == t for g, t in zip(_sliding_majority(kept), truth)) > right + _margin(n)
    manifest = json.loads((tmp_path / "k.csv.manifest.json").read_text())
    assert manifest["row_order"].startswith("the input's order (--keep-order)")
    assert any("--keep-order" in w for w in manifest["warnings"])


def test_every_order_of_four_rows_is_equally_likely():
    """All 24 permutations, 2,400 seeded draws (chi-square), and the keys' top bits as uniform buckets."""
    from scipy.stats import chisquare

    counts = dict.fromkeys(itertools.permutations(range(4)), 0)
    for seed in range(2400):
        counts[tuple(uniform_permutation(4, keys_for(seed)).tolist())] += 1
    assert chisquare(list(counts.values())).pvalue > 1e-4
    labels = bucket_labels(80_000, 8, keys_for(1))
    assert chisquare(np.bincount(labels, minlength=8)).pvalue > 1e-4
    assert bucket_count(10, 1000) == 1 and bucket_count(3000, 1000) == 4 and bucket_count(4001, 1000) == 8


def test_equal_keys_are_drawn_again():
    """Two equal keys would favour the stable order of their rows: every key is drawn again."""

    class Keys:
        name = "test"

        def __init__(self) -> None:
            self.calls = 0

        def uint64(self, n):
            self.calls += 1
            return np.array([5, 5, 1][:n] if self.calls == 1 else [3, 1, 2][:n], dtype=np.uint64)

    keys = Keys()
    assert uniform_permutation(3, keys).tolist() == [1, 2, 0] and keys.calls == 2


@pytest.mark.simulation
def test_the_two_pass_shuffle_is_uniform_and_holds_released_values_only(tmp_path, monkeypatch):
    """Past MEMORY_ROWS the rows go through bucket files: every order of four rows is still equally likely, and the
    bucket files hold released values (kept columns and randomized answers), never a true answer."""
    from scipy.stats import chisquare

    from designer.release import randomize_parts

    monkeypatch.setattr(randomize_parts, "MEMORY_ROWS", 1)
    monkeypatch.setattr(randomize_parts, "BUCKET_ROWS", 1)  # four rows: four buckets
    spilled: list[str] = []
    real = randomize_parts.spill

    def watched(table, buckets, keys, path):
        spilled.append(path)
        out = real(table, buckets, keys, path)
        text = Path(path).read_bytes()
        assert b"TRUE-" not in text and buckets == 4
        return out

    monkeypatch.setattr(randomize_parts, "spill", watched)
    frame = pd.DataFrame({"id": [10, 11, 12, 13], "answer": ["TRUE-yes", "TRUE-no", "TRUE-yes", "TRUE-no"]})
    mech = tmp_path / "m.csv"
    mech.write_text("input,{yes},{no}\nTRUE-yes,0.75,0.25\nTRUE-no,0.25,0.75\n")
    counts = dict.fromkeys(itertools.permutations([10, 11, 12, 13]), 0)
    for seed in range(240):  # ten draws a permutation expected: chi-square's approximation holds (>= 5 a cell)
        out = tmp_path / f"r{seed}.csv"
        randomize(frame, str(mech), column="answer", keep="id", out=out, seed=seed, simulation=True)
        counts[tuple(pd.read_csv(out)["id"].tolist())] += 1
        out.unlink()
        (tmp_path / f"r{seed}.csv.manifest.json").unlink()
    assert spilled and chisquare(list(counts.values())).pvalue > 1e-4
    assert sorted(p.name for p in tmp_path.iterdir()) == ["designer-ledger.json", "m.csv"]  # no bucket file left


def test_kept_columns_and_the_index_travel_with_their_row(tmp_path):
    """In memory: a fresh index (the input's index is each row's input position, issue 56), each row its kept
    values; the same seed gives the same order in memory and in a file; the operating system's orders differ from
    run to run; with keep_order each row keeps its index."""
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"answer": rng.choice(["yes", "no"], 300), "age": rng.integers(18, 90, 300)},
                         index=pd.Index([f"r{i:03d}" for i in range(300)], name="who"))
    frame["twice"] = frame["age"] * 2
    design = str(ROOT / "examples" / "mechanisms" / "warner-80.csv")
    got = randomize(frame, design, column="answer", keep=["age", "twice"], seed=4, simulation=True).frame
    assert list(got.index) == list(range(300)) and got.index.name is None  # a fresh index
    assert list(got["age"]) != list(frame["age"]) and sorted(got["age"]) == sorted(frame["age"])  # shuffled
    assert (got["twice"] == 2 * got["age"]).all()
    into = randomize(frame, design, column="answer", keep=["age", "twice"], out=tmp_path / "f.csv", seed=4,
                     simulation=True)
    written = pd.read_csv(tmp_path / "f.csv")
    assert written["age"].tolist() == got["age"].tolist() and written["response"].tolist() == got["response"].tolist()
    assert into.row_order == "shuffled" and "row_order" in into.to_dict()
    first = randomize(frame, design, column="answer", keep="age").frame
    second = randomize(frame, design, column="answer", keep="age").frame
    assert list(first["age"]) != list(second["age"])
    kept = randomize(frame, design, column="answer", keep="age", keep_order=True)
    assert list(kept.frame.index) == list(frame.index) and any("keep_order=True writes" in w for w in kept.warnings)


def test_a_seeded_library_simulation_warns_like_the_cli(tmp_path):
    design = str(ROOT / "examples" / "mechanisms" / "warner-80.csv")
    frame = pd.DataFrame({"answer": ["yes", "no"] * 5})
    result = randomize(frame, design, column="answer", seed=1, simulation=True)
    assert any("anyone who knows the seed can undo it" in w for w in result.warnings)
    assert not randomize(frame, design, column="answer").warnings
