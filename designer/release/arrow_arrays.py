"""Arrow arrays built from their buffers, for the release's hot path.

``pyarrow.array`` imports pandas (when it is installed) on its first call, to ask whether its argument is a
pandas object: about 0.3 s of start-up that the release of a small CSV file does not need (issue 51; measured in
benchmarks/startup.py). The two arrays a release builds itself, the randomized answers as text and a permutation
of row positions, are made here from numpy buffers instead; what Arrow makes from the input stays Arrow's. The
released chunks are joined here too (:func:`concat_tables`), so a release's rows pass through this module once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

#: The most bytes of text one string array holds (its offsets are 32-bit); beyond, ``pyarrow.array`` makes it.
MAX_TEXT_BYTES = 2**31 - 1


def strings(words: Sequence[str]) -> Any:
    """A pyarrow string array of ``words`` (no missing values), without calling ``pyarrow.array``.

    Examples
    --------
    >>> from designer.release.arrow_arrays import strings
    >>> column = strings(["{yes}", "{no}", "{yes,no}", "{ja,nein}", ""])
    >>> column.type, column.to_pylist()
    (DataType(string), ['{yes}', '{no}', '{yes,no}', '{ja,nein}', ''])
    """
    import pyarrow as pa

    encoded = [w.encode("utf-8") for w in words]
    ends = np.cumsum(np.fromiter((len(e) for e in encoded), np.int64, len(encoded)))
    if ends.size and ends[-1] > MAX_TEXT_BYTES:
        return pa.array(list(words), type=pa.string())
    offsets = np.zeros(len(encoded) + 1, dtype=np.int32)
    offsets[1:] = ends
    return pa.StringArray.from_buffers(len(encoded), pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded)))


def positions(order: NDArray[np.integer[Any]]) -> Any:
    """Row positions (a numpy integer vector) as a pyarrow int64 array for ``Table.take``.

    Examples
    --------
    >>> import numpy as np
    >>> import pyarrow as pa
    >>> from designer.release.arrow_arrays import positions
    >>> table = pa.table({"answer": ["a", "b", "c"]})
    >>> table.take(positions(np.array([2, 0, 1]))).column("answer").to_pylist()
    ['c', 'a', 'b']
    """
    import pyarrow as pa

    flat = np.ascontiguousarray(order, dtype=np.int64).ravel()
    return pa.Array.from_buffers(pa.int64(), flat.size, [None, pa.py_buffer(flat)])


def concat_tables(tables: list[Any]) -> Any:
    """The released chunks (or a bucket's parts) as one table; parts whose columns are of types no common type
    holds are one error line.

    Examples
    --------
    >>> import pyarrow as pa
    >>> from designer.release.arrow_arrays import concat_tables
    >>> concat_tables([pa.table({"id": [1]}), pa.table({"id": [2.5]})]).column("id").to_pylist()
    [1.0, 2.5]
    >>> concat_tables([pa.table({"id": [1]}), pa.table({"id": ["a"]})])
    Traceback (most recent call last):
    ...
    designer.exceptions.DataError: the parts' columns are of different types (...); give the parts one type
    """
    import pyarrow as pa

    try:
        return pa.concat_tables(tables, promote_options="permissive")
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        from ..exceptions import DataError

        raise DataError(f"the parts' columns are of different types ({' '.join(str(exc).split())[:200]}); give "
                        "the parts one type") from None
