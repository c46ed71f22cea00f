"""Variance choices and survey data in regression (docs/theory.md section 9.4).

Without randomization (the identity mechanism) the model is statsmodels' logistic regression, which has every
estimator: the observed information, HC0, cluster-robust (its default small-sample factors), the outer product
of the scores (from its ``score_obs``), frequency weights (``GLM(freq_weights=)``) and sampling weights
(``GLM(var_weights=)`` with HC0: the weighted pseudo-likelihood and its sandwich). With randomization, frequency
weights are checked against the replicated rows and the cluster-robust variance by simulation.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from designer import Mechanism
from designer.cli import main
from designer.constructors import Q_WRR
from designer.exceptions import RegressionError
from designer.regression import regress

IDENTITY = Mechanism(np.eye(2), inputs=["yes", "no"], frame=["yes", "no"], focal=[1, 2])


def _survey(seed: int, n: int = 400, clusters: int = 25) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    g = rng.integers(0, clusters, n)
    u = rng.normal(size=clusters)[g]
    y = (rng.random(n) < 1 / (1 + np.exp(-(-0.3 + 0.8 * x + 0.7 * u)))).astype(int)
    data = pd.DataFrame({"response": np.where(y == 1, "yes", "no"), "x": x, "school": [f"s{v}" for v in g],
                         "w": rng.uniform(0.5, 3.0, n), "times": rng.integers(1, 4, n)})
    return data, y, np.column_stack([np.ones(n), x])


def _se(fit) -> np.ndarray:
    return fit.coefficients["stderr"].to_numpy()


@pytest.mark.parametrize("seed", [1, 2])
def test_identity_mechanism_variances_are_statsmodels_logit(seed):
    sm = pytest.importorskip("statsmodels.api")
    data, y, x = _survey(seed)
    groups = pd.factorize(data["school"])[0]
    model = sm.Logit(y, x)
    plain = model.fit(disp=0)
    fit = regress("response ~ x", data, IDENTITY)
    assert fit.coefficients["estimate"].to_numpy() == pytest.approx(plain.params, abs=1e-7)
    assert _se(fit) == pytest.approx(plain.bse, rel=1e-6) and fit.variance == "observed information"
    robust = regress("response ~ x", data, IDENTITY, cov="robust")
    assert _se(robust) == pytest.approx(model.fit(disp=0, cov_type="HC0").bse, rel=1e-6)
    clustered = regress("response ~ x", data, IDENTITY, cluster="school")
    expected = model.fit(disp=0, cov_type="cluster", cov_kwds={"groups": groups}).bse
    assert _se(clustered) == pytest.approx(expected, rel=1e-6)
    assert clustered.variance.startswith("cluster-robust sandwich over 25 clusters")
    scores = model.score_obs(plain.params)
    opg = regress("response ~ x", data, IDENTITY, cov="OPG")
    assert _se(opg) == pytest.approx(np.sqrt(np.diag(np.linalg.inv(scores.T @ scores))), rel=1e-6)
    # the likelihood-ratio test stays with the likelihood: not under a sandwich
    assert np.isfinite(opg.lr_pvalue) and np.isnan(clustered.lr_pvalue) and np.isnan(robust.lr_pvalue)


def test_weights_are_statsmodels_glm_weights():
    sm = pytest.importorskip("statsmodels.api")
    data, y, x = _survey(3)
    binomial = sm.families.Binomial()
    freq = regress("response ~ x", data, IDENTITY, weights="times", weight_kind="frequency")
    glm = sm.GLM(y, x, family=binomial, freq_weights=data["times"].to_numpy()).fit()
    assert freq.coefficients["estimate"].to_numpy() == pytest.approx(glm.params, abs=1e-7)
    assert _se(freq) == pytest.approx(glm.bse, rel=1e-6) and freq.n == data["times"].sum()
    sampling = regress("response ~ x", data, IDENTITY, weights="w")
    glm = sm.GLM(y, x, family=binomial, var_weights=data["w"].to_numpy()).fit(cov_type="HC0")
    assert sampling.coefficients["estimate"].to_numpy() == pytest.approx(glm.params, abs=1e-7)
    assert _se(sampling) == pytest.approx(glm.bse, rel=1e-6)
    assert sampling.variance == "robust sandwich (HC0), sampling weights" and sampling.n == len(data)


def _warner_survey(seed: int, n: int, clusters: int, p: float = 0.8):
    """Answers through Warner's design at p (ln 4 nats), a school-level covariate and a school effect."""
    rng = np.random.default_rng(seed)
    g = rng.integers(0, clusters, n)
    xs, us = rng.normal(size=clusters), rng.normal(size=clusters)
    eta = -0.5 + 0.6 * xs[g] + 1.0 * us[g]
    truth = rng.random(n) < 1 / (1 + np.exp(-eta))
    told = rng.random(n) < p
    says_yes = np.where(told, truth, ~truth)
    return pd.DataFrame({"response": np.where(says_yes, "yes", "no"), "x": xs[g], "school": g,
                         "times": rng.integers(1, 4, n)})


