"""Commands on survey data: synthesize, simulate (estimate and randomize have modules of their own), and their
results (rendered by :func:`designer.results.render`, as every command's)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._internal.keywords import read_allocation, read_named_prior, read_prior
from .._internal.render import fmt, json_value, render_table
from ..results import FitStatus, Result, TableData, render
from ._common import (
    CommandError,
    add_format,
    check_out,
    int_arg,
    read_mechanism,
    seed_arg,
    show_progress,
)


@dataclass(frozen=True)
class SimulationSummary(Result):
    """``designer simulate``'s result: per input, the mean, bias and variance of ``reps`` simulated estimates beside
    the closed form ``1/(n I)`` (the asymptotic MLE variance, Thm 3.9) and their ratio.

    Attributes
    ----------
    n, reps, used_surveys : int
        Respondents per survey, surveys drawn, surveys with an estimate (the others had no usable answer).
    estimator, semantics : str
        As given (``mle``, ``inversion``, ``eq2``; ``sldp``, ``wldp``).
    prior : dict of str to float
        The true shares the answers were drawn from.
    columns : tuple of str
        ``input, true, mean, bias, variance`` and, with a reference, ``closed_form, ratio``.
    rows : tuple of tuple
        One row per input.
    out : str or None
        Where every survey's estimate was written (``--out``).
    """

    n: int
    reps: int
    used_surveys: int
    estimator: str
    semantics: str
    prior: dict[str, float]
    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    out: str | None = None
    status: FitStatus = FitStatus.EXACT
    warnings: tuple[str, ...] = ()

    title = "Simulation"

    def __post_init__(self) -> None:
        self._check_status()

    def to_dict(self) -> dict[str, Any]:
        return {"n": self.n, "reps": self.reps, "used_surveys": self.used_surveys, "estimator": self.estimator,
                "semantics": self.semantics, "prior": dict(self.prior),
                "rows": [{h: json_value(v) for h, v in zip(self.columns, r)} for r in self.rows]}

    def table(self) -> TableData:
        return list(self.columns), [list(r) for r in self.rows]

    def summary(self) -> str:
        head = (f"{self.reps} simulated surveys of {self.n} respondents ({self.semantics}, estimator {self.estimator}"
                f"; {self.used_surveys} usable); closed_form = asymptotic MLE variance 1/(n I)")
        text = head + "\n" + render_table(list(self.columns),
                                          [[fmt(v) if isinstance(v, float) else v for v in r] for r in self.rows])
        return text + (f"\nestimates written to {self.out}" if self.out else "")


def cmd_simulate(args: argparse.Namespace) -> str:
    from .._internal.io import atomic_write_text
    from ..estimation.sampling import precise_distributions
    from ..estimation.simulation import simulate, summarize
    from ..mechanism import Mechanism

    if args.out:
        check_out(args.out, [args.mechanism], args.force)
    if args.n < 1 or args.reps < 2:
        raise CommandError(f"--n must be >= 1 and --reps >= 2, got n = {args.n}, reps = {args.reps}")
    if args.n * args.reps > 10**12:
        raise CommandError(f"--n x --reps = {args.n * args.reps:.3g} draws is beyond what fits in reasonable "
                           "time; reduce --reps (the variance needs about 10**4 surveys)")
    mech = read_mechanism(args.mechanism)
    prior = read_prior(args.prior, mech.inputs, "--prior")
    allocation = read_allocation(args.allocation, "--allocation")
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
    result = SimulationSummary(
        n=args.n, reps=args.reps, used_surveys=int(table.attrs["used_surveys"]), estimator=args.estimator,
        semantics=args.semantics, prior=dict(zip(mech.inputs, prior)), columns=tuple(table.columns),
        rows=tuple(tuple(r) for r in table.to_numpy().tolist()), out=args.out)
    return render(result, args.format)


#: Respondents written per chunk by ``synthesize``.
SYNTH_CHUNK = 1_000_000


def cmd_synthesize(args: argparse.Namespace) -> str:
    from .._internal.io import atomic_writer
    from ..estimation.covariates import draw_answers, draw_covariates, parse_covariate, parse_effect
    from ..estimation.sampling import as_rng, synthetic_answers
    from ..tables.writers import table_sink

    if args.source:  # a file that exists, else designer's own problem or mechanism of that name
        from .._internal.bundled import resolve

        args.source = resolve(args.source, ("problem", "mechanism"))
    check_out(args.out, [args.source] if args.source else [], args.force)
    if args.source:
        if args.source.lower().endswith(".toml"):
            from ..optimal.problem_toml import load_problem

            problem = load_problem(args.source)
            labels, prior = list(problem.inputs), [float(v) for v in problem.prior]
        else:
            labels, prior = list(read_mechanism(args.source).inputs), None
        if args.prior is not None or prior is None:
            prior = read_prior(args.prior, labels, "--prior")
    else:
        if not args.prior or "=" not in args.prior:
            raise CommandError("--prior: without a problem or mechanism file, name the answers: "
                               "--prior yes=0.3,no=0.7")
        labels, prior = read_named_prior(args.prior, "--prior")
    covariates = [parse_covariate(c) for c in args.covariate or []]
    effects = [parse_effect(e) for e in args.effect or []]
    names = [c.name for c in covariates]
    if len(set(names)) != len(names) or args.column in names or "id" in names:
        raise CommandError(f"--covariate: names must differ from each other, from 'id' and from the answer column "
                           f"{args.column!r}; got {names}")
    if effects and not covariates and any(t != "Intercept" for _, t, _ in effects):
        raise CommandError("--effect names a covariate: add --covariate NAME=DISTRIBUTION")
    rng = as_rng(args.seed)
    with atomic_writer(args.out, overwrite=args.force) as binary:
        sink = table_sink(args.out, binary, ["id", *names, args.column], typed=True)
        for start in range(0, args.n, SYNTH_CHUNK):
            size = min(SYNTH_CHUNK, args.n - start)
            values = draw_covariates(covariates, size, rng)
            if effects:
                answers = draw_answers(labels, prior, covariates, effects, values, rng, size)
            else:
                answers = synthetic_answers(labels, prior, size, rng)
            sink.write([np.arange(start + 1, start + size + 1), *(np.asarray(values[c]) for c in names),
                        np.asarray(answers, dtype=object)])
        sink.close()
    result = SynthesisReport(n=args.n, out=args.out, column=args.column, prior=dict(zip(labels, prior)),
                             seed=args.seed, names=tuple(names), covariates=tuple(args.covariate or ()),
                             effects=tuple(effects), effect_texts=tuple(args.effect or ()))
    return render(result, args.format)


@dataclass(frozen=True)
class SynthesisReport(Result):
    """``designer synthesize``'s result: what was written where (the rows themselves are in the file).

    Attributes
    ----------
    n : int
        Respondents written.
    out, column : str
        The file and the name of its answer column.
    prior : dict of str to float
        The true shares drawn from.
    seed : int or None
        The seed of the draw.
    names, covariates : tuple of str
        The covariate columns, and their ``NAME=DISTRIBUTION`` as given.
    effects : tuple of (str, str, float)
        ``(input, term, log-odds)`` of the multinomial logit the answers follow; ``effect_texts`` as given.
    """

    n: int
    out: str
    column: str
    prior: dict[str, float]
    seed: int | None
    names: tuple[str, ...] = ()
    covariates: tuple[str, ...] = ()
    effects: tuple[tuple[str, str, float], ...] = ()
    effect_texts: tuple[str, ...] = ()
    status: FitStatus = FitStatus.EXACT
    warnings: tuple[str, ...] = ()

    title = "Synthetic answers"

    def __post_init__(self) -> None:
        self._check_status()

    def to_dict(self) -> dict[str, Any]:
        return {"n": self.n, "out": self.out, "column": self.column, "prior": dict(self.prior), "seed": self.seed,
                "covariates": list(self.covariates),
                "effects": [{"input": x, "term": t, "value": v} for x, t, v in self.effects]}

    def table(self) -> TableData:
        return ["label", "prior"], [[x, v] for x, v in self.prior.items()]

    def summary(self) -> str:
        labels = list(self.prior)
        model = (f"; true answers from the multinomial logit with effects {', '.join(self.effect_texts)} (log-odds "
                 f"against {labels[-1]!r}; intercepts log(prior_x / prior_{labels[-1]}) unless given)"
                 if self.effects else "")
        return (f"{self.n} synthetic respondents written to {self.out} (columns id, "
                f"{', '.join([*self.names, self.column])}), prior "
                f"{', '.join(f'{x}={fmt(v, 4)}' for x, v in self.prior.items())}{model}")


def _configure_synthesize(p: argparse.ArgumentParser) -> None:
    p.add_argument("source", nargs="?", help="problem (TOML, its inputs and prior) or mechanism file (its inputs)")
    p.add_argument("--n", type=int_arg(1, 10**9), required=True, help="number of respondents")
    p.add_argument("--prior", help="true shares: yes=0.3,no=0.7 (or 0.3,0.7 in the file's input order); "
                                   "default: the problem's prior, or uniform for a mechanism")
    p.add_argument("--out", required=True, help="new CSV (or .parquet) file of true answers (columns id, the "
                                               "covariates and --column)")
    p.add_argument("--column", default="answer", help="name of the answer column (default answer)")
    p.add_argument("--covariate", action="append", metavar="NAME=DIST",
                   help="a covariate column (repeatable): age=normal(45,12), age=integer(18,80), income=uniform(0,10), "
                        "smoker=bernoulli(0.3), region=category(n:0.6,s:0.4)")
    p.add_argument("--effect", action="append", metavar="INPUT:TERM=VALUE",
                   help="log-odds of INPUT against the last input per unit of TERM (repeatable): yes:age=0.03, "
                        "yes:region[s]=0.5, yes:Intercept=-1; the model designer regress fits")
    p.add_argument("--seed", type=seed_arg, help="seed for a reproducible draw")
    p.add_argument("--force", action="store_true", help="let --out replace an existing file")
    add_format(p)


def _configure_simulate(p: argparse.ArgumentParser) -> None:
    from ..vocabulary import ESTIMATORS

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
    p.add_argument("--seed", type=seed_arg, help="seed for a reproducible run")
    p.add_argument("--out", help="also write every survey's estimate (CSV)")
    p.add_argument("--force", action="store_true", help="let --out replace an existing file")
    add_format(p)


