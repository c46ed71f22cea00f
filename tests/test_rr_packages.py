"""designer against the R packages of the field on their own published examples (tests/data/README.md).

- rr (Blair, Imai and Zhou): ``rrreg`` on the Nigeria survey, forced-response design, the example of its manual
  (Table 3 of Blair, Imai and Zhou 2015). rr fits by EM and reports the outer product of the scores.
- RRreg (Heck and Moshagen, JSS 2018, section 4): the minaret survey, stochastic lie detector in two groups
  (p = 2/12, 10/12) and a direct-question group; ``RRuni`` (closed forms), ``RRlog`` (logit of the prevalence, one
  constant honesty ``t``), and ``RRuni``/``RRlog`` for the unrelated question with an unknown prevalence and for
  cheater detection on simulated surveys (tests/data).

The R values were computed with rr 1.4.2 and RRreg 0.7.5 (R 4.2.2) and are written here with their digits.
RRlog maximises with ``optim``'s L-BFGS-B and a numerical Hessian, so where its optimum is loose (the
four-coefficient minaret model) designer's log-likelihood is compared (it must be at least R's) and the
coefficients are checked against the likelihood maximised independently here; the conventions that differ are
in docs/theory.md section 9.5.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize
from scipy.special import expit

from designer.estimation.groups import Noncompliance, estimate_groups
from designer.estimation.survey_design import SurveyCounts
from designer.mechanism import Mechanism
from designer.regression import regress
from designer.regression.constant_share import estimate_share
from designer.vocabulary import NoncomplianceScope

DATA = Path(__file__).parent / "data"
LABELS = dict(inputs=["yes", "no"], frame=["yes", "no"], focal=[1, 2])


def _two_by_two(yes_if_yes: float, yes_if_no: float) -> Mechanism:
    return Mechanism(np.array([[yes_if_yes, 1 - yes_if_yes], [yes_if_no, 1 - yes_if_no]]), **LABELS)


def _answers(frame: pd.DataFrame, column: str) -> pd.DataFrame:
    out = frame.copy()
    out["answer"] = out[column].map({1: "yes", 0: "no"})
    return out


# -- rr: Nigeria, forced response (p = 2/3 truthful, 1/6 forced yes, 1/6 forced no) ------------------------------

RR_FORMULA = ("answer ~ cov.asset.index + cov.married + I(cov.age/10) + I((cov.age/10)**2) + cov.education"
              " + cov.female")
RR_EST = [-0.34016968616311, 0.07896287650417, -0.26742542448581, -0.35282744970776, 0.04099255883730,
          -0.00690808174154, -0.55438825044334]
RR_SE = [0.5085609531612, 0.0413560759389, 0.2545124137318, 0.2642282248754, 0.0260349368852, 0.0455835890425,
         0.1624352602175]


def test_rr_nigeria_estimates_and_outer_product_standard_errors():
    data = _answers(pd.read_csv(DATA / "nigeria.csv"), "rr.q1")
    fit = regress(RR_FORMULA, data, _two_by_two(5 / 6, 1 / 6), missing="drop", cov="opg")
    assert fit.status == "converged" and fit.n == 2423
    np.testing.assert_allclose(fit.coefficients["estimate"], RR_EST, atol=1e-5)
    np.testing.assert_allclose(fit.coefficients["stderr"], RR_SE, rtol=1e-5)
    assert fit.variance == "outer product of the scores (rr's)"


# -- RRreg: the minaret survey, stochastic lie detector ---------------------------------------------------------


def _mangat(p: float) -> Mechanism:
    """The lie detector's groups: carriers say yes, non-carriers say yes with 1 - p (RRreg's getPW for SLD)."""
    return _two_by_two(1.0, 1 - p)


SLD = {"1": _mangat(2 / 12), "2": _mangat(10 / 12)}
DIRECT = Mechanism(np.eye(2), **LABELS)


def _minarets(randomized_only: bool = True) -> pd.DataFrame:
    data = _answers(pd.read_csv(DATA / "minarets.csv"), "rrt")
    return data[data["RRdesign"] == 1] if randomized_only else data


def _sld_loglik(beta: np.ndarray, t: float, x: np.ndarray, y: np.ndarray, p: np.ndarray) -> float:
    """RRreg's RRlog likelihood written out: P(yes) = pi t + (1 - pi)(1 - p_g), pi = expit(x beta)."""
    pi = expit(x @ beta)
    q = pi * t + (1 - pi) * (1 - p)
    return float(np.sum(y * np.log(q) + (1 - y) * np.log1p(-q)))


