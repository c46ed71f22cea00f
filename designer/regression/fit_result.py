"""What a regression fit returns (:class:`RegressionResult`), how a fit is judged, and its table of coefficients.

Shared by the in-memory fit (:mod:`designer.regression.model`), the fit with one constant unknown share
(:mod:`designer.regression.constant_share`) and the streamed fit (:mod:`designer.regression.streamed`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from .._internal.numeric import wald_interval
from ..estimation.identification import indistinguishable_inputs
from ..exceptions import RegressionError
from ..results import FitStatus, Result, TableData, check_level
from .design import build_rows, constant_columns
from .flat import FlatTerm
from .likelihood import Likelihood
from .status import design_blind, diagnose

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["COLUMNS", "NO_LR_TEST", "RegressionResult", "answer_counts", "fit_statistics", "judge"]

#: The columns of a fit's coefficient table.
COLUMNS = ["outcome", "term", "estimate", "stderr", "z", "pvalue", "ci_low", "ci_high"]
#: Why a fit with a sandwich variance has no likelihood-ratio test.
NO_LR_TEST = "a sandwich variance: the weighted pseudo-likelihood, or correlated answers, is not a likelihood"


def answer_counts(channel: NDArray[np.float64], codes: NDArray[np.int64], weights: NDArray[np.float64] | None = None
                  ) -> NDArray[np.float64]:
    """The (weighted) answers per column of ``channel``, ``(F,)``."""
    return np.bincount(codes, weights=weights, minlength=channel.shape[1]).astype(np.float64)


def _shares(channel: NDArray[np.float64], codes: NDArray[np.int64], weights: NDArray[np.float64] | None = None
            ) -> tuple[NDArray[np.float64], float]:
    """The intercept-only model: the shares' MLE from the (weighted) answer counts, and its log-likelihood."""
    from ..estimation.mle import mle_newton

    counts = answer_counts(channel, codes, weights)
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
class RegressionResult(Result):
    """A fitted randomized-response regression (docs/theory.md section 9): a :class:`~designer.results.Result`.

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
    params : (P,) ndarray
        The coefficients, outcome-major (``P = (k - 1) q``; with a constant unknown share, without it).
    covariance : (P, P) ndarray
        Their covariance (``NaN`` rows and columns for terms without a standard error).
    statsmodels : statsmodels results object
        statsmodels' ``GenericLikelihoodModelResults`` at the estimate: ``summary()``, ``bse``, ``conf_int()``;
        None when the design is sparse (many-level categoricals: statsmodels would hold a dense copy of it) or the
        data were read in chunks. Built when first read, from ``statsmodels_factory``.
    dropped : int
        Rows left out for a missing value of the formula's variables (``missing="drop"``).
    status : FitStatus
        ``converged``, ``separation``, ``not_converged`` or ``not_identified`` (:mod:`designer.regression.status`):
        diverging terms have estimate ``+-inf``, and a term without a well-conditioned information, or whose
        likelihood-ratio interval is unbounded on one side (:attr:`flat`), has ``NaN`` standard error, z, p and
        interval.
    warnings : tuple of str
        What went wrong, naming the terms, and what to do.
    penalty : str or None
        ``"firth"`` when the fit maximised Firth's penalized likelihood.
    variance : str
        How the standard errors were computed (observed information, rr's outer product of the scores, robust
        or cluster-robust sandwich, and the kind of weights), in words.
    noncompliance : dict or None
        With non-compliance or an unrelated question: ``scope``, ``answer``, ``share`` (averaged over the
        respondents), ``stderr``, ``ci_low``, ``ci_high`` (and ``bounds`` under ``everyone``).
    mechanism_label : str
        The mechanism(s) as the output names them: a file's path, ``NAME=FILE, ...`` for several designs.
    weights, weight_kind, cluster, group : str or None
        The survey's columns as given (``weight_kind`` is only reported with ``weights``).
    flat : tuple of FlatTerm
        The coefficients whose 0.95 likelihood-ratio interval is unbounded on one side (the log-likelihood at
        infinity along a witness direction within 1.92 of the maximum, :mod:`designer.regression.flat`): no
        standard error, test or interval; each with its side, the limit and the witness direction.

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
    >>> fit.reference, fit.outcomes, fit.n
    ('no', ('yes', 'no'), 2000)
    >>> fit.to_frame()[["term", "estimate"]].round(3).values.tolist()
    [['Intercept', -2.65], ['age', 0.04]]
    """

    #: The columns of :attr:`coefficients`, :data:`COLUMNS` (the table is built from them when first read, so that
    #: a fit printed by the command line never imports pandas).
    coefficient_columns: dict[str, Any] = field(repr=False)
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
    dropped: int = 0
    status: FitStatus = FitStatus.CONVERGED
    warnings: tuple[str, ...] = ()
    penalty: str | None = None
    variance: str = "observed information"
    noncompliance: dict[str, Any] | None = None
    mechanism_label: str = ""
    weights: str | None = None
    weight_kind: str = "sampling"
    cluster: str | None = None
    group: str | None = None
    #: The coefficients whose likelihood-ratio interval is unbounded on one side, each with its witness
    #: (:class:`~designer.regression.flat.FlatTerm`): they have no standard error.
    flat: tuple[FlatTerm, ...] = field(default=(), repr=False, compare=False)
    #: Builds :attr:`statsmodels` when it is first read (None: there is none).
    statsmodels_factory: Callable[[], Any] | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._check_status()

    @functools.cached_property
    def coefficients(self) -> pd.DataFrame:
        """One row per (outcome, term), the columns :data:`COLUMNS` (see the class's attributes)."""
        import pandas as pd

        return pd.DataFrame({c: self.coefficient_columns[c] for c in COLUMNS})

    def _rows(self) -> list[list[Any]]:
        """The coefficient table's rows: text, then numbers as Python floats."""
        text = [list(self.coefficient_columns[c]) for c in COLUMNS[:2]]
        numbers = [np.asarray(self.coefficient_columns[c], dtype=np.float64).tolist() for c in COLUMNS[2:]]
        return [list(row) for row in zip(*text, *numbers)]

    @functools.cached_property
    def statsmodels(self) -> Any:
        """statsmodels' ``GenericLikelihoodModelResults`` at the estimate (``summary()``, ``bse``, ``conf_int()``),
        built when first read (importing statsmodels takes a second); None for a sparse design, data read in chunks,
        or an information matrix statsmodels cannot invert."""
        return None if self.statsmodels_factory is None else self.statsmodels_factory()

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of ``designer regress --format json``: the fit's settings, ``status``, ``warnings``,
        ``loglik``, ``aic``, ``bic``, ``lr_test`` and one object per coefficient (a missing standard error and
        what follows from it are ``null``; a diverging estimate ``"inf"`` or ``"-inf"``)."""
        from .._internal.render import json_number

        rows = self._rows()
        return {
            "formula": self.formula, "mechanism": self.mechanism_label, "semantics": self.semantics,
            "reference": self.reference, "n": self.n, "dropped": self.dropped, "level": self.level,
            "method": self.method, "penalty": self.penalty, "status": self.status, "warnings": list(self.warnings),
            "variance": self.variance, "weights": self.weights, "group": self.group,
            **dict([_share_output(self.noncompliance)]),
            "weight_kind": self.weight_kind if self.weights else None, "cluster": self.cluster,
            "converged": self.converged, "iterations": self.iterations, "loglik": json_number(self.loglik),
            "aic": json_number(self.aic), "bic": json_number(self.bic), "lr_test": self._lr_test(),
            "coefficients": [{h: _coefficient(v) for h, v in zip(COLUMNS, r)} for r in rows]}

    def table(self) -> TableData:
        """The CSV table: ``status``, ``variance`` and the coefficients' columns, one row per coefficient (a
        missing value empty), then under cheater detection each input's prevalence bounds as rows of their own
        (term ``(prevalence low)`` and ``(prevalence high)``)."""
        rows = self._rows()
        extra = [[b["input"], f"(prevalence {side})", b[side], b[f"{side}_stderr"], None, None,
                  b[f"{side}_ci_low"], b[f"{side}_ci_high"]] for b in self._bounds() for side in ("low", "high")]
        return ["status", "variance", *COLUMNS], [[self.status.value, self.variance, *(
            None if isinstance(v, float) and math.isnan(v) else v for v in r)] for r in rows + extra]

    def summary(self) -> str:
        """The fit as ``designer regress`` prints it (its table output): what was fitted, the log-likelihood, AIC and
        likelihood-ratio test, the status and the warnings, the unknown share, then the coefficients. statsmodels'
        own summary table is :meth:`statsmodels_summary`."""
        from .._internal.render import fmt, render_table

        how = "Firth's penalized likelihood" if self.penalty == "firth" else self.method
        dropped = f"; {self.dropped} row(s) with a missing value dropped" if self.dropped else ""
        lr = (f"chi2({self.lr_df}) = {self.lr_statistic:.4g}, p = {self.lr_pvalue:.3g}"
              if math.isfinite(self.lr_statistic) else f"none ({NO_LR_TEST})")
        head = (f"{self.n} respondents, {self.semantics} answers through {self.mechanism_label}; multinomial logit "
                f"of the true answer, log-odds against {self.reference!r}; {self.level:g} Wald intervals, standard "
                f"errors from the {self.variance}{dropped}\n"
                f"log-likelihood {self.loglik:.6g}   AIC {self.aic:.6g}   LR test against the intercept-only model: "
                f"{lr}\nstatus: {self.status.value.replace('_', ' ')} after {self.iterations} iterations ({how})"
                + "".join(f"\nwarning: {w}" for w in self.warnings)
                + ("" if self.noncompliance is None else "\n" + _share_line(self.noncompliance))
                + "".join("\n" + _bounds_line(b, self.level) for b in self._bounds()))
        rows = self._rows()
        cells = [[r[0], r[1], *("-" if isinstance(v, float) and math.isnan(v) else fmt(v) for v in r[2:])]
                 for r in rows]
        return head + "\n" + render_table(COLUMNS, cells)

    def statsmodels_summary(self) -> Any:
        """statsmodels' summary table of the fit (:class:`RegressionError` when there is none: a sparse design, data
        read in chunks, or a Hessian statsmodels cannot invert)."""
        if self.statsmodels is None:
            raise RegressionError("no statsmodels summary for this fit (a sparse design, data read in chunks, or an "
                                  "information matrix that cannot be inverted): see summary(), coefficients, status "
                                  "and warnings")
        return self.statsmodels.summary(title=f"Randomized-response regression ({self.formula})")

    def conf_int(self, level: float | None = None) -> NDArray[np.float64]:
        """Wald intervals ``(P, 2)`` (low, high) of the coefficients, in the rows of :attr:`coefficients`, at
        ``level`` (default: the fit's :attr:`level`, whose intervals are the table's ``ci_low``, ``ci_high``); a row
        is NaN where the coefficient has no standard error (a diverging or unidentified term)."""
        level = self.level if level is None else check_level(level)
        stderr = np.asarray(self.coefficient_columns["stderr"], dtype=np.float64)
        low, high = wald_interval(self.params[:stderr.size], stderr, level)
        return np.column_stack([low, high]).astype(np.float64)

    def _bounds(self) -> list[dict[str, Any]]:
        return [] if self.noncompliance is None else list(self.noncompliance.get("bounds", []))

    def _lr_test(self) -> dict[str, Any]:
        from .._internal.render import json_number

        if not math.isfinite(self.lr_statistic):
            return {"statistic": None, "df": self.lr_df, "pvalue": None, "note": f"no test under {NO_LR_TEST}"}
        return {"statistic": json_number(self.lr_statistic), "df": self.lr_df,
                "pvalue": json_number(self.lr_pvalue)}

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


def _coefficient(v: Any) -> Any:
    """A coefficient cell for JSON: ``null`` when absent (NaN: no standard error), ``"inf"`` when diverging."""
    from .._internal.render import json_number

    if isinstance(v, float) and math.isnan(v):
        return None
    return json_number(v) if isinstance(v, float) else v


def _share_output(share: dict[str, Any] | None) -> tuple[str, dict[str, Any] | None]:
    """The JSON key of a fit's unknown share (``unrelated`` for the unrelated question's prevalence, else
    ``noncompliance``) and its cells (non-finite numbers as null)."""
    from .._internal.render import json_number

    if share is None:
        return "noncompliance", None
    key = "unrelated" if share.get("scope") == "unrelated" else "noncompliance"
    return key, {k: (json_number(v) if isinstance(v, float) and math.isfinite(v) else None if isinstance(v, float)
                     else v) for k, v in share.items()}


def _share_line(share: dict[str, Any]) -> str:
    """One line of text about the unknown share."""
    if share.get("scope") == "unrelated":
        what = f"unrelated question's share answering {share['answer']!r}"
    else:
        what = f"non-compliant ({share['scope']}:{share['answer']}) share"
        what += ", one constant" if share.get("model") == "constant" else ", averaged over the respondents"
    where = "" if share.get("groups") is None else f" (groups {', '.join(share['groups'])})"
    return (f"{what}{where}: {share['share']:.4g} (stderr {share['stderr']:.3g}; {share['ci_low']:.4g} to "
            f"{share['ci_high']:.4g})")


def _bounds_line(b: dict[str, Any], level: float) -> str:
    """One input's prevalence bounds under cheater detection, each with its interval (docs/fits.md)."""
    from .._internal.render import fmt

    def num(v: Any) -> str:
        return "-" if v is None else fmt(float(v))

    return (f"prevalence of {b['input']!r} between low {num(b['low'])} ({num(b['low_ci_low'])} to "
            f"{num(b['low_ci_high'])}) and high {num(b['high'])} ({num(b['high_ci_low'])} to "
            f"{num(b['high_ci_high'])}); {num(b['ci_low'])} to {num(b['ci_high'])} covers it at {level:g} or more")


