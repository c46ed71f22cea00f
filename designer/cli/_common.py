"""What every command shares: the one-line error, argument parsers that name their flag, file checks."""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable, Sequence
from typing import Any

from .._internal.keywords import check_output, read_named, read_names, read_number
from ..exceptions import CommandError
from ..release.mechanism_out import write_mechanism

__all__ = [
    "EXIT_FIT",
    "CommandError",
    "Output",
    "add_format",
    "add_prior_override",
    "check_out",
    "epsilon_arg",
    "int_arg",
    "level_arg",
    "probability_arg",
    "show_progress",
    "with_status",
    "write_mechanism",
]


#: Exit status of a command whose output was written but whose fit did not end at a maximum (separation, not
#: converged): a pipeline notices without parsing the output.
EXIT_FIT = 3


class Output(str):
    """A command's output text with the exit status it ends with (0 unless a fit failed: :data:`EXIT_FIT`)."""

    exit_status: int = 0


def with_status(text: str, status: int) -> Output:
    out = Output(text)
    out.exit_status = status
    return out


def show_progress(args: argparse.Namespace) -> bool:
    """Progress bars go to stderr, only when it is a terminal and ``--quiet`` was not given."""
    return not getattr(args, "quiet", False) and sys.stderr.isatty()


def _number_within(text: str, inside: Callable[[float], bool], rule: str) -> float:
    """``text`` as a number (decimal or fraction) for argparse, refused unless ``inside`` it, naming ``rule``."""
    try:
        value = read_number(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number (write 0.25 or a fraction such as 7/36)") from None
    if not inside(value):
        raise argparse.ArgumentTypeError(f"{rule}, got {text!r}")
    return value


def probability_arg(text: str) -> float:
    """argparse ``type=`` of a probability in [0, 1]: a decimal or a fraction (``7/36``)."""
    return _number_within(text, lambda v: 0.0 <= v <= 1.0, "must be a probability in [0, 1]")


def read_mechanism(path: str) -> Any:
    """The mechanism of a file, refused (exit 2) when it states a release its masses no longer meet."""
    return open_mechanism(path).mechanism


def open_mechanism(path: str) -> Any:
    """The whole mechanism file, read once (:class:`~designer.release.files.MechanismFile`: mechanism, release, exact
    table, answer words), refused (exit 2) when it states a release its masses no longer meet."""
    from ..release.files import open_mechanism_file

    return open_mechanism_file(path)


def add_prior_override(p: argparse.ArgumentParser) -> None:
    """``--prior``: the prior a problem is designed at, instead of the file's."""
    p.add_argument("--prior", dest="prior_value",
                   help="override the prior of the file: yes=0.3,no=0.7, 0.3,0.7 or fractions; named inputs only "
                        "(never=0.05) leave the rest in the file's proportions")


def check_out(path: str, inputs: Sequence[str], force: bool,
              advice: str = "choose another name or pass --force") -> None:
    """Refuse, before any work, an output that is an input, exists (without ``--force``), or has no folder
    (:func:`designer._internal.keywords.check_output`)."""
    check_output(path, inputs, force, advice)


def add_format(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", choices=("table", "json", "csv"), default="table",
                   help="output format (default: table)")
    p.add_argument("--quiet", action="store_true", help="no progress bar (it is shown only on a terminal)")




def positive_arg(text: str) -> float:
    """argparse ``type=`` of a finite number > 0: a decimal or a fraction (argparse names the flag in its error)."""
    return _number_within(text, lambda v: 0.0 < v < math.inf, "must be a finite number > 0")


def epsilon_arg(text: str) -> float:
    """argparse ``type=`` of a budget in nats (a decimal or a fraction such as ``7/3``), accepted or refused by the
    package's one budget rule, :func:`designer.budget.check_budget` (the rule of :class:`~designer.Budget` and of a
    problem's ``epsilon``)."""
    from ..budget import BUDGET_RULE, check_budget
    from ..exceptions import InvalidArgumentError

    try:
        value = read_number(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number (write 0.25 or a fraction such as 7/36)") from None
    try:
        return check_budget(value)
    except InvalidArgumentError:
        raise argparse.ArgumentTypeError(f"must be {BUDGET_RULE}, got {text!r}") from None


def difference_arg(text: str) -> float:
    """argparse ``type=`` of a difference of two shares, in (-1, 1)."""
    return _number_within(text, lambda v: -1.0 < v < 1.0, "must lie strictly between -1 and 1")


def level_arg(text: str) -> float:
    """argparse ``type=`` of a confidence level, in (0, 1)."""
    return _number_within(text, lambda v: 0.0 < v < 1.0, "must lie strictly between 0 and 1 (e.g. 0.95)")


def int_arg(low: int, high: int) -> Callable[[str], int]:
    """argparse ``type=`` of an integer in ``[low, high]``."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be a whole number from {low} to {high}, got {text!r}")
        return value
    return parse


def seed_arg(text: str) -> int:
    """argparse ``type=`` of every ``--seed``: a whole number >= 0 (what numpy's generators take)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 0, got {text!r}")
    return value


def add_survey_arguments(p: argparse.ArgumentParser) -> None:
    """``--weights``, ``--weight-kind``, ``--cluster``, ``--cov``: the survey's design and the variance."""
    p.add_argument("--weights", metavar="COLUMN", help="column of positive row weights (see --weight-kind)")
    p.add_argument("--weight-kind", choices=("sampling", "frequency"), default="sampling",
                   help="sampling (default): inverse inclusion probabilities, weighted pseudo-likelihood with a "
                        "sandwich variance; frequency: a row stands for that many respondents")
    p.add_argument("--cluster", metavar="COLUMN", help="column naming each row's cluster (school, interviewer): "
                                                       "cluster-robust standard errors")
    p.add_argument("--cov", choices=("oim", "opg", "robust"),
                   help="standard errors: oim (observed information, default), opg (outer product of the scores, "
                        "rr's), robust (sandwich; the default and only choice with sampling weights or --cluster)")


def add_group_arguments(p: argparse.ArgumentParser) -> None:
    """``--group`` and ``--noncompliance``: several designs in one survey, and respondents who answer regardless."""
    p.add_argument("--group", metavar="COLUMN", help="column naming each respondent's mechanism (the NAME of "
                                                     "--mechanism NAME=FILE)")
    p.add_argument("--noncompliance", metavar="SCOPE:ANSWER",
                   help="carriers:ANSWER (a share of the trait's carriers answer ANSWER whatever the randomizer "
                        "says; the stochastic lie detector) or everyone:ANSWER (cheater detection); estimated with "
                        "the shares from two or more groups")
    p.add_argument("--noncompliance-model", choices=("constant", "classes"), default="constant",
                   help="constant (default; RRreg's): one share answers regardless, the prevalence depends on the "
                        "covariates; classes: those respondents are an outcome of the logit with their own "
                        "coefficients (regress only)")
    p.add_argument("--unrelated", metavar="ANSWER",
                   help="the unrelated-question design with an unknown prevalence: each group's mechanism is "
                        "p I + (1-p) 1 f' and the unrelated question's share answering ANSWER is estimated from "
                        "two or more groups with different p")
    p.add_argument("--share-groups", metavar="NAMES", type=names_arg,
                   help="comma-separated groups the unknown share (--noncompliance, --unrelated) applies to "
                        "(default: all); leave out a group asked directly to take its answers as given (RRreg)")


def names_arg(text: str) -> list[str]:
    """``--share-groups``: comma-separated names, none empty."""
    try:
        return read_names(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated group names, got {text!r}") from None






def mechanism_files(items: list[str]) -> dict[str, str]:
    """``--mechanism`` values as ``{group name: file}``: one bare FILE is the group ``""``; several need NAME=FILE."""
    return read_named(items, "--mechanism", "with several mechanisms write NAME=FILE, NAME the value of the --group "
                                            "column for the respondents who used FILE")
