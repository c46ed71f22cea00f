"""Strata in a microdata release (``[strata]``, ``randomize --strata``; docs/theory.md section 12.4).

Each stratum's design is checked against computations the code does not use: its invariance in Fractions of the
written exact table against the stratum's prior as written, its budget with integer cross-products against a
60-digit Decimal exponential, its optimum against the single-prior design solved at that prior, and the released
file's categories in each stratum against that stratum's prior (chi-square, a seeded simulation of 40,000 rows).
"""

from __future__ import annotations

import csv
import json
import os
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np
import pytest
from scipy.stats import chisquare

from designer import DesignProblem, design
from designer.cli import main
from designer.exceptions import InvalidProblemError
from designer.optimal.invariant import design_strata
from designer.optimal.problem_toml import parse_problem
from designer.release.files import open_mechanism_file

LABELS = ("left", "centre", "right", "other")
STRATA = {"north": (0.40, 0.30, 0.20, 0.10), "south": (0.25, 0.30, 0.35, 0.10), "east": (0.1, 0.2, 0.3, 0.4)}
PROBLEM = """inputs = ["left", "centre", "right", "other"]
prior = [0.35, 0.30, 0.25, 0.10]
epsilon = 1.5
invariant = true
[strata]
north = [0.40, 0.30, 0.20, 0.10]
south = [0.25, 0.30, 0.35, 0.10]
east = [0.1, 0.2, 0.3, 0.4]
"""


def _exp(eps: float) -> Decimal:
    with localcontext() as ctx:
        ctx.prec = 60
        return Decimal(eps).exp()


def _write(path, rows: list[tuple[str, ...]], header: tuple[str, ...]) -> None:
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)


def _regions(path, n_per: int, seed: int = 5, strata=("north", "south")) -> None:
    rng = np.random.default_rng(seed)
    rows = []
    for s in strata:
        cats = rng.choice(LABELS, size=n_per, p=STRATA[s])
        rows += [(str(len(rows) + i), s, c) for i, c in enumerate(cats)]
    _write(path, rows, ("id", "region", "party"))


def test_the_strata_table_is_read_and_checked():
    problem = parse_problem({"inputs": ["a", "b"], "epsilon": 1.0, "invariant": True,
                             "strata": {"n": [0.6, 0.4], "s": [0.25, 0.75]}}, source="p.toml")
    assert problem.strata == (("n", (0.6, 0.4)), ("s", (0.25, 0.75)))
    assert problem != problem.replace(strata=(("n", (0.6, 0.4)),))  # strata are part of the problem's value
    bad = [({"strata": {"n": [0.6, 0.4]}}, "add invariant = true"),
           ({"invariant": True, "strata": {"n": [0.6, 0.5]}}, "key 'strata.n': expected 2 positive numbers"),
           ({"invariant": True, "strata": {"n": [1.0, 0.0]}}, "every share > 0"),
           ({"invariant": True, "strata": {"n": [0.5]}}, "key 'strata.n'"),
           ({"invariant": True, "strata": {"n": "0.5, 0.5"}}, "key 'strata.n': expected a list of numbers"),
           ({"invariant": True, "strata": [0.5, 0.5]}, "key 'strata': expected a table")]
    for extra, words in bad:
        with pytest.raises(InvalidProblemError, match=r"p\.toml: ") as info:
            parse_problem({"inputs": ["a", "b"], "epsilon": 1.0, **extra}, source="p.toml")
        assert words in str(info.value)


def test_each_stratums_design_keeps_its_prior_exactly_and_is_the_optimum_at_that_prior():
    problem = parse_problem({**_toml_dict(), "epsilon": 1.5})
    results = design_strata(problem)
    assert list(results) == list(STRATA)
    e = _exp(1.5)
    for name, result in results.items():
        table = result.exact_table
        pi = [Fraction(v).limit_denominator(100) for v in STRATA[name]]
        assert table.prior == tuple(pi)
        for y in range(4):  # sum_x pi_x C[x, y] / d_x = pi_y, in Fractions
            assert sum(pi[x] * Fraction(int(table.counts[x, y]), int(table.denominators[x])) for x in range(4)) == pi[y]
        for y in range(4):
            for x in range(4):
                for x2 in range(4):
                    num = int(table.counts[x, y]) * int(table.denominators[x2])
                    den = int(table.counts[x2, y]) * int(table.denominators[x])
                    assert num == 0 or (den > 0 and Decimal(num) <= e * Decimal(den))
        alone = design(DesignProblem(objective="truthful",
                                     inputs=LABELS, prior=STRATA[name], epsilon=1.5, invariant=True))
        assert result.objective_value == pytest.approx(alone.objective_value, abs=1e-7)
        assert result.solver_objective == pytest.approx(alone.solver_objective, abs=1e-9)
    with pytest.raises(InvalidProblemError, match="no strata"):
        design_strata(problem.replace(strata=()))


