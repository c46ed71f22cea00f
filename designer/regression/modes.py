"""The highest mode of a regression's log-likelihood: the search that follows a fit (docs/theory.md, section 9).

Observed through a mechanism, each respondent's log-likelihood ``log sum_x a[x, i] P(x | z_i)`` is bounded both ways
in the linear predictor (it tends to ``log a[x, i]`` as ``P(x | z_i)`` tends to 1): it is not concave, and the sum
can have several local maxima, or a supremum reached only at infinity. A Newton fit from one start ends at the mode
its start leads to: with heavy-tailed covariates and a few hundred respondents this is not always the highest one
(issue 55's verifier: 38 of 200 small random data sets before this search).

:func:`higher_mode` looks for a higher value from two kinds of starts and refits from the best one found:

- **Witnesses** (:class:`~designer.regression.flat.LimitSearch`): along ``b0 + s d`` with ``s -> inf`` each
  respondent's probabilities tend to a vertex decided by the signs of ``z_i' d``, so the limit of the
  log-likelihood is computed exactly; the axes, the covariance directions, every one-covariate threshold split and
  the best threshold split of the rows projected on the fit's slopes and on :data:`PROJECTIONS` random directions
  (a separation by a combination of covariates) are tried. A limit above the fit's value proves that the fit is not
  the maximum; the fit is run again from a point far enough along that direction to be above the fit.
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
#: Random projections of the covariates whose thresholds are scanned for a separation (besides the fit's slopes).
PROJECTIONS = 32
#: The best projections improved by a random local search (while the rows are at most :data:`CLIMB_ROWS`), with
#: this many tries at each of three radii; the best :data:`OFFERS` splits are offered with their exact limits.
CLIMBS = 4
CLIMB_STEPS = 12
CLIMB_ROWS = 20_000
OFFERS = 4
#: Points tried along a witness direction, each 4 times farther than the last (from :data:`FAR`).
REACH = 8
#: Refits at most (each from a higher point than the last).
ROUNDS = 3

Fit = tuple[NDArray[np.float64], int, bool]


def higher_mode(lik: Likelihood, found: Fit, refit: Callable[[Likelihood, NDArray[np.float64]], Fit], *,
                seed: int = 0) -> Fit:
    """``found`` (a fit of ``lik``), or the fit ``refit`` reaches from a point whose log-likelihood is higher.

    See the module's docstring for the starts; up to :data:`ROUNDS` refits, each from a point higher than the last
    fit. The log-likelihood never goes down. ``refit`` returns, never raises: far out along a witness a fit's
    arithmetic can overflow, and :func:`~designer.regression.likelihood.or_start` turns that into its start, not
    converged (the regression's fits all go through it).

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
        again = _witness_point(lik, best[0])  # the new mode may have a witness of its own
        if again is not None:
            ends.append(again)
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
    offers = [(t.limit, np.asarray(t.direction, dtype=np.float64)) for t in search.terms(np.eye(params.size))]
    offers += _projection_witnesses(lik, search, params)
    if not offers:
        return None
    limit, d = max(offers, key=lambda t: t[0])
    if not limit > search.loglik:
        return None
    moves = np.abs(np.asarray(lik.z @ d.reshape(lik.z.shape[1], lik.k - 1, order="F"))).ravel()
    moves = moves[moves > 0]
    if moves.size == 0:
        return None
    # params + s d tends to the limit as s grows, but rows between the witness's threshold and the one params
    # shift it to take the wrong side at a moderate s: step out until the point is above the fit (or stop)
    step = FAR / float(np.quantile(moves, 0.1))
    best: tuple[float, NDArray[np.float64]] | None = None
    with np.errstate(all="ignore"):
        for _ in range(REACH):
            point = params + step * d
            value = float(lik.loglike(point))
            if best is None or value > best[0]:
                best = (value, point)
            if limit - value <= 1e-3 * (limit - search.loglik):  # near the limit (a refit from a point merely
                break                                               # above the fit can stop at a mode below it)
            step *= 4.0
    return best


def _projection_witnesses(lik: Likelihood, search: LimitSearch, params: NDArray[np.float64], seed: int = 0
                          ) -> list[tuple[float, NDArray[np.float64]]]:
    """Witnesses of a separation by a combination of two or more covariates (one covariate's thresholds are
    :class:`~designer.regression.flat.LimitSearch`'s): the rows are projected on the fit's own slopes and on
    :data:`PROJECTIONS` random directions of the standardized covariates (a fixed seed), and every threshold of each
    projection is scanned in ``O(n log n)`` (rows above it towards a non-reference input, rows below towards the
    reference, and the reverse). The best split of each projection is offered with its exact limit
    (``search``'s); the scan only ranks the splits. Empty without an intercept column, with fewer than two other
    columns, for sparse designs and past :data:`SEARCH_WORK` rows times parameters."""
    import scipy.sparse as sp

    z = lik.z
    n, q = z.shape
    if sp.issparse(z) or n * q * (lik.k - 1) > SEARCH_WORK:
        return []
    z = np.asarray(z, dtype=np.float64)
    ones = [j for j in range(q) if np.all(z[:, j] == 1.0)]
    rest = [j for j in range(q) if j not in ones[:1]]
    spread = z[:, rest].std(axis=0) if rest else np.zeros(0)
    rest = [j for j, s in zip(rest, spread) if s > 0]
    if not ones or len(rest) < 2:
        return []
    scale = z[:, rest].std(axis=0)
    rng = np.random.default_rng(seed)
    w = np.ones(n) if lik.weights is None else np.asarray(lik.weights, dtype=np.float64)
    b = np.asarray(params, dtype=np.float64).reshape(q, lik.k - 1, order="F")
    with np.errstate(invalid="ignore"):
        rows = np.where(np.isfinite(search.loga), search.loga * w[None, :], -1e6 * n)
    out: list[tuple[float, NDArray[np.float64]]] = []
    zr = z[:, rest]

    def scan(v: NDArray[np.float64], to: NDArray[np.float64], away: NDArray[np.float64]
             ) -> tuple[float, float, float]:
        """The best split of the rows projected on ``v``: its scanned value, orientation and threshold."""
        u = zr @ v
        order = np.argsort(u, kind="stable")
        us = u[order]
        below_away = np.concatenate([[0.0], np.cumsum(away[order])])  # rows [0, m) below the split
        below_to = np.concatenate([[0.0], np.cumsum(to[order])])
        distinct = np.ones(n + 1, dtype=bool)
        distinct[1:n] = us[1:] > us[:-1]
        top = (-np.inf, 1.0, 0.0)
        for sign, total in ((1.0, below_away + (to.sum() - below_to)), (-1.0, below_to + (away.sum() - below_away))):
            m = int(np.argmax(np.where(distinct, total, -np.inf)))
            if total[m] > top[0]:
                cut = us[0] - 1.0 if m == 0 else us[-1] + 1.0 if m == n else 0.5 * (us[m - 1] + us[m])
                top = (float(total[m]), sign, cut)
        return top

    for t, o in enumerate(lik.others):
        to, away = rows[o], rows[lik.reference]
        tried = []
        for v in [b[rest, t], *(rng.normal(size=len(rest)) / scale for _ in range(PROJECTIONS))]:
            if np.any(v) and np.all(np.isfinite(v)):
                tried.append((*scan(v, to, away), v))
        tried.sort(key=lambda r: -r[0])
        for value, sign, cut, v in tried[:CLIMBS] if n <= CLIMB_ROWS else []:  # a random local search
            for radius in (0.3, 0.1, 0.03):
                for _ in range(CLIMB_STEPS):
                    moved = v + radius * np.linalg.norm(v * scale) * rng.normal(size=len(rest)) / scale
                    found = scan(moved, to, away)
                    if found[0] > value:
                        value, sign, cut, v = (*found, moved)
            tried.append((value, sign, cut, v))
        for _value, sign, cut, v in sorted(tried, key=lambda r: -r[0])[:OFFERS]:
            direction = np.zeros((q, lik.k - 1))
            direction[rest, t] = sign * v
            direction[ones[0], t] = -sign * cut
            flat = direction.ravel(order="F")
            out.append((search._limit(flat), flat))
    return out


def _concave(lik: Likelihood) -> bool:
    """Every answer is possible under one input only (``a`` has one nonzero per column): the plain multinomial
    logit, whose log-likelihood is concave: one mode."""
    return bool(np.all(np.count_nonzero(np.asarray(lik.a) > 0, axis=0) <= 1))
