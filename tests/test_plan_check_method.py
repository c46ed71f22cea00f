"""``plan --check --method``: the simulation check analyses its surveys with the estimator the survey will use
(issue 55 item 7). Oracle: Warner's design at eps = 1 and n = 365 (prior yes = 0.03) worked out here by exact
enumeration of the yes count: the posterior under the uniform prior on a grid of 20,000 points, its equal-tailed
95% credible interval, averaged over the binomial distribution of the count. No code shared with designer."""

import json

import numpy as np
import pytest
from scipy.stats import binom

import designer
from designer.cli import main
from designer.results import render

N, PI = 365, 0.03
PLAN = {"prior": "yes=0.03,no=0.97", "width": 0.1, "check": 40, "seed": 3}


def _exact_posterior_half_width() -> float:
    p = np.e / (1 + np.e)  # Warner's truthful probability at eps = 1
    y = np.arange(N + 1)
    weight = binom.pmf(y, N, PI * p + (1 - PI) * (1 - p))
    grid = (np.arange(20_000) + 0.5) / 20_000
    lam = grid * p + (1 - grid) * (1 - p)
    log_post = y[:, None] * np.log(lam)[None, :] + (N - y)[:, None] * np.log1p(-lam)[None, :]
    post = np.exp(log_post - log_post.max(axis=1, keepdims=True))
    cdf = np.cumsum(post, axis=1) / post.sum(axis=1, keepdims=True)
    low = grid[np.argmax(cdf >= 0.025, axis=1)]
    high = grid[np.argmax(cdf >= 0.975, axis=1)]
    return float(weight @ ((high - low) / 2))


def test_the_check_simulates_with_the_posterior_when_asked():
    posterior = designer.plan("warner", method="posterior", **PLAN)
    mle = designer.plan("warner", **PLAN)
    assert posterior.n == mle.n == N
    post, ml = posterior.to_dict()["check"], mle.to_dict()["check"]
    assert post["method"] == "posterior" and ml["method"] == "mle"
    # the credible interval's mean half-width is the posterior's (0.0699 exactly), not the Wald interval's 0.100
    exact = _exact_posterior_half_width()
    assert post["mean_half_width"] == pytest.approx(exact, rel=0.05)
    assert ml["mean_half_width"] > 1.25 * exact
    text = render(posterior, "table")
    assert "posterior mean and credible interval" in text
    # far from the asymptotic MSE at this n (the share is near 0): the warning stays
    assert "the asymptotic n is off by more than 10%" in text
    assert "MLE and Wald interval" in render(mle, "table")


def test_method_on_the_command_line(capsys):
    assert main(["plan", "warner", "--prior", "yes=0.03,no=0.97", "--width", "0.1", "--check", "20", "--seed", "1",
                 "--method", "em", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["check"]["method"] == "mle"
    assert main(["plan", "warner", "--prior", "yes=0.3,no=0.7", "--width", "0.05", "--method", "posterior"]) == 2
    assert "--method" in capsys.readouterr().err
    assert main(["plan", "warner", "--prior", "yes=0.3,no=0.7", "--detect", "0.1", "--check", "20",
                 "--method", "posterior"]) == 2
