"""Command-line interface: ``designer COMMAND ...``.

Every command reads its inputs, does its work through the library and prints a table (default), JSON
or CSV. Errors in the input (a :class:`~designer.exceptions.DesignerError`, an argparse usage error, a
file that cannot be read or written) are one line on stderr, ``designer: error: FILE: problem``, exit
status 2. Anything else is a bug of designer's: one line asking for a report, exit status 70
(``EX_SOFTWARE``), the traceback with ``--debug``. The library is imported only by the command that runs,
so ``designer --help`` starts at once.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from .._internal.keywords import flag_names
from ..exceptions import (
    CertificationError,
    DataError,
    DesignerError,
    DesignWarning,
    ShadowedNameWarning,
    SolverError,
)
from ._common import show_progress

__all__ = ["COMMANDS", "build_parser", "main", "show_progress"]

EXIT_USAGE = 2
#: An internal error (sysexits.h ``EX_SOFTWARE``): not the user's input, a bug to report.
EXIT_INTERNAL = 70
REPORT = ("please report it with the command line, the input files and what 'designer --version --verbose' prints "
          "(run again with --debug for the traceback)")


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors: ``designer: error: argument --epsilon: ...`` (exit status 2)."""

    def error(self, message: str) -> NoReturn:
        message = " ".join(message.split())
        self.exit(EXIT_USAGE, f"designer: error: {message}{self._did_you_mean(message)} (see '{self.prog} --help')\n")

    def _did_you_mean(self, message: str) -> str:
        """``; did you mean --epsilon?`` for a mistyped flag, command or choice (closest by difflib), or ``""``."""
        import difflib
        import re

        choice = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)$", message)
        if choice:
            given, options = choice.group(1), re.findall(r"'([^']*)'", choice.group(2))
        elif message.startswith("unrecognized arguments: "):
            given = next((w.split("=")[0] for w in message.split()[2:] if w.startswith(("-", "\u2013", "\u2014"))), "")
            options = [o for parser in self._parsers() for a in parser._actions for o in a.option_strings]
        else:
            return ""
        own = {"--version": "; --version takes no command: 'designer --version'",
               "--verbose": "; --verbose goes with --version: 'designer --version --verbose'"}
        if given in own:  # designer's own options, given after a command
            return own[given]
        close = difflib.get_close_matches(given.replace("\u2013", "--").replace("\u2014", "--"), options, n=1,
                                          cutoff=0.6) if given else []
        dash = " (a dash pasted for two hyphens)" if given[:1] in ("\u2013", "\u2014") else ""
        return f"; did you mean {close[0]}?{dash}" if close else ""

    def _parsers(self) -> list[argparse.ArgumentParser]:
        """This parser and the commands' parsers (only the running command's has its options)."""
        subs = [a for a in self._actions if isinstance(a, argparse._SubParsersAction)]
        return [self, *(parser for a in subs for parser in a.choices.values())]


class _Lazy:
    """A function of a command's module, imported when first called: a command imports its own module and
    nothing of the others' (``designer --help`` imports none)."""

    def __init__(self, module: str, name: str) -> None:
        self.module, self.name = module, name
        self.__name__ = self.__qualname__ = name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{self.module}"), self.name)(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<{__name__}.{self.module}.{self.name}>"


def _verb(module: str, verb: str, configure: str | None = None) -> tuple[_Lazy, _Lazy]:
    """The configure and run functions of ``verb`` in ``module`` (``_configure_<verb>``, ``cmd_<verb>``)."""
    return _Lazy(module, configure or f"_configure_{verb}"), _Lazy(module, f"cmd_{verb}")


