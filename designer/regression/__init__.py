"""Regression on randomized answers: who holds the trait, with covariates, from set-valued responses.

:func:`regress` fits a (multinomial) logistic regression of the true answer on covariates from the answers a
mechanism recorded; :func:`sensitivity` gives the range of the coefficients over credal members under WLDP.
The model and its derivatives: ``docs/theory.md`` section 9.
"""

from .model import DEFAULT_MEMBERS, RegressionError, RegressionResult, answer_columns, regress, sensitivity

__all__ = ["DEFAULT_MEMBERS", "RegressionError", "RegressionResult", "answer_columns", "regress", "sensitivity"]
