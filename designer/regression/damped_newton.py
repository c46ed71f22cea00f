"""Levenberg-damped Newton steps for fits of many parameters (a categorical of hundreds of levels; docs/fits.md,
"Many parameters"): one Cholesky factorization a trial, and a run to infinity followed out so that the diagnosis
sees it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["MANY_PARAMS", "STALLED_GAIN", "STALLED_STEPS", "damped_newton"]


#: A fit of more parameters than this (a categorical of hundreds of levels) takes damped Newton steps instead of the
#: trust region, whose subproblem solves cost several factorizations a step.
MANY_PARAMS = 200
#: Damped Newton steps stop when this many in a row gain at most :data:`STALLED_GAIN` (relative) each: the estimate
#: runs off to infinity (separation); the terms that still move are pushed out along the last step
#: (:func:`_run_out`) and the diagnosis judges the fit there.
STALLED_STEPS = 3
STALLED_GAIN = 1e-8


def damped_newton(lik: Any, params: NDArray[np.float64], tolerance: Callable[[float], float], *, max_iter: int = 100
                  ) -> tuple[NDArray[np.float64], int, bool]:
    """Levenberg-Marquardt Newton steps on ``(-H + d s I)`` (``s`` the largest diagonal entry of ``-H``; ``d``
    divided by 10 after a step that raises the log-likelihood, multiplied by 10 while ``-H + d s I`` is not
    positive definite or the step falls) on ``lik`` (a :class:`~designer.regression.likelihood.Likelihood`), until
    the undamped decrement is below ``tolerance(loglik)`` (``True``), or :data:`STALLED_STEPS` steps in a row
    gain at most :data:`STALLED_GAIN` (relative) each (a run to infinity: ``False``, judged by
    the diagnosis). One Cholesky factorization a trial.

    Examples
    --------
    >>> from designer.regression.damped_newton import damped_newton
    >>> import numpy as np
    >>> from designer.regression.likelihood import Likelihood, decrement_tolerance
    >>> z = np.column_stack([np.ones(4), [0.0, 1.0, 2.0, 3.0]])
    >>> a = np.array([[1.0, 0.0, 1.0, 1.0], [0.0, 1.0, 0.0, 0.0]])  # yes, no, yes, yes (the identity design)
    >>> params, steps, done = damped_newton(Likelihood(z, a, 1), np.zeros(2), decrement_tolerance)
    >>> done, bool(np.abs(Likelihood(z, a, 1).score(params)).max() < 1e-8)
    (True, True)
    """
    from scipy.linalg import LinAlgError, cho_factor, cho_solve

    current = lik.loglike(params)
    stalled, damping = 0, 0.0
    for iteration in range(1, max_iter + 1):
        grad, info = lik.score(params), -lik.hessian(params)
        scale = max(float(np.abs(np.diag(info)).max(initial=0.0)), 1e-300)
        while True:
            try:
                factor = cho_factor(info + damping * scale * np.eye(info.shape[0]), check_finite=False)
            except LinAlgError:
                factor = None
            if factor is not None:
                step = cho_solve(factor, grad, check_finite=False)
                if damping == 0.0 and float(grad @ step) <= tolerance(current):  # the last step
                    return params + step, iteration, True
                value = lik.loglike(params + step)
                if value >= current:
                    break
            damping = 1e-8 if damping == 0.0 else damping * 10
            if damping > 1e8:
                return params, iteration, False
        stalled = stalled + 1 if value - current <= STALLED_GAIN * max(1.0, abs(current)) else 0
        params, current = params + step, value
        damping = damping / 10 if damping > 1e-8 else 0.0
        if stalled >= STALLED_STEPS:
            return _run_out(lik, params, step, current), iteration, False
    return params, max_iter, False


def _run_out(lik: Any, params: NDArray[np.float64], step: NDArray[np.float64], current: float
             ) -> NDArray[np.float64]:
    """``params`` moved along the components of ``step`` that are at least a tenth of its largest (the terms that
    run off), doubling the move while the log-likelihood does not fall: a run to infinity that Newton's steps
    follow one unit at a time is taken to where its curvature vanishes, so the diagnosis sees it (separation);
    the other terms stay where the steps left them."""
    move = np.where(np.abs(step) >= 0.1 * np.abs(step).max(initial=0.0), step, 0.0)
    out, t = params, 1.0
    while t <= 2.0**20:
        trial = params + t * move
        value = lik.loglike(trial)
        if not value >= current:
            break
        out, current, t = trial, value, 2 * t
    return out
