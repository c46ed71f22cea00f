"""Commands on survey data: randomize, estimate, simulate."""

from __future__ import annotations

import argparse
import csv
import io
import json

import numpy as np

from .._render import fmt, json_value, render_csv, render_table
from ..exceptions import DesignerError
from ..mechanism import Mechanism
from ._common import (
    CommandError,
    add_format,
    check_out,
    column,
    int_arg,
    level_arg,
    parse_allocation,
    parse_prior,
    read_table,
    show_progress,
)


def cmd_simulate(args: argparse.Namespace) -> str:
    from .._io import atomic_write_text
    from ..sampling import precise_distributions
    from ..simulation import simulate, summarize

    if args.out:
        check_out(args.out, [args.mechanism], args.force)
    if args.n < 1 or args.reps < 2:
        raise CommandError(f"--n must be >= 1 and --reps >= 2, got n = {args.n}, reps = {args.reps}")
    if args.n * args.reps > 10**12:
        raise CommandError(f"--n x --reps = {args.n * args.reps:.3g} draws is beyond what fits in reasonable "
                           "time; reduce --reps (the variance needs about 10**4 surveys)")
    mech = Mechanism.read(args.mechanism)
    prior = parse_prior(args.prior, mech.inputs)
    allocation = parse_allocation(args.allocation)
    df = simulate(mech, prior, args.n, args.reps, args.seed, estimator=args.estimator, semantics=args.semantics,
                  allocation=allocation, progress=show_progress(args))
    reference_mech = mech
    if args.semantics == "wldp":
        # The analyst sees precise answers drawn from this member of the credal sets.
        channel = precise_distributions(mech, allocation)
        reference_mech = Mechanism(channel, inputs=mech.inputs, frame=mech.frame,
                                   focal=[1 << i for i in range(mech.l)])
    table = summarize(df, reference_mech)
    if args.out:
        atomic_write_text(args.out, df.to_csv(index=False, float_format="%.17g"), overwrite=args.force)
    headers = list(table.columns)
    rows = table.to_numpy().tolist()
    used = table.attrs["used_surveys"]
    if args.format == "json":
        return json.dumps({"n": args.n, "reps": args.reps, "used_surveys": used, "estimator": args.estimator,
                           "semantics": args.semantics, "prior": dict(zip(mech.inputs, prior)),
                           "rows": [{h: json_value(v) for h, v in zip(headers, r)}
                                    for r in rows]}, indent=2)
    if args.format == "csv":
        return render_csv(headers, rows)
    head = (f"{args.reps} simulated surveys of {args.n} respondents ({args.semantics}, estimator {args.estimator}"
            f"; {used} usable); closed_form = asymptotic MLE variance 1/(n I)")
    text = head + "\n" + render_table(headers, [[fmt(v) if isinstance(v, float) else v for v in r] for r in rows])
    if args.out:
        text += f"\nestimates written to {args.out}"
    return text


def cmd_randomize(args: argparse.Namespace) -> str:
    from .._io import atomic_write_text
    from ..sampling import as_rng, input_indices, randomize, randomize_precise

    check_out(args.out, [args.answers, args.mechanism], force=False,
               advice="randomize never replaces a file (choose another name)")
    mech = Mechanism.read(args.mechanism)
    header, rows = read_table(args.answers)
    col = column(args.answers, header, args.column)
    keep = [k.strip() for k in (args.keep or "").split(",") if k.strip()]
    keep_idx = [column(args.answers, header, k) for k in keep]
    if args.column in keep:
        raise CommandError(f"--keep names {args.column!r}, the true answers: they are never written out")
    answers = [r[col].strip() for r in rows]
    try:
        input_indices(mech, answers)
    except DesignerError as exc:
        raise CommandError(f"{args.answers}: column {args.column!r}: {exc}") from None
    rng = as_rng(args.seed)  # None: fresh entropy from the operating system
    if args.semantics == "wldp":
        drawn = randomize_precise(mech, answers, rng, allocation=parse_allocation(args.allocation))
        labels = [mech.frame[i] for i in drawn]
    else:
        drawn = randomize(mech, answers, rng)
        columns = mech.columns
        labels = [columns[i] for i in drawn]
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow([*keep, "response"])
    for r, label in zip(rows, labels):
        writer.writerow([*(r[i] for i in keep_idx), label])
    atomic_write_text(args.out, buf.getvalue(), overwrite=False)
    summary = {"n": len(labels), "mechanism": args.mechanism, "semantics": args.semantics, "out": args.out,
               "seed": args.seed}
    if args.format == "json":
        return json.dumps(summary, indent=2)
    if args.format == "csv":
        return render_csv(list(summary), [["" if v is None else v for v in summary.values()]])
    return f"randomized {len(labels)} answers with {args.mechanism} ({args.semantics}) into {args.out}"


