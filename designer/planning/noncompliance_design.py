"""Designs for surveys that estimate non-compliance too: the groups' mechanisms and the split, within a budget
(docs/theory.md section 10.3).

The two-group designs of the field (the stochastic lie detector, cheater detection, the unrelated question with an
unknown prevalence) fix their randomization probabilities by convention (2/12 and 10/12; 0.3 and 0.7) and
split the sample in halves, and most of them are not differentially private at any budget: a carrier of the
lie detector's design never answers no. Here each group answers through a binary mechanism
``[[a, 1 - a], [b, 1 - b]]`` (rows yes, no; answers {yes}, {no}) that is ``eps``-private, and the four
probabilities and the split are chosen to minimise the variance of the prevalence with the unknown share
estimated too (:func:`designer.planning.split.split_variances`), at an assumed prevalence and share.

The ``eps``-private binary mechanisms are the polygon ``a e^-eps <= b <= a e^eps``,
``1 - (1 - a) e^eps <= b <= 1 - (1 - a) e^-eps``: each group is written ``(a, t)`` with ``b`` the point at
``t`` between the polygon's lower and upper edges above ``a``, so the search is over the unit cube (L-BFGS-B
from many starts). The budget is shrunk by a relative 1e-9 in the search, and every group's mechanism is then
certified ``eps``-private in exact arithmetic (:func:`designer.privacy.is_private` with ``exact=True``): a design
that cannot be certified is not returned.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._internal.validation import check_real
from ..estimation.groups import Noncompliance
from ..exceptions import InvalidArgumentError
from ..mechanism import Mechanism
from ..privacy import eps_shafer, is_private
from ..results import FitStatus, Result, TableData
from ..vocabulary import NoncomplianceScope
from .sizes import PlanningError
from .split import SplitDesign, split_variances

__all__ = ["NoncomplianceDesign", "binary", "binary_variance", "design_for_noncompliance", "textbook_within_budget"]

LABELS = ("yes", "no")
#: Random starts of the search (with the structured ones); the best local optimum wins.
STARTS = 40
#: The budget the search works to, relative to the one asked (so that rounding never crosses it).
SHRINK = 1 - 1e-9


def binary(a: float, b: float) -> Mechanism:
    """``[[a, 1 - a], [b, 1 - b]]`` over inputs and answers yes, no (Def 3.1, every answer a single label)."""
    return Mechanism(np.array([[a, 1 - a], [b, 1 - b]]), inputs=list(LABELS), frame=list(LABELS), focal=[1, 2])


def _edges(a: float, eps: float) -> tuple[float, float]:
    """The lowest and highest ``b`` with ``[[a, 1-a], [b, 1-b]]`` ``eps``-private."""
    e = math.exp(eps)
    return max(a / e, 1 - (1 - a) * e, 0.0), min(a * e, 1 - (1 - a) / e, 1.0)


def _point(a: float, t: float, eps: float) -> tuple[float, float]:
    low, high = _edges(a, eps)
    return a, low + t * (high - low)


@dataclass(frozen=True)
class NoncomplianceDesign(Result):
    """Each group's certified mechanism, the split, and the variance of the prevalence per respondent.

    A :class:`~designer.results.Result` whose ``status`` is :attr:`FitStatus.OPTIMAL
    <designer.results.FitStatus.OPTIMAL>`: the probabilities and the split minimise the prevalence's variance
    (the best of many local searches), and each group's mechanism is certified ``epsilon``-private in exact
    arithmetic (a design that cannot be is never returned).

    Attributes
    ----------
    epsilon : float
    rule : Noncompliance
    prior : float
        The prevalence assumed (of the first input, ``yes``).
    share : float
        The unknown share assumed.
    mechanisms : dict of str to Mechanism
        ``"1"`` and ``"2"``, each certified ``epsilon``-private (SLDP, exact).
    fractions : (2,) ndarray
    variance : float
        Of the prevalence's estimate, per respondent (``n`` respondents: ``variance / n``).
    """

    epsilon: float
    rule: Noncompliance
    prior: float
    share: float
    mechanisms: dict[str, Mechanism]
    fractions: NDArray[np.float64]
    variance: float
    status: FitStatus = FitStatus.OPTIMAL
    warnings: tuple[str, ...] = ()

    title = "Design for non-compliance"

    def __post_init__(self) -> None:
        self._check_status()

    def table(self) -> TableData:
        """A row per group: ``group, yes_if_yes, yes_if_no, fraction, eps_shafer``."""
        groups = self.to_dict()["groups"]
        columns = ["group", "yes_if_yes", "yes_if_no", "fraction", "eps_shafer"]
        return columns, [[name, *(g[c] for c in columns[1:])] for name, g in groups.items()]

    def to_dict(self) -> dict[str, Any]:
        """``epsilon``, ``rule``, ``prior``, ``share``, ``variance`` and each group's probabilities, fraction and
        loss."""
        return {"epsilon": self.epsilon, "rule": f"{self.rule.scope.value}:{self.rule.answer}",
                "prior": self.prior, "share": self.share, "variance": self.variance,
                "groups": {name: {"yes_if_yes": float(m.matrix[0, 0]), "yes_if_no": float(m.matrix[1, 0]),
                                  "fraction": float(f), "eps_shafer": eps_shafer(m)}
                           for (name, m), f in zip(self.mechanisms.items(), self.fractions)}}


def _variance(mechs: dict[str, Mechanism], fractions: NDArray[np.float64], rule: Noncompliance, prior: float,
              share: float) -> float:
    design = SplitDesign(mechanisms=mechs, fractions=fractions, rule=rule, share=share)
    value = float(split_variances(design, [prior, 1 - prior])[0])
    return value if math.isfinite(value) else math.inf


def _yes_rate(a: float, b: float, scope: NoncomplianceScope, forced: float, prior: float, share: float
              ) -> tuple[float, NDArray[np.float64]]:
    """A binary group's probability of yes and its gradient in (prevalence, share)."""
    if scope is NoncomplianceScope.CARRIERS:
        lam = prior * ((1 - share) * a + share * forced) + (1 - prior) * b
        return lam, np.array([(1 - share) * a + share * forced - b, prior * (forced - a)])
    honest = prior * a + (1 - prior) * b
    return (1 - share) * honest + share * forced, np.array([(1 - share) * (a - b), forced - honest])


