"""The design a release draws from, whatever it is given as: a mechanism file, a TOML problem (designed on the fly),
a :class:`~designer.optimal.problem.DesignProblem`, a design result, a certified mechanism or a bare mechanism.

``randomize`` and ``export`` read their mechanism through :func:`design_of`: the mechanism, the budget it is
certified within (``None`` for a bare mechanism, released within its own loss), where that budget comes from, an
invariant design's exact table and the prior it keeps, and the detail of the design's own certificate.
"""

from __future__ import annotations

import os
from typing import Any, NamedTuple

from ..certificate import certificate_fields
from ..exceptions import InvalidArgumentTypeError
from ..guarantees.certified import CertifiedMechanism
from ..mechanism import Mechanism

__all__ = ["Design", "design_of", "source_name"]


class Design(NamedTuple):
    """A design to draw from: the mechanism, the budget it states (None: none stated), where that budget comes
    from, an invariant design's exact table (counts, per-row denominators; None for other designs), the prior it
    keeps, the detail of the design's own certificate (None when it states none) and the problem it was designed
    for (None for a file or a bare mechanism).

    Examples
    --------
    >>> import designer
    >>> from designer.release.sources import design_of
    >>> problem = designer.DesignProblem(inputs=("yes", "no"), epsilon=1.0, objective="truthful")
    >>> design = design_of(designer.design(problem))
    >>> design.epsilon, design.basis
    (1.0, "the design's budget (the DesignResult given)")
    """

    mechanism: Any
    epsilon: float | None
    basis: str
    exact: tuple[Any, Any] | None = None
    prior: tuple[Any, ...] | None = None
    certificate: dict[str, Any] | None = None
    problem: Any = None


def source_name(source: Any) -> str:
    """How errors and records name a design: its path, or the kind of object it is.

    Examples
    --------
    >>> import designer
    >>> from designer.release.sources import source_name
    >>> source_name(designer.Q_WRR(1.0)), source_name("gwrr.json")
    ('the Mechanism given', 'gwrr.json')
    """
    if isinstance(source, str | os.PathLike):
        return os.fspath(source)
    return f"the {type(source).__name__} given"


def _of_result(result: Any, basis: str) -> Design:
    """A design result's design: its mechanism, its problem's budget, its certificate and its exact table."""
    detail = certificate_fields(result.certificate)["certificate_detail"] if result.certificate else None
    table = getattr(result, "exact_table", None)
    if table is None:
        return Design(result.mechanism, result.problem.epsilon, basis, certificate=detail, problem=result.problem)
    return Design(result.mechanism, result.problem.epsilon, basis, (table.counts, table.denominators), table.prior,
                  detail, result.problem)


def design_of(source: Any, data_prior: Any = None) -> Design:
    """The design ``source`` gives.

    Parameters
    ----------
    source : str, path-like, DesignProblem, DesignResult, CertifiedMechanism or Mechanism
        A mechanism file (CSV, or JSON whose release is checked exactly on reading), a TOML problem or a problem
        (designed here; an invariant one keeping ``data_prior`` when given), a design result (its mechanism and
        certificate), a certified mechanism (its budget and certificate) or a bare ``(k, F)`` mechanism (no
        budget stated: it is released within its own loss).
    data_prior : sequence of Fraction, optional
        For an invariant problem: the prior to keep instead of the problem's.

    Returns
    -------
    Design

    Examples
    --------
    >>> import designer
    >>> from designer.release.sources import design_of
    >>> design_of(designer.Q_WRR(1.0)).basis  # a mechanism states no budget: its own loss
    "the mechanism's own loss"
    """
    from ..optimal.problem import DesignProblem
    from ..optimal.result import DesignResult

    if isinstance(source, str | os.PathLike):
        from .._internal.bundled import resolve

        source = resolve(source, ("mechanism", "problem"))  # a file that exists, else designer's own by name
    if isinstance(source, str | os.PathLike) and os.fspath(source).endswith(".toml"):
        from ..optimal.problem_toml import load_problem

        path = os.fspath(source)
        return _designed(load_problem(path), data_prior, f"the problem's budget ({path})")
    if isinstance(source, str | os.PathLike):
        from .files import open_mechanism_file

        file = open_mechanism_file(source)
        if file.release is not None:
            detail = file.release.certificate.get("certificate_detail")
            return Design(file.mechanism, file.release.epsilon, "the file's release", file.exact, file.prior,
                          detail if isinstance(detail, dict) else None)
        return Design(file.mechanism, None, "the mechanism's own loss", file.exact, file.prior)
    if isinstance(source, DesignProblem):
        return _designed(source, data_prior, "the problem's budget (the DesignProblem given)")
    if isinstance(source, DesignResult):
        return _of_result(source, "the design's budget (the DesignResult given)")
    if isinstance(source, CertifiedMechanism):
        detail = certificate_fields(source.certificate)["certificate_detail"]
        return Design(source.mechanism, source.epsilon, "the certificate's budget (the CertifiedMechanism given)",
                      certificate=detail)
    if isinstance(source, Mechanism):
        return Design(source, None, "the mechanism's own loss")
    raise InvalidArgumentTypeError(f"mechanism must be a file's path, a DesignProblem, a DesignResult, a "
                                   f"CertifiedMechanism or a Mechanism, got {type(source).__name__}")


def _designed(problem: Any, data_prior: Any, basis: str) -> Design:
    from ..optimal import design
    from ..optimal.invariant import design_invariant

    result = design(problem) if data_prior is None else design_invariant(problem, prior=data_prior)
    return _of_result(result, basis)
