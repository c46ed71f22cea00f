"""Commands on design problems: design, compare, sweep."""

from __future__ import annotations

import argparse
import math
import os
import sys
from typing import Any

import numpy as np

from .._internal.render import fmt, json_value, render_csv, render_json, render_table
from ..vocabulary import Objective
from ._common import (
    CommandError,
    add_format,
    add_prior_override,
    check_out,
    epsilon_arg,
    parse_grid,
    parse_values,
    probability_arg,
    problem_from_args,
    show_progress,
    write_mechanism,
)

OBJECTIVE_CHOICES = tuple(o.value for o in Objective)


def cmd_design(args: argparse.Namespace) -> str:
    from ..optimal.engine import design

    if args.device is not None or args.denominator is not None:
        from .device_commands import cmd_design_on_device

        return cmd_design_on_device(args)
    if args.instructions:
        raise CommandError("--instructions needs --device (or --denominator): instructions are for a device")
    if args.out:
        check_out(args.out, [args.problem], args.force)
    result = design(problem_from_args(args))
    mech = result.mechanism
    if mech is None and (args.out or args.format == "csv"):
        raise CommandError(
            f"the designed mechanism of {result.problem.k} inputs has 2**{result.problem.k} - 1 focal sets and is "
            "kept in compact form (size classes); use --format json or the table"
        )
    note = ""
    if args.out:
        assert mech is not None
        note = write_mechanism(mech, args.out, result.problem, result.certificate, overwrite=args.force,
                               table=result.table)
        if note:
            print(f"designer: note: {note}", file=sys.stderr)
    if args.format == "json":
        return render_json(result.to_json_dict())
    if args.format == "csv":
        assert mech is not None
        return mech.to_csv_text().rstrip("\n")
    if mech is not None and len(mech.focal) <= 64:
        rows = [[x, *(fmt(v, 8) for v in row)] for x, row in zip(mech.inputs, mech.matrix)]
        table = render_table(["input", *mech.columns], rows)
    elif result.compact is None:
        assert mech is not None
        values = np.unique(np.round(mech.matrix, 15))
        table = (f"{mech.k} x {len(mech.focal)} mechanism ({'precise answers' if mech.is_bayesian else 'sets'}), "
                 f"too wide to print; distinct entries {', '.join(fmt(v, 8) for v in values[:6])}"
                 f"{' ...' if values.size > 6 else ''}; write it with --out FILE or --format json")
    else:
        compact = result.compact
        a, b = compact.per_set()
        rows = [[str(s + 1), fmt(compact.A[s], 8), fmt(a[s], 6), fmt(compact.B[s], 8), fmt(b[s], 6)]
                for s in range(compact.k) if compact.A[s] > 0 or compact.B[s] > 0]
        table = ("compact form: mass of a row on sets of each size, with / without the true answer\n"
                 + render_table(["size", "total with", "one set with", "total without", "one set without"], rows))
    lines = [
        result.problem.describe(),
        table,
        "",
        f"objective {result.problem.objective}: {fmt(result.objective_value, 10)}" + (
            f" (the solver reported {fmt(result.solver_objective, 10)} before certification)"
            if abs(result.solver_objective - result.objective_value) > 1e-9 * max(1.0, abs(result.objective_value))
            else ""),
        f"privacy losses: eps_shafer {fmt(result.eps_shafer, 10)} (set answers, Def 3.1), "
        f"eps_walley {fmt(result.eps_walley, 10)} (precise answers, Def 3.13)",
        (f"variance {fmt(result.variance, 8)} per respondent at prior "
         + ", ".join(f"{x}={fmt(float(v), 4)}" for x, v in zip(result.problem.inputs, result.problem.prior))
         + f": {_variance_kinds()[result.variance_kind]} (divide by n for a survey of n)")
        if result.variance is not None else f"variance: {result.variance_note}",
        f"certified: {result.certificate.describe()}",
        f"path: {result.path}; solver {result.solver} ({result.status}); {result.seconds:.2f} s",
        *(f"warning: {w}" for w in result.warnings),
    ]
    if args.out:
        lines.append(f"mechanism written to {args.out}")
    return "\n".join(lines)


def _variance_kinds() -> dict[str, str]:
    from ..optimal.objectives import VARIANCE_KINDS

    return VARIANCE_KINDS


