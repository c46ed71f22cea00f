"""Randomising true answers with a mechanism (vectorised; one draw per respondent).

Under Shafer's semantics the respondent reports the focal set itself. Under Walley's semantics the
respondent reports a precise answer drawn from some member of the credal set of their row; which member
is an *allocation* chosen by the caller (docs/theory.md section 3):

* ``"uniform"``: each focal set's mass is spread evenly over its elements;
* a number ``lam`` in [0, 1]: a set containing the true answer resolves to it with probability ``lam``,
  otherwise evenly over its other elements (for ``Q_2x3`` this is the paper's ``Q_lambda``);
* a ``(k, l)`` array: explicit distributions, which must lie in the credal sets.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import setfunctions as sf
from ..exceptions import InvalidArgumentError, InvalidArgumentTypeError, InvalidMechanismError
from ..mechanism import Mechanism

__all__ = ["as_rng", "draw_rows", "input_indices", "label_indices", "precise_distributions", "randomize",
           "randomize_precise", "synthetic_answers"]


def as_rng(rng: np.random.Generator | int | None) -> np.random.Generator:
    """A Generator from a Generator, a seed, or None (fresh entropy from the operating system).

    Examples
    --------
    >>> from designer.estimation.sampling import as_rng
    >>> as_rng(1).integers(10, size=3).tolist() == as_rng(1).integers(10, size=3).tolist()  # a seed: reproducible
    True
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or (isinstance(rng, (int, np.integer)) and not isinstance(rng, bool)):
        return np.random.default_rng(rng)
    raise InvalidArgumentTypeError(f"rng must be a numpy Generator, an int seed or None, got {type(rng).__name__}")


def label_indices(values: Sequence[Any] | ArrayLike, labels: Sequence[str]) -> NDArray[np.int64]:
    """Position in ``labels`` of every value (compared as text), ``-1`` where it is none of them (and for a missing
    value, ``None`` or NaN).

    Each distinct value is looked up once (a dict of the values seen; no pandas, so randomize starts fast): a
    million answers in a few tenths of a second.

    Examples
    --------
    >>> from designer.estimation.sampling import label_indices
    >>> label_indices(["no", "yes", "maybe", None, "no"], ["yes", "no"]).tolist()  # -1: none of them, or missing
    [1, 0, -1, -1, 1]
    """
    pos = {x: i for i, x in enumerate(labels)}
    flat = np.asarray(values, dtype=object).ravel()
    seen: dict[Any, int] = {}

    def code(value: Any) -> int:
        missing = value is None or (isinstance(value, float) and value != value)
        return -1 if missing else pos.get(str(value), -1)

    return np.fromiter((c if (c := seen.get(v)) is not None else seen.setdefault(v, code(v)) for v in flat),
                       dtype=np.int64, count=flat.size)


def input_indices(mech: Mechanism, true_inputs: Sequence[Any] | ArrayLike) -> NDArray[np.int64]:
    """Row index of every true answer; unknown answers are reported with their position.

    Examples
    --------
    >>> import designer
    >>> from designer.estimation import sampling
    >>> q = designer.Q_2x3(0.6, 0.2)
    >>> sampling.input_indices(q, ["no", "yes", "no"]).tolist()
    [1, 0, 1]
    >>> sampling.input_indices(q, ["no", "maybe"])
    Traceback (most recent call last):
    ...
    designer.exceptions.InvalidMechanismError: answer 'maybe' (position 2) is not an input of the mechanism ...
    """
    values = np.asarray(true_inputs, dtype=object).ravel()
    idx = label_indices(values, mech.inputs)
    bad = np.flatnonzero(idx < 0)
    if bad.size:
        first = int(bad[0])
        raise InvalidMechanismError(
            f"answer {values[first]!r} (position {first + 1}) is not an input of the mechanism "
            f"{list(mech.inputs)}; {bad.size} such answer(s)"
        )
    return idx


def draw_rows(probs: NDArray[np.float64], rows: NDArray[np.int64], rng: np.random.Generator | int | None = None
              ) -> NDArray[np.int64]:
    """One categorical draw per respondent from row ``rows[i]`` of ``probs``, by the sampler of every release:
    the rows written as integer counts (:func:`designer.guarantees.exact_table.table_of`: a device's exact
    fractions, else over 2^32) and uniform 32-bit words, the column whose cumulative counts bracket each
    (:func:`designer.guarantees.exact_table.sample_grid`).

    The words come from the operating system's cryptographic generator when ``rng`` is None (a draw nobody can
    replay: what a release needs), else from the numpy generator ``rng`` (or one seeded with it): a simulation,
    which anyone who knows the seed can redo. Successive calls with one generator continue its stream, so chunks
    draw as one call would.

    Examples
    --------
    >>> import numpy as np
    >>> from designer.estimation.sampling import draw_rows
    >>> draw_rows(np.array([[0.5, 0.5], [1.0, 0.0]]), np.array([1, 1, 1]), rng=1).tolist()  # row 1 always gives 0
    [0, 0, 0]
    """
    from ..guarantees.exact_table import DENOMINATOR, OsRandom, sample_grid, table_of

    counts, denominator = table_of(probs)
    if rng is None:
        return sample_grid(counts, denominator, rows, OsRandom().words)
    generator = as_rng(rng)
    return sample_grid(counts, denominator, rows,
                       lambda n: generator.integers(0, DENOMINATOR, size=n, dtype=np.uint64))


