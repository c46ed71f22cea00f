"""The flags of ``designer plan --mechanism NAME=FILE ...``: a survey split between several designs (docs/theory.md
10.2); the plan itself is :func:`designer.planning.group_plan.plan_split`, reached through the front door."""

from __future__ import annotations

import argparse

from ._common import names_arg, probability_arg


def add_group_plan_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--mechanism", action="append", metavar="NAME=FILE",
                   help="a group's mechanism, repeated: plan a survey split between several designs (instead of "
                        "SOURCE)")
    p.add_argument("--split", metavar="NAME=SIZE,...",
                   help="with --mechanism: each group's share of the respondents (fractions or relative sizes, "
                        "e.g. a=1,b=2); default: the split with the smallest variance")
    p.add_argument("--noncompliance", metavar="SCOPE:ANSWER",
                   help="with --mechanism: carriers:ANSWER or everyone:ANSWER, a share answering regardless, "
                        "estimated with the prevalence")
    p.add_argument("--unrelated", metavar="ANSWER",
                   help="with --mechanism: the unrelated question's unknown prevalence, estimated with the rest")
    p.add_argument("--unknown-share", dest="unknown_share", type=probability_arg, metavar="S",
                   help="with --noncompliance or --unrelated: the value of the unknown share to plan at")
    p.add_argument("--share-groups", metavar="NAMES", type=names_arg,
                   help="with --noncompliance or --unrelated: the groups the share applies to (default all)")
