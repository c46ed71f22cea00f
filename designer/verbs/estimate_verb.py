"""The estimate front door: the shares of a survey's inputs from its randomized answers, read from a file, a folder
of Parquet parts, a data frame or a list, through one design or several (docs/theory.md section 8).

The estimator is chosen here once, from what was given: precise answers (``semantics="wldp"``) get each share's
identified set; several designs, non-compliance or an unrelated question the joint fit of the groups; weights,
clusters or a variance choice the survey fit; plain answers the maximum-likelihood shares from their counts.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from .._internal.bundled import resolve
from .._internal.keywords import read_number, say, shown
from ..estimation.share_results import ShareEstimates, ShareTestReport
from ..estimation.survey_reading import dataset_counts, read_survey, survey_source
from ..exceptions import DataError, DesignerError, InvalidArgumentError, InvalidArgumentTypeError
from ..mechanism import Mechanism
from ..results import FitStatus, check_level

if TYPE_CHECKING:  # pragma: no cover
    from ..estimation.answers import AnswerVocabulary
    from ..estimation.shares import Estimate

__all__ = ["estimate"]


@dataclass(frozen=True)
class _Design:
    """A design the answers were drawn with: its mechanism, the words its answers may be written in, its name."""

    mechanism: Mechanism
    words: Mapping[str, Sequence[str]] = field(default_factory=dict)
    name: str = "mechanism"

    def vocabulary(self, *, precise: bool = False) -> AnswerVocabulary:
        from ..estimation.answers import AnswerVocabulary

        return AnswerVocabulary(self.mechanism, self.words, precise=precise)


def _design(value: Any) -> _Design:
    """A mechanism file's path, a :class:`~designer.Mechanism`, a design's result or a read mechanism file, as a
    :class:`_Design`."""
    from ..release.files import MechanismFile, open_mechanism_file

    if isinstance(value, (str, os.PathLike)):
        file = open_mechanism_file(value)
        return _Design(file.mechanism, dict(file.words), os.fspath(value))
    if isinstance(value, MechanismFile):
        return _Design(value.mechanism, dict(value.words), value.path)
    if isinstance(value, Mechanism):
        return _Design(value)
    mech, problem = getattr(value, "mechanism", None), getattr(value, "problem", None)
    if isinstance(mech, Mechanism):  # a DesignResult: the design's mechanism and its [answers] words
        return _Design(mech, {w: tuple(labels) for w, labels in getattr(problem, "answers", ())})
    if problem is not None:
        raise DataError(f"the design has no mechanism (status {getattr(value, 'status', '?')}): nothing to estimate "
                        "with")
    raise InvalidArgumentTypeError(f"mechanism must be a file path, a Mechanism or a DesignResult (or a dict of them "
                                   f"by group), not {type(value).__name__}")


def _parse_test(test: Any, mech: Mechanism) -> tuple[int, float]:
    """``"SHARE=VALUE"`` (or a ``(share, value)`` pair) as the input's index and the null value."""
    text = f"{test[0]}={test[1]}" if isinstance(test, (tuple, list)) and len(test) == 2 else str(test)
    label, sep, value = text.partition("=")
    try:
        null = read_number(value)
        if not sep or not 0.0 < null < 1.0:
            raise ValueError
    except ValueError:
        raise InvalidArgumentError(f"{shown('test')} {text!r} must read SHARE=VALUE with VALUE strictly between 0 "
                                   f"and 1, e.g. {shown('test', ('yes=0.3', repr('yes=0.3')))}") from None
    if label.strip() not in mech.inputs:
        raise InvalidArgumentError(f"{shown('test')} {text!r}: {label.strip()!r} is not an input; the inputs are "
                                   f"{list(mech.inputs)}")
    return mech.inputs.index(label.strip()), null


