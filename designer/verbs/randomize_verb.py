"""``designer.randomize``: true answers in, randomized answers out, drawn exactly from certified tables.

The front door of ``designer randomize``: it reads the true answers (a file, a Parquet dataset folder or a
DataFrame), finds each variable's design (a mechanism file, a TOML problem, or an in-memory design), draws every
answer from the design's certified integer table, writes the release with its manifest (all or nothing, never
replacing a file) and returns a :class:`~designer.release.randomize_run.Randomized` result whose composed loss is
the product of the variables' certificates (Lemma 3.3, Lemma 3.15) plus a published prior's budget.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from .._internal.bundled import resolve
from .._internal.keywords import shown
from ..exceptions import DataError, InvalidArgumentError, InvalidArgumentTypeError
from ..release.randomize_priors import DEFAULT_MIN_STRATUM
from ..release.randomize_run import Randomized, RandomizeRequest, run

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["randomize"]


def randomize(data: str | os.PathLike[str] | pd.DataFrame, mechanism: Any = None, *,
              out: str | os.PathLike[str] | None = None, column: str | None = None,
              variable: Sequence[str] | None = None, keep: str | Sequence[str] | None = None,
              invariant_prior: str = "problem", prior_budget: float | str | Fraction | None = None,
              min_stratum: int = DEFAULT_MIN_STRATUM, repair: bool = False, strata: str | None = None,
              designs: str | os.PathLike[str] | None = None, budget: float | str | Fraction | None = None,
              manifest: str | os.PathLike[str] | None = None, seed: int | None = None, simulation: bool = False,
              scheduler: str | None = None, semantics: str = "sldp", allocation: str | float = "uniform",
              keep_order: bool = False, ledger: str | os.PathLike[str] | None = None,
              budget_cap: float | str | Fraction | None = None) -> Randomized:
    """Randomize true answers with certified mechanisms (Def 3.1; docs/theory.md section 7.5).

    Each respondent's true value ``x`` of a variable is replaced by an answer drawn with probability
    ``counts[x, E] / d_x`` exactly from the design's certified integer table; the release's loss per respondent is
    the variables' budgets added exactly (the product of their certificates, Lemma 3.3 and Lemma 3.15), plus the
    budget of a prior published from the file. Keywords are ``designer randomize``'s flags
    (``--prior-budget`` is ``prior_budget``) with the same defaults.

    Parameters
    ----------
    data : str, path-like or pandas.DataFrame
        One respondent per row: a CSV, Parquet, Arrow, SPSS, Stata or SAS file, a Parquet dataset folder, or a
        DataFrame (drawn in memory, and written to ``out`` when it is given: no true value is ever written).
    mechanism : str, path-like, Mechanism, DesignResult, CertifiedMechanism, DesignProblem, or a mapping
        One variable's design (with ``column``): a mechanism file, a TOML problem (designed on the fly), or an
        in-memory design with ``k`` inputs. A mapping ``{column: design}`` randomizes several variables, each
        column replaced by its randomized values.
    out : str or path-like, optional
        The new file (CSV, Parquet, Arrow, .sav or .dta by its suffix; a new folder for a dataset folder) and
        beside it the manifest ``OUT.manifest.json``. Required for a file's data; an existing file is refused.
    column : str, optional
        The column of the true answers of the single ``mechanism``.
    variable : sequence of str, optional
        The command line's ``COLUMN=MECHANISM`` items (instead of a mapping).
    keep : str or sequence of str, optional
        Columns copied to the output (never a randomized one).
    invariant_prior : {"problem", "data"}
        Invariant designs: keep the problem's prior, or publish one from the file's noisy counts.
    prior_budget : float, str or Fraction, optional
        With ``invariant_prior="data"``: the budget (nats) the noisy counts spend, added to the composed loss.
    min_stratum : int
        With ``invariant_prior="data"``: refuse a stratum (or file) of fewer rows.
    repair : bool
        Release a channel that differs from the design (written beside the output) instead of refusing.
    strata : str, optional
        Invariant designs: one design per stratum of this column, written to ``designs``.
    designs : str or path-like, optional
        With ``strata``: the new folder for the stratum designs (default ``OUT.designs``).
    budget : float, str or Fraction, optional
        Refuse a release whose composed loss per respondent exceeds this (nats), compared exactly (``"7/3"``).
    manifest : str or path-like, optional
        The manifest's path (default ``OUT.manifest.json``).
    seed : int, optional
        With ``simulation=True`` only: a reproducible draw (anyone with the seed can undo it).
    simulation : bool
        Say that this is a simulation, not a release (allows ``seed``).
    scheduler : str, optional
        A Dask scheduler: randomize a Parquet dataset folder part by part on the cluster.
    semantics : {"sldp", "wldp"}
        ``sldp``: report answer sets; ``wldp``: precise answers of the ``allocation`` member.
    allocation : "uniform" or float in [0, 1]
    keep_order : bool
        Write the rows in the input's order instead of a uniformly random one (docs/theory.md section 7.8): the
        order of a file is a function of its data, so this is warned about (``warnings``, the manifest).
    ledger : str or path-like, optional
        The budget ledger recording this release (default ``designer-ledger.json`` beside the input): a further
        release of the same data states the composed loss (``warnings``, the manifest's ``ledger``).
    budget_cap : float, str or Fraction, optional
        Refuse a release that would bring its data's composed loss in the ledger past this (nats, exactly).

    Returns
    -------
    Randomized
        ``to_dict()`` is the ``--format json`` object; ``totals`` the composed loss exactly; ``certificate`` the
        variables' composed certificate; ``frame`` the randomized DataFrame when a DataFrame was drawn in memory
        (rows in the released order, under a fresh index 0..n-1: the input's index would give their order back);
        ``warnings`` what the CLI prints on stderr (a seeded simulation, kept order, a loss above 5 nats, a
        published prior).

    Raises
    ------
    InvalidArgumentError
        A bad keyword, an output that exists, a budget exceeded (one line naming the keyword or the file); a bad row
        is a :class:`~designer.exceptions.DataError` naming its line.

    Examples
    --------
    A DataFrame drawn in memory (a seeded simulation: a release leaves ``seed`` out), its rows in a uniformly
    random order under a fresh index (the input's labels would undo the shuffle):

    >>> from designer import randomize
    >>> import pandas as pd
    >>> from designer import Q_WRR
    >>> frame = pd.DataFrame({"answer": ["yes", "no", "yes", "no"]}, index=["a", "b", "c", "d"])
    >>> result = randomize(frame, Q_WRR(1.0), column="answer", seed=1, simulation=True)
    >>> sorted(result.frame.index), result.row_order, list(result.frame.columns)
    ([0, 1, 2, 3], 'shuffled', ['response'])
    >>> result.warnings[0][:40]
    '--seed makes this draw reproducible: any'
    """
    if semantics not in ("sldp", "wldp"):
        raise InvalidArgumentError(f"{shown('semantics')} must be sldp or wldp, got {semantics!r}")
    if invariant_prior not in ("problem", "data"):
        raise InvalidArgumentError(f"{shown('invariant_prior')} must be problem or data, got {invariant_prior!r}")
    if isinstance(min_stratum, bool) or not isinstance(min_stratum, int) or not 1 <= min_stratum <= 10**12:
        raise InvalidArgumentError(f"{shown('min_stratum')} must be a whole number from 1 to 10**12, got "
                                   f"{min_stratum!r}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise InvalidArgumentError(f"{shown('seed')} must be a whole number >= 0, got {seed!r}")
    single, pairs = _designs(mechanism, variable)
    request = dict(out=_path(out, "out"), mechanism=single, column=column, variable=pairs, keep=_keep(keep),
                   invariant_prior=invariant_prior, prior_budget=_budget(prior_budget, "prior_budget"),
                   min_stratum=min_stratum, repair=bool(repair), strata=strata, designs=_path(designs, "designs"),
                   budget=_budget(budget, "budget"), manifest=_path(manifest, "manifest"), seed=seed,
                   simulation=bool(simulation), scheduler=scheduler, semantics=semantics,
                   allocation=str(allocation), keep_order=bool(keep_order), ledger=_path(ledger, "ledger"),
                   budget_cap=_budget(budget_cap, "budget_cap"))
    if isinstance(data, str | os.PathLike):
        if request["out"] is None:
            raise InvalidArgumentError("out: give the new file the randomized answers go to (a file's answers are "
                                       "randomized into a file; pass a DataFrame to draw in memory)")
        answers = os.fspath(resolve(data, "data", error=DataError))  # a file that exists, else designer's own by name
        return run(RandomizeRequest(answers=answers, **request))
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - pandas is a dependency
        pd = None
    if pd is None or not isinstance(data, pd.DataFrame):
        raise InvalidArgumentTypeError(f"data must be a file's path or a pandas DataFrame, got {type(data).__name__}")
    if request["out"] is None:
        from ..release.randomize_run import draw_frame

        return draw_frame(RandomizeRequest(answers=FRAME_NAME, out="", **{
            k: v for k, v in request.items() if k != "out"}), data)
    return run(RandomizeRequest(answers=FRAME_NAME, **request), frame=data)


#: How messages name a DataFrame's rows (a line is the frame's row position + 2, as in a CSV file with a header).
FRAME_NAME = "the DataFrame given"


def _designs(mechanism: Any, variable: Sequence[str] | None) -> tuple[Any, tuple[Any, ...]]:
    """The single design (or None) and the ``(column, design)`` pairs of several variables."""
    pairs: list[Any] = []
    if variable is not None:
        if isinstance(variable, str):
            raise InvalidArgumentTypeError("variable must be a list of COLUMN=MECHANISM items, got one string")
        pairs += list(variable)
    if isinstance(mechanism, Mapping):
        for col, design in mechanism.items():
            if not isinstance(col, str):
                raise InvalidArgumentTypeError(f"a mapping of mechanisms is keyed by column names, got {col!r}")
            pairs.append((col, design))
        mechanism = None
    return mechanism, tuple(pairs)


def _keep(keep: str | Sequence[str] | None) -> str | None:
    if keep is None or isinstance(keep, str):
        return keep
    return ",".join(str(k) for k in keep)


def _path(value: Any, what: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str | os.PathLike):
        raise InvalidArgumentTypeError(f"{what} must be a path, got {type(value).__name__}")
    return os.fspath(value)


def _budget(value: Any, keyword: str) -> Fraction | None:
    """A budget as the rational its user wrote (``0.1`` is 1/10; ``"7/3"`` exactly), > 0."""
    if value is None:
        return None
    from ..guarantees.noise import stated_budget

    try:
        return stated_budget(value)
    except (InvalidArgumentError, ValueError, ZeroDivisionError):
        raise InvalidArgumentError(f"{shown(keyword)} must be a finite number > 0 (a decimal or a fraction such as "
                                   f"7/3), got {value!r}") from None
