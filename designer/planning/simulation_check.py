"""The simulation check of a plan: surveys simulated at the planned ``n`` and analysed as an analyst would (the
maximum-likelihood estimate and its Wald interval), to confirm the planned coverage, half-width and power."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from .._internal.keywords import shown
from .._internal.numeric import two_sided_z
from .._internal.validation import check_int
from ..exceptions import PlanningError
from ..vocabulary import Semantics
from .sizes import Accuracy, _share_prior

__all__ = ["check_by_simulation"]


def check_by_simulation(accuracy: Accuracy, n: int, reps: int, level: float = 0.95, *, seed: int | None = None,
                        detect: float | None = None, alpha: float = 0.05, share: int = 0) -> dict[str, float]:
    """``reps`` simulated surveys of ``n`` respondents through the mechanism (SLDP set answers, MLE by EM):
    the coverage of the ``level`` intervals of every share, their mean half-width, and with ``detect`` the
    rejection rate of the Wald test when the share is ``prior + detect`` (the achieved power).

    Examples
    --------
    Warner's design at eps = 1 (truthful probability ``e / (e + 1)``), planned at a prior of 30% yes:

    >>> import designer
    >>> from designer import planning
    >>> accuracy = planning.accuracy_of(designer.Q_WRR(1.0), "sldp", [0.3, 0.7])
    >>> check = planning.check_by_simulation(accuracy, 2000, 200, seed=1)
    >>> sorted(check), check["reps"]
    (['coverage', 'coverage_all_shares', 'mean_half_width', 'reps'], 200.0)
    """
    from ..estimation.sampling import as_rng
    from ..estimation.shares import em, estimator_variance

    if accuracy.semantics is not Semantics.SLDP and not accuracy.mechanism.is_bayesian:
        raise PlanningError(f"{shown('check')} simulates set answers and their MLE: under WLDP the answers come from "
                            "an unknown credal member, so there is no interval to check; plan under SLDP")
    n, reps = check_int(n, "n", low=1), check_int(reps, "reps", low=2)
    rng, z, mech = as_rng(seed), two_sided_z(level), accuracy.mechanism

    def surveys(prior: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        counts = rng.multinomial(n, prior @ mech.matrix, size=reps).astype(np.float64)
        est = em(mech.matrix, counts, tol=1e-12, max_iter=20_000)[0]
        se = np.empty_like(est)
        for r, e in enumerate(est):  # the Wald interval an analyst computes: Fisher information at the estimate
            at = np.clip(e, 1e-9, None)
            se[r] = np.sqrt(np.asarray(estimator_variance(mech, at / at.sum(), n, reduce="none")))
        return est, se

    est, se = surveys(accuracy.prior)
    covered = np.abs(est - accuracy.prior) <= z * se
    out = {"coverage": float(covered.mean()), "coverage_all_shares": float(np.all(covered, axis=1).mean()),
           "mean_half_width": float((z * se).max(axis=1).mean()), "reps": float(reps)}
    if detect is not None:
        alt = _share_prior(accuracy.prior, share, float(accuracy.prior[share]) + detect)
        est1, se1 = surveys(alt)
        reject = np.abs(est1[:, share] - accuracy.prior[share]) > two_sided_z(1 - alpha) * se1[:, share]
        out["power"] = float(reject.mean())
    return out
