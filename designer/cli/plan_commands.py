"""``designer plan``: sample size, smallest budget, power, the price of privacy, and a questionnaire's split."""

from __future__ import annotations

import argparse
from typing import Any

from .._internal.render import fmt, render_csv, render_json, render_table
from ..vocabulary import DesignBasis, PlanMode, PlanSource
from ._common import (
    CommandError,
    add_format,
    check_out,
    difference_arg,
    epsilon_arg,
    int_arg,
    level_arg,
    parse_prior,
    positive_arg,
    probability_arg,
    read_mechanism,
    seed_arg,
)
from .plan_groups import add_group_plan_arguments
from .plan_request import DEFAULTS, fill_defaults, plan_request


def _width(text: str) -> float:
    value = positive_arg(text)
    if value >= 0.5:
        raise argparse.ArgumentTypeError(f"a half-width of {text} covers every share in [0, 1] (one respondent "
                                         "would do); give a half-width below 0.5, e.g. 0.03")
    return value


#: Flags each kind of plan reads; any other flag given is refused with the reason (never silently ignored).
_USES: dict[PlanMode, set[str]] = {
    PlanMode.ALLOCATION: {"width", "level", "report", "force"},
    PlanMode.SAMPLE_SIZE: {"prior", "width", "level", "n", "grid", "plot", "check", "seed", "report", "force",
                           "semantics", "epsilon", "dont_know_value"},
    PlanMode.SMALLEST_BUDGET: {"prior", "width", "level", "n", "grid", "plot", "check", "seed", "report", "force",
                               "dont_know_value"},
    PlanMode.POWER: {"prior", "detect", "power", "alpha", "groups", "share", "null", "n", "width", "level", "grid",
                     "plot", "check", "seed", "report", "force", "semantics", "epsilon", "dont_know_value",
                     "alternative", "null_variance", "null_difference", "curve", "curve_detect", "curve_plot"},
}
_WHY: dict[PlanMode, str] = {
    PlanMode.ALLOCATION: "a questionnaire plan splits its own budget at its questions' priors; it reads --width "
                         "(and --level, --report)",
    PlanMode.SAMPLE_SIZE: "it belongs to a power plan (--detect)",
    PlanMode.SMALLEST_BUDGET: "--n with --width searches the smallest budget (drop --epsilon), and the power flags "
                              "belong to --detect",
    PlanMode.POWER: "",
}


def _given(args: argparse.Namespace) -> set[str]:
    flags = ("prior", "width", "n", "detect", "share", "null", "semantics", "grid", "plot", "check", "seed",
             "report", "epsilon", "dont_know_value", "curve", "curve_detect", "curve_plot", *DEFAULTS)
    return {f for f in flags if getattr(args, f, None) is not None} | ({"force"} if args.force else set())


def _refuse_unused(args: argparse.Namespace, kind: PlanSource, mode: PlanMode) -> None:
    """Every flag given changes the answer or is refused here, before any work."""
    given = _given(args)
    unused = sorted(given - _USES[mode])
    if unused:
        flag = "--" + unused[0].replace("_value", "").replace("_", "-")
        raise CommandError(f"{flag} has no effect on this plan: {_WHY[mode] or 'it does not apply'}; drop it")
    if kind is not PlanSource.PROBLEM and ({"epsilon", "dont_know_value"} & given):
        raise CommandError("--epsilon and --dont-know override a problem file's; this source is a "
                           + ("questionnaire (its budget is its epsilon key)" if kind is PlanSource.SURVEY
                              else "mechanism"))
    if kind is PlanSource.PROBLEM and "semantics" in given:
        raise CommandError(f"--semantics: {args.source} states its own semantics; --semantics is for a mechanism file")
    if kind is PlanSource.MECHANISM and ({"grid", "plot"} & given):
        raise CommandError("--grid and --plot design the problem at each budget: they need a problem file (TOML)")
    if {"grid", "plot"} & given and "width" not in given:
        raise CommandError("--grid and --plot tabulate respondents against eps for a half-width: add --width W")
    if "seed" in given and "check" not in given:
        raise CommandError("--seed seeds the simulation of --check; add --check REPS or drop --seed")
    if "force" in given and not ({"report", "plot", "curve_plot"} & given):
        raise CommandError("--force lets --report, --plot or --curve-plot replace a file; none was given")
    if ({"curve_detect", "curve_plot"} & given) and "curve" not in given:
        raise CommandError("--curve-detect and --curve-plot belong to a power curve: add --curve N1:N2:COUNT")
    if mode in (PlanMode.SAMPLE_SIZE, PlanMode.SMALLEST_BUDGET) and "level" in given and "width" not in given:
        raise CommandError("--level sets the confidence level of --width; add --width W")
    if mode is PlanMode.POWER and "level" in given and not ({"width", "check"} & given):
        raise CommandError("--level sets the level of an interval: with --detect it applies to --width or --check; "
                           "the test's level is --alpha")


