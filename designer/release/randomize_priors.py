"""randomize's invariant designs and the priors they keep: the problem's (or its ``[strata]`` table's), or the
released file's own category counts published with discrete Laplace noise at a stated budget ``--prior-budget``
(docs/theory.md section 7.7). Nothing computed from the file reaches the designs, the stratum files or the
manifest except the noisy counts."""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from .._internal.keywords import shown
from ..exceptions import InvalidArgumentError as CommandError
from .randomize_parts import Stratified

#: Fewest rows a stratum (or, without --strata, the file) may have when its prior is read from the data.
DEFAULT_MIN_STRATUM = 50

#: Most strata of a stratified release (each is a design of its own; more are refused at the first chunk).
MAX_STRATA = 1000

#: The model the noisy prior's guarantee is stated in, for the manifest.
PRIOR_MODEL = ("the curator publishes each invariant column's category counts with two-sided geometric (discrete "
               "Laplace) noise of scale 2/eps0_column and every respondent's randomized answers, designed from those "
               "noisy counts; neighbouring files differ in one respondent's values, which moves two counts of each "
               "column by one; the stratum column (with --strata) is published as it is. A respondent's loss is the "
               "prior budget plus the loss of the designs that randomize their values")


def exact_budget_arg(text: str) -> Fraction:
    """argparse ``type=`` of ``--prior-budget`` and randomize's ``--budget``: a budget in nats, finite and > 0, kept as
    the rational written (``0.1`` is 1/10, ``7/3`` is 7/3), so that budgets compare exactly; its size is checked
    before the rational is built (``1e99999999`` is refused at once,
    :func:`designer.guarantees.noise.stated_budget`)."""
    from ..exceptions import InvalidArgumentError
    from ..guarantees.noise import stated_budget

    try:
        return stated_budget(text)
    except InvalidArgumentError as exc:
        raise argparse.ArgumentTypeError(f"{str(exc).removeprefix('a budget ')}") from None
    except (ValueError, ZeroDivisionError):
        if not _number_like(text):
            raise argparse.ArgumentTypeError(f"{text!r} is not a number (e.g. 0.5 or 1/2)") from None
        raise argparse.ArgumentTypeError(f"must be a budget > 0 in nats, got {text!r}") from None


def _number_like(text: str) -> bool:
    num, sep, den = text.strip().partition("/")
    try:
        float(num)
        if sep:
            float(den)
    except ValueError:
        return False
    return True


@dataclass
class PriorRelease:
    """What ``--invariant-prior data`` publishes: per column (and stratum, ``""`` without --strata) the noisy counts
    and the prior made from them, and the budget they cost.

    Attributes
    ----------
    epsilon : Fraction
        ``--prior-budget``: the whole budget, split evenly over the columns whose prior comes from the file.
    per_column : Fraction
        Each column's share of it (the noise's scale is ``2 / per_column``).
    noisy : dict
        ``(column, stratum) -> noisy counts`` in the order of the problem's inputs.
    source : str
        Where the noise's random integers come from.
    """

    epsilon: Fraction
    per_column: Fraction
    source: str
    noisy: dict[tuple[str, str], list[int]] = field(default_factory=dict)
    columns: tuple[str, ...] = ()

    def mean_noise(self) -> float:
        """The mean size of the noise on each count (``1 / sinh(per_column / 2)``)."""
        from ..guarantees.noise import mean_noise

        return mean_noise(self.per_column)

    def note(self) -> str:
        """What the release says about its published prior (the CLI prints it on stderr)."""
        return (f"the prior of {', '.join(repr(c) for c in self.columns)} is published from the file's counts with "
                f"discrete Laplace noise (--prior-budget {float(self.epsilon):g} nats, included in the composed "
                f"loss; noise of mean size {self.mean_noise():.3g} per count)")

    def prior(self, column: str, stratum: str = "") -> list[Fraction]:
        from ..guarantees.noise import noisy_prior

        return noisy_prior(self.noisy[(column, stratum)])

    def record(self) -> dict[str, Any]:
        """The manifest's ``prior_release``."""
        return {"epsilon": float(self.epsilon), "epsilon_exact": str(self.epsilon),
                "epsilon_per_column": float(self.per_column),
                "mechanism": "two-sided geometric (discrete Laplace) noise on each category count, P(z) "
                             "proportional to exp(-|z| eps0_column / 2), drawn exactly with integer arithmetic",
                "post_processing": "each noisy count floored at 1, then normalised: the prior every design keeps",
                "random_source": self.source, "model": PRIOR_MODEL}


