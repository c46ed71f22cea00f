"""Composition and post-processing of evidential mechanisms (Lemmas 3.3, 3.4, 3.15, 3.16).

The product of two mechanisms on the same inputs answers with both outputs: its frame is
``Y1 x Y2`` (element ``(a, b)`` labelled ``"a|b"``, index ``i1 + l1 * i2``), its focal sets are the
rectangles ``E1 x E2`` with mass ``m1_x(E1) m2_x(E2)``. Only focal sets are built, so the product of
mechanisms with ``F1`` and ``F2`` focal sets has ``F1 F2`` columns whatever the frame size.

These functions return plain mechanisms. To compose the guarantee with them, compose certified mechanisms
(:class:`designer.guarantees.certified.CertifiedMechanism`): their ``product``, ``power`` and ``image`` call these and
compose the certificates by the same lemmas, the budgets added exactly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ._internal.validation import check_int, check_labels
from .exceptions import InvalidArgumentTypeError, InvalidMechanismError
from .mechanism import Mechanism

__all__ = ["PAIR_SEPARATOR", "image", "power", "product"]

#: Separator of the components of a product frame's labels: ``"yes|no"``.
PAIR_SEPARATOR = "|"


def _rectangle(e1: int, e2: int, l1: int) -> int:
    """Bitmask of ``E1 x E2`` in the product frame (element ``(i1, i2)`` is bit ``i1 + l1 * i2``)."""
    mask = 0
    i2 = 0
    while e2:
        if e2 & 1:
            mask |= e1 << (l1 * i2)
        e2 >>= 1
        i2 += 1
    return mask


#: A product with more masses than this (inputs x focal sets) is refused before it is built (~1 GiB of
#: floats and bitmasks of frames far beyond what any audit can enumerate).
MAX_PRODUCT_CELLS = 20_000_000


def product(first: Mechanism, second: Mechanism) -> Mechanism:
    """Run two mechanisms on the same input and report both answers (Lemma 3.3, Lemma 3.15).

    The losses add up: ``eps(product) <= eps(first) + eps(second)`` in both semantics.

    Parameters
    ----------
    first, second : Mechanism
        Mechanisms with the same input labels (``second``'s rows are matched by label).

    Returns
    -------
    Mechanism
        Frame ``[a|b for b in second.frame for a in first.frame]``; ``(k, F1 * F2)`` focal masses.

    Examples
    --------
    Warner's design asked twice, at eps = 1 and at eps = 0.5: the losses add up (Lemma 3.3):

    >>> import designer
    >>> twice = designer.product(designer.Q_WRR(1.0), designer.Q_WRR(0.5))
    >>> twice.frame
    ('yes|yes', 'no|yes', 'yes|no', 'no|no')
    >>> round(designer.eps_shafer(twice), 12)
    1.5
    """
    if not isinstance(first, Mechanism) or not isinstance(second, Mechanism):
        raise InvalidArgumentTypeError("product() takes two Mechanism objects")
    if set(first.inputs) != set(second.inputs):
        raise InvalidMechanismError(
            f"product needs the same inputs, got {list(first.inputs)} and {list(second.inputs)}"
        )
    cells = first.k * len(first.focal) * len(second.focal)
    if cells > MAX_PRODUCT_CELLS:
        raise InvalidMechanismError(
            f"the product has {len(first.focal)} x {len(second.focal)} focal sets for {first.k} inputs "
            f"({cells:.3g} masses, limit {MAX_PRODUCT_CELLS:.0e}: several GiB and a frame of "
            f"{first.l * second.l} answers); compose fewer answers or post-process each to a smaller frame first"
        )
    rows2 = [second.input_index(x) for x in first.inputs]
    m2 = second.matrix[rows2]
    l1 = first.l
    frame = [f"{a}{PAIR_SEPARATOR}{b}" for b in second.frame for a in first.frame]
    masks = [_rectangle(int(e1), int(e2), l1) for e2 in second.focal for e1 in first.focal]
    # column (j1, j2) -> index j1 + F1 * j2, matching the mask order above.
    matrix = (first.matrix[:, :, None] * m2[:, None, :]).transpose(0, 2, 1).reshape(first.k, -1)
    return Mechanism(matrix, inputs=first.inputs, frame=frame, focal=masks)


def power(mech: Mechanism, n: int) -> Mechanism:
    """``n``-fold self-composition: each respondent answers ``n`` times independently.

    Parameters
    ----------
    mech : Mechanism
    n : int
        Number of answers, ``n >= 1``. The frame has ``l**n`` elements; focal sets ``F**n``.

    Examples
    --------
    >>> import designer
    >>> thrice = designer.power(designer.Q_WRR(1.0), 3)
    >>> len(thrice.frame), round(designer.eps_shafer(thrice), 12)
    (8, 3.0)
    """
    n = check_int(n, "n", low=1)
    if mech.k * float(len(mech.focal)) ** n > MAX_PRODUCT_CELLS:
        raise InvalidMechanismError(
            f"{n} answers of a mechanism with {len(mech.focal)} focal sets make {len(mech.focal)}**{n} focal sets "
            f"(limit {MAX_PRODUCT_CELLS:.0e} masses); use fewer answers, or post-process to a smaller frame first"
        )
    out = mech
    for _ in range(n - 1):
        out = product(out, mech)
    return out


def image(mech: Mechanism, f: Mapping[Any, Any], *, frame: Sequence[str] | None = None) -> Mechanism:
    """Post-process a mechanism by a map ``f: Y -> Z`` (Lemma 3.4, Lemma 3.16).

    Focal set ``B`` goes to ``f(B) = {f(y) : y in B}``; masses of sets with the same image add up.
    Post-processing never increases the Shafer or the Walley loss.

    Parameters
    ----------
    mech : Mechanism
    f : mapping
        A value for every frame label (values are turned into strings).
    frame : sequence of str, optional
        Order of ``Z``; default the values of ``f`` in frame order of first appearance. May list
        labels that no output reaches.

    Returns
    -------
    Mechanism
        Same inputs, frame ``Z``.

    Examples
    --------
    Post-processing never raises a loss (Lemma 3.4): two answers of ``Q_2x3(0.6, 0.2)`` reduced to "both yes", "both
    no" or "mixed" keep the product's loss at most:

    >>> import designer
    >>> q = designer.Q_2x3(0.6, 0.2)
    >>> twice = designer.product(q, q)
    >>> merged = designer.image(twice, {"yes|yes": "yes", "no|no": "no", "yes|no": "mixed", "no|yes": "mixed"})
    >>> merged.frame
    ('yes', 'mixed', 'no')
    >>> designer.eps_shafer(merged) <= designer.eps_shafer(twice)
    True
    """
    if not isinstance(mech, Mechanism):
        raise InvalidArgumentTypeError(f"image() takes a Mechanism, got {type(mech).__name__}")
    if not isinstance(f, Mapping):
        raise InvalidArgumentTypeError("f must be a mapping {frame label: new label}")
    keys = {str(key): str(value) for key, value in f.items()}
    unknown = sorted(set(keys) - set(mech.frame))
    if unknown:
        raise InvalidMechanismError(f"f maps labels that are not in the frame: {unknown}")
    missing = [y for y in mech.frame if y not in keys]
    if missing:
        raise InvalidMechanismError(f"f gives no value for frame label(s) {missing}")
    targets = [keys[y] for y in mech.frame]
    if frame is None:
        z = list(dict.fromkeys(targets))
    else:
        z = list(check_labels(frame, "frame", error=InvalidMechanismError))
        absent = sorted(set(targets) - set(z))
        if absent:
            raise InvalidMechanismError(f"values of f missing from the given frame: {absent}")
    pos = {label: i for i, label in enumerate(z)}
    bit = [pos[t] for t in targets]
    new_masks: dict[int, int] = {}
    columns = np.zeros(len(mech.focal), dtype=np.int64)
    for j, b in enumerate(mech.focal):
        b = int(b)
        out, i = 0, 0
        while b:
            if b & 1:
                out |= 1 << bit[i]
            b >>= 1
            i += 1
        columns[j] = new_masks.setdefault(out, len(new_masks))
    matrix = np.zeros((mech.k, len(new_masks)))
    np.add.at(matrix.T, columns, mech.matrix.T)
    return Mechanism(matrix, inputs=mech.inputs, frame=z, focal=list(new_masks))
