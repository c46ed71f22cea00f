"""Wald and likelihood-ratio tests of one share (designer.estimation.share_tests, estimate --test): the likelihood-ratio
statistic against Warner's binomial likelihood maximised independently, the constrained maximum of a three-input
design against a bounded scalar search, the test's level by simulation with few respondents, and the CLI in
every format."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from scipy.stats import chi2

from designer import Mechanism
from designer.cli import main
from designer.estimation.share_tests import constrained_mle, share_test
from designer.estimation.shares import estimate_sldp

P = 0.8
WARNER = Mechanism(np.array([[P, 1 - P], [1 - P, P]]), inputs=["yes", "no"], frame=["yes", "no"], focal=[1, 2])


def _binomial_loglik(pi: float, yes: int, no: int) -> float:
    lam = P * pi + (1 - P) * (1 - pi)
    return yes * math.log(lam) + no * math.log(1 - lam)


@pytest.mark.parametrize(("yes", "no", "null"), [(18, 12, 0.3), (5, 25, 0.5), (29, 1, 0.9), (3, 27, 0.1),
                                                 (10, 10, 0.5)])
def test_the_likelihood_ratio_is_warners_binomial_one(yes, no, null):
    counts = np.array([yes, no], dtype=float)
    est = estimate_sldp(WARNER, counts)
    result = share_test(WARNER, counts, est.estimate, est.stderr, "yes", null)
    best = minimize_scalar(lambda p: -_binomial_loglik(p, yes, no), bounds=(0.0, 1.0), method="bounded",
                           options={"xatol": 1e-12})
    top = max(-best.fun, *(_binomial_loglik(p, yes, no) for p in (1e-300, 1.0 - 1e-16)))  # the ends too
    expected = 2 * (top - _binomial_loglik(null, yes, no))
    assert result.lr_statistic == pytest.approx(max(expected, 0.0), abs=1e-7)
    assert result.lr_pvalue == pytest.approx(chi2.sf(result.lr_statistic, 1), rel=1e-12)
    assert result.constrained.tolist() == [null, 1 - null] and result.converged
    se = est.stderr[0]
    if np.isnan(se):  # on the boundary with a standard error above the range: no Wald test
        assert est.status == "boundary" and np.isnan(result.wald_statistic)
    else:
        assert result.wald_statistic == pytest.approx(((est.estimate[0] - null) / se) ** 2, rel=1e-12)


def test_the_constrained_maximum_of_three_inputs_is_a_scalar_search():
    mech = Mechanism(
        np.array([[0.6, 0.1, 0.1, 0.2], [0.1, 0.6, 0.1, 0.2], [0.1, 0.1, 0.6, 0.2]]), inputs=["a", "b", "c"],
        frame=["a", "b", "c"], focal=[1, 2, 4, 7])
    counts = np.array([40.0, 25.0, 12.0, 23.0])
    for share, null in ((0, 0.2), (1, 0.5), (2, 0.05)):
        pi, converged = constrained_mle(mech, counts, share, null)
        others = [j for j in range(3) if j != share]

        def minus(t: float, share=share, null=null, others=others) -> float:
            p = np.zeros(3)
            p[share], p[others[0]], p[others[1]] = null, (1 - null) * t, (1 - null) * (1 - t)
            return -float(counts @ np.log(p @ mech.matrix))

        best = minimize_scalar(minus, bounds=(0.0, 1.0), method="bounded", options={"xatol": 1e-12})
        assert converged and pi[share] == null
        assert -minus(pi[others[0]] / (1 - null)) == pytest.approx(-best.fun, abs=1e-8)
        assert pi[others[0]] / (1 - null) == pytest.approx(best.x, abs=1e-5)


@pytest.mark.parametrize(("n", "null"), [(100, 0.1), (60, 0.2), (40, 0.3)])
def test_the_likelihood_ratio_tests_level_is_close_to_nominal_where_walds_is_not(n, null):
    """The exact level of each test at 0.05 (every binomial outcome of n Warner answers under the null, weighted
    by its probability): near the edge (100 respondents, null 0.1) the Wald test rejects 0.017 and the
    likelihood-ratio test 0.052; elsewhere they agree."""
    from scipy.stats import binom

    lam = P * null + (1 - P) * (1 - null)
    level = {"lr": 0.0, "wald": 0.0}
    for yes in range(n + 1):
        counts = np.array([yes, n - yes], dtype=float)
        est = estimate_sldp(WARNER, counts)
        result = share_test(WARNER, counts, est.estimate, est.stderr, "yes", null)
        weight = float(binom.pmf(yes, n, lam))
        level["lr"] += weight * (result.lr_pvalue < 0.05)
        level["wald"] += weight * (result.wald_pvalue < 0.05 if math.isfinite(result.wald_pvalue) else 1.0)
    assert abs(level["lr"] - 0.05) <= 0.005
    assert abs(level["lr"] - 0.05) <= abs(level["wald"] - 0.05) + 5e-4  # elsewhere the two agree
    if (n, null) == (100, 0.1):
        assert level["wald"] < 0.02


def test_estimate_test_in_every_format_and_its_refusals(tmp_path, capsys):
    data = tmp_path / "answers.csv"
    data.write_text("response\n" + "{yes}\n" * 18 + "{no}\n" * 12)
    mech = "examples/mechanisms/warner-80.csv"
    assert main(["estimate", str(data), "--mechanism", mech, "--test", "yes=0.3", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)["test"]
    assert out["share"] == "yes" and out["null"] == 0.3
    expected = 2 * (_binomial_loglik(2 / 3, 18, 12) - _binomial_loglik(0.3, 18, 12))
    assert out["lr"]["statistic"] == pytest.approx(expected, abs=1e-7)
    assert out["wald"]["pvalue"] == pytest.approx(chi2.sf(out["wald"]["statistic"], 1))
    assert main(["estimate", str(data), "--mechanism", mech, "--test", "yes=0.3"]) == 0
    assert "likelihood ratio 5.925, p = 0.01493" in capsys.readouterr().out
    assert main(["estimate", str(data), "--mechanism", mech, "--test", "yes=0.3", "--format", "csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith("test_null,wald_statistic,wald_pvalue,lr_statistic,lr_pvalue")
    assert lines[2].endswith(",,,,,")
    assert main(["estimate", str(data), "--mechanism", mech, "--test", "yes=0.3", "--cov", "opg", "--format",
                 "json"]) == 0
    out = json.loads(capsys.readouterr().out)["test"]
    assert out["lr"] is None and "pseudo-likelihood" in out["note"] and out["wald"]["statistic"] > 0
    for bad, words in (("yes", "SHARE=VALUE"), ("yes=1", "strictly between 0 and 1"), ("maybe=0.3", "not an input")):
        assert main(["estimate", str(data), "--mechanism", mech, "--test", bad]) == 2
        assert words in capsys.readouterr().err
