"""Several designs in one survey and non-compliance (designer.estimation.groups), against likelihoods written out by
hand.

Two groups answer through Warner's design at different probabilities. The expected values come from the
groups' binomial likelihoods maximised directly (scipy, in the textbook parameters: prevalence ``pi`` and the
stochastic lie detector's honesty ``t``), their standard errors from a numerical Hessian there, and the cheater
detection model's estimate from its closed form (two groups, two unknowns: the fit is exact).
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING

import numpy as np
import pytest
from scipy.optimize import minimize

from designer.cli import main
from designer.constructors import Q_WRR
from designer.estimation.groups import estimate_groups, stack_mechanisms
from designer.estimation.survey_design import SurveyCounts
from designer.exceptions import DesignerError

if TYPE_CHECKING:
    import pandas as pd

P = (0.8, 0.65)
MECHS = {"a": Q_WRR(math.log(P[0] / (1 - P[0]))), "b": Q_WRR(math.log(P[1] / (1 - P[1])))}


def _counts(yes: tuple[int, int], n: tuple[int, int]) -> SurveyCounts:
    """Stacked columns: a|{yes}, a|{no}, b|{yes}, b|{no} (Q_WRR's columns are {yes}, {no})."""
    codes = np.concatenate([np.repeat([0, 1], [yes[0], n[0] - yes[0]]), np.repeat([2, 3], [yes[1], n[1] - yes[1]])])
    return SurveyCounts.from_rows(4, codes)


def _fit(neg_loglik, start):
    res = minimize(neg_loglik, start, method="L-BFGS-B", bounds=[(1e-9, 1 - 1e-9)] * len(start),
                   options={"ftol": 1e-15, "gtol": 1e-12})
    x = res.x
    h = 1e-5
    hess = np.zeros((x.size, x.size))
    for i in range(x.size):
        for j in range(x.size):
            ei, ej = np.eye(x.size)[i] * h, np.eye(x.size)[j] * h
            hess[i, j] = (neg_loglik(x + ei + ej) - neg_loglik(x + ei - ej) - neg_loglik(x - ei + ej)
                          + neg_loglik(x - ei - ej)) / (4 * h * h)
    return x, np.linalg.inv(hess)


def _binomial(yes, n, probs):
    return -sum(y * math.log(p) + (m - y) * math.log(1 - p) for y, m, p in zip(yes, n, probs))


def test_two_warner_groups_share_one_prevalence():
    yes, n = (700, 480), (1500, 1100)
    est = estimate_groups(MECHS, _counts(yes, n))

    def neg(v):
        return _binomial(yes, n, [p * v[0] + (1 - p) * (1 - v[0]) for p in P])

    x, cov = _fit(neg, [0.4])
    assert est.estimate[0] == pytest.approx(x[0], abs=1e-6)
    assert est.stderr[0] == pytest.approx(math.sqrt(cov[0, 0]), rel=1e-4)
    assert est.group_sizes == (1500, 1100) and est.noncompliance is None and est.status == "converged"
    assert est.loglik == pytest.approx(-neg(x), abs=1e-6)


def test_stochastic_lie_detector_against_its_own_likelihood():
    """carriers:no: P_g(yes) = pi t p_g + (1 - pi)(1 - p_g); designer reports pi and the share 1 - t."""
    yes, n = (620, 560), (2000, 2000)
    est = estimate_groups(MECHS, _counts(yes, n), noncompliance="carriers:no")

    def neg(v):
        pi, t = v
        return _binomial(yes, n, [pi * t * p + (1 - pi) * (1 - p) for p in P])

    x, cov = _fit(neg, [0.4, 0.7])
    assert est.estimate[0] == pytest.approx(x[0], abs=1e-5)
    assert est.stderr[0] == pytest.approx(math.sqrt(cov[0, 0]), rel=1e-3)
    nc = est.noncompliance
    assert nc["scope"] == "carriers" and nc["answer"] == "no"
    assert nc["share"] == pytest.approx(1 - x[1], abs=1e-5)
    assert nc["stderr"] == pytest.approx(math.sqrt(cov[1, 1]), rel=1e-3)


def test_cheater_detection_is_the_closed_form_of_two_groups():
    """everyone:no with two groups is saturated: lambda_g = h_yes p_g + h_no (1 - p_g) solved exactly; every
    share is bounded by [h_x, h_x + gamma]."""
    yes, n = (930, 1065), (3000, 3000)  # from h = (0.25, 0.55), gamma = 0.2
    est = estimate_groups(MECHS, _counts(yes, n), noncompliance="everyone:no")
    lam = np.array(yes) / np.array(n)
    h = np.linalg.solve(np.array([[P[0], 1 - P[0]], [P[1], 1 - P[1]]]), lam)
    gamma = 1 - h.sum()
    assert est.estimate == pytest.approx(h, abs=1e-7)
    assert est.noncompliance["share"] == pytest.approx(gamma, abs=1e-7)
    assert est.high == pytest.approx(h + gamma, abs=1e-7) and est.low == pytest.approx(h, abs=1e-7)
    assert any("hide their inputs" in w for w in est.warnings)


@pytest.mark.simulation
def test_lie_detector_intervals_cover_in_simulation():
    """500 surveys of 6,000 respondents a group, 30% carriers of whom 25% answer no regardless: the 95% intervals
    of the prevalence and of the non-compliant share cover within Monte Carlo error (3 standard errors)."""
    rng = np.random.default_rng(2026)
    pi, cheat, n = 0.3, 0.25, 6000
    lam = [pi * (1 - cheat) * p + (1 - pi) * (1 - p) for p in P]
    hits = np.zeros(2)
    surveys = 500
    for _ in range(surveys):
        yes = tuple(int(v) for v in rng.binomial(n, lam))
        est = estimate_groups(MECHS, _counts(yes, (n, n)), noncompliance="carriers:no")
        hits += [est.ci_low[0] <= pi <= est.ci_high[0],
                 est.noncompliance["ci_low"] <= cheat <= est.noncompliance["ci_high"]]
    assert np.all(hits / surveys >= 0.95 - 3 * math.sqrt(0.95 * 0.05 / surveys)), hits


def test_one_group_does_not_identify_non_compliance():
    est = estimate_groups({"a": MECHS["a"]}, SurveyCounts.from_rows(2, np.repeat([0, 1], [300, 700])),
                          noncompliance="carriers:no")
    assert est.status == "not_identified" and math.isnan(est.noncompliance["stderr"])


def test_groups_are_refused_in_words():
    from designer import Mechanism

    three = Mechanism(np.eye(3), inputs=["a", "b", "c"], frame=["a", "b", "c"], focal=[1, 2, 4])
    with pytest.raises(DesignerError, match="every group answers about the same inputs"):
        stack_mechanisms({"a": MECHS["a"], "t": three})
    with pytest.raises(DesignerError, match="non-compliant answer 'maybe' is not an answer of group 'a'"):
        estimate_groups(MECHS, _counts((1, 1), (2, 2)), noncompliance="everyone:maybe")
    with pytest.raises(DesignerError, match="carriers:ANSWER needs two inputs"):
        estimate_groups({"t": three, "u": three}, SurveyCounts.from_rows(6, [0, 1, 2, 3, 4, 5]),
                        noncompliance="carriers:a")
    with pytest.raises(DesignerError, match="must read 'carriers:ANSWER' or 'everyone:ANSWER'"):
        estimate_groups(MECHS, _counts((1, 1), (2, 2)), noncompliance="carriers")
    with pytest.raises(DesignerError, match="noncompliance scope must be one of 'carriers', 'everyone'"):
        estimate_groups(MECHS, _counts((1, 1), (2, 2)), noncompliance="some:no")


def test_estimate_cli_with_two_mechanisms_and_a_lie_detector(tmp_path, capsys):
    rng = np.random.default_rng(4)
    rows = []
    for group, p in zip("ab", P):
        for _ in range(800):
            carrier = rng.random() < 0.3
            if carrier and rng.random() < 0.2:
                answer = "no"
            else:
                truthful = rng.random() < p
                answer = ("yes" if carrier else "no") if truthful else ("no" if carrier else "yes")
            rows.append(f"{group},{answer}")
    data = tmp_path / "split.csv"
    data.write_text("arm,response\n" + "\n".join(rows) + "\n")
    files = []
    for name, mech in MECHS.items():
        path = tmp_path / f"{name}.csv"
        mech.to_csv(path)
        files += ["--mechanism", f"{name}={path}"]
    args = ["estimate", str(data), *files, "--group", "arm", "--noncompliance", "carriers:no"]
    assert main([*args, "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    yes = [sum(1 for r in rows if r == f"{g},yes") for g in "ab"]
    expected = estimate_groups(MECHS, _counts(tuple(yes), (800, 800)), noncompliance="carriers:no")
    assert out["estimate"]["yes"] == pytest.approx(expected.estimate[0], abs=1e-9)
    assert out["noncompliance"]["share"] == pytest.approx(expected.noncompliance["share"], abs=1e-9)
    assert out["groups"]["a"]["n"] == 800 and out["status"] == "converged"
    assert main([*args, "--format", "csv"]) == 0
    assert "non-compliant (carriers:no)" in capsys.readouterr().out
    data.write_text("arm,response\na,yes\nc,no\n")
    assert main(args) == 2
    assert "line 3: group 'c' in column 'arm' has no mechanism" in capsys.readouterr().err
    assert main(["estimate", str(data), *files]) == 2
    assert "several mechanisms need --group COLUMN" in capsys.readouterr().err


def _split_frame(seed: int, n: int, slope: float = 0.8) -> pd.DataFrame:
    """Two arms of n through Warner at P; carriers with log-odds -1 + slope x, a quarter of them answer no."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    frames = []
    for arm, p in zip("ab", P):
        x = rng.normal(size=n)
        carrier = rng.random(n) < 1 / (1 + np.exp(-(-1 + slope * x)))
        truthful = rng.random(n) < p
        yes = np.where(carrier, truthful, ~truthful)
        yes[carrier & (rng.random(n) < 0.25)] = False
        frames.append(pd.DataFrame({"response": np.where(yes, "yes", "no"), "x": x, "arm": arm}))
    return pd.concat(frames, ignore_index=True)


@pytest.mark.parametrize("rule", [None, "carriers:no", "everyone:no"])
def test_intercept_only_regression_is_the_groups_estimate(rule):
    """The same model parametrised by log-odds (regression, delta method) and by the classes' shares."""
    from designer.regression import regress

    data = _split_frame(3, 2500, slope=0.0)
    fit = regress("response ~ 1", data, MECHS, group="arm", noncompliance=rule)
    yes = tuple(int(((data["arm"] == g) & (data["response"] == "yes")).sum()) for g in "ab")
    est = estimate_groups(MECHS, _counts(yes, (2500, 2500)), noncompliance=rule)
    if rule is None:
        prevalence = fit.prevalence(data)
        assert prevalence["estimate"].iloc[0] == pytest.approx(est.estimate[0], abs=1e-7)
        assert prevalence["stderr"].iloc[0] == pytest.approx(est.stderr[0], rel=1e-5)
    else:
        for key in ("share", "stderr"):
            assert fit.noncompliance[key] == pytest.approx(est.noncompliance[key], rel=1e-5), key
    assert fit.loglik == pytest.approx(est.loglik, abs=1e-6)


def test_lie_detector_regression_recovers_its_coefficients():
    """20,000 respondents a group: carriers' log-odds -1 + 0.8 x, a constant quarter of them non-compliant, so
    yes-compliant vs non-carrier has log-odds ln 0.75 - 1 + 0.8 x and non-compliant vs non-carrier ln 0.25 - 1 + 0.8 x;
    every coefficient within 4 standard errors, the share within 4 of 0.25 (the model with the non-compliant as
    an outcome of their own)."""
    from designer.regression import regress

    data = _split_frame(7, 20_000)
    fit = regress("response ~ x", data, MECHS, group="arm", noncompliance="carriers:no", noncompliance_model="classes")
    table = fit.coefficients
    truth = [math.log(0.75) - 1, 0.8, math.log(0.25) - 1, 0.8]
    assert list(table["outcome"]) == ["yes", "yes", "(non-compliant)", "(non-compliant)"]
    assert np.all(np.abs(table["estimate"].to_numpy() - truth) <= 4 * table["stderr"].to_numpy())
    nc = fit.noncompliance
    assert abs(nc["share"] - 0.25) <= 4 * nc["stderr"] and fit.status == "converged"


def test_regress_cli_with_two_mechanisms(tmp_path, capsys):
    data = _split_frame(6, 1500)  # seed 5 leaves the non-compliant class flat to -inf (exit 3)
    path = tmp_path / "split.csv"
    data.to_csv(path, index=False)
    files = []
    for name, mech in MECHS.items():
        target = tmp_path / f"{name}.csv"
        mech.to_csv(target)
        files += ["--mechanism", f"{name}={target}"]
    args = ["regress", str(path), *files, "--formula", "response ~ x", "--group", "arm"]
    assert main([*args, "--noncompliance", "carriers:no", "--noncompliance-model", "classes", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["noncompliance"]["scope"] == "carriers" and 0 < out["noncompliance"]["share"] < 1
    assert out["group"] == "arm" and [c["outcome"] for c in out["coefficients"]][-1] == "(non-compliant)"
    assert main([*args, "--noncompliance", "carriers:no", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["noncompliance"]["model"] == "constant" and 0 < out["noncompliance"]["share"] < 1
    assert [c["outcome"] for c in out["coefficients"]] == ["yes", "yes"]
    assert main(args) == 0
    assert "(non-compliant)" not in capsys.readouterr().out
    data.loc[3, "arm"] = "c"
    data.to_csv(path, index=False)
    assert main(args) == 2
    assert "line 5: group 'c' in column 'arm' has no mechanism" in capsys.readouterr().err


def test_estimate_and_regress_cli_with_an_unrelated_question(tmp_path, capsys):
    """--unrelated ANSWER: the unrelated question's unknown prevalence, in every format; bad values exit 2 with one
    line; one group cannot identify it (status not identified, no standard errors)."""
    from designer.mechanism import Mechanism

    labels = dict(inputs=["yes", "no"], frame=["yes", "no"], focal=[1, 2])
    rng = np.random.default_rng(11)
    rows = []
    for arm, p in (("a", 0.75), ("b", 0.3)):
        trait = rng.random(2000) < 0.35
        yes = np.where(rng.random(2000) < p, trait, rng.random(2000) < 0.3)
        rows += [(arm, "yes" if y else "no") for y in yes]
    path = tmp_path / "uq.csv"
    path.write_text("arm,answer\n" + "".join(f"{a},{y}\n" for a, y in rows))
    files = []
    for arm, p in (("a", 0.75), ("b", 0.3)):
        target = tmp_path / f"{arm}.csv"
        Mechanism(np.array([[p + (1 - p) / 2, (1 - p) / 2], [(1 - p) / 2, 1 - (1 - p) / 2]]), **labels).to_csv(target)
        files += ["--mechanism", f"{arm}={target}"]
    args = ["estimate", str(path), "--column", "answer", *files, "--group", "arm", "--unrelated", "yes"]
    assert main([*args, "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    lam = [sum(1 for a, y in rows if a == g and y == "yes") / 2000 for g in "ab"]
    pi = (lam[0] * 0.7 - lam[1] * 0.25) / (0.75 - 0.3)  # RRuni's closed form
    assert out["estimate"]["yes"] == pytest.approx(pi, abs=1e-8)
    assert out["unrelated"]["scope"] == "unrelated" and "noncompliance" not in out
    assert main([*args, "--format", "csv"]) == 0
    assert "unrelated question (unrelated:yes)" in capsys.readouterr().out
    fit = ["regress", str(path), *files, "--group", "arm", "--formula", "answer ~ 1", "--unrelated", "yes"]
    assert main(fit) == 0
    assert "unrelated question's share answering 'yes' (groups a, b)" in capsys.readouterr().out
    for extra, words in ((["--share-groups", "c"], "the unknown share's groups ['c'] are not among"),
                         (["--noncompliance", "carriers:no"], "two models of the design's one unknown share")):
        assert main([*args, *extra]) == 2
        err = capsys.readouterr().err
        assert words in err and len(err.strip().splitlines()) == 1
    assert main([*args[:4], "--mechanism", files[1].split("=", 1)[1], "--unrelated", "yes"]) == 0
    assert "status: not identified" in capsys.readouterr().out
