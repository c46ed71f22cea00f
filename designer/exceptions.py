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
    "ShadowedNameWarning",
    "SolverError",
]


class DesignerError(Exception):
    """Base class of every error designer raises on purpose.

    Examples
    --------
    Every error designer raises on purpose is one, so one ``except`` catches them all:

    >>> import designer
    >>> try:
    ...     designer.Q_WRR(-1.0)
    ... except designer.DesignerError as err:
    ...     print(type(err).__name__, "-", err)
    InvalidArgumentError - eps must be a finite number > 0, got -1.0
    """


class InvalidArgumentError(DesignerError, ValueError):
    """An argument of a designer function lies outside its domain; the message names it and the rule.

    Examples
    --------
    >>> import designer
    >>> try:
    ...     designer.Q_WRR(-1.0)  # a budget must be > 0
    ... except designer.DesignerError as err:
    ...     print(type(err).__name__)
    InvalidArgumentError
    """


class InvalidArgumentTypeError(DesignerError, TypeError):
    """An argument of a designer function has the wrong type; the message names it and what is expected.

    Examples
    --------
    >>> import designer
    >>> try:
    ...     designer.Q_WRR("one")  # a budget is a number
    ... except designer.DesignerError as err:
    ...     print(type(err).__name__)
    InvalidArgumentTypeError
    """


class CommandError(DesignerError):
    """A problem with a command's flags or files that the command reports on one line (exit status 2).

    Examples
    --------
    The command line prints it as one line on stderr and exits with status 2:

    >>> from designer.exceptions import CommandError, DesignerError
    >>> issubclass(CommandError, DesignerError)
    True
    """


class DataError(DesignerError, ValueError):
    """A data file or frame cannot be read as asked (a damaged file, a missing or repeated column, a cell that is not
    an answer); the message names the file (and the line or column) and the fix.

    Examples
    --------
    >>> import designer
    >>> try:
    ...     designer.estimate(["maybe"], designer.Q_WRR(1.0))  # not an answer Warner's design gives
    ... except designer.DesignerError as err:
    ...     print(type(err).__name__)
    DataError
    """


class InvalidMechanismError(DesignerError, ValueError):
    """A mass matrix, its labels or a mechanism file is not a valid evidential mechanism.

    Examples
    --------
    >>> import designer
    >>> try:
    ...     designer.Mechanism([[0, 0.5, 0.6, 0], [0, 0.5, 0.5, 0]], inputs=("a", "b"))  # a row sums to 1.1
    ... except designer.DesignerError as err:
    ...     print(type(err).__name__)
    InvalidMechanismError
    """


class InvalidProblemError(DesignerError, ValueError):
    """A design problem (Python object or TOML file) is malformed.

    Examples
    --------
    >>> import designer
    >>> try:
    ...     designer.DesignProblem(inputs=("yes", "no"), epsilon=1.0, prior=(0.5, 0.6))
    ... except designer.DesignerError as err:
    ...     print(type(err).__name__)
    InvalidProblemError
    """


class InfeasibleDesignError(DesignerError, ValueError):
    """No mechanism satisfies the design problem; the message says what would make it feasible.

    Examples
    --------
    A binary WLDP design holds a don't-know mass of at most ``tanh(eps / 2)`` (docs/theory.md, section 4):

    >>> import designer
    >>> problem = designer.DesignProblem(inputs=("yes", "no"), epsilon=0.1, semantics="wldp", dont_know=0.9)
    >>> try:
    ...     designer.design(problem)
    ... except designer.InfeasibleDesignError as err:
    ...     print("use dont_know <= tanh(eps/2)" in str(err))
    True
    """


class DesignWarning(UserWarning):
    """A released design has a property its user should know of (e.g. it does not identify every share).

    Examples
    --------
    A chi2 design at a skewed prior may let rare inputs answer alike; the result says so in ``warnings`` and as a
    warning of this class:

    >>> import warnings
    >>> import designer
    >>> problem = designer.DesignProblem(inputs=("a", "b", "c"), epsilon=1.0, objective="chi2", prior=(0.9, 0.05, 0.05))
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     result = designer.design(problem)
    >>> [w.category.__name__ for w in caught], "inputs b, c answer alike" in result.warnings[0]
    (['DesignWarning'], True)
    """


