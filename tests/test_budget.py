"""The budget as one value: the same rule as a problem file and the flag, the programs' coefficient written once,
and exact decisions against ``e^eps`` (checked with 60-digit decimals, which designer does not use here)."""

import math
from decimal import Decimal, localcontext
from fractions import Fraction

import pytest

from designer import Budget, DesignProblem
from designer.budget import LP_EPSILON_CAP
from designer.exceptions import InvalidArgumentError


@pytest.mark.parametrize("bad", [0, 0.0, -1.0, math.inf, math.nan, True, "1", None])
def test_a_budget_is_a_finite_number_above_zero(bad):
    with pytest.raises(InvalidArgumentError, match=r"^epsilon must be a finite number > 0, got "):
        Budget(bad)


def test_the_same_rule_as_a_problem():
    """A value Budget refuses, DesignProblem refuses too, and the other way round."""
    for value in (0.0, -0.5, math.inf, 1e-300, 2.5, 10**400):
        try:
            Budget(value)
            budget_ok = True
        except InvalidArgumentError:
            budget_ok = False
        try:
            DesignProblem(objective="truthful", inputs=("yes", "no"), epsilon=value)
            problem_ok = True
        except Exception:
            problem_ok = False
        assert budget_ok is problem_ok, value


def test_lp_factor_is_e_to_the_budget_capped():
    assert Budget(1).lp_factor == math.e and isinstance(Budget(1).epsilon, float)
    assert Budget(LP_EPSILON_CAP).lp_factor == Budget(1000.0).lp_factor == math.exp(30.0)
    assert DesignProblem(objective="truthful", inputs=("yes", "no"), epsilon=0.7).budget == Budget(0.7)


@pytest.mark.parametrize("eps", [1e-9, 0.5, 1.0, math.log(3), 12.0, 700.0])
def test_exact_bounds_and_ratios_against_decimals(eps):
    with localcontext() as ctx:
        ctx.prec = 400
        truth = Decimal(eps).exp()
        below = int(truth * 10**30)  # the largest numerator over 10^30 at most e^eps
    lo, hi = Budget(eps).exp_bounds()
    assert Fraction(lo) < Fraction(truth) < Fraction(hi)
    assert (hi - lo) / lo < Fraction(1, 10**55)
    assert Budget(eps).admits(below, 10**30) and not Budget(eps).admits(below + 1, 10**30)
