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
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from .._numeric import wald_interval
from .._validation import check_real
from ..exceptions import InvalidArgumentError, RegressionError
from ..identification import indistinguishable_inputs
from ..mechanism import Mechanism
from ..vocabulary import Covariance, Semantics
from .data import answer_columns, prepare, split_formula
from .design import build_rows, column_norms, constant_columns, dependent_column, design_info
from .groups import grouped_answers, noncompliance_summary
from .likelihood import FirthPenalty, Likelihood, fit_em, fit_firth, fit_newton
from .status import design_blind, diagnose
from .variance import covariance, survey_design

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["RegressionError", "RegressionResult", "answer_columns", "regress", "sensitivity"]

#: Members of the credal sets :func:`sensitivity` tries by default: uniform split, then lambda on a grid.
DEFAULT_MEMBERS: tuple[str | float, ...] = ("uniform", 0.0, 0.25, 0.5, 0.75, 1.0)


def _shares(channel: NDArray[np.float64], codes: NDArray[np.int64], weights: NDArray[np.float64] | None = None
            ) -> tuple[NDArray[np.float64], float]:
    """The intercept-only model: the shares' MLE from the (weighted) answer counts, and its log-likelihood."""
    from ..mle import mle_newton

    counts = np.bincount(codes, weights=weights, minlength=channel.shape[1]).astype(np.float64)
    shares = mle_newton(channel, counts)[0]
    q = shares @ channel
    used = counts > 0
    return shares, float(counts[used] @ np.log(q[used]))


def _start(lik: Likelihood, channel: NDArray[np.float64], codes: NDArray[np.int64]) -> NDArray[np.float64]:
    """Intercept-only start: log-odds of the shares' MLE (EM on the counts), slopes 0."""
    shares = np.clip(_shares(channel, codes, lik.weights)[0], 1e-4, None)
    start = np.zeros((lik.z.shape[1], lik.k - 1))
    intercept = constant_columns(lik.z)
    if intercept.size:
        start[intercept[0]] = np.log(shares[lik.others] / shares[lik.reference])
    return start.ravel(order="F")


@dataclass(frozen=True)
class RegressionResult:
    """A fitted randomized-response regression.

    Attributes
    ----------
    coefficients : pandas.DataFrame
        One row per (outcome, term): ``outcome`` (the input whose log-odds against ``reference`` the row
        describes), ``term``, ``estimate``, ``stderr`` (observed information), ``z``, ``pvalue``, ``ci_low``,
        ``ci_high`` (Wald, at ``level``).
    n : int
        Respondents.
    loglik, aic, bic : float
        Log-likelihood (natural log) at the estimate, and the information criteria.
    lr_statistic, lr_df, lr_pvalue : float, int, float
        Likelihood-ratio test against the intercept-only model.
    converged : bool
        ``status == "converged"``: the maximum was reached and the information is well conditioned.
    iterations : int
    method, reference, semantics : str
    level : float
    statsmodels : statsmodels results object
        statsmodels' ``GenericLikelihoodModelResults`` at the estimate: ``summary()``, ``bse``, ``conf_int()``;
        None when the design is sparse (many-level categoricals: statsmodels would hold a dense copy of it).
    dropped : int
        Rows left out for a missing value of the formula's variables (``missing="drop"``).
    status : str
        ``converged``, ``separation``, ``not_converged`` or ``not_identified`` (:mod:`designer.regression.status`):
        diverging terms have estimate ``+-inf``, and a term without a well-conditioned information has
        ``NaN`` standard error, z, p and interval.
    warnings : tuple of str
        What went wrong, naming the terms, and what to do.
    penalty : str or None
        ``"firth"`` when the fit maximised Firth's penalized likelihood.
    variance : str
        How the standard errors were computed (observed information, rr's outer product of the scores, robust
        or cluster-robust sandwich, and the kind of weights), in words.
    noncompliance : dict or None
        With non-compliance: ``scope``, ``answer``, ``share`` (averaged over the respondents), ``stderr``,
        ``ci_low``, ``ci_high``.
    """

    coefficients: pd.DataFrame
    n: int
    loglik: float
    aic: float
    bic: float
    lr_statistic: float
    lr_df: int
    lr_pvalue: float
    converged: bool
    iterations: int
    method: str
    reference: str
    outcomes: tuple[str, ...]
    semantics: str
    level: float
    params: NDArray[np.float64]
    covariance: NDArray[np.float64]
    formula: str
    design_info: Any
    statsmodels: Any
    dropped: int = 0
    status: str = "converged"
    warnings: tuple[str, ...] = ()
    penalty: str | None = None
    variance: str = "observed information"
    noncompliance: dict[str, Any] | None = None

    def summary(self) -> Any:
        """statsmodels' summary table of the fit."""
        return self.statsmodels.summary(title=f"Randomized-response regression ({self.formula})")

    def predict(self, data: pd.DataFrame) -> pd.DataFrame:
        """``P(X = x | z)`` of every row of ``data`` (columns: the inputs), shape ``(n, k)``."""
        import pandas as pd

        z = _covariates(self.design_info, data)
        probs = Likelihood(z, np.ones((len(self.outcomes), z.shape[0])), self.outcomes.index(self.reference)
                            ).probabilities(self.params)
        return pd.DataFrame(probs.T, columns=list(self.outcomes), index=data.index)

    def prevalence(self, data: pd.DataFrame, by: str | None = None) -> pd.DataFrame:
        """Predicted prevalence of each input, averaged over ``data`` (per group of column ``by``), with a
        delta-method standard error and Wald interval at ``level``. Columns: ``group`` (sorted; rows without a
        group are left out), ``outcome``, ``estimate``, ``stderr``, ``ci_low``, ``ci_high``."""
        import pandas as pd
        z_all = _covariates(self.design_info, data)
        reference = self.outcomes.index(self.reference)
        levels = [] if by is None else pd.Series(pd.unique(data[by].dropna())).sort_values().tolist()
        groups = [(None, np.arange(len(data)))] if by is None else [
            (g, np.flatnonzero((data[by] == g).to_numpy())) for g in levels]
        rows = []
        for g, idx in groups:
            z = z_all[idx]
            lik = Likelihood(z, np.ones((len(self.outcomes), z.shape[0])), reference)
            p = lik.probabilities(self.params)
            for x, label in enumerate(self.outcomes):
                # d mean_i p_xi / d beta_j = mean_i p_xi ([x = j] - p_ji) z_i
                grad = np.concatenate([z.T @ (p[x] * ((x == j) - p[j])) / z.shape[0] for j in lik.others])
                se = float(np.sqrt(max(grad @ self.covariance @ grad, 0.0)))
                rows.append({"group": "all" if g is None else g, "outcome": label, "estimate": float(p[x].mean()),
                             "stderr": se})
        table = pd.DataFrame(rows, columns=["group", "outcome", "estimate", "stderr"])
        table["ci_low"], table["ci_high"] = wald_interval(table["estimate"].to_numpy(), table["stderr"].to_numpy(),
                                                          self.level, low=0.0, high=1.0)
        return table