def test_frequency_weights_are_the_replicated_rows_under_randomization():
    mech = Q_WRR(np.log(4.0))
    data = _warner_survey(4, 300, 30)
    weighted = regress("response ~ x", data, mech, weights="times", weight_kind="FREQUENCY")
    replicated = regress("response ~ x", data.loc[data.index.repeat(data["times"])].reset_index(drop=True), mech)
    for column in ("estimate", "stderr", "ci_low", "ci_high"):
        assert weighted.coefficients[column].to_numpy() == pytest.approx(
            replicated.coefficients[column].to_numpy(), rel=1e-7)
    assert weighted.loglik == pytest.approx(replicated.loglik, rel=1e-10) and weighted.n == replicated.n
    assert weighted.lr_statistic == pytest.approx(replicated.lr_statistic, rel=1e-7)


@pytest.mark.simulation
def test_cluster_robust_intervals_cover_under_randomization():
    """300 surveys of 40 schools through Warner's design, answers correlated within a school. The model's
    pseudo-true slope comes from one survey of 4,000 schools. Cluster-robust 95% intervals cover it within
    Monte Carlo error (3 standard errors of a proportion: at least 0.91); the observed information's, which
    ignore the correlation, cover it clearly less often."""
    mech = Q_WRR(np.log(4.0))
    truth = regress("response ~ x", _warner_survey(0, 60_000, 4_000), mech).coefficients["estimate"].to_numpy()[1]
    robust_hits = naive_hits = 0
    surveys = 300
    for seed in range(1, surveys + 1):
        data = _warner_survey(seed, 600, 40)
        fit = regress("response ~ x", data, mech, cluster="school")
        row = fit.coefficients.iloc[1]
        robust_hits += row["ci_low"] <= truth <= row["ci_high"]
        naive = regress("response ~ x", data, mech).coefficients.iloc[1]
        naive_hits += naive["ci_low"] <= truth <= naive["ci_high"]
    assert robust_hits / surveys >= 0.91, robust_hits
    assert naive_hits < robust_hits - 15, (naive_hits, robust_hits)


def test_bad_weights_clusters_and_variance_choices_are_named():
    data, _, _ = _survey(5, n=60, clusters=6)
    with pytest.raises(RegressionError, match="column 'wt' is not in the data"):
        regress("response ~ x", data, IDENTITY, weights="wt")
    bad = data.copy()
    bad.loc[7, "w"] = -1.0
    message = r"^data row 8: weight '-1\.0' in column 'w' is not a positive number"
    with pytest.raises(RegressionError, match=message) as info:
        regress("response ~ x", bad, IDENTITY, weights="w")
    assert info.value.row == 7
    with pytest.raises(RegressionError, match="cov 'oim' is not valid with sampling weights"):
        regress("response ~ x", data, IDENTITY, weights="w", cov="oim")
    with pytest.raises(RegressionError, match="cov 'opg' is not valid with clusters"):
        regress("response ~ x", data, IDENTITY, cluster="school", cov="opg")
    with pytest.raises(Exception, match="cov must be one of 'oim', 'opg', 'robust', got 'hc3'"):
        regress("response ~ x", data, IDENTITY, cov="hc3")
    one = data.assign(school="all")
    with pytest.raises(RegressionError, match="has 1 cluster"):
        regress("response ~ x", one, IDENTITY, cluster="school")
    assert regress("response ~ x", data, IDENTITY, weights="times", weight_kind="frequency", cov="opg").variance \
        == "outer product of the scores (rr's), frequency weights"


