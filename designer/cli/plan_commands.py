"""``designer plan``: sample size, smallest budget, power, the price of privacy, and a questionnaire's split.

The command parses its flags, calls :func:`designer.verbs.plan_verb.plan` (which decides the plan) and prints the
result through :func:`designer.results.render`."""

from __future__ import annotations

import argparse

from ._common import (
    add_format,
    difference_arg,
    epsilon_arg,
    int_arg,
    level_arg,
    mechanism_files,
    positive_arg,
    probability_arg,
    seed_arg,
)
from .plan_groups import add_group_plan_arguments


def _width(text: str) -> float:
    value = positive_arg(text)
    if value >= 0.5:
        raise argparse.ArgumentTypeError(f"a half-width of {text} covers every share in [0, 1] (one respondent "
                                         "would do); give a half-width below 0.5, e.g. 0.03")
    return value


#: Flags passed to the front door as they are (argparse's ``dest`` and the keyword are the same word).
_SAME = ("prior", "epsilon", "width", "level", "n", "detect", "power", "alpha", "alternative", "null_variance",
         "null_difference", "groups", "share", "null", "semantics", "grid", "check", "seed", "method", "curve",
         "curve_detect",
         "report", "plot", "curve_plot", "force", "split", "noncompliance", "unrelated", "unknown_share",
         "share_groups")


def cmd_plan(args: argparse.Namespace) -> str:
    from ..results import render
    from ..verbs.plan_verb import plan

    result = plan(args.source, dont_know=args.dont_know_value,
                  mechanism=mechanism_files(args.mechanism) if args.mechanism else None,
                  **{name: getattr(args, name) for name in _SAME})
    return render(result, args.format)


def _configure_plan(p: argparse.ArgumentParser) -> None:
    p.add_argument("source", nargs="?", help="problem (TOML), survey with [[question]] tables (TOML) or mechanism "
                                             "file (or --mechanism NAME=FILE, repeated)")
    p.add_argument("--prior", help="true shares at which to plan: yes=0.2,no=0.8, 0.2,0.8 or fractions 1/5,4/5 "
                                   "(default: the problem's prior; a problem file's design stays as the file "
                                   "states it)")
    p.add_argument("--epsilon", "--eps", dest="epsilon", type=epsilon_arg,
                   help="override a problem file's budget (nats); not with --n --width, which searches it")
    p.add_argument("--dont-know", dest="dont_know_value", type=probability_arg,
                   help="override a problem file's exact don't-know mass (0.2 or 7/36)")
    p.add_argument("--width", type=_width, help="target half-width of every share's confidence interval")
    p.add_argument("--level", type=level_arg, help="confidence level of --width and --check, in (0, 1) (default 0.95)")
    p.add_argument("--n", type=int_arg(1, 10**12), help="respondents: with a problem file and --width, find the "
                                                        "smallest budget; with a mechanism file and --width, "
                                                        "report the half-width at n; with --detect, the power at n")
    p.add_argument("--detect", type=positive_arg, help="difference in a share to detect (power mode)")
    p.add_argument("--power", type=level_arg, help="power wanted, in (0, 1) (default 0.8)")
    p.add_argument("--alpha", type=level_arg, help="test level (default 0.05)")
    p.add_argument("--alternative", choices=("two-sided", "greater", "less"),
                   help="two-sided (default; the power counts both tails), greater or less")
    p.add_argument("--null-variance", choices=("pooled", "null"),
                   help="two groups: the null variance pooled (default) or at the stated null shares (rr's)")
    p.add_argument("--null-difference", type=difference_arg, help="two groups: their shares' difference under the null "
                                                          "(default 0)")
    p.add_argument("--groups", type=int_arg(1, 2), help="1: against a null value (default); 2: two groups")
    p.add_argument("--share", help="input whose share is tested (default the first input)")
    p.add_argument("--null", type=probability_arg, help="null value of the share (default its prior)")
    p.add_argument("--semantics", choices=("sldp", "wldp"), help="for a mechanism file (default sldp)")
    p.add_argument("--grid", help="budgets for the respondents-against-eps table, start:stop:count or a list")
    p.add_argument("--plot", help="PNG of respondents against eps (written where you say; the path is printed)")
    p.add_argument("--check", type=int_arg(2, 10**6), help="simulate this many surveys at the planned n")
    p.add_argument("--seed", type=seed_arg, help="seed of --check")
    p.add_argument("--method", choices=("mle", "newton", "em", "convex", "posterior"),
                   help="estimator --check analyses the simulated surveys with, as 'designer estimate --method' will "
                        "analyse the survey: mle (default; newton, em and convex reach the same maximum) or "
                        "posterior (posterior mean, credible interval)")
    p.add_argument("--curve", metavar="N1:N2:COUNT",
                   help="power mode: the power at COUNT respondent numbers from N1 to N2 (or a list 100,500,1000), "
                        "per group with --groups 2")
    p.add_argument("--curve-detect", metavar="D1,D2",
                   help="with --curve: more differences to detect, a line each (start:stop:count or a list)")
    p.add_argument("--curve-plot", metavar="PNG", help="with --curve: PNG of the power against the respondents")
    p.add_argument("--report", help="self-contained HTML report")
    add_group_plan_arguments(p)
    p.add_argument("--force", action="store_true", help="let --plot / --report replace existing files")
    add_format(p)
