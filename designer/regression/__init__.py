"""Regression on randomized answers: who holds the trait, with covariates, from set-valued responses.

:func:`regress` fits a (multinomial) logistic regression of the true answer on covariates from the answers a
mechanism recorded; :func:`sensitivity` gives the range of the coefficients over credal members under WLDP. Both
read a DataFrame; :func:`designer.regress` (the front door) also reads files of any size and returns a
:class:`RegressionResult` or a :class:`SensitivityResult`. The model and its derivatives: ``docs/theory.md``
section 9.
"""

from .model import DEFAULT_MEMBERS, RegressionError, RegressionResult, answer_columns, regress, sensitivity
from .sensitivity_result import SensitivityResult

__all__ = ["DEFAULT_MEMBERS", "RegressionError", "RegressionResult", "SensitivityResult", "answer_columns", "regress",
           "sensitivity"]
