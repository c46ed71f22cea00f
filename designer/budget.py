"""The privacy budget as one value: checked once where it enters, then read either as the coefficient
``e^eps`` of a design program (capped, docs/theory.md section 6.2) or as exact rational bounds on ``e^eps``
for a certificate (section 7). Def 3.1 and Def 3.13 state the budget; this module only carries it.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from fractions import Fraction

from ._internal.exact import exp_bounds, ratio_at_most_exp
from .exceptions import InvalidArgumentError

__all__ = ["BUDGET_RULE", "LP_EPSILON_CAP", "Budget", "check_budget"]

#: The rule every budget meets, as messages state it.
BUDGET_RULE = "a finite number > 0"

#: Budgets above this are solved at this budget (e^30 ~ 1e13 is the largest coefficient HiGHS handles
#: reliably); a mechanism within 30 nats is within any larger budget, and what it gives up is below
#: the objective's tolerance for every bundled problem (docs/theory.md, section 6.2).
LP_EPSILON_CAP = 30.0


def check_budget(value: object, name: str = "epsilon") -> float:
    """The one rule for a privacy budget (Def 3.1, Def 3.13): a real number (not a bool), finite and > 0.

    Every budget that enters designer passes here: :class:`Budget`, a problem's ``epsilon``
    (:class:`designer.DesignProblem`, a problem file), the ``--epsilon`` flag (``designer.cli._common.epsilon_arg``)
    and the library's functions taking ``eps`` (``designer._internal.validation.check_epsilon``).

    Parameters
    ----------
    value : object
        The budget as given (nats).
    name : str, default "epsilon"
        What the message calls it.

    Returns
    -------
    float
        ``value`` as a float.

    Raises
    ------
    InvalidArgumentError
        ``"{name} must be a finite number > 0, got {value}"`` (:data:`BUDGET_RULE`; an integer too large for a
        float is described by its number of digits).

    Examples
    --------
    >>> from designer.budget import check_budget
    >>> check_budget(2)
    2.0
    >>> check_budget(float("inf"))
    Traceback (most recent call last):
    ...
    designer.exceptions.InvalidArgumentError: epsilon must be a finite number > 0, got inf
    """
    try:
        x = float(value) if isinstance(value, numbers.Real) and not isinstance(value, bool) else math.nan
    except OverflowError:  # an integer beyond the floats
        x = math.inf
    if not math.isfinite(x) or x <= 0:
        shown = _shown(value)
        raise InvalidArgumentError(f"{name} must be {BUDGET_RULE}, got {shown}")
    return x


def _shown(value: object) -> str:
    """A refused budget as the message shows it: a number as written (``0``, ``-0.5``, ``inf``, never
    ``np.float64(...)``), an integer beyond the floats by its digits, anything else by its ``repr``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return repr(value)
    if isinstance(value, numbers.Integral):
        text = str(int(value))
        return f"an integer of {len(text.lstrip('-'))} digits" if len(text) > 300 else text
    return repr(float(value))


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