def cmd_estimate(args: argparse.Namespace) -> str:
    from ..estimation import estimate_sldp, identified_set, response_counts

    mech = Mechanism.read(args.mechanism)
    header, rows = read_table(args.responses)
    col = column(args.responses, header, args.column)
    responses = [r[col].strip() for r in rows]
    if args.semantics == "wldp":
        index = {y: i for i, y in enumerate(mech.frame)}
        counts = np.zeros(mech.l)
        for line, value in enumerate(responses, start=2):
            if value not in index:
                raise CommandError(f"{args.responses}: row {line}: {value!r} is not an answer of the frame "
                                   f"{list(mech.frame)} (WLDP responses are precise answers)")
            counts[index[value]] += 1
        result = identified_set(mech, counts, level=args.level)
        if args.format == "json":
            return json.dumps({"semantics": "wldp", "n": result.n, "level": result.level, "misfit": result.misfit,
                               "lower": dict(zip(mech.inputs, result.lower.tolist())),
                               "upper": dict(zip(mech.inputs, result.upper.tolist()))}, indent=2)
        rows_out = [[x, result.lower[i], result.upper[i]] for i, x in enumerate(mech.inputs)]
        if args.format == "csv":
            return render_csv(["input", "lower", "upper"], rows_out)
        return (f"{result.n} precise answers; identified set of each share at level {result.level:g} "
                f"(misfit {result.misfit:.3g})\n"
                + render_table(["input", "lower", "upper"], [[r[0], fmt(r[1]), fmt(r[2])] for r in rows_out]))
    try:
        counts = response_counts(mech, responses)
    except DesignerError as exc:
        raise CommandError(f"{args.responses}: {exc}") from None
    est = estimate_sldp(mech, counts, level=args.level)
    if args.format == "json":
        return json.dumps({"semantics": "sldp", "n": est.n, "level": est.level,
                           "estimate": dict(zip(mech.inputs, est.estimate.tolist())),
                           "stderr": dict(zip(mech.inputs, est.stderr.tolist())),
                           "ci_low": dict(zip(mech.inputs, est.ci_low.tolist())),
                           "ci_high": dict(zip(mech.inputs, est.ci_high.tolist()))}, indent=2)
    table = [[x, est.estimate[i], est.stderr[i], est.ci_low[i], est.ci_high[i]] for i, x in enumerate(mech.inputs)]
    headers = ["input", "estimate", "stderr", "ci_low", "ci_high"]
    if args.format == "csv":
        return render_csv(headers, table)
    return (f"{est.n} set-valued answers; maximum likelihood (EM), {est.level:g} intervals\n"
            + render_table(headers, [[r[0], *(fmt(v) for v in r[1:])] for r in table]))


def _configure_randomize(p: argparse.ArgumentParser) -> None:
    p.add_argument("answers", help="CSV of true answers (one respondent per row)")
    p.add_argument("--mechanism", required=True, help="mechanism CSV or JSON file")
    p.add_argument("--column", required=True, help="column of the true answers (never written out)")
    p.add_argument("--out", required=True, help="new CSV of randomized responses (an existing file is refused)")
    p.add_argument("--keep", help="comma-separated columns to copy to the output (not the answer column)")
    p.add_argument("--seed", type=int, help="seed for a reproducible draw (default: randomness from the OS)")
    p.add_argument("--semantics", choices=("sldp", "wldp"), default="sldp",
                   help="sldp: report focal sets; wldp: report precise answers (default sldp)")
    p.add_argument("--allocation", default="uniform",
                   help="wldp: member of the credal set, 'uniform' or lambda in [0, 1] (default uniform)")
    add_format(p)


def _configure_estimate(p: argparse.ArgumentParser) -> None:
    p.add_argument("responses", help="CSV of randomized responses")
    p.add_argument("--mechanism", required=True, help="mechanism CSV or JSON file")
    p.add_argument("--column", default="response", help="column of the responses (default response)")
    p.add_argument("--semantics", choices=("sldp", "wldp"), default="sldp",
                   help="sldp: MLE from set answers; wldp: identified set from precise answers")
    p.add_argument("--level", type=level_arg, default=0.95, help="confidence level in (0, 1) (default 0.95)")
    add_format(p)


def _configure_simulate(p: argparse.ArgumentParser) -> None:
    from ..simulation import ESTIMATORS

    p.add_argument("mechanism", help="mechanism CSV or JSON file")
    p.add_argument("--n", type=int_arg(1, 10**9), default=1000, help="respondents per survey (default 1000)")
    p.add_argument("--reps", type=int_arg(2, 10**7), default=10000, help="simulated surveys (default 10000)")
    p.add_argument("--prior", help="true shares: 0.3,0.7 in input order or yes=0.3,no=0.7 (default uniform)")
    p.add_argument("--estimator", choices=ESTIMATORS, default="mle",
                   help="mle (EM), inversion (square Bayesian mechanisms) or eq2 (Q_2x3, Eq 2); default mle")
    p.add_argument("--semantics", choices=("sldp", "wldp"), default="sldp",
                   help="sldp: set answers; wldp: precise answers from --allocation (default sldp)")
    p.add_argument("--allocation", default="uniform",
                   help="wldp: member of the credal set, 'uniform' or lambda in [0, 1] (default uniform)")
    p.add_argument("--seed", type=int, help="seed for a reproducible run")
    p.add_argument("--out", help="also write every survey's estimate (CSV)")
    p.add_argument("--force", action="store_true", help="let --out replace an existing file")
    add_format(p)


