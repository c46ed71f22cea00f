"""Planning a survey whose respondents are split between several designs (docs/theory.md section 10.2).

Group ``g`` takes a fraction ``f_g`` of the respondents and answers through its mechanism ``M_g``. One respondent
is in group ``g`` and answers ``E`` with probability ``f_g (pi M_g)(E)``, so the per-respondent Fisher
information is ``sum_g f_g I_g``: the groups' informations weighted by their fractions. For the shares alone it
is linear in the fractions and the best split puts everyone in the most informative group; a design with one
unknown share besides the prevalence (the lie detector, cheater detection, the unrelated question with an
unknown prevalence, :mod:`designer.regression.constant_share`) needs two groups to identify it, and its variance
of the prevalence is a convex function of the split (the inverse of an information linear in it), minimised here.
A plan reports the total number of respondents and each group's, ``ceil(f_g n)``: every group at least its
fraction of ``n``, so the variance is at most the planned one.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._internal.validation import check_prior, check_real
from ..estimation.groups import Noncompliance, stack_mechanisms
from ..exceptions import InvalidArgumentError
from ..mechanism import Mechanism
from ..regression.constant_share import share_channels
from ..results import FitStatus, Result, TableData
from ..vocabulary import NoncomplianceScope, Semantics
from .sizes import Accuracy, PlanningError, VarianceFormula, accuracy_of

__all__ = ["SplitDesign", "group_sizes", "share_information", "split_accuracy", "split_variances"]


@dataclass(frozen=True)
class SplitDesign(Result):
    """Several groups' mechanisms, the fraction of respondents in each, and the design's unknown share if any.

    A :class:`~designer.results.Result`: ``status`` is :attr:`FitStatus.OPTIMAL
    <designer.results.FitStatus.OPTIMAL>` for a split chosen by :func:`split_accuracy` (the smallest variance,
    a convex minimisation) and :attr:`FitStatus.EXACT <designer.results.FitStatus.EXACT>` for a given one.

    Attributes
    ----------
    mechanisms : mapping of str to Mechanism
    fractions : (G,) ndarray
        Summing to 1, in the order of ``mechanisms``.
    rule : Noncompliance or None
        ``carriers:a``, ``everyone:a`` or ``unrelated:a`` (the unknown share), or None.
    share : float
        The value of the unknown share the plan assumes (0 without ``rule``).
    groups : tuple of str or None
        The groups the share applies to (None: all).
    chosen : bool
        The fractions were chosen by :func:`split_accuracy` (True) or given.
    """

    mechanisms: Mapping[str, Mechanism]
    fractions: NDArray[np.float64]
    rule: Noncompliance | None = None
    share: float = 0.0
    groups: tuple[str, ...] | None = None
    chosen: bool = False
    status: FitStatus = FitStatus.EXACT
    warnings: tuple[str, ...] = ()

    title = "Split between designs"

    def __post_init__(self) -> None:
        if self.chosen and self.status is FitStatus.EXACT:
            object.__setattr__(self, "status", FitStatus.OPTIMAL)
        self._check_status()

    def table(self, n: int | None = None) -> TableData:
        """``group, fraction, n``: a row per group (``n`` empty without ``n``)."""
        out = self.to_dict(n)
        return ["group", "fraction", "n"], [[name, g["fraction"], g["n"]] for name, g in out["designs"].items()]

    def to_dict(self, n: int | None = None) -> dict[str, Any]:
        """``designs: {NAME: {fraction, n}}``, ``n_total`` and the share assumed (JSON shape of a plan)."""
        sizes = group_sizes(self.fractions, n) if n is not None else [None] * len(self.fractions)
        out: dict[str, Any] = {"designs": {name: {"fraction": float(f), "n": size} for name, f, size in
                                          zip(self.mechanisms, self.fractions, sizes)},
                               "split": "chosen (smallest variance)" if self.chosen else "given"}
        if n is not None:
            out["n_total"] = int(sum(int(s) for s in sizes if s is not None))
        if self.rule is not None:
            out["unknown_share"] = {"scope": self.rule.scope.value, "answer": self.rule.answer,
                                    "assumed": self.share, "groups": list(self.groups or self.mechanisms)}
        return out


def group_sizes(fractions: Sequence[float] | NDArray[np.float64], n: int) -> list[int]:
    """``ceil(f_g n)`` for every group (each at least its fraction of ``n``; a group of fraction 0 gets 0)."""
    return [math.ceil(float(f) * n - 1e-9) if f > 0 else 0 for f in fractions]


def _column_scale(mechanisms: Mapping[str, Mechanism], fractions: Sequence[float] | NDArray[np.float64]
                  ) -> NDArray[np.float64]:
    """Over the stacked columns: ``f_g G`` in group ``g``'s block, turning the stack's ``1/G`` into ``f_g``."""
    return np.concatenate([np.full(m.matrix.shape[1], f * len(mechanisms)) for m, f in
                           zip(mechanisms.values(), fractions)])


def _stacked(mechanisms: Mapping[str, Mechanism], fractions: NDArray[np.float64]) -> Mechanism:
    """The groups' mechanisms side by side, group ``g``'s columns scaled by ``f_g`` (rows sum to 1); a group of
    fraction 0 is left out."""
    kept = {name: m for (name, m), f in zip(mechanisms.items(), fractions) if f > 0}
    base, _ = stack_mechanisms(kept, None)
    scale = _column_scale(kept, [f for f in fractions if f > 0])
    return Mechanism(base.matrix * scale[None, :], inputs=list(base.inputs), frame=list(base.frame),
                     focal=[int(b) for b in base.focal])


def share_information(design: SplitDesign, prior: NDArray[np.float64]) -> NDArray[np.float64]:
    """The per-respondent Fisher information of ``(pi_1 .. pi_{k-1}, s)`` (``(k, k)``) at ``prior`` and the
    assumed share, for a design with an unknown share: ``sum_E grad q_E grad q_E' / q_E`` over the stacked
    answers, ``q_E = f_g sum_x pi_x (A + s D)[x, E]`` (docs/theory.md section 9.4)."""
    assert design.rule is not None
    a, d = share_channels(design.mechanisms, design.rule, design.groups)
    scale = _column_scale(design.mechanisms, design.fractions)
    a, d = a * scale[None, :], d * scale[None, :]
    channel = a + design.share * d
    q = prior @ channel
    grads = np.vstack([channel[:-1] - channel[-1], prior @ d])  # (k, F): d q / d pi_j (j < k-1), d q / d s
    used = q > 1e-300
    return np.asarray((grads[:, used] / q[used]) @ grads[:, used].T)


def split_variances(design: SplitDesign, prior: Any = None, semantics: Semantics | str = "sldp"
                    ) -> NDArray[np.float64]:
    """Each share's variance from one respondent (``(k,)``; ``inf`` where not identified). With an unknown share,
    the shares are the prevalence's (under ``everyone``, the compliant holders' ``(1 - s) pi_x``) with the share
    estimated too."""
    k = next(iter(design.mechanisms.values())).k
    pi = check_prior(prior, k)
    if design.rule is None:
        return np.asarray(accuracy_of(_stacked(design.mechanisms, design.fractions), semantics, pi).per_share)
    if Semantics.parse(semantics) is not Semantics.SLDP:
        raise PlanningError("a design with an unknown share is planned for set answers (semantics sldp)")
    info = share_information(design, pi)
    try:
        cov = np.linalg.inv(info)
        if not np.all(np.isfinite(cov)) or np.linalg.cond(info) > 1e12:
            raise np.linalg.LinAlgError
    except np.linalg.LinAlgError:
        return np.full(k, np.inf)
    jac = np.zeros((k, k))  # d (share x) / d (pi_1 .. pi_{k-1}, s)
    jac[:-1, :-1] = np.eye(k - 1)
    jac[-1, :-1] = -1.0
    if design.rule.scope is NoncomplianceScope.EVERYONE:
        jac[:, :-1] *= 1 - design.share
        jac[:, -1] = -pi
    return np.maximum(np.diag(jac @ cov @ jac.T), 0.0)


def _worst(design: SplitDesign, prior: NDArray[np.float64], semantics: Semantics | str) -> float:
    values = split_variances(design, prior, semantics)
    return float(values.max()) if np.all(np.isfinite(values)) else math.inf


def best_fractions(design: SplitDesign, prior: NDArray[np.float64], semantics: Semantics | str = "sldp"
                   ) -> NDArray[np.float64]:
    """The split minimising the largest share variance (convex in the fractions): the best vertex, then Nelder-Mead
    on the softmax of the fractions from the best of the vertices, the equal split and the given one."""
    from scipy.optimize import minimize

    g = len(design.mechanisms)
    candidates = [np.eye(g)[i] for i in range(g)] + [np.full(g, 1.0 / g), design.fractions]

    def value(f: NDArray[np.float64]) -> float:
        return _worst(dataclasses.replace(design, fractions=f), prior, semantics)

    best = min(candidates, key=value)
    if g == 1:
        return best

    def soft(x: NDArray[np.float64]) -> NDArray[np.float64]:
        e = np.exp(np.append(x, 0.0) - max(float(np.max(x)), 0.0))
        return np.asarray(e / e.sum())

    start = np.log(np.clip(best, 1e-6, None))
    start = start[:-1] - start[-1]
    res = minimize(lambda x: min(value(soft(x)), 1e300), start, method="Nelder-Mead",
                   options={"xatol": 1e-7, "fatol": 1e-12, "maxiter": 4000})
    found = soft(np.asarray(res.x))
    found[found < 1e-9] = 0.0  # a group the optimum leaves empty gets no respondents
    found /= found.sum()
    return found if value(found) <= value(best) else best


def split_accuracy(mechanisms: Mapping[str, Mechanism], *, fractions: Mapping[str, float] | None = None,
                   prior: Any = None, noncompliance: Any = None, unrelated: str | None = None,
                   share: float | None = None, share_groups: Sequence[str] | None = None,
                   semantics: Semantics | str = "sldp") -> tuple[Accuracy, SplitDesign]:
    """The :class:`~designer.planning.sizes.Accuracy` of a survey split between ``mechanisms``.

    Parameters
    ----------
    mechanisms : mapping of str to Mechanism
        Each group's ``(k, F_g)`` mechanism (Def 3.1), over the same inputs.
    fractions : mapping of str to float, optional
        Each group's share of the respondents (summing to 1); None: the split with the smallest variance.
    prior : array_like or mapping, optional
        The shares (default uniform).
    noncompliance, unrelated : str, optional
        ``"carriers:a"`` / ``"everyone:a"``, or ``a``: the design's unknown share (at most one).
    share : float
        The unknown share's value the plan assumes (required with ``noncompliance`` or ``unrelated``).
    share_groups : sequence of str, optional
        The groups the share applies to (default: all).
    semantics : {"sldp", "wldp"}

    Returns
    -------
    (Accuracy, SplitDesign)
        The accuracy per respondent of the whole survey (sample sizes from it count all respondents), and the
        split (``SplitDesign.to_dict(n)`` gives each group's size).
    """
    names = list(mechanisms)
    if not names:
        raise InvalidArgumentError("give at least one mechanism")
    if noncompliance is not None and unrelated is not None:
        raise InvalidArgumentError("noncompliance and unrelated are two models of one unknown share; give one")
    rule = (Noncompliance.parse(noncompliance) if noncompliance is not None else
            Noncompliance(NoncomplianceScope.UNRELATED, str(unrelated).strip()) if unrelated is not None else None)
    if rule is not None:
        if share is None:
            raise InvalidArgumentError("a design with an unknown share is planned at an assumed value of it: give "
                                       "share (the variance of the prevalence depends on it)")
        share = check_real(share, "share", low=0.0, high=1.0, high_open=True)
    elif share is not None or share_groups is not None:
        raise InvalidArgumentError("share and share_groups describe an unknown share: give noncompliance or unrelated")
    if fractions is None:
        given = np.full(len(names), 1.0 / len(names))
    else:
        unknown = sorted(set(fractions) - set(names))
        missing = [g for g in names if g not in fractions]
        if unknown or missing:
            raise InvalidArgumentError(f"the split must give every group a fraction: groups {names}, "
                                       f"split {sorted(fractions)}")
        given = np.array([check_real(fractions[g], f"fraction of {g}", low=0.0, high=1.0) for g in names])
        if abs(given.sum() - 1.0) > 1e-9:
            raise InvalidArgumentError(f"the fractions sum to {given.sum():.6g}; they must sum to 1")
    design = SplitDesign(mechanisms=dict(mechanisms), fractions=given, rule=rule, share=float(share or 0.0),
                         groups=None if share_groups is None else tuple(str(g) for g in share_groups))
    k = mechanisms[names[0]].k
    pi = check_prior(prior, k)
    if fractions is None:
        design = dataclasses.replace(design, fractions=best_fractions(design, pi, semantics), chosen=True,
                                     status=FitStatus.OPTIMAL)
    per_share = split_variances(design, pi, semantics)
    stacked = _stacked(design.mechanisms, design.fractions)
    accuracy = dataclasses.replace(accuracy_of(stacked, semantics, pi), per_share=per_share,
                                   formula=VarianceFormula.ASYMPTOTIC,
                                   model=lambda p: split_variances(design, p, semantics))
    return accuracy, design