class ShadowedNameWarning(UserWarning):
    """A file in the current folder has the bare name of a file that comes with designer, and is read instead.

    ``designer randomize answers`` reads ``./answers.csv`` when there is one, not designer's own ``answers``; the
    command line says so on one line (``designer: note: ...``) so that a file left in the folder does not silently
    change what an example does.

    Examples
    --------
    >>> import os, tempfile, warnings
    >>> from designer._internal.bundled import resolve
    >>> from designer.exceptions import ShadowedNameWarning
    >>> here = os.getcwd()
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     os.chdir(folder)
    ...     _ = open("warner.toml", "w").close()
    ...     with warnings.catch_warnings(record=True) as caught:
    ...         warnings.simplefilter("always")
    ...         path = resolve("warner", "problem")
    ...     os.chdir(here)
    >>> path, [w.category.__name__ for w in caught]
    ('warner.toml', ['ShadowedNameWarning'])
    """


class SolverError(DesignerError):
    """The solver did not solve a program (limit reached, numerical trouble, solver failure).

    Distinct from :class:`InfeasibleDesignError`: nothing is known about feasibility.

    Examples
    --------
    Not an answer about feasibility: the solver stopped (a limit, numerical trouble). The command line exits 1.

    >>> import designer
    >>> issubclass(designer.SolverError, designer.DesignerError), issubclass(designer.SolverError, ValueError)
    (True, False)
    """


class CertificationError(DesignerError, RuntimeError):
    """No certified mechanism could be produced: nothing is released, and the message says why.

    Examples
    --------
    Nothing is released when no certified mechanism could be produced; the command line exits 1.

    >>> import designer
    >>> issubclass(designer.CertificationError, designer.DesignerError)
    True
    """


class RegressionError(DesignerError, ValueError):
    """The data, the formula or the mechanism cannot give a regression (the message says which and why).

    ``row`` is the 0-based data row at fault when there is one (a command turns it into the file's line);
    ``reason`` is the message without the row.

    Examples
    --------
    >>> import pandas as pd
    >>> import designer
    >>> data = pd.DataFrame({"response": ["{yes}", "{no}"] * 10, "age": range(20)})
    >>> try:
    ...     designer.regress("response ~ agee", data, designer.Q_WRR(1.0))
    ... except designer.exceptions.RegressionError as err:
    ...     print(err.row, "agee" in err.reason)
    None True
    """

    def __init__(self, reason: str, *, row: int | None = None) -> None:
        self.reason, self.row = reason, row
        super().__init__(reason if row is None else f"data row {row + 1}: {reason}")


class PlanningError(DesignerError, ValueError):
    """A plan that cannot be made (the message says why and what would work).

    Examples
    --------
    A design whose answers say nothing about the shares (both rows alike) cannot be planned for:

    >>> import designer
    >>> try:
    ...     designer.plan(designer.Q_2x3(0.4, 0.4), width=0.05)
    ... except designer.exceptions.PlanningError as err:
    ...     print("not identified" in str(err))
    True
    """


class DeviceError(DesignerError, ValueError):
    """An unknown device or a grid that cannot hold the design (the message says what would).

    Examples
    --------
    >>> from designer import devices
    >>> try:
    ...     devices.parse_device("dice3")
    ... except devices.DeviceError as err:
    ...     print(err)
    unknown device 'dice3'; the devices are die, dice2, cards, coins:N, spinner:D
    """


class FieldError(InvalidArgumentError):
    """A value typed into a field of the studio that cannot be used; ``field`` is the field's element id (the page
    shows the message once, next to it).

    Examples
    --------
    A budget typed with a decimal comma on an English page:

    >>> from designer.exceptions import FieldError
    >>> from designer.studio.fields import read_number
    >>> try:
    ...     read_number("1,5", "epsilon", "The budget")
    ... except FieldError as err:
    ...     print(err.field, "-", err)
    epsilon - The budget: '1,5' has a comma: did you mean 1.5? Write decimals with a point
    """

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


class NotReadyError(DesignerError):
    """A part of the studio that cannot be computed for the session's state yet, with the reason in plain words.

    ``reason``: ``"question"`` (a field of the question or the budget is to fix), ``"design"`` (the design at this
    budget failed: step 2 shows why), ``"listed"`` (the design is kept in compact form), or ``""`` (waiting for an
    upload, a button, a field).

    Examples
    --------
    The design of a session whose question has a field to fix:

    >>> import tempfile
    >>> from designer.exceptions import NotReadyError
    >>> from designer.studio.session import Lab
    >>> from designer.studio.state import Study
    >>> study = Study(data=None, problem_text="", problem=None, loaded=None, epsilon=None, errors={})
    >>> try:
    ...     Lab(tempfile.gettempdir()).design(study)  # nothing is written
    ... except NotReadyError as err:
    ...     print(err.reason, "-", err)
    question - No design yet: the question in step 1 has a field to fix.
    """

    def __init__(self, message: str = "", reason: str = "") -> None:
        super().__init__(message)
        self.reason = reason
