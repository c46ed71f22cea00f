"""Fits under an adversary's data: nearly collinear covariates are ``not_identified`` (named), never separation.

Two covariates equal to 1e-9 (noise) have a finite likelihood maximum far out along their difference; the
information is near-singular there because the covariates, not the fitted probabilities, vanish along it. The
checks: the status and the named terms, the other terms' standard errors, and the log-likelihood against the fit
without the copy (an independent bound: dropping a column cannot raise the maximum, and the copy adds almost
nothing).
"""

import json

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

from designer import Mechanism
from designer.cli import main
from designer.estimation.sampling import randomize
from designer.regression import regress

IDENTITY = Mechanism(np.eye(2), inputs=["yes", "no"], frame=["yes", "no"], focal=[1, 2])
WARNER = Mechanism(np.array([[0.75, 0.25], [0.25, 0.75]]), inputs=["yes", "no"], frame=["yes", "no"], focal=[1, 2])


def _collinear(mech: Mechanism, noise: float = 1e-9, n: int = 1000, seed: int = 0) -> pd.DataFrame:
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
    """Today's code: status separation, x1 = +inf, x2 = -inf, advice to use Firth."""
    data = _collinear(mech)
    fit = regress("response ~ x1 + x2 + x3", data, mech, method=method)
    assert fit.status == "not_identified"
    assert not any("separation:" in w or "firth" in w.lower() for w in fit.warnings)
    assert any("'x1', 'x2'" in w and "collinear" in w for w in fit.warnings)
    table = fit.coefficients.set_index("term")
    assert np.all(np.isfinite(table["estimate"]))
    assert table.loc[["x1", "x2"], "stderr"].isna().all()
    assert np.all(table.loc[["Intercept", "x3"], "stderr"] > 0)
    reduced = regress("response ~ x1 + x3", data, mech)
    assert reduced.status == "converged"
    assert reduced.loglik - 1e-6 <= fit.loglik <= reduced.loglik + 1e-3  # the copy adds (almost) nothing
    assert table.loc["x1", "estimate"] + table.loc["x2", "estimate"] == pytest.approx(
        reduced.coefficients.set_index("term").loc["x1", "estimate"], abs=0.05)


def test_nearly_collinear_covariates_through_the_cli(tmp_path, capsys):
    data, mech = tmp_path / "d.csv", tmp_path / "m.csv"
    _collinear(IDENTITY).to_csv(data, index=False)
    IDENTITY.to_csv(mech)
    code = main(["regress", str(data), "--mechanism", str(mech), "--formula", "response ~ x1 + x2 + x3",
                 "--format", "json"])
    fit = json.loads(capsys.readouterr().out)
    assert code == 0 and fit["status"] == "not_identified"  # regress exits 3 for separation, not_converged
    assert all(c["estimate"] not in ("inf", "-inf") for c in fit["coefficients"])


def test_separation_beside_collinear_terms_is_still_separation():
    """sex2-like: a covariate that separates (every x >= 1.5 says yes) and two near copies of another."""
    rng = np.random.default_rng(3)
    n = 400
    a = rng.normal(size=n)
    s = (rng.random(n) < 0.05).astype(float) * 2.0
    truth = np.where((s > 0) | (rng.random(n) < expit(-0.5 + 0.7 * a)), "yes", "no")
    data = pd.DataFrame({"a": a, "b": a + 1e-9 * rng.normal(size=n), "s": s, "response": truth})
    fit = regress("response ~ a + b + s", data, IDENTITY)
    assert fit.status == "separation"
    table = fit.coefficients.set_index("term")
    assert table.loc["s", "estimate"] == np.inf
    assert np.isfinite(table.loc["a", "estimate"]) and np.isfinite(table.loc["b", "estimate"])
    assert any("'a', 'b'" in w and "collinear" in w for w in fit.warnings)


def test_nearly_collinear_covariates_in_the_streamed_fit():
    """Data read in chunks and fitted by streamed Newton passes (more distinct rows than max_patterns)."""
    from designer.regression.chunked import regress_chunks

    data = _collinear(IDENTITY)

    def chunks():
        return ((start, data.iloc[start:start + 300]) for start in range(0, len(data), 300))

    fit = regress_chunks("response ~ x1 + x2 + x3", chunks, IDENTITY, columns=list(data.columns), max_patterns=10)
    assert fit.status == "not_identified"
    assert any("'x1', 'x2'" in w and "collinear" in w for w in fit.warnings)
    table = fit.coefficients.set_index("term")
    assert np.all(np.isfinite(table["estimate"])) and np.all(table.loc[["Intercept", "x3"], "stderr"] > 0)


def test_a_constant_covariate_in_chunks_names_both_terms_and_gives_neither_a_standard_error(tmp_path, capsys):
    """A constant age of 30 is the intercept times 30: whatever the units, both terms share the direction the data
    do not see (the in-memory fit refuses the singular design; the counted rows of --chunk-rows judge it)."""
    from pathlib import Path

    data = tmp_path / "r.csv"
    data.write_text("id,age,response\n1,30,{yes}\n2,30,{yes}\n")
    mechanism = Path(__file__).resolve().parents[1] / "examples" / "mechanisms" / "q2x3.csv"
    code = main(["regress", str(data), "--mechanism", str(mechanism), "--formula", "response ~ age",
                 "--chunk-rows", "1000", "--format", "json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["status"] == "not_identified"  # a maximum, reached: exit 0 with the status
    assert {c["term"]: c["stderr"] for c in out["coefficients"]} == {"Intercept": None, "age": None}
