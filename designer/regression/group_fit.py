"""Regression with several designs in one survey and with non-compliance (docs/theory.md section 9.2).

Respondent ``i`` of group ``g`` contributes ``a_xi = M_g[x, E_i]`` to the likelihood of section 9, so several
designs only change which column of which mechanism each recorded answer is: the groups' mechanisms are stacked
(:func:`designer.estimation.groups.stack_mechanisms`) and each answer coded in its group's columns. Non-compliance
adds the
latent class of respondents who answer regardless as one more outcome of the multinomial logit: its log-odds
against the reference depend on the covariates like every other outcome's, so the non-compliant share varies
with them (a constant share is the model with an intercept only for that outcome's terms).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from ..estimation.groups import CHEATERS, Noncompliance, prevalence_bounds, share_record, stack_mechanisms
from ..exceptions import DesignerError, RegressionError
from ..mechanism import Mechanism
from ..vocabulary import NoncomplianceScope
from .data import answer_columns
from .likelihood import Likelihood

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["grouped_answers", "noncompliance_summary"]


def grouped_answers(mechanisms: Mapping[str, Mechanism], group: str | None, data: pd.DataFrame, answers_column: str,
                    rows: NDArray[np.int64], noncompliance: Any, words: Mapping[str, Sequence[str]] | None
                    ) -> tuple[Mechanism, NDArray[np.int64], Noncompliance | None]:
    """The stacked mechanism, every row's column in it, and the parsed non-compliance rule.

    Raises :class:`RegressionError` naming the row (0-based in the caller's data, via ``rows``) of an unknown
    group or answer.
    """
    rule = None if noncompliance is None else Noncompliance.parse(noncompliance)
    names = list(mechanisms)
    first = mechanisms[names[0]]
    if rule is not None and rule.scope is NoncomplianceScope.CARRIERS and (first.k != 2 or rule.answer not in
                                                                           first.inputs):
        raise RegressionError("carriers:ANSWER needs two inputs, ANSWER one of them (the carriers hold the other); "
                              f"the inputs are {list(first.inputs)}")
    if len(names) > 1 and group is None:
        raise RegressionError("several mechanisms need a group column naming each respondent's mechanism")
    try:
        stacked, offsets = stack_mechanisms(mechanisms, rule)
    except DesignerError as exc:
        raise RegressionError(str(exc)) from None
    labels = (data[group].astype(str).to_numpy(dtype=object) if group is not None
              else np.full(len(data), names[0], dtype=object))
    codes = np.zeros(len(data), dtype=np.int64)
    known = np.zeros(len(data), dtype=bool)
    for name, offset in zip(names, offsets):
        idx = np.flatnonzero(labels == name)
        known[idx] = True
        if idx.size:
            try:
                codes[idx] = offset + answer_columns(mechanisms[name], data[answers_column].to_numpy()[idx],
                                                     words=words)
            except RegressionError as exc:
                raise RegressionError(exc.reason, row=None if exc.row is None else int(rows[idx[exc.row]])) from None
    if not known.all():
        bad = int(np.flatnonzero(~known)[0])
        raise RegressionError(f"group {labels[bad]!r} in column {group!r} has no mechanism; the groups are {names}",
                              row=int(rows[bad]))
    return stacked, codes, rule


def _mean_probability(lik: Likelihood, params: NDArray[np.float64], x: int
                      ) -> tuple[float, NDArray[np.float64]]:
    """``mean_i p_xi`` and its gradient in the parameters (outcome-major blocks)."""
    z = lik.z
    p = lik.probabilities(params)
    grad = np.concatenate([np.asarray(z.T @ (p[x] * ((x == j) - p[j]))).ravel() / z.shape[0] for j in lik.others])
    return float(p[x].mean()), grad


def noncompliance_summary(lik: Likelihood, params: NDArray[np.float64], covariance: NDArray[np.float64],
                          outcomes: Sequence[str], rule: Noncompliance, level: float) -> dict[str, Any]:
    """The non-compliant share averaged over the respondents (of the carriers, or of everyone), with its
    delta-method standard error and Wald interval (NaN where the covariance has none)."""
    c_value, c_grad = _mean_probability(lik, params, list(outcomes).index(CHEATERS))
    if rule.scope is NoncomplianceScope.CARRIERS:
        trait = next(x for x in outcomes[:2] if x != rule.answer)
        t_value, t_grad = _mean_probability(lik, params, list(outcomes).index(trait))
        carriers = t_value + c_value
        share = c_value / carriers if carriers > 0 else math.nan
        grad = (c_grad * carriers - c_value * (t_grad + c_grad)) / carriers**2 if carriers > 0 else c_grad * math.nan
    else:
        share, grad = c_value, c_grad
    with np.errstate(invalid="ignore"):
        variance = float(grad @ covariance @ grad)
    record = share_record(rule, share, math.sqrt(variance) if variance >= 0 else math.nan, level, model="classes")
    if rule.scope is NoncomplianceScope.EVERYONE:  # each input's prevalence: its holders, then every cheater too
        inputs = tuple(x for x in outcomes if x != CHEATERS)
        parts = [_mean_probability(lik, params, list(outcomes).index(x)) for x in inputs]
        low = np.array([v for v, _ in parts])
        grad_low = np.array([g for _, g in parts])
        finite = covariance if np.all(np.isfinite(covariance)) else None
        record["bounds"] = prevalence_bounds(inputs, low, low + c_value, grad_low, grad_low + c_grad[None, :],
                                             finite, level).records()
    return record
