"""What the answers identify: the inputs a design cannot tell apart, each share's identified interval at the
fitted answer distribution (Shafer semantics), and the identified set from precise answers (Walley semantics).
docs/theory.md section 8.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._internal.numeric import two_sided_z, wald_interval
from .._internal.solvers import minimize
from ..exceptions import InvalidArgumentError, InvalidMechanismError
from ..mechanism import Mechanism
from .mle import share_functionals, tangent_form

__all__ = [
    "IDENTIFIED_TOL", "SHARE_RANGE", "IdentifiedSet", "identified_interval", "identified_set",
    "indistinguishable_inputs", "observed_variance", "share_verdict",
    "unidentified_intervals", "weakly_identified",
]


#: Width above which a share's identified interval is an interval (the share is not identified).
IDENTIFIED_TOL = 1e-7


def _reduced_information(m: NDArray[np.float64], counts: NDArray[np.float64], pi: NDArray[np.float64]
                         ) -> NDArray[np.float64]:
    """The observed information per answer on the simplex's tangent space, in the coordinates ``d_1..d_{k-1}``
    (``d_k = -sum``), shape ``(k-1, k-1)``; it is 0 when every observed answer is equally likely for every input."""
    seen = counts > 0
    cols = m[:, seen]
    p = pi @ cols
    weights = counts[seen] / counts.sum() / np.maximum(p, 1e-300) ** 2
    return tangent_form((cols * weights) @ cols.T)


def indistinguishable_inputs(matrix: NDArray[np.float64], tol: float = 1e-9) -> tuple[int, ...]:
    """The inputs whose shares no data can identify through ``matrix`` ``(k, F)`` (rows = inputs).

    The answer distribution ``pi . M`` is the same along every direction ``d`` with ``d . M = 0`` (then also
    ``sum d = 0``, the rows summing to 1); an input with weight in such a direction has a share that the design
    itself leaves open (Def 3.1; docs/theory.md section 8). Empty when ``M`` has full row rank.

    Examples
    --------
    ``Q_2x3(0.4, 0.4)`` gives both inputs the same row, so no data tells them apart; ``Q_2x3(0.6, 0.2)`` does:

    >>> import designer
    >>> from designer.estimation.identification import indistinguishable_inputs
    >>> alike, apart = designer.Q_2x3(0.4, 0.4), designer.Q_2x3(0.6, 0.2)
    >>> indistinguishable_inputs(alike.matrix), indistinguishable_inputs(apart.matrix)
    ((0, 1), ())
    """
    from scipy.linalg import null_space

    blind = null_space(np.asarray(matrix, dtype=np.float64).T, rcond=tol)
    if blind.shape[1] == 0:
        return ()
    return tuple(int(x) for x in np.flatnonzero(np.abs(blind).max(axis=1) > np.sqrt(tol)))


def _identified_by(m: NDArray[np.float64], counts: NDArray[np.float64], pi: NDArray[np.float64]) -> bool:
    """Whether the observed information on the simplex's tangent space is nonsingular, and large enough that
    no share's standard error exceeds :data:`SHARE_RANGE` (a ratio of eigenvalues alone cannot fail for two
    inputs, whose tangent information is ``1 x 1``)."""
    if m.shape[0] < 2:
        return True
    info = _reduced_information(m, counts, pi)
    eig = np.linalg.eigvalsh(info)
    if not (eig.max() > 0 and eig.min() > 1e-12 * eig.max()):
        return False
    functionals = share_functionals(m.shape[0])
    variance = np.sum(functionals * np.linalg.solve(info, functionals), axis=0) / float(counts.sum())
    return bool(np.all(variance <= SHARE_RANGE**2))


def _pseudo_variance(m: NDArray[np.float64], counts: NDArray[np.float64], pi: NDArray[np.float64]
                     ) -> NDArray[np.float64]:
    """Per-share variance from the pseudo-inverse of a singular information, NaN for the shares it does not
    reach: ``c' I^+ c / n`` is the variance of ``c' pi`` when ``c`` lies in the information's range."""
    k = m.shape[0]
    n = float(counts.sum())
    eig, vec = np.linalg.eigh(_reduced_information(m, counts, pi))
    top = float(eig.max(initial=0.0))
    keep = eig > 1e-12 * top if top > 0 else np.zeros(eig.size, dtype=bool)
    functionals = share_functionals(k)
    along = vec.T @ functionals  # (k-1, k)
    reached = np.sum(along[~keep] ** 2, axis=0) <= 1e-12 * np.sum(functionals**2, axis=0)
    var = np.sum(along[keep] ** 2 / eig[keep, None], axis=0) / n
    return np.where(reached, var, np.nan)


