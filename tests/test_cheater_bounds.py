"""Cheater detection: the prevalence's bounds [low, high], each with a confidence interval, in every output.

Under ``everyone:ANSWER`` (Clark and Desharnais 1998) the prevalence of an input lies between ``low`` (its compliant
holders) and ``high`` (``low`` plus every cheater). Checked against the closed form of the two-group design
(moment estimators from the groups' yes-frequencies and their binomial variances), by a seeded simulation of the
coverage, and through ``estimate`` and ``regress`` in table, JSON and CSV.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from designer.cli import main
from designer.estimation.groups import Noncompliance, estimate_groups
from designer.estimation.survey_design import SurveyCounts
from designer.mechanism import Mechanism
from designer.regression.constant_share import estimate_share

DATA = Path(__file__).resolve().parent / "data"
P = (0.3, 0.7)  # a non-carrier says yes with p_g; a carrier always yes; a cheater always no


def _mech(p: float) -> Mechanism:
    return Mechanism(np.array([[1.0, 0.0], [p, 1 - p]]), inputs=["yes", "no"], frame=["yes", "no"], focal=[1, 2])


MECHS = {"1": _mech(P[0]), "2": _mech(P[1])}


def _counts(data: pd.DataFrame) -> SurveyCounts:
    codes = np.where(data["group"] == 1, 0, 2) + np.where(data["response"] == 1, 0, 1)
    return SurveyCounts.from_rows(4, codes)


def _closed_form(data: pd.DataFrame, level: float = 0.95):
    """lambda_g = pi + beta p_g (yes-frequency of group g), beta the compliant non-carriers: beta = (l2 - l1) /
    (p2 - p1), low = pi = l1 - beta p1, high = pi + gamma = 1 - beta; variances from Var l_g = l_g (1 - l_g) / n_g."""
    lam, var = [], []
    for g in (1, 2):
        answers = data.loc[data["group"] == g, "response"]
        lam.append(float(answers.mean()))
        var.append(lam[-1] * (1 - lam[-1]) / len(answers))
    (l1, l2), (v1, v2), (p1, p2) = lam, var, P
    beta = (l2 - l1) / (p2 - p1)
    low, high = l1 - beta * p1, 1 - beta
    se_low = np.sqrt((p2 / (p2 - p1)) ** 2 * v1 + (p1 / (p2 - p1)) ** 2 * v2)
    se_high = np.sqrt((v1 + v2) / (p2 - p1) ** 2)
    z = norm.ppf(0.5 + level / 2)
    return low, high, se_low, se_high, z


@pytest.mark.parametrize("fitter", ["classes", "constant"])
def test_bounds_and_their_intervals_match_the_closed_form(fitter):
    data = pd.read_csv(DATA / "cdm_simulated.csv")
    counts = _counts(data)
    est = (estimate_groups(MECHS, counts, noncompliance="everyone:no") if fitter == "classes"
           else estimate_share(MECHS, counts, Noncompliance.parse("everyone:no")))
    low, high, se_low, se_high, z = _closed_form(data)
    b = est.bounds
    assert b is not None and b.inputs == ("yes", "no")
    assert b.low[0] == pytest.approx(low, abs=1e-8) and b.high[0] == pytest.approx(high, abs=1e-8)
    assert b.low_stderr[0] == pytest.approx(se_low, rel=1e-5) and b.high_stderr[0] == pytest.approx(se_high, rel=1e-5)
    assert b.low_ci_low[0] == pytest.approx(low - z * se_low, abs=1e-7)
    assert b.high_ci_high[0] == pytest.approx(high + z * se_high, abs=1e-7)
    assert b.ci_low[0] == b.low_ci_low[0] and b.ci_high[0] == b.high_ci_high[0]
    assert np.allclose(b.low, est.low) and np.allclose(b.high, est.high)


def test_no_bounds_without_cheater_detection():
    data = pd.read_csv(DATA / "cdm_simulated.csv")
    assert estimate_groups(MECHS, _counts(data)).bounds is None
    assert estimate_groups(MECHS, _counts(data), noncompliance="carriers:no").bounds is None


def test_the_interval_from_low_to_high_covers_the_prevalence():
    """400 seeded surveys (2 x 1,500): prevalence 0.35 = 0.25 honest carriers + 0.10 of the 0.15 cheaters. Each
    bound's interval covers its bound about 95% of the time; [low_ci_low, high_ci_high] covers the prevalence."""
    rng = np.random.default_rng(20261126)
    carriers, cheaters, carrier_cheaters = 0.25, 0.15, 0.10
    covers = {"low": 0, "high": 0, "prevalence": 0}
    reps = 400
    for _ in range(reps):
        rows = []
        for g, p in zip((1, 2), P):
            u = rng.random(1500)
            says_yes = np.where(u < carriers, True, np.where(u < carriers + cheaters, False, rng.random(1500) < p))
            rows.append(pd.DataFrame({"group": g, "response": says_yes.astype(int)}))
        b = estimate_groups(MECHS, _counts(pd.concat(rows)), noncompliance="everyone:no").bounds
        covers["low"] += b.low_ci_low[0] <= carriers <= b.low_ci_high[0]
        covers["high"] += b.high_ci_low[0] <= carriers + cheaters <= b.high_ci_high[0]
        covers["prevalence"] += b.ci_low[0] <= carriers + carrier_cheaters <= b.ci_high[0]
    assert 0.92 <= covers["low"] / reps <= 0.98 and 0.92 <= covers["high"] / reps <= 0.98
    assert covers["prevalence"] / reps >= 0.95


