"""The chunked regression's passes on a cluster, one part of a dataset a task (docs/theory.md section 9.3).

A worker cannot receive the design information the client builds (patsy's ``DesignInfo`` is not picklable), so
it rebuilds it from a small *reference frame*: the client's sample of the data plus one row for every level of
every text column seen in the data, which gives every categorical factor the levels of the whole data. Stateless
formulas (``x``, ``np.log(x)``, ``I(x**2)``, ``C(region)``) then build the same rows everywhere; a formula with a
stateful transform (``center``, ``standardize``, splines), which learns from the data it sees, is passed over
here instead (:func:`stateful`). Each pass sends the parameters out and adds the parts' sums, in part order.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..exceptions import RegressionError
from .identify import Coordinates, Moments, Standardization
from .passes import FinalParts, Part, RowSpec, Sums, design_moments, final_parts, local_limits, local_sums, merge_final

__all__ = ["ClusterPlan", "PartSpec", "RemotePasses", "part_final", "part_moments", "part_sums", "reference_frame",
           "remote_passes", "stateful"]


@dataclass(frozen=True)
class ClusterPlan:
    """How to run a pass on a cluster: ``map(function, items, **shared)`` returns ``function(*item, **shared)``
    for every item in order (e.g. :func:`~designer.regression.regress_input.map_on_cluster` bound to a scheduler),
    the dataset's
    ``parts`` (paths the workers can read) and ``reader(part, **reader_kwargs)``, which yields ``(first_row,
    chunk)`` of one part."""

    map: Callable[..., list[Any]]
    parts: tuple[str, ...]
    reader: Callable[..., Iterator[tuple[int, Any]]]
    reader_kwargs: Mapping[str, Any]


@dataclass(frozen=True)
class PartSpec:
    """What a worker needs to turn its part into design rows: how a chunk becomes rows (``rows``), how to read
    the part, and the formula as patsy reads it with the reference frame to rebuild its design from."""

    rows: RowSpec
    reader: Callable[..., Iterator[tuple[int, Any]]]
    reader_kwargs: Mapping[str, Any]
    rewritten: str
    ref: Any
    channel: NDArray[np.float64]
    reference: int
    transform: Any = None  # the fit's coordinates (:class:`~designer.regression.identify.Coordinates`), once known

    def design_info(self) -> Any:
        """patsy's design information rebuilt from the reference frame."""
        import patsy

        try:
            return patsy.incr_dbuilder(self.rewritten, lambda: iter([self.ref]),
                                       eval_env=patsy.EvalEnvironment([{"np": np}]), NA_action="raise")
        except patsy.PatsyError as exc:
            raise RegressionError(f"formula {self.rows.rhs!r}: {str(exc).strip().splitlines()[0]}") from None


def reference_frame(sample: Any, levels: Mapping[str, Sequence[Any]]) -> Any:
    """``sample`` (prepared rows) plus, for every level of a text column it lacks, a copy of its first row with
    that level: the frame whose design information has every level of the whole data."""
    import pandas as pd

    extra = []
    for column, values in levels.items():
        if column not in sample.columns:
            continue
        have = set(sample[column].astype(str))
        for value in values:
            if str(value) not in have:
                row = sample.iloc[[0]].copy()
                row[column] = value
                extra.append(row)
    return pd.concat([sample, *extra], ignore_index=True) if extra else sample


def stateful(info: Any) -> bool:
    """Whether a factor of the formula learns from the data (a stateful transform: ``center``, splines, ...)."""
    return any(fi.state.get("transforms") for fi in info.factor_infos.values())


def _part_rows(source: str, spec: PartSpec) -> Callable[[], Iterator[Part]]:
    info = spec.design_info()

    def parts() -> Iterator[Part]:
        try:
            yield from spec.rows.parts(spec.reader(source, **spec.reader_kwargs), info)
        except RegressionError as exc:  # a worker names its part and the row in it
            where = "" if exc.row is None else f"row {exc.row + 1}: "
            raise RegressionError(f"{source}: {where}{exc.reason}") from None
    return parts


