"""Exceptions and warnings raised by designer (one place, so callers can catch them by type)."""

from __future__ import annotations

__all__ = [
    "CertificationError",
    "CommandError",
    "DataError",
    "DesignWarning",
    "DesignerError",
    "DeviceError",
    "FieldError",
    "InfeasibleDesignError",
    "InvalidArgumentError",
    "InvalidArgumentTypeError",
    "InvalidMechanismError",
    "InvalidProblemError",
    "NotReadyError",
    "PlanningError",
    "RegressionError",
    "SolverError",
]


class DesignerError(Exception):
    """Base class of every error designer raises on purpose."""


class InvalidArgumentError(DesignerError, ValueError):
    """An argument of a designer function lies outside its domain; the message names it and the rule."""


class InvalidArgumentTypeError(DesignerError, TypeError):
    """An argument of a designer function has the wrong type; the message names it and what is expected."""


class CommandError(DesignerError):
    """A problem with a command's flags or files that the command reports on one line (exit status 2)."""


class DataError(DesignerError, ValueError):
    """A data file or frame cannot be read as asked (a damaged file, a missing or repeated column, a cell that is not
    an answer); the message names the file (and the line or column) and the fix."""


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


class RegressionError(DesignerError, ValueError):
    """The data, the formula or the mechanism cannot give a regression (the message says which and why).

    ``row`` is the 0-based data row at fault when there is one (a command turns it into the file's line);
    ``reason`` is the message without the row.
    """

    def __init__(self, reason: str, *, row: int | None = None) -> None:
        self.reason, self.row = reason, row
        super().__init__(reason if row is None else f"data row {row + 1}: {reason}")


class PlanningError(DesignerError, ValueError):
    """A plan that cannot be made (the message says why and what would work)."""


class DeviceError(DesignerError, ValueError):
    """An unknown device or a grid that cannot hold the design (the message says what would)."""


class FieldError(InvalidArgumentError):
    """A value typed into a field of the studio that cannot be used; ``field`` is the field's element id (the page
    shows the message once, next to it)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


class NotReadyError(DesignerError):
    """A part of the studio that cannot be computed for the session's state yet, with the reason in plain words.

    ``reason``: ``"question"`` (a field of the question or the budget is to fix), ``"design"`` (the design at this
    budget failed: step 2 shows why), ``"listed"`` (the design is kept in compact form), or ``""`` (waiting for an
    upload, a button, a field).
    """

    def __init__(self, message: str = "", reason: str = "") -> None:
        super().__init__(message)
        self.reason = reason
