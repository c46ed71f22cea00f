"""Regression on randomized answers: who holds the trait, with covariates, from set-valued responses.

The true answer ``X`` of a respondent with covariates ``z`` (a row of the design matrix, intercept
included) follows a multinomial logit with a reference input ``r``::

    P(X = x | z) = exp(z b_x) / sum_y exp(z b_y),     b_r = 0,

(a logistic regression when there are two inputs). The analyst records ``E``, the mechanism's randomized
answer, so the likelihood of one respondent is the mixture ``sum_x M[x, E] P(x | z)`` (Def 3.1: the
mechanism's row of ``x`` is the distribution of the recorded answer given the truth). This is the model of
randomized-response regression (R's ``rr`` / ``RRreg``), extended to set-valued answers and to any designed
mechanism. ``docs/theory.md`` section 9 derives the score and the observed information used here.

Two fitting methods reach the same maximum: ``"newton"`` (a trust-region Newton method on the analytic
gradient and Hessian, through statsmodels' likelihood machinery, the default) and ``"em"`` (EM, each M-step
a weighted multinomial logit solved by Newton steps; slower near the optimum, kept as the reference).

Under WLDP the analyst sees precise answers drawn from an unknown member of each row's credal set (Def 3.13);
the coefficients are then not identified, and :func:`sensitivity` reports their range over named members.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from .._internal.validation import check_real
from ..estimation.groups import Noncompliance, stacking_constant
from ..exceptions import InvalidArgumentError, RegressionError
from ..mechanism import Mechanism
from ..vocabulary import Covariance, NoncomplianceScope, Semantics
from .constant_share import regress_share
from .data import answer_columns, check_missing, prepare, rewrite_formula, split_formula
from .design import column_norms, design_matrix, weighted_gram
from .firth_multinomial import MultinomialFirthPenalty
from .fit_result import RegressionResult, _shares, _start, answer_counts, fit_statistics, judge
from .fit_terms import design_plan, in_covariates
from .flat import LimitSearch
from .group_fit import grouped_answers, noncompliance_summary
from .identify import DesignPlan
from .likelihood import FirthPenalty, Likelihood, fit_em, fit_firth_best, fit_newton, or_start
from .modes import higher_mode
from .variance import covariance, on_terms, survey_design

if TYPE_CHECKING:
    import pandas as pd

    from .plain_table import PlainTable

__all__ = ["RegressionError", "RegressionResult", "answer_columns", "regress", "sensitivity"]

#: Members of the credal sets :func:`sensitivity` tries by default: uniform split, then lambda on a grid.
DEFAULT_MEMBERS: tuple[str | float, ...] = ("uniform", 0.0, 0.25, 0.5, 0.75, 1.0)


def regress(formula: str, data: pd.DataFrame | PlainTable, mechanism: Mechanism | Mapping[str, Mechanism], *,
            reference: str | None = None,
            semantics: str = "sldp", allocation: str | float = "uniform", method: str = "newton",
            level: float = 0.95, answers: Mapping[str, Sequence[str]] | None = None,
            missing: str = "error", penalty: str | None = None, weights: str | None = None,
            weight_kind: str = "sampling", cluster: str | None = None, cov: str | None = None,
            group: str | None = None, noncompliance: str | None = None, noncompliance_model: str = "constant",
            unrelated: str | None = None, share_groups: Sequence[str] | None = None) -> RegressionResult:
    """Fit a (multinomial) logistic regression of the true answer on covariates from randomized answers.

    Parameters
    ----------
    formula : str
        ``"response ~ x1 + x2"`` (patsy syntax; ``np`` is available, e.g. ``np.log(age)``). The left side
        names the column of recorded answers, as :func:`designer.estimation.sampling.randomize` writes them.
    data : pandas.DataFrame
        One row per respondent.
    mechanism : Mechanism or mapping of str to Mechanism
        The ``(k, F)`` mechanism that produced the answers (Def 3.1); several designs in one survey: one per
        value of the ``group`` column (docs/theory.md section 9.2).
    reference : str, optional
        The input whose log-odds are 0 (default: the last input, e.g. ``no``).
    semantics : {"sldp", "wldp"}
        ``sldp``: answers are focal sets. ``wldp``: answers are precise frame labels drawn from the member of
        the credal sets named by ``allocation`` (``"uniform"`` or lambda in [0, 1]); see :func:`sensitivity`.
    method : {"newton", "em"}
    level : float
        Level of the Wald intervals.
    answers : mapping of str to sequence of str, optional
        Words the answers column may hold for a focal set besides the default spellings (an ``[answers]``
        table: word -> frame labels); see :func:`answer_columns`.
    missing : {"error", "drop"}
        A row missing a value of the formula's variables is an error naming it, or is dropped (R's
        ``na.omit``; counted in ``RegressionResult.dropped``). See :mod:`designer.regression.data` for the
        formula conventions (dotted column names, ``I(x^2)``, text in a numeric column).
    penalty : {None, "firth"}
        ``"firth"``: maximise ``loglik + 1/2 log det I`` (Firth 1993; ``I`` the expected information of the
        randomized answers; any number of inputs, no sampling weights), whose maximum exists even under
        separation. Intervals are Wald
        intervals from the observed information at the penalized estimate.
    weights : str, optional
        Column of positive row weights; ``weight_kind`` says what they mean: ``"sampling"`` (default; inverse
        inclusion probabilities: the weighted pseudo-likelihood, with a sandwich variance) or ``"frequency"``
        (a row stands for that many respondents: exactly the fit of the replicated rows).
    cluster : str, optional
        Column naming each row's cluster (school, interviewer, household): a cluster-robust variance.
    cov : {None, "oim", "opg", "robust"}
        Standard errors from the observed information (default), the outer product of the scores (rr's), or
        the sandwich (default and only choice under sampling weights or clusters). docs/theory.md section 9.1.
    group : str, optional
        Column naming each row's mechanism (a key of ``mechanism``).
    noncompliance : str, optional
        ``"carriers:ANSWER"`` or ``"everyone:ANSWER"``: respondents who answer regardless form one more outcome,
        respondents who answer regardless, estimated from two or more groups; see ``noncompliance_model``.
    noncompliance_model : {"constant", "classes"}
        ``"constant"`` (default; RRreg's ``RRlog`` model): the prevalence follows the logit on the covariates and
        the share who answer regardless is one constant, reported in :attr:`RegressionResult.noncompliance`
        (docs/theory.md section 9.4). ``"classes"``: those respondents form one more outcome of the multinomial
        logit, with its own coefficients, and the share reported is averaged over the respondents (section 9.2).
    unrelated : str, optional
        ANSWER: the unrelated-question design with an unknown prevalence. Each group's mechanism is
        ``p I + (1 - p) 1 f'`` (the file's ``f`` is ignored): the respondents sent to the unrelated question say
        ANSWER with an unknown probability, one constant estimated with the coefficients from two or more groups
        with different ``p`` (section 9.4); :attr:`RegressionResult.noncompliance` reports it with scope
        ``unrelated``.
    share_groups : sequence of str, optional
        The groups the constant unknown share applies to (default: all). RRreg's convention for a group asked
        directly is to leave it out: its answers are taken as given.

    Returns
    -------
    RegressionResult
        Its ``mechanism_label`` is empty: :func:`designer.regress` (the front door, which also reads files) names
        the mechanism files there.

    Examples
    --------
    2000 respondents whose log-odds of yes are ``-2 + 0.03 age``, their answers drawn through Warner's design at eps
    = 1:

    >>> import numpy as np, pandas as pd
    >>> import designer
    >>> from designer import regression
    >>> rng = np.random.default_rng(0)
    >>> age = rng.integers(18, 80, 2000)
    >>> truth = np.where(rng.random(2000) < 1 / (1 + np.exp(2 - 0.03 * age)), "yes", "no")
    >>> people = pd.DataFrame({"answer": truth, "age": age})
    >>> warner = designer.Q_WRR(1.0)
    >>> drawn = designer.randomize(people, warner, column="answer", keep="age", seed=1, simulation=True)
    >>> fit = regression.regress("response ~ age", drawn.frame, warner)
    >>> str(fit.status), fit.params.round(3).tolist()
    ('converged', [-2.65, 0.04])
    """
    from ..estimation.sampling import precise_distributions
    from .plain_table import PlainTable

    level = check_real(level, "level", low=0.0, high=1.0, low_open=True, high_open=True)
    method = method.strip().lower() if isinstance(method, str) else method
    penalty = penalty.strip().lower() if isinstance(penalty, str) else penalty
    if method not in ("newton", "em"):
        raise RegressionError(f"method must be 'newton' or 'em', got {method!r}")
    try:
        semantics = Semantics.parse(semantics, "semantics").value  # as DesignProblem reads it: case ignored
    except InvalidArgumentError:
        semantics = str(semantics)
    if semantics not in ("sldp", "wldp"):
        raise RegressionError(f"semantics must be 'sldp' or 'wldp' (case ignored), got {semantics!r}")
    plain = isinstance(data, PlainTable)  # a small CSV file read without pandas (designer.regression.plain_table)
    if not plain:
        import pandas as pd

        if not isinstance(data, pd.DataFrame) or len(data) == 0:
            raise RegressionError("data must be a non-empty pandas DataFrame (one row per respondent)")
    share_rule = _share_rule(noncompliance, noncompliance_model, unrelated, penalty, method)
    grouped = not isinstance(mechanism, Mechanism) or noncompliance is not None or share_rule is not None
    mechanisms = {"": mechanism} if isinstance(mechanism, Mechanism) else dict(mechanism)
    if grouped and semantics == "wldp":
        raise RegressionError("several mechanisms and non-compliance apply to set answers (semantics 'sldp')")
    base = next(iter(mechanisms.values()))
    reference = base.inputs[-1] if reference is None else str(reference)
    if reference not in base.inputs:
        raise RegressionError(f"reference {reference!r} is not an input of the mechanism {list(base.inputs)}")
    columns = [str(c) for c in data.columns]
    lhs, rhs = split_formula(formula, columns)
    precise = semantics == "wldp"
    n_rows = len(data)
    if plain:  # complete, and every column typed beyond doubt: nothing to drop or check
        if grouped or weights is not None or cluster is not None or group is not None:
            raise RegressionError("a PlainTable is fitted with one mechanism, without weights, clusters or groups")
        check_missing(missing)
        recorded = np.asarray(data[lhs])  # the table's columns are read here, once: the answers, then the design's
        rows, rhs = np.arange(n_rows), rewrite_formula(rhs, columns)
    else:
        data, rhs, rows = prepare(rhs, lhs, data, missing,
                                  extra=[c for c in (weights, cluster, group) if c is not None])
    survey = survey_design(data, rows, weights=weights, weight_kind=weight_kind, cluster=cluster, cov=cov)
    rule = None
    row_counts = survey.weights if survey.frequency else None  # a row of weight f is f rows
    if share_rule is not None:
        _, codes, _ = grouped_answers(mechanisms, group, data, lhs, rows, None, answers)
        z, names, design_info = design_matrix(rhs, data)
        plan, std, u = design_plan(z, names, row_counts, None)
        kept = list(plan.kept)
        result = regress_share(_columns(u, kept), [names[j] for j in kept], codes, mechanisms, share_rule, reference,
                               survey, level, share_groups)
        result = in_covariates(result, std, plan, names, [x for x in base.inputs if x != reference])
        return dataclasses.replace(result, method=method, reference=reference,
                                   outcomes=tuple(base.inputs), semantics=semantics, formula=formula,
                                   design_info=design_info, dropped=n_rows - len(data), variance=survey.describe(),
                                   **_survey_fields(weights, weight_kind, cluster, group))
    if grouped:
        mechanism, codes, rule = grouped_answers(mechanisms, group, data, lhs, rows, noncompliance, answers)
        channel = mechanism.matrix
    else:
        assert isinstance(mechanism, Mechanism)
        channel = precise_distributions(mechanism, allocation) if precise else mechanism.matrix
        try:
            codes = answer_columns(mechanism, recorded if plain else np.asarray(data[lhs]), precise=precise,
                                   words=answers)
        except RegressionError as exc:
            raise RegressionError(exc.reason, row=None if exc.row is None else int(rows[exc.row])) from None
    z, names, design_info = design_matrix(rhs, data)
    if penalty not in (None, "firth"):
        raise RegressionError(f"penalty must be None or 'firth', got {penalty!r}")
    if penalty == "firth" and survey.weights is not None and not survey.frequency:
        raise RegressionError("--penalty firth is implemented without sampling weights (frequency weights are "
                              "fine): the penalized pseudo-likelihood has no Firth correction")
    ref = mechanism.inputs.index(reference)
    outcomes = [x for x in mechanism.inputs if x != reference]
    plan, std, u = design_plan(z, names, row_counts, channel[:, codes])
    groups = _answer_groups(mechanisms, mechanism, codes) if grouped and penalty == "firth" else None
    plan, lik, params, iterations, _, fit, shown = _fit_kept(
        u, names, plan, channel, codes, ref, survey, row_counts, method=method, penalty=penalty, groups=groups,
        inputs=list(mechanism.inputs), reference=reference)
    kept_names = [names[j] for j in plan.kept]
    full, cov_warning = covariance(survey, fit, lik, params)
    cov_matrix = on_terms(full, fit)
    result = fit_statistics(params, cov_matrix, kept_names, outcomes, level, shown, loglik=lik.loglike(params),
                            null_loglik=_shares(channel, codes, lik.weights)[1], k=lik.k,
                            n=survey.respondents(len(codes)), sandwich=survey.cov is Covariance.ROBUST)
    if grouped:  # the stacked columns carry 1/G: the groups' own log-likelihood adds n log G back
        shift = stacking_constant(float(survey.weights.sum()) if survey.weights is not None else len(codes),
                                  len(mechanisms))
        result = dataclasses.replace(result, loglik=result.loglik + shift, aic=result.aic - 2 * shift,
                                     bic=result.bic - 2 * shift,
                                     noncompliance=None if rule is None else noncompliance_summary(
                                         lik, params, cov_matrix, list(mechanism.inputs), rule, level))
    result = dataclasses.replace(result, status=fit.status,
                                 warnings=fit.warnings + ((cov_warning,) if cov_warning else ()))
    search = None
    if penalty is None and (survey.weights is None or survey.frequency):  # a likelihood, not a pseudo-likelihood
        inverse = fit.spectrum.inverse() if fit.spectrum is not None else np.asarray(fit.covariance)
        search = LimitSearch(lik, params, inverse)
    result = in_covariates(result, std, plan, names, outcomes, diagnosis=fit, variance=full, search=search)
    converged = result.status == "converged"
    # statsmodels keeps a dense copy of the design: not for a sparse one (many-level categoricals), nor for a fit
    # without some of its terms
    sm_result = None
    if not sp.issparse(z) and not plan.dropped:
        labels = [f"{o}:{t}" if len(outcomes) > 1 else t for o in outcomes for t in names]
        raw = Likelihood(z, channel[:, codes], ref, survey.weights)
        sm_result = functools.partial(_statsmodels_results, raw, codes, result.params, labels, lhs, iterations,
                                      converged)
    return dataclasses.replace(
        result, converged=converged, iterations=iterations, method=method, reference=reference,
        outcomes=tuple(mechanism.inputs), semantics=semantics, formula=formula, design_info=design_info,
        statsmodels_factory=sm_result, dropped=n_rows - len(data), penalty=penalty, variance=survey.describe(),
        **_survey_fields(weights, weight_kind, cluster, group))


def _columns(u: Any, kept: list[int]) -> Any:
    """The kept columns of a dense or sparse design."""
    return u[:, kept].tocsr() if sp.issparse(u) else np.ascontiguousarray(u[:, kept])


#: Refits after a fit finds a direction along which the log-likelihood is flat (its last term dropped each time).
ALIAS_REFITS = 3


def _fit_kept(u: Any, names: list[str], plan: DesignPlan, channel: NDArray[np.float64], codes: NDArray[np.int64],
              ref: int, survey: Any, row_counts: NDArray[np.float64] | None, *, method: str, penalty: str | None,
              groups: Any, inputs: list[str], reference: str) -> tuple[Any, ...]:
    """Fit the kept standardized columns and judge the fit there; a term along which the fitted log-likelihood turns
    out flat is dropped like an aliased column and the rest refitted (R's ``glm``). Returns the plan (with those
    terms dropped), the likelihood, the estimate, iterations, whether the decrement test passed, the diagnosis and
    the estimates as shown. ``row_counts``: the survey's frequency weights (None: a row is one respondent)."""
    counts = None
    plan_now = plan
    for _ in range(ALIAS_REFITS + 1):
        kept = list(plan_now.kept)
        ufit = _columns(u, kept)
        lik = Likelihood(ufit, channel[:, codes], ref, survey.weights)
        counts = answer_counts(channel, codes, survey.weights) if counts is None else counts  # for the verdict
        start = _start(lik, channel, codes)
        objective: Callable[[NDArray[np.float64]], float] = lik.loglike
        if penalty == "firth":
            kind = FirthPenalty if lik.k == 2 else MultinomialFirthPenalty  # the binary one: logistf's, closed form
            firth = kind(lik, channel, groups=groups)
            plain = fit_newton(lik, start)[0]  # another start: the penalized maximum may not be the nearest
            found = fit_firth_best(lik, firth, start, more=(plain,))

            def penalized(b: NDArray[np.float64], lik: Likelihood = lik, firth: Any = firth) -> float:
                return lik.loglike(b) + firth.value(b)
            objective = penalized
        else:
            maximise = or_start(fit_newton if method == "newton" else fit_em)
            found = higher_mode(lik, maximise(lik, start), maximise)  # not concave: the highest mode found
        params, iterations, decrement_ok = found
        fit, shown = judge(objective, params, -lik.hessian(params), decrement_ok, column_norms(ufit, row_counts),
                           channel, inputs, reference, [names[j] for j in kept],
                           gram=weighted_gram(ufit, np.ones(ufit.shape[0]) if row_counts is None else row_counts),
                           counts=counts)
        flat = sorted({kept[j % len(kept)] for j in fit.aliased} - set(plan_now.dropped))
        if not flat or len(flat) >= len(kept):
            break
        plan_now = dataclasses.replace(plan_now, kept=tuple(j for j in kept if j not in flat),
                                       answer_aliased=tuple(sorted(plan_now.answer_aliased + tuple(flat))),
                                       warnings=(*plan_now.warnings, "not identified: " + ", ".join(
                                           repr(names[j]) for j in flat) + " along a direction in which the "
                                           "log-likelihood is flat: dropped, no estimate"))
    return plan_now, lik, params, iterations, decrement_ok, fit, shown


def _survey_fields(weights: str | None, weight_kind: Any, cluster: str | None, group: str | None) -> dict[str, Any]:
    """The survey's columns as a result reports them."""
    return {"weights": weights, "weight_kind": str(getattr(weight_kind, "value", weight_kind)), "cluster": cluster,
            "group": group}


def _answer_groups(mechanisms: Mapping[str, Mechanism], stacked: Mechanism, codes: NDArray[np.int64]
                   ) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """The group of every respondent ``(n,)`` and of every stacked column ``(F,)``: the groups' frames are
    concatenated in order, so a column belongs to the group whose labels its focal set uses."""
    ends = np.cumsum([len(m.frame) for m in mechanisms.values()])
    lowest = np.array([int(mask & -mask).bit_length() - 1 for mask in stacked.focal])
    columns = np.searchsorted(ends, lowest, side="right").astype(np.int64)
    return columns[codes], columns


def _share_rule(noncompliance: str | None, model: str, unrelated: str | None, penalty: str | None, method: str
                ) -> Noncompliance | None:
    """The one constant unknown share asked for (None: none, or non-compliance as an outcome of its own)."""
    model = str(model).strip().lower()
    if model not in ("constant", "classes"):
        raise RegressionError(f"noncompliance_model must be 'constant' or 'classes', got {model!r}")
    if unrelated is not None and noncompliance is not None:
        raise RegressionError("unrelated and noncompliance are two models of the design's one unknown share; give one")
    if unrelated is not None:
        if not str(unrelated).strip():
            raise RegressionError("unrelated must name the answer the unrelated question's holders give")
        rule = Noncompliance(NoncomplianceScope.UNRELATED, str(unrelated).strip())
    elif noncompliance is not None and model == "constant":
        try:
            rule = Noncompliance.parse(noncompliance)
        except InvalidArgumentError as exc:
            raise RegressionError(str(exc)) from None
    else:
        return None
    if penalty is not None or method != "newton":
        raise RegressionError("a constant unknown share is fitted by Newton's method without a penalty")
    return rule


def _statsmodels_results(lik: Likelihood, codes: NDArray[np.int64], params: NDArray[np.float64], labels: list[str],
                         answers: str, iterations: int, converged: bool) -> Any:
    """statsmodels' results object at ``params`` (its ``summary()``, ``bse``, ``conf_int()`` ...)."""
    import warnings

    from statsmodels.base.model import GenericLikelihoodModel

    class RandomizedResponseLogit(GenericLikelihoodModel):
        def loglike(self, params: NDArray[np.float64]) -> float:
            return lik.loglike(params)

        def score(self, params: NDArray[np.float64]) -> NDArray[np.float64]:
            return lik.score(params)

        def hessian(self, params: NDArray[np.float64]) -> NDArray[np.float64]:
            return lik.hessian(params)

    model = RandomizedResponseLogit(codes.astype(np.float64), lik.z)
    model.data.xnames = labels
    model.data.ynames = answers
    model.exog_names[:] = labels
    model.nparams = len(labels)
    model.df_model = len(labels) - (lik.k - 1)
    model.df_resid = len(codes) - len(labels)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            res = model.fit(start_params=params, method="newton", maxiter=0, disp=0)  # results at params, no step
        except np.linalg.LinAlgError:  # statsmodels inverts the Hessian, exactly singular at a separated iterate
            return None
    res.mle_retvals.update(iterations=iterations, converged=converged, warnflag=0 if converged else 1)
    return res


def sensitivity(formula: str, data: pd.DataFrame, mechanism: Mechanism, *,
                members: tuple[str | float, ...] = DEFAULT_MEMBERS, reference: str | None = None,
                level: float = 0.95, answers: Mapping[str, Sequence[str]] | None = None,
                missing: str = "error") -> pd.DataFrame:
    """Under WLDP, the range of every coefficient over named members of the credal sets.

    A precise answer under WLDP comes from some member of the row's credal set (Def 3.13), which the analyst
    does not know; different members give different likelihoods, so the coefficients are only set-identified.
    Each member in ``members`` (``"uniform"`` or lambda in [0, 1]: the truth gets lambda of every set that
    holds it) is fitted; the table gives, per ``(outcome, term)``, the estimate of each member and the
    ``low`` / ``high`` over them, plus the widest Wald interval (``ci_low``, ``ci_high``); ``attrs`` holds
    ``n`` (respondents fitted) and ``dropped`` (rows dropped for a missing value).

    Examples
    --------
    2000 respondents whose log-odds of yes are ``-2 + 0.03 age``, their answers drawn through ``Q_2x3(0.6, 0.2)`` as
    precise answers (each don't-know answer resolved to yes or no at random):

    >>> import numpy as np, pandas as pd
    >>> import designer
    >>> from designer import regression
    >>> rng = np.random.default_rng(0)
    >>> age = rng.integers(18, 80, 2000)
    >>> truth = np.where(rng.random(2000) < 1 / (1 + np.exp(2 - 0.03 * age)), "yes", "no")
    >>> people = pd.DataFrame({"answer": truth, "age": age})
    >>> q = designer.Q_2x3(0.6, 0.2)
    >>> drawn = designer.randomize(people, q, column="answer", keep="age", seed=1, simulation=True, semantics="wldp",
    ...                            allocation=0.5)

    The analyst does not know how each "don't know" was resolved: the slope over the named members of the credal sets
    (the last two columns: its smallest and largest value over them):

    >>> ranges = regression.sensitivity("response ~ age", drawn.frame, q)
    >>> ranges[["term", "estimate[0.5]", "low", "high"]].round(3).values.tolist()
    [['Intercept', -2.53, -6.732, -1.533], ['age', 0.038, 0.023, 0.101]]
    """
    import pandas as pd

    fits = {str(m): regress(formula, data, mechanism, reference=reference, semantics="wldp", allocation=m,
                            level=level, answers=answers, missing=missing) for m in members}
    first = next(iter(fits.values())).coefficients[["outcome", "term"]].copy()
    for name, fit in fits.items():
        first[f"estimate[{name}]"] = fit.coefficients["estimate"].to_numpy()
    est = first[[c for c in first.columns if c.startswith("estimate[")]].to_numpy()
    first["low"], first["high"] = est.min(axis=1), est.max(axis=1)
    first["ci_low"] = np.min([f.coefficients["ci_low"].to_numpy() for f in fits.values()], axis=0)
    first["ci_high"] = np.max([f.coefficients["ci_high"].to_numpy() for f in fits.values()], axis=0)
    out = pd.DataFrame(first)
    fit = next(iter(fits.values()))
    out.attrs.update(n=fit.n, dropped=fit.dropped)  # respondents fitted, rows dropped (missing="drop")
    return out
