"""Evidential privacy mechanisms: one mass function on the output frame per input.

A mechanism ``Q`` maps input ``x`` to a random *set* ``E`` of outputs with probability ``m_x(E)``
(paper, Sec. 3: "evidential privacy mechanism"). It is stored sparsely: the focal sets as bitmasks
(bit ``i`` = frame element ``i``) and a ``(k, F)`` matrix of masses, one row per input. The dense
``(k, 2**l)`` form, with column ``E`` holding ``m_x(E)``, is built on request.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import setfunctions as sf
from ._internal import formats
from ._internal.bundled import resolve
from ._internal.formats import ROW_SUM_TOL, check_masses
from ._internal.io import atomic_write_text, read_text
from ._internal.validation import check_labels, format_set, parse_set
from .exceptions import InvalidArgumentTypeError, InvalidMechanismError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["MAX_DENSE_CELLS", "ROW_SUM_TOL", "Mechanism"]

#: Largest dense set function (inputs x 2**l values) built: about 80 bytes per value at the peak of an
#: audit (masses, bel, pl and the ratio tables), so about 5 GiB.
MAX_DENSE_CELLS = 1 << 26

# Frames up to this size keep bitmasks in int64; larger ones (products of frames) use Python ints.
_INT64_FRAME = 62


def _mask_array(masks: Sequence[int], l: int) -> NDArray[Any]:
    if l <= _INT64_FRAME:
        return np.asarray([int(m) for m in masks], dtype=np.int64)
    out = np.empty(len(masks), dtype=object)
    out[:] = [int(m) for m in masks]
    return out


class Mechanism:
    """An evidential privacy mechanism ``Q``: a mass function ``m_x`` on the frame ``Y`` per input ``x``.

    Parameters
    ----------
    mass : (k, 2**l) or (k, F) array_like
        Without ``focal``: the dense mass matrix, column ``E`` (a bitmask, bit ``i`` = ``frame[i]``)
        holding ``m_x(E)``; column 0 (the empty set) must be 0. With ``focal``: one column per focal set.
    inputs : sequence of str, optional
        Labels of the ``k`` inputs ``X`` (default ``x0, x1, ...``).
    frame : sequence of str, optional
        Labels of the ``l`` outputs ``Y`` (default ``y0, y1, ...``).
    focal : sequence of int, optional
        Bitmasks of the ``F`` columns of ``mass`` (sparse form). Each must be a nonempty subset of the
        frame and appear once.

    Raises
    ------
    InvalidMechanismError
        Wrong shapes, NaN or infinite entries, negative mass, mass on the empty set, rows not summing
        to 1 within ``1e-9``, duplicate labels or duplicate focal sets.

    Notes
    -----
    Rows are kept as given (no renormalisation); columns that are zero in every row are dropped, and
    the focal sets are sorted by bitmask. Arrays exposed by the object are read-only.

    Examples
    --------
    >>> from designer import Mechanism
    >>> q = Mechanism([[0, 0.6, 0.2, 0.2], [0, 0.2, 0.6, 0.2]], inputs=["yes", "no"], frame=["yes", "no"])
    >>> q.focal_sets
    [('yes',), ('no',), ('yes', 'no')]
    """

    __slots__ = ("_focal", "_frame", "_inputs", "_matrix")

    def __init__(
        self,
        mass: ArrayLike,
        *,
        inputs: Sequence[str] | None = None,
        frame: Sequence[str] | None = None,
        focal: Sequence[int] | NDArray[Any] | None = None,
    ) -> None:
        try:
            matrix = np.array(mass, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise InvalidMechanismError(f"the mass matrix must be numeric: {exc}") from None
        if matrix.ndim != 2 or matrix.shape[0] == 0 or matrix.shape[1] == 0:
            raise InvalidMechanismError(
                f"the mass matrix must be 2-D with one row per input, got shape {matrix.shape}"
            )
        k = matrix.shape[0]
        if focal is None:
            try:
                l_dense = sf.frame_size(matrix.shape[1])
            except ValueError:
                raise InvalidMechanismError(
                    f"a dense mass matrix has 2**l columns (one per subset of the frame), got "
                    f"{matrix.shape[1]}; pass focal= to give the columns' sets"
                ) from None
            if frame is not None and len(frame) != l_dense:
                raise InvalidMechanismError(
                    f"{matrix.shape[1]} columns mean a frame of {l_dense} elements, but {len(frame)} "
                    "frame labels were given"
                )
            masks = list(range(matrix.shape[1]))
        else:
            masks = [self._check_mask(m) for m in np.asarray(focal, dtype=object).ravel()]
            if len(masks) != matrix.shape[1]:
                raise InvalidMechanismError(
                    f"{len(masks)} focal sets for a mass matrix of {matrix.shape[1]} columns"
                )
            l_dense = max((m.bit_length() for m in masks), default=0)
            if frame is not None:
                if l_dense > len(frame):
                    raise InvalidMechanismError(
                        f"focal set mask {max(masks)} is not a subset of a frame of {len(frame)} elements"
                    )
                l_dense = len(frame)
            if len(set(masks)) != len(masks):
                raise InvalidMechanismError("a focal set appears twice among the columns")
        l = l_dense
        if l == 0:
            raise InvalidMechanismError("the frame must have at least one element")

        self._inputs = check_labels(
            [f"x{i}" for i in range(k)] if inputs is None else inputs, "inputs",
            error=InvalidMechanismError,
        )
        if len(self._inputs) != k:
            raise InvalidMechanismError(f"{len(self._inputs)} input labels for {k} rows of mass")
        self._frame = check_labels(
            [f"y{i}" for i in range(l)] if frame is None else frame, "frame",
            error=InvalidMechanismError,
        )
        check_masses(matrix, masks, self._inputs, self._frame)

        nonzero = np.any(matrix != 0, axis=0)
        keep = [j for j in np.flatnonzero(nonzero).tolist() if masks[j] != 0]
        order = sorted(keep, key=masks.__getitem__)
        self._focal = _mask_array([masks[j] for j in order], l)
        self._matrix = matrix[:, order].copy()
        self._focal.setflags(write=False)
        self._matrix.setflags(write=False)

    @staticmethod
    def _check_mask(mask: object) -> int:
        try:
            value = int(mask)  # type: ignore[call-overload]
        except (TypeError, ValueError):
            raise InvalidMechanismError(f"focal set masks must be integers, got {mask!r}") from None
        if value != mask or value <= 0:
            raise InvalidMechanismError(
                f"focal set masks must be positive integers (nonempty subsets), got {mask!r}"
            )
        return value

    # ------------------------------------------------------------------ basic views
    @property
    def inputs(self) -> tuple[str, ...]:
        """Labels of the inputs ``X``, one per row."""
        return self._inputs

    @property
    def frame(self) -> tuple[str, ...]:
        """Labels of the output frame ``Y``; bit ``i`` of a mask is ``frame[i]``."""
        return self._frame

    @property
    def k(self) -> int:
        """Number of inputs."""
        return len(self._inputs)

    @property
    def l(self) -> int:
        """Number of frame elements."""
        return len(self._frame)

    @property
    def focal(self) -> NDArray[Any]:
        """``(F,)`` bitmasks of the focal sets (union over rows), sorted."""
        return self._focal

    @property
    def matrix(self) -> NDArray[np.float64]:
        """``(k, F)`` masses: ``matrix[x, j] = m_x(focal[j])``."""
        return self._matrix

    @property
    def focal_sets(self) -> list[tuple[str, ...]]:
        """The focal sets as tuples of frame labels (frame order), one per column of ``matrix``."""
        return [sf.mask_labels(m, self._frame) for m in self._focal]

    @property
    def columns(self) -> list[str]:
        """Column headers ``{yes}``, ``{yes,no}``, ... of the focal sets."""
        return [format_set(s) for s in self.focal_sets]

    @property
    def is_bayesian(self) -> bool:
        """True when every focal set is a singleton: an ordinary randomized-response mechanism."""
        return bool(np.all(sf.popcount(self._focal) == 1))

    def input_index(self, label: str) -> int:
        """Row index of input ``label``."""
        try:
            return self._inputs.index(str(label))
        except ValueError:
            raise InvalidMechanismError(
                f"unknown input {label!r}: the inputs are {list(self._inputs)}"
            ) from None

    def subset(self, labels: Sequence[str] | str) -> int:
        """Bitmask of a subset of the frame given by labels (a single label is a singleton)."""
        if isinstance(labels, str):
            labels = [labels]
        try:
            return sf.subset_mask(labels, self._frame)
        except ValueError as exc:
            raise InvalidMechanismError(str(exc)) from None

    def row(self, x: str | int) -> dict[tuple[str, ...], float]:
        """The mass function of one input as ``{focal set: mass}`` (nonzero masses only)."""
        i = self.input_index(x) if isinstance(x, str) else int(x)
        return {s: float(v) for s, v in zip(self.focal_sets, self._matrix[i]) if v != 0}

    # ------------------------------------------------------------------ dense set functions
    def _check_dense(self) -> None:
        if self.l > sf.MAX_DENSE_FRAME:
            raise InvalidMechanismError(
                f"the frame has {self.l} elements: its 2**{self.l} subsets are too many for dense set "
                f"functions (limit l <= {sf.MAX_DENSE_FRAME}); post-process it to a smaller frame"
            )
        if self.k * (1 << min(self.l, 62)) > MAX_DENSE_CELLS:
            raise InvalidMechanismError(
                f"{self.k} inputs x 2**{self.l} events is {self.k * 2.0**self.l:.3g} values per set function, beyond "
                f"the {MAX_DENSE_CELLS:.3g} that fit in memory with room for the loss computations (about 8 GiB); "
                "post-process the mechanism to a smaller frame, or audit fewer inputs at a time"
            )

    @property
    def mass(self) -> NDArray[np.float64]:
        """Dense ``(k, 2**l)`` mass matrix, column = subset bitmask (column 0 = empty set = 0)."""
        self._check_dense()
        dense = np.zeros((self.k, 1 << self.l))
        dense[:, self._focal.astype(np.int64)] = self._matrix
        return dense

    def bel(self) -> NDArray[np.float64]:
        """``(k, 2**l)`` belief functions ``bel_x(E) = sum_{B subset E} m_x(B)``."""
        return sf.bel_from_mass(self.mass)

    def pl(self) -> NDArray[np.float64]:
        """``(k, 2**l)`` plausibility functions ``pl_x(E) = sum_{B meets E} m_x(B)``.

        Summed without cancellation (:func:`~designer.setfunctions.pl_from_mass`): entries no focal set of
        row ``x`` meets are exactly 0, so ``0/0`` is recognised in privacy losses, and tiny ones are accurate.
        """
        return sf.pl_from_mass(self.mass)

    def commonality(self) -> NDArray[np.float64]:
        """``(k, 2**l)`` commonality functions ``q_x(E) = sum_{B superset E} m_x(B)``."""
        return sf.commonality_from_mass(self.mass)

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_dict(
        cls,
        rows: Mapping[str, Mapping[Any, float]],
        *,
        frame: Sequence[str] | None = None,
    ) -> Mechanism:
        """Build a mechanism from ``{input: {focal set: mass}}``.

        A focal set is a tuple/list/frozenset of frame labels, a single label, or a header string
        such as ``"{yes,no}"``. Without ``frame`` the frame is the labels in order of first appearance.

        Examples
        --------
        >>> from designer import Mechanism
        >>> q = Mechanism.from_dict({"yes": {"yes": 0.75, "no": 0.25}, "no": {"yes": 0.25, "no": 0.75}})
        >>> q.frame
        ('yes', 'no')
        """
        if not isinstance(rows, Mapping) or not rows:
            raise InvalidMechanismError("rows must be a non-empty mapping {input: {focal set: mass}}")
        parsed: list[dict[tuple[str, ...], float]] = []
        seen_labels: list[str] = []
        for x, row in rows.items():
            if not isinstance(row, Mapping):
                raise InvalidMechanismError(f"input {x!r}: expected a mapping {{focal set: mass}}")
            out: dict[tuple[str, ...], float] = {}
            for key, value in row.items():
                labels = _set_key(key)
                if not labels:
                    raise InvalidMechanismError(f"input {x!r}: the empty set cannot carry mass")
                canon = tuple(labels)
                if frozenset(canon) in {frozenset(c) for c in out}:
                    raise InvalidMechanismError(f"input {x!r}: focal set {format_set(canon)} given twice")
                out[canon] = formats.number(value, f"input {x!r}, set {format_set(canon)}")
                for label in canon:
                    if label not in seen_labels:
                        seen_labels.append(label)
            parsed.append(out)
        frame_t = tuple(seen_labels) if frame is None else tuple(str(f) for f in frame)
        masks: list[int] = []
        index: dict[int, int] = {}
        for row in parsed:
            for s in row:
                try:
                    m = sf.subset_mask(s, frame_t)
                except ValueError as exc:
                    raise InvalidMechanismError(str(exc)) from None
                if m not in index:
                    index[m] = len(masks)
                    masks.append(m)
        matrix = np.zeros((len(parsed), len(masks)))
        for i, row in enumerate(parsed):
            for s, v in row.items():
                matrix[i, index[sf.subset_mask(s, frame_t)]] = v
        return cls(matrix, inputs=[str(x) for x in rows], frame=frame_t, focal=masks)

    @classmethod
    def from_columns(
        cls,
        inputs: Sequence[str],
        columns: Sequence[str],
        matrix: ArrayLike,
        *,
        frame: Sequence[str] | None = None,
    ) -> Mechanism:
        """Build a mechanism from headers ``{yes}``, ``{yes,no}``, ... and a ``(k, F)`` matrix.

        Without ``frame`` the frame is the labels in order of first appearance in the headers.
        A ``{}`` column is allowed only if it is all zero.
        """
        sets: list[tuple[str, ...]] = []
        for c in columns:
            try:
                sets.append(parse_set(c))
            except ValueError as exc:
                raise InvalidMechanismError(str(exc)) from None
        arr = np.array(matrix, dtype=np.float64)
        if arr.ndim != 2 or arr.shape[1] != len(sets):
            raise InvalidMechanismError(
                f"expected a matrix with {len(sets)} columns, got shape {arr.shape}"
            )
        empty = [j for j, s in enumerate(sets) if not s]
        for j in empty:
            if np.any(arr[:, j] != 0):
                raise InvalidMechanismError(
                    f"column {columns[j]!r} puts mass on the empty set; a mass function must give it 0"
                )
        keep = [j for j, s in enumerate(sets) if s]
        if frame is None:
            labels: list[str] = []
            for j in keep:
                labels.extend(lab for lab in sets[j] if lab not in labels)
            frame = labels
        masks: list[int] = []
        for j in keep:
            try:
                masks.append(sf.subset_mask(sets[j], frame))
            except ValueError as exc:
                raise InvalidMechanismError(f"column {columns[j]!r}: {exc}") from None
        if len(set(masks)) != len(masks):
            dup = next(columns[j] for j, m in zip(keep, masks) if masks.count(m) > 1)
            raise InvalidMechanismError(f"focal set {dup!r} appears in two columns")
        return cls(arr[:, keep], inputs=inputs, frame=frame, focal=masks)

    # ------------------------------------------------------------------ pandas
    def to_frame(self) -> pd.DataFrame:
        """The mass matrix as a DataFrame: index ``input`` (one row per input), one column per focal set.

        Columns are headed ``{yes}``, ``{no}``, ``{yes,no}`` (labels in frame order), sorted by bitmask;
        sets with zero mass in every row are not shown.
        """
        import pandas as pd

        df = pd.DataFrame(np.array(self._matrix), columns=self.columns,
                          index=pd.Index(list(self._inputs), name="input"))
        return df

    @classmethod
    def from_frame(cls, df: pd.DataFrame, *, frame: Sequence[str] | None = None) -> Mechanism:
        """Inverse of :meth:`to_frame`. Inputs come from an ``input`` column if present, else the index."""
        import pandas as pd

        if not isinstance(df, pd.DataFrame):
            raise InvalidArgumentTypeError(f"from_frame expects a pandas DataFrame, got {type(df).__name__}")
        if "input" in df.columns:
            inputs = [str(v) for v in df["input"]]
            body = df.drop(columns="input")
        else:
            inputs = [str(v) for v in df.index]
            body = df
        try:
            values = body.to_numpy(dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise InvalidMechanismError(f"mass entries must be numbers: {exc}") from None
        return cls.from_columns(inputs, [str(c) for c in body.columns], values, frame=frame)

    # ------------------------------------------------------------------ files
    def to_csv_text(self) -> str:
        """The CSV layout (:mod:`designer._internal.formats`): header ``input,{yes},...``, shortest exact floats."""
        return formats.to_csv_text(self._inputs, self.columns, self._matrix)

    def to_csv(self, path: str | os.PathLike[str], *, overwrite: bool = True) -> None:
        """Write the mechanism as CSV (atomically: a temporary file renamed into place)."""
        atomic_write_text(path, self.to_csv_text(), overwrite=overwrite)

    def to_json_dict(self) -> dict[str, Any]:
        """The JSON layout: ``inputs``, ``frame``, ``focal_sets``, ``columns`` and ``matrix`` (rows = inputs)."""
        return formats.to_json_dict(self._inputs, self._frame, self.focal_sets, self.columns, self._matrix)

    def to_json(self, path: str | os.PathLike[str], *, overwrite: bool = True) -> None:
        """Write the mechanism as JSON (atomically)."""
        atomic_write_text(path, json.dumps(self.to_json_dict(), indent=2) + "\n", overwrite=overwrite)

    @classmethod
    def _from_data(cls, data: formats.MechanismData | list[dict[str, Any]], source: str) -> Mechanism:
        try:
            if isinstance(data, list):
                import pandas as pd

                return cls.from_frame(pd.DataFrame.from_records(data))
            return cls.from_columns(data.inputs, data.columns, data.matrix, frame=data.frame)
        except (InvalidMechanismError, TypeError) as exc:
            raise InvalidMechanismError(f"{source}: {exc}") from None

    @classmethod
    def from_csv_text(cls, text: str, *, source: str = "<csv>") -> Mechanism:
        """Parse the CSV layout written by :meth:`to_csv_text`. Entries may be decimals or ``a/b``."""
        return cls._from_data(formats.parse_csv(text, source=source), source)

    @classmethod
    def from_json_obj(cls, obj: Any, *, source: str = "<json>") -> Mechanism:
        """Build from the JSON layout (object with ``inputs``/``matrix``, or a list of CSV-like records)."""
        return cls._from_data(formats.parse_json(obj, source=source), source)

    @classmethod
    def read(cls, path: str | os.PathLike[str]) -> Mechanism:
        """Read a mechanism file (``.json`` as JSON, else CSV), or one that comes with designer by its bare name."""
        return cls.read_document(path)[0]

    @classmethod
    def read_document(cls, path: str | os.PathLike[str]) -> tuple[Mechanism, dict[str, Any] | None]:
        """Read a mechanism file once: the mechanism and, for a JSON file, the whole parsed object (whose other
        keys, a release or answer words, :func:`designer.release.files.open_mechanism_file` reads); ``None`` for CSV."""
        p = Path(resolve(path, "mechanism", error=InvalidMechanismError))
        text = read_text(p, error=InvalidMechanismError)
        if p.suffix.lower() == ".json":
            obj = formats.load_json_text(text, source=str(p))
            return cls.from_json_obj(obj, source=str(p)), obj
        return cls.from_csv_text(text, source=str(p)), None

    def write(self, path: str | os.PathLike[str], *, overwrite: bool = True) -> None:
        """Write to ``path``: JSON for a ``.json`` suffix, CSV otherwise."""
        if Path(path).suffix.lower() == ".json":
            self.to_json(path, overwrite=overwrite)
        else:
            self.to_csv(path, overwrite=overwrite)

    # ------------------------------------------------------------------ misc
    def __repr__(self) -> str:
        return f"Mechanism(inputs={list(self._inputs)}, frame={list(self._frame)}, focal_sets={len(self._focal)})"

    def __str__(self) -> str:
        return self.to_frame().to_string()

    def allclose(self, other: Mechanism, *, atol: float = 1e-12) -> bool:
        """Same labels, and masses equal within ``atol`` on every set."""
        if self._inputs != other._inputs or self._frame != other._frame:
            return False
        a = dict(zip(map(int, self._focal), self._matrix.T))
        b = dict(zip(map(int, other._focal), other._matrix.T))
        zero = np.zeros(self.k)
        return all(np.allclose(a.get(m, zero), b.get(m, zero), rtol=0, atol=atol) for m in set(a) | set(b))


def _set_key(key: Any) -> tuple[str, ...]:
    if isinstance(key, str):
        s = key.strip()
        if s.startswith("{"):
            try:
                return parse_set(s)
            except ValueError as exc:
                raise InvalidMechanismError(str(exc)) from None
        return (s,)
    if isinstance(key, (tuple, list, frozenset, set)):
        return tuple(str(k) for k in key)
    return (str(key),)
