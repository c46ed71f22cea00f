"""Whether a design lets every share be estimated (:class:`Identification`), and the fix when it does not: the red
flag the studio shows on every step."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .state import Released

__all__ = ["ALIKE", "PRACTICAL_RATIO", "Identification", "identify"]

#: A share counts as not identified in practice when its variance is this many times the mean variance of
#: k-ary randomized response at the same budget and prior (the textbook design, which identifies every share).
PRACTICAL_RATIO = 1e4
#: Rows of two inputs that differ by no more than this in any chance "answer alike".
ALIKE = 1e-6


@dataclass(frozen=True)
class Identification:
    """Whether a design identifies every share, share by share, and what to do when it does not.

    A share is not identified when its variance per respondent is infinite, or when it is more than
    :data:`PRACTICAL_RATIO` times the mean variance of k-ary randomized response at the same budget and prior:
    its answers then differ from another input's only by chances of the order of float rounding, and no survey
    could be large enough.
    """

    inputs: tuple[str, ...]
    share_variances: tuple[float, ...]
    mean_variance: float
    textbook: float
    poor: tuple[str, ...]
    alike: tuple[tuple[str, ...], ...]
    fix: str
    fix_objective: str | None = None
    per_share: bool = True

    @property
    def ok(self) -> bool:
        return not self.poor

    def words(self) -> str:
        """The red flag's sentence (empty when every share is identified)."""
        if self.ok:
            return ""
        shares = _listing(self.poor)
        if self.alike:
            why = "; ".join(f"{_listing(g)} are answered alike (their chances differ by less than one in a million)"
                            for g in self.alike)
        else:
            why = "the answers carry (almost) no information about them"
        finite = [v for x, v in zip(self.inputs, self.share_variances) if x in self.poor and math.isfinite(v)]
        size = ""
        if finite and len(finite) == len(self.poor):
            n = 1.959963984540054**2 * max(finite) / 0.05**2
            size = (f" Estimating {'it' if len(self.poor) == 1 else 'them'} to within 0.05 would take about "
                    f"{n:.1e} respondents (a textbook design at this budget: about "
                    f"{math.ceil(1.959963984540054**2 * self.textbook / 0.05**2):,}).")
        return (f"The share{'s' if len(self.poor) > 1 else ''} of {shares} cannot be estimated from its answers: "
                f"{why}.{size}")


def _listing(names: tuple[str, ...] | list[str]) -> str:
    names = list(names)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def identify(released: Released) -> Identification:
    """The :class:`Identification` of a released design at its planning prior."""
    from ..closed_forms import krr_variance

    mech = released.mechanism
    result = released.result
    prior = np.asarray(released.prior, dtype=float)
    eps = released.epsilon
    k = len(prior)
    textbook = krr_variance(eps, k, prior=prior) if math.isfinite(eps) and eps > 0 else math.inf
    inputs = tuple(result.problem.inputs if result is not None else mech.inputs)
    per_share = True
    per = result.share_variances if result is not None else None
    if per is not None:
        shares = np.array([per[x] for x in inputs], dtype=float)
        per_share = mech is not None
    elif mech is not None and result is None:  # a loaded file: the variances designer reports for a design
        from ..optimal.objectives import share_variances

        shares = np.asarray(share_variances(mech, prior, released.semantics)[0], dtype=float)
    else:
        shares = np.full(k, math.nan)
        per_share = False
    limit = PRACTICAL_RATIO * textbook
    poor = tuple(x for x, v in zip(inputs, shares) if not math.isnan(v) and not v <= limit)
    alike: list[tuple[str, ...]] = []
    if poor and mech is not None:
        groups: list[list[int]] = []
        for i in range(mech.k):
            for g in groups:
                if float(np.max(np.abs(mech.matrix[g[0]] - mech.matrix[i]))) <= ALIKE:
                    g.append(i)
                    break
            else:
                groups.append([i])
        alike = [tuple(mech.inputs[i] for i in g) for g in groups if len(g) > 1]
    fix, objective = _fix(released, poor)
    mean = float(np.mean(shares)) if shares.size else math.nan
    if result is not None and result.variance is not None:
        mean = float(result.variance)  # the number the command line prints
    return Identification(inputs, tuple(float(v) for v in shares), mean, float(textbook), poor, tuple(alike), fix,
                          objective, per_share)


def _fix(released: Released, poor: tuple[str, ...]) -> tuple[str, str | None]:
    """What to do about a design that does not identify every share, and the objective that would."""
    from ..vocabulary import Objective

    if not poor:
        return "", None
    result = released.result
    if result is None:
        return ("Design one for your question instead: edit the question in step 1 (the studio then designs a "
                "mechanism that estimates every share).", None)
    current = str(result.problem.objective)
    known = {o.value for o in Objective}
    for better in ("variance", "max_variance"):
        if better in known and current != better:
            from .phrases import objective_words

            return (f"Fix: in step 1, choose \"{objective_words(better).split(':')[0]}\" as what the design should "
                    "favour (it keeps every share estimable), or raise the budget.", better)
    if current != "truthful" and "truthful" in known:
        return ("Fix: in step 1, choose \"Most respondents report exactly their true answer\" as what the design "
                "should favour, or give flatter expected shares, or raise the budget.", "truthful")
    return ("Fix: raise the budget, or allow more answers (step 1), so that every true answer is answered "
            "differently.", None)