def _mode(args: argparse.Namespace, kind: PlanSource, source: Any) -> PlanMode:
    """The plan's mode (the rule of :meth:`PlanRequest.mode`), ``ALLOCATION`` for a questionnaire."""
    from ..planning.plan import PlanRequest

    if kind is PlanSource.SURVEY:
        return PlanMode.ALLOCATION
    if args.width is None and args.detect is None:
        raise CommandError("say what to plan: --width W (sample size), --n N --width W (smallest budget with a "
                           "problem file; the half-width at n with a mechanism file), --detect D [--power P] (power)")
    return PlanRequest(width=args.width, n=args.n, detect=args.detect).mode(source)


def _source(args: argparse.Namespace) -> tuple[PlanSource, Any]:
    """``(SURVEY, Survey)``, ``(PROBLEM, DesignProblem)`` (with --epsilon / --dont-know applied) or
    ``(MECHANISM, Mechanism)``."""
    from ..optimal.problem_toml import parse_problem, read_toml
    from ..planning.survey_plan import is_survey, parse_survey

    if args.source.lower().endswith(".toml"):
        data = read_toml(args.source)
        if is_survey(data):
            return PlanSource.SURVEY, parse_survey(data, source=args.source)
        problem = parse_problem(data, source=args.source)
        changes = {k: v for k, v in (("epsilon", args.epsilon), ("dont_know", args.dont_know_value)) if v is not None}
        return PlanSource.PROBLEM, problem.replace(**changes) if changes else problem
    return PlanSource.MECHANISM, read_mechanism(args.source)


def cmd_plan(args: argparse.Namespace) -> str:
    from ..planning.plan import make_plan
    from .plan_groups import GROUP_FLAGS, plan_groups

    if args.mechanism:
        fill_defaults(args)
        return plan_groups(args)
    if args.source is None:
        raise CommandError("give a SOURCE (problem, questionnaire or mechanism file) or --mechanism NAME=FILE")
    alone = [f for f in GROUP_FLAGS if getattr(args, f) is not None]
    if alone:
        raise CommandError(f"--{alone[0].replace('_', '-')} belongs to a plan with several mechanisms "
                           "(--mechanism NAME=FILE, repeated)")
    kind, source = _source(args)
    mode = _mode(args, kind, source)
    _refuse_unused(args, kind, mode)
    for path in (args.report, args.plot, args.curve_plot):
        if path:
            check_out(path, [args.source], args.force)
    fill_defaults(args)
    if kind is PlanSource.SURVEY:
        return _plan_survey(args, source)
    default_prior = source.prior if kind is PlanSource.PROBLEM else None
    wanted = args.prior or kind is PlanSource.PROBLEM
    prior = parse_prior(args.prior, source.inputs, default_prior) if wanted else None
    request = plan_request(args, prior)
    plan = make_plan(source, request, name=args.source, table=bool(args.plot or args.report))
    return _render(args, plan.to_dict(), plan.design, plan.by_epsilon, None)


def _plan_survey(args: argparse.Namespace, survey: Any) -> str:
    """A questionnaire: the best split of its budget, and with --width the respondents every question needs."""
    from ..planning.plan import plan_survey

    plan = plan_survey(survey, name=args.source, width=args.width, level=args.level)
    return _render(args, plan.to_dict(), None, None, plan.allocation)


def _headline(out: dict[str, Any]) -> str:
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


def _details(out: dict[str, Any]) -> list[str]:
    """Lines under the headline: how the design was chosen, the half-width at a given n."""
    lines = []
    if out.get("design_basis"):
        lines.append(f"design: {out['design_basis_note']} (eps = {out['epsilon']:.6g}; planned at prior "
                     + ", ".join(f"{k}={v:g}" for k, v in out["prior"].items()) + ")")
    if out.get("width_at_n"):
        w = out["width_at_n"]
        lines.append(f"with n = {w['n']} respondents the {w['level']:g} half-width is {w['width']:.4g}")
    return lines


