"""Commands on mechanism files: audit, tradeoff, credal."""

from __future__ import annotations

import argparse
import math
from typing import Any

from .._internal.render import fmt, json_number, render_csv, render_json, render_table
from .._internal.validation import format_set
from ..mechanism import Mechanism
from ..privacy import LOSSES, privacy_losses
from ._common import CommandError, add_format, check_out, int_arg, parse_gamble, probability_arg, read_mechanism

#: Most levels a trade-off curve is drawn at, and most answers per respondent (the product frame grows
#: as l**fold; composition refuses what would not fit in memory).
MAX_POINTS = 100_001
MAX_FOLD = 12


def cmd_audit(args: argparse.Namespace) -> str:
    from ..release.files import read_mechanism_file, unmet_losses

    mech, release = read_mechanism_file(args.mechanism, check=False)  # a broken release is reported, not refused
    losses = privacy_losses(mech)
    unmet = unmet_losses(mech, release) if release is not None else []
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
        out["release"] = None if release is None else {
            "epsilon": release.epsilon, "semantics": release.semantics.value, "met": not unmet,
            "unmet": [loss.value for loss in unmet]}
        return render_json(out)
    headers = ["loss", "eps", "e^eps", "attained at"]
    rows = [
        [f"eps_{name}", fmt(w.eps), fmt(math.exp(w.eps) if w.eps < 700 else math.inf), w.describe()]
        for name, w in losses.items()
    ]
    if args.format == "csv":
        exact = [[f"eps_{n}", w.eps, math.exp(w.eps) if w.eps < 700 else math.inf, w.describe()]
                 for n, w in losses.items()]
        return render_csv(headers, exact)
    kind = "Bayesian" if mech.is_bayesian else "evidential"
    frame = ",".join(mech.frame) if mech.l <= 12 else ",".join(mech.frame[:10]) + f",... ({mech.l} answers)"
    title = (f"{args.mechanism}: {mech.k} inputs, frame {{{frame}}}, "
             f"{len(mech.focal)} focal sets ({kind})")
    text = title + "\n" + render_table(headers, rows)
    if release is not None:
        verdict = "met" if not unmet else "NOT met: " + ", ".join(
            f"{loss.value.capitalize()} loss {losses[loss.value].eps:.6g} > {release.epsilon:g}" for loss in unmet)
        text += f"\nrelease: the file states {release.describe()}; re-checked exactly: {verdict}"
    return text


def _worst_pair(mech: Mechanism, kind: str, fold: int, alpha: float | None) -> tuple[int, int]:
    """The ordered pair whose test is most powerful: least beta at ``alpha``, else least area under the curve."""
    import numpy as np

    from ..composition import power
    from ..estimation.hypothesis_tests import tradeoff

    m = power(mech, fold) if fold > 1 else mech
    levels = np.array([alpha]) if alpha is not None else np.linspace(0.0, 1.0, 201)
    best, pair = math.inf, (0, 1)
    for x in range(mech.k):
        for x2 in range(mech.k):
            if x != x2:
                beta = tradeoff(m, x, x2, kind, levels)
                score = float(beta[0] if alpha is not None else np.trapezoid(beta, levels))
                if score < best - 1e-12:
                    best, pair = score, (x, x2)
    return pair


def cmd_tradeoff(args: argparse.Namespace) -> str:
    import numpy as np

    from ..estimation.hypothesis_tests import tradeoff_curve
    from ..privacy import eps_shafer, eps_walley

    if args.plot:
        check_out(args.plot, [args.mechanism], args.force)
    mech = read_mechanism(args.mechanism)
    if mech.k < 2:
        raise CommandError(f"{args.mechanism}: a test needs two inputs; the mechanism has {mech.k}")
    if (args.null is None) != (args.alt is None):
        raise CommandError("give both --null and --alt, or neither (then the worst pair is used)")
    worst = args.null is None
    if worst:
        null, alt = _worst_pair(mech, args.kind, args.fold, args.alpha)
    else:
        null, alt = mech.input_index(args.null), mech.input_index(args.alt)
        if null == alt:
            raise CommandError("--null and --alt must be different inputs")
    x, x2 = mech.inputs[null], mech.inputs[alt]
    walley = args.kind in ("pessimistic", "optimistic")
    eps = (eps_walley if walley else eps_shafer)(mech)
    theorem = "Thm 3.18" if walley else "Thm 3.5"
    answers = f"{args.fold} answers per respondent, " if args.fold > 1 else ""
    title = (f"{args.kind} trade-off curve ({theorem}): H0 {x} vs H1 {x2}"
             f"{' (the worst pair: most powerful test)' if worst else ''}; {answers}bound at "
             f"{'eps_walley' if walley else 'eps_shafer'} = {fmt(eps, 6)}"
             + (f" x {args.fold}" if args.fold > 1 else ""))
    alphas = np.array([args.alpha]) if args.alpha is not None else None
    df = tradeoff_curve(mech, null, alt, args.kind, points=args.points, alphas=alphas, fold=args.fold)
    df.insert(2, "power", 1.0 - df["beta"])
    if args.plot:
        from .._internal.plots import plot_tradeoff

        full = df if alphas is None else tradeoff_curve(mech, null, alt, args.kind, points=args.points,
                                                       fold=args.fold)
        plot_tradeoff(full, args.plot, title=title)
    headers = ["alpha", "beta", "power", "bound"]
    rows = df[headers].to_numpy().tolist()
    if args.format == "json":
        return render_json({"kind": args.kind, "null": x, "alt": x2, "worst_pair": worst, "fold": args.fold,
                           "eps_bound": json_number(eps * args.fold), "title": title, "plot": args.plot,
                           **{h: [json_number(r[i]) for r in rows] for i, h in enumerate(headers)}})
    if args.format == "csv":
        return render_csv(headers, rows)
    return (title + "\n" + render_table(headers, [[fmt(v, 6) for v in r] for r in rows])
            + (f"\nplot written to {args.plot}" if args.plot else ""))


