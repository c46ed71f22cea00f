"""Several designs in one survey, and respondents who do not follow the randomizer (docs/theory.md section 8.2).

Respondents are split into groups by design (a split sample with two randomization probabilities, a direct
question for a control group, two devices); group ``g`` answers through its own mechanism ``M_g``, all over the
same inputs. The shares are common to the groups, so the log-likelihood is ``sum_g sum_E c_gE log(pi M_g(E))``.
That is, up to the constant ``n log G``, the likelihood of one mechanism whose columns are every group's
columns, each scaled by ``1/G`` (rows sum to 1): every estimator of designer then applies unchanged.

Non-compliance adds a latent class of respondents who give one answer whatever the randomizer says:

- ``carriers:ANSWER`` (the stochastic lie detector, Moshagen, Musch and Erdfelder 2012): a share of the
  respondents who hold the trait (the input other than ANSWER's, two inputs) answer ANSWER;
- ``everyone:ANSWER`` (cheater detection, Clark and Desharnais 1998): a share of all respondents do.

The class's row has mass 1 on ANSWER's column in every group. With one group the class is not identified
(its row is a mixture of the others' in any single design); two groups with different mechanisms identify it.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._internal.numeric import wald_interval
from ..exceptions import InvalidArgumentError, InvalidMechanismError
from ..mechanism import Mechanism
from ..results import FitStatus, Result, TableData
from ..vocabulary import NoncomplianceScope
from .shares import Estimate, share_cells, share_intervals
from .survey_design import SurveyCounts, fit_survey

__all__ = ["GroupEstimate", "Noncompliance", "PrevalenceBounds", "answers_per_group", "estimate_groups",
           "everyone_warning", "prevalence_bounds", "share_record", "stack_mechanisms", "stacking_constant"]

#: The latent class of respondents who answer regardless.
CHEATERS = "(non-compliant)"


@dataclass(frozen=True)
class Noncompliance:
    """Who may answer ``answer`` whatever the randomizer says: ``scope`` carriers of the trait, or everyone.

    Examples
    --------
    >>> from designer.estimation.groups import Noncompliance
    >>> from designer.vocabulary import NoncomplianceScope
    >>> Noncompliance(NoncomplianceScope.CARRIERS, "no")
    Noncompliance(scope=<NoncomplianceScope.CARRIERS: 'carriers'>, answer='no')
    """

    scope: NoncomplianceScope
    answer: str

    @classmethod
    def parse(cls, text: object) -> Noncompliance:
        """``"carriers:no"`` or ``"everyone:no"``."""
        if isinstance(text, Noncompliance):
            return text
        scope, sep, answer = str(text).partition(":")
        if not sep or not answer.strip():
            raise InvalidArgumentError(f"noncompliance must read 'carriers:ANSWER' or 'everyone:ANSWER', got {text!r}")
        rule = cls(NoncomplianceScope.parse(scope, "noncompliance scope"), answer.strip())
        if rule.scope is NoncomplianceScope.UNRELATED:
            raise InvalidArgumentError("noncompliance scope must be 'carriers' or 'everyone'; an unrelated question's "
                                       "unknown prevalence is the option unrelated=ANSWER")
        return rule


@dataclass(frozen=True)
class GroupEstimate(Result):
    """The shares from several groups, each answering through its own mechanism, and non-compliance (a
    :class:`~designer.results.Result`).

    Attributes
    ----------
    inputs : tuple of str
    estimate, stderr, ci_low, ci_high : (k,) ndarray
        Each input's share (prevalence) and its Wald interval. Under ``everyone`` non-compliance an input's
        share is not identified (the non-compliant hide theirs): ``estimate`` is the share of compliant
        respondents who hold it, ``high`` adds every non-compliant respondent.
    low, high : (k,) ndarray
        The identified range of each share (equal to ``estimate`` where it is identified).
    noncompliance : dict or None
        ``scope``, ``answer``, ``share`` (of the carriers, or of everyone, who answer regardless), ``stderr``,
        ``ci_low``, ``ci_high``.
    groups : tuple of str
    group_sizes : tuple of int
        Respondents per group.
    classes : Estimate or None
        The fit of the latent classes (the inputs, and the non-compliant class if any) over the stacked design
        (None for the fit with one constant unknown share, ``designer.regression.constant_share``).
    loglik : float
        Log-likelihood of the answers (every group's, at the estimate).
    status : FitStatus
        The class fit's status (converged, not_converged, not_identified; separation for the fit with one constant
        unknown share).
    warnings : tuple of str
    variance : str
    level : float
    bounds : PrevalenceBounds or None
        Under ``everyone:ANSWER``, each prevalence's bounds with their intervals.

    Examples
    --------
    Two groups of 1000, one answering through Warner's design with truthful probability 0.8 (eps = ln 4), the other
    with 2/3 (eps = ln 2): 260 and 330 yes. The answers are coded by the stacked frame's columns (``a|yes``, ``a|no``,
    ``b|yes``, ``b|no``):

    >>> import numpy as np
    >>> import designer
    >>> from designer.estimation.groups import estimate_groups
    >>> from designer.estimation.survey_design import SurveyCounts
    >>> designs = {"a": designer.Q_WRR(np.log(4)), "b": designer.Q_WRR(np.log(2))}
    >>> counts = SurveyCounts.from_rows(4, [0] * 260 + [1] * 740 + [2] * 330 + [3] * 670)
    >>> fit = estimate_groups(designs, counts)
    >>> fit.groups, fit.group_sizes, str(fit.status)
    (('a', 'b'), (1000, 1000), 'converged')
    """

    inputs: tuple[str, ...]
    estimate: NDArray[np.float64]
    stderr: NDArray[np.float64]
    ci_low: NDArray[np.float64]
    ci_high: NDArray[np.float64]
    low: NDArray[np.float64]
    high: NDArray[np.float64]
    noncompliance: dict[str, Any] | None
    groups: tuple[str, ...]
    group_sizes: tuple[int, ...]
    classes: Estimate | None
    loglik: float
    status: FitStatus
    warnings: tuple[str, ...]
    variance: str
    level: float
    bounds: PrevalenceBounds | None = None

    title = "Shares from several groups (maximum likelihood)"

    def __post_init__(self) -> None:
        self._check_status()

    def share_key(self) -> tuple[str, dict[str, Any] | None]:
        """The JSON key of the unknown share (``unrelated`` for the unrelated question's prevalence, else
        ``noncompliance``) and its cells (non-finite numbers as None)."""
        nc = self.noncompliance
        if nc is None:
            return "noncompliance", None
        key = "unrelated" if nc.get("scope") == "unrelated" else "noncompliance"
        return key, {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in nc.items()}

    def to_dict(self) -> dict[str, Any]:
        """The fit as JSON: ``n``, ``level``, ``groups`` (``{name: {"n": respondents}}``), ``status``, ``warnings``,
        ``variance``, ``loglik``, the shares' ``estimate``, ``stderr``, ``ci_low``, ``ci_high``, ``low``, ``high``
        (``{input: value}``), ``bounds`` under cheater detection, and the unknown share (``noncompliance`` or
        ``unrelated``)."""
        cells = share_cells(self.inputs, self)
        for key in ("low", "high"):
            cells[key] = {x: (None if np.isnan(v) else float(v)) for x, v in zip(self.inputs, getattr(self, key))}
        out: dict[str, Any] = {
            "n": int(sum(self.group_sizes)), "level": self.level,
            "groups": {name: {"n": size} for name, size in zip(self.groups, self.group_sizes)},
            "status": self.status, "warnings": list(self.warnings), "variance": self.variance,
            "loglik": self.loglik, **cells}
        if self.bounds is not None:
            out["bounds"] = {r["input"]: {k: v for k, v in r.items() if k != "input"} for r in self.bounds.records()}
        return {**out, **dict([self.share_key()])}

    def table(self) -> TableData:
        """One row per input (``input``, ``estimate``, ``stderr``, ``ci_low``, ``ci_high``, ``low``, ``high``, and
        under cheater detection the bounds' intervals), then the unknown share's row; absent figures None."""
        columns = ["input", "estimate", "stderr", "ci_low", "ci_high", "low", "high"]
        rows: list[list[Any]] = [[x, *(float(getattr(self, c)[i]) for c in columns[1:])]
                                 for i, x in enumerate(self.inputs)]
        b = self.bounds
        if b is not None:  # cheater detection: each bound's interval
            columns += ["low_ci_low", "low_ci_high", "high_ci_low", "high_ci_high"]
            for i, row in enumerate(rows):
                row += [float(b.low_ci_low[i]), float(b.low_ci_high[i]), float(b.high_ci_low[i]),
                        float(b.high_ci_high[i])]
        nc = self.noncompliance
        if nc is not None:
            what = ("unrelated question" if nc["scope"] == "unrelated" else "non-compliant") + \
                f" ({nc['scope']}:{nc['answer']})"
            rows.append([what, nc["share"], nc["stderr"], nc["ci_low"], nc["ci_high"], nc["share"], nc["share"]]
                        + [math.nan] * (len(columns) - 7))
        return columns, [[None if isinstance(v, float) and np.isnan(v) else v for v in row] for row in rows]

    def conf_int(self, level: float | None = None) -> NDArray[np.float64]:
        """The shares' intervals ``(k, 2)`` (``ci_low``, ``ci_high``); at another level than the fit's, Wald
        intervals from ``stderr``."""
        return share_intervals(self, level)


@dataclass(frozen=True)
class PrevalenceBounds:
    """Under cheater detection (``everyone:ANSWER``), each input's prevalence is only bounded: ``low`` (its
    compliant holders: every non-compliant respondent holds another input) and ``high`` (``low`` plus every
    non-compliant respondent), each with a delta-method standard error and a Wald interval at ``level``
    (clipped to [0, 1]; NaN where the fit has no covariance). ``ci_low`` (``low``'s lower end) to ``ci_high``
    (``high``'s upper end) covers the prevalence itself with probability at least ``level`` in large samples,
    wherever it lies between the bounds (docs/fits.md).

    Attributes
    ----------
    inputs : tuple of str
    low, low_stderr, low_ci_low, low_ci_high, high, high_stderr, high_ci_low, high_ci_high : (k,) ndarray
    level : float

    Examples
    --------
    >>> import numpy as np
    >>> import designer
    >>> from designer.estimation.groups import estimate_groups
    >>> from designer.estimation.survey_design import SurveyCounts
    >>> designs = {"a": designer.Q_WRR(np.log(4)), "b": designer.Q_WRR(np.log(2))}
    >>> counts = SurveyCounts.from_rows(4, [0] * 260 + [1] * 740 + [2] * 330 + [3] * 670)

    Under cheater detection (``everyone:no``) the prevalence of yes is only bounded, between its compliant holders and
    those plus every non-compliant respondent:

    >>> bounds = estimate_groups(designs, counts, noncompliance="everyone:no").bounds
    >>> bounds.low.round(6).tolist(), bounds.high.round(6).tolist()
    ([0.155, 0.68], [0.32, 0.845])
    """

    inputs: tuple[str, ...]
    low: NDArray[np.float64]
    low_stderr: NDArray[np.float64]
    low_ci_low: NDArray[np.float64]
    low_ci_high: NDArray[np.float64]
    high: NDArray[np.float64]
    high_stderr: NDArray[np.float64]
    high_ci_low: NDArray[np.float64]
    high_ci_high: NDArray[np.float64]
    level: float

    @property
    def ci_low(self) -> NDArray[np.float64]:
        """The prevalence's interval, lower end: ``low``'s lower end."""
        return self.low_ci_low

    @property
    def ci_high(self) -> NDArray[np.float64]:
        """The prevalence's interval, upper end: ``high``'s upper end."""
        return self.high_ci_high

    def records(self) -> list[dict[str, Any]]:
        """One dict per input (``input``, the eight numbers, ``ci_low``, ``ci_high``), non-finite as None."""
        def cell(v: float) -> float | None:
            return float(v) if math.isfinite(v) else None

        names = ("low", "low_stderr", "low_ci_low", "low_ci_high", "high", "high_stderr", "high_ci_low",
                 "high_ci_high", "ci_low", "ci_high")
        return [{"input": x, **{name: cell(float(getattr(self, name)[i])) for name in names}}
                for i, x in enumerate(self.inputs)]


def prevalence_bounds(inputs: tuple[str, ...], low: NDArray[np.float64], high: NDArray[np.float64],
                      grad_low: NDArray[np.float64], grad_high: NDArray[np.float64],
                      covariance: NDArray[np.float64] | None, level: float) -> PrevalenceBounds:
    """The bounds ``low``, ``high`` ``(k,)`` with their gradients ``(k, P)`` in the fit's parameters, whose
    covariance is ``covariance`` ``(P, P)`` (None: no standard errors): delta-method standard errors and Wald
    intervals at ``level``.

    Examples
    --------
    >>> import numpy as np
    >>> from designer.estimation.groups import prevalence_bounds
    >>> bounds = prevalence_bounds(("yes", "no"), np.array([0.2, 0.5]), np.array([0.5, 0.8]), np.eye(2), np.eye(2),
    ...                            np.eye(2) * 0.0025, 0.95)
    >>> bounds.low_stderr.tolist(), bounds.low_ci_low.round(4).tolist()  # 0.2 - 1.96 * 0.05
    ([0.05, 0.05], [0.102, 0.402])
    """
    k = len(inputs)
    if covariance is None:
        se_low = se_high = np.full(k, np.nan)
    else:
        with np.errstate(invalid="ignore"):
            se_low = np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", grad_low, covariance, grad_low), 0.0))
            se_high = np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", grad_high, covariance, grad_high), 0.0))
    high = np.minimum(high, 1.0)
    low_lo, low_hi = wald_interval(low, se_low, level, low=0.0, high=1.0)
    high_lo, high_hi = wald_interval(high, se_high, level, low=0.0, high=1.0)
    return PrevalenceBounds(tuple(inputs), np.asarray(low, dtype=np.float64), se_low, np.asarray(low_lo),
                            np.asarray(low_hi), np.asarray(high, dtype=np.float64), se_high, np.asarray(high_lo),
                            np.asarray(high_hi), level)


def stack_mechanisms(mechanisms: Mapping[str, Mechanism], noncompliance: Noncompliance | None = None
                     ) -> tuple[Mechanism, list[int]]:
    """One mechanism over the groups' disjoint frames (labels ``GROUP|label``), columns scaled by ``1/G``, with the
    non-compliant class as a last row when asked; and the offset of each group's columns.

    Raises :class:`InvalidMechanismError` when the groups' inputs differ or ANSWER is not an answer of a group.

    Examples
    --------
    The groups' frames side by side, each column scaled by ``1/G`` (docs/theory.md section 8.2):

    >>> import numpy as np
    >>> import designer
    >>> from designer.estimation.groups import stack_mechanisms
    >>> stacked, offsets = stack_mechanisms({"a": designer.Q_WRR(np.log(4)), "b": designer.Q_WRR(np.log(2))})
    >>> stacked.frame, offsets
    (('a|yes', 'a|no', 'b|yes', 'b|no'), [0, 2])
    >>> stacked.matrix.round(6).tolist()[0]
    [0.4, 0.1, 0.333333, 0.166667]
    """
    names = list(mechanisms)
    if not names:
        raise InvalidArgumentError("give at least one mechanism")
    first = mechanisms[names[0]]
    for name in names[1:]:
        if mechanisms[name].inputs != first.inputs:
            raise InvalidMechanismError(f"group {name!r} has inputs {list(mechanisms[name].inputs)}, group "
                                        f"{names[0]!r} has {list(first.inputs)}: every group answers about the "
                                        "same inputs")
    frame: list[str] = []
    masks: list[int] = []
    blocks: list[NDArray[np.float64]] = []
    offsets: list[int] = []
    for name in names:
        mech = mechanisms[name]
        shift = len(frame)
        offsets.append(sum(b.shape[1] for b in blocks))
        frame += [f"{name}|{y}" for y in mech.frame]
        masks += [int(b) << shift for b in mech.focal]
        block = mech.matrix / len(names)
        if noncompliance is not None:
            if noncompliance.answer not in mech.frame:
                raise InvalidMechanismError(f"non-compliant answer {noncompliance.answer!r} is not an answer of group "
                                            f"{name!r} (its frame is {list(mech.frame)})")
            single = 1 << mech.frame.index(noncompliance.answer)
            column = [j for j, b in enumerate(mech.focal) if int(b) == single]
            if not column:
                raise InvalidMechanismError(f"group {name!r} never answers {{{noncompliance.answer}}} alone: a "
                                            "non-compliant answer must be a single label the design can give")
            cheat = np.zeros((1, block.shape[1]))
            cheat[0, column[0]] = 1.0 / len(names)
            block = np.vstack([block, cheat])
        blocks.append(block)
    if len(frame) > 26:
        raise InvalidMechanismError(f"the groups' frames have {len(frame)} labels together; at most 26")
    inputs = list(first.inputs) + ([CHEATERS] if noncompliance is not None else [])
    return Mechanism(np.hstack(blocks), inputs=inputs, frame=frame, focal=masks), offsets


def stacking_constant(weight: float, groups: int) -> float:
    """``n log G``: what the stacked mechanism's log-likelihood (columns scaled by ``1/G``) lacks of the groups' own,
    for ``weight`` the respondents (the sum of the weights, with weights).

    Examples
    --------
    >>> import math
    >>> from designer.estimation.groups import stacking_constant
    >>> math.isclose(stacking_constant(100, 2), 100 * math.log(2))
    True
    """
    return weight * math.log(groups)


def answers_per_group(counts: SurveyCounts, offsets: list[int]) -> tuple[int, ...]:
    """Respondents of each group: the unweighted counts of its block of stacked columns (from ``offsets``).

    Examples
    --------
    >>> import numpy as np
    >>> import designer
    >>> from designer.estimation.groups import estimate_groups
    >>> from designer.estimation.survey_design import SurveyCounts
    >>> designs = {"a": designer.Q_WRR(np.log(4)), "b": designer.Q_WRR(np.log(2))}
    >>> counts = SurveyCounts.from_rows(4, [0] * 260 + [1] * 740 + [2] * 330 + [3] * 670)
    >>> from designer.estimation.groups import answers_per_group
    >>> answers_per_group(counts, [0, 2])
    (1000, 1000)
    """
    answered = counts.answered if counts.answered is not None else counts.weighted
    bounds = [*offsets, counts.weighted.size]
    return tuple(round(float(answered[bounds[g]:bounds[g + 1]].sum())) for g in range(len(offsets)))


def everyone_warning(share: float, answer: str) -> str:
    """Why the inputs' shares are only bounded under ``everyone:ANSWER``.

    Examples
    --------
    >>> from designer.estimation.groups import everyone_warning
    >>> everyone_warning(0.2, "no").startswith("non-compliance of everyone: the 0.2 who answer 'no' regardless")
    True
    """
    return (f"non-compliance of everyone: the {share:.3g} who answer {answer!r} regardless hide their inputs, so each "
            "share is only bounded (estimate: compliant holders; high: all of the non-compliant added)")


def share_record(rule: Noncompliance, share: float, stderr: float, level: float, **extra: Any) -> dict[str, Any]:
    """The unknown share in the shape every output gives it: ``scope``, ``answer``, ``share``, ``stderr`` and its
    Wald interval clipped to [0, 1] (``ci_low``, ``ci_high``), then ``extra`` keys.

    Examples
    --------
    >>> from designer.estimation.groups import Noncompliance, share_record
    >>> from designer.vocabulary import NoncomplianceScope
    >>> record = share_record(Noncompliance(NoncomplianceScope.CARRIERS, "no"), 0.2, 0.05, 0.95)
    >>> record["scope"], record["share"], round(record["ci_low"], 4), round(record["ci_high"], 4)
    ('carriers', 0.2, 0.102, 0.298)
    """
    low, high = wald_interval(share, stderr, level, low=0.0, high=1.0)
    return {"scope": rule.scope.value, "answer": rule.answer, "share": share, "stderr": stderr, "ci_low": float(low),
            "ci_high": float(high), **extra}


def estimate_groups(mechanisms: Mapping[str, Mechanism], counts: SurveyCounts, *,
                    noncompliance: Any = None, cov: Any = None, level: float = 0.95) -> GroupEstimate:
    """The shares (and the non-compliant share) from groups that answer through different mechanisms.

    Parameters
    ----------
    mechanisms : mapping of str to Mechanism
        Each group's ``(k, F_g)`` mechanism (Def 3.1), over the same inputs.
    counts : SurveyCounts
        The answers over the stacked columns: group ``g``'s answer in its column ``j`` is column
        ``offsets[g] + j`` of :func:`stack_mechanisms` (weights and clusters as in :func:`estimate_survey`).
    noncompliance : str or Noncompliance, optional
        ``"carriers:ANSWER"`` or ``"everyone:ANSWER"``.
    cov : {None, "oim", "opg", "robust"}
        As in :func:`designer.estimation.survey_design.estimate_survey`.
    level : float

    Returns
    -------
    GroupEstimate

    Examples
    --------
    >>> import numpy as np
    >>> import designer
    >>> from designer.estimation.groups import estimate_groups
    >>> from designer.estimation.survey_design import SurveyCounts
    >>> designs = {"a": designer.Q_WRR(np.log(4)), "b": designer.Q_WRR(np.log(2))}
    >>> counts = SurveyCounts.from_rows(4, [0] * 260 + [1] * 740 + [2] * 330 + [3] * 670)

    With some carriers answering no whatever they are told (``carriers:no``), the two groups identify both the
    prevalence and that share; solved by hand: ``0.8 t + 0.2 (1 - pi) = 0.26`` and ``2/3 t + 1/3 (1 - pi) = 0.33`` with
    ``t = pi (1 - s)`` give ``pi = 0.32`` and ``s = 0.515625``:

    >>> fit = estimate_groups(designs, counts, noncompliance="carriers:no")
    >>> fit.estimate.round(6).tolist(), round(float(fit.noncompliance["share"]), 6)
    ([0.32, 0.68], 0.515625)
    """
    rule = None if noncompliance is None else Noncompliance.parse(noncompliance)
    first = next(iter(mechanisms.values()))
    k = first.k
    if rule is not None and rule.scope is NoncomplianceScope.CARRIERS:
        if k != 2 or rule.answer not in first.inputs:
            raise InvalidArgumentError("carriers:ANSWER needs two inputs, ANSWER one of them (the carriers hold the "
                                       f"other); the inputs are {list(first.inputs)}")
    stacked, offsets = stack_mechanisms(mechanisms, rule)
    if counts.weighted.size != len(stacked.focal):
        raise InvalidArgumentError(f"counts must cover the {len(stacked.focal)} stacked columns, got "
                                   f"{counts.weighted.size}")
    fit, cov_shares = fit_survey(stacked, counts, cov=cov, level=level)
    theta = fit.estimate
    cov_classes = cov_shares if fit.status != "not_identified" else None
    # the prevalence of each input as a linear (or, for the non-compliant share, rational) function of the classes
    jac = np.zeros((k, theta.size))
    jac[:, :k] = np.eye(k)
    low, high = theta[:k].copy(), theta[:k].copy()
    warnings = list(fit.warnings)
    extra = None
    if rule is not None:
        c = theta[k]
        if rule.scope is NoncomplianceScope.CARRIERS:
            trait = 1 - first.inputs.index(rule.answer)
            jac[trait, k] = 1.0  # carriers = compliant carriers + non-compliant
            carriers = theta[trait] + c
            share = c / carriers if carriers > 0 else math.nan
            grad = np.zeros(theta.size)
            if carriers > 0:
                grad[trait], grad[k] = -c / carriers**2, theta[trait] / carriers**2
            low[trait] = high[trait] = carriers
        else:
            share, grad = c, np.eye(theta.size)[k]
            high = high + c
            warnings.append(everyone_warning(c, rule.answer))
            jac_high = jac.copy()
            jac_high[:, k] = 1.0  # high = compliant holders + every non-compliant respondent
        se_share = math.sqrt(max(float(grad @ cov_classes @ grad), 0.0)) if cov_classes is not None else math.nan
        extra = share_record(rule, share, se_share, level)
    estimate = jac @ theta
    if cov_classes is not None:
        stderr = np.sqrt(np.maximum(np.diag(jac @ cov_classes @ jac.T), 0.0))
        ci_low, ci_high = wald_interval(estimate, stderr, level, low=0.0, high=1.0)
        if rule is None:  # the shares themselves: the plain fit's intervals (the profile's near an edge)
            ci_low, ci_high = fit.ci_low, fit.ci_high
    else:
        stderr = np.full(k, np.nan)
        ci_low, ci_high = jac @ fit.ci_low, np.minimum(jac @ fit.ci_high, 1.0)
        if fit.identified_low is not None and fit.identified_high is not None:
            low, high = jac @ fit.identified_low, np.minimum(jac @ fit.identified_high, 1.0)
    loglik = fit.loglik + stacking_constant(float(counts.weighted.sum()), len(offsets))
    bounds = None
    if rule is not None and rule.scope is NoncomplianceScope.EVERYONE:
        bounds = prevalence_bounds(first.inputs, low, high, jac, jac_high, cov_classes, level)
    return GroupEstimate(inputs=first.inputs, estimate=estimate, stderr=stderr, ci_low=np.asarray(ci_low),
                         ci_high=np.asarray(ci_high), low=low, high=high, noncompliance=extra,
                         groups=tuple(mechanisms), group_sizes=answers_per_group(counts, offsets),
                         classes=dataclasses.replace(fit), loglik=loglik, status=fit.status,
                         warnings=tuple(warnings), variance=fit.variance, level=level, bounds=bounds)