def cmd_compare(args: argparse.Namespace) -> str:
    from ..optimal.compare import compare

    table = compare(problem_from_args(args), parse_grid(args.eps))
    if args.format == "json":
        return render_json({"problem": table.problem.name, "closed_form": table.reference,
                           "rows": [{k: json_value(v) for k, v in r.items()}
                                    for r in table.rows], "notes": table.notes})
    headers = list(table.columns)
    rows = [[r.get(c, "") for c in headers] for r in table.rows]
    if args.format == "csv":  # one numeric table: "infeasible" goes to two status columns, its cells stay empty
        def status(r: dict[str, Any], key: str) -> str:
            return "infeasible" if r.get(key) == "infeasible" else "optimal"

        return render_csv(["status", "closed_form_status", *headers],
                          [[status(r, "objective"), status(r, "variance_closed"),
                            *("" if v == "infeasible" else v for v in row)] for r, row in zip(table.rows, rows)])
    pretty = [[fmt(v, 8) if isinstance(v, float) else "n/a" if v is None else v for v in r] for r in rows]
    problem = table.problem
    kind = "sldp_mle" if problem.semantics == "sldp" else "wldp_worst_case"
    prior = ", ".join(f"{x}={fmt(float(v), 4)}" for x, v in zip(problem.inputs, problem.prior))
    grid = [float(r["epsilon"]) for r in table.rows]
    budget = f"eps from {fmt(min(grid), 4)} to {fmt(max(grid), 4)} ({len(grid)} budgets)" if grid else None
    return (f"{problem.describe(budget)}\nclosed form: {table.reference}\nvariance: per respondent at prior {prior}, "
            f"{_variance_kinds()[kind]}\n" + render_table(headers, pretty)
            + "".join(f"\nnote: {n}" for n in table.notes))


def cmd_sweep(args: argparse.Namespace) -> str:
    from .._internal.io import atomic_write_text
    from .._internal.plots import plot_sweep
    from ..optimal.sweep import SWEEP_COLUMNS, sweep

    for path in (args.out, args.plot):
        if path:
            check_out(path, [args.problem], args.force)
    if args.plot and args.out and os.path.realpath(args.plot) == os.path.realpath(args.out):
        raise CommandError("--out and --plot name the same file; give two names")
    if args.jobs == 0 or args.jobs < -1:
        raise CommandError(f"--jobs must be a positive number of processes or -1 (all cores), got {args.jobs}")
    problem = problem_from_args(args)
    epsilons = parse_grid(args.eps_grid, "--eps")
    masses = None
    if args.dont_know is not None:
        masses = parse_values(args.dont_know, "--dont-know", low=0.0, high=1.0, low_open=False, high_open=True)
    df = sweep(problem, epsilons, masses, jobs=args.jobs, scheduler=args.scheduler, progress=show_progress(args))
    headers = list(SWEEP_COLUMNS)
    exact = [list(row) for row in df.itertuples(index=False)]
    csv_text = render_csv(headers, exact)
    if args.out:
        atomic_write_text(args.out, csv_text + "\n", overwrite=args.force)
    if args.plot:
        ylabel = {"chi2": "chi-square information"}.get(problem.objective, f"objective ({problem.objective})")
        plot_sweep(df, args.plot, title=f"{problem.name or args.problem}: {problem.semantics.upper()}",
                   ylabel=ylabel)
    done = int((df["status"] == "optimal").sum())
    summary = f"{done} of {len(df)} designs certified"
    if args.out:
        summary += f"; table written to {args.out}"
    if args.plot:
        summary += f"; plot written to {args.plot}"
    if args.format == "json":
        rows = [{k: None if isinstance(v, float) and math.isnan(v) else json_value(v) for k, v in r.items()}
                for r in df.to_dict(orient="records")]
        return render_json({"problem": problem.name, "semantics": problem.semantics,
                           "objective": problem.objective, "rows": rows})
    if args.format == "csv":
        return csv_text
    notes = sorted({r for r in df["message"] if r})
    if args.out:  # the table is in the file: the terminal gets the summary
        text = summary
    else:
        pretty = [[fmt(v, 8) if isinstance(v, float) else v for v in row[:-1]]
                  for row in df.itertuples(index=False)]
        text = render_table(headers[:-1], pretty) + "\n" + summary
    if notes:
        text += "\n" + "\n".join(f"note: {n}" for n in notes[:5])
    return text


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


