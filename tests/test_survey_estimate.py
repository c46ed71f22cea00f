"""The shares under a survey's design (designer.estimation.survey_design): weights, clusters and the variance choices.

Checked against statsmodels' intercept-only logistic regression for the identity mechanism (delta method:
``se(pi) = pi (1 - pi) se(b0)``), and for randomized answers against designer's regression with an intercept only
(parametrised by log-odds, its prevalence by the delta method): a different parametrisation and code path.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from designer import Mechanism
from designer.cli import main
from designer.constructors import Q_2x3
from designer.estimation.sampling import randomize
from designer.estimation.survey_design import SurveyCounts, estimate_survey
from designer.exceptions import DesignerError
from designer.regression import regress

IDENTITY = Mechanism(np.eye(2), inputs=["yes", "no"], frame=["yes", "no"], focal=[1, 2])


def _clustered(seed: int, n: int = 500, groups: int = 30):
    rng = np.random.default_rng(seed)
    g = rng.integers(0, groups, n)
    truth = rng.random(n) < 1 / (1 + np.exp(-(0.2 + rng.normal(size=groups)[g])))
    return rng, g, truth, rng.uniform(0.5, 3.0, n)


def test_identity_mechanism_matches_statsmodels_intercept_only_logit():
    sm = pytest.importorskip("statsmodels.api")
    _, g, truth, w = _clustered(3)
    y, ones = truth.astype(int), np.ones((truth.size, 1))
    codes = np.where(truth, 0, 1)  # IDENTITY's columns: {yes}, {no}
    binomial = sm.families.Binomial()
    cases = [({}, None, sm.Logit(y, ones).fit(disp=0)),
             ({}, "robust", sm.Logit(y, ones).fit(disp=0, cov_type="HC0")),
             ({"cluster": g}, None, sm.Logit(y, ones).fit(disp=0, cov_type="cluster", cov_kwds={"groups": g})),
             ({"weights": w}, None, sm.GLM(y, ones, family=binomial, var_weights=w).fit(cov_type="HC0"))]
    for rows, cov, reference in cases:
        est = estimate_survey(IDENTITY, SurveyCounts.from_rows(2, codes, **rows), cov=cov)
        p = 1 / (1 + np.exp(-reference.params[0]))
        assert est.estimate[0] == pytest.approx(p, abs=1e-9)
        assert est.stderr[0] == pytest.approx(p * (1 - p) * reference.bse[0], rel=1e-7)
        assert est.stderr[1] == pytest.approx(est.stderr[0], rel=1e-9)


@pytest.mark.parametrize("choice", [{"cluster": True}, {"weights": True}, {"cov": "opg"}, {"cov": "robust"},
                                    {"weights": True, "cluster": True}])
def test_randomized_answers_match_the_intercept_only_regression(choice):
    rng, g, truth, w = _clustered(5)
    mech = Q_2x3(0.6, 0.2)
    cols = randomize(mech, np.where(truth, "yes", "no"), rng)
    data = pd.DataFrame({"response": [mech.columns[c] for c in cols], "g": g, "w": w})
    fit = regress("response ~ 1", data, mech, weights="w" if choice.get("weights") else None,
                  cluster="g" if choice.get("cluster") else None, cov=choice.get("cov"))
    prevalence = fit.prevalence(data)
    counts = SurveyCounts.from_rows(3, cols, weights=w if choice.get("weights") else None,
                                    cluster=g if choice.get("cluster") else None)
    est = estimate_survey(mech, counts, cov=choice.get("cov"))
    assert est.estimate == pytest.approx(prevalence["estimate"].to_numpy(), abs=1e-7)
    assert est.stderr == pytest.approx(prevalence["stderr"].to_numpy(), rel=1e-6)
    assert est.variance == fit.variance  # one wording for shares and coefficients


def test_frequency_weights_are_the_replicated_answers_and_opg_is_oim_without_weights():
    rng, _, truth, _ = _clustered(6, n=300)
    mech = Q_2x3(0.6, 0.2)
    cols = randomize(mech, np.where(truth, "yes", "no"), rng)
    times = rng.integers(1, 5, cols.size)
    weighted = estimate_survey(mech, SurveyCounts.from_rows(3, cols, weights=times, weight_kind="frequency"))
    replicated = estimate_survey(mech, SurveyCounts.from_rows(3, np.repeat(cols, times)))
    assert weighted.n == replicated.n == times.sum()
    for name in ("estimate", "stderr", "ci_low", "ci_high"):
        assert getattr(weighted, name) == pytest.approx(getattr(replicated, name), rel=1e-9)
    plain = SurveyCounts.from_rows(3, cols)
    assert estimate_survey(mech, plain, cov="opg").stderr == pytest.approx(estimate_survey(mech, plain).stderr,
                                                                          rel=1e-9)
    assert estimate_survey(mech, plain).variance == "observed information"


def test_unidentified_shares_keep_their_bands_and_say_so():
    four = Mechanism([[0.7, 0.3], [0.5, 0.5], [0.2, 0.8], [0.4, 0.6]], inputs=list("abcd"), frame=list("abcd"),
                     focal=[0b0011, 0b1100])
    est = estimate_survey(four, SurveyCounts.from_rows(2, np.r_[np.zeros(40, int), np.ones(60, int)],
                                                       cluster=np.arange(100) % 7))
    assert est.status == "not_identified" and np.all(np.isnan(est.stderr))
    assert "no standard errors under a survey variance" in est.warnings[-1]


def test_bad_survey_inputs_are_refused_in_words():
    codes = np.array([0, 1, 1, 0])
    with pytest.raises(DesignerError, match=r"^weight -2\.0 of answer 3 is not a positive number"):
        SurveyCounts.from_rows(2, codes, weights=[1, 1, -2, 1])
    with pytest.raises(DesignerError, match="weights must have one entry per answer"):
        SurveyCounts.from_rows(2, codes, weights=[1, 1])
    with pytest.raises(DesignerError, match="1 cluster: a cluster-robust variance needs at least 2"):
        SurveyCounts.from_rows(2, codes, cluster=["a"] * 4)
    with pytest.raises(DesignerError, match=r"column indices in \[0, 2\)"):
        SurveyCounts.from_rows(2, [0, 2])
    with pytest.raises(DesignerError, match="cov 'oim' is not valid with sampling weights"):
        estimate_survey(IDENTITY, SurveyCounts.from_rows(2, codes, weights=[1, 2, 1, 2]), cov="oim")
    with pytest.raises(DesignerError, match="cov 'opg' is not valid with clusters"):
        estimate_survey(IDENTITY, SurveyCounts.from_rows(2, codes, cluster=[1, 1, 2, 2]), cov="opg")


def test_estimate_cli_with_weights_and_clusters(tmp_path, capsys):
    rng, g, truth, w = _clustered(8, n=200, groups=10)
    mech = Q_2x3(0.6, 0.2)
    cols = randomize(mech, np.where(truth, "yes", "no"), rng)
    path = tmp_path / "answers.csv"
    frame = pd.DataFrame({"response": [mech.columns[c] for c in cols], "school": g, "w": w})
    frame.to_csv(path, index=False)
    mech_path = tmp_path / "q2x3.csv"
    mech.to_csv(mech_path)
    args = ["estimate", str(path), "--mechanism", str(mech_path), "--weights", "w", "--cluster", "school"]
    assert main([*args, "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    expected = estimate_survey(mech, SurveyCounts.from_rows(3, cols, weights=w, cluster=g))
    assert out["stderr"]["yes"] == pytest.approx(expected.stderr[0], rel=1e-9)
    assert out["variance"] == expected.variance and out["cluster"] == "school" and out["weight_kind"] == "sampling"
    assert main([*args, "--format", "csv"]) == 0
    assert capsys.readouterr().out.splitlines()[0].startswith("status,variance,input,estimate")
    frame["w"] = frame["w"].astype(object)
    frame.loc[4, "w"] = "heavy"
    frame.to_csv(path, index=False)
    assert main(args) == 2
    assert "line 6: weight 'heavy' in column 'w' is not a positive number" in capsys.readouterr().err
    assert main([*args, "--missing", "drop", "--cov", "oim"]) == 2
    assert "cov 'oim' is not valid with clusters" in capsys.readouterr().err
    assert main(["estimate", str(path), "--mechanism", str(mech_path), "--semantics", "wldp", "--cov", "robust"]) == 2
    assert "apply to set answers" in capsys.readouterr().err