def _toml_dict() -> dict:
    import tomllib

    return tomllib.loads(PROBLEM)


def test_a_stratified_release_keeps_each_stratums_distribution(tmp_path, capsys):
    """40,000 rows in two strata, seeded simulation: each stratum's released categories fit its own prior
    (invariance), the designs written for the analysis read back with their exact tables, and estimate by group
    recovers the strata's shares."""
    problem = tmp_path / "party.toml"
    problem.write_text(PROBLEM)
    data = tmp_path / "survey.csv"
    _regions(data, 20_000)
    out = tmp_path / "release.csv"
    assert main(["randomize", str(data), "--variable", f"party={problem}", "--strata", "region", "--keep", "id",
                 "--out", str(out), "--seed", "3", "--simulation", "--format", "json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["epsilon_total"] == pytest.approx(1.5)  # one stratum's design per respondent: not a sum
    designs = summary["strata"]["party"]["designs"]
    assert summary["strata"]["party"]["column"] == "region" and set(designs) == {"north", "south"}
    with open(out, newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["id", "region", "party"]
    for stratum, path in designs.items():
        assert os.path.dirname(path) == f"{out}.designs"
        file = open_mechanism_file(path)
        release, prior = file.release, file.prior
        assert file.exact is not None
        counts, dens = file.exact
        assert np.array_equal(counts.sum(axis=1), dens)
        assert prior == tuple(Fraction(v).limit_denominator(100) for v in STRATA[stratum])
        assert release is not None and release.epsilon == 1.5
        released = [r[2] for r in rows[1:] if r[1] == stratum]
        observed = [released.count(c) for c in LABELS]
        assert chisquare(observed, [len(released) * p for p in STRATA[stratum]]).pvalue > 1e-4
    manifest = json.loads((tmp_path / "release.csv.manifest.json").read_text())
    record = manifest["variables"][0]
    assert record["strata_column"] == "region" and record["epsilon"] == 1.5
    assert {s["stratum"]: str(tmp_path / s["design_file"]) for s in record["strata"]} == designs  # beside it
    assert all(s["invariant_prior_from"] == "the problem's [strata] table" for s in record["strata"])
    # Each stratum has its own distribution: the regression on the stratum (the command the release prints)
    # gives each stratum's shares, which must be its prior (the released file's frequencies, by invariance).
    args = ["regress", str(out), "--formula", "party ~ C(region)", "--group", "region", "--format", "json",
            *(a for s, p in designs.items() for a in ("--mechanism", f"{s}={p}"))]
    assert main(args) == 0
    fit = json.loads(capsys.readouterr().out)
    assert fit["status"] == "converged"
    coef = {(c["outcome"], c["term"]): c["estimate"] for c in fit["coefficients"]}
    for stratum in ("north", "south"):
        extra = "C(region)[T.south]" if stratum == "south" else None
        logits = np.array([coef[(c, "Intercept")] + (coef[(c, extra)] if extra else 0.0) for c in LABELS[:3]] + [0.0])
        shares = np.exp(logits) / np.exp(logits).sum()
        assert shares == pytest.approx(STRATA[stratum], abs=0.03)


def _released_priors(tmp_path, data, problem, name: str, *extra: str) -> dict:
    out = tmp_path / name
    assert main(["randomize", str(data), "--variable", f"party={problem}", "--strata", "region",
                 "--invariant-prior", "data", "--prior-budget", "0.5", "--out", str(out), *extra]) == 0
    return json.loads((tmp_path / f"{name}.manifest.json").read_text())


def test_stratum_priors_from_the_file_are_noisy_counts_whose_budget_the_loss_includes(tmp_path, capsys):
    problem = tmp_path / "party.toml"
    problem.write_text(PROBLEM.split("[strata]")[0])
    data = tmp_path / "survey.csv"
    _regions(data, 300, strata=("north", "east"))
    manifest = _released_priors(tmp_path, data, problem, "release.parquet", "--seed", "3", "--simulation")
    captured = capsys.readouterr()
    assert "discrete Laplace noise" in captured.err and "designer regress" in captured.out
    assert manifest["epsilon_total_exact"] == "2" and manifest["epsilon_total"] == 2.0  # 1.5 + 0.5
    assert manifest["prior_release"]["epsilon_exact"] == "1/2"
    with open(data, newline="") as f:
        rows = list(csv.DictReader(f))
    text = json.dumps(manifest)
    for record in manifest["variables"][0]["strata"]:
        mine = [r["party"] for r in rows if r["region"] == record["stratum"]]
        exact = [mine.count(c) for c in LABELS]
        noisy = [record["noisy_counts"][c] for c in LABELS]
        assert noisy != exact  # seeded: the noise moved these counts
        kept = [max(c, 1) for c in noisy]
        expected = {c: Fraction(k, sum(kept)) for c, k in zip(LABELS, kept)}
        assert record["invariant_prior"] == {c: f"{f.numerator}/{f.denominator}" for c, f in expected.items()}
        assert "noise" in record["invariant_prior_from"]
        true_prior = {c: Fraction(n, len(mine)) for c, n in zip(LABELS, exact)}
        assert record["invariant_prior"] != {c: f"{f.numerator}/{f.denominator}" for c, f in true_prior.items()}
        stratum_file = open_mechanism_file(tmp_path / record["design_file"])  # relative to the manifest
        assert stratum_file.prior == tuple(expected[c] for c in LABELS)  # the design file keeps the noisy prior
        for c, f in true_prior.items():  # the file's own shares appear nowhere
            assert f"{f.numerator}/{f.denominator}" not in text or f == expected[c]
    again = _released_priors(tmp_path, data, problem, "again.parquet")  # the operating system's generator
    assert [r["noisy_counts"] for r in again["variables"][0]["strata"]] != \
        [r["noisy_counts"] for r in manifest["variables"][0]["strata"]]


def test_a_prior_from_the_data_needs_a_budget_and_enough_rows(tmp_path, capsys):
    problem = tmp_path / "party.toml"
    problem.write_text(PROBLEM.split("[strata]")[0])
    data = tmp_path / "survey.csv"
    _regions(data, 40, strata=("north", "east"))
    before = sorted(os.listdir(tmp_path))
    base = ["randomize", str(data), "--variable", f"party={problem}", "--out", str(tmp_path / "out.csv")]
    for extra, words in [(["--invariant-prior", "data"], "give --prior-budget EPS0"),
                         (["--prior-budget", "1"], "--prior-budget is the budget of a prior read from the file"),
                         (["--invariant-prior", "data", "--prior-budget", "1", "--strata", "region"],
                          "stratum 'north' (column 'region', from line 2) has 40 rows, fewer than --min-stratum 50"),
                         (["--invariant-prior", "data", "--prior-budget", "1", "--min-stratum", "81"],
                          "the file has 80 rows, fewer than --min-stratum 81"),
                         (["--invariant-prior", "data", "--prior-budget", "0"], "--prior-budget: must be > 0")]:
        assert main([*base, *extra]) == 2
        err = capsys.readouterr().err
        assert words in err and err.count("\n") == 1, err
        assert sorted(os.listdir(tmp_path)) == before
    assert main([*base, "--invariant-prior", "data", "--prior-budget", "1", "--strata", "region",
                 "--min-stratum", "40"]) == 0


@pytest.mark.parametrize(("change", "words"), [
    ("missing", "column 'region' holds 'west' (from line 4), which"),
    ("blank", "line 3: no stratum in column 'region'"),
    ("no-table", "has no [strata] table"),
    ("randomized", "--strata names 'party', a column being randomized"),
    ("not-invariant", "no variable is a TOML problem with invariant = true"),
    ("exists", "already exists"),
    ("absent-category", "stratum 'north' (column 'region', from line 2) has 2 rows, fewer than --min-stratum 50"),
])
def test_strata_refusals_name_the_fix_and_write_nothing(tmp_path, capsys, change, words):
    problem = tmp_path / "party.toml"
    problem.write_text(PROBLEM.split("[strata]")[0] if change == "no-table" else PROBLEM)
    plain = tmp_path / "plain.toml"
    plain.write_text('inputs = ["left", "centre", "right", "other"]\nepsilon = 1.0\n')
    data = tmp_path / "survey.csv"
    rows = [("1", "north", "left"), ("2", "" if change == "blank" else "south", "right"),
            ("3", "west" if change == "missing" else "north", "centre")]
    _write(data, rows, ("id", "region", "party"))
    args = ["randomize", str(data), "--variable", f"party={plain if change == 'not-invariant' else problem}",
            "--strata", "party" if change == "randomized" else "region", "--out", str(tmp_path / "out.csv")]
    if change == "exists":
        (tmp_path / "out.csv.designs").mkdir()
    if change == "absent-category":
        args += ["--invariant-prior", "data", "--prior-budget", "1"]
    before = sorted(os.listdir(tmp_path))
    assert main(args) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1
    assert sorted(os.listdir(tmp_path)) == before


def test_an_interrupted_release_leaves_no_design_folder(tmp_path, capsys, monkeypatch):
    from designer.release import randomize_manifest

    problem = tmp_path / "party.toml"
    problem.write_text(PROBLEM)
    data = tmp_path / "survey.csv"
    _regions(data, 50)
    calls = []
    real = randomize_manifest._write_released

    def stop_on_second(*args, **kwargs):
        calls.append(args[1])
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(randomize_manifest, "_write_released", stop_on_second)  # looked up when the designs are written
    assert main(["randomize", str(data), "--variable", f"party={problem}", "--strata", "region",
                 "--out", str(tmp_path / "out.csv")]) == 130  # Ctrl-C
    assert len(calls) == 2 and "interrupted" in capsys.readouterr().err
    assert not [n for n in os.listdir(tmp_path) if "designs" in n]
