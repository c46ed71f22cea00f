"""``designer design ... --device``: the optimal design on a device's grid, its certificate, its instructions."""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any

from .._internal.render import fmt, json_number, render_json, render_table
from ._common import CommandError, check_out, problem_from_args, write_mechanism


def _used(g: Any) -> list[int]:
    """Columns of ``g.counts`` in the order of ``g.mechanism``'s columns (it keeps only the sets used)."""
    names = {s: j for j, s in enumerate(g.focal_sets)}
    return [names[s] for s in g.mechanism.focal_sets]


def _exact_columns(g: Any) -> list[list[str]]:
    """``matrix_exact`` in the columns of ``matrix``."""
    used = _used(g)
    return [[row[j] for j in used] for row in g.matrix_exact]


def grid_json(g: Any) -> dict[str, Any]:
    """The usual design object plus ``device``, ``denominator``, ``matrix_exact`` and the continuous optimum."""
    from ..optimal.objectives import variance_note
    from ..optimal.result import certificate_fields
    from ..privacy import eps_shafer, eps_walley

    mech, problem = g.mechanism, g.problem
    return {
        "name": problem.name, "inputs": list(problem.inputs), "frame": list(problem.frame),
        "focal_sets": [list(s) for s in mech.focal_sets], "columns": mech.columns,
        "matrix": [[float(v) for v in row] for row in mech.matrix], "matrix_exact": _exact_columns(g),
        "counts": [[int(row[index]) for index in _used(g)] for row in g.counts],
        "device": g.device.name, "denominator": g.device.denominator,
        "epsilon": problem.epsilon, "semantics": problem.semantics.value, "objective": problem.objective.value,
        "objective_value": json_number(g.objective_value),
        "continuous_objective_value": json_number(g.continuous_objective_value),
        "objective_cost": json_number(g.objective_cost),
        "variance": json_number(g.variance), "continuous_variance": json_number(g.continuous_variance),
        "variance_ratio": json_number(g.variance_ratio), "variance_kind": g.variance_kind,
        "variance_note": variance_note(g.variance_kind, g.variance_reason),
        "prior": dict(zip(problem.inputs, (float(v) for v in problem.prior))),
        "eps_shafer": json_number(eps_shafer(mech)), "eps_walley": json_number(eps_walley(mech)),
        "optimal_on_grid": g.optimal, "symmetric": g.symmetric,
        "within_1pct_denominator": g.within_1pct, **certificate_fields(g.certificate),
        "notes": list(g.notes),
    }


def cmd_design_on_device(args: argparse.Namespace) -> str:
    from .._internal.io import atomic_write_text
    from ..devices import grid_design, make_rules, parse_device, render, verify

    for path in (args.out, args.instructions):
        if path:
            check_out(path, [args.problem], args.force)
    if args.instructions and not args.instructions.lower().endswith((".html", ".htm", ".md", ".txt")):
        raise CommandError(f"--instructions {args.instructions}: name a .html (printable card), .md or .txt file")
    if args.device is not None and args.denominator is not None:
        raise CommandError("give --device or --denominator, not both (a device fixes its denominator)")
    device = parse_device(args.device, args.denominator)
    problem = problem_from_args(args)
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
    if args.format == "json":
        return render_json(grid_json(g))
    if args.format == "csv":
        return g.mechanism.to_csv_text().rstrip("\n")
    d = device.denominator
    used = [j for j in range(g.counts.shape[1]) if g.counts[:, j].any()]
    headers = ["{" + ",".join(g.focal_sets[j]) + "}" for j in used]
    table = render_table(["input", *headers],
                         [[x, *(f"{int(row[j])}/{d}" for j in used)] for x, row in zip(problem.inputs, g.counts)])
    lines = [
        f"{problem.describe()}; device {device.name} ({d} equally likely outcomes)", table, "",
        f"objective {problem.objective}: {fmt(g.objective_value, 10)} on the grid"
        f"{_how_found(g)}; continuous optimum "
        f"{fmt(g.continuous_objective_value, 10)}; the device costs {100 * g.objective_cost:.3g}% of it",
        _variance_line(g),
        f"certified: {g.certificate.describe()}",
    ]
    if g.within_1pct:
        lines.append(f"a grid of {g.within_1pct} outcomes comes within 1% of the continuous objective")
    lines += [f"note: {n}" for n in g.notes]
    if args.instructions:
        lines.append(f"instructions written to {args.instructions}")
    else:
        lines += ["", render(device, rules, g.focal_sets, problem.frame, "text",
                             words=dict(problem.answers)).rstrip()]
    return "\n".join(lines)


def _how_found(g: Any) -> str:
    if g.optimal:
        return " (proven optimal)"
    if g.problem.objective.value == "chi2":
        return " (best found around the rounded optimum)"
    return " (not proven optimal: the search stopped at its node limit)"


def _variance_line(g: Any) -> str:
    if g.variance is None or g.continuous_variance is None or g.variance_ratio is None:
        return f"variance: {g.variance_reason or 'not computed for the continuous optimum'}"
    ratio = f", ratio {fmt(g.variance_ratio, 5)}" if math.isfinite(g.variance_ratio) else ""
    return f"variance {fmt(g.variance, 8)} per respondent (continuous {fmt(g.continuous_variance, 8)}{ratio})"


def add_device_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--device", help="design on a device's grid: die, dice2, cards, coins:N, spinner:D")
    p.add_argument("--denominator", type=int, help="design on a bare grid: every mass a multiple of 1/D")
    p.add_argument("--instructions", help="with --device: write the respondent's instructions (.html card, .md "
                                          "or text)")
