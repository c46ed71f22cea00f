"""A design on a device's grid as ``designer design --device`` prints it: the JSON object, the CSV table and the
table output with the respondent's instructions (``docs/theory.md`` section 11)."""

from __future__ import annotations

import math
import os
from typing import Any

from .._internal.render import fmt, json_number, render_table

#: A :class:`~designer.devices.grid.GridDesign` (named, not imported: grid.py imports this module).
GridDesign = Any

__all__ = ["grid_lines", "grid_object"]


def _used(g: GridDesign) -> list[int]:
    """Columns of ``g.counts`` in the order of ``g.mechanism``'s columns (it keeps only the sets used)."""
    names = {s: j for j, s in enumerate(g.focal_sets)}
    return [names[s] for s in g.mechanism.focal_sets]


def grid_object(g: GridDesign) -> dict[str, Any]:
    """The usual design object plus ``device``, ``denominator``, ``matrix_exact``, ``counts`` and the continuous
    optimum (``designer design --device ... --format json``)."""
    from ..optimal.objectives import variance_note
    from ..optimal.result import certificate_fields
    from ..privacy import eps_shafer, eps_walley

    mech, problem, used = g.mechanism, g.problem, _used(g)
    exact = g.matrix_exact
    return {
        "name": problem.name, "inputs": list(problem.inputs), "frame": list(problem.frame),
        "focal_sets": [list(s) for s in mech.focal_sets], "columns": mech.columns,
        "matrix": [[float(v) for v in row] for row in mech.matrix],
        "matrix_exact": [[row[j] for j in used] for row in exact],
        "counts": [[int(row[index]) for index in used] for row in g.counts],
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


def _how_found(g: GridDesign) -> str:
    if g.optimal:
        return " (proven optimal)"
    if not g.problem.objective.linear:
        return " (best found around the rounded optimum)"
    return " (not proven optimal: the search stopped at its node limit)"


def _variance_line(g: GridDesign) -> str:
    if g.variance is None or g.continuous_variance is None or g.variance_ratio is None:
        return f"variance: {g.variance_reason or 'not computed for the continuous optimum'}"
    ratio = f", ratio {fmt(g.variance_ratio, 5)}" if math.isfinite(g.variance_ratio) else ""
    return f"variance {fmt(g.variance, 8)} per respondent (continuous {fmt(g.continuous_variance, 8)}{ratio})"


def grid_lines(g: GridDesign, instructions: str | os.PathLike[str] | None = None) -> str:
    """The table output: the counts over ``D``, the objective beside the continuous optimum, the variance, the
    certificate, the notes, and the respondent's instructions (or where they were written)."""
    from .instructions import make_rules, render

    problem, device = g.problem, g.device
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
        *g.certificate.lines(),
    ]
    if g.within_1pct:
        lines.append(f"a grid of {g.within_1pct} outcomes comes within 1% of the continuous objective")
    lines += [f"note: {n}" for n in g.notes]
    if instructions:
        lines.append(f"instructions written to {os.fspath(instructions)}")
    else:
        rules = make_rules(device, g.counts, problem.inputs)
        lines += ["", render(device, rules, g.focal_sets, problem.frame, "text",
                             words=dict(problem.answers)).rstrip()]
    return "\n".join(lines)
