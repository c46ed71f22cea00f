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

__all__ = ["ASYMPTOTIC_TOL", "check_by_simulation"]

#: The simulated mean squared error differs from the asymptotic variance by more than this share: the planned n,
#: computed from the asymptotic variance, is off by about as much (the plan says so).
ASYMPTOTIC_TOL = 0.10


def check_by_simulation(accuracy: Accuracy, n: int, reps: int, level: float = 0.95, *, seed: int | None = None,
                        detect: float | None = None, alpha: float = 0.05, share: int = 0,
                        estimator: str = "mle") -> dict[str, float]:
    """``reps`` simulated surveys of ``n`` respondents through the mechanism (SLDP set answers), analysed with the
    ``estimator`` the survey will use: ``"mle"`` (by EM, the Wald interval at the estimate) or ``"posterior"``
    (the posterior mean under the uniform Dirichlet prior and its equal-tailed credible interval,
    :func:`designer.estimation.posterior.posterior_shares`). The coverage of the ``level`` intervals of every
    share, their mean half-width, the simulated mean squared error summed over the shares (``mse``, per
    respondent: times ``n``) beside the asymptotic one the plan's n rests on (``asymptotic``, the MLE's
    ``sum_x Var_x``, Thm 3.9's information) and their ratio ``mse_ratio`` (above ``1 + ASYMPTOTIC_TOL`` the planned
    n is too small by about that factor, below ``1 - ASYMPTOTIC_TOL`` larger than needed), and with ``detect`` the
    rejection rate of the Wald test when the share is ``prior + detect`` (the achieved power; MLE only).

    Examples
    --------
    Warner's design at eps = 1 (truthful probability ``e / (e + 1)``), planned at a prior of 30% yes:

    >>> import designer
    >>> from designer import planning
    >>> accuracy = planning.accuracy_of(designer.Q_WRR(1.0), "sldp", [0.3, 0.7])
    >>> check = planning.check_by_simulation(accuracy, 2000, 200, seed=1)
    >>> sorted(check), check["reps"]
    (['asymptotic', 'coverage', 'coverage_all_shares', 'mean_half_width', 'mse', 'mse_ratio', 'reps'], 200.0)
    """
    from ..estimation.sampling import as_rng
    from ..estimation.shares import em, estimator_variance

    if accuracy.semantics is not Semantics.SLDP and not accuracy.mechanism.is_bayesian:
        raise PlanningError(f"{shown('check')} simulates set answers and their MLE: under WLDP the answers come from "
                            "an unknown credal member, so there is no interval to check; plan under SLDP")
    n, reps = check_int(n, "n", low=1), check_int(reps, "reps", low=2)
    if estimator not in ("mle", "posterior"):
        raise PlanningError(f"estimator must be 'mle' or 'posterior', not {estimator!r}")
    if estimator == "posterior" and detect is not None:
        raise PlanningError("the simulated power is the Wald test's, of the MLE: check the posterior without detect")
    rng, z, mech = as_rng(seed), two_sided_z(level), accuracy.mechanism

    def surveys(prior: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64],
                                                     NDArray[np.float64]]:
        """Estimates, interval half-widths over z, interval centres ``(reps, k)``."""
        counts = rng.multinomial(n, prior @ mech.matrix, size=reps).astype(np.float64)
        if estimator == "posterior":
            from ..estimation.posterior import posterior_shares

            fits = [posterior_shares(mech.matrix, c, seed=int(rng.integers(2**31))) for c in counts]
            mean = np.array([f.mean for f in fits])
            half = np.array([(f.ci_high - f.ci_low) / 2 for f in fits])
            centre = np.array([(f.ci_high + f.ci_low) / 2 for f in fits])
            return mean, half / z, centre
        est = em(mech.matrix, counts, tol=1e-12, max_iter=20_000)[0]
        se = np.empty_like(est)
        for r, e in enumerate(est):  # the Wald interval an analyst computes: Fisher information at the estimate
            at = np.clip(e, 1e-9, None)
            se[r] = np.sqrt(np.asarray(estimator_variance(mech, at / at.sum(), n, reduce="none")))
        return est, se, est

    est, se, centre = surveys(accuracy.prior)
    covered = np.abs(centre - accuracy.prior) <= z * se
    mse = n * float(np.mean(np.sum((est - accuracy.prior) ** 2, axis=1)))
    asymptotic = n * float(np.sum(estimator_variance(mech, accuracy.prior, n, reduce="none")))
    out = {"coverage": float(covered.mean()), "coverage_all_shares": float(np.all(covered, axis=1).mean()),
           "mean_half_width": float((z * se).max(axis=1).mean()), "reps": float(reps),
           "mse": mse, "asymptotic": asymptotic, "mse_ratio": mse / asymptotic if asymptotic > 0 else float("nan")}
    if detect is not None:
        alt = _share_prior(accuracy.prior, share, float(accuracy.prior[share]) + detect)
        est1, se1, _ = surveys(alt)
        reject = np.abs(est1[:, share] - accuracy.prior[share]) > two_sided_z(1 - alpha) * se1[:, share]
        out["power"] = float(reject.mean())
    return out
