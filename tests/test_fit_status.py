"""Fits that say when they fail: separation named on logistf's sex2 data, a runaway fit, Firth's penalized
likelihood against logistf and against an independent maximiser, exit status 3, no standard error of 0."""

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize
from scipy.special import expit

from designer import Q_GWRR, Mechanism
from designer.cli import main
from designer.estimation.sampling import randomize
from designer.exceptions import RegressionError
from designer.regression import regress

ROOT = Path(__file__).resolve().parents[1]
SEX2 = ROOT / "examples" / "data" / "sex2.csv"
FORMULA = "response ~ age + oc + vic + vicl + vis + dia"
LOGISTF = [0.12025405, -1.10598131, -0.06881673, 2.26887464, -2.11140817, -0.78831694, 3.09601166]
IDENTITY = Mechanism(np.eye(2), inputs=["yes", "no"], frame=["yes", "no"], focal=[1, 2])


def _sex2() -> pd.DataFrame:
    data = pd.read_csv(SEX2)
    data["response"] = np.where(data["case"] == 1, "yes", "no")
    return data


@pytest.fixture
def files(tmp_path):
    data, mech = tmp_path / "sex2.csv", tmp_path / "identity.csv"
    _sex2().to_csv(data, index=False)
    IDENTITY.to_csv(mech)
    return data, mech


def _run(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_separation_on_sex2_is_named_in_every_format_with_exit_3(files, capsys):
    data, mech = files
    base = ["regress", data, "--mechanism", mech, "--formula", FORMULA]
    code, out, _ = _run([*base, "--format", "json"], capsys)
    fit = json.loads(out)
    assert code == 3 and fit["status"] == "separation" and fit["converged"] is False
    assert any("'dia'" in w and "firth" in w for w in fit["warnings"])
    dia = next(c for c in fit["coefficients"] if c["term"] == "dia")
    assert dia["estimate"] == "inf" and dia["stderr"] is None and dia["pvalue"] is None and dia["ci_low"] is None
    others = [c for c in fit["coefficients"] if c["term"] != "dia"]
    assert all(isinstance(c["stderr"], float) and c["stderr"] > 0 for c in others)
    code, out, _ = _run([*base, "--format", "csv"], capsys)
    rows = pd.read_csv(pd.io.common.StringIO(out))
    assert code == 3 and set(rows["status"]) == {"separation"} and rows.loc[rows.term == "dia", "stderr"].isna().all()
    code, out, _ = _run(base, capsys)
    assert code == 3 and "status: separation" in out and "warning: separation" in out


def test_firth_on_sex2_is_logistfs_fit(files, capsys):
    data, mech = files
    code, out, err = _run(["regress", data, "--mechanism", mech, "--formula", FORMULA, "--penalty", "firth",
                           "--format", "json"], capsys)
    assert code == 0, err
    fit = json.loads(out)
    assert fit["status"] == "converged" and fit["penalty"] == "firth"
    assert np.allclose([c["estimate"] for c in fit["coefficients"]], LOGISTF, atol=1e-6, rtol=0)


def _independent_firth(z, answers, channel):
    """Penalized log-likelihood written from the definition (answer probabilities summed over every answer for
    the expected information, derivatives by hand), maximised by BFGS from zero."""
    a, b = channel[0] - channel[1], channel[1]

    def objective(beta):
        p = expit(z @ beta)
        lik = b[answers] + a[answers] * p
        info = np.zeros((z.shape[1], z.shape[1]))
        dp = p * (1 - p)
        for e in range(channel.shape[1]):
            q = b[e] + a[e] * p
            dq = (a[e] * dp)[:, None] * z
            info += dq.T @ (dq / q[:, None])
        return -(np.log(lik).sum() + 0.5 * np.linalg.slogdet(info)[1])

    return minimize(objective, np.zeros(z.shape[1]), method="BFGS", options={"gtol": 1e-9}).x


def test_firth_through_a_randomized_design_matches_an_independent_maximiser():
    rng = np.random.default_rng(4)
    mech = Mechanism(np.array([[0.7, 0.1, 0.2], [0.1, 0.7, 0.2]]), inputs=["yes", "no"], frame=["yes", "no"],
                     focal=[1, 2, 3])
    n = 400
    x = rng.normal(size=n)
    g = rng.integers(0, 2, n)
    truth = np.where(rng.random(n) < expit(-0.5 + 0.8 * x + 1.0 * g), "yes", "no")
    cols = randomize(mech, truth, rng)
    data = pd.DataFrame({"x": x, "g": g, "response": [mech.columns[j] for j in cols]})
    fit = regress("response ~ x + g", data, mech, penalty="firth")
    z = np.column_stack([np.ones(n), x, g])
    expected = _independent_firth(z, np.asarray(cols), mech.matrix)
    assert fit.status == "converged"
    assert np.allclose(fit.coefficients["estimate"], expected, atol=1e-5)
    plain = regress("response ~ x + g", data, mech)
    assert np.all(np.abs(fit.coefficients["estimate"]) < np.abs(plain.coefficients["estimate"]) + 1e-9)  # shrunk


def _runaway(n=300, q=60, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, q))
    mech = Q_GWRR(1.0, 1.0)  # Warner at eps = 1
    truth = np.where(rng.random(n) < 0.3, "yes", "no")
    data = pd.DataFrame({f"x{i}": x[:, i] for i in range(q)})
    data["response"] = [mech.columns[j] for j in randomize(mech, truth, rng)]
    return data, mech, "response ~ " + " + ".join(f"x{i}" for i in range(q))