def test_rruni_lie_detector_matches_and_its_standard_error_convention():
    """RRuni's closed forms (pi 0.870695486410, t 0.635806392759) are the maximum likelihood estimates; its
    standard errors divide by n_g - 1 where the observed information divides by n_g."""
    data = _minarets()
    codes = np.where(data["condition"] == 1, 0, 2) + np.where(data["rrt"] == 1, 0, 1)
    counts = SurveyCounts.from_rows(4, codes)
    for est in (estimate_groups(SLD, counts, noncompliance="carriers:no"),
                estimate_share(SLD, counts, Noncompliance.parse("carriers:no"))):
        assert est.estimate[0] == pytest.approx(0.870695486410, abs=1e-9)
        assert 1 - est.noncompliance["share"] == pytest.approx(0.635806392759, abs=1e-9)
        n = np.array([est.group_sizes[0], est.group_sizes[1]], dtype=float)
        lam = np.array([counts.weighted[0], counts.weighted[2]]) / n
        dp = 10 / 12 - 2 / 12
        ml = math.sqrt(float(np.sum(lam * (1 - lam) / n)) / dp**2)
        rruni = math.sqrt(float(np.sum(lam * (1 - lam) / (n - 1))) / dp**2)
        assert est.stderr[0] == pytest.approx(ml, rel=1e-6)
        assert rruni == pytest.approx(0.0411184073744, rel=1e-9)


def test_rrlog_lie_detector_intercept_only():
    fit = regress("answer ~ 1", _minarets(), SLD, group="condition", noncompliance="carriers:no")
    assert fit.loglik == pytest.approx(-832.850754148, abs=1e-8)
    assert 1 - fit.noncompliance["share"] == pytest.approx(0.63580603598, abs=1e-6)
    assert fit.coefficients["estimate"].iloc[0] == pytest.approx(1.90712560639, abs=1e-5)
    assert fit.coefficients["stderr"].iloc[0] == pytest.approx(0.364926835589, rel=1e-5)
    assert fit.noncompliance["stderr"] == pytest.approx(0.017328614616, rel=1e-5)


def test_rrlog_minaret_model_with_interaction():
    """JSS 2018 section 4.3: rrt ~ age.c * leftRight.c, logLik -821.084, t = 0.6517. RRlog's optimum is loose in
    the fourth digit (the article prints 1.89659 for the intercept, this R run 1.89632): designer's maximum is at
    least as high, and equals the written-out likelihood maximised here from RRlog's estimate."""
    data = _minarets()
    fit = regress("answer ~ age.c * leftRight.c", data, SLD, group="condition", noncompliance="carriers:no")
    r_coef = np.array([1.8963159544883, 0.0135968806297, 0.6244361641876, -0.0203864774627])
    r_t, r_loglik = 0.6517098911323, -821.083992673
    assert fit.status == "converged"
    assert r_loglik - 1e-9 <= fit.loglik <= r_loglik + 1e-6
    assert 1 - fit.noncompliance["share"] == pytest.approx(r_t, abs=1e-5)
    np.testing.assert_allclose(fit.coefficients["estimate"], r_coef, atol=1e-3)
    x = np.column_stack([np.ones(len(data)), data["age.c"], data["leftRight.c"], data["age.c"] * data["leftRight.c"]])
    y = data["rrt"].to_numpy()
    p = np.where(data["condition"] == 1, 2 / 12, 10 / 12)
    best = minimize(lambda v: -_sld_loglik(v[:4], v[4], x, y, p), np.append(r_coef, r_t), method="BFGS",
                    options={"gtol": 1e-9})
    np.testing.assert_allclose(fit.coefficients["estimate"], best.x[:4], atol=2e-5)
    assert 1 - fit.noncompliance["share"] == pytest.approx(best.x[4], abs=2e-6)
    assert fit.loglik == pytest.approx(-best.fun, abs=1e-7)