def randomize(mech: Mechanism, true_inputs: Sequence[Any] | ArrayLike,
              rng: np.random.Generator | int | None = None) -> NDArray[np.int64]:
    """Draw one focal set per respondent (Shafer semantics).

    Parameters
    ----------
    mech : Mechanism
    true_inputs : (n,) sequence of input labels
    rng : Generator, int or None
        None (default): 32-bit words from the operating system's cryptographic generator (``os.urandom``), drawn
        through the exact integer sampler: a draw nobody can replay, as a release needs. A numpy Generator or a
        seed: a *simulation*, reproducible by anyone who knows the seed (never for real respondents).

    Returns
    -------
    (n,) ndarray of int
        Column indices into ``mech.focal`` / ``mech.columns`` (``mech.columns[i]`` is the set's header).

    Examples
    --------
    One answer set (a column of ``q``) per respondent, seeded for a simulation (``designer.randomize`` is the front
    door, for files and frames):

    >>> import designer
    >>> from designer.estimation import sampling
    >>> q = designer.Q_2x3(0.6, 0.2)
    >>> columns = sampling.randomize(q, ["yes", "no", "yes"], rng=1)
    >>> columns.shape, set(q.columns[j] for j in columns) <= {"{yes}", "{no}", "{yes,no}"}
    ((3,), True)
    """
    rows = input_indices(mech, true_inputs)
    return draw_rows(mech.matrix, rows, rng)


def precise_distributions(mech: Mechanism, allocation: str | float | ArrayLike = "uniform") -> NDArray[np.float64]:
    """The ``(k, l)`` output distributions of a named member of each row's credal set (module docstring).

    Examples
    --------
    The credal member that resolves "don't know" half to yes and half to no, and the one (``allocation=0``) that
    gives it all to the other answer:

    >>> import designer
    >>> from designer.estimation import sampling
    >>> q = designer.Q_2x3(0.6, 0.2)
    >>> sampling.precise_distributions(q).round(12).tolist()
    [[0.7, 0.3], [0.3, 0.7]]
    >>> sampling.precise_distributions(q, 0.0).round(12).tolist()
    [[0.6, 0.4], [0.4, 0.6]]
    """
    focal = np.asarray(mech.focal, dtype=np.int64)
    members = sf.members(focal, mech.l).astype(np.float64)  # (F, l)
    sizes = members.sum(axis=1)
    if isinstance(allocation, str):
        if allocation != "uniform":
            raise InvalidArgumentError(
                f"allocation must be 'uniform', a number in [0, 1] or a (k, l) array, got {allocation!r}")
        return mech.matrix @ (members / sizes[:, None])
    arr = np.asarray(allocation, dtype=np.float64)
    if arr.ndim == 0:
        lam = float(arr)
        if not 0.0 <= lam <= 1.0:
            raise InvalidArgumentError(f"lambda must lie in [0, 1], got {lam}")
        truth = np.array([mech.frame.index(x) if x in mech.frame else -1 for x in mech.inputs])
        if np.any(truth < 0):
            raise InvalidMechanismError("allocation by lambda needs every input among the frame labels")
        out = np.zeros((mech.k, mech.l))
        for x in range(mech.k):
            t = truth[x]
            split = members / sizes[:, None]  # evenly, for sets without the truth and singletons
            with_truth = (members[:, t] > 0) & (sizes > 1)
            split[with_truth] = members[with_truth] * ((1 - lam) / (sizes[with_truth] - 1))[:, None]
            split[with_truth, t] = lam
            out[x] = mech.matrix[x] @ split
        return out
    from ..credal import contains

    if arr.shape != (mech.k, mech.l):
        raise InvalidArgumentError(f"an explicit allocation is a ({mech.k}, {mech.l}) array, got shape {arr.shape}")
    for x in range(mech.k):
        if not contains(mech, x, arr[x], tol=1e-9):
            raise InvalidMechanismError(f"row {mech.inputs[x]!r} of the allocation is not in its credal set")
    return arr


def randomize_precise(mech: Mechanism, true_inputs: Sequence[Any] | ArrayLike,
                      rng: np.random.Generator | int | None = None, *,
                      allocation: str | float | ArrayLike = "uniform") -> NDArray[np.int64]:
    """Draw one precise answer per respondent from a member of the credal sets (Walley semantics); ``rng`` as in
    :func:`randomize` (None: the operating system's cryptographic generator; a seed or Generator: a simulation).

    Returns
    -------
    (n,) ndarray of int
        Frame indices (``mech.frame[i]`` is the answer's label).

    Examples
    --------
    >>> import designer
    >>> from designer.estimation import sampling
    >>> q = designer.Q_2x3(0.6, 0.2)
    >>> answers = sampling.randomize_precise(q, ["yes", "no"], rng=1, allocation=0.5)
    >>> answers.shape, set(answers.tolist()) <= {0, 1}  # frame positions: yes or no
    ((2,), True)
    """
    rows = input_indices(mech, true_inputs)
    return draw_rows(precise_distributions(mech, allocation), rows, rng)


def synthetic_answers(labels: Sequence[str], prior: ArrayLike, n: int,
                      rng: np.random.Generator | int | None = None) -> NDArray[np.object_]:
    """``n`` synthetic true answers drawn independently from ``prior`` over ``labels``, shape ``(n,)``.

    For trying :func:`randomize` and the estimators before the field: the shares of the draw vary around
    ``prior`` with the usual multinomial spread (``Var = pi (1 - pi) / n`` per share).

    Examples
    --------
    >>> from designer.estimation.sampling import synthetic_answers
    >>> synthetic_answers(["yes", "no"], [0.3, 0.7], 5, rng=1).tolist()
    ['no', 'no', 'yes', 'no', 'no']
    """
    from .._internal.validation import check_int, check_prior

    names = np.asarray([str(x) for x in labels], dtype=object)
    pi = check_prior(prior, len(names))
    count = check_int(n, "n", low=0)
    return names[as_rng(rng).choice(len(names), size=count, p=pi)]