COMMANDS: list[tuple[str, str, str, Callable[[argparse.ArgumentParser], None], Callable[..., str]]] = [
    ("problems", "the design problems, mechanisms and data that come with designer, and a copy to start from",
     "designer problems copy gwrr-dont-know my-question.toml", *_verb("problems_command", "problems")),
    ("audit", "privacy losses (Shafer, bel, pl, Walley) of a mechanism file",
     "designer audit q2x3 --format json", *_verb("mechanism_commands", "audit")),
    ("design", "optimal certified mechanism for a design problem",
     "designer design gwrr-dont-know --epsilon 2 --out gwrr-2.csv", *_verb("design_commands", "design")),
    ("compare", "designed mechanisms next to the closed forms over a grid of epsilons",
     "designer compare gwrr-dont-know --eps 0.1:5:50", *_verb("design_commands", "compare")),
    ("tradeoff", "type I / type II trade-off curve of a test between two inputs, with its bound",
     "designer tradeoff q2x3 --null yes --alt no --kind shafer_lower --plot tradeoff.png",
     *_verb("mechanism_commands", "tradeoff")),
    ("credal", "bel / pl of every event, and lower / upper expectations of a gamble",
     "designer credal q2x3 --gamble yes=1,no=0", *_verb("mechanism_commands", "credal")),
    ("synthesize", "synthetic true answers from a prior, to try randomize and estimate before the field",
     "designer synthesize gwrr-dont-know --n 10000 --prior yes=0.3,no=0.7 --seed 1 --out truth.csv",
     *_verb("survey_commands", "synthesize")),
    ("randomize", "randomize true survey answers with a mechanism (the true answers are not written)",
     "designer randomize answers --mechanism q2x3 --column answer --out responses.csv --keep id,region",
     *_verb("randomize_command", "randomize")),
    ("export", "a certified randomizer for the respondent's screen: an ES module drawing exactly from the table",
     "designer export q2x3 --to js --out q2x3.js", *_verb("export_command", "export")),
    ("estimate", "estimate the answer distribution from randomized responses",
     "designer estimate regress --mechanism gwrr --format json",
     *_verb("estimate_command", "estimate")),
    ("simulate", "Monte Carlo of the estimator: bias and variance next to 1/(n I)",
     "designer simulate q2x3 --n 1000 --reps 2000 --prior yes=0.3,no=0.7 --seed 1",
     *_verb("survey_commands", "simulate")),
    ("sweep", "a grid of designs over epsilon (and don't-know mass), in parallel, with a plot",
     "designer sweep gwrr-dont-know --eps 0.1:5:50 --dont-know 0:0.5:6 --jobs 2 "
     "--out sweep.csv --plot sweep.png", *_verb("design_commands", "sweep")),
    ("plan", "plan a survey: sample size, smallest budget, power, a questionnaire's budget split, HTML report",
     "designer plan warner --prior yes=0.3,no=0.7 --width 0.02", *_verb("plan_commands", "plan")),
    ("regress", "logistic regression of the true answer on covariates, from randomized answers",
     "designer regress regress --mechanism gwrr --formula 'response ~ age + religious' --reference no",
     *_verb("regress_command", "regress")),
]


#: Said under ``designer studio --help``: the studio runs on Shiny for Python, which designer does not install.
STUDIO_EXTRA = ("The studio needs its extra, Shiny for Python (the rest of designer does not):\n"
                "  pip install 'designer-ldp[studio]'     (from a clone: pip install '.[studio]')")


def _configure_studio(p: argparse.ArgumentParser) -> None:
    from ._common import int_arg

    p.description = f"{p.description}\n\n{STUDIO_EXTRA}"
    p.add_argument("file", nargs="?", help="a problem (TOML) or mechanism file (JSON, CSV) to start from, or the bare "
                                          "name of one that comes with designer")
    p.add_argument("--port", type=int_arg(0, 65535), default=8000,
                   help="local port (default 8000; 0 picks a free one); the studio listens on 127.0.0.1 only")
    p.add_argument("--no-browser", action="store_true", help="do not open a browser (print the address)")


def cmd_studio(args: argparse.Namespace) -> str:
    """Serve the studio (imported only here: the CLI works without Shiny installed)."""
    from ..exceptions import CommandError

    try:
        import shiny  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        raise CommandError("the studio needs its extra: pip install 'designer-ldp[studio]'") from None
    from ..studio import serve

    if args.file:  # a file that exists, else designer's own problem or mechanism of that name
        from .._internal.bundled import resolve

        args.file = os.fspath(resolve(args.file, ("problem", "mechanism"), error=CommandError))
    serve(args.file, port=args.port, open_browser=not args.no_browser)
    return ""


