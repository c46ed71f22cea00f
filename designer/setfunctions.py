"""Set functions on a finite frame: bitmasks and the fast zeta / Moebius transforms.

A subset ``E`` of a frame ``Y = (y_0, ..., y_{l-1})`` is the integer bitmask whose bit ``i`` is set
when ``y_i`` is in ``E``. A set function is therefore a vector of length ``2**l`` indexed by the mask
itself (index 0 is the empty set), and a stack of ``k`` set functions (one mass function per input of a
mechanism) is a ``(k, 2**l)`` array.

The transforms between mass, belief, plausibility and commonality are the subset / superset zeta
transforms and their inverses (Moebius transforms). Each is ``l`` vectorised passes over the whole
array, ``O(l 2**l)`` per row, applied to all rows at once.

References
----------
Shafer (1976), *A Mathematical Theory of Evidence*, ch. 2; paper Sec. 2 (Dempster-Shafer theory).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .exceptions import InvalidArgumentError

__all__ = [
    "MAX_DENSE_FRAME",
    "bel_from_mass",
    "commonality_from_mass",
    "frame_size",
    "mask_labels",
    "mass_from_bel",
    "mass_from_commonality",
    "mass_from_pl",
    "members",
    "pl_from_mass",
    "popcount",
    "subset_mask",
    "subset_zeta",
    "superset_zeta",
]

#: Largest frame size for which dense ``2**l`` set functions are built. A ``(16, 2**24)`` float array
#: already takes 2 GiB; beyond this the work must stay on the focal sets.
MAX_DENSE_FRAME = 24

# Number of low bits handled together by one small dense matrix product (see _low_bits_pass).
_BLOCK_BITS = 4


def frame_size(n_columns: int) -> int:
    """Return ``l`` such that ``n_columns == 2**l``.

    Parameters
    ----------
    n_columns : int
        Length of the last axis of a dense set-function array.

    Raises
    ------
    ValueError
        If ``n_columns`` is not a power of two.

    Examples
    --------
    >>> from designer.setfunctions import frame_size
    >>> frame_size(8)
    3
    """
    if n_columns < 1 or n_columns & (n_columns - 1):
        raise InvalidArgumentError(
            f"a dense set function has 2**l entries (one per subset of the frame), got {n_columns}"
        )
    return n_columns.bit_length() - 1


def subset_mask(subset: Iterable[str], frame: Sequence[str]) -> int:
    """Bitmask of ``subset`` in ``frame`` (bit ``i`` is ``frame[i]``).

    Parameters
    ----------
    subset : iterable of str
        Labels of the subset's elements.
    frame : sequence of str
        The frame's labels, in order.

    Raises
    ------
    ValueError
        If a label is not in the frame.

    Examples
    --------
    >>> from designer.setfunctions import subset_mask
    >>> subset_mask(["no"], ["yes", "no"])
    2
    >>> subset_mask(["yes", "no"], ["yes", "no"])
    3
    """
    index = {label: i for i, label in enumerate(frame)}
    mask = 0
    for label in subset:
        if label not in index:
            raise InvalidArgumentError(f"unknown label {label!r}: the frame is {list(frame)}")
        mask |= 1 << index[label]
    return mask


def mask_labels(mask: int, frame: Sequence[str]) -> tuple[str, ...]:
    """Labels of the subset with bitmask ``mask``, in frame order.

    Examples
    --------
    >>> from designer.setfunctions import mask_labels
    >>> mask_labels(3, ["yes", "no"])
    ('yes', 'no')
    """
    mask = int(mask)
    if mask < 0 or mask >> len(frame):
        raise InvalidArgumentError(f"mask {mask} is not a subset of a frame of {len(frame)} elements")
    return tuple(label for i, label in enumerate(frame) if mask >> i & 1)


def popcount(masks: ArrayLike) -> NDArray[np.int64]:
    """Number of elements of each subset (vectorised popcount of the bitmasks).

    Examples
    --------
    >>> from designer.setfunctions import popcount
    >>> popcount([0, 1, 3, 7, 5]).tolist()
    [0, 1, 2, 3, 2]
    """
    arr = np.asarray(masks)
    if arr.dtype == object:
        return np.fromiter((int(m).bit_count() for m in arr.ravel()), np.int64, arr.size).reshape(
            arr.shape
        )
    return np.bitwise_count(arr.astype(np.int64)).astype(np.int64)


def _as_rows(values: ArrayLike) -> tuple[NDArray, tuple[int, ...], int]:
    """The set functions as rows ``(k, 2**l)`` (a view where possible: callers copy before writing)."""
    given = np.asarray(values)
    # Object arrays of Python ints are transformed exactly (used for certification); anything
    # else is converted to float64.
    dtype = object if given.dtype == object else np.float64
    arr = np.asarray(given, dtype=dtype)
    if arr.ndim == 0:
        raise InvalidArgumentError("a set function is an array of length 2**l, got a scalar")
    shape = arr.shape
    n = frame_size(shape[-1])
    if n > MAX_DENSE_FRAME:
        raise InvalidArgumentError(
            f"a frame of {n} elements has 2**{n} subsets, more than the dense limit of "
            f"2**{MAX_DENSE_FRAME}; work with the focal sets instead"
        )
    return arr.reshape(-1, shape[-1]), shape, n


def _block_matrix(superset: bool, inverse: bool) -> NDArray[np.float64]:
    """The ``2**b x 2**b`` zeta (or Moebius) matrix of the low ``b`` bits, applied as ``rows @ Z``."""
    size = 1 << _BLOCK_BITS
    sets = np.arange(size)
    # inc[B, E] = 1 when B is a subset of E.
    inc = ((sets[:, None] & ~sets[None, :]) == 0).astype(np.float64)
    if inverse:
        sign = (-1.0) ** popcount(sets[:, None] ^ sets[None, :])
        inc = inc * sign
    # subset zeta: out[E] = sum_{B <= E} v[B] = (v @ inc)[E]; superset zeta uses the transpose.
    return inc.T.copy() if superset else inc


_BLOCKS = {(s, i): _block_matrix(s, i) for s in (False, True) for i in (False, True)}


@functools.lru_cache(maxsize=1)
def _blas_controller() -> Any:
    from threadpoolctl import ThreadpoolController  # type: ignore[import-untyped]

    return ThreadpoolController()


def _one_blas_thread() -> Any:
    """Context in which BLAS runs on one thread (threadpoolctl)."""
    return _blas_controller().limit(limits=1, user_api="blas")


def _transform(values: ArrayLike, *, superset: bool, inverse: bool) -> NDArray[np.float64]:
    rows, shape, n = _as_rows(values)
    k, size = rows.shape
    start = 0
    if n < _BLOCK_BITS or rows.dtype == object:
        rows = rows.copy()  # worked in place below
    else:
        # The low bits have short strides, where elementwise passes are slow; one small matrix
        # product handles all of them at once.
        block = _BLOCKS[(superset, inverse)]
        flat = rows.reshape(-1, 1 << _BLOCK_BITS)
        with _one_blas_thread():  # a 16-column product: threads cost more than they save, worst when loaded
            rows = (flat @ block).reshape(k, size)
        start = _BLOCK_BITS
    for i in range(start, n):
        view = rows.reshape(k, size >> (i + 1), 2, 1 << i)
        if superset:
            target, source = view[:, :, 0, :], view[:, :, 1, :]
        else:
            target, source = view[:, :, 1, :], view[:, :, 0, :]
        if inverse:
            target -= source
        else:
            target += source
    return rows.reshape(shape)


def subset_zeta(values: ArrayLike, *, inverse: bool = False) -> NDArray[np.float64]:
    """Subset-sum (zeta) transform ``f(E) = sum_{B subset of E} g(B)``, or its Moebius inverse.

    Parameters
    ----------
    values : (..., 2**l) array_like
        Set functions indexed by bitmask on the last axis.
    inverse : bool, default False
        Apply the Moebius transform ``g(E) = sum_{B subset of E} (-1)**|E \\ B| f(B)`` instead.

    Returns
    -------
    (..., 2**l) ndarray
        A new array; the input is not modified.

    Examples
    --------
    >>> from designer.setfunctions import subset_zeta
    >>> subset_zeta([1, 1, 1, 1]).tolist()  # the number of subsets of each set of a two-element frame
    [1.0, 2.0, 2.0, 4.0]
    """
    return _transform(values, superset=False, inverse=inverse)


def superset_zeta(values: ArrayLike, *, inverse: bool = False) -> NDArray[np.float64]:
    """Superset-sum transform ``f(E) = sum_{B superset of E} g(B)``, or its inverse.

    Parameters
    ----------
    values : (..., 2**l) array_like
        Set functions indexed by bitmask on the last axis.
    inverse : bool, default False
        Apply the inverse transform instead.

    Returns
    -------
    (..., 2**l) ndarray

    Examples
    --------
    >>> from designer.setfunctions import superset_zeta
    >>> superset_zeta([1, 1, 1, 1]).tolist()  # the number of supersets of each set of a two-element frame
    [4.0, 2.0, 2.0, 1.0]
    """
    return _transform(values, superset=True, inverse=inverse)


def bel_from_mass(mass: ArrayLike) -> NDArray[np.float64]:
    """Belief ``bel(E) = sum_{B subset of E} m(B)`` of each row.

    Parameters
    ----------
    mass : (..., 2**l) array_like
        Mass functions indexed by bitmask (index 0 is the empty set).

    Returns
    -------
    (..., 2**l) ndarray

    Examples
    --------
    A mass function over the frame ``(a, b)``, indexed by bitmask (``[m(∅), m({a}), m({b}), m({a,b})]``):

    >>> from designer import bel_from_mass
    >>> bel_from_mass([0, 0.6, 0.2, 0.2]).tolist()  # bel({a}) = 0.6, bel({a,b}) = 1
    [0.0, 0.6, 0.2, 1.0]
    """
    return subset_zeta(mass)


def members(masks: ArrayLike, l: int) -> NDArray[np.bool_]:
    """``(F, l)`` membership table: entry ``[j, i]`` says whether element ``i`` is in set ``masks[j]``.

    Examples
    --------
    >>> from designer.setfunctions import members
    >>> members([1, 3, 6], 3).astype(int).tolist()  # {y0}, {y0, y1}, {y1, y2}
    [[1, 0, 0], [1, 1, 0], [0, 1, 1]]
    """
    m = np.asarray(masks, dtype=np.int64)
    return ((m[:, None] >> np.arange(l)[None, :]) & 1).astype(bool)


#: Rows whose every plausibility is at least this share of the row total take ``total - bel(complement)``:
#: there the subtraction loses at most ``2 (l + 4) u / PL_SAFE_SHARE`` relative (below 1e-12 for l <= 20).
PL_SAFE_SHARE = 2.0**-7


def pl_from_mass(mass: ArrayLike) -> NDArray[np.float64]:
    """Plausibility ``pl(E) = sum_{B meets E} m(B)`` of each row, accurate to 1e-12 relative on every entry.

    Rows of non-negative masses whose plausibilities all exceed :data:`PL_SAFE_SHARE` of the row total are
    computed as ``total - bel(Y \\ E)`` with the fast zeta transform (the subtraction cannot lose more than
    ``2 (l + 4) u / PL_SAFE_SHARE``); the other rows (a tiny or zero plausibility, where the subtraction would
    cancel) by :func:`_pl_nonnegative`, which only adds.

    Parameters
    ----------
    mass : (..., 2**l) array_like
        Float or exact integer (object) masses.

    Returns
    -------
    (..., 2**l) ndarray
        ``pl(empty) = 0`` and ``pl(Y)`` is the row total.

    Examples
    --------
    >>> from designer import pl_from_mass
    >>> pl_from_mass([0, 0.6, 0.2, 0.2]).round(12).tolist()  # pl({a}) = 0.6 + 0.2
    [0.0, 0.8, 0.4, 1.0]
    """
    given = np.asarray(mass)
    if given.dtype == object:
        return _pl_nonnegative(given)
    rows, shape, _ = _as_rows(given)  # only read
    if rows.shape[-1] < 4:
        return _pl_nonnegative(given)
    bel = subset_zeta(rows)
    total = bel[:, -1:]
    pl = total - bel[:, ::-1]  # bel of the complement: full ^ E = full - E
    pl[:, 0] = 0.0
    nonnegative = np.all(rows >= 0, axis=1)
    safe = np.all(pl[:, 1:] >= PL_SAFE_SHARE * total, axis=1) & nonnegative
    if not safe.all():
        _repair_small_events(rows, pl, total[:, 0], np.flatnonzero(~safe), nonnegative)
    return pl.reshape(shape)


def _repair_small_events(mass: NDArray[np.float64], pl: NDArray[np.float64], total: NDArray[np.float64],
                         rows: NDArray[np.int64], nonnegative: NDArray[np.bool_]) -> None:
    """Recompute in place, by additions only, the plausibilities of ``rows`` that ``total - bel(complement)``
    may lose.

    An event holding an element ``y`` with ``pl({y}) >= 2 PL_SAFE_SHARE total`` has ``pl(E) >= pl({y})``, so its
    subtraction is safe. The others are the subsets of ``Z`` = the remaining elements, and for ``E`` inside
    ``Z`` only ``B & Z`` matters: ``pl(E) = pl'(E)`` for the mass ``m'(C) = sum_{B & Z = C} m(B)`` on ``Z``'s
    ``2**|Z|`` subsets, given to :func:`_pl_nonnegative`. Rows with the same ``Z`` are done together; rows
    with negative entries, or with ``Z`` of more than half the frame, take :func:`_pl_nonnegative` whole.
    """
    l = frame_size(mass.shape[-1])
    singles = pl[:, 1 << np.arange(l)]
    groups: dict[tuple[int, ...], list[int]] = {}
    for r in rows.tolist():
        z = tuple(np.flatnonzero(singles[r] < 2 * PL_SAFE_SHARE * total[r]).tolist())
        if not nonnegative[r] or 2 * len(z) > l:
            pl[r] = _pl_nonnegative(mass[r])
        else:
            groups.setdefault(z, []).append(r)
    for z, group in groups.items():
        # runs of elements from the top: a run outside Z is one axis (summed out), each element of Z an axis of 2
        shape: list[int] = []
        kept: list[int] = []
        bit = l - 1
        while bit >= 0:
            if bit in z:
                kept.append(len(shape) + 1)
                shape.append(2)
                bit -= 1
                continue
            run = 1
            while bit - run >= 0 and (bit - run) not in z:
                run += 1
            shape.append(1 << run)
            bit -= run
        picked = mass if len(group) == mass.shape[0] else mass[group]  # (no copy for all rows)
        block = picked.reshape(len(group), *shape)
        projected = np.empty((len(group), 1 << len(z)))
        for code in range(1 << len(z)):
            # one slice per subset C of Z (bit j = element z[j]; the axes hold Z from its top element down)
            index: list[Any] = [slice(None)] * block.ndim
            for j, axis in enumerate(reversed(kept)):
                index[axis] = (code >> j) & 1
            part = block[tuple(index)]  # (group, the runs outside Z)
            projected[:, code] = part.sum(axis=tuple(range(1, part.ndim)))
        where = members(np.arange(1 << len(z)), len(z)).astype(np.int64) @ (1 << np.array(z, dtype=np.int64))
        pl[np.ix_(np.asarray(group, dtype=np.int64), where)] = _pl_nonnegative(projected)


def _pl_nonnegative(mass: ArrayLike) -> NDArray[np.float64]:
    """Plausibility of each row as a sum of non-negative terms.

    ``1 - bel(Y \\ E)`` would cancel when ``pl(E)`` is tiny (a mass of ``1e-17`` next to masses of order 1
    is lost); this transform only adds. Splitting on the top element ``i`` of the frame,
    ``pl(E) = pl'(E', m_0 + m_1)`` when ``i`` is not in ``E`` and ``pl'(E', m_0) + sum(m_1)`` when it is
    (``m_1`` the masses of sets holding ``i``), which unrolls into ``l`` passes with running offsets:
    ``O(l 2**l)`` like the zeta transform, relative error ``O(l u)`` on every entry. Same input and
    output as :func:`pl_from_mass`.
    """
    v = np.array(mass, dtype=object if np.asarray(mass).dtype == object else np.float64)  # a copy: worked in place
    l = frame_size(v.shape[-1])
    lead = v.shape[:-1]
    offset = np.zeros((*lead, 1), dtype=v.dtype)
    for i in range(l - 1, -1, -1):
        block = v.reshape(*lead, 1 << (l - 1 - i), 2, 1 << i)
        m0, m1 = block[..., 0, :], block[..., 1, :]
        with_i = offset + m1.sum(axis=-1)  # offsets of the events that hold y_i
        held = m1.copy()
        m1[...] = m0  # events with y_i: the sets that miss y_i still count through the lower elements
        m0 += held  # events without y_i: every set counts through the lower elements
        offset = np.stack([offset, with_i], axis=-1).reshape(*lead, 1 << (l - i))
    return offset


def commonality_from_mass(mass: ArrayLike) -> NDArray[np.float64]:
    """Commonality ``q(E) = sum_{B superset of E} m(B)`` of each row.

    Parameters
    ----------
    mass : (..., 2**l) array_like

    Returns
    -------
    (..., 2**l) ndarray

    Examples
    --------
    >>> from designer import commonality_from_mass
    >>> commonality_from_mass([0, 0.6, 0.2, 0.2]).round(12).tolist()  # q(∅) = 1, q({a,b}) = m({a,b})
    [1.0, 0.8, 0.4, 0.2]
    """
    return superset_zeta(mass)


def mass_from_bel(bel: ArrayLike) -> NDArray[np.float64]:
    """Mass function of a belief function (Moebius inversion).

    Parameters
    ----------
    bel : (..., 2**l) array_like

    Returns
    -------
    (..., 2**l) ndarray

    Examples
    --------
    >>> import numpy as np
    >>> from designer import bel_from_mass, mass_from_bel
    >>> mass = np.array([0, 0.6, 0.2, 0.2])
    >>> np.allclose(mass_from_bel(bel_from_mass(mass)), mass)
    True
    """
    return subset_zeta(bel, inverse=True)


def mass_from_pl(pl: ArrayLike) -> NDArray[np.float64]:
    """Mass function of a plausibility function, through ``bel(E) = pl(Y) - pl(Y \\ E)``.

    Parameters
    ----------
    pl : (..., 2**l) array_like

    Returns
    -------
    (..., 2**l) ndarray

    Examples
    --------
    >>> from designer import mass_from_pl
    >>> mass_from_pl([0, 0.8, 0.4, 1.0]).round(12).tolist()
    [0.0, 0.6, 0.2, 0.2]
    """
    arr = np.asarray(pl, dtype=np.float64)
    return mass_from_bel(arr[..., -1:] - arr[..., ::-1])


def mass_from_commonality(commonality: ArrayLike) -> NDArray[np.float64]:
    """Mass function of a commonality function (inverse superset transform).

    Parameters
    ----------
    commonality : (..., 2**l) array_like

    Returns
    -------
    (..., 2**l) ndarray

    Examples
    --------
    >>> import numpy as np
    >>> from designer import mass_from_commonality
    >>> mass_from_commonality(np.array([1.0, 0.8, 0.4, 0.2])).round(12).tolist()  # m(∅) = 1 - 0.8 - 0.4 + 0.2
    [-0.0, 0.6, 0.2, 0.2]
    """
    return superset_zeta(commonality, inverse=True)
