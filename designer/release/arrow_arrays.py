"""Arrow arrays built from their buffers, for the release's hot path.

``pyarrow.array`` imports pandas (when it is installed) on its first call, to ask whether its argument is a
pandas object: about 0.3 s of start-up that the release of a small CSV file does not need (issue 51; measured in
benchmarks/startup.py). The two arrays a release builds itself, the randomized answers as text and a permutation
of row positions, are made here from numpy buffers instead; what Arrow makes from the input stays Arrow's.
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
