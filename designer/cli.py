"""Command-line interface: ``designer COMMAND ...``.

Every command reads its inputs, does its work through the library and prints a table (default), JSON
or CSV. Errors in the input are one line on stderr, ``designer: error: FILE: problem``, exit status 2.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import os
import sys
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ._validation import format_set
from .design.certify import CertificationError
from .exceptions import DesignerError, DesignWarning
from .mechanism import Mechanism
from .privacy import LOSSES, privacy_losses

__all__ = ["main"]

EXIT_USAGE = 2
#: Objectives that need no table in the problem file (gain and utilities do).
OBJECTIVE_CHOICES = ("truthful", "chi2", "gain", "worst_case_utility", "best_case_utility")


class CommandError(Exception):
    """A problem the command reports on one line (exit status 2)."""


def json_number(x: float) -> float | str:
    """JSON has no infinity: write it as the string ``"inf"``."""
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if math.isnan(x):
        return "nan"
    return x


def fmt(x: float, digits: int = 6) -> str:
    """Human-readable number for tables."""
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return f"{x:.{digits}g}"


def render_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A plain aligned text table."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[j]) for r in cells) for j in range(len(headers))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def render_csv(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(headers)
    writer.writerows(rows)
    return buf.getvalue().rstrip("\n")


def show_progress(args: argparse.Namespace) -> bool:
    """Progress bars go to stderr, only when it is a terminal and ``--quiet`` was not given."""
    return not getattr(args, "quiet", False) and sys.stderr.isatty()


def parse_values(text: str, what: str, *, low: float, high: float, low_open: bool, high_open: bool
                 ) -> list[float]:
    """``start:stop:count`` (inclusive, evenly spaced) or a comma list ``0.5,1,2``, each in a range."""
    try:
        if ":" in text:
            parts = text.split(":")
            if len(parts) != 3:
                raise ValueError
            start, stop, count = float(parts[0]), float(parts[1]), int(parts[2])
            if count < 1 or (count == 1 and start != stop):
                raise ValueError
            values = [start + (stop - start) * i / (count - 1) for i in range(count)] if count > 1 else [start]
        else:
            values = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise CommandError(f"{what} {text!r}: write start:stop:count (e.g. 0.1:5:50) or a list 0.5,1,2") from None
    lo, hi = ("(" if low_open else "["), (")" if high_open else "]")
    for v in values:
        if (not math.isfinite(v) or v < low or v > high or (low_open and v == low) or (high_open and v == high)):
            raise CommandError(f"{what} {text!r}: every value must be in {lo}{low:g}, {high:g}{hi}, got {v!r}")
    if not values:
        raise CommandError(f"{what} {text!r}: no values; write start:stop:count or a list 0.5,1,2")
    return values


# ---------------------------------------------------------------------------- audit
def cmd_audit(args: argparse.Namespace) -> str:
    mech = Mechanism.read(args.mechanism)
    losses = privacy_losses(mech)
    if args.format == "json":
        out: dict[str, Any] = {
            "inputs": list(mech.inputs),
            "frame": list(mech.frame),
            "focal_sets": [list(s) for s in mech.focal_sets],
            "bayesian": mech.is_bayesian,
        }
        for name in LOSSES:
            out[f"eps_{name}"] = json_number(losses[name].eps)
        out["witness"] = {
            f"eps_{name}": None if w.x is None else {"x": w.x, "x2": w.x2, "event": list(w.event or ())}
            for name, w in losses.items()
        }
        return json.dumps(out, indent=2)
    headers = ["loss", "eps", "e^eps", "attained at"]
    rows = [
        [f"eps_{name}", fmt(w.eps), fmt(math.exp(w.eps) if w.eps < 700 else math.inf), w.describe()]
        for name, w in losses.items()
    ]
    if args.format == "csv":
        exact = [[f"eps_{n}", repr(w.eps), repr(math.exp(w.eps) if w.eps < 700 else math.inf), w.describe()]
                 for n, w in losses.items()]
        return render_csv(headers, exact)
    kind = "Bayesian" if mech.is_bayesian else "evidential"
    frame = ",".join(mech.frame) if mech.l <= 12 else ",".join(mech.frame[:10]) + f",... ({mech.l} answers)"
    title = (f"{args.mechanism}: {mech.k} inputs, frame {{{frame}}}, "
             f"{len(mech.focal)} focal sets ({kind})")
    return title + "\n" + render_table(headers, rows)


# ---------------------------------------------------------------------------- design
def _problem(args: argparse.Namespace) -> Any:
    from .design import load_problem

    problem = load_problem(args.problem)
    changes: dict[str, Any] = {}
    if getattr(args, "epsilon", None) is not None:
        changes["epsilon"] = args.epsilon
    if getattr(args, "semantics", None) is not None:
        changes["semantics"] = args.semantics
    if getattr(args, "objective", None) is not None:
        changes["objective"] = args.objective
    return problem.replace(**changes) if changes else problem


def _check_out(path: str, inputs: Sequence[str], force: bool,
               advice: str = "choose another name or pass --force") -> None:
    out = os.path.realpath(path)
    if any(out == os.path.realpath(p) for p in inputs):
        raise CommandError(f"{path}: is an input of this command; input files are never overwritten")
    if os.path.exists(out) and not force:
        raise CommandError(f"{path}: already exists; {advice}")


def parse_allocation(text: str) -> str | float:
    """``--allocation``: ``uniform`` or lambda in [0, 1] (checked by :mod:`designer.sampling`)."""
    if text == "uniform":
        return text
    try:
        return float(text)
    except ValueError:
        raise CommandError(f"--allocation must be 'uniform' or a number in [0, 1], got {text!r}") from None


def cmd_design(args: argparse.Namespace) -> str:
    from .design import design

    if args.out:
        _check_out(args.out, [args.problem], args.force)
    result = design(_problem(args))
    mech = result.mechanism
    if mech is None and (args.out or args.format == "csv"):
        raise CommandError(
            f"the designed mechanism of {result.problem.k} inputs has 2**{result.problem.k} - 1 focal sets and is "
            "kept in compact form (size classes); use --format json or the table"
        )
    if args.out:
        mech.write(args.out)
    if args.format == "json":
        return json.dumps(result.to_json_dict(), indent=2)
    if args.format == "csv":
        return mech.to_csv_text().rstrip("\n")
    if mech is not None and len(mech.focal) <= 64:
        rows = [[x, *(fmt(v, 8) for v in row)] for x, row in zip(mech.inputs, mech.matrix)]
        table = render_table(["input", *mech.columns], rows)
    elif result.compact is None:
        values = np.unique(np.round(mech.matrix, 15))
        table = (f"{mech.k} x {len(mech.focal)} mechanism ({'precise answers' if mech.is_bayesian else 'sets'}), "
                 f"too wide to print; distinct entries {', '.join(fmt(v, 8) for v in values[:6])}"
                 f"{' ...' if values.size > 6 else ''}; write it with --out FILE or --format json")
    else:
        compact = result.compact
        a, b = compact.per_set()
        rows = [[s + 1, fmt(compact.A[s], 8), fmt(a[s], 6), fmt(compact.B[s], 8), fmt(b[s], 6)]
                for s in range(compact.k) if compact.A[s] > 0 or compact.B[s] > 0]
        table = ("compact form: mass of a row on sets of each size, with / without the true answer\n"
                 + render_table(["size", "total with", "one set with", "total without", "one set without"], rows))
    lines = [
        result.problem.describe(),
        table,
        "",
        f"objective {result.problem.objective}: {fmt(result.objective_value, 10)} "
        f"(solver reported {fmt(result.solver_objective, 10)})",
        f"eps_shafer {fmt(result.eps_shafer, 10)}   eps_walley {fmt(result.eps_walley, 10)}   "
        f"variance (MLE, per respondent) {fmt(result.variance, 8)}",
        f"certified: {result.certificate.describe()}",
        f"path: {result.path}; solver {result.solver} ({result.status}); {result.seconds:.2f} s",
        *(f"warning: {w}" for w in result.warnings),
    ]
    if args.out:
        lines.append(f"mechanism written to {args.out}")
    return "\n".join(lines)


def parse_grid(text: str, what: str = "grid") -> list[float]:
    """Epsilons: ``start:stop:count`` (inclusive, evenly spaced) or a comma list ``0.5,1,2``, each > 0."""
    return parse_values(text, what, low=0.0, high=math.inf, low_open=True, high_open=True)


def cmd_compare(args: argparse.Namespace) -> str:
    from .comparison import compare

    table = compare(_problem(args), parse_grid(args.eps))
    if args.format == "json":
        return json.dumps({"problem": table.problem.name, "closed_form": table.reference,
                           "rows": [{k: json_number(v) if isinstance(v, float) else v for k, v in r.items()}
                                    for r in table.rows]}, indent=2)
    headers = list(table.columns)
    rows = [[r.get(c, "") for c in headers] for r in table.rows]
    if args.format == "csv":
        return render_csv(headers, [[repr(v) if isinstance(v, float) else v for v in r] for r in rows])
    pretty = [[fmt(v, 8) if isinstance(v, float) else v for v in r] for r in rows]
    return f"{table.problem.describe()}\nclosed form: {table.reference}\n" + render_table(headers, pretty)


# ---------------------------------------------------------------------------- sweep
def cmd_sweep(args: argparse.Namespace) -> str:
    from ._io import atomic_write_text
    from .design.sweep import SWEEP_COLUMNS, plot_sweep, sweep

    for path in (args.out, args.plot):
        if path:
            _check_out(path, [args.problem], args.force)
    if args.plot and args.out and os.path.realpath(args.plot) == os.path.realpath(args.out):
        raise CommandError("--out and --plot name the same file; give two names")
    if args.jobs == 0 or args.jobs < -1:
        raise CommandError(f"--jobs must be a positive number of processes or -1 (all cores), got {args.jobs}")
    problem = _problem(args)
    epsilons = parse_grid(args.eps_grid, "--epsilon")
    masses = None
    if args.dont_know is not None:
        masses = parse_values(args.dont_know, "--dont-know", low=0.0, high=1.0, low_open=False, high_open=True)
    df = sweep(problem, epsilons, masses, jobs=args.jobs, scheduler=args.scheduler, progress=show_progress(args))
    headers = list(SWEEP_COLUMNS)
    exact = [[repr(v) if isinstance(v, float) else v for v in row] for row in df.itertuples(index=False)]
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
        rows = [{k: json_number(v) if isinstance(v, float) else v for k, v in r.items()}
                for r in df.to_dict(orient="records")]
        return json.dumps({"problem": problem.name, "semantics": problem.semantics,
                           "objective": problem.objective, "rows": rows}, indent=2)
    if args.format == "csv":
        return csv_text
    pretty = [[fmt(v, 8) if isinstance(v, float) else v for v in row[:-1]]
              for row in df.itertuples(index=False)]
    notes = sorted({r for r in df["message"] if r})
    text = render_table(headers[:-1], pretty) + "\n" + summary
    if notes:
        text += "\n" + "\n".join(f"note: {n}" for n in notes[:5])
    return text


# ---------------------------------------------------------------------------- simulate
def parse_prior(text: str | None, inputs: Sequence[str]) -> list[float]:
    """``0.3,0.7`` (in input order) or ``yes=0.3,no=0.7``; default uniform."""
    k = len(inputs)
    if text is None:
        return [1.0 / k] * k
    parts = [t.strip() for t in text.split(",") if t.strip()]
    try:
        if parts and all("=" in t for t in parts):
            given = {a.strip(): float(b) for a, b in (t.split("=", 1) for t in parts)}
            unknown = sorted(set(given) - set(inputs))
            if unknown:
                raise CommandError(f"--prior {text!r}: unknown inputs {unknown}; the inputs are {list(inputs)}")
            values = [given.get(x, 0.0) for x in inputs]
        else:
            values = [float(t) for t in parts]
    except ValueError:
        raise CommandError(f"--prior {text!r}: write {k} numbers (e.g. 0.3,0.7) or label=value pairs") from None
    if len(values) != k:
        raise CommandError(f"--prior {text!r}: {len(values)} values for {k} inputs {list(inputs)}")
    if any(not math.isfinite(v) or v < 0 for v in values) or abs(sum(values) - 1.0) > 1e-9:
        raise CommandError(f"--prior {text!r}: the shares must be non-negative and sum to 1")
    return values


def cmd_simulate(args: argparse.Namespace) -> str:
    from ._io import atomic_write_text
    from .sampling import precise_distributions
    from .simulation import simulate, summarize

    if args.out:
        _check_out(args.out, [args.mechanism], args.force)
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
                           "rows": [{h: json_number(v) if isinstance(v, float) else v for h, v in zip(headers, r)}
                                    for r in rows]}, indent=2)
    if args.format == "csv":
        return render_csv(headers, [[repr(v) if isinstance(v, float) else v for v in r] for r in rows])
    head = (f"{args.reps} simulated surveys of {args.n} respondents ({args.semantics}, estimator {args.estimator}"
            f"; {used} usable); closed_form = asymptotic MLE variance 1/(n I)")
    text = head + "\n" + render_table(headers, [[fmt(v) if isinstance(v, float) else v for v in r] for r in rows])
    if args.out:
        text += f"\nestimates written to {args.out}"
    return text


# ---------------------------------------------------------------------------- credal bounds
def _plot_curve(df: Any, path: str, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ._io import atomic_write_bytes

    fig, ax = plt.subplots(figsize=(5, 5))
    ax.plot(df["alpha"], df["beta"], label="curve of the mechanism", lw=2)
    ax.plot(df["alpha"], df["bound"], "--", label="bound from its epsilon")
    ax.plot([0, 1], [1, 0], ":", color="grey", lw=1, label="no information")
    ax.set(xlabel="type I error alpha", ylabel="type II error beta", xlim=(0, 1), ylim=(0, 1), title=title)
    ax.legend(loc="upper right")
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=120, bbox_inches="tight")
    plt.close(fig)
    atomic_write_bytes(path, buf.getvalue())


def cmd_tradeoff(args: argparse.Namespace) -> str:
    from .hypothesis_tests import tradeoff_curve

    if args.plot:
        _check_out(args.plot, [args.mechanism], args.force)
    if args.points < 2:
        raise CommandError(f"--points must be at least 2, got {args.points}")
    mech = Mechanism.read(args.mechanism)
    null, alt = mech.input_index(args.null), mech.input_index(args.alt)
    if null == alt:
        raise CommandError("--null and --alt must be different inputs")
    df = tradeoff_curve(mech, null, alt, args.kind, points=args.points, fold=args.fold)
    if args.plot:
        fold = f", {args.fold} answers" if args.fold > 1 else ""
        _plot_curve(df, args.plot, f"{args.kind}: H0 {args.null} vs H1 {args.alt}{fold}")
    if args.format == "json":
        return json.dumps({"kind": args.kind, "null": args.null, "alt": args.alt, "fold": args.fold,
                           "alpha": df["alpha"].tolist(), "beta": df["beta"].tolist(),
                           "bound": df["bound"].tolist()}, indent=2)
    rows = df.to_numpy().tolist()
    if args.format == "csv":
        return render_csv(["alpha", "beta", "bound"], [[repr(v) for v in r] for r in rows])
    return render_table(["alpha", "beta", "bound"], [[fmt(v, 6) for v in r] for r in rows])


def parse_gamble(text: str) -> dict[str, float]:
    """``yes=1,no=0`` -> ``{"yes": 1.0, "no": 0.0}``."""
    out: dict[str, float] = {}
    for part in text.split(","):
        if not part.strip():
            continue
        if "=" not in part:
            raise CommandError(f"gamble {text!r}: write label=value pairs such as yes=1,no=0")
        label, value = part.split("=", 1)
        try:
            out[label.strip()] = float(value)
        except ValueError:
            raise CommandError(f"gamble {text!r}: {value.strip()!r} is not a number") from None
    return out


def cmd_credal(args: argparse.Namespace) -> str:
    from .credal import lower_expectation, upper_expectation

    mech = Mechanism.read(args.mechanism)
    bel, pl = mech.bel(), mech.pl()
    events = [format_set(mech.frame[i] for i in range(mech.l) if e >> i & 1) for e in range(1, 1 << mech.l)]
    gamble = parse_gamble(args.gamble) if args.gamble else None
    if args.format == "json":
        obj: dict[str, Any] = {"inputs": list(mech.inputs), "frame": list(mech.frame), "events": events,
                               "bel": bel[:, 1:].tolist(), "pl": pl[:, 1:].tolist()}
        if gamble is not None:
            obj["gamble"] = gamble
            obj["lower_expectation"] = [lower_expectation(mech, x, gamble) for x in mech.inputs]
            obj["upper_expectation"] = [upper_expectation(mech, x, gamble) for x in mech.inputs]
        return json.dumps(obj, indent=2)
    headers = ["input", "event", "bel", "pl"]
    rows = [[x, ev, bel[i, e + 1], pl[i, e + 1]] for i, x in enumerate(mech.inputs) for e, ev in enumerate(events)]
    extra: list[list[Any]] = []
    if gamble is not None:
        extra = [[x, lower_expectation(mech, x, gamble), upper_expectation(mech, x, gamble)] for x in mech.inputs]
    if args.format == "csv":
        text = render_csv(headers, [[r[0], r[1], repr(r[2]), repr(r[3])] for r in rows])
        if extra:
            text += "\n\n" + render_csv(["input", "lower_expectation", "upper_expectation"],
                                          [[r[0], repr(r[1]), repr(r[2])] for r in extra])
        return text
    text = render_table(headers, [[r[0], r[1], fmt(r[2]), fmt(r[3])] for r in rows])
    if extra:
        text += f"\n\ngamble {args.gamble}\n" + render_table(
            ["input", "lower expectation", "upper expectation"], [[r[0], fmt(r[1]), fmt(r[2])] for r in extra])
    return text


# ---------------------------------------------------------------------------- survey data
def _read_table(path: str) -> tuple[list[str], list[list[str]]]:
    from ._io import read_text

    text = read_text(path, error=CommandError)
    try:
        rows = [r for r in csv.reader(io.StringIO(text)) if r]
    except csv.Error as exc:
        raise CommandError(f"{path}: not valid CSV: {exc}") from None
    if not rows:
        raise CommandError(f"{path}: the file is empty; expected a header row")
    header = [h.strip() for h in rows[0]]
    for line, r in enumerate(rows[1:], start=2):
        if len(r) != len(header):
            raise CommandError(f"{path}: row {line} has {len(r)} fields, the header has {len(header)}")
    if len(rows) < 2:
        raise CommandError(f"{path}: a header but no rows")
    return header, rows[1:]


def _column(path: str, header: list[str], name: str) -> int:
    if name not in header:
        raise CommandError(f"{path}: no column {name!r}; the columns are {header}")
    return header.index(name)


def cmd_randomize(args: argparse.Namespace) -> str:
    from ._io import atomic_write_text
    from .sampling import as_rng, input_indices, randomize, randomize_precise

    _check_out(args.out, [args.answers, args.mechanism], force=False,
               advice="randomize never replaces a file (choose another name)")
    mech = Mechanism.read(args.mechanism)
    header, rows = _read_table(args.answers)
    col = _column(args.answers, header, args.column)
    keep = [k.strip() for k in (args.keep or "").split(",") if k.strip()]
    keep_idx = [_column(args.answers, header, k) for k in keep]
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
    from .estimation import estimate_sldp, identified_set, response_counts

    mech = Mechanism.read(args.mechanism)
    header, rows = _read_table(args.responses)
    col = _column(args.responses, header, args.column)
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
            return render_csv(["input", "lower", "upper"], [[r[0], repr(r[1]), repr(r[2])] for r in rows_out])
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
        return render_csv(headers, [[r[0], *(repr(v) for v in r[1:])] for r in table])
    return (f"{est.n} set-valued answers; maximum likelihood (EM), {est.level:g} intervals\n"
            + render_table(headers, [[r[0], *(fmt(v) for v in r[1:])] for r in table]))


# ---------------------------------------------------------------------------- parser
def _add_format(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", choices=("table", "json", "csv"), default="table",
                   help="output format (default: table)")
    p.add_argument("--quiet", action="store_true", help="no progress bar (it is shown only on a terminal)")


def _configure_audit(p: argparse.ArgumentParser) -> None:
    p.add_argument("mechanism", help="mechanism CSV or JSON file")
    _add_format(p)


def _configure_design(p: argparse.ArgumentParser) -> None:
    p.add_argument("problem", help="design problem (TOML)")
    p.add_argument("--epsilon", type=float, help="override the budget of the file")
    p.add_argument("--semantics", choices=("sldp", "wldp", "both"), help="override the semantics of the file")
    p.add_argument("--objective", choices=OBJECTIVE_CHOICES, help="override the objective of the file")
    p.add_argument("--out", help="write the designed mechanism (CSV, or JSON for a .json name)")
    p.add_argument("--force", action="store_true", help="let --out replace an existing file")
    _add_format(p)


def _configure_compare(p: argparse.ArgumentParser) -> None:
    p.add_argument("problem", help="design problem (TOML)")
    p.add_argument("--eps", "--epsilon", dest="eps", default="0.1:5:50",
                   help="epsilons: start:stop:count or a list (default 0.1:5:50)")
    p.add_argument("--semantics", choices=("sldp", "wldp", "both"), help="override the semantics of the file")
    p.add_argument("--objective", choices=OBJECTIVE_CHOICES, help="override the objective of the file")
    _add_format(p)


def _configure_tradeoff(p: argparse.ArgumentParser) -> None:
    p.add_argument("mechanism", help="mechanism CSV or JSON file")
    p.add_argument("--null", required=True, help="input of the null hypothesis H0")
    p.add_argument("--alt", required=True, help="input of the alternative H1")
    p.add_argument("--kind", choices=("pessimistic", "optimistic", "shafer_lower", "shafer_upper"),
                   default="pessimistic", help="which curve (default pessimistic, Thm 3.18)")
    p.add_argument("--points", type=int, default=101, help="levels alpha on [0, 1] (default 101)")
    p.add_argument("--fold", type=int, default=1, help="answers per respondent (Cor 3.6/3.19; default 1)")
    p.add_argument("--plot", help="also draw the curve and its bound to this PNG file")
    p.add_argument("--force", action="store_true", help="let --plot replace an existing file")
    _add_format(p)


def _configure_credal(p: argparse.ArgumentParser) -> None:
    p.add_argument("mechanism", help="mechanism CSV or JSON file")
    p.add_argument("--gamble", help="lower/upper expectation of a gamble, e.g. yes=1,no=0")
    _add_format(p)


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
    _add_format(p)


def _configure_estimate(p: argparse.ArgumentParser) -> None:
    p.add_argument("responses", help="CSV of randomized responses")
    p.add_argument("--mechanism", required=True, help="mechanism CSV or JSON file")
    p.add_argument("--column", default="response", help="column of the responses (default response)")
    p.add_argument("--semantics", choices=("sldp", "wldp"), default="sldp",
                   help="sldp: MLE from set answers; wldp: identified set from precise answers")
    p.add_argument("--level", type=float, default=0.95, help="confidence level (default 0.95)")
    _add_format(p)


def _configure_sweep(p: argparse.ArgumentParser) -> None:
    p.add_argument("problem", help="design problem (TOML)")
    p.add_argument("--epsilon", dest="eps_grid", default="0.1:5:50",
                   help="epsilons: start:stop:count or a list (default 0.1:5:50)")
    p.add_argument("--dont-know", dest="dont_know",
                   help="exact don't-know masses in [0, 1): start:stop:count or a list (default: the file's)")
    p.add_argument("--semantics", choices=("sldp", "wldp", "both"), help="override the semantics of the file")
    p.add_argument("--objective", choices=OBJECTIVE_CHOICES, help="override the objective of the file")
    p.add_argument("--jobs", type=int, default=1, help="local worker processes (joblib; -1 = all cores; default 1)")
    p.add_argument("--scheduler", help="address of a running Dask scheduler, e.g. tcp://127.0.0.1:8786")
    p.add_argument("--out", help="write the table as CSV (full precision)")
    p.add_argument("--plot", help="draw the objective against epsilon, one curve per don't-know value (PNG)")
    p.add_argument("--force", action="store_true", help="let --out / --plot replace existing files")
    _add_format(p)


def _configure_simulate(p: argparse.ArgumentParser) -> None:
    from .simulation import ESTIMATORS

    p.add_argument("mechanism", help="mechanism CSV or JSON file")
    p.add_argument("--n", type=int, default=1000, help="respondents per survey (default 1000)")
    p.add_argument("--reps", type=int, default=10000, help="simulated surveys (default 10000)")
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
    _add_format(p)


COMMANDS: list[tuple[str, str, str, Callable[[argparse.ArgumentParser], None], Callable[..., str]]] = [
    ("audit", "privacy losses (Shafer, bel, pl, Walley) of a mechanism file",
     "designer audit examples/mechanisms/q2x3.csv --format json", _configure_audit, cmd_audit),
    ("design", "optimal certified mechanism for a design problem",
     "designer design problems/gwrr-dont-know.toml --epsilon 2 --out gwrr-2.csv", _configure_design, cmd_design),
    ("compare", "designed mechanisms next to the closed forms over a grid of epsilons",
     "designer compare problems/gwrr-dont-know.toml --eps 0.1:5:50", _configure_compare, cmd_compare),
    ("tradeoff", "type I / type II trade-off curve of a test between two inputs, with its bound",
     "designer tradeoff examples/mechanisms/q2x3.csv --null yes --alt no --kind shafer_lower --plot tradeoff.png",
     _configure_tradeoff, cmd_tradeoff),
    ("credal", "bel / pl of every event, and lower / upper expectations of a gamble",
     "designer credal examples/mechanisms/q2x3.csv --gamble yes=1,no=0", _configure_credal, cmd_credal),
    ("randomize", "randomize true survey answers with a mechanism (the true answers are not written)",
     "designer randomize examples/answers.csv --mechanism examples/mechanisms/q2x3.csv --column answer "
     "--out responses.csv --keep id,region --seed 7",
     _configure_randomize, cmd_randomize),
    ("estimate", "estimate the answer distribution from randomized responses",
     "designer estimate responses.csv --mechanism examples/mechanisms/q2x3.csv --format json",
     _configure_estimate, cmd_estimate),
    ("simulate", "Monte Carlo of the estimator: bias and variance next to 1/(n I)",
     "designer simulate examples/mechanisms/q2x3.csv --n 1000 --reps 2000 --prior yes=0.3,no=0.7 --seed 1",
     _configure_simulate, cmd_simulate),
    ("sweep", "a grid of designs over epsilon (and don't-know mass), in parallel, with a plot",
     "designer sweep problems/gwrr-dont-know.toml --epsilon 0.1:5:50 --dont-know 0:0.5:6 --jobs 2 "
     "--out sweep.csv --plot sweep.png", _configure_sweep, cmd_sweep),
]


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    lines = [f"  {name:<9} {summary}\n            e.g. {example}" for name, summary, example, _, _ in COMMANDS]
    parser = argparse.ArgumentParser(
        prog="designer",
        description="Design and audit local-differential-privacy mechanisms with set-valued answers.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="commands:\n" + "\n".join(lines) + "\n\nRun 'designer COMMAND --help' for the options of one command.",
    )
    parser.add_argument("--version", action="version", version=f"designer {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, summary, example, configure, func in COMMANDS:
        p = sub.add_parser(name, help=summary, description=f"{summary}.\n\nexample: {example}",
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        configure(p)
        p.set_defaults(func=func)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status (0 ok, 2 bad input or usage)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    # Commands render the library's DesignWarnings themselves (result.warnings), not as Python warnings.
    warnings.filterwarnings("ignore", category=DesignWarning)
    if not getattr(args, "command", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        text = args.func(args)
    except (DesignerError, CommandError, ValueError, TypeError, OSError) as exc:
        message = " ".join(str(exc).split()) or type(exc).__name__
        inputs = [str(getattr(args, a)) for a in ("mechanism", "problem", "answers", "responses")
                  if getattr(args, a, None)]
        if isinstance(exc, DesignerError) and inputs and not any(p in message for p in inputs):
            message = f"{inputs[0]}: {message}"  # a problem found while working on this input
        print(f"designer: error: {message}", file=sys.stderr)
        return EXIT_USAGE
    except MemoryError:
        print("designer: error: the problem is too large for this machine's memory; reduce the number of "
              "answers, restrict focal_sets, or use a symmetric problem (size classes)", file=sys.stderr)
        return EXIT_USAGE
    except CertificationError as exc:
        print(f"designer: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("designer: interrupted", file=sys.stderr)
        return 130
    if text:
        try:
            sys.stdout.write(text + "\n")
            sys.stdout.flush()
        except BrokenPipeError:
            # The reader went away (e.g. `| head`): not an error of ours.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
    return 0