def test_rrlog_minaret_model_with_a_direct_question_group():
    """JSS 2018 section 4.3, all 1621 respondents: the direct-question group (condition 0) answers as given (RRreg
    applies t to the randomized groups only: --share-groups 1,2); logLik -1051.466."""
    fit = regress("answer ~ RRdesign * leftRight.c", _minarets(False), {**SLD, "0": DIRECT}, group="condition",
                  noncompliance="carriers:no", share_groups=["1", "2"])
    assert fit.loglik == pytest.approx(-1051.46644979, abs=1e-7)
    np.testing.assert_allclose(fit.coefficients["estimate"],
                               [0.7651577483701, 1.0556798657443, 0.4776547239501, 0.0967646508808], atol=1e-5)
    np.testing.assert_allclose(fit.coefficients["stderr"],
                               [0.1780377340840, 0.1780377339982, 0.0800059872925, 0.0800059872956], rtol=1e-4)
    assert 1 - fit.noncompliance["share"] == pytest.approx(0.6529973937661, abs=1e-5)
    assert fit.noncompliance["stderr"] == pytest.approx(0.0180530505447, rel=1e-4)
    share, se = fit.noncompliance["share"], fit.noncompliance["stderr"]
    assert (fit.noncompliance["ci_low"], fit.noncompliance["ci_high"]) == pytest.approx(
        (share - 1.959963984540054 * se, share + 1.959963984540054 * se), rel=1e-12)
    assert fit.noncompliance["groups"] == ["1", "2"] and fit.noncompliance["model"] == "constant"
    every = regress("answer ~ 1", _minarets(False), {**SLD, "0": DIRECT}, group="condition",
                    noncompliance="carriers:no")
    assert every.noncompliance["groups"] == ["1", "2", "0"]


# -- RRreg: unrelated question with an unknown prevalence, cheater detection (simulated surveys) ----------------


def _unrelated(p: float, assumed: float = 0.5) -> Mechanism:
    """p I + (1 - p) 1 f' with any f: designer re-splits the unrelated part with the estimated share."""
    return _two_by_two(p + (1 - p) * assumed, (1 - p) * assumed)


UQT = {"1": _unrelated(0.75), "2": _unrelated(0.3, assumed=0.1)}


def test_rruni_and_rrlog_unrelated_question_with_unknown_prevalence():
    data = _answers(pd.read_csv(DATA / "uqt_unknown_simulated.csv"), "response")
    data["group"] = data["group"].astype(str)
    codes = np.where(data["group"] == "1", 0, 2) + np.where(data["response"] == 1, 0, 1)
    rule = Noncompliance(NoncomplianceScope.UNRELATED, "yes")
    est = estimate_share(UQT, SurveyCounts.from_rows(4, codes), rule)
    assert est.estimate[0] == pytest.approx(0.392296296296, abs=1e-9)  # RRuni's closed form
    assert est.noncompliance["share"] == pytest.approx(0.300444444444, abs=1e-9)
    fit = regress("answer ~ 1", data, UQT, group="group", unrelated="yes")
    assert fit.loglik == pytest.approx(-1937.02968976, abs=1e-7)
    assert fit.coefficients["estimate"].iloc[0] == pytest.approx(-0.437670909512, abs=1e-5)
    assert fit.coefficients["stderr"].iloc[0] == pytest.approx(0.0860770929146, rel=1e-5)
    assert fit.noncompliance["stderr"] == pytest.approx(0.0218446713686, rel=1e-4)
    fit = regress("answer ~ x", data, UQT, group="group", unrelated="yes")
    assert -1863.46052456 - 1e-9 <= fit.loglik <= -1863.46052456 + 1e-6
    np.testing.assert_allclose(fit.coefficients["estimate"], [-0.509506029416, 0.901426504138], atol=1e-4)
    np.testing.assert_allclose(fit.coefficients["stderr"], [0.0959430906418, 0.0903776181795], rtol=1e-3)
    assert fit.noncompliance["share"] == pytest.approx(0.302622339182, abs=1e-5)


