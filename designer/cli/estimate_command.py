"""The estimate command: shares from randomized answers, with several designs, non-compliance, weights and
clusters (docs/theory.md section 8). It parses the flags, calls :func:`designer.verbs.estimate_verb.estimate` and
prints its result."""

from __future__ import annotations

import argparse

from ._common import (
    EXIT_FIT,
    CommandError,
    add_format,
    add_group_arguments,
    add_survey_arguments,
    level_arg,
    mechanism_files,
    with_status,
)


def cmd_estimate(args: argparse.Namespace) -> str:
    from ..results import FitStatus, render
    from ..verbs.estimate_verb import estimate

    if args.manifest:  # the channel the release was drawn from (docs/theory.md section 7.6)
        from .manifest_input import manifest_mechanism

        args.mechanism = [manifest_mechanism(args.manifest, args.column, args.mechanism, args.responses)]
    if not args.mechanism:
        raise CommandError("give --mechanism FILE (the design the answers were drawn with) or --manifest "
                           "FILE (randomize's release manifest)")
    files = mechanism_files(args.mechanism)
    if len(args.mechanism) == 1 and "=" not in args.mechanism[0]:
        args.mechanism = args.mechanism[0]  # one design: an error about it names its file
    result = estimate(args.responses, args.mechanism if isinstance(args.mechanism, str) else files,
                      column=args.column, semantics=args.semantics, level=args.level, missing=args.missing,
                      test=args.test, method=args.method, weights=args.weights, weight_kind=args.weight_kind,
                      cluster=args.cluster, cov=args.cov, group=args.group, noncompliance=args.noncompliance,
                      unrelated=args.unrelated, share_groups=args.share_groups, scheduler=args.scheduler)
    failed = result.status in (FitStatus.SEPARATION, FitStatus.NOT_CONVERGED)  # docs/reference/conventions.md
    return with_status(render(result, args.format), EXIT_FIT if failed else 0)


def _configure_estimate(p: argparse.ArgumentParser) -> None:
    p.add_argument("responses", help="CSV of randomized responses: {yes}, {yes,no}, a bare label (yes), the card's "
                                     "words (I don't know) or the mechanism JSON's 'answers' words")
    p.add_argument("--mechanism", action="append",
                   help="mechanism CSV or JSON file; several designs in one survey: NAME=FILE, repeated, with --group")
    p.add_argument("--manifest", metavar="FILE",
                   help="randomize's release manifest instead of --mechanism: the analysed column's design, or the "
                        "drawn channel of a repaired release (docs/theory.md section 7.6)")
    p.add_argument("--column", default="response", help="column of the responses (default response)")
    add_group_arguments(p)
    p.add_argument("--semantics", choices=("sldp", "wldp"), default="sldp",
                   help="sldp: MLE from set answers; wldp: identified set from precise answers")
    p.add_argument("--level", type=level_arg, default=0.95, help="confidence level in (0, 1) (default 0.95)")
    p.add_argument("--missing", choices=("error", "drop"), default="error",
                   help="a row without an answer (empty, NA): error (default, naming the line) or drop (counted)")
    add_survey_arguments(p)
    p.add_argument("--method", choices=("newton", "em", "convex", "posterior"), default="newton",
                   help="how the likelihood is maximised with one mechanism: newton (default; active-set Newton "
                        "steps), em (EM iterations) or convex (the concave program); posterior: the posterior "
                        "mean under the uniform Dirichlet prior with credible intervals (small samples)")
    p.add_argument("--test", metavar="SHARE=VALUE",
                   help="test a share against a null value: the Wald test and the likelihood-ratio test (better "
                        "with few respondents), e.g. --test yes=0.3")
    p.add_argument("--scheduler", help="with a folder of Parquet parts: count them on the Dask cluster at this "
                                       "address (e.g. tcp://127.0.0.1:8786); without it the parts are counted here")
    add_format(p)