@pytest.fixture
def files(tmp_path):
    data = pd.read_csv(DATA / "cdm_simulated.csv")
    data["response"] = np.where(data["response"] == 1, "yes", "no")
    path = tmp_path / "cdm.csv"
    data.to_csv(path, index=False)
    mechs = []
    for name, mech in MECHS.items():
        mech.to_csv(tmp_path / f"m{name}.csv")
        mechs += ["--mechanism", f"{name}={tmp_path / f'm{name}.csv'}"]
    return path, [*mechs, "--group", "group", "--noncompliance", "everyone:no"]


def _run(argv, capsys):
    code = main([str(a) for a in argv])
    return code, capsys.readouterr().out


@pytest.mark.parametrize("model", ["classes", "constant"])
def test_estimate_shows_the_bounds_in_every_format(files, capsys, model):
    path, options = files
    low, high, se_low, se_high, z = _closed_form(pd.read_csv(DATA / "cdm_simulated.csv"))
    base = ["estimate", path, *options, "--noncompliance-model", model]
    code, out = _run([*base, "--format", "json"], capsys)
    bounds = json.loads(out)["bounds"]["yes"]
    assert code == 0 and bounds["low"] == pytest.approx(low, abs=1e-8)
    assert bounds["high_ci_high"] == pytest.approx(high + z * se_high, abs=1e-6)
    assert bounds["low_ci_low"] == pytest.approx(low - z * se_low, abs=1e-6)
    code, out = _run([*base, "--format", "csv"], capsys)
    table = pd.read_csv(io.StringIO(out)).set_index("input")
    assert table.loc["yes", "high_ci_high"] == pytest.approx(high + z * se_high, abs=1e-6)
    assert table.loc["yes", "low_ci_low"] == pytest.approx(low - z * se_low, abs=1e-6)
    code, out = _run(base, capsys)
    assert "low_ci_low" in out and "high_ci_high" in out and "covers the prevalence" in out


@pytest.mark.parametrize("model", ["classes", "constant"])
def test_regress_shows_the_bounds_in_every_format(files, capsys, model):
    """The intercept-only regression's bounds are the estimate's (the same model)."""
    path, options = files
    low, high, se_low, se_high, z = _closed_form(pd.read_csv(DATA / "cdm_simulated.csv"))
    base = ["regress", path, *options, "--formula", "response ~ 1", "--noncompliance-model", model]
    code, out = _run([*base, "--format", "json"], capsys)
    fit = json.loads(out)
    yes = next(b for b in fit["noncompliance"]["bounds"] if b["input"] == "yes")
    assert yes["low"] == pytest.approx(low, abs=1e-6) and yes["high"] == pytest.approx(high, abs=1e-6)
    assert yes["low_stderr"] == pytest.approx(se_low, rel=1e-4)
    assert yes["high_stderr"] == pytest.approx(se_high, rel=1e-4)
    code, out = _run([*base, "--format", "csv"], capsys)
    rows = pd.read_csv(io.StringIO(out))
    high_row = rows[(rows["outcome"] == "yes") & (rows["term"] == "(prevalence high)")]
    assert high_row["ci_high"].item() == pytest.approx(high + z * se_high, abs=1e-5)
    code, out = _run(base, capsys)
    assert code == 0 and "prevalence of 'yes' between low" in out


def test_regress_with_a_covariate_gives_bounds_that_bracket_the_estimate(files, capsys):
    path, options = files
    code, out = _run(["regress", path, *options, "--formula", "response ~ x", "--format", "json"], capsys)
    fit = json.loads(out)
    assert code == 0
    for b in fit["noncompliance"]["bounds"]:
        assert b["low_ci_low"] <= b["low"] <= b["low_ci_high"] and b["high_ci_low"] <= b["high"] <= b["high_ci_high"]
        assert b["low"] <= b["high"] and b["ci_low"] == b["low_ci_low"] and b["ci_high"] == b["high_ci_high"]
