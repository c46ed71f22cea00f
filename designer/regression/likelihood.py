"""The likelihood of a multinomial logit observed through a mechanism, and the two ways to maximise it.

docs/theory.md section 9 derives the score and the Hessian; :class:`Likelihood` evaluates them for a design
matrix ``z`` ``(n, q)`` and the ``(k, n)`` likelihoods ``a[x, i] = M[x, E_i]`` of the recorded answers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from .damped_newton import MANY_PARAMS, damped_newton
from .design import leverages, weighted_gram

__all__ = ["DECREMENT_TOL", "FIRTH_DECREMENT_TOL", "FIRTH_START_SCALES", "FirthPenalty", "Likelihood",
           "curvature", "decrement_tolerance", "fit_em", "fit_firth", "fit_firth_best", "fit_newton", "or_start",
           "softmax_columns"]

def softmax_columns(eta: NDArray[np.float64]) -> NDArray[np.float64]:
    """Softmax over the first axis of a ``(k, n)`` array (rows contiguous: fast for small k)."""
    if eta.shape[0] == 2:  # logistic: one expit, no overflow
        from scipy.special import expit

        out = np.empty_like(eta)
        out[0] = expit(eta[0] - eta[1])
        out[1] = expit(eta[1] - eta[0])  # not 1 - out[0]: a tiny share keeps its digits (no log 0 far out)
        return out
    top = np.maximum.reduce(list(eta))
    out = np.exp(eta - top)
    out /= np.add.reduce(list(out))
    return out


class Likelihood:
    """Log-likelihood, score and Hessian of the mixture model (no statsmodels: also used by EM).

    ``z`` is the ``(n, q)`` design matrix, ``a`` the ``(k, n)`` likelihood of each respondent's recorded
    answer under each true answer (``a[x, i] = M[x, E_i]``). Arrays are kept answer-major, ``(k, n)``.
    ``weights`` ``(n,)`` (positive; None: all 1) multiply each respondent's log-likelihood, score and Hessian
    (docs/theory.md, section 9.1).
    """

    def __init__(self, z: NDArray[np.float64], a: NDArray[np.float64], reference: int,
                 weights: NDArray[np.float64] | None = None) -> None:
        self.z, self.a, self.reference = z, a, reference
        self.weights = weights
        self.k = a.shape[0]
        self.others = [j for j in range(self.k) if j != reference]
        self._cache: tuple[bytes, tuple[NDArray[np.float64], NDArray[np.float64], float]] | None = None

    def probabilities(self, params: NDArray[np.float64]) -> NDArray[np.float64]:
        """``P(x | z_i)``, shape ``(k, n)``."""
        beta = np.asarray(params, dtype=np.float64).reshape(self.z.shape[1], self.k - 1, order="F")
        eta = np.zeros((self.k, self.z.shape[0]))
        eta[self.others] = (self.z @ beta).T
        return softmax_columns(eta)

    def posterior(self, params: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64], float]:
        """``(P, W, loglik)``: prior and posterior probabilities of the true answer, ``(k, n)`` each, and
        the log-likelihood (cached for the last ``params``: loglike, score and hessian share it)."""
        key = np.asarray(params, dtype=np.float64).tobytes()
        if self._cache is not None and self._cache[0] == key:
            return self._cache[1]
        p = self.probabilities(params)
        w = self.a * p
        lik = np.add.reduce(list(w))
        with np.errstate(divide="ignore"):
            logs = np.log(lik)
            loglik = float(logs.sum() if self.weights is None else logs @ self.weights)
        w /= np.where(lik > 0, lik, 1.0)
        self._cache = (key, (p, w, loglik))
        return p, w, loglik

    def loglike(self, params: NDArray[np.float64]) -> float:
        return self.posterior(params)[2]

    def residuals(self, params: NDArray[np.float64]) -> NDArray[np.float64]:
        """``weight_i (w_ji - p_ji)`` for every non-reference input ``j``, ``(k-1, n)``: respondent ``i``'s score
        is ``z_i`` times column ``i``."""
        p, w, _ = self.posterior(params)
        r = (w - p)[self.others]
        return r if self.weights is None else r * self.weights

    def score(self, params: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.asarray((self.z.T @ self.residuals(params).T).ravel(order="F"))

    def hessian(self, params: NDArray[np.float64]) -> NDArray[np.float64]:
        # d2 log L_i / d eta_j d eta_m = (w_j [j=m] - w_j w_m) - (p_j [j=m] - p_j p_m)
        p, w, _ = self.posterior(params)
        v = 1.0 if self.weights is None else self.weights
        return curvature(self.z, self.others,
                         lambda j, m: v * (p[j] * p[m] - w[j] * w[m] + (j == m) * (w[j] - p[j])))


def curvature(z: NDArray[np.float64], others: list[int], weight: Any) -> NDArray[np.float64]:
    """The symmetric block matrix with blocks ``z' diag(weight(j, m)) z`` over pairs of non-reference inputs."""
    q = z.shape[1]
    out = np.zeros((q * len(others), q * len(others)))
    for s, j in enumerate(others):
        for t in range(s, len(others)):
            block = weighted_gram(z, weight(j, others[t]))
            out[s * q:(s + 1) * q, t * q:(t + 1) * q] = block
            out[t * q:(t + 1) * q, s * q:(s + 1) * q] = block.T
    return out


