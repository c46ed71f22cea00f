"""``designer.regress``: who holds the trait, with covariates, from a file or a frame of randomized answers.

The front door of ``designer regress``: it opens the mechanism(s), reads the data (the whole table, or chunks of a
large file fitted from sufficient statistics, optionally on a Dask cluster), chooses the fitter once and returns a
:class:`~designer.regression.fit_result.RegressionResult` (or, under WLDP without a named member, the range over
members, :class:`~designer.regression.sensitivity_result.SensitivityResult`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .._internal.bundled import resolve
from .._internal.keywords import read_allocation, say, shown
from ..exceptions import DataError, InvalidArgumentError, RegressionError
from ..mechanism import Mechanism
from ..regression.fit_result import RegressionResult
from ..regression.sensitivity_result import SensitivityResult

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["regress"]

#: What ``mechanism`` may be: a file's path, a Mechanism, a DesignResult (anything with a ``mechanism``), or one of
#: these per group.
MechanismLike = Any


def regress(formula: str, data: str | os.PathLike[str] | pd.DataFrame, mechanism: MechanismLike = None, *,
            manifest: str | os.PathLike[str] | None = None, reference: str | None = None,
            semantics: str = "sldp", allocation: str | float | None = None, method: str = "newton",
            level: float = 0.95, penalty: str | None = None, missing: str = "error",
            weights: str | None = None, weight_kind: str = "sampling", cluster: str | None = None,
            cov: str | None = None, group: str | None = None, noncompliance: str | None = None,
            noncompliance_model: str = "constant", unrelated: str | None = None,
            share_groups: Sequence[str] | None = None, chunk_rows: int | None = None,
            max_distinct: int | None = None, scheduler: str | None = None,
            answers: Mapping[str, Sequence[str]] | None = None) -> RegressionResult | SensitivityResult:
    """Fit a (multinomial) logistic regression of the true answer on covariates from randomized answers.

    The true answer ``X`` of a respondent with covariates ``z`` follows ``P(X = x | z) = exp(z b_x) / sum_y
    exp(z b_y)`` (``b_reference = 0``); the recorded answer ``E`` has likelihood ``sum_x M[x, E] P(x | z)`` through
    the mechanism ``M`` (Def 3.1), maximised by Newton's method or EM (docs/theory.md section 9). Keywords are
    ``designer regress``'s flags (``--chunk-rows`` is ``chunk_rows``) with the same defaults; errors name the keyword.

    Parameters
    ----------
    formula : str
        ``"response ~ x1 + x2"`` (patsy syntax; dotted names, ``I(x^2)``, ``C(region)``): the answers column, then
        the covariates.
    data : str, path-like or pandas.DataFrame
        One row per respondent: a CSV file (separator sniffed), a Parquet, Arrow, SPSS, Stata or SAS file, a
        Parquet dataset folder, or a DataFrame. A folder, a Parquet file above 10^6 rows or a CSV file above
        100 MB is read in chunks and fitted from sufficient statistics (:mod:`designer.regression.chunked`).
    mechanism : str, path-like, Mechanism, DesignResult, or a mapping of str to one of these
        The ``(k, F)`` mechanism that produced the answers (a mechanism file's answer words are read with it);
        several designs in one survey: one per value of the ``group`` column.
    manifest : str or path-like, optional
        randomize's release manifest instead of ``mechanism``: the analysed column's design, or the drawn channel
        of a repaired release (docs/theory.md section 7.6).
    reference : str, optional
        The input whose log-odds are 0 (default: the mechanism's last input).
    semantics : {"sldp", "wldp"}
        ``wldp``: precise answers; without ``allocation`` the coefficients are not identified and the result is
        their range over named members of the credal sets (Def 3.13).
    allocation : "uniform" or float in [0, 1], optional
        WLDP: fit the one member it names.
    method : {"newton", "em"}
    level : float
        Level of the Wald intervals, in (0, 1).
    penalty : {None, "firth"}
        Firth's penalized likelihood, finite under separation (no sampling weights).
    missing : {"error", "drop"}
    weights, weight_kind, cluster, cov
        The survey's design and the variance, as :func:`designer.regression.regress` takes them.
    group, noncompliance, noncompliance_model, unrelated, share_groups
        Several designs in one survey and one unknown share (docs/theory.md sections 9.2 and 9.4).
    chunk_rows : int, optional
        Read a file in chunks of this many rows (at least 1,000).
    max_distinct : int, optional
        Chunked data: fit the counted distinct rows while there are at most this many (default 500,000), else
        streamed Newton passes.
    scheduler : str, optional
        A Dask scheduler (``tcp://host:8786``): the passes over a Parquet dataset on the cluster, one part a task.
    answers : mapping of str to sequence of str, optional
        Words the answers column may hold for a focal set, besides the mechanism files' own.

    Returns
    -------
    RegressionResult or SensitivityResult
        ``status`` says how the fit ended (a :class:`~designer.results.FitStatus`); ``to_dict()`` is the command's
        JSON, ``summary()`` its table output, ``conf_int(level)`` the coefficients' intervals ``(P, 2)``.

    Raises
    ------
    DesignerError
        One line naming the file, the keyword or the row at fault (:class:`~designer.exceptions.DataError` for a file
        that cannot be read, :class:`~designer.exceptions.RegressionError` for data, formula or mechanism).

    Examples
    --------
    Answers of 2000 respondents drawn through Warner's design at eps = 1, the chance of yes rising with age (log-odds
    ``-2 + 0.03 age``); the fit recovers the slope from the randomized answers alone:

    >>> import numpy as np, pandas as pd
    >>> import designer
    >>> warner = designer.Q_WRR(1.0)
    >>> rng = np.random.default_rng(0)
    >>> age = rng.integers(18, 80, 2000)
    >>> truth = np.where(rng.random(2000) < 1 / (1 + np.exp(2 - 0.03 * age)), "yes", "no")
    >>> people = pd.DataFrame({"answer": truth, "age": age})
    >>> drawn = designer.randomize(people, warner, column="answer", keep="age", seed=1, simulation=True)
    >>> fit = designer.regress("response ~ age", drawn.frame, warner)
    >>> str(fit.status), fit.params.round(3).tolist()
    ('converged', [-2.65, 0.04])
    """
    from ..regression import model

    if manifest is not None:
        mechanism = _manifest_mechanism(manifest, formula, mechanism, data)
    elif mechanism is not None and isinstance(data, str | os.PathLike) and isinstance(formula, str):
        from ..estimation.manifest_channel import refuse_plain_design

        for design in (mechanism.values() if isinstance(mechanism, Mapping) else [mechanism]):
            refuse_plain_design(data, formula.split("~", 1)[0].strip(), design)
    if mechanism is None or (isinstance(mechanism, Mapping) and not mechanism):
        raise InvalidArgumentError(say("give {mechanism=FILE} (the design the answers were drawn with) or "
                                       "{manifest=FILE} (randomize's release manifest)"))
    opened, words, label = _open(mechanism)
    lhs = formula.split("~", 1)[0].strip() if isinstance(formula, str) and "~" in formula else ""
    if not lhs:
        raise InvalidArgumentError(f"{shown('formula')} {formula!r} must read 'response ~ x1 + x2' (answers column ~ "
                                   "covariates)")
    for keyword, value in (("chunk_rows", chunk_rows), ("max_distinct", max_distinct)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise InvalidArgumentError(f"{shown(keyword)} must be a whole number of rows, at least 1; got {value!r}")
    words = {**words, **dict(answers or {})}
    options: dict[str, Any] = dict(reference=reference, level=level, answers=words, missing=missing)
    fit_options: dict[str, Any] = dict(
        semantics=semantics, allocation="uniform" if allocation is None else read_allocation(allocation,
                                                                                              shown("allocation")),
        method=method,
        penalty=penalty, weights=weights, weight_kind=weight_kind, cluster=cluster, cov=cov, group=group,
        noncompliance=noncompliance, noncompliance_model=noncompliance_model, unrelated=unrelated,
        share_groups=share_groups)
    ranges = str(semantics).strip().lower() == "wldp" and allocation is None
    if ranges:
        _check_ranges(opened, penalty=penalty, weights=weights, cluster=cluster, cov=cov, method=method,
                      noncompliance=noncompliance, unrelated=unrelated)
    path = os.fspath(resolve(data, "data", error=DataError)) if isinstance(data, str | os.PathLike) else None
    frame: Any = data  # a path (or designer's own data by name) is read below; else a DataFrame
    if path is None:
        _check_frame(data)
        if chunk_rows is not None or scheduler is not None:
            raise InvalidArgumentError("chunk_rows and scheduler read a file in chunks; data is a DataFrame already "
                                       "in memory")
    else:
        from ..regression.regress_input import in_chunks
        from ..tables.inputs import is_columnar

        if in_chunks(path, chunk_rows, scheduler):
            if ranges:
                raise InvalidArgumentError(say("{path}: data read in chunks is fitted once; with {semantics=wldp} give "
                                               "{allocation} (the range over credal members refits the data for "
                                               "each)", path=path))
            fit = _in_chunks(formula, path, opened, lhs, chunk_rows, max_distinct, scheduler, options, fit_options)
            return _labelled(fit, label)
        simple = not ranges and not isinstance(opened, Mapping) and all(
            v is None for v in (weights, cluster, group, noncompliance, unrelated, share_groups))
        plain = None
        if simple and not is_columnar(path) and os.path.isfile(path):  # a small CSV file of plain columns
            from ..regression.plain_table import read_plain_table

            plain = read_plain_table(path, lhs, formula)  # None: not plain, read by pandas
        frame = plain if plain is not None else _read(path, lhs, formula, [weights, cluster, group])
    try:
        if ranges:
            table = model.sensitivity(formula, frame, opened, **options)
            return SensitivityResult(ranges=table, formula=formula, mechanism_label=label,
                                     n=int(table.attrs["n"]), dropped=int(table.attrs["dropped"]), level=float(level))
        fit = model.regress(formula, frame, opened, **options, **fit_options)
    except RegressionError as exc:  # a data row is the file's line: the header is line 1
        if path is None:
            raise
        where = f"line {exc.row + frame.attrs.get('first_line', 2)}: " if exc.row is not None else ""
        raise RegressionError(f"{path}: {where}{exc.reason}") from None
    return _labelled(fit, label)


def _check_ranges(mechanism: Any, *, method: str, **given: Any) -> None:
    """The range over credal members (WLDP without ``allocation``) refits the plain model for each member: a flag
    of one fit is refused, never ignored."""
    if isinstance(mechanism, Mapping) or given["noncompliance"] is not None or given["unrelated"] is not None:
        raise RegressionError("several mechanisms and non-compliance apply to set answers (semantics 'sldp')")
    named = [shown(name) for name in ("penalty", "weights", "cluster", "cov") if given[name] is not None]
    named += [shown("method", "em")] if str(method).strip().lower() != "newton" else []
    if named:
        raise InvalidArgumentError(say("{first} applies to one fit; with {semantics=wldp} give {allocation} to fit one "
                                       "member", first=named[0]))


def _check_frame(data: Any) -> None:
    import pandas as pd

    if not isinstance(data, pd.DataFrame):
        raise InvalidArgumentError(f"data must be a file's path or a pandas DataFrame, not {type(data).__name__}")


def _read(path: str, lhs: str, formula: str, extra: list[str | None]) -> Any:
    from ..regression.regress_input import read_frame

    return read_frame(path, lhs, formula, extra)


def _labelled(fit: RegressionResult, label: str) -> RegressionResult:
    import dataclasses

    return dataclasses.replace(fit, mechanism_label=label)


def _one(item: Any) -> tuple[Mechanism, dict[str, Any], str]:
    """A mechanism, its file's answer words and how the output names it."""
    if isinstance(item, (str, os.PathLike)):
        from ..release.files import open_mechanism_file

        opened = open_mechanism_file(item)
        return opened.mechanism, dict(opened.words), os.fspath(item)
    if isinstance(item, Mechanism):
        return item, {}, "(in memory)"
    inner = getattr(item, "mechanism", None)
    if isinstance(inner, Mechanism):  # a DesignResult, a released mechanism
        return inner, {}, "(in memory)"
    raise InvalidArgumentError("mechanism must be a mechanism file's path, a Mechanism, a DesignResult, or a mapping "
                               f"of group names to these; got {type(item).__name__}")


def _open(mechanism: Any) -> tuple[Any, dict[str, Any], str]:
    """The mechanism (or ``{group: mechanism}``), every file's answer words, and the output's name for them."""
    if not isinstance(mechanism, Mapping):
        return _one(mechanism)
    opened: dict[str, Mechanism] = {}
    words: dict[str, Any] = {}
    labels = []
    for name, item in mechanism.items():
        mech, more, label = _one(item)
        opened[str(name).strip()] = mech
        words.update(more)
        labels.append(f"{str(name).strip()}={label}" if str(name).strip() else label)
    return opened, words, ", ".join(labels)


def _manifest_mechanism(manifest: str | os.PathLike[str], formula: str, mechanism: Any, data: Any = None) -> str:
    """The mechanism file the manifest records for the formula's answers column (refused beside ``mechanism``: the
    manifest says which channel was drawn)."""
    from ..estimation.manifest_channel import manifest_mechanism

    if mechanism is not None and not (isinstance(mechanism, (Mapping, list, tuple)) and not mechanism):
        raise InvalidArgumentError(say("give {mechanism} or {manifest}, not both: the manifest names the channel the "
                                       "release was drawn from"))
    return manifest_mechanism(manifest, str(formula).split("~", 1)[0].strip(), data)


def _in_chunks(formula: str, path: str, mechanism: Any, lhs: str, chunk_rows: int | None, max_distinct: int | None,
               scheduler: str | None, options: dict[str, Any], fit_options: dict[str, Any]) -> RegressionResult:
    """The fit of a large CSV file or Parquet dataset: counted distinct rows or streamed Newton steps
    (:mod:`designer.regression.chunked`), the counting on a Dask cluster with ``scheduler``."""
    from ..regression.chunked import MAX_PATTERNS, count_options, regress_chunks
    from ..regression.regress_input import CHUNK_ROWS, chunk_source, cluster_plan, columns_of, numeric_labels

    columns = columns_of(path)
    rows = chunk_rows or CHUNK_ROWS
    try:
        counted = count_options(formula, columns, missing=options["missing"], weights=fit_options["weights"],
                                weight_kind=fit_options["weight_kind"], cluster=fit_options["cluster"],
                                group=fit_options["group"])
        needed = list(dict.fromkeys([*counted["keys"], *counted["extra"]]))
        labels = numeric_labels(path, formula, lhs)  # value-labelled numbers stay numbers unless C() asks
        plan = cluster_plan(scheduler, path, needed, lhs, rows, labels) if scheduler else None
        return regress_chunks(formula, chunk_source(path, needed, lhs, rows, labels), mechanism, columns=columns,
                              plan=plan, max_patterns=max_distinct or MAX_PATTERNS, **options, **fit_options)
    except RegressionError as exc:
        where = ""
        if exc.row is not None:
            where = f"row {exc.row + 1} of the dataset: " if os.path.isdir(path) else f"line {exc.row + 2}: "
        raise RegressionError(f"{path}: {where}{exc.reason}") from None
