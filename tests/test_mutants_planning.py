"""planning's sample sizes, as a plan reports them (written for the mutants that survived the mutation suite:
docs/mutation.md, benchmarks/mutation/report.md).

Warner's mechanism at eps = 1 (truth probability ``p = e / (1 + e)``) has the MLE's variance per respondent
``V(pi) = pi (1 - pi) + p (1 - p) / (2p - 1)^2 = pi (1 - pi) + e / (e - 1)^2`` (Eq 1 times n); the sample size for
a half-width ``w`` at level ``L`` is the least ``n`` with ``z sqrt(V / n) <= w``, ``z`` the normal quantile of
``(1 + L) / 2``. Both are worked out here without designer.
"""

from __future__ import annotations

import math
from statistics import NormalDist

from designer import Q_WRR
from designer.planning import accuracy_of, power_at, power_sample_size, sample_size
from designer.planning.sizes import BudgetPlan, DesignBasis

V = 0.3 * 0.7 + math.e / (math.e - 1) ** 2  # Warner at eps = 1, share 0.3


def test_a_sample_size_reports_its_n_width_level_and_variance_in_its_dict_and_table() -> None:
    size = sample_size(accuracy_of(Q_WRR(1.0), "sldp", [0.3, 0.7]), 0.02)
    z = NormalDist().inv_cdf(0.975)
    n = math.ceil(V * (z / 0.02) ** 2)
    assert n == 10859 and size.n == n
    names = ["n", "width", "level", "achieved_width", "variance", "formula"]
    figures = size.to_dict()
    assert list(figures) == names
    assert figures["n"] == n and figures["width"] == 0.02 and figures["level"] == 0.95
    assert abs(figures["achieved_width"] - z * math.sqrt(V / n)) < 1e-12 and figures["achieved_width"] <= 0.02
    assert abs(figures["variance"] - V) < 1e-12 and figures["formula"] == "exact: Warner's Eq 1 (Ex 3.7)"
    assert size.table() == (names, [[figures[k] for k in names]])


def test_a_budget_plan_reports_its_budget_designs_basis_and_variance_in_its_dict_and_table() -> None:
    plan = BudgetPlan(1.0, accuracy_of(Q_WRR(1.0), "sldp", [0.3, 0.7]), None, DesignBasis.FILE, 3)
    names = ["epsilon", "designs_solved", "design_basis", "design_basis_note", "variance"]
    figures = plan.to_dict()
    assert list(figures) == names
    assert figures["epsilon"] == 1.0 and figures["designs_solved"] == 3 and figures["design_basis"] == "file"
    assert figures["design_basis_note"] == ("the file's design, certified at each budget at the file's own prior "
                                            "and kept fixed")
    assert abs(figures["variance"] - V) < 1e-12
    assert plan.table() == (names, [[figures[k] for k in names]])


P = math.e / (1 + math.e)


def _v(pi: float) -> float:
    return pi * (1 - pi) + P * (1 - P) / (2 * P - 1) ** 2


def _greater(n: int, detect: float, alpha: float, null: float = 0.5) -> float:
    """Warner's one-sided Wald power at n: Phi((D sqrt(n) - z_{1-alpha} s0) / s1)."""
    z = NormalDist().inv_cdf(1 - alpha)
    return NormalDist().cdf((detect * math.sqrt(n) - z * math.sqrt(_v(null))) / math.sqrt(_v(null + detect)))


def test_a_sample_size_in_the_hundreds_of_millions_is_the_closed_form() -> None:
    """Detecting 0.5001 against 0.5 with power 0.8 (one-sided, alpha 0.05) through Warner at eps = 1 takes
    ((z_.95 s0 + z_.8 s1) / D)^2 = 723,775,647.5 respondents, rounded up: read off the formula, not counted up
    to."""
    accuracy = accuracy_of(Q_WRR(1.0), "sldp", [0.5, 0.5])
    n01 = NormalDist()
    x = ((n01.inv_cdf(0.95) * math.sqrt(_v(0.5)) + n01.inv_cdf(0.8) * math.sqrt(_v(0.5001))) / 1e-4) ** 2
    assert 723775647 < x < 723775648
    assert power_sample_size(accuracy, 1e-4, alternative="greater") == 723775648


def test_a_power_reached_exactly_at_n_gives_n() -> None:
    """The least n whose power reaches the target (the power asked, less 1e-12 of it): at alpha 1e-6, detecting
    0.6 against 0.5, a power whose target is the power at n = 2,000 to the last bit gives 2,000, not 2,001; at
    1,999 the power falls clearly short."""
    accuracy = accuracy_of(Q_WRR(1.0), "sldp", [0.5, 0.5])
    power = 0.2667117705190813
    assert abs(_greater(2000, 0.1, 1e-6) - power * (1 - 1e-12)) < 1e-13
    assert _greater(1999, 0.1, 1e-6) < power - 1e-4
    assert power_sample_size(accuracy, 0.1, power=power, alpha=1e-6, alternative="greater") == 2000


def _two_sided(n: int, detect: float, alpha: float, null: float = 0.5, scale: float = 1.0) -> float:
    """Warner's two-sided Wald power at n (both tails), the variances times ``scale``."""
    z = NormalDist().inv_cdf(1 - alpha / 2)
    s0, s1 = math.sqrt(scale * _v(null)), math.sqrt(scale * _v(null + detect))
    return (NormalDist().cdf((detect * math.sqrt(n) - z * s0) / s1)
            + NormalDist().cdf((-detect * math.sqrt(n) - z * s0) / s1))


def test_a_two_sided_power_reached_exactly_at_n_gives_n() -> None:
    """The bisection keeps the least n reaching the target: a power whose target is the two-sided power at n = 300
    to the last bit gives 300."""
    accuracy = accuracy_of(Q_WRR(1.0), "sldp", [0.5, 0.5])
    power = 0.3593411039456888
    assert abs(_two_sided(300, 0.1, 0.05) - power * (1 - 1e-12)) < 1e-13
    assert _two_sided(299, 0.1, 0.05) < power - 1e-4
    assert power_sample_size(accuracy, 0.1, power=power) == 300


def test_a_plans_own_variance_model_gives_the_variances_at_the_null_and_the_alternative() -> None:
    """An accuracy with its own variance model (a split design's) is tested through it: a model twice Warner's
    variance at each share gives the power and sample size of Warner's closed form with the variances doubled."""
    import dataclasses

    import numpy as np

    base = accuracy_of(Q_WRR(1.0), "sldp", [0.5, 0.5])
    doubled = dataclasses.replace(base, model=lambda p: np.array([2 * _v(float(p[0])), 2 * _v(float(p[1]))]))
    assert abs(power_at(doubled, 1000, 0.1) - _two_sided(1000, 0.1, 0.05, scale=2.0)) < 1e-12
    assert abs(power_at(doubled, 1000, 0.1) - power_at(base, 1000, 0.1)) > 0.05
    n = power_sample_size(doubled, 0.1)
    assert _two_sided(n, 0.1, 0.05, scale=2.0) >= 0.8 * (1 - 1e-12) > _two_sided(n - 1, 0.1, 0.05, scale=2.0)