def fit_em(lik: Likelihood, start: NDArray[np.float64], *, max_iter: int = 100_000
        ) -> tuple[NDArray[np.float64], int, bool]:
    """EM: the E-step posterior of the true answer, the M-step a fractional multinomial logit (Newton).

    Stops, like the Newton method, when the Newton decrement of the observed log-likelihood is below
    :data:`DECREMENT_TOL` (EM's fixed points zero the score): ``True``. When an EM step no longer raises the
    log-likelihood at all in double precision, Newton steps finish where the observed information is positive
    definite; elsewhere it gives up (``False``: the status is then judged at the last iterate, e.g.
    ``separation``), as under separation, where the iterates run off
    towards infinity ever more slowly; a singular M-step (fitted shares at 0 or 1) is damped, never an error.
    """
    params = start.copy()
    before = lik.loglike(params)
    for iteration in range(1, max_iter + 1):
        w = lik.posterior(params)[1]
        grad = lik.score(params)
        try:  # the decrement only where -H is positive definite (a solve of a near-singular -H can say anything)
            chol = np.linalg.cholesky(-lik.hessian(params))
            if 0.0 <= float(np.sum(np.linalg.solve(chol, grad) ** 2)) <= decrement_tolerance(before):
                return params, iteration, True
        except np.linalg.LinAlgError:
            pass
        params = _m_step(lik, w, params)
        after = lik.loglike(params)
        if not after > before:  # no rise left in double precision: Newton finishes, or separation
            return _polish(lik, params, iteration)
        before = after
    return params, max_iter, False


def _m_step(lik: Likelihood, w: NDArray[np.float64], params: NDArray[np.float64]) -> NDArray[np.float64]:
    """Maximise ``Q(b) = sum_i v_i sum_x w_xi log p_xi(b)`` (concave) from ``params``: Newton steps on the
    fractional multinomial logit, damped (Levenberg) where its information is singular and halved until
    ``Q`` does not fall; at most 25 steps."""
    target = Likelihood(lik.z, w, lik.reference)
    v = 1.0 if lik.weights is None else lik.weights

    def q_value(b: NDArray[np.float64]) -> float:
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.where(w > 0, w * np.log(target.probabilities(b)), 0.0).sum(axis=0)
        return float(terms.sum() if lik.weights is None else terms @ lik.weights)

    current = q_value(params)
    for _ in range(25):
        p = target.probabilities(params)
        grad = np.asarray((lik.z.T @ ((w - p)[lik.others] * v).T).ravel(order="F"))
        info = curvature(lik.z, lik.others, lambda j, m, p=p: v * p[j] * ((j == m) - p[m]))
        found = _ascent_step(info, grad, q_value, params, current)
        if found is None:
            break
        step, current = found
        params = params + step
        if np.abs(step).max() < 1e-12:
            break
    return params


