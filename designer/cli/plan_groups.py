"""``designer plan --mechanism NAME=FILE ...``: a survey split between several designs (docs/theory.md 10.2)."""

from __future__ import annotations

import argparse
from typing import Any

from .._internal.render import fmt, render_csv, render_json, render_table
from ._common import CommandError, mechanism_files, names_arg, open_mechanism, parse_prior, probability_arg
from .plan_request import plan_request

#: Flags of a plan with one source that a plan with several mechanisms does not read.
_NOT_HERE = ("epsilon", "dont_know_value", "grid", "plot", "check", "seed", "report", "curve_plot")
#: Flags that only a plan with several mechanisms reads.
GROUP_FLAGS = ("split", "noncompliance", "unrelated", "unknown_share", "share_groups")


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


def _split(text: str | None, names: list[str]) -> dict[str, float] | None:
    if text is None:
        return None
    sizes: dict[str, float] = {}
    for item in text.split(","):
        name, sep, value = item.partition("=")
        try:
            size = float(value)
        except ValueError:
            size = float("nan")
        if not sep or not size >= 0 or size == float("inf"):
            raise CommandError(f"--split {text!r}: write NAME=SIZE for every group ({', '.join(names)}), sizes >= 0")
        sizes[name.strip()] = size
    total = sum(sizes.values())
    if not total > 0:
        raise CommandError(f"--split {text!r}: the sizes add up to 0")
    return {k: v / total for k, v in sizes.items()}


def plan_groups(args: argparse.Namespace) -> str:
    """The plan of a survey split between the ``--mechanism`` groups."""
    from ..exceptions import DesignerError
    from ..planning.plan import make_plan
    from ..planning.split import split_accuracy

    if args.source is not None:
        raise CommandError("give a SOURCE file or --mechanism NAME=FILE (several designs), not both")
    given = [f for f in _NOT_HERE if getattr(args, f, None) is not None]
    if given:
        flag = "--" + given[0].replace("_value", "").replace("_", "-")
        raise CommandError(f"{flag} has no effect on a plan with several mechanisms; drop it")
    if args.width is None and args.detect is None:
        raise CommandError("say what to plan: --width W (respondents for a half-width) or --detect D (power)")
    if (args.noncompliance is not None or args.unrelated is not None) and args.unknown_share is None:
        raise CommandError("--unknown-share S: a design with an unknown share is planned at an assumed value of it "
                           "(the prevalence's variance depends on it)")
    files = mechanism_files(args.mechanism)
    if "" in files:
        raise CommandError("--mechanism: a plan with several designs names each group: NAME=FILE")
    mechanisms = {name: open_mechanism(path).mechanism for name, path in files.items()}
    inputs = next(iter(mechanisms.values())).inputs
    prior = parse_prior(args.prior, inputs)
    try:
        accuracy, design = split_accuracy(
            mechanisms, fractions=_split(args.split, list(files)), prior=prior, noncompliance=args.noncompliance,
            unrelated=args.unrelated, share=args.unknown_share,
            share_groups=args.share_groups,
            semantics=args.semantics or "sldp")
        request = plan_request(args, prior)
        plan = make_plan(accuracy.mechanism, request, name=", ".join(f"{k}={v}" for k, v in files.items()),
                         accuracy=accuracy)
    except DesignerError as exc:
        raise CommandError(str(exc)) from None
    out = plan.to_dict()
    out.update(design.to_dict(plan.n))
    if args.format == "json":
        return render_json(out)
    rows = [[name, files[name], fmt(g["fraction"], 4), g["n"]] for name, g in out["designs"].items()]
    if args.format == "csv":
        return render_csv(["group", "mechanism", "fraction", "n"], rows)
    return _text(out, rows)


def _text(out: dict[str, Any], rows: list[list[Any]]) -> str:
    what = (f"{out['n_total']} respondents give every share a {out['level']:g} interval of half-width at most "
            f"{out['width']:g}" if out["mode"] == "sample_size" else
            f"{out['n_total']} respondents{' per sample' if out['groups'] == 2 else ''} detect a difference "
            f"of {out['detect']:g} in the share of {out['share']!r} with power {out['power']:g} at alpha "
            f"{out['alpha']:g}")
    lines = [f"{what}; split {out['split']}; variance {out['variance']:.6g} per respondent"]
    share = out.get("unknown_share")
    if share:
        lines.append(f"the unknown share ({share['scope']}:{share['answer']}, assumed {share['assumed']:g}, groups "
                     f"{', '.join(share['groups'])}) is estimated with the prevalence")
    return "\n".join([*lines, render_table(["group", "mechanism", "fraction", "n"], rows)])
