"""The posterior of the input distribution under a Dirichlet prior, for small samples (docs/theory.md, section
8.5, "The posterior mean for small samples": the prior, the sampler, what the credible interval means, and when it
beats the MLE's mean squared error or loses coverage).

The answers' likelihood is a mixture, ``L(pi) = prod_E (sum_x pi_x M[x, E])^c_E`` (Def 3.1; Shafer semantics,
Remark 3.8). Under the prior ``pi ~ Dirichlet(alpha, ..., alpha)`` the posterior of the additive log-ratios
``theta_x = log(pi_x / pi_k)`` has the log density ``sum_E c_E log (sum_x pi_x M[x, E]) + alpha sum_x log pi_x``
(the prior's ``alpha - 1`` and the Jacobian of the map). It is sampled by an independence Metropolis-Hastings
sampler whose proposal is a multivariate t (4 degrees of freedom) about the posterior mode, scaled by the inverse
of the negative Hessian there (inflated by 1.5). The estimate is the mean of the draws of ``pi``, the interval their
equal-tailed credible interval. (Data augmentation, allotting the answers to the inputs given ``pi``, mixes too
slowly where the answers carry little information: at k-RR, k = 16, eps 0.5 its intervals covered 0.81.)

Where the MLE sits on the boundary of the simplex or the answers carry little information, the posterior mean
shrinks toward the prior's centre and its mean squared error is below the MLE's (benchmarks/README.md, "Finite
samples"); at large ``n`` the two agree to ``O(1/n)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..exceptions import InvalidArgumentError

__all__ = ["POSTERIOR_BURN", "POSTERIOR_DRAWS", "Posterior", "posterior_estimate", "posterior_shares"]

#: Draws of the independence Metropolis-Hastings chain kept, and discarded first (docs/theory.md section 8.5).
POSTERIOR_DRAWS = 4000
POSTERIOR_BURN = 500


@dataclass(frozen=True)
class Posterior:
    """The posterior of ``pi`` under a symmetric Dirichlet prior.

    Attributes
    ----------
    mean, sd, ci_low, ci_high : (k,) ndarray
        Posterior mean and standard deviation of every share, and the equal-tailed ``level`` credible interval.
    prior : float
        The Dirichlet parameter ``alpha`` of every input.
    level : float
    draws : int
        Draws of the chain kept.
    mcse : (k,) ndarray
        Monte Carlo standard error of ``mean`` (batch means over 20 batches).
    acceptance : float
        The share of the kept proposals the sampler accepted.

    Examples
    --------
    >>> import numpy as np
    >>> from designer.estimation.posterior import posterior_shares
    >>> post = posterior_shares(np.array([[0.75, 0.25], [0.25, 0.75]]), [60, 40], draws=1000)
    >>> post.level, post.draws, bool(post.ci_low[0] < post.mean[0] < post.ci_high[0])
    (0.95, 1000, True)
    """

    mean: NDArray[np.float64]
    sd: NDArray[np.float64]
    ci_low: NDArray[np.float64]
    ci_high: NDArray[np.float64]
    prior: float
    level: float
    draws: int
    mcse: NDArray[np.float64]
    acceptance: float


def posterior_shares(matrix: ArrayLike, counts: ArrayLike, *, prior: float = 1.0, level: float = 0.95,
                     draws: int = POSTERIOR_DRAWS, burn: int = POSTERIOR_BURN, seed: int = 0) -> Posterior:
    """The posterior of the shares from counts of answers through a design (module docstring).

    Parameters
    ----------
    matrix : (k, m) array_like
        The design's matrix ``M[x, E]`` (a :class:`~designer.Mechanism`'s ``matrix``), rows summing to 1.
    counts : (m,) array_like
        Whole numbers of answers per column of ``matrix``.
    prior : float, default 1.0
        ``alpha`` of the symmetric Dirichlet prior (1: uniform on the simplex; 0.5: Jeffreys' for a multinomial).
    level : float, default 0.95
        Level of the equal-tailed credible intervals.
    draws, burn : int
        Draws of the chain kept and discarded first.
    seed : int
        Seed of the chain (the result is a function of the inputs and the seed).

    Returns
    -------
    Posterior

    Raises
    ------
    InvalidArgumentError
        Counts that are not whole non-negative numbers, a prior not above 0, a level outside (0, 1).

    Examples
    --------
    Warner's design at ``p = 0.75``, 3 "yes" and 7 "no": the MLE is 0 (on the boundary), the posterior mean under
    the uniform prior is inside:

    >>> import numpy as np
    >>> from designer.estimation.posterior import posterior_shares
    >>> post = posterior_shares(np.array([[0.75, 0.25], [0.25, 0.75]]), [3, 7])
    >>> bool(0.1 < post.mean[0] < 0.4), bool(post.ci_low[0] < 0.05)
    (True, True)
    """
    m = np.asarray(matrix, dtype=np.float64)
    c = np.asarray(counts, dtype=np.float64)
    if m.ndim != 2 or c.shape != (m.shape[1],):
        raise InvalidArgumentError(f"counts must have one entry per answer ({m.shape[1]}), got shape {c.shape}")
    if not np.all(np.isfinite(c)) or np.any(c < 0) or np.any(c != np.round(c)):
        raise InvalidArgumentError("the posterior needs whole, non-negative counts of answers (frequency weights, "
                                   "not sampling weights)")
    if not prior > 0 or not np.isfinite(prior):
        raise InvalidArgumentError(f"the Dirichlet prior must be above 0, got {prior}")
    if not 0 < level < 1:
        raise InvalidArgumentError(f"level must be in (0, 1), got {level}")
    if draws < 20 or burn < 0:
        raise InvalidArgumentError(f"draws must be at least 20 and burn at least 0, got {draws}, {burn}")
    k = m.shape[0]
    used = np.flatnonzero(c > 0)
    mu, cu = m[:, used], c[used]
    rng = np.random.default_rng(seed)
    mode, cov = _laplace(mu, cu, float(prior))
    total = burn + draws
    # proposals: multivariate t (4 df) about the mode, the Laplace covariance inflated by 1.5
    chol = np.linalg.cholesky(1.5 * cov + 1e-12 * np.eye(k - 1))
    z = rng.standard_normal((total, k - 1)) @ chol.T
    scale = np.sqrt(rng.chisquare(PROPOSAL_DF, total) / PROPOSAL_DF)
    theta = mode + z / scale[:, None]
    log_target = _log_target(theta, mu, cu, float(prior))
    quad = np.einsum("ij,ij->i", np.linalg.solve(1.5 * cov + 1e-12 * np.eye(k - 1), (theta - mode).T).T,
                     theta - mode)
    log_proposal = -(PROPOSAL_DF + k - 1) / 2 * np.log1p(quad / PROPOSAL_DF)
    log_weight = log_target - log_proposal
    uniforms = np.log(rng.random(total))
    current, accepted = 0, 0
    chain = np.empty(total, dtype=np.int64)
    for step in range(total):  # the independence sampler's accept step on the precomputed weights
        if uniforms[step] <= log_weight[step] - log_weight[current]:
            current = step
            accepted += step >= burn
        chain[step] = current
    kept = _shares(theta[chain[burn:]])
    alpha = (1 - level) / 2
    batches = kept[: draws - draws % 20].reshape(20, -1, k).mean(axis=1)
    return Posterior(mean=kept.mean(axis=0), sd=kept.std(axis=0, ddof=1),
                     ci_low=np.quantile(kept, alpha, axis=0), ci_high=np.quantile(kept, 1 - alpha, axis=0),
                     prior=float(prior), level=float(level), draws=int(draws),
                     mcse=batches.std(axis=0, ddof=1) / np.sqrt(20), acceptance=accepted / draws)


#: Degrees of freedom of the proposal's t distribution (heavier tails than the posterior's).
PROPOSAL_DF = 4.0


def _shares(theta: NDArray[np.float64]) -> NDArray[np.float64]:
    """``pi = softmax(theta, 0)``: the shares of additive log-ratios ``theta`` ``(..., k - 1)`` against the last."""
    full = np.concatenate([theta, np.zeros((*theta.shape[:-1], 1))], axis=-1)
    full -= full.max(axis=-1, keepdims=True)
    e = np.exp(full)
    return np.asarray(e / e.sum(axis=-1, keepdims=True))


def _log_target(theta: NDArray[np.float64], mu: NDArray[np.float64], cu: NDArray[np.float64],
                prior: float) -> NDArray[np.float64]:
    """The log posterior density of the log-ratios: ``sum_E c_E log (pi' M)_E + alpha sum_x log pi_x`` (the
    Dirichlet's ``alpha - 1`` plus the Jacobian ``prod_x pi_x`` of the map to the simplex)."""
    pi = _shares(np.atleast_2d(theta))
    with np.errstate(divide="ignore"):
        return np.asarray(np.log(np.maximum(pi @ mu, 1e-300)) @ cu + prior * np.log(np.maximum(pi, 1e-300)).sum(axis=1))


def _laplace(mu: NDArray[np.float64], cu: NDArray[np.float64], prior: float
             ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The posterior mode of the log-ratios and the inverse of the negative Hessian there (analytic gradient,
    central differences of it)."""
    from scipy.optimize import minimize

    k = mu.shape[0]

    def gradient(theta: NDArray[np.float64]) -> NDArray[np.float64]:
        pi = _shares(theta)
        g_pi = mu @ (cu / np.maximum(pi @ mu, 1e-300)) + prior / pi
        g = pi * (g_pi - pi @ g_pi)
        return np.asarray(g[:-1])

    start = np.zeros(k - 1)
    opt = minimize(lambda t: -float(_log_target(t, mu, cu, prior)[0]), start, jac=lambda t: -gradient(t),
                   method="BFGS", options={"gtol": 1e-10, "maxiter": 2000})
    mode = np.asarray(opt.x, dtype=np.float64)
    hessian = np.empty((k - 1, k - 1))
    for j in range(k - 1):
        h = 1e-5 * max(1.0, abs(float(mode[j])))
        e = np.zeros(k - 1)
        e[j] = h
        hessian[:, j] = (gradient(mode + e) - gradient(mode - e)) / (2 * h)
    info = -(hessian + hessian.T) / 2
    values, vectors = np.linalg.eigh(info)
    values = np.maximum(values, 1e-8 * max(float(values.max()), 1e-300))
    return mode, (vectors / values) @ vectors.T


def posterior_estimate(mech: Any, counts: ArrayLike, *, level: float = 0.95, prior: float = 1.0,
                       seed: int = 0) -> Any:
    """``estimate --method posterior``: an :class:`~designer.estimation.shares.Estimate` whose ``estimate`` is the
    posterior mean under the ``Dirichlet(prior)`` prior, ``stderr`` the posterior standard deviation and
    ``ci_low``, ``ci_high`` the equal-tailed credible interval (:func:`posterior_shares`); the maximum
    likelihood fit's status, log-likelihood and identified set are kept beside them.

    Examples
    --------
    >>> import designer
    >>> from designer.estimation.posterior import posterior_estimate
    >>> fit = posterior_estimate(designer.Q_2x3(0.6, 0.2), [3, 5, 2])
    >>> fit.method, fit.variance
    ('posterior', 'posterior standard deviation, Dirichlet(1) prior')
    """
    import dataclasses

    from .shares import estimate_sldp

    mle = estimate_sldp(mech, counts, level=level)
    post = posterior_shares(mech.matrix, counts, prior=prior, level=level, seed=seed)
    note = (f"posterior mean under the Dirichlet({prior:g}) prior, its standard deviation and {level:g} equal-tailed "
            f"credible intervals (acceptance {post.acceptance:.2f}); the maximum likelihood estimate is "
            + ", ".join(f"{x}={v:.6g}" for x, v in zip(mle.inputs, mle.estimate)))
    return dataclasses.replace(mle, estimate=post.mean, stderr=post.sd, ci_low=post.ci_low, ci_high=post.ci_high,
                               method="posterior", variance=f"posterior standard deviation, Dirichlet({prior:g}) prior",
                               warnings=(*mle.warnings, note))