def test_rruni_cheater_detection():
    """Users say yes, non-users yes with p_g (0.3, 0.7), cheaters (a share gamma of everyone) no: RRuni's pi (the
    honest users among everyone) 0.3945, gamma 0.153833."""
    data = pd.read_csv(DATA / "cdm_simulated.csv")
    mechs = {"1": _two_by_two(1.0, 0.3), "2": _two_by_two(1.0, 0.7)}
    codes = np.where(data["group"] == 1, 0, 2) + np.where(data["response"] == 1, 0, 1)
    counts = SurveyCounts.from_rows(4, codes)
    for est in (estimate_groups(mechs, counts, noncompliance="everyone:no"),
                estimate_share(mechs, counts, Noncompliance.parse("everyone:no"))):
        assert est.estimate[0] == pytest.approx(0.3945, abs=1e-9)
        assert est.noncompliance["share"] == pytest.approx(0.153833333333, abs=1e-9)


def test_one_share_fit_with_weights_and_clusters():
    """The minaret lie-detector model: rows counted into frequency weights give the row fit exactly (estimates,
    and oim, opg and robust standard errors); one cluster a row is the robust sandwich times the small-sample
    factor G/(G-1) (N-1)/(N-P)."""
    data = _minarets()[["answer", "condition", "leftRight"]].copy()
    formula = "answer ~ leftRight"
    options = dict(group="condition", noncompliance="carriers:no")
    counted = data.groupby(["answer", "condition", "leftRight"], as_index=False).size()
    for cov in ("oim", "opg", "robust"):
        rows = regress(formula, data, SLD, cov=cov, **options)
        weighted = regress(formula, counted, SLD, cov=cov, weights="size", weight_kind="frequency", **options)
        np.testing.assert_allclose(weighted.coefficients["estimate"], rows.coefficients["estimate"], rtol=1e-9)
        np.testing.assert_allclose(weighted.coefficients["stderr"], rows.coefficients["stderr"], rtol=1e-8)
        assert weighted.noncompliance["stderr"] == pytest.approx(rows.noncompliance["stderr"], rel=1e-8)
        assert weighted.loglik == pytest.approx(rows.loglik, rel=1e-12)
    robust = regress(formula, data, SLD, cov="robust", **options)
    data["id"] = np.arange(len(data))
    clustered = regress(formula, data, SLD, cluster="id", **options)
    n, p = len(data), 3
    factor = math.sqrt(n / (n - 1) * (n - 1) / (n - p))
    np.testing.assert_allclose(clustered.coefficients["stderr"], robust.coefficients["stderr"] * factor, rtol=1e-9)
    assert clustered.noncompliance["stderr"] == pytest.approx(robust.noncompliance["stderr"] * factor, rel=1e-9)


def test_one_share_fit_with_a_sparse_design(monkeypatch):
    """A categorical covariate built sparse (as for hundreds of levels) gives the dense fit, sandwich included."""
    import designer.regression.design as design

    data = _minarets()
    formula = "answer ~ C(leftRight)"
    dense = regress(formula, data, SLD, group="condition", noncompliance="carriers:no", cov="robust")
    monkeypatch.setattr(design, "SPARSE_CELLS", 10)
    sparse = regress(formula, data, SLD, group="condition", noncompliance="carriers:no", cov="robust")
    np.testing.assert_allclose(sparse.coefficients["estimate"], dense.coefficients["estimate"], rtol=1e-8, atol=1e-9)
    np.testing.assert_allclose(sparse.coefficients["stderr"], dense.coefficients["stderr"], rtol=1e-7)
    assert sparse.noncompliance["stderr"] == pytest.approx(dense.noncompliance["stderr"], rel=1e-8)