def _covariates(design_info: Any, data: pd.DataFrame) -> NDArray[np.float64]:
    import patsy

    try:
        return build_rows(design_info, data)
    except patsy.PatsyError as exc:
        raise RegressionError(f"cannot build the covariates: {_first_line(exc)}") from None


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def _design_matrix(rhs: str, data: pd.DataFrame) -> tuple[Any, list[str], Any]:
    """The covariates through patsy, with one-line errors naming the column or row at fault."""
    import patsy

    columns = [str(c) for c in data.columns]
    for name in sorted(set(re.findall(r"[A-Za-z_][A-Za-z0-9_.]*", rhs)) & set(columns)):
        missing = np.flatnonzero(data[name].isna().to_numpy())
        if missing.size:
            raise RegressionError(f"column {name!r} is missing at row {int(missing[0]) + 1} ({missing.size} row(s)): "
                                  "fill or drop those rows")
    env = patsy.EvalEnvironment([{"np": np}])
    try:
        info = design_info(rhs, data, env)
        z = build_rows(info, data)
    except patsy.PatsyError as exc:
        unknown = re.search(r"name '([^']+)' is not defined", str(exc))
        if unknown:
            raise RegressionError(f"formula names {unknown.group(1)!r}, which is not a column of the data; "
                                  f"the columns are {columns}") from None
        raise RegressionError(f"formula {rhs!r}: {_first_line(exc)}") from None
    names = [re.sub(r"Q\(\"([^\"]+)\"\)", r"\1", str(c)) for c in info.column_names]  # cov.age as written
    values = z.data if sp.issparse(z) else z
    if not np.all(np.isfinite(values)):
        raise RegressionError("the covariates contain inf or nan after the formula's transformations")
    if z.shape[1] == 0:
        raise RegressionError("the formula has no terms; write 'response ~ 1' for the intercept-only model")
    dependent = dependent_column(z)
    if dependent is not None:
        raise RegressionError(f"the design matrix is singular: {names[dependent]!r} is a linear combination of the "
                              f"terms before it ({', '.join(names[:dependent])}); drop it from the formula")
    return z, names, info


