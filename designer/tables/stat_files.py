"""SPSS, Stata and SAS files (the files survey data arrives in): read in chunks with their value labels applied,
and written (SPSS, Stata) with the labels of the columns a command keeps.

The metadata (names, value labels, descriptions) and the rows of SPSS and SAS files come from pyreadstat, the rows
of Stata files from pandas' reader; every read runs in a child process, so a reader that crashes on a damaged file
is one error line. pyreadstat is imported where a file is opened, never when the CLI starts.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, BinaryIO

from ..exceptions import DataError

__all__ = ["READERS", "WRITERS", "ColumnMeta", "StatFile", "StatSink"]

#: Readers by extension: the pyreadstat function and the package's name for messages.
READERS = {".sav": ("read_sav", "SPSS"), ".zsav": ("read_sav", "SPSS"), ".por": ("read_por", "SPSS portable"),
           ".dta": ("read_dta", "Stata"), ".sas7bdat": ("read_sas7bdat", "SAS"),
           ".xpt": ("read_xport", "SAS transport")}
#: Extensions written (value labels kept), with the package's name.
WRITERS = {".sav": "SPSS", ".zsav": "SPSS", ".dta": "Stata"}


def _suffix(path: str) -> str:
    return os.path.splitext(str(path).lower())[1]


def _pyreadstat(path: str) -> Any:
    try:
        import pyreadstat
    except ImportError:
        raise DataError(f"{path}: reading and writing SPSS, Stata and SAS files needs pyreadstat: "
                           "pip install pyreadstat") from None
    return pyreadstat


def _number_text(value: float) -> str:
    """A code as a CSV cell would hold it: ``1`` for 1.0, ``1.5`` for 1.5."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


@dataclasses.dataclass(frozen=True)
class ColumnMeta:
    """What a statistics package's file says about its columns beyond their values.

    Attributes
    ----------
    value_labels : dict of str to dict of float to str
        A labelled number column's codes and their labels (``{"smoke": {1.0: "yes", 2.0: "no"}}``); the labels of a
        text column (SPSS's string variables) are applied as its file is read (:class:`StatFile`), not kept here.
    column_labels : dict of str to str
        Each column's description (SPSS's variable label, Stata's variable label).
    numeric : frozenset of str
        The columns stored as numbers (written back as numbers, not text).
    integer : frozenset of str
        Those of them stored as whole numbers (a Parquet or Arrow file's integer columns: written back as integers).

    Examples
    --------
    >>> from designer.tables.stat_files import ColumnMeta
    >>> meta = ColumnMeta(value_labels={"smoke": {1.0: "yes", 2.0: "no"}}, column_labels={"smoke": "Do you smoke?"})
    >>> meta.only(["smoke"]).column_labels, meta.only(["id"]).value_labels
    ({'smoke': 'Do you smoke?'}, {})
    """

    value_labels: Mapping[str, Mapping[float, str]] = dataclasses.field(default_factory=dict)
    column_labels: Mapping[str, str] = dataclasses.field(default_factory=dict)
    numeric: frozenset[str] = frozenset()
    integer: frozenset[str] = frozenset()

    def only(self, columns: list[str]) -> ColumnMeta:
        """The metadata of ``columns`` alone."""
        keep = set(columns)
        return ColumnMeta({c: v for c, v in self.value_labels.items() if c in keep},
                          {c: v for c, v in self.column_labels.items() if c in keep}, self.numeric & keep,
                          self.integer & keep)


