"""``designer plan``: sample size, smallest budget, power, the price of privacy, and a questionnaire's split."""

from __future__ import annotations

import argparse
import json
import math
from typing import Any

from .._render import fmt, json_value, render_csv, render_table
from ._common import CommandError, add_format, check_out, int_arg, level_arg, parse_grid, parse_prior


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"{text} must be a positive number")
    return value


def _source(args: argparse.Namespace) -> tuple[str, Any]:
    """``("survey", Survey)``, ``("problem", DesignProblem)`` or ``("mechanism", Mechanism)``."""
    from ..design.problem import parse_problem, read_toml
    from ..mechanism import Mechanism
    from ..planning.survey import is_survey, parse_survey

    if args.source.lower().endswith(".toml"):
        data = read_toml(args.source)
        if is_survey(data):
            return "survey", parse_survey(data, source=args.source)
        problem = parse_problem(data, source=args.source)
        if args.prior is not None:
            problem = problem.replace(prior=parse_prior(args.prior, problem.inputs))
        return "problem", problem
    return "mechanism", Mechanism.read(args.source)


def cmd_plan(args: argparse.Namespace) -> str:
    from ..planning import (
        accuracy_of,
        allocate,
        check_by_simulation,
        power_at,
        power_sample_size,
        price_of_privacy,
        sample_size,
        smallest_budget,
    )

    if args.report:
        check_out(args.report, [args.source], args.force)
    if args.plot:
        check_out(args.plot, [args.source], args.force)
    kind, source = _source(args)
    out: dict[str, Any] = {"source": args.source}
    design_result, by_epsilon, allocation = None, None, None
    if kind == "survey":
        allocation = allocate(source)
        out.update(mode="allocation", total_epsilon=source.epsilon, allocation=[
            {"question": q.name, "weight": w, "epsilon": e, "variance": v, "equal_split_variance": eq}
            for q, w, e, v, eq in zip(source.questions, source.weights, allocation.epsilons, allocation.variances,
                                      allocation.equal_split_variances)],
            total_variance=allocation.total_variance, equal_split_total_variance=allocation.equal_split_total_variance,
            joint=allocation.joint, joint_note=allocation.joint_note, convex=list(allocation.convex),
            designs_solved=allocation.designs_solved)
        return _render(args, out, None, None, allocation)
    if kind == "problem":
        from ..design.engine import design

        problem = source
        if args.n is not None and args.width is not None and args.detect is None:
            eps, acc, solved = smallest_budget(problem, args.n, args.width, args.level)
            design_result = design(problem.replace(epsilon=round(eps, 12)))
            out.update(mode="smallest_budget", epsilon=eps, n=args.n, variance=acc.variance,
                       variance_kind=acc.kind, formula=acc.describe(), width=args.width, level=args.level,
                       designs_solved=solved)
        else:
            design_result = design(problem)
        if design_result.mechanism is None:
            raise CommandError(f"{args.source}: the design is too large to plan with (no expanded mechanism)")
        acc = accuracy_of(design_result.mechanism, problem.semantics, problem.prior)
        out.setdefault("epsilon", problem.epsilon if out.get("mode") != "smallest_budget" else out["epsilon"])
    else:
        semantics = args.semantics or "sldp"
        prior = parse_prior(args.prior, source.inputs)
        acc = accuracy_of(source, semantics, prior)
        out["epsilon"] = None
    out.update(prior=dict(zip(acc.mechanism.inputs, (float(v) for v in acc.prior))),
               semantics=acc.semantics.value)
    share = acc.mechanism.input_index(args.share) if args.share else 0
    if args.detect is not None:
        n_needed = power_sample_size(acc, args.detect, args.power, args.alpha, share=share, null=args.null,
                                     groups=args.groups)
        at = args.n if args.n is not None else n_needed
        out.update(mode="power", n=n_needed, power=args.power, power_at_n={"n": at, "power": power_at(
            acc, at, args.detect, args.alpha, share=share, null=args.null, groups=args.groups)},
            detect=args.detect, alpha=args.alpha, groups=args.groups, share=acc.mechanism.inputs[share],
            null=args.null if args.null is not None else float(acc.prior[share]), variance=acc.variance,
            variance_kind=acc.kind, formula="asymptotic MLE variance V/n (Wald test)")
    elif out.get("mode") != "smallest_budget":
        if args.width is None:
            raise CommandError("say what to plan: --width W (sample size), --n N --width W (smallest budget), "
                               "--detect D [--power P] (power)")
        size = sample_size(acc, args.width, args.level)
        out.update(mode="sample_size", n=size.n, variance=acc.variance, variance_kind=acc.kind,
                   formula=acc.describe(), width=args.width, level=args.level, achieved_width=size.achieved_width)
    if args.grid is not None or args.plot or args.report:
        if kind != "problem" or args.width is None:
            if args.grid is not None or args.plot:
                raise CommandError("--grid and --plot need a problem file and --width (respondents against eps)")
        else:
            grid = parse_grid(args.grid or "0.25:4:16", "--grid")
            by_epsilon = price_of_privacy(source, grid, args.width, args.level)
            out["by_epsilon"] = by_epsilon
    if args.check:
        out["check"] = check_by_simulation(acc, int(out["n"]), args.check, args.level, seed=args.seed,
                                           detect=args.detect, alpha=args.alpha, share=share)
    return _render(args, out, design_result, by_epsilon, allocation)


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
                f"(null {out['null']:g}) with power {out['power']:g} at alpha {out['alpha']:g}; power at n = "
                f"{out['power_at_n']['n']}: {out['power_at_n']['power']:.4f}")
    joint = out["joint"]
    return (f"best split: total variance {out['total_variance']:.6g}; "
            f"equal split {out['equal_split_total_variance']:.6g}; "
            + (f"one joint question: {joint['total_variance']:.6g}" if joint else f"joint: {out['joint_note']}"))