def _share_test(mech: Mechanism, s: int, null: float, counts: NDArray[np.float64] | None, est: Estimate
                ) -> ShareTestReport:
    """The Wald test of share ``s`` and, from the answer ``counts``, the likelihood-ratio test (none under weights
    or clusters, whose pseudo-likelihood is not a likelihood)."""
    from ..estimation.share_tests import share_test, wald_test

    wald, wald_p = wald_test(float(est.estimate[s]), float(est.stderr[s]), null)
    if counts is None:
        return ShareTestReport(mech.inputs[s], null, wald, wald_p,
                               note=f"no likelihood-ratio test with {est.variance}: the weighted or clustered answers "
                                    "give a pseudo-likelihood")
    result = share_test(mech, counts, est.estimate, est.stderr, s, null)
    return ShareTestReport(mech.inputs[s], null, wald, wald_p, lr_statistic=result.lr_statistic,
                           lr_pvalue=result.lr_pvalue, constrained=dict(zip(mech.inputs, result.constrained.tolist())),
                           lr_converged=result.converged)


def _dask_map(scheduler: str) -> Callable[[Callable[..., Any], list[tuple[Any, ...]]], list[Any]]:
    """Run ``function(*item)`` for every item on the Dask cluster at ``scheduler``, the results in order
    (:func:`designer.regression.regress_input.map_on_cluster`: a worker's error is its one line)."""
    import functools

    from ..regression.regress_input import map_on_cluster

    return functools.partial(map_on_cluster, scheduler)