def binary_variance(groups: Sequence[tuple[float, float]], fractions: Sequence[float], rule: Noncompliance,
                    prior: float, share: float) -> float:
    """The variance per respondent of the prevalence (under ``everyone``, of the compliant holders' share) from
    binary groups ``(a, b)`` (:func:`binary`) with ``fractions``, the share estimated too: the two-parameter
    information ``sum_g f_g grad lambda_g grad lambda_g' / (lambda_g (1 - lambda_g))`` inverted (1e12 where it is
    singular or a group's yes rate is 0 or 1)."""
    forced = 1.0 if rule.answer == "yes" else 0.0
    info = np.zeros((2, 2))
    for (a, b), f in zip(groups, fractions):
        lam, grad = _yes_rate(a, b, rule.scope, forced, prior, share)
        if not 0.0 < lam < 1.0:
            return 1e12
        info += f * np.outer(grad, grad) / (lam * (1 - lam))
    det = info[0, 0] * info[1, 1] - info[0, 1] ** 2
    if not det > 1e-12 * max(info[0, 0] * info[1, 1], 1e-300):
        return 1e12
    jac = np.array([1.0, 0.0]) if rule.scope is not NoncomplianceScope.EVERYONE else np.array([1 - share, -prior])
    cov = np.array([[info[1, 1], -info[0, 1]], [-info[0, 1], info[0, 0]]]) / det
    return float(min(jac @ cov @ jac, 1e12))