def _invariant_problems(variables: list[tuple[str, str]], what: str) -> dict[str, Any]:
    from .._internal.bundled import resolve
    from ..optimal.problem import DesignProblem
    from ..optimal.problem_toml import load_problem

    variables = [(c, str(resolve(p, ("mechanism", "problem"))) if isinstance(p, str) else p)  # or designer's own
                 for c, p in variables]
    problems = {column: load_problem(path) if isinstance(path, str) else path for column, path in variables
                if (isinstance(path, str) and path.endswith(".toml")) or isinstance(path, DesignProblem)}
    wanted = {column: problem for column, problem in problems.items() if problem.invariant}
    if not wanted:
        raise CommandError(f"{what}: no variable is a TOML problem with invariant = true "
                           f"({', '.join(map(str, (p for _, p in variables)))}; a design file keeps the prior it "
                           "was designed for)")
    return wanted


def _tally(inp: Any, strata: str | None, wanted: dict[str, Any], count: bool
           ) -> tuple[dict[str, int], dict[tuple[str, str], Any]]:
    """One pass over the input ``inp`` (a :class:`~designer.release.rows.ReleaseInput`): each stratum's first line
    (``{"": 2}`` without ``strata``) and, with ``count``, each invariant column's category counts per stratum (an
    unknown category is refused naming its line). More than :data:`MAX_STRATA` strata are refused as soon as they
    are seen."""
    import pandas as pd

    from .randomize_parts import input_codes as _codes

    first: dict[str, int] = {}
    counts: dict[tuple[str, str], Any] = {}
    for chunk in inp.chunks():
        line = chunk.line
        if strata:
            groups = np.asarray(chunk.text[strata], dtype=object)
            if np.any(groups == ""):
                row = int(np.flatnonzero(groups == "")[0])
                raise CommandError(f"{inp.name}: line {line + row}: no stratum in column {strata!r}; every row needs "
                                   "one (its design is chosen by it)")
            local, names = pd.factorize(groups)
            for value, i in sorted(zip(names.tolist(), _first_rows(local, len(names))), key=lambda pair: pair[1]):
                first.setdefault(value, line + i)
                if len(first) > MAX_STRATA:
                    raise CommandError(f"{inp.name}: column {strata!r} has more than {MAX_STRATA} strata (the "
                                       f"{MAX_STRATA + 1}th, {value!r}, at line {line + i}): --strata designs one "
                                       "mechanism per stratum; stratify by a coarser column")
        else:
            local, names = np.zeros(chunk.rows, dtype=np.int64), [""]
            first.setdefault("", line)
        for column, problem in (wanted.items() if count else ()):
            codes = _codes(chunk.text[column], problem.inputs, inp.name, line,
                           f"an input of the problem (column {column!r})")
            tally = np.zeros((len(names), problem.k), dtype=np.int64)
            np.add.at(tally, (local, codes), 1)
            for g, value in enumerate(list(names)):
                total = counts.setdefault((column, value), np.zeros(problem.k, dtype=np.int64))
                total += tally[g]
    return first, counts


def _first_rows(local: Any, n: int) -> list[int]:
    """The first row of each of ``n`` groups numbered ``local``."""
    where = np.full(n, len(local), dtype=np.int64)
    np.minimum.at(where, local, np.arange(len(local), dtype=np.int64))
    return where.tolist()


def noisy_priors(args: Any, wanted: dict[str, Any], inp: Any) -> tuple[dict[str, int], PriorRelease]:
    """The strata (first lines) and the :class:`PriorRelease` of ``--invariant-prior data``: every stratum of at
    least ``--min-stratum`` rows, its counts noised at ``--prior-budget`` split over the ``wanted`` columns, refused
    when the noise's mean size exceeds a stratum's mean count (its rows over the categories: both public, the
    stratum column being released as it is)."""
    from ..guarantees.noise import noisy_counts, os_source, seeded_source

    first, counts = _tally(inp, args.strata, wanted, count=True)
    if not first:
        raise CommandError(f"{inp.name}: no rows to randomize")
    share = args.prior_budget / len(wanted)
    for (column, stratum), tally in counts.items():
        rows = int(tally.sum())
        where = f"stratum {stratum!r} (column {args.strata!r}, from line {first[stratum]})" if args.strata else \
            "the file"
        if rows < args.min_stratum:
            raise CommandError(f"{inp.name}: {where} has {rows} rows, fewer than --min-stratum "
                               f"{args.min_stratum}: a prior read from so few rows says too much about each of them "
                               "and too little about the population; merge strata, give the priors in the problem's "
                               "[strata] table, or lower --min-stratum")
        k = len(tally)
        needed = Fraction(2 * math.asinh(k / rows)) * len(wanted)  # mean noise 1/sinh(share/2) <= rows/k
        if share / 2 < Fraction(math.asinh(k / rows)):
            from ..guarantees.noise import mean_noise

            raise CommandError(f"{shown('prior_budget', f'{float(args.prior_budget):g}')}: the noise on each count "
                               f"of column {column!r} would have mean size {mean_noise(share):.3g}, more than the mean "
                               f"count {rows / k:.3g} of {where} ({rows} rows, {k} categories): the published prior "
                               f"would be mostly noise; give {shown('prior_budget')} at least {_up(needed)} or use the "
                               f"problem's prior ({shown('invariant_prior', 'problem')})")
    if args.seed is not None:
        draw, name = seeded_source(args.seed), "seeded simulation (Python's Mersenne twister; never a release)"
    else:
        draw, name = os_source(), "secrets.randbelow (the operating system's CSPRNG)"
    release = PriorRelease(args.prior_budget, share, name, columns=tuple(wanted))
    for key, tally in counts.items():
        release.noisy[key] = noisy_counts([int(c) for c in tally], share, draw)
    return first, release