def regress(formula: str, data: pd.DataFrame, mechanism: Mechanism | Mapping[str, Mechanism], *,
            reference: str | None = None,
            semantics: str = "sldp", allocation: str | float = "uniform", method: str = "newton",
            level: float = 0.95, answers: Mapping[str, Sequence[str]] | None = None,
            missing: str = "error", penalty: str | None = None, weights: str | None = None,
            weight_kind: str = "sampling", cluster: str | None = None, cov: str | None = None,
            group: str | None = None, noncompliance: str | None = None) -> RegressionResult:
    """Fit a (multinomial) logistic regression of the true answer on covariates from randomized answers.

    Parameters
    ----------
    formula : str
        ``"response ~ x1 + x2"`` (patsy syntax; ``np`` is available, e.g. ``np.log(age)``). The left side
        names the column of recorded answers, as :func:`designer.sampling.randomize` writes them.
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
        randomized answers; two inputs), whose maximum exists even under separation. Intervals are Wald
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
        fitted with the others from two or more groups; :attr:`RegressionResult.noncompliance` averages its share.

    Returns
    -------
    RegressionResult
    """
    import pandas as pd

    from ..sampling import precise_distributions

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
    if not isinstance(data, pd.DataFrame) or len(data) == 0:
        raise RegressionError("data must be a non-empty pandas DataFrame (one row per respondent)")
    grouped = not isinstance(mechanism, Mechanism) or noncompliance is not None
    mechanisms = {"": mechanism} if isinstance(mechanism, Mechanism) else dict(mechanism)
    if grouped and semantics == "wldp":
        raise RegressionError("several mechanisms and non-compliance apply to set answers (semantics 'sldp')")
    base = next(iter(mechanisms.values()))
    reference = base.inputs[-1] if reference is None else str(reference)
    if reference not in base.inputs:
        raise RegressionError(f"reference {reference!r} is not an input of the mechanism {list(base.inputs)}")
    lhs, rhs = split_formula(formula, [str(c) for c in data.columns])
    precise = semantics == "wldp"
    n_rows = len(data)
    data, rhs, rows = prepare(rhs, lhs, data, missing,
                              extra=[c for c in (weights, cluster, group) if c is not None])
    survey = survey_design(data, rows, weights=weights, weight_kind=weight_kind, cluster=cluster, cov=cov)
    rule = None
    if grouped:
        mechanism, codes, rule = grouped_answers(mechanisms, group, data, lhs, rows, noncompliance, answers)
        channel = mechanism.matrix
    else:
        assert isinstance(mechanism, Mechanism)
        channel = precise_distributions(mechanism, allocation) if precise else mechanism.matrix
        try:
            codes = answer_columns(mechanism, data[lhs].to_numpy(), precise=precise, words=answers)
        except RegressionError as exc:
            raise RegressionError(exc.reason, row=None if exc.row is None else int(rows[exc.row])) from None
    z, names, design_info = _design_matrix(rhs, data)
    lik = Likelihood(z, channel[:, codes], mechanism.inputs.index(reference), survey.weights)
    start = _start(lik, channel, codes)
    outcomes = [mechanism.inputs[j] for j in lik.others]
    labels = [f"{o}:{t}" if len(outcomes) > 1 else t for o in outcomes for t in names]
    objective: Callable[[NDArray[np.float64]], float] = lik.loglike
    if penalty == "firth":
        if lik.k != 2 or survey.weights is not None:
            weighted = ", and the rows are weighted" if survey.weights is not None else ""
            raise RegressionError("--penalty firth is implemented for two inputs without weights; the mechanism "
                                  f"has {lik.k}{weighted}")
        firth = FirthPenalty(lik, channel)
        params, iterations, decrement_ok = fit_firth(lik, firth, start)

        def penalized(b: NDArray[np.float64]) -> float:
            return lik.loglike(b) + firth.value(b)
        objective = penalized
    elif penalty is not None:
        raise RegressionError(f"penalty must be None or 'firth', got {penalty!r}")
    else:
        params, iterations, decrement_ok = (fit_newton if method == "newton" else fit_em)(lik, start)
    norms = column_norms(z, survey.weights if survey.frequency else None)  # a row of weight f is f rows
    fit, shown = judge(objective, params, -lik.hessian(params), decrement_ok, norms, channel,
                       list(mechanism.inputs), reference, names)
    converged = fit.status == "converged"
    # statsmodels keeps a dense copy of the design: not for a sparse one (many-level categoricals)
    sm_result = None if sp.issparse(z) else _statsmodels_results(lik, codes, params, labels, lhs, iterations,
                                                                  converged)
    cov_matrix, cov_warning = covariance(survey, fit.covariance, lik, params)
    result = fit_statistics(params, cov_matrix, names, outcomes, level, shown, loglik=lik.loglike(params),
                            null_loglik=_shares(channel, codes, lik.weights)[1], k=lik.k,
                            n=round(survey.respondents(len(codes))), sandwich=survey.cov is Covariance.ROBUST)
    if grouped:  # the stacked columns carry 1/G: the groups' own log-likelihood adds n log G back
        shift = (float(survey.weights.sum()) if survey.weights is not None else len(codes)) * math.log(len(mechanisms))
        result = dataclasses.replace(result, loglik=result.loglik + shift, aic=result.aic - 2 * shift,
                                     bic=result.bic - 2 * shift,
                                     noncompliance=None if rule is None else noncompliance_summary(
                                         lik, params, cov_matrix, list(mechanism.inputs), rule, level))
    return dataclasses.replace(
        result, converged=converged, iterations=iterations, method=method, reference=reference,
        outcomes=tuple(mechanism.inputs), semantics=semantics, formula=formula, design_info=design_info,
        statsmodels=sm_result, dropped=n_rows - len(data), status=fit.status,
        warnings=fit.warnings + ((cov_warning,) if cov_warning else ()), penalty=penalty, variance=survey.describe())


