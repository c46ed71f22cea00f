"""Regression on randomized answers: against statsmodels without randomization, finite differences, simulation
with known coefficients, and the CLI contract."""

import json

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from designer import Mechanism
from designer.cli import main
from designer.constructors import Q_GWRR
from designer.estimation.sampling import randomize
from designer.regression import RegressionError, regress, sensitivity
from designer.regression.likelihood import Likelihood


def _identity(labels):
    return Mechanism.from_dict({x: {(x,): 1.0} for x in labels}, frame=list(labels))


def _simulate(mech, beta, n, rng, labels):
    """Covariates (x1 normal, x2 in {0, 1, 2}), true answers from the multinomial logit ``beta`` (q, k) with
    the last input as reference, and the mechanism's recorded answers."""
    x1, x2 = rng.normal(size=n), rng.integers(0, 3, size=n).astype(float)
    z = np.c_[np.ones(n), x1, x2]
    eta = z @ beta
    p = np.exp(eta - eta.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    truth = (rng.random(n)[:, None] > p.cumsum(axis=1)).sum(axis=1)
    answers = np.asarray(mech.columns, dtype=object)[randomize(mech, np.asarray(labels)[truth], rng)]
    return pd.DataFrame({"x1": x1, "x2": x2, "response": answers}), truth, z


def test_identity_mechanism_equals_statsmodels_logit():
    rng = np.random.default_rng(1)
    mech = _identity(["yes", "no"])
    beta = np.array([[0.3, 0.0], [0.8, 0.0], [-0.5, 0.0]])
    data, truth, z = _simulate(mech, beta, 3000, rng, ["yes", "no"])
    ours = regress("response ~ x1 + x2", data, mech, reference="no")
    theirs = sm.Logit((truth == 0).astype(float), z).fit(disp=0)
    np.testing.assert_allclose(ours.coefficients["estimate"], theirs.params, atol=1e-6)
    np.testing.assert_allclose(ours.coefficients["stderr"], theirs.bse, atol=1e-6)
    assert ours.loglik == pytest.approx(theirs.llf, abs=1e-6)
    assert ours.lr_statistic == pytest.approx(theirs.llr, abs=1e-5)
    assert ours.converged and list(ours.coefficients["term"]) == ["Intercept", "x1", "x2"]
    assert "Intercept" in str(ours.summary()) and "status: converged" in ours.summary()  # the command's table
    np.testing.assert_allclose(ours.statsmodels.bse, theirs.bse, atol=1e-6)  # statsmodels' object, built when read
    assert "Randomized-response regression" in str(ours.statsmodels_summary())
    np.testing.assert_allclose(ours.conf_int(), theirs.conf_int(), atol=1e-5)


def test_identity_mechanism_equals_statsmodels_mnlogit():
    rng = np.random.default_rng(2)
    labels = ["a", "b", "c"]
    mech = _identity(labels)
    beta = np.array([[0.0, 0.2, -0.3], [0.0, 0.5, -0.4], [0.0, -0.4, 0.1]])  # reference: input "a"
    data, truth, z = _simulate(mech, beta, 4000, rng, labels)
    ours = regress("response ~ x1 + x2", data, mech, reference="a")
    theirs = sm.MNLogit(truth, z).fit(disp=0)  # MNLogit's reference is category 0 = "a"
    np.testing.assert_allclose(ours.coefficients["estimate"], np.asarray(theirs.params).ravel(order="F"), atol=1e-6)
    np.testing.assert_allclose(ours.coefficients["stderr"], np.asarray(theirs.bse).ravel(order="F"), atol=1e-6)
    assert list(ours.coefficients["outcome"]) == ["b"] * 3 + ["c"] * 3


def test_newton_and_em_reach_the_same_optimum():
    rng = np.random.default_rng(3)
    mech = Q_GWRR(1.0, 0.8)
    data, _, _ = _simulate(mech, np.array([[-0.4, 0.0], [0.7, 0.0], [0.3, 0.0]]), 4000, rng, ["yes", "no"])
    newton = regress("response ~ x1 + x2", data, mech, reference="no")
    em = regress("response ~ x1 + x2", data, mech, reference="no", method="em")
    assert newton.converged and em.converged
    np.testing.assert_allclose(em.params, newton.params, atol=1e-6)
    np.testing.assert_allclose(em.coefficients["stderr"], newton.coefficients["stderr"], rtol=1e-5)


def test_score_and_hessian_match_finite_differences():
    rng = np.random.default_rng(4)
    n, k = 200, 3
    z = np.c_[np.ones(n), rng.normal(size=(n, 2))]
    a = rng.random((k, n))
    lik = Likelihood(z, a, reference=1)
    params = rng.normal(size=z.shape[1] * (k - 1))
    h = 1e-6
    steps = np.eye(params.size) * h
    grad = np.array([(lik.loglike(params + e) - lik.loglike(params - e)) / (2 * h) for e in steps])
    np.testing.assert_allclose(lik.score(params), grad, rtol=1e-6, atol=1e-6)
    hess = np.array([(lik.score(params + e) - lik.score(params - e)) / (2 * h) for e in steps])
    np.testing.assert_allclose(lik.hessian(params), hess, rtol=1e-5, atol=1e-5)


def _dont_know_3():
    """A set-valued SLDP mechanism on three answers with a don't-know column and pair answers."""
    return Mechanism.from_dict({
        "a": {("a",): 0.5, ("b",): 0.1, ("c",): 0.1, ("a", "b"): 0.1, ("a", "b", "c"): 0.2},
        "b": {("a",): 0.1, ("b",): 0.5, ("c",): 0.1, ("a", "b"): 0.1, ("a", "b", "c"): 0.2},
        "c": {("a",): 0.1, ("b",): 0.1, ("c",): 0.5, ("a", "b"): 0.1, ("a", "b", "c"): 0.2},
    }, frame=["a", "b", "c"])


@pytest.mark.parametrize("case", ["binary", "three"])
def test_known_coefficients_are_recovered(case):
    rng = np.random.default_rng(5)
    if case == "binary":
        mech, labels, reference = Q_GWRR(1.0, 0.8), ["yes", "no"], "no"
        beta = np.array([[-0.5, 0.0], [0.6, 0.0], [0.4, 0.0]])
    else:
        mech, labels, reference = _dont_know_3(), ["a", "b", "c"], "c"
        beta = np.array([[0.3, -0.2, 0.0], [0.5, -0.5, 0.0], [-0.3, 0.4, 0.0]])
    data, _, _ = _simulate(mech, beta, 20_000, rng, labels)
    fit = regress("response ~ x1 + x2", data, mech, reference=reference)
    truth = beta[:, [labels.index(o) for o in labels if o != reference]].ravel(order="F")
    zscores = (fit.params - truth) / fit.coefficients["stderr"].to_numpy()
    assert fit.converged and np.all(np.abs(zscores) < 3), zscores


def test_intervals_cover_at_their_level():
    """60 seeded surveys of 2,000 answers (GWRR with don't-know): the 95% intervals of the three coefficients
    cover the truth 95% of the time within Monte Carlo error (180 intervals: sd 0.016, band 3.5 sd)."""
    rng = np.random.default_rng(6)
    mech = Q_GWRR(1.5, 0.8)
    beta = np.array([[-0.3, 0.0], [0.5, 0.0], [0.3, 0.0]])
    hits = []
    for _ in range(60):
        data, _, _ = _simulate(mech, beta, 2000, rng, ["yes", "no"])
        c = regress("response ~ x1 + x2", data, mech, reference="no").coefficients
        hits += list((c["ci_low"] <= beta[:, 0]) & (beta[:, 0] <= c["ci_high"]))
    assert abs(np.mean(hits) - 0.95) < 3.5 * np.sqrt(0.95 * 0.05 / len(hits))


def test_prevalence_of_the_intercept_only_model_is_the_share_mle():
    from designer.estimation.shares import estimate_sldp, response_counts

    rng = np.random.default_rng(7)
    mech = Q_GWRR(1.0, 0.8)
    data, _, _ = _simulate(mech, np.array([[-0.4, 0.0], [0.0, 0.0], [0.0, 0.0]]), 5000, rng, ["yes", "no"])
    fit = regress("response ~ 1", data, mech, reference="no")
    shares = estimate_sldp(mech, response_counts(mech, list(data["response"])))
    prev = fit.prevalence(data)
    np.testing.assert_allclose(prev["estimate"], shares.estimate, atol=1e-7)
    # its standard error is the observed information's: sum_c n_c (M[yes, c] - M[no, c])^2 / q_c^2 per share
    counts = response_counts(mech, list(data["response"]))
    q = shares.estimate @ mech.matrix
    observed = float(np.sum(counts * (mech.matrix[0] - mech.matrix[1]) ** 2 / q**2))
    np.testing.assert_allclose(prev["stderr"], 1 / np.sqrt(observed), rtol=1e-6)
    assert fit.lr_df == 0
    by = fit.prevalence(data.assign(g=np.arange(len(data)) % 2), by="g")
    assert set(by["group"]) == {0, 1} and np.allclose(by["estimate"], np.repeat(shares.estimate[None], 2, 0).ravel())
    assert fit.predict(data.head(3)).shape == (3, 2)


def test_wldp_sensitivity_gives_a_range_that_holds_the_generating_member():
    from designer.estimation.sampling import randomize_precise

    rng = np.random.default_rng(8)
    mech = Q_GWRR(1.0, 0.8)
    n = 20_000
    x1 = rng.normal(size=n)
    truth = np.where(rng.random(n) < 1 / (1 + np.exp(-(-0.4 + 0.8 * x1))), "yes", "no")
    answers = np.asarray(mech.frame, dtype=object)[randomize_precise(mech, truth, rng=rng, allocation=0.5)]
    data = pd.DataFrame({"x1": x1, "response": answers})
    table = sensitivity("response ~ x1", data, mech, reference="no")
    assert np.all(table["low"] <= table["high"])
    member = regress("response ~ x1", data, mech, reference="no", semantics="wldp", allocation=0.5)
    np.testing.assert_allclose(table["estimate[0.5]"], member.params)
    assert abs(member.params[1] - 0.8) < 3 * member.coefficients["stderr"][1]


@pytest.mark.parametrize("formula, data, message", [
    ("response ~ x1", {"x1": [0.1, 0.2, 0.3], "response": ["{yes}", "{maybe}", "{no}"]},
     "data row 2: answer '{maybe}'"),
    ("response ~ x1", {"x1": [0.1, None, 0.3], "response": ["{yes}", "{no}", "{no}"]},
     "data row 2: no value in column 'x1'"),
    ("response ~ age", {"x1": [0.1, 0.2, 0.3], "response": ["{yes}", "{no}", "{no}"]}, "'age', which is not a column"),
    ("response ~ x1 + x2", {"x1": [0.1, 0.2, 0.3], "x2": [0.2, 0.4, 0.6], "response": ["{yes}", "{no}", "{no}"]},
     "'x2' is a linear combination"),
    ("answer ~ x1", {"x1": [0.1, 0.2, 0.3], "response": ["{yes}", "{no}", "{no}"]}, "answers column 'answer'"),
])
def test_bad_inputs_name_the_row_or_column(formula, data, message):
    with pytest.raises(RegressionError, match=message.replace("{", r"\{").replace("}", r"\}")):
        regress(formula, pd.DataFrame(data), Q_GWRR(1.0, 0.8), reference="no")


def test_cli_contract(tmp_path, capsys):
    mech_path = tmp_path / "m.csv"
    Q_GWRR(1.0, 0.8).to_csv(mech_path)
    rng = np.random.default_rng(9)
    data, _, _ = _simulate(Q_GWRR(1.0, 0.8), np.array([[-0.4, 0.0], [0.6, 0.0], [0.3, 0.0]]), 3000, rng,
                           ["yes", "no"])
    data_path = tmp_path / "d.csv"
    data.to_csv(data_path, index=False)
    code = main(["regress", str(data_path), "--mechanism", str(mech_path), "--formula", "response ~ x1 + x2",
                 "--reference", "no", "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0 and err == ""
    obj = json.loads(out)
    assert obj["n"] == 3000 and obj["converged"] is True and isinstance(obj["loglik"], float)
    rows = obj["coefficients"]
    assert [(r["outcome"], r["term"]) for r in rows] == [("yes", "Intercept"), ("yes", "x1"), ("yes", "x2")]
    assert all(r["ci_low"] < r["estimate"] < r["ci_high"] and r["stderr"] > 0 for r in rows)
    code = main(["regress", str(data_path), "--mechanism", str(mech_path), "--formula", "response ~ x1",
                 "--format", "csv"])
    out, _ = capsys.readouterr()
    assert code == 0 and pd.read_csv(__import__("io").StringIO(out))["estimate"].dtype == float


@pytest.mark.parametrize("content, flags, message", [
    ("x1,response\n0.1,{yes}\n0.2,{oops}\n", [], "d.csv: line 3: answer '{oops}'"),
    ("x1,response\n0.1,{yes}\n,{no}\n", [], "d.csv: line 3: no value in column 'x1'"),
    ("x1,response\n0.1,{yes}\n0.2,\n", [], "d.csv: line 3: no value in column 'response'"),
    ("x1,response\n0.1,{yes}\n0.2,{no}\n", ["--formula", "response ~ zz"], "'zz', which is not a column"),
    ("x1,response\n0.1,{yes}\n0.2,{no}\n", ["--reference", "maybe"], "reference 'maybe'"),
    ("x1,response\n0.1,{yes}\n0.2,{no}\n", ["--formula", "response x1"], "must read 'response ~ x1 + x2'"),
    ("", [], "d.csv: the file is empty"),
])
def test_cli_bad_input_is_one_line_exit_2(tmp_path, capsys, content, flags, message):
    mech_path = tmp_path / "m.csv"
    Q_GWRR(1.0, 0.8).to_csv(mech_path)
    data_path = tmp_path / "d.csv"
    data_path.write_text(content)
    argv = ["regress", str(data_path), "--mechanism", str(mech_path), "--formula", "response ~ x1", *flags]
    if "--formula" in flags:
        argv = argv[:4] + argv[6:]
    code = main(argv)
    _, err = capsys.readouterr()
    assert code == 2 and err.count("\n") == 1 and message in err, err


def test_fair_affairs_example_fits():
    """examples/affairs.py on Fair's survey (statsmodels' copy): the private fit converges, every standard error
    grows by the price of privacy, and the estimates stay near the ones on the true answers."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "examples" / "affairs.py"
    spec = importlib.util.spec_from_file_location("affairs", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    table, facts = module.fit_both(epsilon=2.0, seed=1)
    assert facts["n"] == 6366 and facts["converged"]
    assert list(table["term"]) == ["Intercept", "age", "yrs_married", "religious", "educ", "rate_marriage"]
    assert np.all((table["stderr_ratio"] > 1.2) & (table["stderr_ratio"] < 2.0))
    assert np.all(np.abs(table["private_estimate"] - table["true_estimate"]) < 3 * table["private_stderr"])
