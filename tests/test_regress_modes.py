"""regress reaches the highest mode of its log-likelihood, or says the estimates run off (issue 55): the mixture's
log-likelihood is not concave, and a fit from one start can stop at a lower local maximum while saying
`converged`. Oracles written here with scipy only: a many-start maximiser of the same likelihood, and the exact
limit of the log-likelihood along a split of the rows."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize
from scipy.special import expit

import designer
from designer.exceptions import DesignerError

ROOT = Path(__file__).resolve().parents[1]
MECH = str(ROOT / "examples/mechanisms/gwrr.csv")
#: gwrr.csv's rows (input yes, no) over the answers {yes}, {no}, {yes,no}.
M = np.array([[0.584846862904004, 0.21515313709599612, 0.2], [0.21515313709599612, 0.584846862904004, 0.2]])
CODES = {"{yes}": 0, "{no}": 1, "{yes,no}": 2}


def _loglik_of(x: np.ndarray, answers: np.ndarray, w: np.ndarray):
    """The log-likelihood of log-odds(yes : no) = b0 + x b, in x standardized here (its own coordinates)."""
    z = np.column_stack([np.ones(len(x)), (x - x.mean(0)) / x.std(0)])

    def loglik(b: np.ndarray) -> float:
        p = expit(np.clip(z @ b, -700, 700))
        return float(w @ np.log(M[0, answers] * p + M[1, answers] * (1 - p)))
    return loglik


def oracle_max(x: np.ndarray, answers: np.ndarray, w: np.ndarray, starts: int = 12, seed: int = 0,
               spread: float = 3.0) -> tuple[float, np.ndarray]:
    """The highest log-likelihood BFGS reaches from the origin and ``starts`` random points (a supremum at
    infinity is approached, not reached), and its slopes on the covariates' own scale."""
    loglik = _loglik_of(x, answers, w)
    rng = np.random.default_rng(seed)
    best, where = -np.inf, np.zeros(x.shape[1] + 1)
    for s in range(starts + 1):
        x0 = np.zeros(x.shape[1] + 1) if s == 0 else rng.normal(0, spread, x.shape[1] + 1)
        run = minimize(lambda b: -loglik(b), x0, method="BFGS", options={"gtol": 1e-10})
        if -run.fun > best:
            best, where = -run.fun, run.x
    return best, where[1:] / x.std(0)


def _read(name: str) -> tuple[pd.DataFrame, np.ndarray, np.ndarray, np.ndarray]:
    frame = pd.read_csv(ROOT / "tests/data" / name)
    x = frame[[c for c in frame if c.startswith("x")]].to_numpy(float)
    answers = frame["response"].map(CODES).to_numpy()
    w = frame["w"].to_numpy() * len(frame) / frame["w"].sum() if "w" in frame else np.ones(len(frame))
    return frame, x, answers, w


def test_a_supremum_at_infinity_is_separation_not_a_local_maximum():
    frame, x, answers, w = _read("regress_far_mode.csv")
    # the limit along the split "x0 above its third-largest value -> no, below -> yes", computed here
    cut = np.sort(x[:, 0])[-3]
    limit = float(w @ np.log(np.where(x[:, 0] >= cut, M[1, answers], M[0, answers])))
    assert limit > -29.329 + 0.5  # above the local maximum the fit used to stop at
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = designer.regress("response ~ x0", frame, MECH, weights="w")
    assert fit.status == "separation"
    assert fit.loglik >= limit - 1e-6
    assert np.isinf(fit.coefficients["estimate"].to_numpy()).all()
    assert fit.coefficients["stderr"].isna().all()


def test_the_higher_of_two_finite_modes():
    frame, x, answers, w = _read("regress_two_modes.csv")
    best, slopes = oracle_max(x, answers, w)
    assert best > -989.1 + 1.0  # the mode the intercept-only start leads to is 1.76 lower
    fit = designer.regress("response ~ x0", frame, MECH)
    assert fit.status == "converged"
    assert fit.loglik == pytest.approx(best, abs=1e-6)
    slope = fit.coefficients.set_index("term").loc["x0", "estimate"]
    assert slope == pytest.approx(slopes[0], rel=1e-4)


# derandomized (the same draws on every run: the suite must not fail by the draw; a finite mode none of the search's
# four random starts reaches is still missed about once in 200 converged fits, docs/theory.md section 9)
@settings(max_examples=20, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
# found by the draw: a separation by a combination of two covariates, and a threshold split whose witness point,
# at the first distance along it, stayed below the fit (both `converged` at a lower mode before)
@example(n=60, kinds=["normal", "normal"], size=3.0, weighted=True, seed=153983716)
@example(n=200, kinds=["normal"], size=3.0, weighted=True, seed=1140122395)
@given(n=st.sampled_from([15, 30, 60, 200]), kinds=st.lists(st.sampled_from(["normal", "binary", "heavy"]),
                                                             min_size=1, max_size=2),
       size=st.sampled_from([0.5, 3.0]), weighted=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_a_converged_fit_is_the_highest_mode_found(n, kinds, size, weighted, seed):
    rng = np.random.default_rng(seed)
    x = np.column_stack([rng.normal(size=n) if k == "normal" else (rng.random(n) < 0.3).astype(float)
                         if k == "binary" else rng.lognormal(0, 2, n) for k in kinds])
    if np.any(x.std(0) == 0):
        return
    truth = rng.normal(size=len(kinds) + 1) * size
    eta = truth[0] + (x - x.mean(0)) / x.std(0) @ truth[1:]
    yes = rng.random(n) < expit(eta)
    answers = np.array([rng.choice(3, p=M[0 if t else 1]) for t in yes])
    frame = pd.DataFrame({f"x{j}": x[:, j] for j in range(len(kinds))})
    frame["response"] = np.array(list(CODES))[answers]
    w = np.ones(n)
    if weighted:
        frame["w"] = rng.lognormal(0, 0.5, n)
        w = frame["w"].to_numpy() * n / frame["w"].sum()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = designer.regress("response ~ " + " + ".join(frame.columns[:len(kinds)]), frame, MECH,
                                   weights="w" if weighted else None)
    except DesignerError:
        return
    assert fit.status in ("converged", "separation", "not_converged", "not_identified")
    if fit.status == "converged":
        # starts of its own (designer's search draws its starts from seed 0 at spread 3)
        best = oracle_max(x, answers, w, starts=12, seed=987, spread=4.0)[0]
        assert fit.loglik >= best - 1e-6 * max(1.0, abs(best)), (fit.loglik, best)