def observed_variance(m: NDArray[np.float64], counts: NDArray[np.float64], pi: NDArray[np.float64]
                      ) -> NDArray[np.float64]:
    """Each share's variance from the observed information at ``pi`` (the inverse of ``-H`` on the simplex's
    tangent space, its pseudo-inverse where it is singular), ``(k,)``; NaN for a share the information does not
    reach. ``estimate``'s default variance (``oim``), the same for one design and for several
    (docs/fits.md).

    Examples
    --------
    >>> from designer.estimation.identification import observed_variance
    >>> import numpy as np
    >>> warner = np.array([[0.75, 0.25], [0.25, 0.75]])  # Warner's design, p = 0.75
    >>> observed_variance(warner, np.array([60.0, 40.0]), np.array([0.7, 0.3])).round(6).tolist()  # q(1-q)/(n (2p-1)^2)
    [0.0096, 0.0096]
    """
    if m.shape[0] < 2:
        return np.zeros(m.shape[0])
    return _pseudo_variance(m, counts, pi)


def share_verdict(m: NDArray[np.float64], counts: NDArray[np.float64], pi: NDArray[np.float64]
                  ) -> NDArray[np.bool_]:
    """The shares the answer ``counts`` do not identify at their maximum ``pi``, ``(k,)`` bool: the verdict
    ``estimate`` gives (its status ``not_identified``) and ``regress`` shares (the terms of these inputs' log-odds
    have no standard error), whatever path read the answers.

    A share is not identified when every share in an interval wider than :data:`IDENTIFIED_TOL` fits the answers
    equally well (:func:`identified_interval`, only computed where the observed information is singular), or, at an
    interior maximum, when its standard error from the observed information exceeds :data:`SHARE_RANGE`, the width
    of its range (docs/fits.md). On the boundary (:func:`at_boundary`) the profile likelihood, not the curvature,
    measures what the answers say, and only the first test applies.

    Examples
    --------
    >>> from designer.estimation.identification import share_verdict
    >>> import numpy as np
    >>> warner = np.array([[0.75, 0.25], [0.25, 0.75]])  # Warner's design, p = 0.75
    >>> share_verdict(warner, np.array([60.0, 40.0]), np.array([0.7, 0.3])).tolist()
    [False, False]
    >>> share_verdict(np.full((2, 2), 0.5), np.array([60.0, 40.0]), np.array([0.5, 0.5])).tolist()  # a coin
    [True, True]
    """
    k = m.shape[0]
    out = np.zeros(k, dtype=bool)
    if k < 2 or not counts.sum() > 0:
        return out if k < 2 else np.ones(k, dtype=bool)
    if not _identified_by(m, counts, pi):
        low, high = identified_interval(m, counts, pi)
        out |= high - low > IDENTIFIED_TOL
    from .boundary import at_boundary

    if not at_boundary(m, counts, pi).any():
        se = np.sqrt(observed_variance(m, counts, pi))
        out |= np.isfinite(se) & (se > SHARE_RANGE)
    return out


