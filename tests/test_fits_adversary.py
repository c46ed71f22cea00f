"""Fits under an adversary's data: nearly collinear covariates are ``not_identified`` (the aliased one dropped and
named, as R's glm drops it), never separation; exactly dependent ones are refused in every reading path.

Two covariates equal to 1e-5 (noise) are aliased: the later one is dropped, and the other terms are the fit of
the model without it, standard errors included (the kept terms' standard errors used to be conditional on the
aliased pair, up to 3.6 times too small). The checks: the status and the named terms, the other terms' estimates
and standard errors against the fit without the copy (an independent fit of another formula).
"""

import json

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

from designer import Mechanism
from designer.cli import main
from designer.estimation.sampling import randomize
from designer.exceptions import RegressionError
from designer.regression import regress

IDENTITY = Mechanism(np.eye(2), inputs=["yes", "no"], frame=["yes", "no"], focal=[1, 2])
WARNER = Mechanism(np.array([[0.75, 0.25], [0.25, 0.75]]), inputs=["yes", "no"], frame=["yes", "no"], focal=[1, 2])


def _collinear(mech: Mechanism, noise: float = 1e-5, n: int = 1000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x1 = rng.normal(size=n)
    x2 = x1 + noise * rng.normal(size=n)
    x3 = rng.normal(size=n)
    truth = np.where(rng.random(n) < expit(-0.3 + 0.8 * x1 + 0.5 * x3), "yes", "no")
    cols = randomize(mech, truth, np.random.default_rng(seed + 1))
    return pd.DataFrame({"x1": x1, "x2": x2, "x3": x3, "response": [mech.columns[j] for j in cols]})


@pytest.mark.parametrize("mech", [IDENTITY, WARNER], ids=["identity", "warner"])
@pytest.mark.parametrize("method", ["newton", "em"])
def test_nearly_collinear_covariates_are_not_identified_not_separation(mech, method):
    """Before: status separation, x1 = +inf, x2 = -inf, advice to use Firth; then x1 and x2 without standard
    errors and the others' conditional on them. Now x2 is dropped (aliased, named) and the rest is the fit of the
    model without it."""
    data = _collinear(mech)
    fit = regress("response ~ x1 + x2 + x3", data, mech, method=method)
    assert fit.status == "not_identified" and not fit.converged
    assert not any("separation:" in w or "firth" in w.lower() for w in fit.warnings)
    assert any("'x2'" in w and "collinear" in w and "dropped" in w for w in fit.warnings)
    table = fit.coefficients.set_index("term")
    assert np.isnan(table.loc["x2", "estimate"]) and np.isnan(table.loc["x2", "stderr"])
    reduced = regress("response ~ x1 + x3", data, mech).coefficients.set_index("term")
    for term in ("Intercept", "x1", "x3"):
        assert table.loc[term, "estimate"] == pytest.approx(reduced.loc[term, "estimate"], abs=1e-6)
        assert table.loc[term, "stderr"] == pytest.approx(reduced.loc[term, "stderr"], rel=1e-5)


def test_nearly_collinear_covariates_through_the_cli(tmp_path, capsys):
    data, mech = tmp_path / "d.csv", tmp_path / "m.csv"
    _collinear(IDENTITY).to_csv(data, index=False)
    IDENTITY.to_csv(mech)
    code = main(["regress", str(data), "--mechanism", str(mech), "--formula", "response ~ x1 + x2 + x3",
                 "--format", "json"])
    fit = json.loads(capsys.readouterr().out)
    assert code == 3 and fit["status"] == "not_identified"  # not a unique maximum: exit 3, as separation
    assert all(c["estimate"] not in ("inf", "-inf") for c in fit["coefficients"])
    assert [c["term"] for c in fit["coefficients"] if c["estimate"] is None] == ["x2"]


@pytest.mark.parametrize("noise", [0.0, 1e-9])
def test_exactly_dependent_covariates_are_refused_naming_the_column(noise):
    """A copy of x1 to rounding (1e-9) is the design matrix's singularity, refused in one line as an exact copy is."""
    data = _collinear(IDENTITY, noise=noise)
    with pytest.raises(RegressionError, match="'x2' is a linear combination of the terms before it"):
        regress("response ~ x1 + x2 + x3", data, IDENTITY)


def test_separation_beside_collinear_terms_is_still_separation():
    """sex2-like: a covariate that separates (every x >= 1.5 says yes) and two near copies of another."""
    rng = np.random.default_rng(3)
    n = 400
    a = rng.normal(size=n)
    s = (rng.random(n) < 0.05).astype(float) * 2.0
    truth = np.where((s > 0) | (rng.random(n) < expit(-0.5 + 0.7 * a)), "yes", "no")
    data = pd.DataFrame({"a": a, "b": a + 1e-5 * rng.normal(size=n), "s": s, "response": truth})
    fit = regress("response ~ a + b + s", data, IDENTITY)
    assert fit.status == "separation"
    table = fit.coefficients.set_index("term")
    assert table.loc["s", "estimate"] == np.inf
    assert np.isfinite(table.loc["a", "estimate"]) and np.isnan(table.loc["b", "estimate"])
    assert any("'b'" in w and "collinear" in w for w in fit.warnings)
    assert np.isfinite(table.loc[["Intercept", "a"], "stderr"]).all()  # conditional on s, which runs off


def test_nearly_collinear_covariates_in_the_streamed_fit():
    """Data read in chunks and fitted by streamed Newton passes (more distinct rows than max_patterns): the verdict,
    the estimates and the standard errors of the fit in memory."""
    from designer.regression.chunked import regress_chunks

    data = _collinear(IDENTITY)

    def chunks():
        return ((start, data.iloc[start:start + 300]) for start in range(0, len(data), 300))

    fit = regress_chunks("response ~ x1 + x2 + x3", chunks, IDENTITY, columns=list(data.columns), max_patterns=10)
    memory = regress("response ~ x1 + x2 + x3", data, IDENTITY)
    assert fit.status == memory.status == "not_identified"
    assert any("'x2'" in w and "collinear" in w for w in fit.warnings)
    ours, theirs = fit.coefficients, memory.coefficients
    np.testing.assert_array_equal(ours["estimate"].isna(), theirs["estimate"].isna())
    np.testing.assert_allclose(ours["estimate"].dropna(), theirs["estimate"].dropna(), rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(ours["stderr"].dropna(), theirs["stderr"].dropna(), rtol=1e-6)


@pytest.mark.parametrize("path", ["memory", "counted", "streamed"])
def test_a_constant_covariate_is_refused_in_every_reading_path(tmp_path, capsys, path):
    """A constant age of 30 is the intercept times 30: the design matrix is singular, refused in one line (exit 2)
    whether the file is read whole, counted in chunks or streamed (the streamed fit used to fit it, at half the
    standard error, and the counted rows called both terms not identified)."""
    from pathlib import Path

    data = tmp_path / "r.csv"
    rng = np.random.default_rng(0)
    data.write_text("id,x,age,response\n" + "".join(f"{i},{rng.normal():.6f},30,{{{rng.choice(['yes', 'no'])}}}\n"
                                                     for i in range(200)))
    mechanism = Path(__file__).resolve().parents[1] / "examples" / "mechanisms" / "q2x3.csv"
    extra = {"memory": [], "counted": ["--chunk-rows", "1000"],
             "streamed": ["--chunk-rows", "1000", "--max-distinct", "10"]}[path]
    code = main(["regress", str(data), "--mechanism", str(mechanism), "--formula", "response ~ x + age", *extra,
                 "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "'age' is constant" in err and "intercept" in err