def estimate(data: Any, mechanism: Any = None, *, column: str = "response", semantics: str = "sldp",
             level: float = 0.95, missing: str = "error", test: Any = None, method: str = "newton",
             weights: str | None = None, weight_kind: str = "sampling", cluster: str | None = None,
             cov: str | None = None, group: str | None = None, noncompliance: str | None = None,
             unrelated: str | None = None, share_groups: Sequence[str] | None = None,
             manifest: str | os.PathLike[str] | None = None, scheduler: Any = None) -> ShareEstimates:
    """The shares of the inputs from randomized answers (``designer estimate``).

    Under Shafer's semantics the answers are set-valued, each focal set ``E`` an outcome with probability
    ``pi . m(E)`` (Def 3.1), and the shares are the maximum-likelihood ``pi`` with its Wald intervals (Remark 3.8);
    under Walley's (``semantics="wldp"``) the answers are precise and only an interval of each share is identified
    (Def 3.13). Files are read in chunks (any size); a folder of Parquet parts is counted part by part.

    Parameters
    ----------
    data : str, path-like, pandas.DataFrame or sequence
        The randomized answers: a CSV, Parquet, Arrow, SPSS, Stata or SAS file, a folder of Parquet parts, a data
        frame, or the answers themselves (``"{yes}"``, ``"{yes,no}"``, a bare label, the card's words, label tuples,
        or column indices of the mechanism, refused where its labels are integers too) of ``n`` respondents.
    mechanism : str, path-like, Mechanism, DesignResult or dict of them
        The ``(k, F)`` design the answers were drawn with; a dict ``{group: design}`` for several designs in one
        survey (with ``group``). Not with ``manifest``.
    column : str, default "response"
        The answers' column.
    semantics : {"sldp", "wldp"}
        ``sldp``: set answers, the maximum-likelihood shares; ``wldp``: precise answers, identified sets.
    level : float, default 0.95
        Confidence level of the intervals, in (0, 1).
    missing : {"error", "drop"}
        A row without an answer (empty, ``NA``): an error naming its line, or dropped (and counted).
    test : str or (str, float), optional
        ``"SHARE=VALUE"``: the Wald and likelihood-ratio tests of that share (one design only).
    method : {"newton", "em", "convex"}
        How the likelihood is maximised (one design).
    weights : str, optional
        Column of positive row weights, of kind ``weight_kind`` (``sampling``: the weighted pseudo-likelihood
        with a sandwich variance; ``frequency``: a row stands for that many respondents).
    weight_kind : {"sampling", "frequency"}
    cluster : str, optional
        Column naming each row's cluster: cluster-robust standard errors.
    cov : {None, "oim", "opg", "robust"}
        The variance. Default: ``oim``, the inverse observed information at the estimate (with one design or
        several), without weights or clusters and under frequency weights; ``robust`` (the only choice there) under
        sampling weights or clusters. Every output names it (``variance``).
    group : str, optional
        Column naming each respondent's design (a key of ``mechanism``).
    noncompliance : str, optional
        ``"carriers:ANSWER"`` or ``"everyone:ANSWER"``: respondents who answer ANSWER regardless (two or more groups
        identify their share).
    unrelated : str, optional
        The unrelated-question design with an unknown prevalence of the answer ``unrelated``.
    share_groups : sequence of str, optional
        The groups the unknown share applies to (default: all).
    manifest : str or path-like, optional
        ``randomize``'s release manifest instead of ``mechanism``: the design (or the drawn channel of a repaired
        release) of ``column``.
    scheduler : str or callable, optional
        With a folder of Parquet parts: a Dask scheduler's address, each part counted by a worker (the same counts
        exactly); or a function ``map(function, items)`` returning ``[function(*item) for item in items]``.

    Returns
    -------
    ShareEstimates
        ``to_dict()`` is ``designer estimate --format json``'s object, ``table()`` its CSV table, ``summary()``
        its table output, ``conf_int(level)`` the ``(k, 2)`` intervals, ``status`` the fit's.

    Raises
    ------
    DataError
        Data that cannot be read as asked (a missing column, an answer the design cannot give, a bad weight), one
        line naming the file and its line.
    DesignerError
        Options that do not go together, a mechanism file that cannot be read.

    Examples
    --------
    The answers themselves (or a file, or a DataFrame with a ``response`` column) and the design they were drawn
    with, here ``Q_2x3(0.6, 0.2)`` (truthful 0.6, lie 0.2, don't know 0.2):

    >>> import designer
    >>> q = designer.Q_2x3(0.6, 0.2)
    >>> fit = designer.estimate(["{yes}"] * 30 + ["{no}"] * 50 + ["{yes,no}"] * 20, q)
    >>> str(fit.status), fit.n
    ('converged', 100)
    >>> fit.estimate.round(4).tolist()  # Eq 2: (n2 q - n1 p) / ((n1 + n2)(q - p))
    [0.25, 0.75]
    """
    from ..vocabulary import Covariance

    level = check_level(level)
    if str(semantics).lower() not in ("sldp", "wldp"):
        raise InvalidArgumentError(f"semantics must be 'sldp' or 'wldp', not {semantics!r}")
    wldp = str(semantics).lower() == "wldp"
    if missing not in ("error", "drop"):
        raise InvalidArgumentError(f"missing must be 'error' or 'drop', not {missing!r}")
    if method not in ("newton", "em", "convex", "posterior"):
        raise InvalidArgumentError(f"method must be 'newton', 'em', 'convex' or 'posterior', not {method!r}")
    if method == "posterior" and (isinstance(mechanism, Mapping) or group or noncompliance or unrelated is not None
                                  or share_groups or weights or cluster or cov or test or semantics == "wldp"):
        raise InvalidArgumentError(say("{method=posterior} takes one mechanism's unweighted set answers, without "
                                       "{test}: drop the other options, or use {method=newton}"))
    if manifest is not None:
        from ..estimation.manifest_channel import manifest_mechanism

        if mechanism is not None:
            raise InvalidArgumentError(say("give {mechanism} or {manifest}, not both: the manifest names the channel "
                                           "the release was drawn from"))
        mechanism = manifest_mechanism(manifest, column, data)
    elif mechanism is not None and isinstance(data, str | os.PathLike):
        from ..estimation.manifest_channel import refuse_plain_design

        for design in (mechanism.values() if isinstance(mechanism, Mapping) else [mechanism]):
            refuse_plain_design(data, column, design)
    if mechanism is None:
        raise InvalidArgumentError(say("give {mechanism=FILE} (the design the answers were drawn with) or "
                                       "{manifest=FILE} (randomize's release manifest)"))
    parts_map = _dask_map(scheduler) if isinstance(scheduler, str) else scheduler
    if isinstance(mechanism, Mapping) or group or noncompliance or unrelated is not None or share_groups:
        if test:
            raise InvalidArgumentError(say("{test} applies to one mechanism's shares; several mechanisms and "
                                           "{noncompliance} report their estimates with intervals"))
        return _estimate_groups(data, mechanism, column=column, wldp=wldp, level=level, missing=missing,
                                weights=weights, weight_kind=weight_kind, cluster=cluster, cov=cov, group=group,
                                noncompliance=noncompliance, unrelated=unrelated, share_groups=share_groups,
                                method=method)
    design = _design(mechanism)
    mech = design.mechanism
    source = survey_source(resolve(data, "data", error=DataError) if isinstance(data, str | os.PathLike) else data,
                           column, mech, precise=wldp)  # a file that exists, else designer's own by name
    files = {"": design.name}
    if wldp:
        if weights or cluster or cov:
            raise InvalidArgumentError(say("{weights}, {cluster} and {cov} apply to set answers ({semantics=sldp}); "
                                           "the identified set of precise answers has no standard errors"))
        if test:
            raise InvalidArgumentError(say("{test} needs an estimate: precise answers ({semantics=wldp}) identify only "
                                           "a set of shares"))
        from ..estimation.shares import identified_set

        counts, dropped = dataset_counts(source, column, design.vocabulary(precise=True), design.words,
                                         missing=missing, parts_map=parts_map)
        return ShareEstimates(fit=identified_set(mech, counts, level=level), semantics="wldp", dropped=dropped,
                              mechanisms=files, refit=lambda lv: identified_set(mech, counts, level=lv))
    tested = None if not test else _parse_test(test, mech)
    if parts_map is not None and not source.is_folder:
        raise InvalidArgumentError(say("{scheduler} counts the parts of a partitioned Parquet dataset (a folder); "
                                       "{name} is one file: drop {scheduler}", name=source.name))
    if weights or cluster or cov:
        from ..estimation.survey_design import estimate_survey

        if source.is_folder:
            raise InvalidArgumentError(say("{name}: {weights}, {cluster} and {cov} read one file (a folder of parts "
                                           "is counted without them)", name=source.name))
        Covariance.settle(cov, sampling_weights=bool(weights) and weight_kind == "sampling",
                          clusters=bool(cluster))  # a wrong choice is refused before the data are read
        survey, dropped = read_survey(source, column, {"": design.vocabulary()}, [0], len(mech.focal),
                                      weights=weights, weight_kind=weight_kind, cluster=cluster, missing=missing)
        est = estimate_survey(mech, survey, cov=cov, level=level, method=method)
        replicated = bool(weights) and str(getattr(weight_kind, "value", weight_kind)) == "frequency" and not cluster
        # frequency weights are replicated rows: their likelihood is one, and so is its ratio test
        report = None if tested is None else _share_test(mech, *tested, survey.weighted if replicated else None, est)
        return ShareEstimates(fit=est, dropped=dropped, mechanisms=files, weights=weights, cluster=cluster,
                              weight_kind=weight_kind if weights else None, test=report, status=est.status,
                              warnings=est.warnings,
                              refit=lambda lv: estimate_survey(mech, survey, cov=cov, level=lv, method=method))
    from ..estimation.shares import estimate_sldp

    counts, dropped = dataset_counts(source, column, design.vocabulary(), design.words, missing=missing,
                                     parts_map=parts_map)
    if not counts.sum() > 0:
        raise DataError(f"{source.name}: no answers to estimate from")
    if method == "posterior":
        from ..estimation.posterior import posterior_estimate

        post = posterior_estimate(mech, counts, level=level)
        return ShareEstimates(fit=post, dropped=dropped, mechanisms=files, status=post.status, warnings=post.warnings,
                              refit=lambda lv: posterior_estimate(mech, counts, level=lv))
    est = estimate_sldp(mech, counts, level=level, method=method)
    report = None if tested is None else _share_test(mech, *tested, counts, est)
    return ShareEstimates(fit=est, dropped=dropped, mechanisms=files, test=report, status=est.status,
                          warnings=est.warnings, refit=lambda lv: estimate_sldp(mech, counts, level=lv, method=method))