def cmd_credal(args: argparse.Namespace) -> str:
    from ..credal import lower_expectation, upper_expectation

    mech = read_mechanism(args.mechanism)
    bel, pl = mech.bel(), mech.pl()
    events = [format_set([mech.frame[i] for i in range(mech.l) if e >> i & 1]) for e in range(1, 1 << mech.l)]
    gamble = parse_gamble(args.gamble) if args.gamble else None
    if args.format == "json":
        obj: dict[str, Any] = {"inputs": list(mech.inputs), "frame": list(mech.frame), "events": events,
                               "bel": bel[:, 1:].tolist(), "pl": pl[:, 1:].tolist()}
        if gamble is not None:
            obj["gamble"] = gamble
            obj["lower_expectation"] = [lower_expectation(mech, x, gamble) for x in mech.inputs]
            obj["upper_expectation"] = [upper_expectation(mech, x, gamble) for x in mech.inputs]
        return render_json(obj)
    headers = ["input", "event", "bel", "pl"]
    rows = [[x, ev, bel[i, e + 1], pl[i, e + 1]] for i, x in enumerate(mech.inputs) for e, ev in enumerate(events)]
    extra: list[list[Any]] = []
    if gamble is not None:
        extra = [[x, lower_expectation(mech, x, gamble), upper_expectation(mech, x, gamble)] for x in mech.inputs]
    if args.format == "csv":  # one table: the gamble's expectations when asked, else bel / pl of every event
        if extra:
            return render_csv(["input", "lower_expectation", "upper_expectation"], extra)
        return render_csv(headers, rows)
    text = render_table(headers, [[r[0], r[1], fmt(r[2]), fmt(r[3])] for r in rows])
    if extra:
        text += f"\n\ngamble {args.gamble}\n" + render_table(
            ["input", "lower expectation", "upper expectation"], [[r[0], fmt(r[1]), fmt(r[2])] for r in extra])
    return text


def _configure_audit(p: argparse.ArgumentParser) -> None:
    p.add_argument("mechanism", help="mechanism CSV or JSON file")
    add_format(p)


def _configure_tradeoff(p: argparse.ArgumentParser) -> None:
    p.add_argument("mechanism", help="mechanism CSV or JSON file")
    p.add_argument("--null", help="input of the null hypothesis H0 (with --alt; default: the worst pair)")
    p.add_argument("--alt", help="input of the alternative H1 (with --null; default: the worst pair)")
    p.add_argument("--alpha", type=probability_arg, help="one level in [0, 1]: print beta and power there")
    p.add_argument("--kind", choices=("pessimistic", "optimistic", "shafer_lower", "shafer_upper"),
                   default="pessimistic", help="which curve (default pessimistic, Thm 3.18)")
    p.add_argument("--points", type=int_arg(2, MAX_POINTS), default=101,
                   help=f"levels alpha on [0, 1], 2 to {MAX_POINTS} (default 101)")
    p.add_argument("--fold", type=int_arg(1, MAX_FOLD), default=1,
                   help=f"answers per respondent, 1 to {MAX_FOLD} (Cor 3.6/3.19; default 1)")
    p.add_argument("--plot", help="also draw the curve and its bound to this PNG file")
    p.add_argument("--force", action="store_true", help="let --plot replace an existing file")
    add_format(p)


def _configure_credal(p: argparse.ArgumentParser) -> None:
    p.add_argument("mechanism", help="mechanism CSV or JSON file")
    p.add_argument("--gamble", help="lower/upper expectation of a gamble, e.g. yes=1,no=0 (with --format csv the "
                                     "output is then the expectations table alone)")
    add_format(p)