def test_a_runaway_fit_is_not_called_converged_and_firth_brings_it_home(tmp_path, capsys):
    data, mech, formula = _runaway()
    fit = regress(formula, data, mech)
    assert fit.status in ("separation", "not_converged", "not_identified") and not fit.converged
    se = fit.coefficients["stderr"].to_numpy()
    assert not np.any(se == 0)
    assert not np.any(np.isfinite(se) & (se > 1e3))  # no standard error from a near-singular information
    path, mpath = tmp_path / "d.csv", tmp_path / "m.csv"
    data.to_csv(path, index=False)
    mech.to_csv(mpath)
    for fmt in ("json", "csv", "table"):
        code, _, _ = _run(["regress", path, "--mechanism", mpath, "--formula", formula, "--format", fmt], capsys)
        assert code == 3  # not a unique maximum, whichever of the three
    firth = regress(formula, data, mech, penalty="firth")
    assert firth.status == "converged" and np.all(np.isfinite(firth.coefficients["estimate"]))
    assert np.all(firth.coefficients["stderr"] > 0)


def test_a_well_posed_fit_converges_with_exit_0(files, capsys):
    data, mech = files
    code, out, _ = _run(["regress", data, "--mechanism", mech, "--formula", "response ~ age + vic", "--format",
                         "json"], capsys)
    fit = json.loads(out)
    assert code == 0 and fit["status"] == "converged" and fit["warnings"] == []
    assert all(math.isfinite(c["stderr"]) and c["stderr"] > 0 for c in fit["coefficients"])


def _independent_multinomial_firth(z, answers, matrix, reference):
    """``sum_i log P(E_i) + 1/2 log det I`` for a multinomial logit through ``matrix`` ``(k, F)``, written from the
    definition: the answer probabilities' derivatives by central differences of ``P(E | beta)``, ``I = sum_i
    sum_E dP dP' / P``; Nelder-Mead from zero, then BFGS."""
    k = matrix.shape[0]
    others = [x for x in range(k) if x != reference]

    def probabilities(beta):
        eta = np.zeros((z.shape[0], k))
        eta[:, others] = z @ beta.reshape(z.shape[1], k - 1, order="F")
        eta -= eta.max(axis=1, keepdims=True)
        pi = np.exp(eta)
        return (pi / pi.sum(axis=1, keepdims=True)) @ matrix  # (n, F)

    def objective(beta):
        q = probabilities(beta)
        info = np.zeros((beta.size, beta.size))
        grads = np.stack([(probabilities(beta + e) - probabilities(beta - e)) / 2e-6
                          for e in np.eye(beta.size) * 1e-6], axis=2)  # (n, F, P)
        used = q > 0
        for col in range(matrix.shape[1]):
            rows = used[:, col]
            d = grads[rows, col, :]
            info += (d / q[rows, col][:, None]).T @ d
        sign, logdet = np.linalg.slogdet(info)
        return -(np.log(q[np.arange(z.shape[0]), answers]).sum() + 0.5 * logdet) if sign > 0 else np.inf

    size = z.shape[1] * (k - 1)
    # BFGS to the ridge, Powell along it (no gradient: the objective's own derivatives are differences), BFGS to
    # polish: the same maximum as a long Nelder-Mead run (within 5e-5) in a fiftieth of its time
    first = minimize(objective, np.zeros(size), method="BFGS", options={"gtol": 1e-9})
    second = minimize(objective, first.x, method="Powell", options={"xtol": 1e-10, "ftol": 1e-14, "maxfev": 40_000})
    return minimize(objective, second.x, method="BFGS", options={"gtol": 1e-9}).x


