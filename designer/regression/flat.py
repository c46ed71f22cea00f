"""Terms whose likelihood-ratio interval is unbounded: the log-likelihood at infinity, computed exactly
(docs/theory.md section 9, "Terms the likelihood does not bound").

Along ``b0 + s d`` as ``s -> inf`` every respondent's linear predictors ``eta_x = z_i' (b0_x + s d_x)`` are decided
by ``z_i' d_x``: the true answer's probabilities tend to the inputs of largest ``z_i' d_x`` (the reference's is 0),
shared among them as at ``b0``. So the limit of the log-likelihood,

    L_inf(b0, d) = sum_i v_i log sum_x a_xi pi_xi(inf),

is exact and costs one pass over the rows. The profile log-likelihood of any linear function ``c' b`` with ``c' d
!= 0`` stays at least ``L_inf`` out to infinity on the side of ``sign(c' d)``: when ``2 (l_hat - L_inf)`` is below
the 0.95 quantile of chi-square with 1 degree of freedom, that side of the function's likelihood-ratio interval is
unbounded, and no standard error describes it. :class:`LimitSearch` looks for such witnesses among a few cheap
directions; a witness is a proof, but a flat direction none of them finds may be missed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from .design import constant_columns
from .likelihood import Likelihood

__all__ = ["CRITICAL", "SCAN_CELLS", "SEARCH_PARAMS", "FlatTerm", "LimitSearch", "limit_loglik"]

#: The 0.95 quantile of chi-square with 1 degree of freedom: a function whose log-likelihood at infinity is within
#: half of it of the maximum has an unbounded 0.95 likelihood-ratio interval on that side.
CRITICAL = 3.841458820694124
#: Fits of more parameters than this are searched along the parameters' own axes only (no covariance directions,
#: no threshold scans).
SEARCH_PARAMS = 64
#: Threshold scans run while rows times parameters is at most this (a sort of each column).
SCAN_CELLS = 20_000_000
#: The best thresholds of each column, outcome and orientation offered as witnesses.
SCAN_OFFERS = 16
#: Relative rounding allowance of a row's ``z_i' d`` (a row within it of a tie is taken at its worst limit).
ROUNDING = 1e-12


@dataclass(frozen=True)
class FlatTerm:
    """A coefficient whose likelihood-ratio interval is unbounded on one side, and the witness that proves it.

    ``index``: the coefficient's position in the fit's table (outcome-major); ``side``: ``+1.0`` (unbounded above)
    or ``-1.0``; ``limit``: the log-likelihood at infinity along ``direction`` from the estimate, ``L_inf``;
    ``direction``: the witness ``d`` on the coefficients' own scale (the table's order), along which the
    coefficient moves towards ``side`` (``sign(d[index]) == side``)."""

    index: int
    side: float
    limit: float
    direction: NDArray[np.float64]


def _row_limits(a: NDArray[np.float64], eta0: NDArray[np.float64], delta: NDArray[np.float64],
                tol: NDArray[np.float64]) -> NDArray[np.float64]:
    """``log sum_x a_xi pi_xi(inf)`` for each row (columns of the ``(k, n)`` arrays): the answer probabilities
    tend to the inputs of largest ``delta_xi`` (shared as ``exp(eta0)`` among exact ties); a row whose ``delta``
    is within its rounding allowance ``tol`` of a tie takes the smallest ``log a_xi`` among the candidates (a lower
    bound of every limit it may have)."""
    upper = delta + tol
    floor = (delta - tol).max(axis=0)
    near = upper >= floor[None, :]
    count = near.sum(axis=0)
    spread = np.where(near, delta, -np.inf).max(axis=0) - np.where(near, delta, np.inf).min(axis=0)
    slack = np.where(near, tol, 0.0).max(axis=0)
    exact = (count == 1) | ((spread == 0) & (slack == 0))
    with np.errstate(divide="ignore", invalid="ignore"):
        loga = np.log(a)
        top = np.where(near, eta0, -np.inf).max(axis=0)
        e = np.exp(np.where(near, eta0 - top[None, :], -np.inf))
        mixed = np.log((a * e).sum(axis=0)) - np.log(e.sum(axis=0))
        worst = np.where(near, loga, np.inf).min(axis=0)
    return np.asarray(np.where(exact, mixed, worst), dtype=np.float64)


def limit_loglik(lik: Likelihood, params: NDArray[np.float64], direction: NDArray[np.float64]) -> float:
    """The log-likelihood of ``lik`` at infinity along ``direction`` from ``params``: ``lim l(params + s d)`` as
    ``s -> inf``, exact (rows within rounding of a tie at their worst limit, so never above the limit).

    Parameters
    ----------
    lik : Likelihood
        The fit's likelihood (design ``z`` ``(n, q)``, answer likelihoods ``a`` ``(k, n)``, weights).
    params, direction : (P,) ndarray
        The start ``b0`` and the direction ``d``, outcome-major like the fit's parameters.

    Returns
    -------
    float
        ``L_inf(b0, d)`` (``-inf`` when some row's limit gives its answer probability 0).

    Examples
    --------
    Three respondents through Warner's design at ``p = 0.75``: along the slope the likelihood tends to that of every
    respondent with ``x > 0`` holding the trait (the one at ``x = 2``, whose answer says no: 0.25) and every one with
    ``x < 0`` not (answer no: 0.75), the one at ``x = 0`` unchanged (0.5 at the start):

    >>> import numpy as np
    >>> from designer.regression.likelihood import Likelihood
    >>> from designer.regression.flat import limit_loglik
    >>> z = np.array([[1.0, -1.0], [1.0, 0.0], [1.0, 2.0]])
    >>> a = np.array([[0.75, 0.25, 0.75], [0.25, 0.75, 0.25]])  # rows: input 'no' (reference), 'yes'
    >>> lik = Likelihood(z, a, reference=0)
    >>> limit = limit_loglik(lik, np.zeros(2), np.array([0.0, 1.0]))
    >>> bool(np.isclose(limit, np.log(0.75) + np.log(0.5) + np.log(0.25)))
    True
    """
    eta0, delta, tol = _predictors(lik, np.asarray(params, dtype=np.float64), np.asarray(direction, dtype=np.float64))
    rows = _row_limits(lik.a, eta0, delta, tol)
    return _total(rows, lik.weights)


def _total(rows: NDArray[np.float64], weights: NDArray[np.float64] | None) -> float:
    with np.errstate(invalid="ignore"):
        value = float(rows.sum() if weights is None else rows @ weights)
    return value if value == value else -np.inf


def _predictors(lik: Likelihood, params: NDArray[np.float64], direction: NDArray[np.float64]
                ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """``eta0``, ``delta = z d`` and its rounding allowance, each ``(k, n)`` (the reference's rows 0)."""
    q = lik.z.shape[1]
    n = lik.z.shape[0]
    b = params.reshape(q, lik.k - 1, order="F")
    d = direction.reshape(q, lik.k - 1, order="F")
    eta0 = np.zeros((lik.k, n))
    delta = np.zeros((lik.k, n))
    tol = np.zeros((lik.k, n))
    eta0[lik.others] = np.asarray(lik.z @ b).T
    delta[lik.others] = np.asarray(lik.z @ d).T
    size = abs(lik.z) @ np.abs(d) if sp.issparse(lik.z) else np.abs(lik.z) @ np.abs(d)
    tol[lik.others] = ROUNDING * np.asarray(size).T
    return eta0, delta, tol


class _Best:
    """The best witness found so far of each function (rows of ``functions`` ``(f, P)``, only the ``candidates``)
    and side, for a fit of log-likelihood ``loglik``."""

    def __init__(self, functions: NDArray[np.float64], candidates: NDArray[np.bool_] | None, loglik: float) -> None:
        self.functions = np.atleast_2d(np.asarray(functions, dtype=np.float64))
        f = self.functions.shape[0]
        self.candidates = np.ones(f, dtype=bool) if candidates is None else np.asarray(candidates, dtype=bool)
        self.magnitude = np.abs(self.functions)
        self.best = np.full((f, 2), -np.inf)  # columns: side +, side -
        self.witness: dict[tuple[int, int], NDArray[np.float64]] = {}
        self.floor = loglik - CRITICAL / 2

    def offer(self, d: NDArray[np.float64], value: float, axis: int | None = None) -> None:
        """A direction ``d`` (``+-e_axis`` when ``axis`` is given) whose ``L_inf`` is ``value``."""
        if not value > self.floor:
            return
        if axis is None:
            moves, size = self.functions @ d, self.magnitude @ np.abs(d)
        else:
            moves, size = self.functions[:, axis] * d[axis], self.magnitude[:, axis]
        for i in np.flatnonzero(self.candidates & (np.abs(moves) > 1e-9 * size)):
            side = 0 if moves[i] > 0 else 1
            if value > self.best[i, side]:
                self.best[i, side] = value
                self.witness[(int(i), side)] = d

    def found(self, back: NDArray[np.float64] | None) -> list[FlatTerm]:
        """The functions with a witness, each on its better side (``back`` maps the direction, default
        ``functions``)."""
        back = self.functions if back is None else back
        out = []
        for row in range(self.functions.shape[0]):
            side = int(np.argmax(self.best[row]))
            if self.best[row, side] > self.floor:
                d = self.witness[(row, side)]
                out.append(FlatTerm(index=row, side=1.0 if side == 0 else -1.0, limit=float(self.best[row, side]),
                                    direction=np.asarray(back @ d, dtype=np.float64)))
        return out


def covariance_directions(covariance: NDArray[np.float64], functions: NDArray[np.float64],
                          candidates: NDArray[np.bool_]) -> list[NDArray[np.float64]]:
    """``+-V c`` for each candidate function ``c`` (each scaled to a largest entry of 1; none where it is 0 or not
    finite)."""
    out = []
    for i in np.flatnonzero(candidates):
        d = covariance @ functions[i]
        if np.any(d != 0) and np.all(np.isfinite(d)):
            d = d / np.abs(d).max()
            out += [d, -d]
    return out


class PassedSearch:
    """:class:`LimitSearch` for a fit whose rows are read in passes (the streamed fit): ``limits`` evaluates
    ``L_inf`` along every row of a ``(m, P)`` array of directions in one pass. Up to :data:`SEARCH_PARAMS`
    parameters the axes ``+-e_j`` and the covariance directions ``+-V c`` are tried, in one pass (no threshold
    scans: they need the rows sorted)."""

    def __init__(self, loglik: float, covariance: NDArray[np.float64],
                 limits: Callable[[NDArray[np.float64]], NDArray[np.float64]]) -> None:
        self.loglik = loglik
        self.covariance = np.nan_to_num(np.asarray(covariance, dtype=np.float64), nan=0.0, posinf=0.0, neginf=0.0)
        self.limits = limits

    def terms(self, functions: NDArray[np.float64], candidates: NDArray[np.bool_] | None = None,
              back: NDArray[np.float64] | None = None) -> list[FlatTerm]:
        """As :meth:`LimitSearch.terms`."""
        best = _Best(functions, candidates, self.loglik)
        p = best.functions.shape[1]
        if p > SEARCH_PARAMS or not best.candidates.any():
            return []
        directions = [sign * row for row in np.eye(p) for sign in (1.0, -1.0)]
        directions += covariance_directions(self.covariance, best.functions, best.candidates)
        for d, value in zip(directions, self.limits(np.array(directions))):
            best.offer(d, float(value))
        return best.found(back)


class LimitSearch:
    """Witnesses of unbounded likelihood-ratio intervals for linear functions of a fit's parameters.

    ``lik`` the fit's likelihood, ``params`` its estimate (``b0``), ``covariance`` the inverse information there
    (``NaN`` entries ignored; its columns give the directions the quadratic model's profiles follow). The
    directions tried (:meth:`terms`): each parameter's axis ``+-e_j`` (every fit); up to :data:`SEARCH_PARAMS`
    parameters also each function's covariance direction ``+-V c``, and, beside an intercept column, every
    threshold direction ``+-(e_j - t e_0)`` of each other column (``t`` at and between its distinct values, below
    and above them all: every row above the threshold towards the outcome, every row below away from it), scanned
    in ``O(n log n)`` a column while rows times parameters is at most :data:`SCAN_CELLS`."""

    def __init__(self, lik: Likelihood, params: NDArray[np.float64], covariance: NDArray[np.float64]) -> None:
        self.lik = lik
        self.params = np.asarray(params, dtype=np.float64)
        self.covariance = np.nan_to_num(np.asarray(covariance, dtype=np.float64), nan=0.0, posinf=0.0, neginf=0.0)
        p = lik.z.shape[1]
        n = lik.z.shape[0]
        b = self.params.reshape(p, lik.k - 1, order="F")
        self.eta0 = np.zeros((lik.k, n))
        self.eta0[lik.others] = np.asarray(lik.z @ b).T
        _, _, loglik = lik.posterior(self.params)
        self.loglik = loglik
        with np.errstate(divide="ignore"):
            top = self.eta0.max(axis=0)
            e = np.exp(self.eta0 - top[None, :])
            self.mid = np.log((lik.a * e).sum(axis=0)) - np.log(e.sum(axis=0))  # each row's log-likelihood at b0
            self.loga = np.log(lik.a)
        self.worst = self.loga.min(axis=0)
        self._orders: dict[int, NDArray[np.int64]] = {}
        self._csc: Any = None
        self.size = np.asarray(abs(lik.z).sum(axis=1)).ravel()  # each row's sum of |z_ij|

    def _rows(self, delta: NDArray[np.float64], tol: NDArray[np.float64], rows: Any = slice(None)
              ) -> NDArray[np.float64]:
        """:func:`_row_limits` of the ``rows``; for two inputs in one pass over the non-reference input's
        ``delta``: its answer likelihood above its allowance, the reference's below, the estimate's row at an
        exact 0, the smaller of the two within the allowance."""
        lik = self.lik
        if lik.k != 2:
            return _row_limits(lik.a[:, rows], self.eta0[:, rows], delta, tol)
        o, r = lik.others[0], lik.reference
        d, t = delta[o], tol[o]
        out = np.where(d > t, self.loga[o, rows], self.loga[r, rows])
        unsure = np.abs(d) <= t
        if unsure.any():
            still = unsure & (d == 0) & (t == 0)
            out = np.where(unsure, np.where(still, self.mid[rows], self.worst[rows]), out)
        return np.asarray(out, dtype=np.float64)

    def _limit(self, direction: NDArray[np.float64]) -> float:
        lik = self.lik
        d = direction.reshape(lik.z.shape[1], lik.k - 1, order="F")
        delta = np.zeros((lik.k, lik.z.shape[0]))
        tol = np.zeros_like(delta)
        delta[lik.others] = np.asarray(lik.z @ d).T
        tol[lik.others] = (ROUNDING * self.size)[None, :] * np.abs(d).max(axis=0)[:, None]  # >= |z_i| |d| rounding
        return _total(self._rows(delta, tol), lik.weights)

    def _axis(self, j: int) -> tuple[float, float]:
        """``L_inf`` along ``+e_j`` and ``-e_j``: only the rows where parameter ``j``'s column is non-zero move."""
        lik = self.lik
        q = lik.z.shape[1]
        t, col = divmod(j, q)
        if sp.issparse(lik.z):
            if self._csc is None:
                self._csc = sp.csc_matrix(lik.z)
            span = slice(self._csc.indptr[col], self._csc.indptr[col + 1])
            rows = self._csc.indices[span]
            values = self._csc.data[span]
        else:
            values_all = np.asarray(lik.z[:, col])
            rows = np.flatnonzero(values_all)
            values = values_all[rows]
        rows, values = rows[values != 0], values[values != 0]
        out = []
        for sign in (1.0, -1.0):
            delta = np.zeros((lik.k, rows.size))
            delta[lik.others[t]] = sign * values
            moved = self._rows(delta, np.zeros_like(delta), rows)
            w = None if lik.weights is None else lik.weights[rows]
            change = moved - self.mid[rows]
            out.append(self.loglik + _total(change, w))
        return out[0], out[1]

    def _scan(self, t: int, col: int, intercept: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """The thresholds ``c`` of column ``col`` for outcome ``t`` and ``L_inf`` along ``e_col - c e_intercept``
        (``(m,)`` each: the orientation ``+``; the orientation ``-`` follows with the roles of the two sides
        swapped, returned as the second half)."""
        lik = self.lik
        y = lik.others[t]
        u = np.asarray(lik.z[:, col], dtype=np.float64)
        hi = self.loga[y]
        if lik.k == 2:
            lo = self.loga[lik.reference]
        else:
            with np.errstate(divide="ignore", invalid="ignore"):
                rest = np.delete(np.arange(lik.k), y)
                eta = self.eta0[rest]
                top = eta.max(axis=0)
                e = np.exp(eta - top[None, :])
                lo = np.log((lik.a[rest] * e).sum(axis=0)) - np.log(e.sum(axis=0))
        w = np.ones(u.size) if lik.weights is None else lik.weights
        if col not in self._orders:
            self._orders[col] = np.argsort(u, kind="stable")
        order = self._orders[col]
        ranked = u[order]
        starts = np.concatenate([[0], np.flatnonzero(ranked[1:] != ranked[:-1]) + 1])
        values = ranked[starts]
        with np.errstate(invalid="ignore"):
            groups = [np.add.reduceat((part * w)[order], starts) for part in (hi, lo, self.mid)]
        g_hi, g_lo, g_mid = (np.where(np.isnan(g), -np.inf, g) for g in groups)
        with np.errstate(invalid="ignore"):
            below = {"hi": np.concatenate([[0.0], np.cumsum(g_hi)]), "lo": np.concatenate([[0.0], np.cumsum(g_lo)])}
            total = {"hi": below["hi"][-1], "lo": below["lo"][-1]}
        gaps = np.concatenate([[values[0] - 1.0], (values[:-1] + values[1:]) / 2, [values[-1] + 1.0]])
        thresholds = np.concatenate([values, gaps])
        limits = []
        for up, down in (("hi", "lo"), ("lo", "hi")):  # rows above the threshold go to `up`, below to `down`
            with np.errstate(invalid="ignore"):
                at = below[down][:-1] + g_mid + (total[up] - below[up][1:])
                between = below[down] + (total[up] - below[up])
            limits.append(np.nan_to_num(np.concatenate([at, between]), nan=-np.inf))
        return thresholds, np.concatenate(limits)

    def limits(self, directions: NDArray[np.float64]) -> NDArray[np.float64]:
        """``L_inf`` along each row of ``directions`` ``(m, P)`` from the estimate (the sum over these rows)."""
        return np.array([self._limit(np.asarray(d, dtype=np.float64)) for d in np.atleast_2d(directions)])

    def terms(self, functions: NDArray[np.float64], candidates: NDArray[np.bool_] | None = None,
              back: NDArray[np.float64] | None = None) -> list[FlatTerm]:
        """The functions (rows of ``functions`` ``(f, P)``, only the ``candidates``) that some direction tried
        proves unbounded: ``2 (l_hat - L_inf) <` :data:`CRITICAL` with ``c' d != 0``, each with its best witness
        (the highest ``L_inf``). ``back`` ``(f, P)`` maps a direction to the functions' own scale for
        :attr:`FlatTerm.direction` (default ``functions``)."""
        best = _Best(functions, candidates, self.loglik)
        p = best.functions.shape[1]
        for j in range(p):
            plus, minus = self._axis(j)
            for sign, value in ((1.0, plus), (-1.0, minus)):
                if value > best.floor:
                    d = np.zeros(p)
                    d[j] = sign
                    best.offer(d, value, axis=j)
        if p <= SEARCH_PARAMS:
            for d in covariance_directions(self.covariance, best.functions, best.candidates):
                best.offer(d, self._limit(d))
            self._scans(best.offer, p)
        return best.found(back)

    def _scans(self, offer: Callable[..., None], p: int) -> None:
        lik = self.lik
        q, n = lik.z.shape[1], lik.z.shape[0]
        if sp.issparse(lik.z) or n * p > SCAN_CELLS:
            return
        intercepts = constant_columns(lik.z)
        if not intercepts.size:
            return
        intercept = int(intercepts[0])
        floor = self.loglik - CRITICAL / 2
        for t in range(lik.k - 1):
            for col in range(q):
                if col == intercept:
                    continue
                thresholds, limits = self._scan(t, col, intercept)
                m = thresholds.size
                for half, sign in ((0, 1.0), (1, -1.0)):
                    part = limits[half * m:(half + 1) * m]
                    above = np.flatnonzero(part > floor)
                    for i in above[np.argsort(-part[above], kind="stable")][:SCAN_OFFERS]:
                        d = np.zeros(p)
                        d[t * q + col] = sign
                        d[t * q + intercept] = -sign * thresholds[i]
                        offer(d, float(part[i]))
