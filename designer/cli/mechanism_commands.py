"""Commands on mechanism files: audit, tradeoff, credal."""

from __future__ import annotations

import argparse

from ..verbs.tradeoff_verb import KINDS, MAX_FOLD, MAX_POINTS
from ._common import CommandError, add_format, check_out, int_arg, probability_arg


def cmd_audit(args: argparse.Namespace) -> str:
    from ..results import render
    from ..verbs.audit_verb import audit

    if args.ledger is not None:  # the history of a budget ledger (docs/guide/release.md)
        if args.mechanism is not None:
            raise CommandError("give a mechanism file or --ledger PATH, not both")
        from ..release.ledger import ledger_history

        return render(ledger_history(args.ledger), args.format)
    if args.mechanism is None:
        raise CommandError("give a mechanism file to audit, or --ledger PATH (a budget ledger's history)")
    return render(audit(args.mechanism), args.format)


def cmd_tradeoff(args: argparse.Namespace) -> str:
    from ..results import render
    from ..verbs.tradeoff_verb import tradeoff

    if args.plot:
        check_out(args.plot, [args.mechanism], args.force)
    return render(tradeoff(args.mechanism, null=args.null, alt=args.alt, alpha=args.alpha, kind=args.kind,
                           points=args.points, fold=args.fold, plot=args.plot, force=args.force), args.format)


def cmd_credal(args: argparse.Namespace) -> str:
    from ..results import render
    from ..verbs.credal_verb import credal

    return render(credal(args.mechanism, gamble=args.gamble), args.format)


def _configure_audit(p: argparse.ArgumentParser) -> None:
    p.add_argument("mechanism", nargs="?", help="mechanism CSV or JSON file")
    p.add_argument("--ledger", metavar="PATH", help="print the history of randomize's budget ledger instead")
    add_format(p)


def _configure_tradeoff(p: argparse.ArgumentParser) -> None:
    p.add_argument("mechanism", help="mechanism CSV or JSON file")
    p.add_argument("--null", help="input of the null hypothesis H0 (with --alt; default: the worst pair)")
    p.add_argument("--alt", help="input of the alternative H1 (with --null; default: the worst pair)")
    p.add_argument("--alpha", type=probability_arg, help="one level in [0, 1]: print beta and power there")
    p.add_argument("--kind", choices=KINDS,
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