@pytest.mark.parametrize("matrix", [np.eye(3), np.array([[0.6, 0.1, 0.1, 0.2], [0.1, 0.6, 0.1, 0.2],
                                                         [0.1, 0.1, 0.6, 0.2]])], ids=["identity", "randomized"])
def test_firth_with_three_inputs_under_separation_is_the_penalized_maximum(matrix):
    """Three inputs, complete separation (the answer follows x: a below -1, c above 1, b between; under the
    randomized design the answers are drawn from each one's row, don't-knows included). The plain fit separates;
    Firth's is finite and matches an independent maximiser (derivatives by differences, Nelder-Mead + BFGS)."""
    rng = np.random.default_rng(8)
    n = 60
    x = np.sort(rng.normal(scale=2.0, size=n))
    truth = np.where(x < -1, 0, np.where(x > 1, 2, 1))
    frame = ["a", "b", "c"]
    focal = [1, 2, 4] + ([7] if matrix.shape[1] == 4 else [])
    mech = Mechanism(matrix, inputs=frame, frame=frame, focal=focal)
    answers = truth if matrix.shape[1] == 3 else np.where(rng.random(n) < 0.2, 3, truth)
    data = pd.DataFrame({"x": x, "response": [mech.columns[j] for j in answers]})
    assert regress("response ~ x", data, mech).status in ("separation", "not_identified")
    fit = regress("response ~ x", data, mech, penalty="firth")
    assert fit.status == "converged" and np.all(np.isfinite(fit.coefficients["estimate"]))
    z = np.column_stack([np.ones(n), x])
    expected = _independent_multinomial_firth(z, answers, matrix, reference=2)
    assert np.allclose(fit.params, expected, rtol=1e-4, atol=1e-4)


def test_firth_refuses_sampling_weights():
    from designer.exceptions import RegressionError

    data = pd.DataFrame({"x": [0.1, 0.2, 0.3, 0.4], "w": [1.0, 2.0, 1.0, 3.0], "response": ["yes", "no", "yes", "no"]})
    with pytest.raises(RegressionError, match="sampling weights"):
        regress("response ~ x", data, IDENTITY, penalty="firth", weights="w")


def _blind_data(rng, mech, n=3000):
    x = rng.normal(size=n)
    eta = np.c_[0.3 + 0.5 * x, -0.2 + 0.0 * x, 0.4 - 0.6 * x, np.zeros(n)]
    p = np.exp(eta) / np.exp(eta).sum(axis=1, keepdims=True)
    truth = (p.cumsum(axis=1) > rng.random((n, 1))).argmax(axis=1)
    answers = randomize(mech, [mech.inputs[t] for t in truth], rng=rng)
    return pd.DataFrame({"response": [mech.columns[c] for c in answers], "x": x})


def test_terms_the_design_cannot_identify_are_named_without_estimates(tmp_path, capsys):
    """Inputs a and b give the same answers: their log-odds are open whatever the data (no estimate, no test),
    c's against the reference d are identified and keep their standard errors; not called separation."""
    m = np.array([[0.6, 0.2, 0.2], [0.6, 0.2, 0.2], [0.1, 0.7, 0.2], [0.1, 0.1, 0.8]])
    mech = Mechanism(m, inputs=["a", "b", "c", "d"], frame=["a", "b", "c", "d"], focal=[0b0011, 0b0100, 0b1000])
    data = _blind_data(np.random.default_rng(5), mech)
    fit = regress("response ~ x", data, mech)
    table = fit.coefficients.set_index(["outcome", "term"])
    assert fit.status == "not_identified" and "'a', 'b' apart" in fit.warnings[0]
    for outcome in ("a", "b"):
        assert table.loc[outcome]["estimate"].isna().all() and table.loc[outcome]["stderr"].isna().all()
    assert np.all(np.isfinite(table.loc["c"]["stderr"])) and np.all(table.loc["c"]["stderr"] > 0)
    path = tmp_path / "blind.csv"
    mech.to_csv(path)
    answers = tmp_path / "answers.csv"
    data.to_csv(answers, index=False)
    assert main(["regress", str(answers), "--formula", "response ~ x", "--mechanism", str(path),
                 "--format", "json"]) == 3  # not_identified is written, exit 3: no unique maximum
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "not_identified"
    assert all(c["estimate"] is None and c["pvalue"] is None for c in out["coefficients"] if c["outcome"] != "c")