class StatFile:
    """An SPSS (``.sav``, ``.zsav``, ``.por``), Stata (``.dta``) or SAS (``.sas7bdat``, ``.xpt``) file read as Arrow
    record batches: a labelled column as its labels (a code without a label as its number's text, a missing
    value null), other columns as stored (numbers, text, dates). A text column's labels (an SPSS string variable's,
    ``{"Y": "yes"}`` in pyreadstat's ``variable_value_labels``) are applied to its text as it is read, by every
    reader of the file alike (a value without a label stays as written).

    Parameters
    ----------
    path : str
        The file; its extension names the format (:data:`READERS`).

    Examples
    --------
    >>> import os, tempfile
    >>> from designer.tables.stat_files import ColumnMeta, StatFile, StatSink
    >>> meta = ColumnMeta(value_labels={"smoke": {1.0: "yes", 2.0: "no"}}, column_labels={"smoke": "Do you smoke?"})
    >>> folder = tempfile.TemporaryDirectory()
    >>> path = os.path.join(folder.name, "survey.sav")
    >>> with open(path, "wb") as binary:
    ...     sink = StatSink(path, binary, ["id", "smoke"], meta=meta)
    ...     sink.write([[1, 2, 3], ["yes", "no", "yes"]])
    ...     sink.close()
    >>> survey = StatFile(path)
    >>> survey.names, survey.num_rows, survey.meta.column_labels
    (['id', 'smoke'], 3, {'smoke': 'Do you smoke?'})
    >>> survey.read_table().to_pydict()["smoke"]  # a labelled column reads as its labels
    ['yes', 'no', 'yes']
    >>> folder.cleanup()
    """

    def __init__(self, path: str) -> None:
        from .._internal.io import opening_errors

        self.path = path
        name, self.kind = READERS[_suffix(path)]
        self._read = getattr(_pyreadstat(path), name)
        with opening_errors(path, DataError):
            if not os.path.isfile(path):
                open(path, "rb").close()  # the missing file's or the folder's own message
        self.names, self.num_rows, self.meta = self._one(lambda: [self._metadata()])

    def _metadata(self) -> tuple[list[str], int | None, ColumnMeta]:
        _, meta = self._call(metadataonly=True)
        rows = meta.number_rows
        names = ["" if c is None else str(c) for c in meta.column_names]  # no name: refused by column_names
        return names, int(rows) if rows is not None and rows >= 0 else None, ColumnMeta(
            value_labels={str(c): {float(k): str(v) for k, v in labels.items()}
                          for c, labels in (meta.variable_value_labels or {}).items() if not _text_keyed(labels)},
            column_labels={str(c): str(v) for c, v in (meta.column_names_to_labels or {}).items() if v},
            numeric=frozenset(str(c) for c, t in (meta.readstat_variable_types or {}).items() if t != "string"))

    def _one(self, produce: Callable[[], Iterable[Any]]) -> Any:
        """The one item ``produce`` yields, computed in a child process (:meth:`_isolated`)."""
        items = list(self._isolated(produce))
        if len(items) != 1:
            raise DataError(f"{self.path}: not a readable {self.kind} file (its reader gave no answer)")
        return items[0]

    def _isolated(self, produce: Callable[[], Iterable[Any]]) -> Iterator[Any]:
        """What ``produce`` yields, computed in a forked child process: the C reader under pyreadstat crashes
        (segmentation fault) on some damaged files, which would take designer down without a word. A crash, or
        any error in the child, is one error line here."""
        if not hasattr(os, "fork"):
            yield from produce()
            return
        import pickle
        import signal

        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: never returns into the caller's code
            try:
                os.close(read_end)
                import faulthandler

                faulthandler.disable()  # a crash is reported by the parent, in one line
                os.dup2(os.open(os.devnull, os.O_WRONLY), 2)
                with os.fdopen(write_end, "wb") as out:
                    try:
                        for item in produce():
                            pickle.dump(("item", item), out, protocol=pickle.HIGHEST_PROTOCOL)
                    except DataError as exc:
                        pickle.dump(("error", str(exc)), out)
                    except BaseException as exc:  # reported by the parent as the file's fault
                        detail = " ".join(str(exc).split())[:200] or type(exc).__name__
                        pickle.dump(("error", f"{self.path}: not a readable {self.kind} file ({detail})"), out)
            finally:
                os._exit(0)
        os.close(write_end)
        finished = False
        try:
            with os.fdopen(read_end, "rb") as inp:
                while True:
                    try:
                        tag, value = pickle.load(inp)
                    except EOFError:
                        break
                    except pickle.UnpicklingError:  # the child died mid-item
                        break
                    if tag == "error":
                        raise DataError(value)
                    yield value
            finished = True
        finally:
            if not finished:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status):
            crash = signal.Signals(os.WTERMSIG(status)).name
            raise DataError(f"{self.path}: not a readable {self.kind} file (its reader stopped with {crash}: the "
                               "file is damaged or not what its extension says)")

    def _call(self, **kwargs: Any) -> Any:
        try:
            return self._read(self.path, **kwargs)
        except Exception as exc:  # pyreadstat's ReadstatError, PyreadstatError, and a decoder's own
            detail = " ".join(str(exc).split())[:200] or type(exc).__name__
            raise DataError(f"{self.path}: not a readable {self.kind} file ({detail})") from None

    def _batch(self, frame: Any) -> Any:
        """A pyreadstat chunk as an Arrow record batch, labels applied (in numpy's and Arrow's loops)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        arrays = []
        for name in frame.columns:
            column = frame[name]
            labels = self.meta.value_labels.get(str(name))
            if labels and column.dtype.kind in "fiu":
                arrays.append(pa.array(_labelled(column.to_numpy(dtype=float), labels), type=pa.string()))
            elif labels:
                arrays.append(pa.array([_label(v, labels) for v in column.tolist()], type=pa.string()))
            elif column.dtype == object:
                text = pa.array(column.map(lambda v: None if v is None else str(v)), type=pa.string(),
                                from_pandas=True)
                arrays.append(pc.if_else(pc.equal(text, ""), pa.scalar(None, pa.string()), text))
            else:
                arrays.append(pa.array(column.to_numpy(), from_pandas=True))
        return pa.RecordBatch.from_arrays(arrays, names=[str(c) for c in frame.columns])

    def _frames(self, batch_size: int, columns: list[str] | None) -> Iterator[Any]:
        """The file's rows as pandas frames of at most ``batch_size`` rows (``columns``: all when ``None``): a Stata
        file through pandas' own reader (numpy loops, about 15 times faster than pyreadstat's here), the others
        through pyreadstat, ``batch_size`` rows a call."""
        if _suffix(self.path) == ".dta":
            import pandas as pd

            try:
                with pd.read_stata(self.path, columns=columns, convert_categoricals=False, iterator=True,
                                   chunksize=batch_size) as reader:
                    yield from reader
            except Exception as exc:  # pandas' ValueError, struct.error, a decoder's error on a damaged file
                detail = " ".join(str(exc).split())[:200] or type(exc).__name__
                raise DataError(f"{self.path}: not a readable {self.kind} file ({detail})") from None
            return
        offset = 0
        while True:
            frame, meta = self._call(usecols=columns, row_offset=offset, row_limit=batch_size)
            if len(frame) == 0 and offset > 0:
                return
            yield _text_labelled(frame, meta.variable_value_labels or {})
            offset += len(frame)
            if len(frame) < batch_size or (self.num_rows is not None and offset >= self.num_rows):
                return

    def iter_batches(self, batch_size: int, columns: list[str]) -> Iterator[Any]:
        """Record batches of at most ``batch_size`` rows holding ``columns``, read ``batch_size`` rows at a time."""
        import pyarrow as pa

        wanted = list(dict.fromkeys(columns))

        def batches() -> Iterator[Any]:
            empty = True
            for frame in self._frames(batch_size, wanted):
                empty = False
                yield self._batch(frame[wanted]).select(columns)
            if empty:  # no rows: the columns alone
                yield pa.RecordBatch.from_arrays([pa.array([], type=pa.string()) for _ in columns], names=columns)
        yield from self._isolated(batches)

    def read_table(self) -> Any:
        """The whole file as an Arrow table, labels applied."""
        import pyarrow as pa

        def table() -> list[Any]:
            rows = max(self.num_rows or 0, 1 << 20)  # one frame: one type a column
            batches = [self._batch(frame) for frame in self._frames(rows, None)]
            if not batches:
                return [pa.table({name: pa.array([], type=pa.string()) for name in self.names})]
            return [pa.Table.from_batches(batches)]
        return self._one(table)


#: Column names each format accepts (SPSS: a letter or @#$ first, 64 characters; Stata: 32, letters, digits, _).
_NAMES = {"SPSS": re.compile(r"[A-Za-z@#$][A-Za-z0-9_.@#$]{0,63}"), "Stata": re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,31}")}
_SPSS_RESERVED = {"ALL", "AND", "BY", "EQ", "GE", "GT", "LE", "LT", "NE", "NOT", "OR", "TO", "WITH"}


class StatSink:
    """Chunks of columns into one SPSS (``.sav``, ``.zsav`` compressed) or Stata (``.dta``) file.

    A column of ``meta.value_labels`` is written as its codes with its labels (a word of the labels as its
    code, a number's text as the number, an empty cell missing; a column holding another word is written as
    text without labels); a column of ``meta.numeric`` as numbers; every other column as text. pyreadstat
    writes a whole table at once, so the rows are held until :meth:`close`.

    Parameters
    ----------
    path : str
        The output's name (its extension names the format, :data:`WRITERS`).
    binary : binary file
        Where the bytes go (an :func:`~designer._internal.io.atomic_writer`).
    names : list of str
        The columns, in order; refused in one line when the format does not accept one.
    meta : ColumnMeta, optional
        Labels, descriptions and numeric columns to keep (:func:`~.writers.column_meta` of the input).
    typed : bool
        Columns as their arrays' own types (numbers as numbers), as ``synthesize`` writes.

    Examples
    --------
    An SPSS file of two columns, the answers stored as labelled codes (read back by :class:`StatFile`):

    >>> import os, tempfile
    >>> from designer.tables.stat_files import ColumnMeta, StatFile, StatSink
    >>> meta = ColumnMeta(value_labels={"smoke": {1.0: "yes", 2.0: "no"}}, column_labels={"smoke": "Do you smoke?"})
    >>> folder = tempfile.TemporaryDirectory()
    >>> path = os.path.join(folder.name, "survey.sav")
    >>> with open(path, "wb") as binary:
    ...     sink = StatSink(path, binary, ["id", "smoke"], meta=meta)
    ...     sink.write([[1, 2, 3], ["yes", "no", "yes"]])
    ...     sink.close()
    >>> StatFile(path).meta.value_labels
    {'smoke': {1.0: 'yes', 2.0: 'no'}}
    >>> folder.cleanup()
    """

    def __init__(self, path: str, binary: BinaryIO, names: list[str], *, meta: ColumnMeta | None = None,
                 typed: bool = False) -> None:
        self.path, self.binary, self.names, self.typed = path, binary, list(names), typed
        self.kind = WRITERS[_suffix(path)]
        self.meta = meta or ColumnMeta()
        self._pyreadstat = _pyreadstat(path)
        for name in self.names:
            if not _NAMES[self.kind].fullmatch(name) or (self.kind == "SPSS" and name.upper() in _SPSS_RESERVED):
                rule = ("a letter or @#$ first, then letters, digits, _.@#$, at most 64" if self.kind == "SPSS" else
                        "a letter or _ first, then letters, digits and _, at most 32")
                raise DataError(f"{path}: {self.kind} cannot name a column {name!r} ({rule}); rename it in the "
                                   "input, or write CSV or Parquet")
        self.columns: list[list[Any]] = [[] for _ in self.names]

    def write(self, columns: list[Any]) -> None:
        for held, column in zip(self.columns, columns):
            held.extend(column.tolist() if hasattr(column, "tolist") else list(column))

    def _column(self, name: str, values: list[Any]) -> tuple[Any, dict[float, str] | None]:
        """One column as pyreadstat writes it, and the labels kept for it (``None``: none)."""
        import numpy as np
        import pandas as pd

        labels = self.meta.value_labels.get(name)
        if labels:
            codes = {word: code for code, word in labels.items()}
            out = []
            for v in values:
                text = "" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v)
                code = codes.get(text, math.nan if text == "" else _as_number(text))
                if code is None:
                    break
                out.append(code)
            else:
                whole = all(float(c).is_integer() for c in labels) and all(
                    math.isnan(c) or float(c).is_integer() for c in out)
                if self.kind == "Stata" and not whole:  # Stata labels integers only
                    return pd.Series(out, dtype=float), None
                return pd.Series(out, dtype=float), {(int(c) if whole else c): w for c, w in labels.items()}
        if name in self.meta.numeric or self.typed:
            numbers = [math.nan if v is None or v == "" else _as_number(str(v)) if isinstance(v, str) else v
                       for v in values]
            if all(isinstance(v, (int, float, np.number)) and not isinstance(v, bool) for v in numbers):
                return pd.Series(numbers, dtype=float), None
        return pd.Series(["" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v) for v in values],
                         dtype=object), None

    def close(self) -> None:
        import shutil
        import tempfile

        import pandas as pd

        data, labels = {}, {}
        for name, values in zip(self.names, self.columns):
            data[name], kept = self._column(name, values)
            if kept:
                labels[name] = kept
        frame = pd.DataFrame(data, columns=self.names)
        descriptions = {n: self.meta.column_labels[n] for n in self.names if n in self.meta.column_labels}
        with tempfile.TemporaryDirectory(prefix="designer-") as folder:
            scratch = os.path.join(folder, "out" + _suffix(self.path))
            try:
                if self.kind == "SPSS":
                    self._pyreadstat.write_sav(frame, scratch, compress=_suffix(self.path) == ".zsav",
                                               variable_value_labels=labels or None,
                                               column_labels=descriptions or None)
                else:
                    self._pyreadstat.write_dta(frame, scratch, variable_value_labels=labels or None,
                                               column_labels=descriptions or None)
            except Exception as exc:  # pyreadstat's refusal of a value the format cannot hold
                detail = " ".join(str(exc).split())[:200] or type(exc).__name__
                raise DataError(f"{self.path}: cannot be written as a {self.kind} file ({detail}); write CSV or "
                                   "Parquet") from None
            with open(scratch, "rb") as fh:
                shutil.copyfileobj(fh, self.binary)


def _text_keyed(labels: Mapping[Any, Any]) -> bool:
    """Whether value labels are a text column's (an SPSS string variable's: text values, not number codes)."""
    return any(isinstance(k, str) for k in labels)


def _text_labelled(frame: Any, labels: Mapping[Any, Mapping[Any, Any]]) -> Any:
    """``frame`` with each text column's labels applied to its text (a value without a label kept as written)."""
    for name, coded in labels.items():
        if name in frame.columns and _text_keyed(coded):
            words = {str(k): str(v) for k, v in coded.items()}
            frame[name] = frame[name].map(lambda v, w=words: w.get(v, v) if isinstance(v, str) else v)
    return frame


def _labelled(codes: Any, labels: Mapping[float, str]) -> Any:
    """Codes as words: each code's label, a code without one as its number's text, NaN as ``None``."""
    import numpy as np

    keys = np.array(sorted(labels), dtype=float)
    words = np.array([labels[k] for k in sorted(labels)], dtype=object)
    out = np.full(codes.shape, None, dtype=object)
    present = ~np.isnan(codes)
    at = np.clip(np.searchsorted(keys, codes), 0, max(len(keys) - 1, 0))
    found = present & (keys[at] == codes) if len(keys) else np.zeros(codes.shape, dtype=bool)
    out[found] = words[at[found]]
    other = np.flatnonzero(present & ~found)
    out[other] = [_number_text(float(v)) for v in codes[other]]
    return out


def _label(value: Any, labels: Mapping[float, str]) -> str | None:
    """A labelled column's cell as a word: its code's label, a code without one as its number, missing as ``None``."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return labels.get(float(value), _number_text(float(value)))
    return str(value) or None


def _as_number(text: str) -> float | None:
    """The number a cell's text writes, or ``None`` when it is not a finite number."""
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None