@pytest.mark.parametrize(("groups", "words"), [
    (UQT, None),
    ({"1": Mechanism(np.array([[0.5, 0.3, 0.2], [0.2, 0.3, 0.5]]), inputs=["yes", "no"], frame=["yes", "no"],
                     focal=[1, 2, 3]), "2": _unrelated(0.3)}, "^an unrelated question needs two inputs answered by"),
    ({"1": Mechanism(np.array([[0.3, 0.7], [0.6, 0.4]]), **LABELS), "2": _unrelated(0.3)},
     r"^group '1': an input's own answer is less likely under it than under the other \(p = -0.3\)"),
    ({"1": Mechanism(np.array([[0.7, 0.3], [0.2, 0.8]]), inputs=["yes", "no"], frame=["yes", "no"], focal=[1, 3]),
      "2": _unrelated(0.3)}, "^an unrelated question needs two inputs answered by their own names"),
])
def test_unrelated_question_files_are_checked(groups, words):
    """The unrelated share of 'no' is one minus that of 'yes'; a file that is not p I + (1 - p) 1 f' is refused."""
    from designer.exceptions import DesignerError

    data = _answers(pd.read_csv(DATA / "uqt_unknown_simulated.csv"), "response")
    data["group"] = data["group"].astype(str)
    if words is None:
        yes = regress("answer ~ x", data, UQT, group="group", unrelated="yes")
        no = regress("answer ~ x", data, UQT, group="group", unrelated="no")
        assert no.noncompliance["share"] == pytest.approx(1 - yes.noncompliance["share"], abs=1e-7)
        np.testing.assert_allclose(no.coefficients["estimate"], yes.coefficients["estimate"], atol=1e-6)
        return
    data = data[(data["group"] != "1") | (data["answer"] == "yes")]  # answers every file here can give
    with pytest.raises(DesignerError, match=words):
        regress("answer ~ 1", data, groups, group="group", unrelated="yes")