def _ascent_step(info: NDArray[np.float64], grad: NDArray[np.float64], value: Any, params: NDArray[np.float64],
                 current: float) -> tuple[NDArray[np.float64], float] | None:
    """A step that does not lower ``value`` (a concave function with gradient ``grad`` and curvature ``info``
    at ``params``, ``value(params) = current``): the Newton step ``(info + d s I)^-1 grad`` (``s`` the largest
    diagonal entry of ``info``, ``d`` = 0, then 1e-12 up by hundreds: Levenberg, for a singular or
    ill-conditioned ``info`` whose Newton step runs far along a nearly flat direction), halved at most 13
    times. ``(step, value there)``, or None when no damping gives one."""
    scale = float(np.abs(np.diag(info)).max()) if info.size else 0.0
    if not np.isfinite(scale) or scale <= 0 or not np.all(np.isfinite(grad)):
        return None
    damping = 0.0
    while damping <= 1e2:
        try:
            chol = np.linalg.cholesky(info + damping * scale * np.eye(info.shape[0]))
            step = np.linalg.solve(chol.T, np.linalg.solve(chol, grad))
        except np.linalg.LinAlgError:
            step = None
        if step is not None and np.all(np.isfinite(step)):
            t = 1.0
            for _ in range(14):
                trial = value(params + t * step)
                if trial >= current:
                    return t * step, float(trial)
                t /= 2
        damping = 1e-12 if damping == 0.0 else damping * 100
    return None


#: A fit has converged when the Newton decrement g' (-H)^-1 g (twice the log-likelihood the quadratic model
#: could still gain) is below this, with -H positive definite.
DECREMENT_TOL = 1e-12


def decrement_tolerance(loglik: float) -> float:
    """:data:`DECREMENT_TOL`, or the rounding of the log-likelihood itself (``4 eps |loglik|``) where that is larger:
    with 1e10 respondents (frequency weights) a gain below ``1e-6`` cannot be told from the rounding of the sums."""
    return max(DECREMENT_TOL, 4 * float(np.finfo(float).eps) * abs(loglik))


def fit_newton(lik: Likelihood, start: NDArray[np.float64]) -> tuple[NDArray[np.float64], int, bool]:
    """Trust-region Newton (scipy's ``trust-exact``: safe where the mixture's Hessian is indefinite), then
    pure Newton steps with a halving line search until the decrement is below :data:`DECREMENT_TOL`. Above
    :data:`~designer.regression.damped_newton.MANY_PARAMS` parameters, Levenberg-damped Newton steps
    (:func:`~designer.regression.damped_newton.damped_newton`)."""
    from scipy.optimize import minimize

    if start.size > MANY_PARAMS:
        return damped_newton(lik, start, decrement_tolerance)
    n = lik.z.shape[0]
    try:
        opt = minimize(lambda b: -lik.loglike(b) / n, start, jac=lambda b: -lik.score(b) / n,
                       hess=lambda b: -lik.hessian(b) / n, method="trust-exact",
                       options={"gtol": 1e-9, "maxiter": 500})
    except (ArithmeticError, np.linalg.LinAlgError, ValueError):
        # the trust region's own arithmetic overflowed (its eigenvalue bounds on a Hessian of 1e300: a covariate
        # at 1e-150 with weights; fuzz_regress seed 15, exit 70): Levenberg-damped Newton steps from the same start,
        # which stop, not converged, where they cannot go on (the diagnosis judges the point, as any fit)
        return damped_newton(lik, start, decrement_tolerance)
    return _polish(lik, np.asarray(opt.x, dtype=np.float64), int(opt.nit))