def _report_rows(out: dict[str, Any]) -> list[list[Any]]:
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
        rows.append(["simulation check", f"{int(c['reps'])} surveys of n = {out['n']}: coverage {c['coverage']:.3f}, "
                     f"mean half-width {c['mean_half_width']:.4g}"
                     + (f", power {c['power']:.3f}" if "power" in c else "")])
    if out.get("convex"):
        rows.append(["variance curves convex", "every question" if all(out["convex"]) else "not every question: "
                     + ", ".join(r["question"] for r, ok in zip(out["allocation"], out["convex"]) if not ok)])
    return rows


def _curve_lines(out: dict[str, Any]) -> list[str]:
    """The power curve as a table: one row per n, one column per difference."""
    effects = list(dict.fromkeys(r["detect"] for r in out["power_curve"]))
    ns = list(dict.fromkeys(r["n"] for r in out["power_curve"]))
    power = {(r["detect"], r["n"]): r["power"] for r in out["power_curve"]}
    who = "n per group" if out["groups"] == 2 else "n"
    return [f"power curve ({out['alternative']}, alpha {out['alpha']:g}):",
            render_table([who, *(f"detect {d:g}" for d in effects)],
                         [[n, *(f"{power[(d, n)]:.4f}" for d in effects)] for n in ns])]


def _render(args: argparse.Namespace, out: dict[str, Any], design: Any, by_epsilon: Any, allocation: Any) -> str:
    notes = []
    if getattr(args, "curve_plot", None) and out.get("power_curve"):
        from .._internal.io import atomic_write_bytes
        from ..planning.report import power_curve_figure

        figure = power_curve_figure(out["power_curve"], f"{args.source}: power of the test of {out['share']!r} "
                                    f"(null {out['null']:g}, {out['alternative']}, alpha {out['alpha']:g})",
                                    power=out["power"], n=out["n"], groups=out["groups"])
        atomic_write_bytes(args.curve_plot, figure, overwrite=args.force)
        notes.append(f"power curve written to {args.curve_plot}")
    if args.plot and by_epsilon:
        from .._internal.io import atomic_write_bytes
        from ..planning.report import sample_size_figure

        atomic_write_bytes(args.plot, sample_size_figure(by_epsilon, _title(args, out)), overwrite=args.force)
        notes.append(f"plot written to {args.plot}")
    if args.report:
        from .._internal.io import atomic_write_text
        from ..planning.report import plan_report

        page = plan_report({"title": args.source, "subtitle": _title(args, out), "headline": _headline(out),
                            "details": _details(out), "rows": _report_rows(out), "figure_title": _title(args, out)},
                           design=design, by_epsilon=by_epsilon, allocation=allocation)
        atomic_write_text(args.report, page, overwrite=args.force)
        notes.append(f"report written to {args.report}")
    if args.format == "json":
        return render_json(out)
    if args.format == "csv":
        if out["mode"] == "allocation":
            headers = ["question", "inputs", "weight", "epsilon", "variance", "equal_split_variance", "design_basis",
                       "note"] + (["n"] if "width" in out else [])
            return render_csv(headers, [[r[h] for h in headers] for r in out["allocation"]])
        if by_epsilon:
            headers = ["epsilon", "variance", "n", "basis", "reason"]
            return render_csv(headers, [[r[h] for h in headers] for r in by_epsilon])
        if out.get("power_curve"):
            return render_csv(["detect", "n", "power"], [[r["detect"], r["n"], r["power"]]
                                                         for r in out["power_curve"]])
        keys = [k for k, v in out.items() if not isinstance(v, (dict, list)) and k != "source"]
        return render_csv(keys, [[out[k] for k in keys]])
    lines = [_headline(out), *_details(out)]
    if out.get("power_curve"):
        lines += _curve_lines(out)
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
    if by_epsilon:
        lines.append(render_table(["epsilon", "variance", "n", "note"], [
            [fmt(r["epsilon"], 4), fmt(r["variance"], 6), r["n"] or "-",
             r["reason"] or ("" if r["basis"] is None else DesignBasis(r["basis"]).words)] for r in by_epsilon]))
    if "check" in out:
        c = out["check"]
        lines.append(f"simulation check ({int(c['reps'])} surveys of n = {out['n']}): coverage {c['coverage']:.3f} "
                     f"(level {args.level:g}), mean half-width {c['mean_half_width']:.4g}"
                     + (f", power {c['power']:.3f}" if "power" in c else ""))
    return "\n".join(lines + notes)


def _title(args: argparse.Namespace, out: dict[str, Any]) -> str:
    prior = ", ".join(f"{k}={v:g}" for k, v in (out.get("prior") or {}).items())
    return (f"{args.source}: respondents for half-width {args.width} at level {args.level:g}"
            + (f", prior {prior}" if prior else "") if args.width else f"{args.source}")


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