def design_for_noncompliance(epsilon: float, rule: Any = "carriers:no", *, prior: float = 0.3, share: float = 0.2,
                             seed: int = 0, starts: int = STARTS, keep_meaning: bool = True) -> NoncomplianceDesign:
    """The two ``epsilon``-private groups and the split with the smallest variance of the prevalence, the unknown
    share estimated too (module docstring).

    Parameters
    ----------
    epsilon : float
        Budget of each group's mechanism (nats, SLDP; every respondent answers once, through one group).
    rule : str or Noncompliance
        ``"carriers:no"`` (the lie detector), ``"everyone:no"`` (cheater detection); the answer must be ``yes``
        or ``no``.
    prior : float
        The prevalence (share of ``yes``) to plan at, in (0, 1).
    share : float
        The unknown share to plan at, in [0, 1).
    seed : int
        Seed of the random starts.
    starts : int
        Random starts besides the structured ones.
    keep_meaning : bool
        Keep ``yes`` the answer that points to the trait in both groups (``b <= a``; default). The model takes the
        non-compliant to give the same answer in every group; a group whose answers are reversed (``b > a``) would
        make that answer the revealing one and the model's assumption implausible, though it fits the model
        better (the optimum then reverses one group: give ``False`` to see it).

    Returns
    -------
    NoncomplianceDesign
        Raises :class:`~designer.planning.sizes.PlanningError` when no start gives a finite variance or a group's
        mechanism cannot be certified.
    """
    from scipy.optimize import minimize

    eps = check_real(epsilon, "epsilon", low=0.0, low_open=True)
    prior = check_real(prior, "prior", low=0.0, high=1.0, low_open=True, high_open=True)
    share = check_real(share, "share", low=0.0, high=1.0, high_open=True)
    parsed = Noncompliance.parse(rule)
    if parsed.answer not in LABELS or (parsed.scope is not NoncomplianceScope.EVERYONE and parsed.answer != "no"):
        raise InvalidArgumentError("the design is for carriers:no (the trait's carriers, yes, deny it), everyone:no "
                                   f"or everyone:yes; got {parsed.scope.value}:{parsed.answer}")
    work = eps * SHRINK

    def groups_of(x: NDArray[np.float64]) -> tuple[tuple[float, float], tuple[float, float]]:
        edges = [_edges(x[0], work), _edges(x[2], work)]
        if keep_meaning:  # b <= a: yes stays the answer that points to the trait in both groups
            edges = [(low, min(high, a)) for (low, high), a in zip(edges, (x[0], x[2]))]
        return ((x[0], edges[0][0] + x[1] * (edges[0][1] - edges[0][0])),
                (x[2], edges[1][0] + x[3] * (edges[1][1] - edges[1][0])))

    def objective(x: NDArray[np.float64]) -> float:
        x = np.clip(x, 0.0, 1.0)
        return binary_variance(groups_of(x), (x[4], 1 - x[4]), parsed, prior, share)

    def unpack(x: NDArray[np.float64]) -> tuple[dict[str, Mechanism], NDArray[np.float64]]:
        (a1, b1), (a2, b2) = groups_of(np.clip(x, 0.0, 1.0))
        return {"1": binary(a1, b1), "2": binary(a2, b2)}, np.array([x[4], 1 - x[4]])

    rng = np.random.default_rng(seed)
    structured = [np.array([1.0, 0.0, 0.5, 1.0, 0.5]), np.array([0.0, 1.0, 1.0, 0.0, 0.5]),
                  np.array([1.0, 0.0, 1.0, 0.5, 0.5]), np.array([0.5, 0.0, 0.5, 1.0, 0.5])]
    bounds = [(1e-6, 1 - 1e-6), (0.0, 1.0)] * 2 + [(1e-4, 1 - 1e-4)]  # a constant group would lose an answer
    best: tuple[float, NDArray[np.float64]] | None = None
    for start in [*structured, *rng.random((starts, 5))]:
        start = np.clip(start, [b[0] for b in bounds], [b[1] for b in bounds])
        res = minimize(objective, start, method="L-BFGS-B", bounds=bounds,
                       options={"maxiter": 2000, "ftol": 1e-15, "gtol": 1e-12})
        if best is None or float(res.fun) < best[0]:
            best = (float(res.fun), np.asarray(res.x))
    if best is None or not best[0] < 1e12:
        raise PlanningError(f"no pair of {eps:g}-private binary designs identifies the prevalence and the share here")
    mechs, fractions = unpack(best[1])
    order = sorted(mechs, key=lambda g: -float(mechs[g].matrix[0, 0] - mechs[g].matrix[1, 0]))  # the groups swap
    fractions = np.array([fractions[int(g) - 1] for g in order])  # freely: group 1 separates the inputs more
    mechs = {str(i + 1): mechs[g] for i, g in enumerate(order)}
    for name, mech in mechs.items():
        if not is_private(mech, eps, semantics="sldp", exact=True):
            raise PlanningError(f"group {name}'s mechanism could not be certified {eps:g}-private in exact "
                                "arithmetic; it is not returned")
    return NoncomplianceDesign(epsilon=eps, rule=parsed, prior=prior, share=share, mechanisms=mechs,
                               fractions=fractions, variance=_variance(mechs, fractions, parsed, prior, share))


def textbook_within_budget(probabilities: Sequence[float], rule: Any, epsilon: float, *, prior: float,
                           share: float) -> tuple[dict[str, Mechanism], float]:
    """A textbook two-group design made ``epsilon``-private by answering uniformly at random with the smallest
    probability that suffices, with halves; and its variance of the prevalence per respondent.

    ``probabilities``: the lie detector's ``p_g`` (non-carriers answer no with ``p_g``, carriers yes) for
    ``carriers``, cheater detection's forced-yes ``p_g`` (users yes, non-users yes with ``p_g``) for ``everyone``.
    """
    from scipy.optimize import brentq

    parsed = Noncompliance.parse(rule)
    eps = check_real(epsilon, "epsilon", low=0.0, low_open=True)
    mechs = {}
    for name, p in zip(("1", "2"), probabilities):
        a, b = (1.0, 1 - p) if parsed.scope is NoncomplianceScope.CARRIERS else (1.0, p)

        def excess(lam: float, a: float = a, b: float = b) -> float:
            return eps_shafer(binary((1 - lam) * a + lam / 2, (1 - lam) * b + lam / 2)) - eps * SHRINK

        lam = 0.0 if excess(1e-15) <= 0 else brentq(excess, 1e-15, 1.0, xtol=1e-15)
        for _ in range(200):  # rounding near 0 or 1 can cross the budget: a little more noise until certified
            mech = binary((1 - lam) * a + lam / 2, (1 - lam) * b + lam / 2)
            if is_private(mech, eps, semantics="sldp", exact=True):
                break
            lam = min(1.0, lam * 1.01 + 1e-15)
        else:
            raise PlanningError(f"the textbook group {name} made {eps:g}-private could not be certified")
        mechs[name] = mech
    return mechs, _variance(mechs, np.array([0.5, 0.5]), parsed, prior, share)