def _estimate_groups(data: Any, mechanism: Any, *, column: str, wldp: bool, level: float, missing: str,
                     weights: str | None, weight_kind: str, cluster: str | None, cov: str | None, group: str | None,
                     noncompliance: str | None, unrelated: str | None, share_groups: Sequence[str] | None,
                     method: str) -> ShareEstimates:
    """Several designs (``{group: design}`` and the ``group`` column), non-compliance or an unrelated question:
    the groups' joint fit (:func:`~designer.estimation.groups.estimate_groups`) or, with one constant unknown
    share, :func:`~designer.regression.constant_share.estimate_share`."""
    from ..estimation.groups import Noncompliance, estimate_groups, stack_mechanisms
    from ..vocabulary import NoncomplianceScope

    if wldp:
        raise InvalidArgumentError(say("several mechanisms, {noncompliance} and {unrelated} apply to set answers "
                                       "({semantics=sldp})"))
    if method != "newton":
        raise InvalidArgumentError(f"method {method!r} applies to one mechanism's shares; several groups are fitted "
                                   "by Newton steps")
    given = dict(mechanism) if isinstance(mechanism, Mapping) else {"": mechanism}
    if len(given) > 1 and not group:
        raise InvalidArgumentError(say("several mechanisms need {group=COLUMN}: the column naming each "
                                       "respondent's mechanism"))
    if unrelated is not None and noncompliance is not None:
        raise InvalidArgumentError(say("{unrelated} and {noncompliance} are two models of the design's one unknown "
                                       "share; give one"))
    if share_groups and unrelated is None and noncompliance is None:
        raise InvalidArgumentError(say("{share_groups} names the groups of an unknown share: give {noncompliance} or "
                                       "{unrelated}"))
    designs = {str(name): _design(m) for name, m in given.items()}
    mechanisms = {name: d.mechanism for name, d in designs.items()}
    stacked, offsets = stack_mechanisms(mechanisms, None)
    source = survey_source(resolve(data, "data", error=DataError) if isinstance(data, str | os.PathLike) else data,
                           column)
    counts, dropped = read_survey(source, column, {name: d.vocabulary() for name, d in designs.items()}, offsets,
                                  len(stacked.focal), group=group, weights=weights, weight_kind=weight_kind,
                                  cluster=cluster, missing=missing)

    def fit(lv: float) -> Any:
        if unrelated is not None or share_groups:
            from ..regression.constant_share import estimate_share

            rule = (Noncompliance(NoncomplianceScope.UNRELATED, unrelated.strip()) if unrelated is not None
                    else Noncompliance.parse(noncompliance))
            return estimate_share(mechanisms, counts, rule, groups=share_groups, cov=cov, level=lv)
        return estimate_groups(mechanisms, counts, noncompliance=noncompliance, cov=cov, level=lv)

    try:
        est = fit(level)
    except DesignerError as exc:
        raise DataError(f"{source.name}: {exc}") from None
    if est.status is FitStatus.SEPARATION:
        est = replace(est, warnings=tuple(_share_words(w) for w in est.warnings))
    return ShareEstimates(fit=est, dropped=dropped, mechanisms={name: d.name for name, d in designs.items()},
                          weights=weights, weight_kind=weight_kind if weights else None, cluster=cluster,
                          status=est.status, warnings=est.warnings, refit=fit)


def _share_words(warning: str) -> str:
    """A warning of the one-share fit (a regression's) in estimate's words: estimate has no --penalty."""
    return warning.replace("Use --penalty firth (Firth's penalized likelihood), or drop or merge those terms",
                           "The share's maximum is at its edge (0 or 1): its logit has no finite maximum, and no "
                           "interval is given")
