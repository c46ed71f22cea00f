"""The front door of ``designer design``: :func:`design` reads a problem (a TOML file or a
:class:`~designer.optimal.problem.DesignProblem`), applies the command line's overrides and returns the certified
optimal design as a :class:`~designer.optimal.result.DesignResult`."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from .._internal.keywords import read_number, read_prior, shown
from .._internal.solvers import WarmStart
from ..exceptions import InvalidArgumentError, InvalidArgumentTypeError
from ..optimal.engine import design as design_problem
from ..optimal.problem import DesignProblem
from ..optimal.problem_toml import load_problem
from ..optimal.result import DesignResult

__all__ = ["design", "read_problem"]


def read_problem(problem: DesignProblem | str | os.PathLike[str], *, epsilon: float | None = None,
                 dont_know: float | str | None = None, semantics: str | None = None, objective: str | None = None,
                 prior: str | Mapping[str, float] | Sequence[float] | None = None) -> DesignProblem:
    """``problem`` (a TOML file's path or a :class:`DesignProblem`) with the command line's overrides applied.

    Parameters are those of :func:`design`. Raises :class:`~designer.exceptions.InvalidProblemError` for a bad file
    or value (naming the file and the key), :class:`~designer.exceptions.InvalidArgumentError` for a bad prior or
    don't-know text, :class:`~designer.exceptions.InvalidArgumentTypeError` for anything else given as ``problem``.

    Examples
    --------
    >>> import designer
    >>> from designer.verbs.design_verb import read_problem
    >>> problem = read_problem(designer.DesignProblem(inputs=("yes", "no"), epsilon=2.0), epsilon=1.0, dont_know="1/5")
    >>> problem.epsilon, problem.dont_know
    (1.0, 0.2)
    """
    if isinstance(problem, (str, os.PathLike)):
        problem = load_problem(problem)
    elif not isinstance(problem, DesignProblem):
        raise InvalidArgumentTypeError(f"design() takes a DesignProblem or the path of a problem file (TOML), got "
                                       f"{type(problem).__name__}")
    changes: dict[str, Any] = {}
    if epsilon is not None:
        changes["epsilon"] = epsilon
    if semantics is not None:
        changes["semantics"] = semantics
    if objective is not None:
        changes["objective"] = objective
    if prior is not None:
        changes["prior"] = read_prior(prior, problem.inputs, shown("prior"), [float(v) for v in problem.prior])
    if dont_know is not None:  # its range is the problem's rule (DesignProblem), the same as in a file
        changes["dont_know"] = _mass(dont_know)
    return problem.replace(**changes) if changes else problem


def _mass(value: float | str) -> float:
    """A don't-know mass given as a number or as text (``0.2``, ``7/36``: read exactly, rounded once)."""
    if not isinstance(value, str):
        return value
    try:
        return read_number(value)
    except ValueError:
        raise InvalidArgumentError(f"{shown('dont_know')} {value!r}: write a number in [0, 1] such as 0.2 or 7/36"
                                   ) from None


def design(problem: DesignProblem | str | os.PathLike[str], *, epsilon: float | None = None,
           dont_know: float | str | None = None, semantics: str | None = None, objective: str | None = None,
           prior: str | Mapping[str, float] | Sequence[float] | None = None, solver: str | None = None,
           solver_options: dict[str, Any] | None = None, symmetrize: bool = True, path: str = "auto",
           warm: WarmStart | None = None) -> DesignResult:
    """Design the optimal certified mechanism of a problem (``designer design``; docs/theory.md, section 5).

    For a linear objective (``truthful``, ``gain``, the utilities):

    .. math::

        \\max_M \\sum_{x, E} \\pi_x G[x, E] M[x, E] \\quad \\text{s.t. } M \\ge 0,\\ M 1 = 1, \\\\
        \\text{eps-SLDP (Def 3.1) and/or eps-WLDP (Def 3.13), structure;}

    ``chi2`` and the variance objectives (``variance``, the default, and ``max_variance``) are solved over the
    staircase patterns (docs/theory.md sections 5.2 and 5.7).

    The route (general, priced, lazy, precise, staircase, variance, symmetric or invariant) is decided once from the
    problem (:func:`designer.optimal.route.decide`); the released mechanism is certified in exact arithmetic (Thm
    3.10's optimum to ``OBJECTIVE_RTOL``).

    Parameters
    ----------
    problem : DesignProblem, str or os.PathLike
        The problem, or the path of a problem file (TOML; its keys: docs/guide/design.md).
    epsilon : float, optional
        The budget in nats (``--epsilon``), instead of the problem's.
    dont_know : float or str, optional
        The exact don't-know mass in ``[0, 1]`` (``--dont-know``; text such as ``"7/36"`` is read exactly).
    semantics : {"sldp", "wldp", "both"}, optional
        Instead of the problem's (``--semantics``).
    objective : str, optional
        Instead of the problem's (``--objective``; :data:`designer.vocabulary.OBJECTIVE_MEANINGS`).
    prior : str, mapping or sequence of float, optional
        The prior ``(k,)`` to design at (``--prior``): ``"yes=0.3,no=0.7"``, ``"0.3,0.7"``, fractions, a mapping of
        inputs to shares (inputs left out share the rest in the problem's proportions) or ``k`` shares in input
        order.
    solver, solver_options, symmetrize, path, warm
        As in :func:`designer.optimal.engine.design`.

    Returns
    -------
    DesignResult
        ``status`` ``FitStatus.OPTIMAL``; ``to_dict()`` is ``designer design --format json``, ``table()`` its CSV
        and ``summary()`` its table output.

    Raises
    ------
    InvalidProblemError
        A bad problem file or override (the message names the file and the key), or a problem too large.
    InfeasibleDesignError
        With what would make the problem feasible.
    SolverError, CertificationError
        When the solver stops without an answer, or no answer certifies (nothing is released).

    Examples
    --------
    >>> from designer.optimal import DesignProblem
    >>> from designer.verbs.design_verb import design
    >>> r = design(DesignProblem(inputs=("yes", "no"), epsilon=2.0), epsilon=1.0, dont_know="1/5")
    >>> str(r.status), round(r.mechanism.row("yes")[("yes",)], 6)  # Cor 3.12: 0.8 e / (e + 1)
    ('optimal', 0.584847)
    """
    chosen = read_problem(problem, epsilon=epsilon, dont_know=dont_know, semantics=semantics, objective=objective,
                          prior=prior)
    return design_problem(chosen, solver=solver, solver_options=solver_options, symmetrize=symmetrize, path=path,
                          warm=warm)
