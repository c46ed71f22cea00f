"""A survey read for the shares: answers counted chunk by chunk from a file, a folder of Parquet parts or a data
frame, with the rows without a value, the weights, the clusters and each respondent's group (docs/theory.md
section 8).

The counts per answer set are sufficient for the shares (Def 3.1: the likelihood is ``sum_E c_E log(pi . m(E))``),
so a file of any size is read in chunks and never held whole, and a folder's parts are counted one by one (or one a
task on a cluster) and added. Every problem with a row is one :class:`~designer.exceptions.DataError` naming the
file (or ``data`` for a frame) and the line (a frame's row, counted from 1).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from ..exceptions import DataError, DesignerError
from ..tables.inputs import CHUNK_ROWS, dataset_parts, read_chunks
from .answers import absent_rows, answer_codes

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from ..mechanism import Mechanism
    from .answers import AnswerVocabulary
    from .survey_design import SurveyCounts

__all__ = ["SurveySource", "count_answers", "partition_counts", "read_survey",
           "row_weights", "survey_source"]

#: A function that runs ``function(*item)`` for every item and returns the results in order (one machine's loop, or
#: a cluster's map).
PartsMap = Callable[[Callable[..., Any], list[tuple[Any, ...]]], list[Any]]


@dataclass(frozen=True)
class SurveySource:
    """Where the answers are: a file or a folder of Parquet parts (``path``), or a table in memory (``frame``).

    Attributes
    ----------
    name : str
        What messages call it: the path, or ``data`` for a frame.
    path : str or None
    frame : pandas.DataFrame or None
        Read as text cells, the way a CSV file is read.
    unit : str
        ``line`` (a file's line, the header line 1) or ``row`` (a frame's row, the first row 1).

    Examples
    --------
    >>> import pandas as pd
    >>> from designer.estimation.survey_reading import survey_source
    >>> source = survey_source(pd.DataFrame({"response": ["{yes}"]}), "response")
    >>> source.name, source.path
    ('data', None)
    """

    name: str
    path: str | None = None
    frame: pd.DataFrame | None = None
    unit: str = "line"

    @property
    def is_folder(self) -> bool:
        """Whether the source is a folder of Parquet parts (a partitioned dataset)."""
        return self.path is not None and os.path.isdir(self.path)

    def chunks(self, columns: list[str], chunk_rows: int = CHUNK_ROWS
               ) -> Iterator[tuple[int, dict[str, NDArray[np.object_]]]]:
        """``(first_line, chunk)``: the named columns as text, at most ``chunk_rows`` rows a chunk (a column named
        twice, in two roles, read once)."""
        columns = list(dict.fromkeys(columns))
        if self.path is not None:
            yield from read_chunks(self.path, columns, chunk_rows=chunk_rows)
            return
        yield from _frame_chunks(self.name, self.frame, columns, chunk_rows)


def survey_source(data: Any, column: str, mechanism: Mechanism | None = None, *, precise: bool = False
                  ) -> SurveySource:
    """``data`` as a :class:`SurveySource`: a path (str or path-like), a pandas DataFrame, or a sequence of answers
    (strings such as ``{yes}``, label tuples, or integers: column indices of ``mechanism``, frame indices with
    ``precise``), which becomes a one-column table named ``column``.

    Examples
    --------
    >>> from designer.estimation.survey_reading import survey_source
    >>> source = survey_source(["{yes}", "{no}"], "response")  # answers in memory: a one-column table
    >>> source.name, source.unit, source.frame["response"].tolist()
    ('data', 'row', ['{yes}', '{no}'])
    """
    if isinstance(data, (str, os.PathLike)):  # the caller has resolved a bundled file's name (verbs.estimate_verb)
        path = os.fspath(data)
        return SurveySource(path, path=path)
    import pandas as pd  # a frame or a sequence (a file is read without pandas when it is small)

    if isinstance(data, pd.DataFrame):
        return SurveySource("data", frame=data, unit="row")
    if isinstance(data, (bytes, Mapping)) or not isinstance(data, (Sequence, np.ndarray, pd.Series)):
        raise DataError(f"data must be a file path, a pandas DataFrame or a sequence of answers, not "
                        f"{type(data).__name__}")
    items = data.tolist() if hasattr(data, "tolist") else list(data)
    _refuse_ambiguous_integers(items, mechanism)
    answers = [_written(v, row, mechanism, precise) for row, v in enumerate(items, start=1)]
    return SurveySource("data", frame=pd.DataFrame({column: pd.Series(answers, dtype=object)}), unit="row")


def _refuse_ambiguous_integers(items: list[Any], mechanism: Mechanism | None) -> None:
    """Refuse integers in a sequence of answers when the mechanism's labels are integers too: an integer is read as
    an index of the mechanism, and ``1`` could as well be the answer labelled ``1`` (as the same value in a
    DataFrame's column or a file is): one reading would silently give the other's shares."""
    if mechanism is None:
        return
    labels = {str(x) for x in mechanism.frame} | {str(c).strip("{}") for c in mechanism.columns}
    said = sorted({str(int(v)) for v in items if isinstance(v, (int, np.integer)) and not isinstance(v, bool)}
                  & labels, key=lambda t: (len(t), t))
    if said:
        raise DataError(f"data: the integers of a sequence are indices of the mechanism, but its labels include "
                        f"{', '.join(map(repr, said[:3]))}{' ...' if len(said) > 3 else ''} too, so which is meant "
                        "is ambiguous: pass the answers as text (for a Series, .astype(str)) or as a DataFrame's "
                        "column, where a cell is always a label")


def _written(v: Any, row: int, mechanism: Mechanism | None, precise: bool) -> Any:
    """One answer of a sequence as a cell: label tuples as ``{a,b}``, an integer as the answer set (or, with
    ``precise``, the frame label) of that index of ``mechanism``, the rest as it is."""
    if isinstance(v, (tuple, list, set, frozenset)):
        return "{" + ",".join(map(str, v)) + "}"
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool) and mechanism is not None:
        names = mechanism.frame if precise else mechanism.columns
        if not 0 <= int(v) < len(names):
            raise DataError(f"data: row {row}: index {int(v)} out of range (the mechanism has {len(names)} "
                            f"{'labels' if precise else 'answer sets'})")
        return names[int(v)]
    return v


def _cell(v: Any) -> str:
    """A frame's cell as the text a CSV file would hold: missing values (None, NaN, NA) empty."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    if isinstance(v, (tuple, list, set, frozenset)):
        return "{" + ",".join(map(str, v)) + "}"
    try:
        import pandas as pd

        if v is pd.NA or v is pd.NaT:
            return ""
    except ImportError:  # pragma: no cover
        pass
    if isinstance(v, (float, np.floating)) and float(v).is_integer() and not isinstance(v, bool):
        return str(int(v))  # 3.0 as 3: a whole number read back from a float column
    return str(v).strip()


def _frame_chunks(name: str, frame: Any, columns: list[str], chunk_rows: int
                  ) -> Iterator[tuple[int, dict[str, NDArray[np.object_]]]]:
    """A frame's columns as text chunks, rows numbered from 1."""
    header = [str(c) for c in frame.columns]
    for col in columns:
        if col not in header:
            raise DataError(f"{name}: no column {col!r}; the columns are {header}")
        if header.count(col) > 1:
            raise DataError(f"{name}: two columns are named {col!r}; rename one of them")
    if len(frame) == 0:
        raise DataError(f"{name}: a table without rows")
    by_name = {str(c): c for c in frame.columns}
    for start in range(0, len(frame), chunk_rows):
        part = frame.iloc[start:start + chunk_rows]
        yield start + 1, {col: np.array([_cell(v) for v in part[by_name[col]].tolist()], dtype=object)
                          for col in columns}


def count_answers(source: SurveySource, column: str, vocabulary: AnswerVocabulary, *, missing: str = "error"
                  ) -> tuple[NDArray[np.float64], int]:
    """Answers per focal set (SLDP) or per frame label (WLDP, ``vocabulary.precise``), counted chunk by chunk,
    and the number of rows without an answer dropped (``missing="drop"``; with ``"error"`` the first is an error).

    Returns
    -------
    counts : (F,) or (l,) ndarray
    dropped : int

    Examples
    --------
    Four answers with a sampling-weight column (scaled to mean 1: 1, 2, 3 count as 0.5, 1, 1.5), one answer missing:

    >>> import os, tempfile
    >>> import designer
    >>> from designer.estimation.answers import AnswerVocabulary
    >>> from designer.estimation import survey_reading
    >>> folder = tempfile.TemporaryDirectory()
    >>> path = os.path.join(folder.name, "answers.csv")
    >>> with open(path, "w") as file:
    ...     _ = file.write("response,w\\n{yes},1\\n{no},2\\n,1\\n{no},3\\n")
    >>> source = survey_reading.survey_source(path, "response")
    >>> words = AnswerVocabulary(designer.Q_2x3(0.6, 0.2))
    >>> counts, dropped = survey_reading.count_answers(source, "response", words, missing="drop")
    >>> counts.tolist(), dropped  # {yes}, {no}, {yes,no}; the empty answer dropped
    ([1.0, 2.0, 0.0], 1)
    >>> folder.cleanup()
    """
    mech = vocabulary.mechanism
    counts = np.zeros(mech.l if vocabulary.precise else len(mech.focal))
    dropped = 0
    for line, chunk in source.chunks([column]):
        absent = absent_rows(source.name, line, chunk, [column], column, missing, unit=source.unit)
        dropped += int(absent.sum())
        codes = answer_codes(source.name, chunk[column], line, vocabulary, absent, unit=source.unit)
        counts += np.bincount(codes, minlength=counts.size)
    return counts, dropped


def partition_counts(path: str, column: str, mechanism: Mechanism, words: Mapping[str, Sequence[str]] | None,
                     precise: bool, missing: str) -> tuple[NDArray[np.float64], int]:
    """Answers per column of one part of a dataset, and the rows dropped: what each worker computes (the counts
    are sufficient for the shares, so the parts' sums give the whole dataset's estimate exactly).

    Examples
    --------
    One part of a Parquet dataset counted as a worker counts it:

    >>> import os, tempfile
    >>> import designer
    >>> from designer.estimation import survey_reading
    >>> from designer.tables import writers
    >>> folder = tempfile.TemporaryDirectory()
    >>> path = os.path.join(folder.name, "part.parquet")
    >>> with open(path, "wb") as binary:
    ...     sink = writers.table_sink(path, binary, ["response"])
    ...     sink.write([["{yes}", "{no}", "{no}"]])
    ...     sink.close()
    >>> counts, dropped = survey_reading.partition_counts(path, "response", designer.Q_2x3(0.6, 0.2), None, False,
    ...                                                   "error")
    >>> counts.tolist(), dropped
    ([1.0, 2.0, 0.0], 0)
    >>> folder.cleanup()
    """
    from .answers import AnswerVocabulary

    return count_answers(SurveySource(path, path=path), column, AnswerVocabulary(mechanism, words, precise=precise),
                         missing=missing)


def dataset_counts(source: SurveySource, column: str, vocabulary: AnswerVocabulary, words: Any, *,
                   missing: str = "error", parts_map: PartsMap | None = None) -> tuple[NDArray[np.float64], int]:
    """:func:`count_answers` of a file or a frame, or summed over the Parquet parts of a folder, each part by
    :func:`partition_counts` (through ``parts_map``, e.g. a cluster's, when given: the same counts exactly)."""
    if not source.is_folder:
        return count_answers(source, column, vocabulary, missing=missing)
    assert source.path is not None
    items = [(part, column, vocabulary.mechanism, dict(words or {}), vocabulary.precise, missing)
             for part in dataset_parts(source.path)]
    results = parts_map(partition_counts, items) if parts_map else [partition_counts(*item) for item in items]
    return np.sum([r[0] for r in results], axis=0), sum(int(r[1]) for r in results)


def row_weights(source: SurveySource, values: Any, lines: NDArray[np.int64], name: str) -> NDArray[np.float64]:
    """A weights column as positive floats; a bad cell is one error naming its line.

    Examples
    --------
    Four answers with a sampling-weight column (scaled to mean 1: 1, 2, 3 count as 0.5, 1, 1.5), one answer missing:

    >>> import os, tempfile
    >>> import designer
    >>> from designer.estimation.answers import AnswerVocabulary
    >>> from designer.estimation import survey_reading
    >>> folder = tempfile.TemporaryDirectory()
    >>> path = os.path.join(folder.name, "answers.csv")
    >>> with open(path, "w") as file:
    ...     _ = file.write("response,w\\n{yes},1\\n{no},2\\n,1\\n{no},3\\n")
    >>> source = survey_reading.survey_source(path, "response")
    >>> words = AnswerVocabulary(designer.Q_2x3(0.6, 0.2))
    >>> import numpy as np
    >>> survey_reading.row_weights(source, np.array(["1", "2.5"], dtype=object), np.array([2, 3]), "w").tolist()
    [1.0, 2.5]
    >>> survey_reading.row_weights(source, np.array(["1", "-2"], dtype=object), np.array([2, 3]), "w")
    Traceback (most recent call last):
    ...
    designer.exceptions.DataError: ...: line 3: weight '-2' in column 'w' is not a positive number; ...
    >>> folder.cleanup()
    """
    from ..tables.inputs import numbers
    from .survey_design import first_bad_weight

    values = np.asarray(values, dtype=object)
    out = numbers(values)
    bad = first_bad_weight(out)
    if bad is not None:
        raise DataError(f"{source.name}: {source.unit} {lines[bad]}: weight {values[bad]!r} in column {name!r} "
                        "is not a positive number; every weight must be > 0")
    return out


def read_survey(source: SurveySource, column: str, vocabularies: Mapping[str, AnswerVocabulary], offsets: list[int],
                n_columns: int, *, group: str | None = None, weights: str | None = None,
                weight_kind: Any = "sampling", cluster: str | None = None, missing: str = "error"
                ) -> tuple[SurveyCounts, int]:
    """Every row's answer (group ``g``'s answers at column ``offsets[g]`` on), weight and cluster, read chunk by
    chunk, as :class:`~designer.estimation.survey_design.SurveyCounts` over ``n_columns`` columns, and the rows
    dropped.

    Parameters
    ----------
    source : SurveySource
    column : str
        The answers' column.
    vocabularies : mapping of str to AnswerVocabulary
        Each group's answers (one group ``""`` without ``group``), in the order of ``offsets``.
    offsets : list of int
        Each group's first column among the stacked ``n_columns``
        (:func:`designer.estimation.groups.stack_mechanisms`).
    n_columns : int
    group, weights, cluster : str, optional
        The columns naming each row's group, its positive weight and its cluster.
    weight_kind : {"sampling", "frequency"}
    missing : {"error", "drop"}
        A row without an answer, group, weight or cluster: an error naming its line, or dropped (and counted).

    Examples
    --------
    Four answers with a sampling-weight column (scaled to mean 1: 1, 2, 3 count as 0.5, 1, 1.5), one answer missing:

    >>> import os, tempfile
    >>> import designer
    >>> from designer.estimation.answers import AnswerVocabulary
    >>> from designer.estimation import survey_reading
    >>> folder = tempfile.TemporaryDirectory()
    >>> path = os.path.join(folder.name, "answers.csv")
    >>> with open(path, "w") as file:
    ...     _ = file.write("response,w\\n{yes},1\\n{no},2\\n,1\\n{no},3\\n")
    >>> source = survey_reading.survey_source(path, "response")
    >>> words = AnswerVocabulary(designer.Q_2x3(0.6, 0.2))
    >>> counts, dropped = survey_reading.read_survey(source, "response", {"": words}, [0], 3, weights="w",
    ...                                             missing="drop")
    >>> counts.weighted.tolist(), counts.rows, dropped
    ([0.5, 2.5, 0.0], 3, 1)
    >>> folder.cleanup()
    """
    from .survey_design import SurveyCounts

    offset = dict(zip(vocabularies, offsets))
    extra = [c for c in (group, weights, cluster) if c]
    first = next(iter(vocabularies))
    codes, weight_parts, clusters, dropped = [], [], [], 0
    for line, chunk in source.chunks([column, *extra]):
        absent = absent_rows(source.name, line, chunk, [column, *extra], column, missing, unit=source.unit)
        dropped += int(absent.sum())
        kept = {name: values[~absent] for name, values in chunk.items()}
        lines = line + np.flatnonzero(~absent)
        names = kept[group] if group else np.full(len(kept[column]), first, dtype=object)
        unknown = [i for i, g in enumerate(names) if g not in vocabularies]
        if unknown:
            raise DataError(f"{source.name}: {source.unit} {lines[unknown[0]]}: group {names[unknown[0]]!r} in column "
                            f"{group!r} has no mechanism; the groups are {list(vocabularies)}")
        out = np.zeros(len(kept[column]), dtype=np.int64)
        for name, vocabulary in vocabularies.items():
            rows = np.flatnonzero(names == name)
            if rows.size:
                out[rows] = offset[name] + answer_codes(source.name, kept[column][rows], int(lines[rows[0]]),
                                                        vocabulary, unit=source.unit)
        codes.append(out)
        if weights:
            weight_parts.append(row_weights(source, kept[weights], lines, weights))
        if cluster:
            clusters.append(kept[cluster])
    all_codes = np.concatenate(codes) if codes else np.zeros(0, dtype=np.int64)
    if all_codes.size == 0:
        raise DataError(f"{source.name}: no answers to estimate from")
    every_weight = np.concatenate(weight_parts) if weight_parts else None
    with np.errstate(over="ignore"):
        total = float(np.sum(every_weight)) if every_weight is not None else 0.0
    if not math.isfinite(total):
        raise DataError(f"{source.name}: the weights in column {weights!r} add up to more than the largest number "
                        f"({np.finfo(np.float64).max:.4g}); divide them all by a common factor")
    try:
        return SurveyCounts.from_rows(n_columns, all_codes,
                                      weights=every_weight,
                                      weight_kind=weight_kind,
                                      cluster=np.concatenate(clusters) if clusters else None), dropped
    except DesignerError as exc:
        raise DataError(f"{source.name}: {exc}") from None