def or_start(maximise: Callable[[Likelihood, NDArray[np.float64]], tuple[NDArray[np.float64], int, bool]]
             ) -> Callable[[Likelihood, NDArray[np.float64]], tuple[NDArray[np.float64], int, bool]]:
    """``maximise`` (a fit from a start), except that a fit whose arithmetic fails (an overflow far out along a
    direction of separation, a singular step) returns its start, not converged: the diagnosis then judges that point,
    as any fit, instead of the command exiting 70. Every fit of :mod:`~designer.regression.model` (the first and the
    refits of :func:`~designer.regression.modes.higher_mode`) goes through it.

    Examples
    --------
    >>> import numpy as np
    >>> from designer.regression.likelihood import or_start
    >>> def overflows(lik, start):
    ...     raise OverflowError("math range error")
    >>> or_start(overflows)(None, np.zeros(2))
    (array([0., 0.]), 0, False)
    """
    def guarded(lik: Likelihood, start: NDArray[np.float64]) -> tuple[NDArray[np.float64], int, bool]:
        try:
            return maximise(lik, start)
        except (ArithmeticError, np.linalg.LinAlgError, ValueError):
            return np.asarray(start, dtype=np.float64), 0, False
    return guarded


def _polish(lik: Likelihood, params: NDArray[np.float64], iterations: int) -> tuple[NDArray[np.float64], int, bool]:
    """At most 20 Newton steps with a halving line search from ``params``, until the decrement is below
    :data:`DECREMENT_TOL` (``True``); ``False`` where the observed information is not positive definite."""
    for _ in range(20):
        grad, info = lik.score(params), -lik.hessian(params)
        try:
            step = np.linalg.solve(np.linalg.cholesky(info).T, np.linalg.solve(np.linalg.cholesky(info), grad))
        except np.linalg.LinAlgError:
            return params, iterations, False
        if float(grad @ step) <= decrement_tolerance(lik.loglike(params)):  # tiny and, near the maximum, exact
            return params + step, iterations, True
        base, t = lik.loglike(params), 1.0
        while t > 1e-6 and lik.loglike(params + t * step) < base:
            t /= 2
        params, iterations = params + t * step, iterations + 1
    return params, iterations, False




