"""The streamed Newton fit of :mod:`designer.regression.chunked`: the log-likelihood, score and Hessian summed
over chunks, one pass over the data per Newton step (docs/theory.md section 9.3)."""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from ..estimation.survey_design import variance_words
from ..exceptions import RegressionError
from ..mechanism import Mechanism
from ..vocabulary import Covariance, Semantics, WeightKind
from .data import answer_columns, prepare
from .design import build_rows
from .fit_result import RegressionResult, _shares, _start, fit_statistics, judge
from .fit_terms import in_covariates
from .flat import PassedSearch
from .identify import Coordinates, Moments, Standardization, plan_design, standardization
from .likelihood import Likelihood, decrement_tolerance, fit_newton
from .passes import Final, Part, RowSpec, Sums, design_moments, final_parts, local_limits, local_sums, merge_final
from .variance import identified_covariance, on_terms

__all__ = ["MAX_PASSES", "START_LIMIT", "streamed_fit"]

#: Most passes over the data the streamed Newton fit makes before it reports ``not_converged``.
MAX_PASSES = 60
#: A sample's estimate larger than this (in absolute value) is not used as the start (separation in the sample).
START_LIMIT = 30.0


class _Streamed:
    """The log-likelihood, score and Hessian at a parameter vector from ``summer`` (one pass over the data, here or
    on a cluster), the last one kept: the Newton step and its line search share it."""

    def __init__(self, summer: Callable[[NDArray[np.float64]], Sums]) -> None:
        self.summer = summer
        self.passes = 0
        self._last: tuple[bytes, Sums] | None = None

    def sums(self, params: NDArray[np.float64]) -> Sums:
        key = np.asarray(params, dtype=np.float64).tobytes()
        if self._last is not None and self._last[0] == key:
            return self._last[1]
        out = self.summer(params)
        self.passes += 1
        self._last = (key, out)
        return out

    def loglike(self, params: NDArray[np.float64]) -> float:
        return self.sums(params).loglik


def streamed_fit(formula: str, chunks: Callable[[], Any], mechanism: Mechanism, sample: Any, dropped: int, *, lhs: str,
                 rhs: str, extra: list[str], weights: str | None, kind: WeightKind, missing: str,
                 reference: str | None, semantics: str, allocation: str | float, level: float,
                 answers: Mapping[str, Sequence[str]] | None, cov: str | None, cluster: str | None,
                 plan: Any = None, levels: Mapping[str, Sequence[Any]] | None = None) -> RegressionResult:
    """Newton steps, each one pass over the data, from the fit of the first pass's sample. With a cluster
    ``plan`` (:class:`~designer.regression.remote.ClusterPlan`) and the text columns' ``levels`` the passes run
    on the cluster, one part a task, unless the formula has a stateful transform (``center``, ``standardize``,
    splines), which needs the whole data: then they run here."""
    import patsy

    from ..estimation.sampling import precise_distributions

    sem = Semantics.parse(semantics, "semantics")
    precise = sem is Semantics.WLDP
    channel = precise_distributions(mechanism, allocation) if precise else mechanism.matrix
    reference = mechanism.inputs[-1] if reference is None else str(reference)
    if reference not in mechanism.inputs:
        raise RegressionError(f"reference {reference!r} is not an input of the mechanism {list(mechanism.inputs)}")
    ref = mechanism.inputs.index(reference)
    frequency = weights is not None and kind is WeightKind.FREQUENCY
    chosen = Covariance.settle(cov, sampling_weights=weights is not None and not frequency,
                               clusters=cluster is not None)

    small, rewritten, _ = prepare(rhs, lhs, sample.reset_index(drop=True), "drop", extra=extra)
    scale = 1.0
    if weights is not None and not frequency:  # sampling weights: one constant for every chunk, the sample's mean
        import pandas as pd

        drawn = pd.to_numeric(small[weights], errors="coerce").to_numpy(dtype=np.float64)
        drawn = drawn[np.isfinite(drawn) & (drawn > 0)]
        if drawn.size:
            top = float(drawn.max())
            scale = top * float(np.mean(drawn / top))
        small = small.assign(**{weights: pd.to_numeric(small[weights], errors="coerce") / scale})
    rows = RowSpec(lhs=lhs, rhs=rhs, missing=missing, extra=tuple(extra), mechanism=mechanism, precise=precise,
                   answers=dict(answers or {}), weights=weights, kind=kind, cluster=cluster, weight_scale=scale)
    spec = None
    if plan is not None and levels is not None:
        from .remote import PartSpec, reference_frame, stateful

        spec = PartSpec(rows=rows, reader=plan.reader, reader_kwargs=dict(plan.reader_kwargs),
                        rewritten=rewritten, ref=reference_frame(small, levels), channel=channel, reference=ref)
        info = spec.design_info()
        if stateful(info):
            spec = None
    try:
        if spec is None:
            info = patsy.incr_dbuilder(rewritten, lambda: (data for _, data, _ in rows.prepared(chunks())),
                                       eval_env=patsy.EvalEnvironment([{"np": np}]), NA_action="raise")
    except patsy.PatsyError as exc:
        raise RegressionError(f"formula {rhs!r}: {str(exc).strip().splitlines()[0]}") from None
    names = [str(c).replace('Q("', "").replace('")', "") for c in info.column_names]

    def built() -> Iterator[Part]:
        return rows.parts(chunks(), info)

    common = (mechanism, small, dropped, info, names, channel, ref, reference, sem, frequency, chosen, kind, weights,
              lhs, precise, answers, cluster, level)
    if spec is not None:
        from .remote import remote_passes

        return _streamed_passes(formula, remote_passes(plan, spec, frequency), *common)
    with tempfile.TemporaryDirectory(prefix="designer-regress-") as folder:
        cache = _PartCache(Path(folder), built)
        return _streamed_passes(formula, _LocalPasses(cache.parts, channel, ref, frequency), *common)


