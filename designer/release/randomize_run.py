"""randomize's work: true answers in, randomized answers out, drawn exactly from certified integer tables (the
operating system's cryptographic generator, or a seeded simulation), one or several variables, with a release
manifest (docs/theory.md section 7.5). :func:`run` takes a :class:`RandomizeRequest` (the command's flags) and
returns a :class:`Randomized` result; :func:`designer.verbs.randomize_verb.randomize` is its front door."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from .._internal.keywords import check_output, read_allocation, say, shown
from ..exceptions import InvalidArgumentError as CommandError
from ..results import FitStatus, Result, TableData
from .randomize_manifest import Release, write_release
from .randomize_parts import Drawn, Stratified, categories_table, epsilon_of, folder_out
from .randomize_priors import DEFAULT_MIN_STRATUM
from .sources import design_of, source_name

__all__ = ["Randomized"]

SEED_WARNING = ("--seed makes this draw reproducible: anyone who knows the seed can undo it and recover the true "
                "answers; never release it")
KEEP_ORDER_WARNING = ("{keep_order=True} writes the rows in the input's order: the order of a file is a function of "
                      "its data, and a file sorted or grouped by a randomized column gives its true values away "
                      "(docs/theory.md section 7.8); release without it unless the order is known to be random")


@dataclass(frozen=True)
class RandomizeRequest:
    """The ``designer randomize`` flags, by their names (``--prior-budget`` is ``prior_budget``), same defaults.

    ``answers`` is the file of true answers; ``variable`` the ``(column, design)`` pairs (a design is a mechanism
    file, a TOML problem or an in-memory design, :func:`designer.release.sources.design_of`), or ``mechanism`` with
    ``column`` for one."""

    answers: str
    out: str
    mechanism: Any = None
    column: str | None = None
    variable: tuple[tuple[str, Any], ...] = ()
    keep: str | None = None
    invariant_prior: str = "problem"
    prior_budget: Fraction | None = None
    min_stratum: int = DEFAULT_MIN_STRATUM
    repair: bool = False
    strata: str | None = None
    designs: str | None = None
    budget: Fraction | None = None
    manifest: str | None = None
    seed: int | None = None
    simulation: bool = False
    scheduler: str | None = None
    semantics: str = "sldp"
    allocation: str = "uniform"
    keep_order: bool = False
    ledger: str | None = None
    budget_cap: Fraction | None = None


def check_folder(path: str) -> None:
    """Refuse an output whose folder does not exist or is not writable (whether it exists is checked later, holding
    the output's lock)."""
    check_output(path, (), True)


def _variables(args: RandomizeRequest) -> list[tuple[str, Any]]:
    """``(column, mechanism file)`` of every variable to randomize."""
    if args.variable:
        if args.mechanism is not None or args.column:
            raise CommandError("give either --variable COLUMN=MECHANISM (repeatable) or --mechanism with --column, "
                               "not both")
        out: list[tuple[str, Any]] = []
        for item in args.variable:
            if isinstance(item, tuple):
                column, sep, path = item[0], "=", item[1]
            else:
                column, sep, path = str(item).partition("=")
            if isinstance(path, str):
                path = path.strip()
            if not sep or not column.strip() or (isinstance(path, str) and not path):
                raise CommandError(f"--variable {item!r} must read COLUMN=MECHANISM (a mechanism file or a problem)")
            if column.strip() in [c for c, _ in out]:
                raise CommandError(f"--variable: column {column.strip()!r} is given twice")
            out.append((column.strip(), path))
        return out
    if args.mechanism is None or not args.column:
        raise CommandError("give --mechanism and --column (one variable) or --variable COLUMN=MECHANISM")
    return [(args.column, args.mechanism)]


#: A drawn table whose masses differ from the design's by at most this is the design: the rounding to counts over
#: 2^53 and the smallest certifying mixes (2^-48 of a shared row, doubled a few times) move a mass by about 1e-14;
#: a larger change is refused, or released with --repair (docs/theory.md section 7.6).
DRAWN_TOLERANCE = 1e-9


def _table(path: Any, semantics: str, allocation: str, data_prior: Any = None, *, repair: bool = False) -> Drawn:
    """The certified exact table of one variable's design. A table that draws from anything but the design (a
    WLDP allocation beyond the budget, a rounding that needed a mix) is refused unless ``repair``: what is
    released is what the analyst estimates with."""
    from ..estimation.sampling import precise_distributions
    from ..exceptions import CertificationError, InvalidArgumentError
    from ..guarantees.exact_table import exact_table
    from ..mechanism import Mechanism
    from ..privacy import worst_case

    found = design_of(path, data_prior)
    path = source_name(path)
    mech, epsilon, basis, exact, prior, detail = found[:6]
    if exact is not None:
        return Drawn(categories_table(mech, epsilon, exact), mech, basis, prior, detail)
    member = None
    if semantics == "wldp":
        probs = precise_distributions(mech, read_allocation(allocation, shown("allocation")))
        member = Mechanism(probs, inputs=mech.inputs, frame=mech.frame, focal=[1 << j for j in range(mech.l)])
    witness = worst_case(member if member is not None else mech, "shafer")
    own = witness.eps
    if epsilon is None and not np.isfinite(own):
        raise CommandError(f"{path}: {witness.describe()} is infinite (a mass of 0 for one input where another has a "
                           "positive one): no budget covers it; give every answer a positive mass for every input, "
                           "or design the mechanism (designer design)")
    try:
        if member is not None:
            table = exact_table(mech, epsilon=epsilon, semantics="wldp", probabilities=member.matrix,
                                outputs=tuple(mech.frame))
        else:
            table = exact_table(mech, epsilon=epsilon, semantics="sldp")
    except (CertificationError, InvalidArgumentError) as exc:
        raise CommandError(f"{path}: {exc}") from None
    if table.mix_weight == 0 or table.max_change <= DRAWN_TOLERANCE:
        return Drawn(table, mech, basis, None, detail)
    stated = epsilon if epsilon is not None else own
    why = (f"its {allocation} allocation's precise answers have Shafer loss {own:.6g} > the budget {stated:g}"
           if member is not None else f"its masses exceed eps = {stated:g} once written as integer counts over 2^53")
    if not repair:
        fix = ("design the mechanism for WLDP (designer design PROBLEM --semantics wldp), choose an --allocation "
               "within the budget" if member is not None else "design it again (designer design)")
        raise CommandError(f"{path}: {why}: drawing within the budget would mix in {table.mix_weight:.3g} of a "
                           f"uniform row (masses moving by up to {table.max_change:.3g}), so the answers would not "
                           f"follow {path} and estimates made with it would be biased; {fix}, or pass --repair to "
                           "release the mixed channel (written beside the output; estimate and regress use it with "
                           "--manifest)")
    violation = own - stated  # the float loss of what would be drawn unmixed, minus the budget
    return Drawn(table, mech, basis, None, detail, {"why": why, "violation": violation})


#: A variable released above this loss (nats) is warned about: an answer may then be e^5 ~ 148 times likelier
#: under one true value than under another, and the randomization protects the respondent little.
HIGH_LOSS = 5.0


def variable_certificate(entry: Any, semantics: str) -> Any:
    """The certificate one variable is released with: its drawn table's (a stratified variable's: the stratum with
    the largest budget, as a respondent meets one stratum's design), its budget read as stated (a decimal as
    written: 0.1 is 1/10) and, for precise answers (``wldp``), both losses (a precise table's Walley loss is its
    Shafer loss)."""
    import dataclasses

    from ..guarantees.noise import stated_budget
    from ..vocabulary import Loss

    table = max((d[0] for d in entry.designs.values()), key=lambda t: t.epsilon) if isinstance(entry, Stratified) \
        else entry[0]
    losses = (Loss.SHAFER, Loss.WALLEY) if semantics == "wldp" else (Loss.SHAFER,)
    return dataclasses.replace(table.certificate, losses=losses, budget=stated_budget(epsilon_of(entry)))


def variables_certificate(tables: list[Any], semantics: str) -> Any:
    """The composed certificate of a respondent's variables: each drawn independently from its own certified table,
    so the budgets add exactly (the product's certificate, Lemma 3.3 and Lemma 3.15, with no stored product to
    round)."""
    from ..guarantees.certified import product_certificate

    return product_certificate(*(variable_certificate(entry, semantics) for entry in tables))


def _check_request(args: RandomizeRequest) -> None:
    """Refuse the flags that contradict each other (before any file is read)."""
    if args.seed is not None and not args.simulation:
        raise CommandError("--seed lets anyone who knows the seed undo the draw: add --simulation to say this is a "
                           "simulation, or leave --seed out (the default draws from the operating system's CSPRNG)")
    if args.invariant_prior == "data" and args.prior_budget is None:
        raise CommandError("--invariant-prior data publishes a prior computed from the file being released: give "
                           "--prior-budget EPS0, the budget (nats) its noisy counts spend (added to the composed "
                           "loss), or keep the problem's prior (--invariant-prior problem)")
    if args.prior_budget is not None and args.invariant_prior != "data":
        raise CommandError("--prior-budget is the budget of a prior read from the file: give it with "
                           "--invariant-prior data")


def _order_warnings(args: RandomizeRequest) -> list[str]:
    """The warnings every release of ``args`` carries whatever its data: a seeded simulation, kept order."""
    out = []
    if args.seed is not None:
        out.append(SEED_WARNING)
    if args.keep_order:
        out.append(say(KEEP_ORDER_WARNING))
    return out


def _loss_warnings(variables: list[tuple[str, Any]], tables: list[Any], prior_release: Any) -> list[str]:
    warnings = [f"column {c!r} is released at {epsilon_of(t):.4g} nats, above {HIGH_LOSS:g}: an answer may be "
                f"{math.exp(min(epsilon_of(t), 700)):.3g} times likelier under one true value than under another, "
                "so the randomization protects little"
                for (c, _), t in zip(variables, tables) if epsilon_of(t) > HIGH_LOSS]
    if prior_release is not None and prior_release.epsilon > HIGH_LOSS:
        eps0 = float(prior_release.epsilon)
        warnings.append(f"the prior's budget {shown('prior_budget', f'{eps0:.4g}')} is above {HIGH_LOSS:g} nats: its "
                        f"noisy counts are nearly the file's counts (noise of mean size "
                        f"{prior_release.mean_noise():.3g} per count), so the published prior protects little")
    return warnings


def _composed(args: RandomizeRequest, tables: list[Any], prior_release: Any) -> tuple[Any, dict[str, Fraction]]:
    """The variables' composed certificate and the composed loss per respondent, exactly, refused above
    ``--budget``."""
    from ..vocabulary import Loss

    certificate = variables_certificate(tables, args.semantics)
    totals = {loss: certificate.exact_budget if Loss(loss) in certificate.losses else Fraction(0)
              for loss in ("shafer", "walley")}
    if prior_release is not None:  # the published prior's noisy counts: a term added to the composed loss
        for loss in totals:
            totals[loss] += prior_release.epsilon if (loss == "shafer" or args.semantics == "wldp") else 0
    composed = max(totals.values())
    if args.budget is not None and composed > args.budget:
        summands = [f"{epsilon_of(t):.4g}" for t in tables]
        if prior_release is not None:
            summands.append(f"the prior's {float(prior_release.epsilon):.4g}")
        raise CommandError(f"the release composes to {float(composed):.6g} nats per respondent (the sum of "
                           f"{', '.join(summands)}), above --budget {float(args.budget):g}")
    return certificate, totals


def run(args: RandomizeRequest, frame: Any = None) -> Randomized:
    """Randomize ``args.answers`` (or the DataFrame ``frame``, named by ``args.answers``) into the new file
    ``args.out`` with its manifest, all or nothing (nothing is ever replaced, no true value is written): see
    :func:`designer.verbs.randomize_verb.randomize` for the parameters."""
    from ..guarantees.exact_table import OsRandom, SeededRandom
    from ..tables.inputs import regular_file
    from .ledger import default_ledger_path
    from .randomize_priors import data_priors, stratified
    from .rows import ReleaseInput
    from .staging import Staging, clean_remains, output_lock

    _check_request(args)
    variables = _variables(args)
    if args.scheduler and (frame is not None or not folder_out(args)):
        raise CommandError("--scheduler randomizes a Parquet dataset part by part on the cluster: give the dataset's "
                           "folder and a new folder as --out (without .csv or .parquet)")
    manifest = args.manifest or f"{args.out}.manifest.json"
    designs_dir = args.designs or f"{args.out}.designs"
    inputs = [*([args.answers] if frame is None else []), *(p for _, p in variables)]
    for path in [p for p in inputs if isinstance(p, str | os.PathLike)]:
        regular_file(os.fspath(path), "the input" if path == args.answers else "a design file")
    for path in (args.out, manifest, *([designs_dir] if args.strata else [])):
        check_folder(path)
    randomized = [c for c, _ in variables]
    keep = kept_columns(args.keep, randomized)
    with output_lock(args.out):
        notes = clean_remains(args.out)
        check_output(args.out, inputs, False, advice="randomize never replaces a file (choose another name)")
        check_output(manifest, [*inputs, args.out], False, advice="randomize never replaces a file (--manifest)")
        if args.strata:
            check_output(designs_dir, [*inputs, args.out, manifest], False,
                         advice="randomize never replaces a file (--designs)")
        written = [*keep, *([args.strata] if args.strata and args.strata not in keep else [])]
        inp = ReleaseInput(frame if frame is not None else args.answers, args.answers,
                           [*randomized, *([args.strata] if args.strata else [])], written)
        prior_release = None
        strata_designs: dict[str, Stratified] = {}
        priors: dict[str, Any] = {}
        if args.strata:
            strata_designs, prior_release = stratified(args, variables, inp)
        elif args.invariant_prior == "data":
            priors, prior_release = data_priors(args, variables, inp)
        tables: list[Any] = [strata_designs.get(column) or _table(path, args.semantics, args.allocation,
                                                                  priors.get(column), repair=args.repair)
                             for column, path in variables]
        drawn_files = _drawn_paths(args, variables, tables, [*inputs, args.out, manifest, designs_dir])
        certificate, totals = _composed(args, tables, prior_release)
        ledger = args.ledger or default_ledger_path(None if frame is not None else args.answers, args.out)
        for taken in [*inputs, args.out, manifest, *([designs_dir] if args.strata else []), *drawn_files.values()]:
            if isinstance(taken, str | os.PathLike) and os.path.realpath(taken) == os.path.realpath(ledger):
                raise CommandError(f"--ledger {ledger}: that path is also {os.fspath(taken)!r}, an input or a file "
                                   "this release writes; give the ledger its own file")
        entry = _ledger_entry(args, inp, variables, tables, totals, written, ledger)
        warnings = [*notes, *_order_warnings(args), *_loss_warnings(variables, tables, prior_release)]
        if entry.warning():
            warnings.append(str(entry.warning()))
        if prior_release is not None:
            warnings.append(prior_release.note())
        warnings += [f"column {c!r} is drawn from a repaired channel, not from {source_name(p)}: {t.repair['why']}; "
                     f"the drawn channel is {drawn_files[c]} (estimate/regress --manifest {manifest} use it)"
                     for (c, p), t in zip(variables, tables) if isinstance(t, Drawn) and t.repair]
        source: Any = SeededRandom(args.seed) if args.seed is not None else OsRandom()
        names = [*written, *(("response",) if not args.variable else randomized)]
        release = Release(args, variables, tables, totals, prior_release, warnings, drawn_files,
                          entry.manifest_record())
        staging = Staging(args.out)
        try:
            n, files, random_source = write_release(args, manifest, designs_dir, release, source, inp=inp,
                                                    staging=staging, written=written, names=names)
        except BaseException:
            staging.discard()
            raise
        entry.record(args.out, manifest)  # its folder and path were checked before the draw
    return Randomized(n=n, out=args.out, manifest=manifest, random_source=random_source, totals=totals,
                      semantics=args.semantics, prior_budget=prior_release.epsilon if prior_release else None,
                      variables=tuple((c, source_name(p), t) for (c, p), t in zip(variables, tables)),
                      drawn=drawn_files, strata_column=args.strata, files=files, certificate=certificate,
                      warnings=tuple(warnings), row_order="kept" if args.keep_order else "shuffled")


def _ledger_entry(args: RandomizeRequest, inp: Any, variables: list[tuple[str, Any]], tables: list[Any],
                  totals: dict[str, Fraction], written: list[str], path: str) -> Any:
    """The release's place in its budget ledger at ``path`` (``--ledger``, default beside the input;
    docs/guide/release.md): the input read once (a kept copy of a randomized column refused), the loss composed
    with the earlier releases of the same data and refused past ``--budget-cap``."""
    from .ledger import settle

    epsilons = {c: variable_certificate(t, args.semantics).budget for (c, _), t in zip(variables, tables)}
    designs = {c: source_name(p) for c, p in variables}
    return settle(path, inp, [c for c, _ in variables], written, designs, epsilons, max(totals.values()),
                  args.budget_cap)


def kept_columns(keep: str | None, randomized: list[str]) -> list[str]:
    """The columns ``--keep`` copies to the release (``"id,age"``, blanks ignored), refused in one line when one of
    them is being randomized: its true values are never written out.

    Examples
    --------
    >>> import designer
    >>> from designer.release.randomize_run import kept_columns
    >>> kept_columns(" id, age ,", ["answer"])
    ['id', 'age']
    >>> try:
    ...     kept_columns("id,answer", ["answer"])
    ... except designer.DesignerError as exc:
    ...     print(exc)
    --keep names 'answer', a column being randomized: its true values are never written out
    """
    kept = [k.strip() for k in (keep or "").split(",") if k.strip()]
    for k in kept:
        if k in randomized:
            raise CommandError(f"--keep names {k!r}, a column being randomized: its true values are never written out")
    return kept


def draw_frame(args: RandomizeRequest, frame: Any) -> Randomized:
    """The rows of the DataFrame ``frame`` randomized in memory (nothing written): the kept columns and each
    variable's drawn answers, in :attr:`Randomized.frame`, in a uniformly random order (the frame's order with
    ``keep_order``), with a fresh index (with ``keep_order``, every row keeping its own). Stratified and
    data-prior releases need files."""
    from ..guarantees.exact_table import OsRandom, SeededRandom
    from .randomize_parts import Task, draw_in_memory
    from .rows import ReleaseInput

    _check_request(args)
    if args.strata or args.invariant_prior == "data" or args.prior_budget is not None or args.scheduler or \
            args.repair or args.manifest or args.designs:
        raise CommandError("strata, invariant_prior='data', prior_budget, repair, manifest, designs and scheduler "
                           "write files: give out (a DataFrame is then randomized into that file)")
    variables = _variables(args)
    randomized = [c for c, _ in variables]
    keep = kept_columns(args.keep, randomized)
    inp = ReleaseInput(frame, args.answers, randomized, keep)
    if args.ledger or args.budget_cap is not None:
        raise CommandError("ledger and budget_cap record a release of a file: give out (a DataFrame drawn in memory "
                           "is not recorded)")
    from .ledger import scan_input

    scan_input(inp, randomized, keep, None)  # a kept copy of a randomized column refused
    tables = [_table(path, args.semantics, args.allocation, repair=False) for _, path in variables]
    certificate, totals = _composed(args, tables, None)
    warnings = [*_order_warnings(args), *_loss_warnings(variables, tables, None)]
    source: Any = SeededRandom(args.seed) if args.seed is not None else OsRandom()
    names = randomized if args.variable else ["response"]
    task = Task(args.answers, variables, tables, None, keep, [*keep, *names])
    drawn, order = draw_in_memory(inp, task, source, seed=args.seed, keep_order=args.keep_order)
    by_name = {str(c): c for c in frame.columns}
    out = frame[[by_name[k] for k in keep]].take(order)
    for name, values in zip(names, drawn):
        out[name] = values[order]
    if not args.keep_order:
        out = _order_free_frame(out)
    return Randomized(n=len(frame), out=None, manifest=None, random_source=source.name, totals=totals,
                      semantics=args.semantics, prior_budget=None,
                      variables=tuple((c, source_name(p), t) for (c, p), t in zip(variables, tables)), drawn={},
                      strata_column=None, files={}, certificate=certificate, warnings=tuple(warnings), frame=out,
                      row_order="kept" if args.keep_order else "shuffled")


def _order_free_frame(out: Any) -> Any:
    """A shuffled release's frame with nothing that carries the input's order (issue 56): a fresh index (each
    row's index was its input position: sorting by it would undo the shuffle) and an unordered categorical's
    categories sorted (their order may be the input's order of first appearance)."""
    import pandas as pd

    out = out.reset_index(drop=True)
    for name in out.columns:
        column = out[name]
        if isinstance(column.dtype, pd.CategoricalDtype) and not column.dtype.ordered:
            try:
                out[name] = column.cat.reorder_categories(sorted(column.cat.categories))
            except TypeError:  # categories that do not sort: as text
                out[name] = column.cat.reorder_categories(sorted(column.cat.categories, key=str))
    return out


@dataclass(frozen=True)
class Randomized(Result):
    """A randomized release: the rows written, the manifest, and the guarantee per respondent.

    Attributes
    ----------
    n : int
        Rows randomized.
    out, manifest : str
        The randomized file (or dataset folder) and its manifest; None for a DataFrame drawn in memory.
    random_source : str
        What drew the words (the operating system's CSPRNG, or a seeded simulation).
    totals : dict of str to Fraction
        The composed loss per respondent, exactly, per loss (``shafer``; ``walley`` under ``wldp``): the variables'
        budgets composed (:attr:`certificate`) plus the published prior's.
    semantics : {"sldp", "wldp"}
    prior_budget : Fraction or None
        The budget the published prior's noisy counts spend (``--invariant-prior data``).
    variables : tuple of (column, design, table)
        Each variable's design (its path, or the kind of object) and its certified table (a stratified variable:
        its :class:`~designer.release.randomize_parts.Stratified` tables).
    drawn : dict of str to str
        With ``repair``: the file each repaired variable's drawn channel is written to.
    strata_column : str or None
    files : dict of str to dict of str to str
        With ``strata``: each stratified variable's stratum design files.
    certificate : Certificate
        The variables' certificates composed (Lemma 3.3, Lemma 3.15), budgets added exactly as stated.
    status : FitStatus
        ``EXACT``: drawn from exact integer tables.
    warnings : tuple of str
    frame : pandas.DataFrame or None
        A DataFrame randomized in memory: the kept columns and the randomized ones, rows in the released order,
        with a fresh index (0, 1, ...: the input's index would give each row's input position); with
        ``keep_order``, each row with its own index.
    row_order : {"shuffled", "kept"}
        The rows were released in a uniformly random order, or (``keep_order``) in the input's.

    Examples
    --------
    >>> import pandas as pd
    >>> import designer
    >>> frame = pd.DataFrame({"answer": ["yes", "no", "yes", "no"]})
    >>> result = designer.randomize(frame, designer.Q_WRR(1.0), column="answer", seed=1, simulation=True)
    >>> result.n, result.out, str(result.status), round(float(result.epsilon_total), 9), result.row_order
    (4, None, 'exact', 1.0, 'shuffled')
    """

    n: int
    out: str | None
    manifest: str | None
    random_source: str
    totals: dict[str, Fraction]
    semantics: str
    prior_budget: Fraction | None
    variables: tuple[tuple[str, str, Any], ...]
    drawn: dict[str, str]
    strata_column: str | None
    files: dict[str, dict[str, str]]
    certificate: Any
    warnings: tuple[str, ...] = field(default=())
    status: FitStatus = FitStatus.EXACT
    frame: Any = None
    row_order: str = "shuffled"

    title = "Randomized release"

    def __post_init__(self) -> None:
        self._check_status()

    @property
    def epsilon_total(self) -> Fraction:
        """The composed loss per respondent (nats), exactly: the largest of :attr:`totals`."""
        return max(self.totals.values())

    def to_dict(self) -> dict[str, Any]:
        """The ``designer randomize --format json`` object."""
        return {"n": self.n, "out": self.out, "manifest": self.manifest, "random_source": self.random_source,
                "epsilon_total": float(self.epsilon_total), "epsilon_shafer_total": float(self.totals["shafer"]),
                "epsilon_walley_total": float(self.totals["walley"]) if self.semantics == "wldp" else None,
                "prior_budget": float(self.prior_budget) if self.prior_budget is not None else None,
                "variables": {c: epsilon_of(t) for c, _, t in self.variables},
                "drawn_mechanisms": self.drawn or None, "warnings": list(self.warnings),
                "strata": {c: {"column": self.strata_column, "designs": f} for c, f in self.files.items()} or None,
                "row_order": self.row_order}

    def table(self) -> TableData:
        """The ``--format csv`` rows: one per variable (per stratum of a stratified one) with its table's hash."""
        return (["column", "stratum", "mechanism", "epsilon", "sha256"],
                [[c, s, p if s == "" else self.files[c][s], t.epsilon, t.sha256]
                 for c, p, entry in self.variables for s, t in _each_table(entry)])

    def summary(self) -> str:
        """The ``--format table`` text: the rows, each variable's table and budget, the composed loss."""
        lines = [f"randomized {self.n} rows into {self.out} ({self.random_source}); manifest {self.manifest}"
                 if self.out is not None else f"randomized {self.n} rows in memory ({self.random_source})"]
        for c, p, entry in self.variables:
            for s, t in _each_table(entry):
                where = f"{c}: {p}" if s == "" else f"{c} in stratum {s}: {self.files[c][s]}"
                lines.append(f"  {where}, within eps = {t.epsilon:.6g} ({t.arithmetic}, SHA-256 {t.sha256[:16]}...)")
            if c in self.drawn:
                lines.append(f"  {c}: drawn from the repaired channel {self.drawn[c]} (not {p})")
        if self.prior_budget is not None:
            lines.append(f"  the invariant priors: the file's counts with discrete Laplace noise, within eps0 = "
                         f"{float(self.prior_budget):.6g} (manifest: prior_release, noisy_counts)")
        lines.append(f"composed loss per respondent: {float(self.epsilon_total):.6g} nats (losses add across "
                     "variables and the published prior, Lemma 3.3 and Lemma 3.15)")
        if self.row_order == "kept":
            lines.append("rows in the input's order (--keep-order): the order may give true values away")
        for column, paths in self.files.items():
            lines.append(f"analyse {column} by stratum (each stratum its own distribution): "
                         f"{regress_command(self.out, column, str(self.strata_column), paths)}")
        return "\n".join(lines)


def regress_command(out: Any, column: str, strata: str, designs: dict[str, str]) -> str:
    """The ``designer regress`` command that analyses a stratified variable, every word quoted for a POSIX shell
    (a stratum's name or a path is data, never a command)."""
    import shlex

    words = ["designer", "regress", str(out), "--formula", f"{column} ~ C({strata})", "--group", strata]
    for stratum, path in designs.items():
        words += ["--mechanism", f"{stratum}={path}"]
    return " ".join(shlex.quote(w) for w in words)


def _drawn_paths(args: RandomizeRequest, variables: list[tuple[str, Any]], tables: list[Any], taken: list[str]
                 ) -> dict[str, str]:
    """With --repair, the new mechanism file each repaired variable's drawn channel goes to (``OUT.COLUMN.drawn.json``),
    refused before any work when it exists."""
    import re

    out: dict[str, str] = {}
    for (column, _), entry in zip(variables, tables):
        if isinstance(entry, Drawn) and entry.repair:
            stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", column).strip(".") or "column"
            path = f"{args.out}.{stem}.drawn.json"
            check_output(path, [*taken, *out.values()], False, advice="randomize never replaces a file")
            out[column] = path
    return out


def _each_table(entry: Any) -> list[tuple[str, Any]]:
    """``(stratum, table)`` of a variable: one pair with stratum ``""`` unless it is stratified."""
    if isinstance(entry, Stratified):
        return [(s, d[0]) for s, d in entry.designs.items()]
    return [("", entry[0])]


