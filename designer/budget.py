"""The privacy budget as one value: checked once where it enters, then read either as the coefficient
``e^eps`` of a design program (capped, docs/theory.md section 6.2) or as exact rational bounds on ``e^eps``
for a certificate (section 7). Def 3.1 and Def 3.13 state the budget; this module only carries it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from ._internal.exact import exp_bounds, ratio_at_most_exp
from ._internal.validation import BUDGET_RULE, check_budget

__all__ = ["BUDGET_RULE", "LP_EPSILON_CAP", "Budget", "check_budget"]

#: Budgets above this are solved at this budget (e^30 ~ 1e13 is the largest coefficient HiGHS handles
#: reliably); a mechanism within 30 nats is within any larger budget, and what it gives up is below
#: the objective's tolerance for every bundled problem (docs/theory.md, section 6.2).
LP_EPSILON_CAP = 30.0


@dataclass(frozen=True)
class Budget:
    """A privacy budget ``eps`` (nats), a finite number > 0: the same rule as a problem file's ``epsilon``,
    the ``--epsilon`` flag and :class:`designer.DesignProblem`.

    Attributes
    ----------
    epsilon : float
        The budget in nats.

    Examples
    --------
    >>> import math
    >>> from designer import Budget
    >>> Budget(1.0).lp_factor == math.e
    True
    >>> Budget(1.0).admits(271, 100), Budget(1.0).admits(272, 100)
    (True, False)
    """

    epsilon: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_budget(self.epsilon))

    @property
    def lp_factor(self) -> float:
        """``e^min(eps, LP_EPSILON_CAP)``: the coefficient a design program multiplies its privacy rows by."""
        return math.exp(min(self.epsilon, LP_EPSILON_CAP))

    def exp_bounds(self, digits: int = 60) -> tuple[Fraction, Fraction]:
        """Rationals ``lo < e^eps < hi`` about ``10**-digits`` apart (relative), from correctly rounded decimals."""
        return exp_bounds(self.epsilon, digits)

    def admits(self, numerator: int, denominator: int) -> bool:
        """Whether the ratio of two non-negative integers is at most ``e^eps``, decided exactly."""
        return ratio_at_most_exp(numerator, denominator, self.epsilon)