def _covariates(design_info: Any, data: pd.DataFrame) -> NDArray[np.float64]:
    try:
        return build_rows(design_info, data)
    except Exception as exc:
        import patsy  # an error of patsy's is only raised when patsy built the design

        if not isinstance(exc, patsy.PatsyError):
            raise
        raise RegressionError(f"cannot build the covariates: {_first_line(exc)}") from None


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def judge(objective: Callable[[NDArray[np.float64]], float], params: NDArray[np.float64],
          information: NDArray[np.float64], decrement_ok: bool, norms: NDArray[np.float64],
          channel: NDArray[np.float64], inputs: list[str], reference: str, names: list[str], *,
          gram: NDArray[np.float64] | None = None, counts: NDArray[np.float64] | None = None) -> tuple[Any, Any]:
    """The fit's status (:func:`~designer.regression.status.diagnose`, then the terms the design or the answers
    leave open) and the estimates as shown: ``+-inf`` for diverging terms, NaN for terms any value fits equally
    well. ``norms`` ``(q,)``: each term's covariate column norm; ``information`` ``(P, P)`` at ``params``; ``gram``
    ``(q, q)``: the covariates' ``Z'Z`` (near-collinear terms are told from separation by it), when known;
    ``counts`` ``(F,)``: the (weighted) answers per column of ``channel``, whose shares ``estimate`` would call
    not identified (:func:`~designer.estimation.identification.share_verdict`): the log-odds of those inputs are
    not identified either, one verdict for both commands."""
    others = [x for x in inputs if x != reference]
    labels = [f"{o}:{t}" if len(others) > 1 else t for o in others for t in names]
    tiled = np.tile(norms, len(others))
    fit = diagnose(objective, params, information, decrement_ok, labels, tiled,
                   gram=None if gram is None else np.asarray(np.kron(np.eye(len(others)), gram), dtype=np.float64))
    blind = [inputs[x] for x in indistinguishable_inputs(channel)]
    reason = None
    if not blind and counts is not None:
        unknown = _unidentified_shares(channel, counts)
        if unknown:
            blind = [inputs[x] for x in unknown]
            reason = (f"the answers do not identify the shares of {', '.join(map(repr, blind))} ('designer estimate' "
                      "calls them not identified: their standard errors would exceed the range [0, 1], or an interval "
                      "of shares fits the answers equally well): the log-odds of "
                      + ", ".join(map(repr, [o for o in others if reference in blind or o in blind]))
                      + " against the reference have no estimate and no standard error")
    terms: list[int] = []
    if blind:  # the design, not the data, leaves these outcomes' terms open
        involved = others if reference in blind else [o for o in others if o in blind]
        terms = [i for i, o in enumerate(o for o in others for _ in names) if o in involved]
        fit = design_blind(fit, information, terms, labels, blind, decrement_ok, norms=tiled, reason=reason)
    shown = params.copy()
    for j, sign in fit.diverging.items():
        shown[j] = sign * np.inf
    shown[terms] = np.nan  # any value fits the answers equally well: no estimate
    return fit, shown