def _extremes(k: int, n_vars: int, **program: Any) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Smallest and largest of each of the first ``k`` of ``n_vars`` variables over one LP's feasible set
    (``program``: :func:`designer._internal.solvers.minimize`'s constraint arguments), clipped to [0, 1]: ``2k`` LPs."""
    lower, upper = np.zeros(k), np.ones(k)
    for j in range(k):
        obj = np.zeros(n_vars)
        obj[j] = 1.0
        lo, hi = minimize(obj, **program), minimize(-obj, **program)
        failed = [res for res in (lo, hi) if res.status != 0]
        if failed:
            raise InvalidMechanismError(f"the identified-set program failed ({failed[0].message})")
        lower[j], upper[j] = lo.fun, -hi.fun
    return np.clip(lower, 0, 1), np.clip(upper, 0, 1)


def _share_range(m: NDArray[np.float64], centre: NDArray[np.float64], band: NDArray[np.float64]
                 ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Smallest and largest ``pi_j`` over the simplex with ``|pi . m(E) - centre_E| <= band_E`` (2k LPs)."""
    k = m.shape[0]
    return _extremes(k, k, A_ub=np.vstack([m.T, -m.T]), b_ub=np.r_[centre + band, band - centre],
                     A_eq=np.ones((1, k)), b_eq=[1.0], bounds=(0, 1))


def _bonferroni_bands(freq: NDArray[np.float64], n: float, level: float) -> NDArray[np.float64]:
    """Half-widths of normal confidence bands for the frequencies ``freq`` of ``n`` answers, simultaneous at
    ``level`` over all of them (Bonferroni); the variance is kept from 0 at ``1 / n`` for an empty cell."""
    z = two_sided_z(1 - (1 - level) / freq.size)
    return z * np.sqrt(np.maximum(freq * (1 - freq), 1.0 / n) / n)


def identified_interval(m: NDArray[np.float64], counts: NDArray[np.float64], pi: NDArray[np.float64]
                        ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Each share's interval over every prior with the fitted answer distribution on the observed answers.

    The maximizers of the likelihood all share one fitted distribution ``pi . m(E)`` on the observed answer
    sets ``E`` (the log-likelihood is strictly concave in it), so this is the set of maximum likelihood
    estimates. The distribution is held to a relative ``1e-8`` (the accuracy of a fit with KKT violation
    ``<= KKT_TOL``); docs/theory.md section 8.

    Parameters
    ----------
    m : (k, F) ndarray
        Mass matrix (rows = inputs, columns = answer sets).
    counts : (F,) ndarray
        Answers per answer set.
    pi : (k,) ndarray
        A maximizer of the likelihood.

    Returns
    -------
    low, high : (k,) ndarray

    Examples
    --------
    Only "don't know" answers (20 of them) say nothing: every prior fits them equally well.

    >>> import numpy as np
    >>> import designer
    >>> from designer.estimation.identification import identified_interval
    >>> M = designer.Q_2x3(0.6, 0.2).matrix
    >>> low, high = identified_interval(M, np.array([0.0, 0.0, 20.0]), np.array([0.5, 0.5]))
    >>> low.tolist(), high.tolist()
    ([0.0, 0.0], [1.0, 1.0])
    """
    seen = counts > 0
    fitted = pi @ m[:, seen]
    low, high = _share_range(m[:, seen], fitted, 1e-8 * fitted + 1e-12)
    return np.minimum(low, pi), np.maximum(high, pi)


def weakly_identified(stderr: NDArray[np.float64]) -> NDArray[np.bool_]:
    """The shares whose standard error is absent or exceeds :data:`SHARE_RANGE`, the width of a share's range
    [0, 1], ``(k,)`` bool: the information does not pin them down, whatever its eigenvalues' ratio (for two
    inputs the tangent information is ``1 x 1``, and a ratio test cannot fail). Such a share is not identified
    by these answers: no standard error, and the interval of :func:`unidentified_intervals`.

    Examples
    --------
    >>> import numpy as np
    >>> from designer.estimation.identification import weakly_identified
    >>> weakly_identified(np.array([0.05, np.nan, 2.0])).tolist()  # no standard error, or one wider than [0, 1]
    [False, True, True]
    """
    return np.asarray(~(np.asarray(stderr, dtype=np.float64) <= SHARE_RANGE))


def weak_warning(names: list[str], m: NDArray[np.float64]) -> str:
    """Why shares with a standard error above their range are not identified, naming them and the largest
    difference between two inputs' answer distributions (``m`` ``(k, F)``)."""
    gap = min(float(np.abs(m[x] - m[y]).max()) for x in range(m.shape[0]) for y in range(x))
    return (f"not identified by the answers: {', '.join(map(repr, names))}; the information is so small that a "
            f"standard error would exceed the share's whole range [0, 1] (the closest two inputs' answer "
            f"probabilities differ by at most {gap:.2g}): no standard error, the interval is the range of the "
            "shares whose answer distribution lies within confidence bands of the observed one")


#: The width of a share's range [0, 1]: a standard error above it says nothing about the share.
SHARE_RANGE = 1.0


def unidentified_intervals(m: NDArray[np.float64], counts: NDArray[np.float64], pi: NDArray[np.float64],
                           level: float, *, absent: NDArray[np.bool_] | None = None
                           ) -> tuple[NDArray[np.float64], ...]:
    """Identified intervals, standard errors and confidence intervals of a fit whose information is singular.

    A share whose functional lies in the range of the singular observed information has the pseudo-inverse's
    standard error and its Wald interval (clipped to [0, 1]). Any other share has no standard error; its
    confidence interval is the range of the share over the priors whose answer distribution lies within
    Bonferroni bands (simultaneous at ``level`` over the answer sets) of the fitted one, widened to contain
    its identified interval (docs/theory.md section 8).

    Parameters
    ----------
    m : (k, F) ndarray
        Mass matrix (rows = inputs, columns = answer sets).
    counts : (F,) ndarray
        Answers per answer set.
    pi : (k,) ndarray
        A maximizer of the likelihood.
    level : float
        Confidence level in (0, 1).
    absent : (k,) bool ndarray, optional
        Shares to treat as without a standard error whatever the pseudo-inverse gives (those of
        :func:`weakly_identified`).

    Returns
    -------
    low, high, stderr, ci_low, ci_high : (k,) ndarray
        ``stderr`` is NaN where absent.

    Examples
    --------
    >>> import numpy as np
    >>> import designer
    >>> from designer.estimation.identification import unidentified_intervals
    >>> low, high, stderr, ci_low, ci_high = unidentified_intervals(
    ...     designer.Q_2x3(0.4, 0.4).matrix, np.array([40.0, 40.0, 20.0]), np.array([0.5, 0.5]), 0.95)
    >>> low.tolist(), high.tolist(), np.isnan(stderr).tolist()  # both rows alike: nothing identified
    ([0.0, 0.0], [1.0, 1.0], [True, True])
    """
    low, high = identified_interval(m, counts, pi)
    se = np.sqrt(_pseudo_variance(m, counts, pi))
    se[weakly_identified(se) if absent is None else (absent | weakly_identified(se))] = np.nan
    ci_low, ci_high = wald_interval(pi, se, level, low=0.0, high=1.0)
    fitted = pi @ m
    band_low, band_high = _share_range(m, fitted, _bonferroni_bands(fitted, float(counts.sum()), level))
    absent = np.isnan(se)
    ci_low[absent] = np.minimum(band_low, low)[absent]
    ci_high[absent] = np.maximum(band_high, high)[absent]
    return low, high, se, ci_low, ci_high


@dataclass(frozen=True)
class IdentifiedSet:
    """Bounds on each input's share from precise answers (Walley semantics; docs/theory.md section 8).

    Attributes
    ----------
    lower, upper : (k,) ndarray
        Smallest and largest ``pi_j`` compatible with the answers.
    level : float or None
        With a level, the answer frequencies may move within simultaneous (Bonferroni) normal confidence
        bands, so the interval covers the population identified set with about that probability and
        shrinks to it as ``n`` grows; without, the frequencies are taken as exact.
    misfit : float
        Total distance by which the frequencies (or their bands) miss every reachable distribution;
        0 in the usual case. When positive, the bounds are over the closest reachable ones.
    n : int

    Examples
    --------
    With a level, the bounds widen by the sampling error of the answer frequencies:

    >>> import designer
    >>> from designer.estimation.identification import identified_set
    >>> bounds = identified_set(designer.Q_2x3(0.6, 0.2), [60, 40])
    >>> bounds.level, bool(bounds.lower[0] < 0.5), bounds.n
    (0.95, True, 100)
    """

    inputs: tuple[str, ...]
    lower: NDArray[np.float64]
    upper: NDArray[np.float64]
    level: float | None
    misfit: float
    n: int


def identified_set(mech: Mechanism, counts: ArrayLike, *, level: float | None = 0.95) -> IdentifiedSet:
    """Interval of each ``pi_j`` compatible with observed precise answers (LPs over ``(pi, w)``).

    Variables ``w_x(B, y) >= 0`` with ``sum_{y in B} w_x(B, y) = pi_x m_x(B)`` and output frequencies
    ``sum_x sum_{B contains y} w_x(B, y) = f(y) + s(y)``, ``pi`` in the simplex (docs/theory.md section 8). The slack
    ``s(y)`` is bounded by the confidence band of ``f(y)`` (``level``) or 0; if that is infeasible, the
    least total slack is used instead (``misfit``). Then ``min`` and ``max`` of each ``pi_j``.

    Parameters
    ----------
    mech : Mechanism
    counts : (l,) array_like
        Number of answers per frame label.
    level : float or None, default 0.95

    Examples
    --------
    60 precise yes and 40 no from ``Q_2x3(0.6, 0.2)`` under Walley's semantics: a yes answers yes with 0.6 to 0.8, a
    no with 0.2 to 0.4, so the share of yes lies between 0.5 (``0.8 pi + 0.4 (1 - pi) = 0.6``) and 1:

    >>> import designer
    >>> from designer.estimation.identification import identified_set
    >>> bounds = identified_set(designer.Q_2x3(0.6, 0.2), [60, 40], level=None)
    >>> bounds.lower.round(9).tolist(), bounds.upper.round(9).tolist()
    ([0.5, 0.0], [1.0, 0.5])
    """
    import scipy.sparse as sp

    c = np.asarray(counts, dtype=np.float64)
    if c.shape != (mech.l,) or np.any(c < 0) or c.sum() <= 0:
        raise InvalidMechanismError(f"counts must be {mech.l} non-negative numbers with a positive total")
    n = float(c.sum())
    f = c / n
    k, l = mech.k, mech.l
    focal = np.asarray(mech.focal, dtype=np.int64)
    xs, js = np.nonzero(mech.matrix > 0)
    elems = [np.flatnonzero((focal[j] >> np.arange(l)) & 1) for j in js]
    sizes = np.array([e.size for e in elems])
    nw = int(sizes.sum())
    rw = np.repeat(np.arange(xs.size), sizes)
    cw = np.arange(nw)
    yy = np.concatenate(elems) if elems else np.zeros(0, dtype=np.int64)
    n_vars = k + nw + 2 * l  # pi, w, slack+, slack-
    alloc = sp.csr_matrix((np.r_[np.ones(nw), -mech.matrix[xs, js]],
                           (np.r_[rw, np.arange(xs.size)], np.r_[k + cw, xs])), shape=(xs.size, n_vars))
    out = sp.csr_matrix((np.r_[np.ones(nw), -np.ones(l), np.ones(l)],
                         (np.r_[yy, np.arange(l), np.arange(l)],
                          np.r_[k + cw, k + nw + np.arange(l), k + nw + l + np.arange(l)])), shape=(l, n_vars))
    simplex = sp.csr_matrix((np.ones(k), (np.zeros(k, dtype=int), np.arange(k))), shape=(1, n_vars))
    a_eq = sp.vstack([alloc, out, simplex], format="csr")
    b_eq = np.r_[np.zeros(xs.size), f, 1.0]
    band = np.zeros(l)
    if level is not None:
        if not 0 < level < 1:
            raise InvalidArgumentError(f"level must lie in (0, 1), got {level}")
        band = _bonferroni_bands(f, n, level)
    bounds = [(0, None)] * (k + nw) + [(0, b) for b in band] * 2
    slack = np.zeros(n_vars)
    slack[k + nw:] = 1.0
    a_ub, b_ub, misfit = None, None, 0.0
    probe = minimize(np.zeros(n_vars), A_eq=a_eq, b_eq=b_eq, bounds=bounds)
    if probe.status != 0:  # the bands miss every reachable distribution: use the closest ones
        first = minimize(slack, A_eq=a_eq, b_eq=b_eq, bounds=(0, None))
        misfit = float(first.fun)
        bounds = [(0, None)] * n_vars
        a_ub, b_ub = sp.csr_matrix(slack[None, :]), [misfit * (1 + 1e-9) + 1e-12]
    lower, upper = _extremes(k, n_vars, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=b_eq, bounds=bounds)
    return IdentifiedSet(inputs=mech.inputs, lower=lower, upper=upper, level=level, misfit=misfit, n=round(n))
