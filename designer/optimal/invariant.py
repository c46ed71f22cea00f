"""Invariant designs (the post-randomization method, PRAM): the best mechanism among those that keep a prior's
distribution of the released variable, with an exact integer table (docs/theory.md section 12).

:func:`design_invariant` keeps a prior of the caller's (e.g. a data file's counts) exactly, :func:`design_strata`
one prior per stratum; both take the engine's invariant route (:func:`designer.optimal.engine.release_route`). The
program and the table are :mod:`designer.optimal.invariant_exact`'s (its names are importable from here too).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..exceptions import InvalidProblemError
from .engine import release_route
from .invariant_exact import (
    INVARIANT_RTOL,
    InvariantRelease,
    InvariantTable,
    certify_table,
    exact_prior,
    invariant_problem,
    invariant_program,
    invariant_table,
)
from .problem import DesignProblem
from .result import DesignResult
from .route import Decision, Route

__all__ = ["INVARIANT_RTOL", "InvariantRelease", "InvariantTable", "certify_table", "design_invariant",
           "design_strata", "exact_prior", "invariant_problem", "invariant_program", "invariant_table"]


def design_invariant(problem: DesignProblem, prior: Sequence[float | Fraction] | NDArray[np.float64] | None = None,
                     *, solver: str | None = None, options: dict[str, Any] | None = None) -> DesignResult:
    """The optimal design of ``problem`` among those keeping ``prior`` (default the problem's) invariant, with its
    exact table (``result.exact_table``). See the module's docstring; docs/theory.md section 12. ``solver`` and
    ``options`` choose the LP solver as in :func:`designer.optimal.design`, whose invariant route this is (with a
    prior of the caller's, e.g. a data file's counts, kept exactly).

    Raises
    ------
    InvalidProblemError
        With :meth:`DesignProblem.invariant_refusal`'s reason (sets among the answers, chi2, a frame that is
        not the inputs, ...).
    """
    kept, exact = invariant_problem(problem, prior)
    return release_route(Decision(Route.INVARIANT, kept, prior=exact), solver=solver, options=options)


def design_strata(problem: DesignProblem,
                  priors: Mapping[str, Sequence[float | Fraction] | NDArray[np.float64]] | None = None, *,
                  solver: str | None = None, options: dict[str, Any] | None = None) -> dict[str, DesignResult]:
    """One invariant design per stratum: each keeps its stratum's prior (``priors``, default the problem's
    ``[strata]`` table), with its own exact table; the same budget and objective for all (docs/theory.md
    section 12.4). A respondent is randomized by the design of its stratum only, so the release's loss per
    respondent is one design's (the largest of them), not their sum.

    Returns
    -------
    dict
        Stratum name to :class:`DesignResult`, in the order given.
    """
    chosen = dict(problem.strata) if priors is None else dict(priors)
    if not chosen:
        raise InvalidProblemError(f"{problem.source or 'the problem'}: no strata: give a [strata] table (one prior "
                                  "per stratum) or the priors")
    return {name: design_invariant(problem, prior=prior, solver=solver, options=options)
            for name, prior in chosen.items()}
