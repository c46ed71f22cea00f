"""Exceptions and warnings raised by designer (one place, so callers can catch them by type)."""

from __future__ import annotations

__all__ = [
    "CertificationError",
    "DesignWarning",
    "DesignerError",
    "InfeasibleDesignError",
    "InvalidMechanismError",
    "InvalidProblemError",
    "SolverError",
]


class DesignerError(Exception):
    """Base class of every error designer raises on purpose."""


class InvalidMechanismError(DesignerError, ValueError):
    """A mass matrix, its labels or a mechanism file is not a valid evidential mechanism."""


class InvalidProblemError(DesignerError, ValueError):
    """A design problem (Python object or TOML file) is malformed."""


class InfeasibleDesignError(DesignerError, ValueError):
    """No mechanism satisfies the design problem; the message says what would make it feasible."""


class DesignWarning(UserWarning):
    """A released design has a property its user should know of (e.g. it does not identify every share)."""


class SolverError(DesignerError):
    """The solver did not solve a program (limit reached, numerical trouble, solver failure).

    Distinct from :class:`InfeasibleDesignError`: nothing is known about feasibility.
    """


class CertificationError(DesignerError, RuntimeError):
    """No certified mechanism could be produced: nothing is released, and the message says why."""