def test_one_share_sampling_weights_and_clusters_against_the_counted_estimate():
    """Equal sampling weights leave the sandwich as it is (a weight's square in the meat, its first power in the
    bread); clustered standard errors of an intercept-only fit equal the cluster sandwich of the counted estimate
    (estimate_share: cluster totals of each answer set), a different code path."""
    data = _minarets()[["answer", "condition", "age"]].copy()
    data["region"] = (data["age"] // 7).astype(str)  # a few dozen clusters of uneven size
    options = dict(group="condition", noncompliance="carriers:no")
    plain = regress("answer ~ 1", data, SLD, cov="robust", **options)
    data["w"] = 2.0
    weighted = regress("answer ~ 1", data, SLD, weights="w", **options)
    np.testing.assert_allclose(weighted.coefficients["stderr"], plain.coefficients["stderr"], rtol=1e-9)
    assert weighted.noncompliance["stderr"] == pytest.approx(plain.noncompliance["stderr"], rel=1e-9)
    fit = regress("answer ~ 1", data, SLD, cluster="region", **options)
    codes = np.where(data["condition"] == 1, 0, 2) + np.where(data["answer"] == "yes", 0, 1)
    counts = SurveyCounts.from_rows(4, codes, cluster=data["region"].to_numpy())
    est = estimate_share(SLD, counts, Noncompliance.parse("carriers:no"))
    assert fit.noncompliance["stderr"] == pytest.approx(est.noncompliance["stderr"], rel=1e-7)
    assert est.variance.startswith("cluster-robust sandwich over")


@pytest.mark.parametrize(("mechanisms", "options", "words"), [
    ({"1": Mechanism(np.eye(3), inputs=["a", "b", "no"], frame=["a", "b", "no"], focal=[1, 2, 4]),
      "2": Mechanism(np.full((3, 3), 1 / 3), inputs=["a", "b", "no"], frame=["a", "b", "no"], focal=[1, 2, 4])},
     {"noncompliance": "carriers:no"}, r"^carriers:ANSWER needs two inputs, ANSWER one of them \(the carriers hold "
                                       r"the other\); the inputs are \['a', 'b', 'no'\]$"),
    (SLD, {"noncompliance": "carriers:maybe"}, "^carriers:ANSWER needs two inputs"),
    (SLD, {"noncompliance": "everyone:maybe"},
     r"^answer 'maybe' is not an answer of group '1' \(its frame is \['yes', 'no'\]\)$"),
    ({"1": Mechanism(np.array([[0.6, 0.4], [0.2, 0.8]]), inputs=["yes", "no"], frame=["yes", "no"], focal=[1, 3]),
      "2": _mangat(10 / 12)}, {"noncompliance": "carriers:no"}, r"^group '1' never answers \{no\} alone$"),
    (SLD, {"noncompliance": "carriers:no", "share_groups": ["1", "c"]},
     r"^the unknown share's groups \['c'\] are not among the groups \['1', '2'\]$"),
])
def test_one_share_designs_are_checked(mechanisms, options, words):
    from designer.exceptions import DesignerError

    data = _minarets()
    if "a" in next(iter(mechanisms.values())).inputs:
        data = data.assign(answer=np.where(data["answer"] == "yes", "a", "no"))
    if "never answers" in words:  # the group's own answers are read first: keep those it can give
        data = data[(data["condition"] != 1) | (data["answer"] == "yes")]
    with pytest.raises(DesignerError, match=words):
        regress("answer ~ 1", data, mechanisms, group="condition", **options)


def test_a_group_asked_only_the_unrelated_question():
    """p = 0 in one group: it measures the unrelated share directly, lambda_2 = s, and the prevalence is
    (lambda_1 - (1 - p_1) s) / p_1 (just identified: the estimates are these closed forms)."""
    data = _answers(pd.read_csv(DATA / "uqt_unknown_simulated.csv"), "response")
    data["group"] = data["group"].astype(str)
    groups = {"1": _unrelated(0.75), "2": _two_by_two(0.4, 0.4)}  # group 2: everyone answers the other question
    est = regress("answer ~ 1", data, groups, group="group", unrelated="yes")
    lam = [float((data.loc[data["group"] == g, "answer"] == "yes").mean()) for g in "12"]
    assert est.noncompliance["share"] == pytest.approx(lam[1], abs=1e-8)
    assert est.prevalence(data)["estimate"].iloc[0] == pytest.approx((lam[0] - 0.25 * lam[1]) / 0.75, abs=1e-8)


def test_the_share_interval_is_clipped_to_zero_and_one():
    """Few non-compliant and few respondents: the Wald interval of the share would start below 0."""
    rng = np.random.default_rng(3)
    rows = []
    for arm, p in (("1", 2 / 12), ("2", 10 / 12)):
        carrier = rng.random(150) < 0.4
        yes = np.where(carrier, rng.random(150) >= 0.02, rng.random(150) < 1 - p)
        rows.append(pd.DataFrame({"answer": np.where(yes, "yes", "no"), "condition": int(arm)}))
    data = pd.concat(rows, ignore_index=True)
    fit = regress("answer ~ 1", data, SLD, group="condition", noncompliance="carriers:no")
    nc = fit.noncompliance
    z = 1.959963984540054
    assert nc["share"] - z * nc["stderr"] < 0 and nc["ci_low"] == 0.0
    assert nc["ci_high"] == pytest.approx(min(nc["share"] + z * nc["stderr"], 1.0), rel=1e-12)