class FirthPenalty:
    """Firth's penalty ``1/2 log det I(beta)`` for two inputs, ``I`` the expected information of the randomized
    answers (docs/theory.md, section 9): with ``p_i = P(x = other | z_i)`` and, for each answer ``E``,
    ``a_E = M[other, E] - M[ref, E]`` and ``b_E = M[ref, E]``, the answer probabilities are ``b_E + a_E p_i`` and
    ``I = Z' diag(w) Z``, ``w_i = (p_i (1 - p_i))^2 sum_E a_E^2 / (b_E + a_E p_i)``. Its gradient is
    ``1/2 sum_i h_i (d log w_i / d eta_i) z_i`` with the leverages ``h_i = w_i z_i' I^-1 z_i`` and
    ``d log w / d eta = 2 (1 - 2p) - p (1 - p) sum_E a_E^3 / q_E^2 / sum_E a_E^2 / q_E``. For the identity
    mechanism this is Firth's (1993) logistic penalty, the one logistf and brglm2 fit. The likelihood's row
    weights count respondents (frequency weights: ``w_i`` is multiplied by them, as for replicated rows).
    """

    def __init__(self, lik: Likelihood, channel: NDArray[np.float64], *,
                 groups: tuple[NDArray[np.int64], NDArray[np.int64]] | None = None) -> None:
        if lik.k != 2:
            raise ValueError("Firth's penalty is implemented for two inputs (a binary true answer)")
        other = lik.others[0]
        keep = np.abs(channel[other] - channel[lik.reference]) > 0  # answers that say nothing add nothing
        # several designs stacked: a respondent can give only its own group's answers ((n,) row and (F,) column
        # group indices); the stacked columns' common factor 1/G scales I, which moves the penalty by a constant
        self.mask = None if groups is None else groups[0][:, None] == groups[1][keep][None, :]
        self.lik = lik
        self.a = (channel[other] - channel[lik.reference])[keep]
        self.b = channel[lik.reference][keep]
        self.c = channel[other][keep]
        self.other = other
        self._cache: tuple[bytes, tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]] | None = None

    def _parts(self, params: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64],
                                                             NDArray[np.float64]]:
        """``(w, d log w / d eta, I)`` at ``params``, kept for the last ``params`` (value, information and
        gradient of one step share them).

        Written without a quotient that overflows where a fitted share underflows (separation through a
        mechanism with zeros, such as the identity): with ``s = p (1 - p)`` and ``c_E = M[other, E]``,
        ``s / q_E = 1 / (b_E / p + c_E / (1 - p))`` (a term with a zero coefficient left out) is at most
        ``min(p / b_E, (1 - p) / c_E)``, so ``w = s sum_E a_E^2 r_E`` with ``r_E = s / q_E`` and
        ``d log w / d eta = 2 (1 - 2p) - sum_E a_E^3 r_E^2 / sum_E a_E^2 r_E`` stay finite."""
        key = np.asarray(params, dtype=np.float64).tobytes()
        if self._cache is not None and self._cache[0] == key:
            return self._cache[1]
        probs = self.lik.probabilities(params)
        p, p_ref = probs[self.other][:, None], probs[self.lik.reference][:, None]  # both kept to full precision
        with np.errstate(divide="ignore", invalid="ignore"):
            inv = (np.where(self.b > 0, self.b / p, 0.0) + np.where(self.c > 0, self.c / p_ref, 0.0))
            r = np.where(np.isfinite(inv) & (inv > 0), 1.0 / inv, 0.0)  # (n, F): s / q_E, 0 where it underflows
        if self.mask is not None:
            r = np.where(self.mask, r, 0.0)
        s = (p * p_ref)[:, 0]
        g = r @ self.a**2  # (n,): sum_E a_E^2 r_E = s sum_E a_E^2 / q_E
        w = s * g if self.lik.weights is None else s * g * self.lik.weights  # a row of weight f is f respondents
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(g > 0, (r**2 @ self.a**3) / np.where(g > 0, g, 1.0), 0.0)
        dlogw = 2 * (p_ref - p)[:, 0] - ratio
        info = weighted_gram(self.lik.z, w)
        self._cache = (key, (w, dlogw, info))
        return w, dlogw, info

    def value(self, params: NDArray[np.float64]) -> float:
        sign, logdet = np.linalg.slogdet(self._parts(params)[2])
        return 0.5 * float(logdet) if sign > 0 else -np.inf

    def information(self, params: NDArray[np.float64]) -> NDArray[np.float64]:
        """The expected information ``I = Z' diag(w) Z`` of the randomized answers, ``(q, q)``."""
        return self._parts(params)[2]

    def gradient(self, params: NDArray[np.float64]) -> NDArray[np.float64]:
        w, dlogw, info = self._parts(params)
        z = self.lik.z
        h = w * leverages(z, info)
        return np.asarray(0.5 * z.T @ (h * dlogw))


class Penalty(Protocol):
    """What :func:`fit_firth` needs of a penalty: its value, gradient and the information used as metric."""

    def value(self, params: NDArray[np.float64]) -> float: ...

    def gradient(self, params: NDArray[np.float64]) -> NDArray[np.float64]: ...

    def information(self, params: NDArray[np.float64]) -> NDArray[np.float64]: ...


#: Firth's fit has converged when the scoring decrement g' I^-1 g of the penalized score is below this (the
#: estimates are then within about 1e-8 standard errors of the maximum).
FIRTH_DECREMENT_TOL = 1e-16