def test_a_design_that_identifies_nothing_marks_every_term():
    m = np.array([[0.8, 0.2], [0.6, 0.4], [0.3, 0.7], [0.1, 0.9]])
    mech = Mechanism(m, inputs=["a", "b", "c", "d"], frame=["a", "b", "c", "d"], focal=[0b0011, 0b1100])
    fit = regress("response ~ x", _blind_data(np.random.default_rng(6), mech), mech)
    assert fit.status == "not_identified" and fit.coefficients["estimate"].isna().all()
    assert "separation" not in " ".join(fit.warnings)


def test_closed_words_are_read_case_insensitively_as_design_problems_read_them():
    data = _sex2()
    lower = regress("response ~ age + oc", data, IDENTITY)
    upper = regress("response ~ age + oc", data, IDENTITY, semantics="SLDP", method="Newton")
    assert upper.semantics == "sldp" and np.allclose(lower.params, upper.params)
    firth = regress("response ~ age + oc", data, IDENTITY, penalty="Firth")
    assert firth.penalty == "firth"
    with pytest.raises(RegressionError, match="semantics must be 'sldp' or 'wldp'"):
        regress("response ~ age", data, IDENTITY, semantics="ldp")


def _ray_surface(kind: str, r=(1.0, 1.0, 0.01)):
    """A log-likelihood in three parameters (offset by -10) that saturates along the ray ``r`` ('rising': it keeps
    rising along r to -10 at infinity; 'peaked': it has a finite maximum on r at t = 40; 'flat': constant along r),
    with a curvature across r that vanishes far out, as a separation by a combination of covariates has."""
    r = np.asarray(r) / np.linalg.norm(r)

    def loglike(b):
        t = float(b @ r)
        across = b - t * r
        along = {"rising": -math.exp(-max(t, -700.0)), "peaked": -1e-3 * (t - 40.0) ** 2, "flat": 0.0}[kind]
        return -10.0 + along - 1e3 * float(across @ across) / (1.0 + t * t)
    return loglike, r


WEAK = np.diag([1e-14, 1e-14, 1e-14])  # every direction weak: each is probed


@pytest.mark.parametrize("kind", ["rising", "peaked", "flat"])
def test_a_separation_along_a_mixed_ray_is_found_by_probing_the_ray(kind):
    """Far out along a ray that mixes terms, each weak eigenvector probed alone is lower both ways; the estimate's
    own ray decides: rising beyond the estimate and lower at the origin is separation of the terms with a share of
    the ray (not the third, 0.01 of it), a finite peak or a flat ray is not. The run is reported in the scaled
    coordinates (the columns' norms 2, 3, 4)."""
    from designer.regression.status import diagnose

    loglike, r = _ray_surface(kind)
    params = 40.0 * r
    norms = np.array([2.0, 3.0, 4.0])
    d = diagnose(loglike, params, WEAK, True, ["a", "b", "c"], norms)
    if kind == "rising":
        assert d.status == "separation" and d.diverging == {0: 1.0, 1: 1.0}
        assert len(d.runs) == 1 and np.allclose(d.runs[0], r * norms / np.linalg.norm(r * norms), atol=1e-12)
        assert any("'a', 'b' run off" in w for w in d.warnings)
    else:
        assert d.status == "not_identified" and not d.diverging and not d.runs


def test_a_term_at_the_share_runs_off_with_the_ray():
    """A term whose share of the ray is exactly 0.05 of the largest runs off with it (the share the weak
    directions use)."""
    from designer.regression.status import diagnose

    loglike, _ = _ray_surface("rising", r=(1.0, 1.0, 0.05))
    d = diagnose(loglike, np.array([1000.0, 1000.0, 50.0]), WEAK, True, ["a", "b", "c"], np.ones(3))
    assert d.status == "separation" and d.diverging == {0: 1.0, 1: 1.0, 2: 1.0}


def test_the_ray_is_probed_only_when_no_direction_runs_off():
    """An axis that runs off by itself decides: the ray, along which a second term also rises, is not probed."""
    from designer.regression.status import diagnose

    def loglike(b):
        with np.errstate(over="ignore"):
            return float(-np.exp(-b[0]) - np.exp(-b[1]) - 1e-3 * b[2] ** 2)

    d = diagnose(loglike, np.array([40.0, 5.0, 0.0]), np.diag([1e-14, 1.0, 1.0]), True, ["a", "b", "c"],
                 np.ones(3))
    assert d.status == "separation" and d.diverging == {0: 1.0}
