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
from collections.abc import Callable, Sequence
from typing import Any

from .exceptions import DesignerError
from .mechanism import Mechanism
from .privacy import LOSSES, privacy_losses

__all__ = ["main"]

EXIT_USAGE = 2


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
        return render_csv(headers, rows)
    kind = "Bayesian" if mech.is_bayesian else "evidential"
    title = (f"{args.mechanism}: {mech.k} inputs, frame {{{','.join(mech.frame)}}}, "
             f"{len(mech.focal)} focal sets ({kind})")
    return title + "\n" + render_table(headers, rows)


# ---------------------------------------------------------------------------- parser
def _add_format(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", choices=("table", "json", "csv"), default="table",
                   help="output format (default: table)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="designer",
        description="Design and audit local-differential-privacy mechanisms with set-valued answers.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Run 'designer COMMAND --help' for the options of one command.",
    )
    from . import __version__

    parser.add_argument("--version", action="version", version=f"designer {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands: list[tuple[str, str, str, Callable[[argparse.ArgumentParser], None], Callable[..., str]]] = [
        ("audit", "privacy losses (Shafer, bel, pl, Walley) of a mechanism file",
         "designer audit examples/mechanisms/q2x3.csv --format json",
         lambda p: (p.add_argument("mechanism", help="mechanism CSV or JSON file"), _add_format(p)),
         cmd_audit),
    ]
    for name, summary, example, configure, func in commands:
        p = sub.add_parser(name, help=f"{summary}  (e.g. {example})", description=f"{summary}.\n\nexample: {example}",
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        configure(p)
        p.set_defaults(func=func)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status (0 ok, 2 bad input or usage)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        text = args.func(args)
    except (DesignerError, CommandError, ValueError, TypeError, OSError) as exc:
        message = " ".join(str(exc).split()) or type(exc).__name__
        print(f"designer: error: {message}", file=sys.stderr)
        return EXIT_USAGE
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
