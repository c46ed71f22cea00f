"""A plan in words and tables: the table output (``summary``), the CSV table (``table``), the HTML report and the
figures of ``designer plan``, all read off the plan's JSON object (:meth:`Plan.to_dict`) so that every format
says the same numbers."""

from __future__ import annotations

import os
from typing import Any

from .._internal.render import fmt, render_table
from ..vocabulary import DesignBasis

__all__ = ["curve_lines", "details", "headline", "plan_csv", "plan_lines", "report_rows", "split_lines",
           "split_table", "title", "write_outputs"]


def headline(out: dict[str, Any]) -> str:
    """The plan's answer in one sentence."""
    mode = out["mode"]
    if mode == "sample_size":
        return (f"{out['n']} respondents give every share a {out['level']:g} interval of half-width at most "
                f"{out['width']:g} (variance {out['variance']:.6g} per respondent; {out['formula']})")
    if mode == "smallest_budget":
        return (f"the smallest budget is eps = {out['epsilon']:.4f}: with {out['n']} respondents every share's "
                f"{out['level']:g} interval has half-width at most {out['width']:g} ({out['designs_solved']} designs)")
    if mode == "power":
        who = "per group" if out["groups"] == 2 else "respondents"
        return (f"{out['n']} {who} detect a difference of {out['detect']:g} in the share of {out['share']!r} "
                f"(null {out['null']:g}, {out['alternative']}) with power {out['power']:g} at alpha {out['alpha']:g}"
                f"{'; null variance ' + out['null_variance'] if 'null_variance' in out else ''}; power at n = "
                f"{out['power_at_n']['n']}: {out['power_at_n']['power']:.4f}")
    joint = out["joint"]
    return (f"best split: total variance {fmt(out['total_variance'])}; "
            f"equal split {fmt(out['equal_split_total_variance'])}; "
            + (f"one joint question: {joint['total_variance']:.6g}" if joint else f"joint: {out['joint_note']}")
            + (f"; {out['n']} respondents give every share of every question a {out['level']:g} interval of "
               f"half-width at most {out['width']:g}" if out.get("n") else ""))


def details(out: dict[str, Any]) -> list[str]:
    """Lines under the headline: how the design was chosen, the half-width at a given n."""
    lines = []
    if out.get("design_basis"):
        lines.append(f"design: {out['design_basis_note']} (eps = {out['epsilon']:.6g}; planned at prior "
                     + ", ".join(f"{k}={v:g}" for k, v in out["prior"].items()) + ")")
    if out.get("width_at_n"):
        w = out["width_at_n"]
        lines.append(f"with n = {w['n']} respondents the {w['level']:g} half-width is {w['width']:.4g}")
    if out.get("small_sample_warning"):
        lines.append(f"warning: {out['small_sample_warning']}")
    return lines


def report_rows(out: dict[str, Any]) -> list[list[Any]]:
    """The plan as (quantity, value) rows in words: no JSON, no Python values."""
    skip = ("by_epsilon", "allocation", "source", "mode", "joint", "convex", "design_basis", "prior", "power_at_n",
            "width_at_n", "check")
    rows: list[list[Any]] = [[k.replace("_", " "), v] for k, v in out.items()
                             if k not in skip and v is not None and not isinstance(v, (dict, list))]
    if out.get("prior"):
        rows.insert(0, ["planning prior", ", ".join(f"{k} = {v:g}" for k, v in out["prior"].items())])
    if out.get("power_at_n"):
        rows.append(["power at n", f"{out['power_at_n']['power']:.4f} with n = {out['power_at_n']['n']}"])
    if out.get("width_at_n"):
        w = out["width_at_n"]
        rows.append(["half-width at n", f"{w['width']:.4g} with n = {w['n']} (level {w['level']:g})"])
    if out.get("check"):
        c = out["check"]
        rows.append(["simulation check", f"{int(c['reps'])} surveys of n = {out['n']}, {_method_words(c)}: "
                     f"coverage {c['coverage']:.3f}, "
                     f"mean half-width {c['mean_half_width']:.4g}"
                     + (f", power {c['power']:.3f}" if "power" in c else "") + _asymptotic_words(c)])
    if out.get("convex"):
        rows.append(["variance curves convex", "every question" if all(out["convex"]) else "not every question: "
                     + ", ".join(r["question"] for r, ok in zip(out["allocation"], out["convex"]) if not ok)])
    return rows