#: Firth's fit through a randomizing design may have several maxima (the likelihood is a mixture): besides the
#: given starts it starts from seeded normal draws around the first, two at each of these scales (in the
#: standardized coordinates the fit runs in), and keeps the highest maximum reached.
FIRTH_START_SCALES = (1.0, 3.0, 10.0, 30.0)


#: A Firth fit of at most this many respondents times parameters squared is run whole from every start; a larger
#: one runs Fisher scoring (at most 200 steps) from the other starts and finishes only the one that climbs highest.
FIRTH_SMALL = 200_000


def fit_firth_best(lik: Likelihood, penalty: Penalty, start: NDArray[np.float64], *,
                   more: tuple[NDArray[np.float64], ...] = ()) -> tuple[NDArray[np.float64], int, bool]:
    """:func:`fit_firth` from ``start``, then from every start in ``more`` (the unpenalized fit's estimate) and from
    seeded draws around ``start`` (:data:`FIRTH_START_SCALES`): the whole fit for a small problem
    (:data:`FIRTH_SMALL`), else Fisher scoring, a run that climbs higher than the first fit finished by
    :func:`fit_firth` from where it stopped. The highest converged maximum wins (docs/theory.md section 9);
    iterations are summed over the starts."""
    def value(b: NDArray[np.float64]) -> float:
        out = lik.loglike(b) + penalty.value(b)
        return out if np.isfinite(out) else -np.inf

    params, iterations, done = fit_firth(lik, penalty, start)
    best, best_value = (params, done), value(params)
    small = lik.z.shape[0] * start.size**2 <= FIRTH_SMALL
    rng = np.random.default_rng(20_24)
    draws = [start + rng.normal(scale=scale, size=start.size) for scale in FIRTH_START_SCALES for _ in range(2)]
    rays = [point for far in more for point in _ray_starts(value, start, far)]
    for point in (*more, *rays, *draws):
        if not np.all(np.isfinite(point)):
            continue
        try:
            if small:  # the whole fit from every start: a far maximum may need the trust region to be reached
                climbed, steps, _ = fit_firth(lik, penalty, np.asarray(point, dtype=np.float64))
            else:
                climbed, steps, _ = _firth_scoring(lik, penalty, np.asarray(point, dtype=np.float64), max_iter=200)
        except (np.linalg.LinAlgError, ValueError):
            continue
        iterations += steps
        if value(climbed) <= best_value + 1e-9 * max(1.0, abs(best_value)):
            continue
        try:
            found, more_steps, finished = fit_firth(lik, penalty, climbed)
        except (np.linalg.LinAlgError, ValueError):
            continue
        iterations += more_steps
        if (finished or not best[1]) and value(found) > best_value:
            best, best_value = (found, finished), value(found)
    return best[0], iterations, best[1]


#: Along the segment from the first start to each other start, the penalized log-likelihood is evaluated at
#: fractions ``2**(-j/2)``, j = 0..FIRTH_RAY_STEPS, of the way; the points where it peaks are starts too.
FIRTH_RAY_STEPS = 30


def _ray_starts(value: Callable[[NDArray[np.float64]], float], start: NDArray[np.float64],
                far: NDArray[np.float64]) -> list[NDArray[np.float64]]:
    """The peaks of the penalized log-likelihood on a geometric grid of the segment from ``start`` to ``far``.
    Under (quasi-)separation through a design where an input never gives some answer, the unpenalized fit runs
    off along the separating direction and the penalized likelihood has a maximum far out along it, out of reach
    of draws around ``start`` (a Firth fit through Warner's and a forced design stopped 5.6 log-units below it);
    the peak of the ray lies in that maximum's basin."""
    if not np.all(np.isfinite(far)) or np.allclose(far, start):
        return []
    points = [start + 2.0 ** (-j / 2) * (far - start) for j in range(FIRTH_RAY_STEPS + 1)]
    values = [value(p) for p in points]
    peaks = [j for j in range(len(points)) if np.isfinite(values[j])
             and (j == 0 or values[j] > values[j - 1]) and (j == len(points) - 1 or values[j] >= values[j + 1])]
    return [points[j] for j in sorted(peaks, key=lambda j: -values[j])[:2]]


