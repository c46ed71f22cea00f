"""What a design maximises, evaluated on a mechanism (docs/theory.md, section 5).

The linear objectives are ``sum_x pi_x sum_E G[x, E] M[x, E]`` for a table ``G`` (:func:`objective_matrix`);
``chi2`` is the chi-square information of the answers, and under WLDP (precise answers) that of the least
informative precise mechanism in the credal sets.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import setfunctions as sf
from ..estimation.shares import chi2_information
from ..exceptions import InvalidArgumentError
from ..mechanism import Mechanism
from ..vocabulary import Objective, Semantics
from .problem import DesignProblem

__all__ = ["NAMED_MEMBERS", "VARIANCE_KINDS", "objective_matrix", "objective_value", "reported_variance",
           "share_variances", "variance_figure", "variance_note",
           "walley_worst_binary"]


def objective_matrix(problem: DesignProblem, family: NDArray[np.int64]) -> NDArray[np.float64]:
    """The prior-weighted table ``pi_x G[x, E]`` of a linear objective on the sets ``family``.

    Parameters
    ----------
    problem : DesignProblem
        With a linear objective (not ``chi2``).
    family : (F,) int ndarray
        Bitmasks of the sets (columns).

    Returns
    -------
    (k, F) ndarray
    """
    pi = problem.prior[:, None]
    objective = problem.objective
    if objective is Objective.TRUTHFUL:
        return pi * (family[None, :] == (1 << problem.truth())[:, None])
    if objective is Objective.GAIN:
        assert problem.gain is not None
        return pi * problem.gain[:, family]
    if objective.utility:
        assert problem.utility is not None
        members = sf.members(family, problem.l)  # (F, l)
        u = problem.utility[:, None, :]  # (k, 1, l)
        if objective is Objective.WORST_CASE_UTILITY:
            vals = np.where(members[None], u, np.inf).min(axis=2)
        else:
            vals = np.where(members[None], u, -np.inf).max(axis=2)
        return pi * vals
    raise InvalidArgumentError(f"objective {objective.value!r} is not linear")


def walley_worst_binary(mech: Mechanism) -> Mechanism:
    """The least informative precise mechanism in the credal sets of a binary mechanism (``lambda = 0``).

    Each row's don't-know mass goes to the *other* answer: the worst-case Fisher information ``nu_W`` is
    attained there (docs/theory.md, section 4; Ex 3.7).
    """
    full = (1 << mech.l) - 1
    focal = [int(m) for m in mech.focal]
    out = np.zeros((2, 2))
    for x in range(2):
        for j, m in enumerate(focal):
            v = mech.matrix[x, j]
            if m == full:
                out[x, 1 - x] += v  # frame index of the other input's answer (inputs == frame, k = 2)
            else:
                out[x, m.bit_length() - 1] += v
    return Mechanism(out, inputs=mech.inputs, frame=mech.frame, focal=[1, 2])


def objective_value(problem: DesignProblem, mech: Mechanism) -> float:
    """The problem's objective evaluated on a mechanism.

    ``chi2`` is the chi-square information of the set-valued answers (SLDP), and under WLDP of the least
    informative precise mechanism in the credal sets (two inputs: :func:`walley_worst_binary`). ``variance`` and
    ``max_variance`` are the (weighted) mean and largest variance of the estimated shares or contrasts per
    respondent, the worst over prior scenarios (:func:`designer.optimal.share_variance.variance_objective`; made small,
    the others large); under WLDP, of the least informative precise mechanism for two inputs.

    Examples
    --------
    >>> import designer
    >>> from designer.optimal import objective_value
    >>> problem = designer.DesignProblem(inputs=("yes", "no"), epsilon=1.0, objective="truthful", dont_know=0.2)
    >>> round(objective_value(problem, designer.Q_GWRR(1.0, 0.8)), 6)  # the truthful mass of Cor 3.12's optimum
    0.584847
    >>> warner = designer.DesignProblem(inputs=("yes", "no"), epsilon=1.0, objective="variance")
    >>> round(objective_value(warner, designer.Q_WRR(1.0)), 6)  # Warner's Eq 1 at pi = 1/2: 1/4 + p(1-p)/(2p-1)^2
    1.170674
    """
    if problem.objective.variance:
        from .share_variance import variance_objective

        if problem.semantics is not Semantics.SLDP and not mech.is_bayesian and mech.k == 2 and mech.l == 2:
            return variance_objective(problem, walley_worst_binary(mech))
        return variance_objective(problem, mech)
    if problem.objective is Objective.CHI2:
        if problem.semantics is not Semantics.SLDP and not mech.is_bayesian and mech.k == 2 and mech.l == 2:
            return chi2_information(walley_worst_binary(mech), problem.prior)
        return chi2_information(mech, problem.prior)
    g = objective_matrix(problem, np.asarray(mech.focal, dtype=np.int64))
    return float(np.sum(g * mech.matrix))


#: ``variance_kind`` values (docs/theory.md, section 8): which estimator and which answers the number is about.
VARIANCE_KINDS = {
    "sldp_mle": "asymptotic variance of the MLE from the set-valued answers",
    "wldp_precise_mle": "asymptotic variance of the MLE from precise answers (the credal sets are points)",
    "wldp_worst_case": "worst case over the credal sets of the MLE variance from precise answers (nu_W)",
    "wldp_worst_named": "worst of the named credal members (uniform, lambda = 0, 0.25, ..., 1) of the MLE "
                        "variance from precise answers",
    "wldp_uniform_member": "MLE variance from precise answers of the uniform credal member (each set's mass "
                           "split evenly over its labels; the lambda members need every input among the frame "
                           "labels), a lower bound on the worst case",
    "unavailable": "not computed",
}

#: Members of the credal sets tried for ``wldp_worst_named``.
NAMED_MEMBERS: tuple[str | float, ...] = ("uniform", 0.0, 0.25, 0.5, 0.75, 1.0)


def reported_variance(problem: DesignProblem, mech: Mechanism | None = None, compact: Any = None
                      ) -> tuple[float, str]:
    """The variance designer reports for a design, per respondent, at the problem's prior, and its kind.

    One number per semantics, the same in ``design``, ``compare``, ``sweep`` and the Python result: under
    SLDP the analyst has the set-valued answers, so the asymptotic variance of their MLE (mean over inputs;
    ``Var(pi_hat)`` for two inputs; Remark 3.8). Under WLDP the analyst has precise answers from an
    unknown member of the credal sets (Def 3.13): the worst case over the members. It is exact for two
    inputs (least Fisher information, a convex program; ``nu_W`` of Cor 3.20) and for mechanisms whose
    credal sets are points; otherwise the worst of :data:`NAMED_MEMBERS`, a lower bound on the worst case.

    Returns
    -------
    variance : float
        ``inf`` when some share is not identified.
    kind : str
        A key of :data:`VARIANCE_KINDS`.
    """
    if compact is not None:
        if problem.semantics is Semantics.SLDP:
            return float(compact.variance()), "sldp_mle"
        # Every named member of an invariant mechanism is k-RR-like: truth with probability a, the rest evenly.
        # lambda = 0 gives the smallest a (no set resolves to the truth), hence the largest variance.
        k, a = compact.k, float(compact.A[0])
        b = (1.0 - a) / (k - 1)
        kind = "wldp_precise_mle" if float(np.sum(compact.A[1:]) + np.sum(compact.B[1:])) == 0.0 else "wldp_worst_named"
        return (math.inf if a <= b else (k - 1) / k**2 / (a - b) ** 2), kind
    assert mech is not None
    shares, kind = share_variances(mech, problem.prior, problem.semantics)
    return float(np.mean(shares)), kind


def variance_figure(problem: DesignProblem, mech: Mechanism | None = None, compact: Any = None
                    ) -> tuple[float | None, str, str]:
    """:func:`reported_variance` as a side figure: ``(variance, kind, "")``, or ``(None, "unavailable",
    reason)`` when it cannot be computed. A side figure never withholds a certified design."""
    try:
        variance, kind = reported_variance(problem, mech, compact)
    except Exception as exc:  # any failure of the figure: the design is certified without it
        reason = " ".join(str(exc).split()) or type(exc).__name__
        return None, "unavailable", f"not computed: {reason}"
    return variance, kind, ""


def variance_note(kind: str, reason: str = "") -> str:
    """What a reported variance of ``kind`` is, in words, or ``reason`` when it could not be computed."""
    if kind == "unavailable":
        return reason or "not computed"
    return VARIANCE_KINDS[kind] + ", per respondent, at the prior"


def share_variances(mech: Mechanism, prior: ArrayLike, semantics: Semantics | str
                    ) -> tuple[NDArray[np.float64], str]:
    """Per-share variances, shape ``(k,)``, per respondent at ``prior``, of the estimate designer reports for
    ``semantics`` (see :func:`reported_variance`; their mean is the reported variance), and the kind."""
    from ..estimation.shares import estimator_variance

    pi = np.asarray(prior, dtype=np.float64)
    if Semantics.parse(semantics) is Semantics.SLDP or mech.is_bayesian:
        out = np.asarray(estimator_variance(mech, pi, reduce="none"))
        if not np.all(np.isfinite(out)):
            # a singular information (inputs answering alike): the shares it identifies keep finite variances,
            # read on its range (docs/theory.md 5.7)
            from .share_variance import target_variances

            out = target_variances(np.asarray(mech.matrix, dtype=np.float64), pi, np.eye(mech.k))
        return out, "sldp_mle" if Semantics.parse(semantics) is Semantics.SLDP else "wldp_precise_mle"
    if mech.k == 2 and 0.0 < pi[0] < 1.0:
        if mech.l == 2:
            value = _binary_worst_variance(mech, float(pi[0]))
        else:
            from ..estimation.hypothesis_tests import worst_case_fisher

            info, pr_x, pr_x2 = worst_case_fisher(mech, float(pi[0]))
            value = math.inf if info <= 0.0 else 1.0 / info
            if info < 1e-8:  # the credal sets may share a member: then precise answers carry no information
                from ..credal import contains

                shared = (pr_x + pr_x2) / 2
                if contains(mech, 0, shared, tol=1e-12) and contains(mech, 1, shared, tol=1e-12):
                    value = math.inf
        return np.full(2, value), "wldp_worst_case"
    from ..estimation.sampling import precise_distributions

    # A lambda member moves a set's mass towards the true answer, so it needs every input among the frame
    # labels; otherwise only the uniform member is defined (a lower bound on the worst case all the same).
    named = all(x in mech.frame for x in mech.inputs)
    worst = np.zeros(mech.k)
    for member in NAMED_MEMBERS if named else ("uniform",):
        precise = Mechanism(precise_distributions(mech, member), inputs=mech.inputs, frame=mech.frame,
                            focal=[1 << i for i in range(mech.l)])
        worst = np.maximum(worst, np.asarray(estimator_variance(precise, pi, reduce="none")))
    return worst, "wldp_worst_named" if named else "wldp_uniform_member"


def _binary_worst_variance(mech: Mechanism, pi: float) -> float:
    """Worst case over the credal sets of ``Var(pi_hat)`` for two inputs and a two-label frame.

    A member of row ``x``'s credal set answers the first label with probability ``t_x`` in
    ``[bel_x, pl_x]`` of that label; one precise answer carries the information
    ``I = (t_0 - t_1)^2 / (lam (1 - lam))``, ``lam = pi t_0 + (1 - pi) t_1``, jointly convex in ``(t_0, t_1)``,
    so its minimum over the box is found by a bounded local method from the ``lambda = 0`` corner. Overlapping
    intervals allow ``t_0 = t_1``: no information, variance ``inf``.
    """
    from scipy.optimize import minimize

    bel, pl = mech.bel()[:, 1], mech.pl()[:, 1]  # column 1 = the set {first frame label}
    if bel[0] <= pl[1] and bel[1] <= pl[0]:
        return math.inf
    sign = 1.0 if bel[0] > pl[1] else -1.0  # which row says the first label more often

    def info(t: NDArray[np.float64]) -> float:
        lam = pi * t[0] + (1 - pi) * t[1]
        return float((t[0] - t[1]) ** 2 / max(lam * (1 - lam), 1e-300))

    corner = np.array([bel[0], pl[1]] if sign > 0 else [pl[0], bel[1]])
    best = minimize(info, corner, method="L-BFGS-B", bounds=list(zip(bel, pl)), options={"ftol": 1e-15})
    value = min(info(corner), float(best.fun))
    return math.inf if value <= 0.0 else 1.0 / value