def _render(args: argparse.Namespace, out: dict[str, Any], design: Any, by_epsilon: Any, allocation: Any) -> str:
    notes = []
    if args.plot and by_epsilon:
        from .._io import atomic_write_bytes
        from ..planning.report import sample_size_figure

        atomic_write_bytes(args.plot, sample_size_figure(by_epsilon, _title(args, out)), overwrite=args.force)
        notes.append(f"plot written to {args.plot}")
    if args.report:
        from .._io import atomic_write_text
        from ..planning.report import plan_report

        rows = [[k, v if not isinstance(v, dict) else json.dumps(v)] for k, v in out.items()
                if k not in ("by_epsilon", "allocation", "source")]
        page = plan_report({"title": args.source, "subtitle": _title(args, out), "headline": _headline(out),
                            "rows": rows, "figure_title": _title(args, out)},
                           design=design, by_epsilon=by_epsilon, allocation=allocation)
        atomic_write_text(args.report, page, overwrite=args.force)
        notes.append(f"report written to {args.report}")
    if args.format == "json":
        return json.dumps({k: json_value(v) if not isinstance(v, (dict, list)) else v for k, v in out.items()},
                          indent=2, default=json_value)
    if args.format == "csv":
        if out["mode"] == "allocation":
            headers = ["question", "weight", "epsilon", "variance", "equal_split_variance"]
            return render_csv(headers, [[r[h] for h in headers] for r in out["allocation"]])
        if by_epsilon:
            return render_csv(["epsilon", "variance", "n"], [[r["epsilon"], r["variance"], r["n"]] for r in by_epsilon])
        keys = [k for k, v in out.items() if not isinstance(v, (dict, list)) and k != "source"]
        return render_csv(keys, [[out[k] for k in keys]])
    lines = [_headline(out)]
    if out["mode"] == "allocation":
        lines.append(render_table(["question", "weight", "epsilon", "variance", "equal split"],
                                  [[r["question"], fmt(r["weight"]), fmt(r["epsilon"], 5), fmt(r["variance"], 6),
                                    fmt(r["equal_split_variance"], 6)] for r in out["allocation"]]))
        lines.append(f"variance: mean over each question's inputs, per respondent, at its prior, weighted; "
                     f"{out['designs_solved']} designs solved; curves convex: {out['convex']}")
        if out["joint"]:
            values = [round(v, 6) for v in out["joint"]["variances"]]
            lines.append(f"joint question ({out['joint_note']}): variances {values}")
    if by_epsilon:
        lines.append(render_table(["epsilon", "variance", "n"], [[fmt(r["epsilon"], 4), fmt(r["variance"], 6),
                                                                   r["n"] or "-"] for r in by_epsilon]))
    if "check" in out:
        c = out["check"]
        lines.append(f"simulation check ({int(c['reps'])} surveys of n = {out['n']}): coverage {c['coverage']:.3f} "
                     f"(level {args.level:g}), mean half-width {c['mean_half_width']:.4g}"
                     + (f", power {c['power']:.3f}" if "power" in c else ""))
    return "\n".join(lines + notes)


def _title(args: argparse.Namespace, out: dict[str, Any]) -> str:
    prior = ", ".join(f"{k}={v:g}" for k, v in (out.get("prior") or {}).items())
    return (f"{args.source}: respondents for half-width {args.width} at level {args.level:g}, prior {prior}"
            if args.width else f"{args.source}")


def _configure_plan(p: argparse.ArgumentParser) -> None:
    p.add_argument("source", help="problem (TOML), survey with [[question]] tables (TOML) or mechanism file")
    p.add_argument("--prior", help="true shares: yes=0.3,no=0.7 or 0.3,0.7 (default: the problem's prior)")
    p.add_argument("--width", type=_positive, help="target half-width of every share's confidence interval")
    p.add_argument("--level", type=level_arg, default=0.95, help="confidence level in (0, 1) (default 0.95)")
    p.add_argument("--n", type=int_arg(1, 10**12), help="respondents: with --width, find the smallest budget; "
                                                        "with --detect, report the power at n")
    p.add_argument("--detect", type=_positive, help="difference in a share to detect (power mode)")
    p.add_argument("--power", type=level_arg, default=0.8, help="power wanted, in (0, 1) (default 0.8)")
    p.add_argument("--alpha", type=level_arg, default=0.05, help="two-sided test level (default 0.05)")
    p.add_argument("--groups", type=int_arg(1, 2), default=1, help="1: against a null value; 2: two groups")
    p.add_argument("--share", help="input whose share is tested (default the first input)")
    p.add_argument("--null", type=float, help="null value of the share (default its prior)")
    p.add_argument("--semantics", choices=("sldp", "wldp"), help="for a mechanism file (default sldp)")
    p.add_argument("--grid", help="budgets for the respondents-against-eps table, start:stop:count or a list")
    p.add_argument("--plot", help="PNG of respondents against eps")
    p.add_argument("--check", type=int_arg(2, 10**6), help="simulate this many surveys at the planned n")
    p.add_argument("--seed", type=int, help="seed of --check")
    p.add_argument("--report", help="self-contained HTML report")
    p.add_argument("--force", action="store_true", help="let --plot / --report replace existing files")
    add_format(p)
