"""Monte Carlo of survey estimates: draw answers, estimate, summarise next to the closed forms.

Answers of ``n`` respondents whose true inputs are drawn from ``prior`` have multinomial counts over the
focal sets with probabilities ``prior . M`` (Shafer semantics) or over the frame with ``prior . pr``
(Walley semantics, for an allocation of :mod:`designer.estimation.sampling`), so a replicate is one multinomial
draw; estimators are vectorised over replicates.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from .._internal.validation import check_prior
from ..exceptions import InvalidArgumentError, InvalidMechanismError
from ..mechanism import Mechanism
from ..vocabulary import ESTIMATORS
from .sampling import as_rng, precise_distributions
from .shares import em, estimator_variance, inversion_estimate

__all__ = ["ESTIMATORS", "simulate", "summarize"]

_CHUNK = 2000


def _eq2(counts: NDArray[np.float64], p: float, q: float) -> NDArray[np.float64]:
    """Eq 2 for counts ``(n1, n2, n3)``; NaN where nobody gave a precise answer (Thm 3.9 conditions)."""
    n1, n2 = counts[:, 0], counts[:, 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        est = (n2 * q - n1 * p) / ((n1 + n2) * (q - p))
    est = np.where(n1 + n2 > 0, est, np.nan)
    return np.c_[est, 1 - est]


def simulate(
    mech: Mechanism,
    prior: Sequence[float],
    n: int,
    reps: int,
    rng: np.random.Generator | int | None = None,
    *,
    estimator: str = "mle",
    semantics: str = "sldp",
    allocation: str | float | NDArray[np.float64] = "uniform",
    progress: bool | None = None,
) -> pd.DataFrame:
    """Estimates of the prior from ``reps`` simulated surveys of ``n`` respondents.

    Parameters
    ----------
    mech : Mechanism
    prior : (k,) sequence of float
        True input distribution.
    n, reps : int
        Respondents per survey, number of surveys.
    rng : Generator, int or None
    estimator : {"mle", "inversion", "eq2"}
        ``mle``: EM maximum likelihood (within the simplex); ``inversion``: the unbiased ``f M^-1`` of a
        square Bayesian mechanism (Warner's estimator, Ex 3.7); ``eq2``: the paper's Eq 2 for ``Q_2x3``,
        NaN when all answers are "don't know".
    semantics : {"sldp", "wldp"}
        Set-valued answers, or precise answers from ``allocation`` (see :mod:`designer.estimation.sampling`).
    progress : bool, optional
        tqdm progress bar on stderr (default: only for long runs on a terminal).

    Returns
    -------
    pandas.DataFrame
        One row per survey, one column per input; ``attrs`` holds the settings.

    Examples
    --------
    200 surveys of 100 respondents through ``Q_2x3(0.6, 0.2)``, a share estimate per survey and input:

    >>> import designer
    >>> from designer.estimation.simulation import simulate
    >>> estimates = simulate(designer.Q_2x3(0.6, 0.2), [0.3, 0.7], n=100, reps=200, rng=3)
    >>> estimates.shape, estimates.columns.tolist()
    ((200, 2), ['yes', 'no'])
    """
    pi = check_prior(prior, mech.k)
    if estimator not in ESTIMATORS:
        raise InvalidArgumentError(f"estimator must be one of {list(ESTIMATORS)}, got {estimator!r}")
    gen = as_rng(rng)
    if semantics == "sldp":
        channel = mech.matrix
    elif semantics == "wldp":
        channel = precise_distributions(mech, allocation)
    else:
        raise InvalidArgumentError(f"semantics must be 'sldp' or 'wldp', got {semantics!r}")
    if estimator == "eq2":
        focal = [int(f) for f in mech.focal]
        if semantics != "sldp" or mech.k != 2 or mech.l != 2 or focal not in ([1, 2], [1, 2, 3]):
            raise InvalidMechanismError("the Eq 2 estimator is for Q_2x3 (two inputs, answers yes / no / don't know)")
        if len(focal) == 2:  # no don't-know mass: a zero third column
            channel = np.c_[channel, np.zeros(2)]
        p, q = channel[0, 0], channel[0, 1]
    out = channel.T @ pi
    out = out / out.sum()
    if progress is None:
        progress = reps * n > 5e7 and sys.stderr.isatty()
    chunks = range(0, reps, _CHUNK)
    if progress:
        from tqdm import tqdm

        chunks = tqdm(chunks, desc="simulating", unit="chunk", file=sys.stderr)
    estimates = []
    for start in chunks:
        size = min(_CHUNK, reps - start)
        counts = gen.multinomial(n, out, size=size).astype(np.float64)
        if estimator == "mle":
            est, _ = em(channel, counts, tol=1e-10)
        elif estimator == "inversion":
            est = inversion_estimate(channel, counts)
        else:
            est = _eq2(counts, p, q)
        estimates.append(np.atleast_2d(est))
    df = pd.DataFrame(np.vstack(estimates), columns=list(mech.inputs))
    df.attrs.update(prior=pi.tolist(), n=n, reps=reps, estimator=estimator, semantics=semantics)
    return df


def summarize(df: pd.DataFrame, mech: Mechanism | None = None, *, reference: ArrayLike | None = None
              ) -> pd.DataFrame:
    """Mean, bias and variance of simulated estimates per input, next to a reference variance.

    ``reference`` defaults to the asymptotic MLE variance ``1 / (n I)`` of the mechanism at the prior
    (set-valued answers); surveys with no usable answer (NaN) are left out, as in Thm 3.9.

    Examples
    --------
    The simulated variance against the asymptotic ``1 / (n I)`` (0.012 here):

    >>> import designer
    >>> from designer.estimation.simulation import simulate, summarize
    >>> q = designer.Q_2x3(0.6, 0.2)
    >>> table = summarize(simulate(q, [0.3, 0.7], n=100, reps=200, rng=3), q)
    >>> table.columns.tolist()
    ['input', 'true', 'mean', 'bias', 'variance', 'closed_form', 'ratio']
    >>> table["closed_form"].round(6).tolist(), bool(abs(table["ratio"][0] - 1) < 0.2)
    ([0.012, 0.012], True)
    """
    prior = np.asarray(df.attrs["prior"])
    n = int(df.attrs["n"])
    values = df.to_numpy()
    used = ~np.isnan(values).any(axis=1)
    values = values[used]
    if reference is None and mech is not None:
        reference = np.asarray(estimator_variance(mech, prior, n, reduce="none"))
    table = pd.DataFrame({
        "input": df.columns,
        "true": prior,
        "mean": values.mean(axis=0),
        "bias": values.mean(axis=0) - prior,
        "variance": values.var(axis=0, ddof=1),
    })
    if reference is not None:
        table["closed_form"] = np.asarray(reference, dtype=float)
        table["ratio"] = table["variance"] / table["closed_form"]
    table.attrs["used_surveys"] = int(used.sum())
    return table