#: The studio serves until stopped, so it stays out of COMMANDS, whose examples run to completion (a test runs them).
STUDIO = ("studio", "the whole design in a local web app (question, budget, survey, field, answers); needs the studio "
                    "extra",
          "designer studio gwrr-dont-know", _configure_studio, cmd_studio)


#: Said under every command's description: where a file is taken, a bare name is designer's own file of that name.
BARE_NAMES = ("A problem, mechanism or data file is a path, or the bare name of one that comes with designer\n"
              "(gwrr-dont-know, three-by-four, regress: 'designer problems --kind all' lists them).")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or with ``only`` (a command's name) the options of that command alone: the
    others are listed (``designer --help`` reads the same) but their modules are not imported."""
    from .._version import DOCS_URL, __version__

    width = max(len(c[0]) for c in COMMANDS) + 2  # the longest name and two spaces: no name runs into its text
    lines = [f"  {name:<{width}}{summary}\n  {'':<{width}}e.g. {example}"
             for name, summary, example, _, _ in [*COMMANDS, STUDIO]]
    parser = _Parser(
        prog="designer",
        description="Design and audit local-differential-privacy mechanisms with set-valued answers.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="commands:\n" + "\n".join(lines) + "\n\nRun 'designer COMMAND --help' for the options of one command; "
               f"'designer problems' lists the problems that come with designer.\nDocumentation: {DOCS_URL}",
    )
    parser.add_argument("--version", action="store_true",
                        help=f"print designer's version ({__version__}) and exit; with --verbose, also Python's, the "
                             "platform's and every dependency's, for a bug report")
    parser.add_argument("--verbose", action="store_true", dest="verbose_version",
                        help="with --version: the versions of Python, the platform and every dependency")
    parser.add_argument("--debug", action="store_true",
                        help="on an internal error, print the traceback (give it before the command)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, summary, example, configure, func in [*COMMANDS, STUDIO]:
        p = sub.add_parser(name, description=f"{summary}.\n\nexample: {example}\n\n{BARE_NAMES}",
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        if only is None or name == only:
            configure(p)
        p.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                       help="on an internal error, print the traceback")
        p.set_defaults(func=func)
    return parser


def _exit_if_a_solver_runs(status: int) -> None:
    """Leave at once when a cancelled solver thread still runs (outputs are cleaned up already)."""
    solvers = sys.modules.get("designer._internal.solvers")
    if solvers is not None and solvers.solver_threads_running():
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)


class _Terminated(BaseException):
    """SIGTERM, raised in the main thread so that every ``finally`` and atomic write cleans up."""


def _on_sigterm(signum: int, frame: object) -> None:
    raise _Terminated


def _inputs(args: argparse.Namespace) -> list[str]:
    """The input files a command was given, in the order an error is blamed on them (``--mechanism NAME=FILE``
    and repeated flags give each FILE)."""
    paths: list[str] = []
    for attr in ("mechanism", "problem", "answers", "responses", "data", "source"):
        value = getattr(args, attr, None)
        for item in value if isinstance(value, list | tuple) else [value]:
            if item:
                text = str(item)
                paths.append(text.partition("=")[2] or text if attr == "mechanism" else text)
    return paths


def _one_line(exc: BaseException, args: argparse.Namespace) -> str:
    """The error's message on one line. A :class:`DesignerError` that names neither a flag nor an input is about
    the command's first input and gets its name in front; a :class:`DataError` names its file (and line) itself.
    A file that comes with designer is named by its bare name, not by where it was installed."""
    message = _bare_names(" ".join(str(exc).split()) or type(exc).__name__)
    if not isinstance(exc, DesignerError) or isinstance(exc, DataError) or message.startswith("--"):
        return message
    inputs = _inputs(args)
    if inputs and not any(p in message for p in inputs):
        return f"{inputs[0]}: {message}"  # a problem found while working on this input
    return message


def _bare_names(message: str) -> str:
    """``message`` with the path of every file that comes with designer (``.../site-packages/designer/examples/
    regress.csv``) replaced by that file's bare name (``regress``), the name a user gives for it."""
    if os.sep not in message:
        return message
    from .._internal.bundled import KINDS, bundled

    files = {hit.path: hit.name for kind in KINDS for hit in bundled(kind).values()}
    for path in sorted(files, key=len, reverse=True):  # a longer path first: never a prefix of one replaced
        message = message.replace(path, files[path])
    return message


_PYTHON_SHOWWARNING = warnings.showwarning


def _note(message: Warning | str, category: type[Warning], filename: str, lineno: int, file: Any = None,
          line: str | None = None) -> None:
    """Print a :class:`ShadowedNameWarning` (a local file read for a bundled name) as one ``designer: note:``
    line; any other warning as Python prints it."""
    if issubclass(category, ShadowedNameWarning):
        print(f"designer: note: {' '.join(str(message).split())}", file=sys.stderr)
    else:
        _PYTHON_SHOWWARNING(message, category, filename, lineno, file, line)


def _command_of(argv: Sequence[str]) -> str:
    """The command ``argv`` names: its first word that is not an option (``designer``'s own options take no value);
    ``""`` when there is none (``designer --help``)."""
    return next((a for a in argv if not a.startswith("-")), "")


def _version_text(parser: argparse.ArgumentParser, args: argparse.Namespace) -> str:
    """What ``designer --version`` prints (one line) or ``designer --version --verbose`` (that of
    :func:`designer.show_versions`); ``--verbose`` alone, or either with a command, is a usage error."""
    if not args.version:
        parser.error("argument --verbose: goes with --version ('designer --version --verbose')")
    if getattr(args, "command", None):
        parser.error(f"argument --version: takes no command ('designer --version', then 'designer {args.command} "
                     "...')")
    from .._version import __version__, show_versions

    if not args.verbose_version:
        return f"designer {__version__}"
    import io

    text = io.StringIO()
    show_versions(text)
    return text.getvalue().rstrip("\n")


def _write(text: str) -> None:
    """``text`` and a newline on standard output; a reader gone away (``| head``) is not an error of ours."""
    try:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status (0 ok, 1 the work failed, 2 bad input or usage, 3 the output was
    written but a fit did not reach a maximum (separation, not converged), 70 an internal error of designer's,
    130/143 stopped)."""
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _on_sigterm)
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(only=_command_of(argv))
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, or a usage error already printed on one line
        return int(exc.code or 0) if not isinstance(exc.code, str) else EXIT_USAGE
    if args.version or args.verbose_version:  # designer's version, and with --verbose every dependency's: exit 0
        try:
            _write(_version_text(parser, args))
        except SystemExit as exc:  # misplaced: a usage error already printed on one line
            return int(exc.code or 0)
        return 0
    # Commands render the library's DesignWarnings themselves (result.warnings), not as Python warnings.
    warnings.filterwarnings("ignore", category=DesignWarning)
    if not getattr(args, "command", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        with flag_names(args.command != "studio"), warnings.catch_warnings():  # errors name the command's flags
            warnings.showwarning = _note
            text = args.func(args)
    except (CertificationError, SolverError) as exc:  # the work failed, not the input: exit status 1
        print(f"designer: error: {_bare_names(' '.join(str(exc).split()))}", file=sys.stderr)
        return 1
    except (DesignerError, OSError) as exc:  # every error of the input, caught here once: one line, exit 2
        print(f"designer: error: {_one_line(exc, args)}", file=sys.stderr)
        return EXIT_USAGE
    except MemoryError:
        print("designer: error: the problem is too large for this machine's memory; reduce the number of "
              "answers, restrict focal_sets, or use a symmetric problem (size classes)", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("designer: interrupted", file=sys.stderr)
        _exit_if_a_solver_runs(130)
        return 130
    except _Terminated:
        print("designer: terminated", file=sys.stderr)
        _exit_if_a_solver_runs(143)
        return 143
    except Exception as exc:  # not the input: a bug of designer's (or of a library under it)
        if args.debug:
            import traceback

            traceback.print_exc(file=sys.stderr)
        detail = " ".join(str(exc).split())
        print(f"designer: internal error: {type(exc).__name__}{': ' + detail if detail else ''}; {REPORT}",
              file=sys.stderr)
        return EXIT_INTERNAL
    if text:
        _write(text)
    return int(getattr(text, "exit_status", 0))
