"""The regress command's former module name, kept only until designer/cli/__init__.py's COMMANDS names
``regress_command`` (then delete this file): see :mod:`designer.cli.regress_command`."""

from .regress_command import _configure_regress, cmd_regress

__all__ = ["_configure_regress", "cmd_regress"]