def _up(value: Fraction) -> str:
    """``value`` rounded up to three significant digits, as text."""
    x = float(value)
    digits = 2 - math.floor(math.log10(x)) if x > 0 else 0
    return f"{math.ceil(x * 10**digits) / 10**digits:.3g}"


def data_priors(args: Any, variables: list[tuple[str, str]], inp: Any
                ) -> tuple[dict[str, list[Fraction]], PriorRelease]:
    """``--invariant-prior data`` without strata: each invariant column's prior from the file's noisy counts."""
    wanted = _invariant_problems(variables, "--invariant-prior data")
    _, release = noisy_priors(args, wanted, inp)
    return {column: release.prior(column) for column in wanted}, release


def stratified(args: Any, variables: list[tuple[str, str]], inp: Any
               ) -> tuple[dict[str, Stratified], PriorRelease | None]:
    """``--strata COLUMN``: every invariant variable designed once per stratum, each stratum's prior from the
    problem's ``[strata]`` table or, with ``--invariant-prior data``, from that stratum's noisy counts."""
    from ..optimal.invariant import design_strata
    from .randomize_parts import categories_table

    wanted = _invariant_problems(variables, f"--strata {args.strata}")
    if args.strata in [c for c, _ in variables]:
        raise CommandError(f"--strata names {args.strata!r}, a column being randomized; name the stratum column")
    release = None
    if args.invariant_prior == "data":
        first, release = noisy_priors(args, wanted, inp)
    else:
        first, _ = _tally(inp, args.strata, wanted, count=False)
    out = {}
    for column, problem in wanted.items():
        path = dict(variables)[column]
        if release is not None:
            priors: dict[str, Any] = {s: release.prior(column, s) for s in first}
            basis = f"the problem's budget ({path}), each stratum's prior from the file's noisy counts"
        else:
            known = dict(problem.strata)
            if not known:
                raise CommandError(f"{path} has no [strata] table: give each stratum's prior there (e.g. "
                                   f"{next(iter(first))} = [...]), or use --invariant-prior data --prior-budget EPS0")
            missing = [s for s in first if s not in known]
            if missing:
                raise CommandError(f"{args.answers}: column {args.strata!r} holds {missing[0]!r} (from line "
                                   f"{first[missing[0]]}), which {path} has no prior for; add it to its [strata] "
                                   "table, or use --invariant-prior data --prior-budget EPS0")
            priors = {s: known[s] for s in first}
            basis = f"the problem's budget ({path}), each stratum's prior from its [strata] table"
        designs = {}
        for stratum, result in design_strata(problem, priors).items():
            exact = (result.exact_table.counts, result.exact_table.denominators)
            designs[stratum] = (categories_table(result.mechanism, problem.epsilon, exact), result.mechanism, basis,
                                result.exact_table.prior, result)
        out[column] = Stratified(designs)
    return out, release


def invariance_record(args: Any, column: str, stratum: str, prior: Sequence[Fraction] | None,
                      mech: Any, release: PriorRelease | None) -> dict[str, Any]:
    """The manifest's record of an invariant design: the prior kept, exactly, and where it came from (for a prior
    read from the file: the noisy counts it was made from, never the file's own counts)."""
    if prior is None:
        return {}
    record: dict[str, Any] = {
        "invariant_prior": {x: f"{p.numerator}/{p.denominator}" for x, p in zip(mech.inputs, prior)},
        "invariant_prior_from": "the problem's [strata] table" if args.strata else "the problem"}
    if release is not None and (column, stratum) in release.noisy:
        record.update(invariant_prior_from="the released file's counts with discrete Laplace noise (prior_release)",
                      noisy_counts=dict(zip(mech.inputs, release.noisy[(column, stratum)])))
    return record
