"""The request of a ``designer plan`` from its flags, for one source and for several mechanisms alike."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from ..vocabulary import Alternative, NullVariance, Semantics
from ._common import parse_grid, parse_values

#: Defaults of the flags whose use is checked against the mode (``None`` in argparse, so a flag given
#: explicitly can be told from one left out).
DEFAULTS = {"level": 0.95, "power": 0.8, "alpha": 0.05, "groups": 1, "alternative": "two-sided",
            "null_variance": "pooled", "null_difference": 0.0}


def fill_defaults(args: argparse.Namespace) -> None:
    """Every flag of :data:`DEFAULTS` left out takes its default (after the checks that tell them apart)."""
    for flag, value in DEFAULTS.items():
        if getattr(args, flag) is None:
            setattr(args, flag, value)


def curve_ns(text: str) -> list[int]:
    """Respondent numbers of ``--curve``: start:stop:count or a list, whole numbers >= 1, sorted, each once."""
    values = parse_values(text, "--curve", low=1.0, high=1e12, low_open=False, high_open=False)
    return sorted({round(v) for v in values})


def plan_request(args: argparse.Namespace, prior: Sequence[float] | None) -> Any:
    """The :class:`~designer.planning.plan.PlanRequest` the flags ask for, planned at ``prior`` (None: the
    source's own)."""
    from ..planning.plan import PlanRequest

    return PlanRequest(width=args.width, level=args.level, n=args.n, detect=args.detect, power=args.power,
                       alpha=args.alpha, groups=args.groups, share=args.share, null=args.null,
                       alternative=Alternative.parse(args.alternative, "--alternative"),
                       null_variance=NullVariance.parse(args.null_variance, "--null-variance"),
                       null_difference=args.null_difference,
                       prior=None if prior is None else tuple(prior),
                       semantics=Semantics.parse(args.semantics or "sldp"),
                       grid=None if args.grid is None else tuple(parse_grid(args.grid, "--grid")),
                       check=args.check, seed=args.seed,
                       curve=None if args.curve is None else tuple(curve_ns(args.curve)),
                       curve_detect=tuple(parse_values(args.curve_detect, "--curve-detect", low=0.0, high=1.0,
                                                       low_open=True, high_open=True)) if args.curve_detect else ())