@dataclass(frozen=True)
class _LocalPasses:
    """The streamed fit's passes over the chunks here (:class:`~designer.regression.remote.RemotePasses` on a
    cluster): the design's sums, then the Newton passes and the last pass in the fit's coordinates."""

    source: Callable[[], Iterator[Part]]
    channel: NDArray[np.float64]
    ref: int
    frequency: bool
    factor: float = 1.0  # every weight multiplied by it (sampling weights to mean 1 over every row)

    def parts(self) -> Iterator[Part]:
        for z, codes, w, labels in self.source():
            yield z, codes, (w if w is None or self.factor == 1.0 else w * self.factor), labels

    def moments(self, std: Standardization) -> tuple[Moments, Moments, float]:
        return design_moments(self.parts, self.channel, std, self.frequency)

    def rescaled(self, factor: float) -> _LocalPasses:
        return dataclasses.replace(self, factor=self.factor * factor)

    def passes(self, transform: Coordinates) -> tuple[Any, Any]:
        def finaler(params: NDArray[np.float64], meat: bool, clustered: bool) -> Final:
            piece = final_parts(self.parts, self.channel, self.ref, params, frequency=self.frequency, meat=meat,
                                clustered=clustered, transform=transform)
            return merge_final([piece], meat=meat, clustered=clustered)
        return local_sums(self.parts, self.channel, self.ref, transform), finaler

    def limits(self, transform: Coordinates, params: NDArray[np.float64], directions: NDArray[np.float64]
               ) -> NDArray[np.float64]:
        return local_limits(self.parts, self.channel, self.ref, params, directions, transform)


class _PartCache:
    """The chunks' design rows, answer columns, weights and cluster labels, built once and kept on disk (a
    temporary folder, removed with the fit): later passes read arrays instead of parsing the data again. A
    chunk that cannot be written (a full disk) is simply built again on every pass."""

    def __init__(self, folder: Path, built: Callable[[], Iterator[Part]]) -> None:
        self.folder, self.built, self.count, self.complete = folder, built, 0, False

    def parts(self) -> Iterator[Part]:
        if self.complete:
            for i in range(self.count):
                with np.load(self.folder / f"{i}.npz", allow_pickle=True) as f:
                    z = f["z"] if "z" in f else _sparse(f)
                    w = f["w"] if "w" in f else None
                    labels = f["labels"] if "labels" in f else None
                    yield z, f["codes"], w, labels
            return
        count, stored = 0, True
        for z, codes, w, labels in self.built():
            if stored:
                try:
                    arrays: dict[str, Any] = {"codes": codes}
                    if sp.issparse(z):
                        arrays.update(data=z.data, indices=z.indices, indptr=z.indptr, shape=np.array(z.shape))
                    else:
                        arrays["z"] = z
                    if w is not None:
                        arrays["w"] = w
                    if labels is not None:
                        arrays["labels"] = labels
                    np.savez(self.folder / f"{count}.npz", **arrays)
                except OSError:
                    stored = False
            count += 1
            yield z, codes, w, labels
        self.count, self.complete = count, stored


def _sparse(f: Any) -> Any:
    return sp.csr_matrix((f["data"], f["indices"], f["indptr"]), shape=tuple(f["shape"]))


