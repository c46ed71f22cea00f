"""Commands on design problems: design, compare, sweep."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from .._internal.keywords import read_budgets, read_values
from .._internal.render import fmt, render_table
from ..vocabulary import Objective
from ._common import (
    CommandError,
    add_format,
    add_prior_override,
    check_out,
    epsilon_arg,
    probability_arg,
    show_progress,
    write_mechanism,
)

OBJECTIVE_CHOICES = tuple(o.value for o in Objective)


def cmd_design(args: argparse.Namespace) -> str:
    from ..results import render
    from ..verbs.design_verb import design

    if args.device is not None or args.denominator is not None:
        from .device_commands import cmd_design_on_device

        return cmd_design_on_device(args)
    if args.instructions:
        raise CommandError("--instructions needs --device (or --denominator): instructions are for a device")
    if args.out:
        check_out(args.out, [args.problem], args.force)
    result = design(args.problem, epsilon=args.epsilon, dont_know=args.dont_know_value, semantics=args.semantics,
                    objective=args.objective, prior=args.prior_value)
    mech = result.mechanism
    if mech is None and (args.out or args.format == "csv"):
        raise CommandError(
            f"the designed mechanism of {result.problem.k} inputs has 2**{result.problem.k} - 1 focal sets and is "
            "kept in compact form (size classes); use --format json or the table"
        )
    if args.out:
        assert mech is not None
        note = write_mechanism(mech, args.out, result.problem, result.certificate, overwrite=args.force,
                               table=result.exact_table)
        if note:
            print(f"designer: note: {note}", file=sys.stderr)
    text = render(result, args.format)
    if args.out and args.format == "table":
        text += f"\nmechanism written to {args.out}"
    return text


def cmd_compare(args: argparse.Namespace) -> str:
    from ..optimal.compare import compare
    from ..results import render

    return render(compare(_problem(args), read_budgets(args.eps, "--eps")), args.format)


def cmd_sweep(args: argparse.Namespace) -> str:
    from .._internal.io import atomic_write_text
    from .._internal.plots import plot_sweep
    from ..optimal.sweep import sweep_result
    from ..results import render

    for path in (args.out, args.plot):
        if path:
            check_out(path, [args.problem], args.force)
    if args.plot and args.out and os.path.realpath(args.plot) == os.path.realpath(args.out):
        raise CommandError("--out and --plot name the same file; give two names")
    if args.jobs == 0 or args.jobs < -1:
        raise CommandError(f"--jobs must be a positive number of processes or -1 (all cores), got {args.jobs}")
    problem = _problem(args)
    epsilons = read_budgets(args.eps_grid, "--eps")
    masses = None
    if args.dont_know is not None:
        masses = read_values(args.dont_know, "--dont-know", low=0.0, high=1.0, low_open=False, high_open=True)
    result = sweep_result(problem, epsilons, masses, jobs=args.jobs, scheduler=args.scheduler,
                          progress=show_progress(args))
    if args.out:
        atomic_write_text(args.out, render(result, "csv") + "\n", overwrite=args.force)
    if args.plot:
        ylabel = {"chi2": "chi-square information"}.get(problem.objective, f"objective ({problem.objective})")
        plot_sweep(result.frame, args.plot, title=f"{problem.name or args.problem}: {problem.semantics.upper()}",
                   ylabel=ylabel)
    if args.format != "table" or not (args.out or args.plot):
        return render(result, args.format)
    done = result.certified + (f"; table written to {args.out}" if args.out else "") + (
        f"; plot written to {args.plot}" if args.plot else "")
    if not args.out:  # the table is in the file: the terminal gets the summary
        columns, rows = result.table()
        done = render_table(columns[:-1], [[fmt(v, 8) if isinstance(v, float) else v for v in row[:-1]]
                                           for row in rows]) + "\n" + done
    return "\n".join([done, *(f"note: {n}" for n in result.notes)])


def _problem(args: argparse.Namespace) -> Any:
    """The problem file with the flags' overrides (:func:`designer.verbs.design_verb.read_problem`)."""
    from ..verbs.design_verb import read_problem

    return read_problem(args.problem, epsilon=getattr(args, "epsilon", None),
                        dont_know=getattr(args, "dont_know_value", None), semantics=args.semantics,
                        objective=args.objective, prior=args.prior_value)


def _configure_design(p: argparse.ArgumentParser) -> None:
    import textwrap

    from ..vocabulary import OBJECTIVE_MEANINGS

    p.epilog = "objectives (--objective, or objective = ... in the file):\n" + "\n".join(
        textwrap.fill(text, 100, initial_indent=f"  {name:<19} ", subsequent_indent=" " * 22)
        for name, text in OBJECTIVE_MEANINGS.items())
    p.add_argument("problem", help="design problem (TOML)")
    p.add_argument("--epsilon", "--eps", dest="epsilon", type=epsilon_arg,
                   help="override the budget of the file (nats, > 0)")
    p.add_argument("--dont-know", dest="dont_know_value", type=probability_arg,
                   help="override the exact don't-know mass of the file, in [0, 1]: 0.2 or a fraction such as 7/36 "
                        "(on a device, a decimal that rounds one multiple of 1/outcomes is read as it, and said)")
    p.add_argument("--semantics", choices=("sldp", "wldp", "both"), help="override the semantics of the file")
    p.add_argument("--objective", choices=OBJECTIVE_CHOICES, help="override the objective of the file")
    add_prior_override(p)
    p.add_argument("--out", help="write the designed mechanism (CSV, or JSON for a .json name)")
    p.add_argument("--force", action="store_true", help="let --out / --instructions replace an existing file")
    from .device_commands import add_device_flags

    add_device_flags(p)
    add_format(p)


def _configure_compare(p: argparse.ArgumentParser) -> None:
    p.add_argument("problem", help="design problem (TOML)")
    p.add_argument("--eps", "--epsilon", dest="eps", default="0.1:5:50",
                   help="epsilons: start:stop:count or a list (default 0.1:5:50)")
    p.add_argument("--dont-know", dest="dont_know_value", type=probability_arg,
                   help="override the exact don't-know mass of the file, in [0, 1] (0.2 or 7/36)")
    p.add_argument("--semantics", choices=("sldp", "wldp", "both"), help="override the semantics of the file")
    p.add_argument("--objective", choices=OBJECTIVE_CHOICES, help="override the objective of the file")
    add_prior_override(p)
    add_format(p)


def _configure_sweep(p: argparse.ArgumentParser) -> None:
    p.add_argument("problem", help="design problem (TOML)")
    p.add_argument("--eps", "--epsilon", dest="eps_grid", default="0.1:5:50",
                   help="epsilons: start:stop:count or a list (default 0.1:5:50)")
    p.add_argument("--dont-know", dest="dont_know",
                   help="exact don't-know masses in [0, 1): start:stop:count or a list, fractions welcome "
                        "(default: the file's)")
    p.add_argument("--semantics", choices=("sldp", "wldp", "both"), help="override the semantics of the file")
    p.add_argument("--objective", choices=OBJECTIVE_CHOICES, help="override the objective of the file")
    add_prior_override(p)
    p.add_argument("--jobs", type=int, default=1, help="local worker processes (joblib; -1 = all cores; default 1)")
    p.add_argument("--scheduler", help="address of a running Dask scheduler, e.g. tcp://127.0.0.1:8786")
    p.add_argument("--out", help="write the table as CSV (full precision)")
    p.add_argument("--plot", help="draw the objective against epsilon, one curve per don't-know value (PNG)")
    p.add_argument("--force", action="store_true", help="let --out / --plot replace existing files")
    add_format(p)


