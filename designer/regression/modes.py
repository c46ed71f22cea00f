"""The highest mode of a regression's log-likelihood: the search that follows a fit (docs/theory.md, section 9).

Observed through a mechanism, each respondent's log-likelihood ``log sum_x a[x, i] P(x | z_i)`` is bounded both ways
in the linear predictor (it tends to ``log a[x, i]`` as ``P(x | z_i)`` tends to 1): it is not concave, and the sum
can have several local maxima, or a supremum reached only at infinity. A Newton fit from one start ends at the mode
its start leads to: with heavy-tailed covariates and a few hundred respondents this is not always the highest one
(issue 55's verifier: 38 of 200 small random data sets before this search).

:func:`higher_mode` looks for a higher value from two kinds of starts and refits from the best one found:

- **Witnesses** (:class:`~designer.regression.flat.LimitSearch`): along ``b0 + s d`` with ``s -> inf`` each
  respondent's probabilities tend to a vertex decided by the signs of ``z_i' d``, so the limit of the
  log-likelihood is computed exactly; the axes, the covariance directions and every one-covariate threshold split
  are tried. A limit above the fit's value proves that the fit is not the maximum; the fit is run again from a
  point far along that direction.
- **Quasi-Newton runs** (scipy's BFGS, 100 iterations) from the origin and from :data:`STARTS` points drawn with a
  fixed seed (the same data give the same fit), in the fit's standardized coordinates.

A refit that runs off to infinity is then judged ``separation`` by :func:`~designer.regression.status.diagnose`, as
any fit is. The search is a search: a higher mode it does not find is not excluded. It is skipped where the
likelihood is concave (every answer possible under one input only: the plain multinomial logit); past
:data:`SEARCH_WORK` rows times parameters only the witnesses are searched.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from .flat import LimitSearch
from .likelihood import Likelihood, decrement_tolerance

__all__ = ["SEARCH_WORK", "STARTS", "higher_mode"]

#: Random starts of the quasi-Newton runs (besides the origin). On 200 small random data sets (heavy-tailed and
#: binary covariates, 15 to 1,000 respondents) the fit stayed below a 24-start search's maximum on 38 before the
#: search, 16 with the witnesses alone, 10 with 4 starts (none of them `converged`: all `separation` or without
#: standard errors), 6 with 8 starts at 1.6 times the time of 4.
STARTS = 4
#: Rows times parameters past which the quasi-Newton runs are left out (each passes over every row about 200
#: times); the witnesses (one pass, and a sort a column) are searched whatever the size.
SEARCH_WORK = 500_000
#: How far along a witness direction its refit starts: the linear predictors of most rows (nine in ten of those
#: the direction moves) change by at least this much (probabilities within ``e^-30`` of their limits).
FAR = 30.0
#: Refits at most (each from a higher point than the last).
ROUNDS = 3

Fit = tuple[NDArray[np.float64], int, bool]


def higher_mode(lik: Likelihood, found: Fit, refit: Callable[[Likelihood, NDArray[np.float64]], Fit], *,
                seed: int = 0) -> Fit:
    """``found`` (a fit of ``lik``), or the fit ``refit`` reaches from a point whose log-likelihood is higher.

    See the module's docstring for the starts; up to :data:`ROUNDS` refits, each from a point higher than the last
    fit. The log-likelihood never goes down.

    Examples
    --------
    Heavy-tailed covariate, 30 respondents: the fit from the intercept-only start stops at a lower mode.

    >>> import numpy as np
    >>> from designer.regression.likelihood import Likelihood, fit_newton
    >>> from designer.regression.modes import higher_mode
    >>> z = np.column_stack([np.ones(6), [0.1, 0.2, 0.3, 0.4, 5.0, 9.0]])
    >>> a = np.array([[0.6, 0.2, 0.6, 0.2, 0.2, 0.2], [0.2, 0.6, 0.2, 0.6, 0.6, 0.6]])
    >>> lik = Likelihood(z, a, reference=1)
    >>> first = fit_newton(lik, np.zeros(2))
    >>> best = higher_mode(lik, first, fit_newton)
    >>> bool(lik.loglike(best[0]) >= lik.loglike(first[0]))
    True
    """
    from scipy.optimize import minimize

    n, size = lik.z.shape[0], found[0].size
    if _concave(lik):
        return found
    rng = np.random.default_rng(seed)
    starts = [np.zeros(size), *(rng.normal(0.0, 3.0, size) for _ in range(STARTS))] if n * size <= SEARCH_WORK else []

    def value(b: NDArray[np.float64]) -> float:
        return -lik.loglike(b) / n

    def gradient(b: NDArray[np.float64]) -> NDArray[np.float64]:
        return -lik.score(b) / n

    ends: list[tuple[float, NDArray[np.float64]]] = []
    far = _witness_point(lik, found[0])
    if far is not None:
        ends.append(far)
    for start in starts:
        with np.errstate(all="ignore"):
            run = minimize(value, start, jac=gradient, method="BFGS", options={"maxiter": 100, "gtol": 1e-6})
        point = np.asarray(run.x, dtype=np.float64)
        if np.all(np.isfinite(point)):
            ends.append((lik.loglike(point), point))
    best = found
    for _ in range(ROUNDS):
        top = lik.loglike(best[0])
        tol = decrement_tolerance(top) + 1e-9 * abs(top)
        higher = [(v, b) for v, b in ends if v > top + tol]
        if not higher:
            break
        v, point = max(higher, key=lambda t: t[0])
        params, iterations, ok = refit(lik, point)
        if lik.loglike(params) >= v - tol:
            best = (params, best[1] + iterations, ok)
        else:  # the refit fell below its start (it should not): keep the higher point, not converged
            best = (point, best[1] + iterations, False)
        ends = [(w, b) for w, b in ends if b is not point]
    return best


def _witness_point(lik: Likelihood, params: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]] | None:
    """The highest limit at infinity a :class:`~designer.regression.flat.LimitSearch` finds from ``params`` (over
    every parameter's witnesses), with a point far along its direction, when that limit is above the value at
    ``params``; else None."""
    information = -lik.hessian(params)
    try:
        covariance = np.linalg.inv(information) if np.all(np.linalg.eigvalsh(information) > 0) else \
            np.linalg.pinv(information)
    except np.linalg.LinAlgError:
        covariance = np.eye(params.size)
    search = LimitSearch(lik, params, np.asarray(covariance, dtype=np.float64))
    terms = search.terms(np.eye(params.size))
    if not terms:
        return None
    best = max(terms, key=lambda t: t.limit)
    if not best.limit > search.loglik:
        return None
    d = np.asarray(best.direction, dtype=np.float64)
    moves = np.abs(np.asarray(lik.z @ d.reshape(lik.z.shape[1], lik.k - 1, order="F"))).ravel()
    moves = moves[moves > 0]
    if moves.size == 0:
        return None
    point = params + FAR / float(np.quantile(moves, 0.1)) * d
    return lik.loglike(point), point


def _concave(lik: Likelihood) -> bool:
    """Every answer is possible under one input only (``a`` has one nonzero per column): the plain multinomial
    logit, whose log-likelihood is concave: one mode."""
    return bool(np.all(np.count_nonzero(np.asarray(lik.a) > 0, axis=0) <= 1))