def _streamed_passes(formula: str, source: Any, mechanism: Mechanism, small: Any,
                     dropped: int, info: Any, names: list[str], channel: NDArray[np.float64], ref: int,
                     reference: str, sem: Semantics, frequency: bool, chosen: Covariance, kind: WeightKind,
                     weights: str | None, lhs: str, precise: bool, answers: Mapping[str, Sequence[str]] | None,
                     cluster: str | None, level: float) -> RegressionResult:
    """The design's verdict, the Newton passes, the estimate's status and its variance (see :func:`streamed_fit`).
    ``source``: the passes here or on a cluster (``moments(std)``, then ``passes(coordinates)``: the summer of
    :class:`_Streamed` and the last pass ``params, meat, clustered -> Final``)."""
    # the coordinates: standardized from the sample, judged on the sums of every row (one verdict with the others)
    codes_small = answer_columns(mechanism, small[lhs].to_numpy(), precise=precise, words=answers)
    w_small = None if weights is None else small[weights].to_numpy(dtype=np.float64)
    z_small = build_rows(info, small)
    std = standardization(z_small, w_small if frequency else None)
    total, informative, weight = source.moments(std)
    if weights is not None and not frequency and weight > 0:  # the sample's mean weight was a guess: make it exact
        source = source.rescaled(total.weight / weight)
    plan = plan_design(total, std, names, informative=informative)
    coordinates = Coordinates(std, plan.kept)
    summer, finaler = source.passes(coordinates)
    streamed = _Streamed(summer)
    # the start: the sample's fit in memory, in the same coordinates
    lik_small = Likelihood(coordinates(z_small), channel[:, codes_small], ref, w_small)
    start = _start(lik_small, channel, codes_small)
    guess, _, ok = fit_newton(lik_small, start)
    params = guess if ok and np.all(np.isfinite(guess)) and np.abs(guess).max() < START_LIMIT else start
    params, iterations, decrement_ok = _newton(streamed, params)
    final = finaler(params, chosen is not Covariance.OIM, cluster is not None)
    if cluster is not None and final.clusters < 2:
        raise RegressionError(f"cluster column {cluster!r} has {final.clusters} cluster; a cluster-robust variance "
                              "needs at least 2 (and is only trustworthy with many)")
    kept_names = [names[j] for j in plan.kept]
    fit, shown = judge(streamed.loglike, params, -streamed.sums(params).hessian, decrement_ok, final.norms, channel,
                       list(mechanism.inputs), reference, kept_names, gram=final.gram, counts=final.totals)
    full, warning = (identified_covariance(chosen, fit.spectrum, lambda: final.meat, final.clusters,
                                           final.respondents) if fit.spectrum is not None
                     else (np.full_like(fit.covariance, np.nan), None))
    outcomes = [x for x in mechanism.inputs if x != reference]
    null_loglik = _shares(channel, np.arange(channel.shape[1]), final.totals)[1]
    result = fit_statistics(params, on_terms(full, fit), kept_names, outcomes, level, shown,
                            loglik=streamed.loglike(params), null_loglik=null_loglik, n=final.respondents,
                            k=channel.shape[0], sandwich=chosen is Covariance.ROBUST)
    result = dataclasses.replace(result, status=fit.status, warnings=fit.warnings + ((warning,) if warning else ()))
    search = None
    if weights is None or frequency:  # a likelihood: its flat directions are searched in one more pass
        inverse = fit.spectrum.inverse() if fit.spectrum is not None else np.asarray(fit.covariance)
        search = PassedSearch(streamed.loglike(params), inverse,
                              lambda directions: source.limits(coordinates, params, directions))
    result = in_covariates(result, std, plan, names, outcomes, diagnosis=fit, variance=full, search=search)
    return dataclasses.replace(
        result, iterations=iterations, method="newton", reference=reference,
        outcomes=tuple(mechanism.inputs), semantics=sem.value, formula=formula, design_info=info,
        dropped=dropped, variance=variance_words(chosen, final.clusters, kind if weights is not None else None))


def _newton(streamed: _Streamed, params: NDArray[np.float64]) -> tuple[NDArray[np.float64], int, bool]:
    """Newton steps with a halving line search, one pass per trial point, until the decrement is below
    :data:`~designer.regression.likelihood.DECREMENT_TOL` (``True``) or :data:`MAX_PASSES` passes (``False``).
    Where the information is not positive definite, it is damped (Levenberg) until it is."""
    current = streamed.sums(params)
    iterations = 0
    while streamed.passes < MAX_PASSES:
        info = -current.hessian
        scale = max(float(np.abs(np.diag(info)).max()), 1e-300)
        damping = 0.0
        while True:
            try:
                chol = np.linalg.cholesky(info + damping * scale * np.eye(info.shape[0]))
                break
            except np.linalg.LinAlgError:
                damping = 1e-8 if damping == 0.0 else damping * 10
                if damping > 1e8:
                    return params, iterations, False
        step = np.linalg.solve(chol.T, np.linalg.solve(chol, current.score))
        if damping == 0.0 and float(current.score @ step) <= decrement_tolerance(current.loglik):  # the last step
            return params + step, iterations, True
        t = 1.0
        while True:
            trial = streamed.sums(params + t * step)
            if trial.loglik >= current.loglik or streamed.passes >= MAX_PASSES:
                break
            t /= 2
            if t < 1e-6:
                return params, iterations, False
        if trial.loglik < current.loglik:
            return params, iterations, False
        params, current, iterations = params + t * step, trial, iterations + 1
    return params, iterations, False
