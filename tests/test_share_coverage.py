"""Coverage of the 95% Wald intervals of the fit with one constant unknown share (designer.regression.constant_share),
by simulation: 500 surveys for each of the stochastic lie detector, cheater detection and the unrelated question
with an unknown prevalence, a prevalence with a covariate (log-odds -0.4 + 0.7 x). Each interval (intercept, slope,
share) must cover its true value in 0.95 of the surveys up to 3.5 Monte Carlo standard errors (0.034).

The covariate takes three values so that a survey's rows collapse into at most 12 distinct rows fitted with
frequency weights (exactly the fit of every row, tests/test_chunked.py): 1,500 fits take seconds.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from designer.mechanism import Mechanism
from designer.regression import regress

LABELS = dict(inputs=["yes", "no"], frame=["yes", "no"], focal=[1, 2])
SURVEYS = 500
PER_GROUP = 800
INTERCEPT, SLOPE = -0.4, 0.7


def _m(yes_if_yes: float, yes_if_no: float) -> Mechanism:
    return Mechanism(np.array([[yes_if_yes, 1 - yes_if_yes], [yes_if_no, 1 - yes_if_no]]), **LABELS)


#: name -> (group mechanisms, regress options, true share, per-group parameter)
DESIGNS = {
    "lie detector": ({"1": _m(1, 1 - 2 / 12), "2": _m(1, 1 - 10 / 12)}, {"noncompliance": "carriers:no"}, 0.3,
                     (2 / 12, 10 / 12)),
    "cheater detection": ({"1": _m(1, 0.3), "2": _m(1, 0.7)}, {"noncompliance": "everyone:no"}, 0.2, (0.3, 0.7)),
    "unrelated question": ({"1": _m(0.875, 0.125), "2": _m(0.65, 0.35)}, {"unrelated": "yes"}, 0.3, (0.75, 0.3)),
}


def _survey(rng: np.random.Generator, design: str) -> pd.DataFrame:
    share, params = DESIGNS[design][2], DESIGNS[design][3]
    frames = []
    for arm, p in zip("12", params):
        x = rng.integers(-1, 2, size=PER_GROUP).astype(float)
        trait = rng.random(PER_GROUP) < 1 / (1 + np.exp(-(INTERCEPT + SLOPE * x)))
        coin = rng.random(PER_GROUP)
        if design == "lie detector":  # carriers: yes unless among the share who say no; others yes with 1 - p
            yes = np.where(trait, rng.random(PER_GROUP) >= share, coin < 1 - p)
        elif design == "cheater detection":  # a share of everyone says no; users yes; non-users yes with p
            yes = np.where(rng.random(PER_GROUP) < share, False, np.where(trait, True, coin < p))
        else:  # asked the sensitive question with p, else the unrelated one (yes with the share)
            yes = np.where(coin < p, trait, rng.random(PER_GROUP) < share)
        frames.append(pd.DataFrame({"answer": np.where(yes, "yes", "no"), "x": x, "arm": arm}))
    rows = pd.concat(frames, ignore_index=True)
    return rows.groupby(["answer", "x", "arm"], as_index=False).size().rename(columns={"size": "count"})


@pytest.mark.simulation
@pytest.mark.parametrize("design", list(DESIGNS))
def test_intervals_cover_at_their_level(design):
    mechanisms, options, share, _ = DESIGNS[design]
    rng = np.random.default_rng(2026)
    covered = np.zeros(3)
    fitted = 0
    for _ in range(SURVEYS):
        data = _survey(rng, design)
        fit = regress("answer ~ x", data, mechanisms, group="arm", weights="count", weight_kind="frequency",
                      **options)
        if fit.status != "converged":
            continue
        fitted += 1
        table = fit.coefficients
        share_fit = fit.noncompliance
        covered += [table["ci_low"][0] <= INTERCEPT <= table["ci_high"][0],
                    table["ci_low"][1] <= SLOPE <= table["ci_high"][1],
                    share_fit["ci_low"] <= share <= share_fit["ci_high"]]
    assert fitted >= 0.98 * SURVEYS
    rate = covered / fitted
    error = 3.5 * np.sqrt(0.95 * 0.05 / fitted)
    assert np.all(np.abs(rate - 0.95) <= error), rate