def _unidentified_shares(channel: NDArray[np.float64], counts: NDArray[np.float64]) -> list[int]:
    """The inputs whose shares the answer ``counts`` do not identify at the shares' maximum."""
    from ..estimation.identification import share_verdict
    from ..estimation.mle import mle_newton

    if not counts.sum() > 0:
        return list(range(channel.shape[0]))
    pi = mle_newton(channel, counts)[0]
    return [int(x) for x in np.flatnonzero(share_verdict(channel, counts, pi))]


def fit_statistics(params: NDArray[np.float64], cov: NDArray[np.float64], names: list[str], outcomes: list[str],
                   level: float, shown: NDArray[np.float64], *, loglik: float, null_loglik: float, n: float, k: int,
                   sandwich: bool, stderr: NDArray[np.float64] | None = None) -> RegressionResult:
    """The coefficient table and the fit statistics from the log-likelihoods at ``params`` and of the
    intercept-only model, ``n`` respondents (the sum of frequency weights, a whole number or not: reported rounded,
    BIC's ``log n`` exact) and ``k`` inputs (``sandwich``: no likelihood-ratio test); the fields about how it was
    fitted are filled in by the caller (``dataclasses.replace``); ``stderr``: the standard errors when the caller
    computed them (else the square roots of ``cov``'s diagonal)."""
    from scipy.special import chdtrc, ndtr  # scipy.stats' chi2.sf and norm.sf, without importing scipy.stats

    with np.errstate(invalid="ignore"):
        se = np.where(np.diag(cov) > 0, np.sqrt(np.abs(np.diag(cov))), np.nan)  # NaN: no standard error
    if stderr is not None:
        se = np.asarray(stderr, dtype=np.float64)
    ci_low, ci_high = wald_interval(params, se, level)
    with np.errstate(divide="ignore", invalid="ignore"):
        zstat = params / se
    table = {
        "outcome": [o for o in outcomes for _ in names], "term": list(names) * len(outcomes),
        "estimate": np.asarray(shown, dtype=np.float64), "stderr": se, "z": zstat, "pvalue": 2 * ndtr(-np.abs(zstat)),
        "ci_low": ci_low, "ci_high": ci_high}
    npar = params.size
    # a likelihood-ratio test needs a likelihood: not a pseudo-likelihood (sampling weights) or correlated rows
    lr = max(2.0 * (loglik - null_loglik), 0.0) if not sandwich else float("nan")
    df = npar - (k - 1)
    return RegressionResult(
        coefficient_columns=table, n=round(n), loglik=loglik, aic=2 * npar - 2 * loglik,
        bic=math.log(n) * npar - 2 * loglik, lr_statistic=lr, lr_df=df,
        lr_pvalue=float(chdtrc(df, lr)) if df > 0 and lr == lr else float("nan"),
        converged=False, iterations=0, method="", reference="", outcomes=(), semantics="", level=level,
        params=params, covariance=cov, formula="", design_info=None)