def curve_lines(out: dict[str, Any]) -> list[str]:
    """The power curve as a table: one row per n, one column per difference."""
    effects = list(dict.fromkeys(r["detect"] for r in out["power_curve"]))
    ns = list(dict.fromkeys(r["n"] for r in out["power_curve"]))
    power = {(r["detect"], r["n"]): r["power"] for r in out["power_curve"]}
    who = "n per group" if out["groups"] == 2 else "n"
    return [f"power curve ({out['alternative']}, alpha {out['alpha']:g}):",
            render_table([who, *(f"detect {d:g}" for d in effects)],
                         [[n, *(f"{power[(d, n)]:.4f}" for d in effects)] for n in ns])]


def title(out: dict[str, Any], width: float | None, level: float | None) -> str:
    """The report's subtitle and the figure's title."""
    prior = ", ".join(f"{k}={v:g}" for k, v in (out.get("prior") or {}).items())
    return (f"{out['source']}: respondents for half-width {width} at level {level:g}"
            + (f", prior {prior}" if prior else "") if width else f"{out['source']}")


def plan_csv(out: dict[str, Any]) -> tuple[list[str], list[list[Any]]]:
    """The CSV table: the allocation, else the respondents against the budget, else the power curve, else the
    plan's scalar figures in one row."""
    if out["mode"] == "allocation":
        headers = ["question", "inputs", "weight", "epsilon", "variance", "equal_split_variance", "design_basis",
                   "note"] + (["n"] if "width" in out else [])
        return headers, [[r[h] for h in headers] for r in out["allocation"]]
    if out.get("by_epsilon"):
        headers = ["epsilon", "variance", "n", "basis", "reason"]
        return headers, [[r[h] for h in headers] for r in out["by_epsilon"]]
    if out.get("power_curve"):
        return ["detect", "n", "power"], [[r["detect"], r["n"], r["power"]] for r in out["power_curve"]]
    keys = [k for k, v in out.items() if not isinstance(v, (dict, list)) and k != "source"]
    return keys, [[out[k] for k in keys]]


def plan_lines(out: dict[str, Any], level: float | None, notes: tuple[str, ...] = ()) -> str:
    """The table output of a plan (``--format table``): the headline, the details, the tables, the notes."""
    lines = [headline(out), *details(out)]
    if out.get("power_curve"):
        lines += curve_lines(out)
    if out["mode"] == "allocation":
        with_n = "width" in out
        lines.append(render_table(
            ["question", "weight", "epsilon", "variance", "equal split", *(["n"] if with_n else [])],
            [[r["question"], fmt(r["weight"]), fmt(r["epsilon"], 5), fmt(r["variance"], 6),
              fmt(r["equal_split_variance"], 6), *([r["n"] or "-"] if with_n else [])] for r in out["allocation"]]))
        lines.append(f"variance: mean over each question's inputs, per respondent, at its prior, weighted; "
                     f"{out['designs_solved']} designs solved; curves convex: "
                     + ("all" if all(out["convex"]) else ", ".join(
                         f"{r['question']} {'yes' if ok else 'no'}"
                         for r, ok in zip(out["allocation"], out["convex"]))))
        lines += [f"{r['question']}: {r['note']}" for r in out["allocation"] if r["note"]]
        lines += [f"{r['question']}: {DesignBasis(r['design_basis']).words}" for r in out["allocation"]
                  if r["design_basis"] not in (None, DesignBasis.FILE)]
        if out["joint"]:
            values = [round(v, 6) for v in out["joint"]["variances"]]
            lines.append(f"joint question ({out['joint_note']}): variances {values}")
    by_epsilon = out.get("by_epsilon")
    if by_epsilon:
        lines.append(render_table(["epsilon", "variance", "n", "note"], [
            [fmt(r["epsilon"], 4), fmt(r["variance"], 6), r["n"] or "-",
             r["reason"] or ("" if r["basis"] is None else DesignBasis(r["basis"]).words)] for r in by_epsilon]))
    if "check" in out:
        c = out["check"]
        lines.append(f"simulation check ({int(c['reps'])} surveys of n = {out['n']}, {_method_words(c)}): "
                     f"coverage {c['coverage']:.3f} "
                     f"(level {level:g}), mean half-width {c['mean_half_width']:.4g}"
                     + (f", power {c['power']:.3f}" if "power" in c else "") + _asymptotic_words(c))
    return "\n".join(lines + list(notes))