def judge(objective: Callable[[NDArray[np.float64]], float], params: NDArray[np.float64],
          information: NDArray[np.float64], decrement_ok: bool, norms: NDArray[np.float64],
          channel: NDArray[np.float64], inputs: list[str], reference: str, names: list[str]) -> tuple[Any, Any]:
    """The fit's status (:func:`~designer.regression.status.diagnose`, then the terms the design leaves open)
    and the estimates as shown: ``+-inf`` for diverging terms, NaN for terms any value fits equally well.
    ``norms`` ``(q,)``: each term's covariate column norm; ``information`` ``(P, P)`` at ``params``."""
    others = [x for x in inputs if x != reference]
    labels = [f"{o}:{t}" if len(others) > 1 else t for o in others for t in names]
    fit = diagnose(objective, params, information, decrement_ok, labels, np.tile(norms, len(others)))
    blind = [inputs[x] for x in indistinguishable_inputs(channel)]
    terms: list[int] = []
    if blind:  # the design, not the data, leaves these outcomes' terms open
        involved = others if reference in blind else [o for o in others if o in blind]
        terms = [i for i, o in enumerate(o for o in others for _ in names) if o in involved]
        fit = design_blind(fit, information, terms, labels, blind, decrement_ok)
    shown = params.copy()
    for j, sign in fit.diverging.items():
        shown[j] = sign * np.inf
    shown[terms] = np.nan  # any value fits the answers equally well: no estimate
    return fit, shown


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
        res = model.fit(start_params=params, method="newton", maxiter=0, disp=0)  # results at params, no step
    res.mle_retvals.update(iterations=iterations, converged=converged, warnflag=0 if converged else 1)
    return res


def fit_statistics(params: NDArray[np.float64], cov: NDArray[np.float64], names: list[str], outcomes: list[str],
                   level: float, shown: NDArray[np.float64], *, loglik: float, null_loglik: float, n: int, k: int,
                   sandwich: bool) -> RegressionResult:
    """The coefficient table and the fit statistics from the log-likelihoods at ``params`` and of the
    intercept-only model, ``n`` respondents and ``k`` inputs (``sandwich``: no likelihood-ratio test); the fields
    about how it was fitted are filled in by the caller (``dataclasses.replace``)."""
    import pandas as pd
    from scipy.stats import chi2, norm

    with np.errstate(invalid="ignore"):
        se = np.where(np.diag(cov) > 0, np.sqrt(np.abs(np.diag(cov))), np.nan)  # NaN: no standard error
    ci_low, ci_high = wald_interval(params, se, level)
    with np.errstate(divide="ignore", invalid="ignore"):
        zstat = params / se
    table = pd.DataFrame({
        "outcome": [o for o in outcomes for _ in names], "term": names * len(outcomes), "estimate": shown,
        "stderr": se, "z": zstat, "pvalue": 2 * norm.sf(np.abs(zstat)),
        "ci_low": ci_low, "ci_high": ci_high})
    npar = params.size
    # a likelihood-ratio test needs a likelihood: not a pseudo-likelihood (sampling weights) or correlated rows
    lr = max(2.0 * (loglik - null_loglik), 0.0) if not sandwich else float("nan")
    df = npar - (k - 1)
    return RegressionResult(
        coefficients=table, n=n, loglik=loglik, aic=2 * npar - 2 * loglik, bic=math.log(n) * npar - 2 * loglik,
        lr_statistic=lr, lr_df=df, lr_pvalue=float(chi2.sf(lr, df)) if df > 0 and lr == lr else float("nan"),
        converged=False, iterations=0, method="", reference="", outcomes=(), semantics="", level=level,
        params=params, covariance=cov, formula="", design_info=None, statsmodels=None)


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
