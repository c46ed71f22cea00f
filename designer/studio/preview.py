"""The survey step's preview: what a survey of the planned size would report, simulated at the expected shares and
analysed through the library's front doors (:func:`designer.randomize`, :func:`designer.estimate`), reproducible by
its seed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["PREVIEW_MAX", "Preview", "simulate"]

#: The largest survey the studio simulates on the page (the command line simulates any size).
PREVIEW_MAX = 200_000


@dataclass(frozen=True)
class Preview:
    """A simulated survey: ``n`` true answers drawn from ``expected`` with ``seed``, randomized with the design and
    estimated as the real answers would be.

    Attributes
    ----------
    n : int
    seed : int
    expected : (k,) ndarray
        The shares the true answers were drawn from (the planning prior).
    drawn : (k,) ndarray
        The shares among the drawn true answers.
    fit : ShareEstimates
        :func:`designer.estimate` of the randomized answers.
    """

    n: int
    seed: int
    expected: Any
    drawn: Any
    fit: Any

    def rows(self) -> list[tuple[str, float | None, float | None, float | None]]:
        """(true answer, estimate, interval from, to) per share; for precise answers (WLDP) no estimate, and the
        interval the answers identify."""
        d = self.fit.to_dict()
        if "estimate" in d:
            return [(x, d["estimate"][x], d["ci_low"].get(x), d["ci_high"].get(x)) for x in d["estimate"]]
        return [(x, None, d["lower"][x], d["upper"][x]) for x in d["lower"]]

    def covered(self) -> list[bool]:
        """Whether each share's interval holds its expected share."""
        return [lo is not None and hi is not None and bool(lo <= p <= hi)
                for p, (_, _, lo, hi) in zip(self.expected, self.rows())]


def simulate(design: Any, inputs: tuple[str, ...], expected: Any, *, n: int, seed: int, level: float,
             semantics: str) -> Preview:
    """Draw ``n`` true answers from ``expected`` (``numpy.random.default_rng(seed)``), randomize them with
    ``design`` (:func:`designer.randomize`, a simulation seeded by the next draw of that generator, so that the two
    draws are independent) and estimate the shares (:func:`designer.estimate`).

    Parameters
    ----------
    design : DesignResult or Mechanism
        What :func:`designer.randomize` is handed.
    inputs : tuple of str
        The true answers, in order.
    expected : (k,) array_like
        The shares to draw from.
    n : int
        Respondents (at most :data:`PREVIEW_MAX`).
    seed : int
        The seed of both draws (true answers and randomization).
    level : float
        The intervals' confidence level.
    semantics : {"sldp", "wldp"}

    Examples
    --------
    >>> import designer
    >>> from designer.studio.preview import simulate
    >>> result = designer.design(designer.DesignProblem(inputs=("yes", "no"), epsilon=1.0))
    >>> p = simulate(result, ("yes", "no"), [0.3, 0.7], n=2000, seed=1, level=0.95, semantics="sldp")
    >>> p.n, all(p.covered())
    (2000, True)
    """
    import warnings

    import pandas as pd

    import designer

    from ..exceptions import DesignWarning

    expected = np.asarray(expected, dtype=float)
    rng = np.random.default_rng(seed)
    truth = rng.choice(len(inputs), size=n, p=expected / expected.sum())
    frame = pd.DataFrame({"answer": np.asarray(inputs, dtype=object)[truth]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DesignWarning)
        warnings.simplefilter("ignore", UserWarning)
        released = designer.randomize(frame, design, column="answer", seed=int(rng.integers(2**32)), simulation=True,
                                       semantics=semantics)
        fit = designer.estimate(released.frame, design, column="response", level=level, semantics=semantics)
    drawn = np.bincount(truth, minlength=len(inputs)) / n
    return Preview(n, seed, expected, drawn, fit)