def fit_firth(lik: Likelihood, penalty: Penalty, start: NDArray[np.float64], *, max_iter: int = 100
              ) -> tuple[NDArray[np.float64], int, bool]:
    """Maximise ``loglik + 1/2 log det I``: Fisher scoring (:func:`_firth_scoring`), which converges fast when
    the data dominate the penalty (sex2: 13 steps); where the penalty dominates (many terms, little
    information) scoring crawls, and a trust-region Newton on the penalized log-likelihood finishes, its Hessian
    by central differences of the analytic penalized score."""
    params, iterations, done = _firth_scoring(lik, penalty, start, max_iter=max_iter)
    if done:
        return params, iterations, True
    from scipy.optimize import minimize

    def gradient(b: NDArray[np.float64]) -> NDArray[np.float64]:
        return lik.score(b) + penalty.gradient(b)

    def hessian(b: NDArray[np.float64]) -> NDArray[np.float64]:
        out = np.empty((b.size, b.size))
        for j in range(b.size):
            h = 1e-6 * max(1.0, abs(float(b[j])))
            e = np.zeros(b.size)
            e[j] = h
            out[:, j] = (gradient(b + e) - gradient(b - e)) / (2 * h)
        return (out + out.T) / 2

    try:
        opt = minimize(lambda b: -(lik.loglike(b) + penalty.value(b)), params, jac=lambda b: -gradient(b),
                       hess=lambda b: -hessian(b), method="trust-exact", options={"gtol": 1e-10, "maxiter": 200})
    except (ValueError, np.linalg.LinAlgError):  # a trial point where the information is singular
        return params, iterations, False
    params = np.asarray(opt.x, dtype=np.float64)
    try:
        grad = gradient(params)
        decrement = float(grad @ np.linalg.solve(-hessian(params), grad))
    except (ValueError, np.linalg.LinAlgError):
        return params, iterations + int(opt.nit), False
    return params, iterations + int(opt.nit), 0.0 <= decrement <= FIRTH_DECREMENT_TOL * 1e4


def _firth_scoring(lik: Likelihood, penalty: Penalty, start: NDArray[np.float64], *, max_iter: int
                   ) -> tuple[NDArray[np.float64], int, bool]:
    """Maximise ``loglik + 1/2 log det I``: Fisher scoring on the penalized score (the expected information
    ``I`` as the metric, as logistf does), damped Levenberg-Marquardt style until the penalized
    log-likelihood rises; converged when the scoring decrement ``g' I^-1 g`` is below
    :data:`FIRTH_DECREMENT_TOL`."""
    params = start.copy()

    def objective(b: NDArray[np.float64]) -> float:
        return lik.loglike(b) + penalty.value(b)

    current = objective(params)
    damping = 0.0
    for iteration in range(1, max_iter + 1):
        grad = lik.score(params) + penalty.gradient(params)
        info = penalty.information(params)
        scale = np.diag(info).copy()
        scale[scale <= 0] = 1.0
        while True:
            try:
                step = np.linalg.solve(info + damping * np.diag(scale), grad)
            except np.linalg.LinAlgError:
                step = None
            if step is not None:
                if float(grad @ step) <= max(FIRTH_DECREMENT_TOL, 4 * float(np.finfo(float).eps) * abs(current)):
                    return params, iteration, True
                value = objective(params + step)
                if value >= current - 1e-15 * abs(current):
                    params, current = params + step, value
                    damping = damping / 10 if damping > 1e-12 else 0.0
                    break
            damping = max(damping * 10, 1e-8)
            if damping > 1e12:
                return params, iteration, False
    return params, max_iter, False
