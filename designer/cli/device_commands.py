"""``designer design ... --device``: the optimal design on a device's grid, its certificate, its instructions."""

from __future__ import annotations

import argparse
import sys

from ._common import CommandError, check_out, write_mechanism


def cmd_design_on_device(args: argparse.Namespace) -> str:
    from .._internal.io import atomic_write_text
    from ..devices import grid_design, make_rules, parse_device, render, verify
    from ..results import render as render_result
    from ..verbs.design_verb import read_problem

    for path in (args.out, args.instructions):
        if path:
            check_out(path, [args.problem], args.force)
    if args.instructions and not args.instructions.lower().endswith((".html", ".htm", ".md", ".txt")):
        raise CommandError(f"--instructions {args.instructions}: name a .html (printable card), .md or .txt file")
    if args.device is not None and args.denominator is not None:
        raise CommandError("give --device or --denominator, not both (a device fixes its denominator)")
    device = parse_device(args.device, args.denominator)
    problem = read_problem(args.problem, epsilon=args.epsilon, dont_know=args.dont_know_value,
                           semantics=args.semantics, objective=args.objective, prior=args.prior_value)
    g = grid_design(problem, device)
    rules = make_rules(device, g.counts, problem.inputs)
    if not verify(device, rules, g.counts):  # the enumeration of every outcome must give the counts
        raise CommandError("internal check failed: the instructions do not reproduce the designed counts")
    if args.out:
        note = write_mechanism(g.mechanism, args.out, g.problem, g.certificate, overwrite=args.force)
        if note:
            print(f"designer: note: {note}", file=sys.stderr)
    if args.instructions:
        name = args.instructions.lower()
        style = "html" if name.endswith((".html", ".htm")) else "markdown" if name.endswith(".md") else "text"
        title = f"{problem.name or 'Instructions'}: {device.name}"  # the budget as a sentence on the card
        atomic_write_text(args.instructions, render(device, rules, g.focal_sets, problem.frame, style, title,
                                                    words=dict(problem.answers), epsilon=problem.epsilon),
                          overwrite=args.force)
    if args.format == "table":
        return g.summary(args.instructions)
    return render_result(g, args.format)


def add_device_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--device", help="design on a device's grid: die, dice2, cards, coins:N, spinner:D")
    p.add_argument("--denominator", type=int, help="design on a bare grid: every mass a multiple of 1/D")
    p.add_argument("--instructions", help="with --device: write the respondent's instructions (.html card, .md "
                                          "or text)")