def test_regress_cli_names_the_variance(tmp_path, capsys):
    import json

    data, _, _ = _survey(6, n=120, clusters=12)
    path = tmp_path / "survey.csv"
    data.to_csv(path, index=False)
    mech = tmp_path / "identity.csv"
    IDENTITY.to_csv(mech)
    assert main(["regress", str(path), "--mechanism", str(mech), "--formula", "response ~ x", "--cluster",
                 "school", "--weights", "w", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["variance"].startswith("cluster-robust sandwich over 12 clusters") and out["weights"] == "w"
    assert out["lr_test"]["pvalue"] is None
    assert main(["regress", str(path), "--mechanism", str(mech), "--formula", "response ~ x", "--weights", "w",
                 "--cov", "oim"]) == 2
    assert "cov 'oim' is not valid with sampling weights" in capsys.readouterr().err


@pytest.mark.parametrize(("cov", "cluster"), [("oim", None), ("opg", None), ("robust", None), ("robust", "school")])
def test_frequency_weights_give_every_variance_of_the_replicated_rows(cov, cluster):
    """A row of frequency weight f is f respondents: every variance choice equals the replicated rows' (the outer
    product and the sandwich once squared the weight, 35% and 55% off on this survey, and the cluster factor
    counted rows instead of respondents)."""
    data, _, _ = _survey(7)
    data["response"] = np.where(np.random.default_rng(3).random(len(data)) < 0.8, data["response"],
                                np.where(data["response"] == "yes", "no", "yes"))
    warner = Mechanism(np.array([[0.8, 0.2], [0.2, 0.8]]), inputs=["yes", "no"], frame=["yes", "no"], focal=[1, 2])
    replicated = data.loc[data.index.repeat(data["times"])].reset_index(drop=True)
    weighted = regress("response ~ x", data, warner, weights="times", weight_kind="frequency", cov=cov,
                       cluster=cluster)
    rows = regress("response ~ x", replicated, warner, cov=cov, cluster=cluster)
    np.testing.assert_allclose(weighted.params, rows.params, rtol=0, atol=1e-9)
    np.testing.assert_allclose(_se(weighted), _se(rows), rtol=1e-9)
    assert weighted.n == rows.n == int(data["times"].sum())


@pytest.mark.parametrize(("cov", "cluster"), [("opg", False), ("robust", False), ("robust", True)])
def test_frequency_weighted_shares_have_the_replicated_rows_variance(cov, cluster):
    from designer.estimation.survey_design import SurveyCounts, estimate_survey

    rng = np.random.default_rng(11)
    mech = Mechanism(np.array([[0.6, 0.1, 0.3], [0.1, 0.6, 0.3]]), inputs=["yes", "no"], frame=["yes", "no"],
                     focal=[1, 2, 3])
    codes = rng.integers(0, 3, 300)
    times = rng.integers(1, 5, 300)
    labels = rng.integers(0, 12, 300)
    counted = SurveyCounts.from_rows(3, codes, weights=times, weight_kind="frequency",
                                     cluster=labels if cluster else None)
    replicated = SurveyCounts.from_rows(3, np.repeat(codes, times), cluster=np.repeat(labels, times) if cluster
                                        else None)
    a, b = estimate_survey(mech, counted, cov=cov), estimate_survey(mech, replicated, cov=cov)
    np.testing.assert_allclose(a.estimate, b.estimate, atol=1e-10)
    np.testing.assert_allclose(a.stderr, b.stderr, rtol=1e-8)
    assert a.n == b.n == int(times.sum())