def write_outputs(out: dict[str, Any], *, width: float | None, level: float | None, design: Any = None,
                  allocation: Any = None, report: str | os.PathLike[str] | None = None,
                  plot: str | os.PathLike[str] | None = None, curve_plot: str | os.PathLike[str] | None = None,
                  force: bool = False) -> tuple[str, ...]:
    """Write the plan's figures and report (atomically; an existing file only with ``force``) and return the
    notes saying where (``"report written to plan.html"``)."""
    from .._internal.io import atomic_write_bytes, atomic_write_text
    from .report import plan_report, power_curve_figure, sample_size_figure

    notes = []
    if curve_plot and out.get("power_curve"):
        figure = power_curve_figure(out["power_curve"], f"{out['source']}: power of the test of {out['share']!r} "
                                    f"(null {out['null']:g}, {out['alternative']}, alpha {out['alpha']:g})",
                                    power=out["power"], n=out["n"], groups=out["groups"])
        atomic_write_bytes(curve_plot, figure, overwrite=force)
        notes.append(f"power curve written to {os.fspath(curve_plot)}")
    by_epsilon = out.get("by_epsilon")
    if plot and by_epsilon:
        atomic_write_bytes(plot, sample_size_figure(by_epsilon, title(out, width, level)), overwrite=force)
        notes.append(f"plot written to {os.fspath(plot)}")
    if report:
        page = plan_report({"title": out["source"], "subtitle": title(out, width, level), "headline": headline(out),
                            "details": details(out), "rows": report_rows(out),
                            "figure_title": title(out, width, level)},
                           design=design, by_epsilon=by_epsilon, allocation=allocation)
        atomic_write_text(report, page, overwrite=force)
        notes.append(f"report written to {os.fspath(report)}")
    return tuple(notes)


def split_table(out: dict[str, Any], files: dict[str, str]) -> tuple[list[str], list[list[Any]]]:
    """The groups of a plan split between several designs: ``group, mechanism, fraction, n``."""
    return ["group", "mechanism", "fraction", "n"], [[name, files[name], fmt(g["fraction"], 4), g["n"]]
                                                     for name, g in out["designs"].items()]


def split_lines(out: dict[str, Any], files: dict[str, str]) -> str:
    """The table output of a plan split between several designs."""
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
    return "\n".join([*lines, render_table(*split_table(out, files))])


def _method_words(check: dict[str, Any]) -> str:
    """The estimator the simulated surveys were analysed with, in words."""
    if check.get("method") == "posterior":
        return "posterior mean and credible interval"
    return "MLE and Wald interval"


def _asymptotic_words(check: dict[str, float]) -> str:
    """The simulated mean squared error beside the asymptotic one, and a warning where they differ by more than
    :data:`~designer.planning.simulation_check.ASYMPTOTIC_TOL`."""
    from .simulation_check import ASYMPTOTIC_TOL

    ratio = check.get("mse_ratio")
    if ratio is None or ratio != ratio:
        return ""
    words = f"; MSE {check['mse']:.4g} per respondent against the asymptotic {check['asymptotic']:.4g}"
    if abs(ratio - 1) > ASYMPTOTIC_TOL:
        words += (f" (ratio {ratio:.3f}: the asymptotic n is off by more than {ASYMPTOTIC_TOL:.0%} at this n; "
                  f"about {ratio:.2f} times the planned n gives the planned variance)")
    return words