def part_moments(source: str, *, spec: PartSpec, std: Standardization, frequency: bool
                 ) -> tuple[Moments, Moments, float]:
    """One part's sums of the standardized design rows, all and informative, and its weights' sum (a worker's
    task)."""
    return design_moments(_part_rows(source, spec), spec.channel, std, frequency)


def part_sums(source: str, *, spec: PartSpec, params: NDArray[np.float64]) -> Sums:
    """One part's log-likelihood, score and Hessian at ``params`` (a worker's task)."""
    return local_sums(_part_rows(source, spec), spec.channel, spec.reference, spec.transform)(params)


def part_limits(source: str, *, spec: PartSpec, params: NDArray[np.float64], directions: NDArray[np.float64]
                ) -> NDArray[np.float64]:
    """One part's log-likelihood at infinity along each direction (a worker's task)."""
    return local_limits(_part_rows(source, spec), spec.channel, spec.reference, params, directions, spec.transform)


def part_final(source: str, *, spec: PartSpec, params: NDArray[np.float64], frequency: bool, meat: bool,
               clustered: bool) -> FinalParts:
    """One part's last pass at the estimate (a worker's task)."""
    return final_parts(_part_rows(source, spec), spec.channel, spec.reference, params, frequency=frequency,
                       meat=meat, clustered=clustered, transform=spec.transform)


@dataclass(frozen=True)
class RemotePasses:
    """The streamed fit's passes, each a round of tasks on the cluster (one part a task, added in part order)."""

    plan: ClusterPlan
    spec: PartSpec
    frequency: bool

    def moments(self, std: Standardization) -> tuple[Moments, Moments, float]:
        pieces = self.plan.map(part_moments, [(part,) for part in self.plan.parts], spec=self.spec, std=std,
                               frequency=self.frequency)
        total, informative, weight = pieces[0]
        for a, b, c in pieces[1:]:
            total, informative, weight = total + a, informative + b, weight + c
        return total, informative, weight

    def rescaled(self, factor: float) -> RemotePasses:
        """The passes with every weight multiplied by ``factor`` (sampling weights to mean 1 over every row)."""
        rows = dataclasses.replace(self.spec.rows, weight_scale=self.spec.rows.weight_scale / factor)
        return dataclasses.replace(self, spec=dataclasses.replace(self.spec, rows=rows))

    def passes(self, transform: Coordinates) -> tuple[Any, Any]:
        """The summer and the last pass in the coordinates ``transform``."""
        spec = dataclasses.replace(self.spec, transform=transform)
        items = [(part,) for part in self.plan.parts]

        def summer(params: NDArray[np.float64]) -> Sums:
            pieces = self.plan.map(part_sums, items, spec=spec, params=params)
            return Sums(float(sum(p.loglik for p in pieces)), np.sum([p.score for p in pieces], axis=0),
                         np.sum([p.hessian for p in pieces], axis=0))

        def finaler(params: NDArray[np.float64], meat: bool, clustered: bool) -> Any:
            pieces = self.plan.map(part_final, items, spec=spec, params=params, frequency=self.frequency, meat=meat,
                                   clustered=clustered)
            return merge_final(pieces, meat=meat, clustered=clustered)
        return summer, finaler

    def limits(self, transform: Coordinates, params: NDArray[np.float64], directions: NDArray[np.float64]
               ) -> NDArray[np.float64]:
        """The log-likelihood at infinity along each row of ``directions`` from ``params``, one round of tasks."""
        spec = dataclasses.replace(self.spec, transform=transform)
        pieces = self.plan.map(part_limits, [(part,) for part in self.plan.parts], spec=spec, params=params,
                               directions=directions)
        return np.asarray(np.sum(pieces, axis=0), dtype=np.float64)


def remote_passes(plan: ClusterPlan, spec: PartSpec, frequency: bool) -> RemotePasses:
    """The streamed fit's passes on the cluster (:class:`RemotePasses`)."""
    return RemotePasses(plan, spec, frequency)
