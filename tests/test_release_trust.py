"""What a release draws is what the analyst gets, and its small print holds (docs/theory.md sections 7.5-7.7).

Checked against computations the release code does not use: the drawn channel against the allocation's member
mixed with the uniform row by hand, estimates from a seeded release against the file's true shares, budgets in
Fractions of the decimals written, the manifest's repair fields against the design command's own certificate."""

from __future__ import annotations

import csv
import hashlib
import json
import os
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from designer.cli import main

ROOT = Path(__file__).resolve().parents[1]
GWRR = str(ROOT / "problems" / "gwrr-dont-know.toml")


def _run(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _truth(path: Path, answers: list[str], column: str = "answer") -> None:
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", column])
        w.writerows([(i + 1, a) for i, a in enumerate(answers)])


@pytest.fixture
def gwrr(tmp_path, capsys):
    path = tmp_path / "gwrr.json"
    assert _run(["design", GWRR, "--out", path], capsys)[0] == 0
    return path


def test_a_wldp_allocation_beyond_the_budget_is_refused_and_nothing_is_written(tmp_path, capsys, gwrr):
    _truth(tmp_path / "truth.csv", ["yes", "no"] * 50)
    before = sorted(os.listdir(tmp_path))
    code, out, err = _run(["randomize", tmp_path / "truth.csv", "--mechanism", gwrr, "--column", "answer",
                           "--out", tmp_path / "r.csv", "--semantics", "wldp", "--allocation", "1"], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert f"{gwrr}: its 1 allocation's precise answers have Shafer loss 1.29414 > the budget 1" in err
    assert "--repair" in err and "--semantics wldp" in err
    assert sorted(os.listdir(tmp_path)) == before


def test_a_repaired_release_writes_the_drawn_channel_and_estimates_from_it_cover_the_truth(tmp_path, capsys, gwrr):
    from designer.release.files import open_mechanism_file

    rng = np.random.default_rng(11)
    truth = rng.choice(["yes", "no"], size=40_000, p=[0.3, 0.7]).tolist()
    _truth(tmp_path / "truth.csv", truth)
    code, out, err = _run(["randomize", tmp_path / "truth.csv", "--mechanism", gwrr, "--column", "answer",
                           "--out", tmp_path / "r.csv", "--semantics", "wldp", "--allocation", "1", "--repair",
                           "--seed", "5", "--simulation"], capsys)
    assert code == 0, err
    assert "drawn from a repaired channel" in err
    drawn_path = tmp_path / "r.csv.answer.drawn.json"
    manifest = json.loads((tmp_path / "r.csv.manifest.json").read_text())
    record = manifest["variables"][0]
    assert record["drawn_mechanism"]["path"] == drawn_path.name  # relative to the manifest's folder
    assert record["drawn_mechanism"]["sha256"] == hashlib.sha256(drawn_path.read_bytes()).hexdigest()
    certificate = record["certificate"]
    assert certificate["repaired"] is True and certificate["violation_before_repair"] == pytest.approx(0.29414, 1e-4)
    assert "not the design" in certificate["summary"]
    # The drawn channel, computed here: lambda = 1 sends {yes, no} to the truth; mixed with the uniform row by t.
    design = open_mechanism_file(gwrr).mechanism
    cols = {tuple(s): j for j, s in enumerate(design.focal_sets)}
    t = certificate["mix_weight"]
    member = np.array([[design.matrix[0, cols[("yes",)]] + design.matrix[0, cols[("yes", "no")]],
                        design.matrix[0, cols[("no",)]]],
                       [design.matrix[1, cols[("yes",)]],
                        design.matrix[1, cols[("no",)]] + design.matrix[1, cols[("yes", "no")]]]])
    drawn = open_mechanism_file(drawn_path)
    assert drawn.release is not None and drawn.release.epsilon == 1.0
    assert np.abs(drawn.mechanism.matrix - ((1 - t) * member + t * 0.5)).max() < 1e-9
    # Estimates with the drawn channel cover the file's share.
    share = Fraction(truth.count("yes"), len(truth))
    code, out, err = _run(["estimate", tmp_path / "r.csv", "--manifest", tmp_path / "r.csv.manifest.json",
                           "--format", "json"], capsys)
    assert code == 0, err
    fit = json.loads(out)
    assert fit["status"] == "converged"
    assert fit["ci_low"]["yes"] <= share <= fit["ci_high"]["yes"]
    code, out2, _ = _run(["estimate", tmp_path / "r.csv", "--mechanism", drawn_path, "--format", "json"], capsys)
    assert json.loads(out2)["estimate"] == fit["estimate"]  # the manifest names the drawn channel
    code, out, err = _run(["regress", tmp_path / "r.csv", "--manifest", tmp_path / "r.csv.manifest.json",
                           "--formula", "response ~ 1", "--format", "json"], capsys)
    assert code == 0, err
    intercept = json.loads(out)["coefficients"][0]["estimate"]
    assert 1 / (1 + np.exp(-intercept)) == pytest.approx(fit["estimate"]["yes"], abs=1e-6)
    # A drawn channel changed after the release is refused; so are --manifest with --mechanism and a wrong column.
    for argv, words in [(["--manifest", tmp_path / "r.csv.manifest.json", "--mechanism", gwrr], "not both"),
                        (["--manifest", tmp_path / "r.csv.manifest.json", "--column", "smoke"],
                         "no released column 'smoke'"),
                        (["--manifest", tmp_path / "missing.json"], "no such file"),
                        ([], "give --mechanism FILE")]:
        code, _, err = _run(["estimate", tmp_path / "r.csv", *argv], capsys)
        assert code == 2 and words in err and err.count("\n") == 1, err
    drawn_path.write_text(drawn_path.read_text().replace("{", "{ ", 1))
    code, _, err = _run(["estimate", tmp_path / "r.csv", "--manifest", tmp_path / "r.csv.manifest.json"], capsys)
    assert code == 2 and "SHA-256 differs" in err



def test_budgets_compose_in_the_decimals_written(tmp_path, capsys):
    for name, eps in (("a.json", "0.1"), ("b.json", "0.2")):
        assert _run(["design", ROOT / "problems" / "warner.toml", "--eps", eps, "--out", tmp_path / name],
                    capsys)[0] == 0
    with open(tmp_path / "truth.csv", "w") as f:
        f.write("id,q1,q2\n" + "".join(f"{i},yes,no\n" for i in range(20)))
    args = ["randomize", tmp_path / "truth.csv", "--variable", f"q1={tmp_path / 'a.json'}",
            "--variable", f"q2={tmp_path / 'b.json'}", "--format", "json"]
    code, out, err = _run([*args, "--out", tmp_path / "r.csv", "--budget", "0.3"], capsys)
    assert code == 0, err  # 0.1 + 0.2 is 0.30000000000000004 in doubles
    manifest = json.loads((tmp_path / "r.csv.manifest.json").read_text())
    assert manifest["epsilon_total_exact"] == "3/10"
    code, out, err = _run([*args, "--out", tmp_path / "r2.csv", "--budget", "0.2999999"], capsys)
    assert code == 2 and out == "" and "above --budget" in err and not (tmp_path / "r2.csv").exists()


def test_output_and_manifest_appear_together_or_not_at_all(tmp_path, capsys, gwrr, monkeypatch):
    """A failure while the files are placed (here the data's link, after the manifest's) removes what was placed."""
    from designer.release import staging

    _truth(tmp_path / "truth.csv", ["yes", "no"] * 10)
    placed = []

    def failing(real):
        def call(src, dst, *args, **kwargs):
            if str(dst).endswith("r.csv"):
                raise OSError(28, "No space left on device")
            placed.append(str(dst))
            return real(src, dst, *args, **kwargs)
        return call

    monkeypatch.setattr(staging.os, "link", failing(os.link))
    monkeypatch.setattr(staging.os, "rename", failing(os.rename))
    before = sorted(os.listdir(tmp_path))
    code, _, err = _run(["randomize", tmp_path / "truth.csv", "--mechanism", gwrr, "--column", "answer",
                         "--out", tmp_path / "r.csv"], capsys)
    assert code == 2 and "No space left" in err
    assert str(tmp_path / "r.csv.manifest.json") in placed  # placed before the data, then removed again
    assert sorted(os.listdir(tmp_path)) == before


def test_an_invariant_releases_certificate_states_the_designs_repair(tmp_path, capsys):
    problem = ROOT / "problems" / "pram-party.toml"
    code, out, _ = _run(["design", problem, "--format", "json"], capsys)
    assert code == 0
    detail = json.loads(out)["certificate_detail"]
    with open(tmp_path / "truth.csv", "w") as f:
        f.write("id,party\n" + "".join(f"{i},{p}\n" for i, p in enumerate(["left", "right", "centre", "other"] * 5)))
    assert _run(["randomize", tmp_path / "truth.csv", "--variable", f"party={problem}", "--out",
                 tmp_path / "r.csv"], capsys)[0] == 0
    certificate = json.loads((tmp_path / "r.csv.manifest.json").read_text())["variables"][0]["certificate"]
    for key in ("repaired", "mix_weight", "reference"):
        assert certificate[key] == detail[key], key
    assert (certificate["violation_before_repair"] is None) == (not certificate["repaired"])


def test_a_release_above_five_nats_warns(tmp_path, capsys):
    (tmp_path / "m.csv").write_text("input,{yes},{no}\nyes,0.999999,0.000001\nno,0.000001,0.999999\n")
    _truth(tmp_path / "truth.csv", ["yes", "no"] * 5)
    code, _, err = _run(["randomize", tmp_path / "truth.csv", "--mechanism", tmp_path / "m.csv", "--column",
                         "answer", "--out", tmp_path / "r.csv"], capsys)
    assert code == 0
    assert "column 'answer' is released at 13.82 nats, above 5" in err
    assert json.loads((tmp_path / "r.csv.manifest.json").read_text())["warnings"]


def test_a_zero_mass_is_refused_naming_the_mechanism_file(tmp_path, capsys):
    (tmp_path / "m.csv").write_text("input,{yes},{no}\nyes,1,0\nno,0.5,0.5\n")
    _truth(tmp_path / "truth.csv", ["yes", "no"] * 5)
    code, _, err = _run(["randomize", tmp_path / "truth.csv", "--mechanism", tmp_path / "m.csv", "--column",
                         "answer", "--out", tmp_path / "r.csv"], capsys)
    assert code == 2 and err.count("\n") == 1
    assert err.startswith(f"designer: error: {tmp_path / 'm.csv'}: ") and "infinite" in err
    assert "epsilon must be" not in err and str(tmp_path / "truth.csv") not in err


def test_an_unknown_category_under_a_data_prior_names_its_line(tmp_path, capsys):
    answers = ["left", "right"] * 40
    answers[56] = "purple"
    with open(tmp_path / "truth.csv", "w") as f:
        f.write("id,party\n" + "".join(f"{i},{p}\n" for i, p in enumerate(answers)))
    code, _, err = _run(["randomize", tmp_path / "truth.csv", "--variable",
                         f"party={ROOT / 'problems' / 'pram-party.toml'}", "--invariant-prior", "data",
                         "--prior-budget", "1", "--out", tmp_path / "r.csv"], capsys)
    assert code == 2 and "line 58: 'purple'" in err


def test_the_library_draws_from_the_operating_system_unless_given_a_generator(monkeypatch):
    from designer import Q_GWRR
    from designer.estimation.sampling import randomize, randomize_precise
    from designer.guarantees.exact_table import OsRandom

    calls = []
    real = OsRandom.words

    def counted(self, n):
        calls.append(n)
        return real(self, n)

    monkeypatch.setattr(OsRandom, "words", counted)
    mech = Q_GWRR(1.0, 0.8)
    inputs = ["yes"] * 30_000
    drawn = randomize(mech, inputs)
    assert sum(calls) >= 30_000
    freq = np.bincount(drawn, minlength=mech.matrix.shape[1]) / len(inputs)
    assert np.abs(freq - mech.matrix[0]).max() < 5 * np.sqrt(0.25 / len(inputs))
    calls.clear()
    assert np.array_equal(randomize(mech, inputs[:100], rng=3), randomize(mech, inputs[:100], rng=3))
    randomize_precise(mech, inputs[:100], rng=np.random.default_rng(1))
    assert calls == []
    randomize_precise(mech, inputs[:100])
    assert sum(calls) >= 100


def test_an_invariant_design_file_is_certified_on_its_exact_table(tmp_path, capsys):
    """The masses of an invariant design file are the doubles nearest its table's fractions; the table is what is
    drawn, and its integers decide the release (a ratio at the budget may sit an ulp above it in the doubles)."""
    from designer.guarantees.exact_table import counts_private
    from designer.release.files import open_mechanism_file

    path = tmp_path / "pram.json"
    assert _run(["design", ROOT / "problems" / "pram-party.toml", "--out", path], capsys)[0] == 0
    file = open_mechanism_file(path)
    assert file.exact is not None and file.release is not None
    counts, dens = file.exact
    assert counts_private(counts, [int(b) for b in file.mechanism.focal], 2.0, "sldp", dens)
    code, out, err = _run(["plan", path, "--width", "0.05", "--format", "json"], capsys)
    assert code == 0, err
    assert json.loads(out)["n"] > 0
    # The same table stated at a budget it does not meet is refused.
    obj = json.loads(path.read_text())
    obj["release"]["epsilon"] = 1.99
    path.write_text(json.dumps(obj))
    code, _, err = _run(["plan", path, "--width", "0.05"], capsys)
    assert code == 2 and "the file states Shafer loss <= 1.99" in err


def test_a_parquet_release_keeps_numeric_columns_numbers(tmp_path, capsys, gwrr):
    """Kept numeric columns stay numbers: regress on the release fits age as a slope, not one term per value."""
    import pandas as pd
    import pyarrow.parquet as pq

    rng = np.random.default_rng(1)
    age = rng.integers(20, 70, 400)
    answers = np.where(rng.random(400) < 0.4, "yes", "no")
    pd.DataFrame({"id": np.arange(400), "age": age, "answer": answers}).to_parquet(tmp_path / "t.parquet",
                                                                                   index=False)
    assert _run(["randomize", tmp_path / "t.parquet", "--mechanism", gwrr, "--column", "answer", "--keep", "id,age",
                 "--out", tmp_path / "r.parquet"], capsys)[0] == 0
    schema = pq.read_schema(tmp_path / "r.parquet")
    assert str(schema.field("age").type) == "int64" and str(schema.field("response").type) == "string"
    released = pq.read_table(tmp_path / "r.parquet")
    by_id = dict(zip(released.column("id").to_pylist(), released.column("age").to_pylist()))
    assert by_id == {i: int(a) for i, a in enumerate(age)}  # each age travels with its row
    code, out, err = _run(["regress", tmp_path / "r.parquet", "--mechanism", gwrr, "--formula", "response ~ age",
                           "--format", "json"], capsys)
    assert code == 0, err
    assert sorted({c["term"] for c in json.loads(out)["coefficients"]}) == ["Intercept", "age"]


@pytest.mark.parametrize("seed", ["0", "1", str(2**32), str(2**80)])
def test_every_seed_value_gives_a_reproducible_simulation_with_a_noisy_prior(tmp_path, capsys, seed):
    problem = ROOT / "problems" / "pram-party.toml"
    answers = ["left", "right", "centre", "other"] * 20
    with open(tmp_path / "truth.csv", "w") as f:
        f.write("id,party\n" + "".join(f"{i},{p}\n" for i, p in enumerate(answers)))
    records = []
    for name in ("a.csv", "b.csv"):
        code, _, err = _run(["randomize", tmp_path / "truth.csv", "--variable", f"party={problem}",
                             "--invariant-prior", "data", "--prior-budget", "1", "--out", tmp_path / name,
                             "--seed", seed, "--simulation"], capsys)
        assert code == 0, err
        records.append(json.loads((tmp_path / f"{name}.manifest.json").read_text())["variables"][0])
    assert records[0]["noisy_counts"] == records[1]["noisy_counts"]
    assert (tmp_path / "a.csv").read_text() == (tmp_path / "b.csv").read_text()


def test_the_budget_holds_at_equality_with_the_prior_budget(tmp_path, capsys):
    """pram-party (2 nats) with a prior at 1/3 nat: --budget 7/3 is met exactly; a hair below it is not."""
    problem = ROOT / "problems" / "pram-party.toml"
    with open(tmp_path / "truth.csv", "w") as f:
        f.write("id,party\n" + "".join(f"{i},{p}\n" for i, p in enumerate(["left", "right"] * 40)))
    base = ["randomize", tmp_path / "truth.csv", "--variable", f"party={problem}", "--invariant-prior", "data",
            "--prior-budget", "1/3"]
    code, _, err = _run([*base, "--out", tmp_path / "low.csv", "--budget", "2.333333333333"], capsys)
    assert code == 2 and "above --budget" in err and not (tmp_path / "low.csv").exists()
    code, _, err = _run([*base, "--out", tmp_path / "ok.csv", "--budget", "7/3"], capsys)
    assert code == 0, err
    manifest = json.loads((tmp_path / "ok.csv.manifest.json").read_text())
    assert manifest["epsilon_total_exact"] == "7/3" and manifest["prior_release"]["epsilon_exact"] == "1/3"
