"""What a regression's covariates and answers identify before it is fitted, and the coordinates it is fitted in
(docs/theory.md section 9, "Identification"; docs/fits.md).

One verdict for every reading path (a frame in memory, counted rows, streamed chunks, a cluster's parts): each
computes the same sums over its rows (:class:`Moments`, added across chunks and parts) of the *standardized*
covariates (:class:`Standardization`: every column but the intercept centred and scaled, so that a covariate offset
by ``1e9`` is not mistaken for the intercept), and :func:`plan_design` judges them:

- a column without variation beside an intercept, or a linear combination of the columns before it (squared
  residual at most :data:`DEPENDENT_TOL` of its centred, unit-scaled column), is refused in one line: the design
  matrix is singular;
- a column whose squared residual is at most :data:`ALIAS_TOL` is *aliased* (nearly collinear with the columns
  before it): it is dropped, as R's ``glm`` drops an aliased column (coefficient absent), and named; the other terms
  are the fit of the model without it, with their own standard errors;
- a column that is a combination of the others *on the answers that carry information* (the mechanism's column of
  the answer is not the same for every input, Def 3.1) is aliased by the answers: the likelihood is flat along it
  whatever the data say, so it is dropped and named too (three respondents of whom only one answered anything
  else than "don't know" identify one number, not two).

The fit then runs on the kept standardized columns ``u = (z - c) / s``; :meth:`Standardization.matrix` maps its
coefficients back (``beta = M theta``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from ..exceptions import RegressionError

__all__ = ["ALIAS_TOL", "DEPENDENT_TOL", "Coordinates", "DesignPlan", "Moments", "Standardization",
           "column_largest", "column_range", "informative_rows", "plan_design", "standardization", "unused_level"]

#: A column whose residual, after the columns before it (centred, each scaled to unit length), has a squared norm
#: at most this share of its own is aliased: dropped and named (its coefficient is absent).
ALIAS_TOL = 1e-6
#: ... at most this share: the column is a linear combination of the others up to the rounding of the sums
#: (``sqrt`` of it is the relative residual, 1e-6): the design matrix is singular and the fit is refused.
DEPENDENT_TOL = 1e-12


@dataclass(frozen=True)
class Standardization:
    """The affine coordinates a fit runs in: column ``j`` of the design becomes ``(z_j - centre_j) / scale_j``;
    the intercept (column ``intercept``, all ones) is kept as it is.

    With ``theta`` the coefficients on the standardized columns, ``eta = u theta = z M theta``, so the coefficients
    on the covariates are ``beta = M theta``, ``M = (I - e_0 centre') S^-1`` (``e_0`` the intercept's unit vector,
    ``S = diag(scale)``; without an intercept nothing is centred and ``M = S^-1``).
    """

    centre: NDArray[np.float64]
    scale: NDArray[np.float64]
    intercept: int | None

    @property
    def size(self) -> int:
        return int(self.scale.size)

    def matrix(self) -> NDArray[np.float64]:
        """``M`` ``(q, q)``: ``beta = M theta``."""
        m = np.diag(1.0 / self.scale)
        if self.intercept is not None:
            m[self.intercept] -= self.centre / self.scale
        return m

    def apply(self, z: Any) -> Any:
        """The standardized design ``z M`` (dense or CSR like ``z``; a sparse design stays sparse where nothing is
        centred)."""
        if sp.issparse(z):
            m = sp.csr_matrix(self.matrix())
            return (z @ m).tocsr()
        dense = np.asarray(z, dtype=np.float64)
        out = (dense - self.centre) / self.scale
        if self.intercept is not None:
            out[:, self.intercept] = dense[:, self.intercept]
        return out


@dataclass(frozen=True)
class Coordinates:
    """The columns a fit runs on: the design standardized (``std``), its ``kept`` columns; called on a design
    ``(n, q)`` it returns them ``(n, len(kept))`` (picklable: a cluster's workers apply it to their parts)."""

    std: Standardization
    kept: tuple[int, ...]

    def __call__(self, z: Any) -> Any:
        u = self.std.apply(z)
        if sp.issparse(u):
            return u[:, list(self.kept)].tocsr()
        return np.ascontiguousarray(np.asarray(u)[:, list(self.kept)])


def weighted_gram(z: Any, weight: NDArray[np.float64]) -> NDArray[np.float64]:
    """``z' diag(weight) z``, ``(q, q)`` dense, for a dense or sparse ``z``."""
    if sp.issparse(z):
        return np.asarray((z.T @ sp.diags(weight) @ z).toarray())
    return np.asarray(z.T @ (weight[:, None] * z))


def constant_columns(z: Any, value: float = 1.0) -> NDArray[np.int64]:
    """The columns whose every entry equals ``value`` (non-zero), in order."""
    if sp.issparse(z):
        hits = np.asarray((z == value).sum(axis=0)).ravel()
        return np.flatnonzero(hits == z.shape[0])
    return np.flatnonzero(np.all(z == value, axis=0))


#: Beside an intercept, a column whose mean exceeds this many standard deviations is centred for the fit (a
#: covariate offset by 1e9 would otherwise be the intercept to rounding); nearer 0 it is only scaled, so the
#: coefficients' coordinates stay the covariates' own and a sparse design stays sparse.
CENTRE_RATIO = 10.0


def standardization(z: Any, weights: NDArray[np.float64] | None = None) -> Standardization:
    """Centres and scales from the columns of ``z`` ``(n, q)`` (``weights``: frequency weights, a row counting that
    many times): beside an intercept (the first all-ones column) a column is scaled by its standard deviation and,
    when its mean exceeds :data:`CENTRE_RATIO` of them, centred at its mean; without an intercept it is scaled by its
    root mean square. A column without variation is scaled by its mean's size (it is judged by
    :func:`plan_design`, which judges every column centred whether or not the fit centres it)."""
    n, q = z.shape
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64)
    total = float(w.sum())
    ones = constant_columns(z)
    intercept = int(ones[0]) if ones.size else None
    # every column divided by its largest |value| first: the moments of a column of size 1e200 (or 1e-200) would
    # overflow (underflow) in its own units
    size = column_largest(z)
    size = np.where((size > 0) & np.isfinite(size), size, 1.0)
    if sp.issparse(z):
        zs = (z @ sp.diags(1.0 / size)).tocsc()
        mean = np.asarray(zs.T @ w).ravel() / total
        square = np.asarray(zs.multiply(zs).T @ w).ravel() / total
        var = np.maximum(square - mean**2, 0.0)
        dense_cols = np.flatnonzero(np.diff(zs.indptr) > n // 2)
        for j in dense_cols:  # a numeric column: its variance from the centred values, not from the moments
            col = zs[:, j].toarray().ravel()
            var[j] = float(w @ (col - mean[j]) ** 2) / total
    else:
        dense = np.asarray(z, dtype=np.float64) / size
        mean = (w @ dense) / total
        var = (w @ (dense - mean) ** 2) / total
        square = var + mean**2
    centred = np.abs(mean) > CENTRE_RATIO * np.sqrt(var) if intercept is not None else np.zeros(q, dtype=bool)
    if intercept is not None:
        centred[intercept] = False
    centre = np.where(centred, mean, 0.0) * size
    spread = np.sqrt(var if intercept is not None else square)
    scale = np.where(spread > 0, spread, np.where(np.abs(mean) > 0, np.abs(mean), 1.0)) * size
    if intercept is not None:
        scale[intercept] = 1.0
    return Standardization(np.asarray(centre, dtype=np.float64), np.asarray(scale, dtype=np.float64), intercept)


@dataclass
class Moments:
    """Sums over rows of a standardized design ``u`` ``(n, q)``: the rows' weight, ``sum w u``, ``sum w u u'`` and
    the smallest and largest value of every original column, ``(2, q)`` (:func:`column_range`; a column is constant
    when they are equal, whatever its size). Chunks and parts add (``+``)."""

    weight: float
    sums: NDArray[np.float64]
    gram: NDArray[np.float64]
    largest: NDArray[np.float64]

    @classmethod
    def of(cls, u: Any, weights: NDArray[np.float64] | None, largest: NDArray[np.float64],
           rows: NDArray[np.bool_] | None = None) -> Moments:
        """The sums of the rows ``rows`` (all when None) of ``u`` with frequency ``weights`` (None: 1);
        ``largest``: the original columns' :func:`column_range`."""
        n = u.shape[0]
        w = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64)
        if rows is not None:
            w = np.where(rows, w, 0.0)
        sums = np.asarray(u.T @ w, dtype=np.float64).ravel()
        return cls(float(w.sum()), sums, weighted_gram(u, w), np.asarray(largest, dtype=np.float64))

    def __add__(self, other: Moments) -> Moments:
        return Moments(self.weight + other.weight, self.sums + other.sums, self.gram + other.gram,
                       np.vstack([np.minimum(self.largest[0], other.largest[0]),
                                  np.maximum(self.largest[1], other.largest[1])]))


def column_largest(z: Any) -> NDArray[np.float64]:
    """The largest ``|z|`` of every column, ``(q,)`` (dense or sparse)."""
    if sp.issparse(z):
        return np.asarray(abs(z).max(axis=0).toarray(), dtype=np.float64).ravel()
    return np.asarray(np.abs(z).max(axis=0, initial=0.0), dtype=np.float64)


def column_range(z: Any) -> NDArray[np.float64]:
    """The smallest and the largest value of every column, ``(2, q)`` (dense or sparse; no rows: ``+inf, -inf``)."""
    if z.shape[0] == 0:
        return np.vstack([np.full(z.shape[1], np.inf), np.full(z.shape[1], -np.inf)])
    if sp.issparse(z):
        return np.vstack([np.asarray(z.min(axis=0).toarray(), dtype=np.float64).ravel(),
                          np.asarray(z.max(axis=0).toarray(), dtype=np.float64).ravel()])
    dense = np.asarray(z, dtype=np.float64)
    return np.vstack([dense.min(axis=0), dense.max(axis=0)])


#: A categorical term's column as patsy and the plain designs name it: ``name[T.level]`` or ``name[level]`` (an
#: interaction's last factor too, ``x:C(g)[T.b]``).
_LEVEL = re.compile(r"^(?P<term>.*?)\[(?:T\.)?(?P<level>[^\]]*)\]$")


def unused_level(name: str) -> tuple[str, str] | None:
    """``(term, level)`` when ``name`` is the column of a categorical term's level, else None.

    Examples
    --------
    >>> from designer.regression.identify import unused_level
    >>> unused_level("C(region)[T.north]"), unused_level("age")
    (('C(region)', 'north'), None)
    """
    match = _LEVEL.match(name)
    return None if match is None else (match.group("term"), match.group("level"))


def informative_rows(channel_columns: NDArray[np.float64]) -> NDArray[np.bool_]:
    """The respondents whose recorded answer carries information, ``(n,)`` bool from the ``(k, n)`` likelihoods
    ``a[x, i] = M[x, E_i]`` of their answers: not the same for every input (an answer every input gives with the
    same probability, such as a "don't know" of a symmetric design, leaves the likelihood unchanged)."""
    a = np.asarray(channel_columns, dtype=np.float64)
    top = a.max(axis=0)
    return np.asarray(top - a.min(axis=0) > 1e-12 * np.maximum(top, 1e-300))


@dataclass(frozen=True)
class DesignPlan:
    """The verdict of :func:`plan_design`: the columns kept for the fit (in order), the aliased ones by the covariates
    and by the answers, and the warnings naming them."""

    kept: tuple[int, ...]
    aliased: tuple[int, ...] = ()
    answer_aliased: tuple[int, ...] = ()
    warnings: tuple[str, ...] = field(default=())
    unused: tuple[int, ...] = ()

    @property
    def dropped(self) -> tuple[int, ...]:
        """The terms without an estimate: aliased ones and levels no row has."""
        return tuple(sorted(self.aliased + self.answer_aliased + self.unused))

    @property
    def unidentified(self) -> tuple[int, ...]:
        """The terms the data do not tell apart (aliased by the covariates or by the answers)."""
        return tuple(sorted(self.aliased + self.answer_aliased))


def _centred_gram(m: Moments, std: Standardization) -> NDArray[np.float64]:
    """The Gram matrix of the columns about their means (the intercept keeps its own row: its norm, no cross terms)
    when there is an intercept, else the Gram matrix itself, in the standardized units."""
    if std.intercept is None or m.weight <= 0:
        return np.asarray(m.gram, dtype=np.float64)
    mean = m.sums / m.weight
    out = m.gram - m.weight * np.outer(mean, mean)
    i = std.intercept
    out[i, :] = 0.0
    out[:, i] = 0.0
    out[i, i] = m.weight
    return np.asarray((out + out.T) / 2)


def _sequential(gram: NDArray[np.float64], order: list[int]) -> tuple[list[int], dict[int, tuple[float, list[int]]]]:
    """Gram-Schmidt on the columns of ``gram`` (each scaled to unit length) in ``order``: the kept columns, and for
    each other column its squared relative residual and the kept columns it leans on."""
    from scipy.linalg import solve_triangular

    diag = np.diag(gram)
    kept: list[int] = []
    chol = np.zeros((len(order), len(order)))  # the kept columns' Cholesky factor, grown in its top-left corner
    rejected: dict[int, tuple[float, list[int]]] = {}
    for j in order:
        if not diag[j] > 0:
            rejected[j] = (0.0, [])
            continue
        size = len(kept)
        y = np.zeros(0)
        if size:
            col = gram[kept, j] / (np.sqrt(diag[kept]) * np.sqrt(diag[j]))
            y = solve_triangular(chol[:size, :size], col, lower=True, check_finite=False)
        residual = float(1.0 - y @ y)
        if residual <= ALIAS_TOL:
            coef = solve_triangular(chol[:size, :size].T, y, lower=False, check_finite=False) if size else y
            top = max(float(np.abs(coef).max(initial=0.0)), 1e-300)
            rejected[j] = (max(residual, 0.0), [kept[t] for t in np.flatnonzero(np.abs(coef) > 1e-3 * top)])
            continue
        chol[size, :size] = y
        chol[size, size] = np.sqrt(residual)
        kept.append(j)
    return kept, rejected


def _weakest(gram: NDArray[np.float64], kept: list[int]) -> int | None:
    """The last column with a weight of at least 5% in the weakest direction of the kept columns' correlations, when
    that direction's eigenvalue is at most :data:`ALIAS_TOL` of the largest; else None."""
    if len(kept) < 2:
        return None
    sub = gram[np.ix_(kept, kept)]
    d = np.sqrt(np.diag(sub))
    values, vectors = np.linalg.eigh(sub / np.outer(d, d))
    if values[0] > ALIAS_TOL * max(float(values[-1]), 1e-300):
        return None
    v = np.abs(vectors[:, 0])
    return kept[int(np.flatnonzero(v >= 0.05 * v.max())[-1])]


def plan_design(moments: Moments, std: Standardization, names: list[str], *,
                informative: Moments | None = None) -> DesignPlan:
    """Judge a design from its standardized sums (module docstring): refuse it, or say which columns to keep.

    Parameters
    ----------
    moments : Moments
        Over every respondent (frequency weights counted).
    std : Standardization
        The coordinates the sums were taken in.
    names : list of str
        The terms, one per column.
    informative : Moments, optional
        Over the respondents whose answer carries information (:func:`informative_rows`).

    Raises
    ------
    RegressionError
        A column without variation beside the intercept, an exact linear combination of other columns, or no answer
        that carries information (no term kept).
    """
    q = len(names)
    order = list(range(q))
    low, high = moments.largest[0], moments.largest[1]
    unused = [j for j in order if low[j] == high[j] == 0 and unused_level(names[j]) is not None]
    order = [j for j in order if j not in unused]
    if std.intercept is not None:  # the intercept first: a column is judged against it
        order.remove(std.intercept)
        order.insert(0, std.intercept)
        for j in order[1:]:
            if not high[j] > low[j]:  # one value in every row, however large or small
                raise RegressionError(f"the design matrix is singular: {names[j]!r} is constant ({_number(high[j])} "
                                      "in every row), a multiple of the intercept; drop it from the formula")
    gram = _centred_gram(moments, std)
    kept, rejected = _sequential(gram, order)
    aliased: list[int] = []
    for j in sorted(rejected):
        residual, leans = rejected[j]
        if residual <= DEPENDENT_TOL:
            before = ", ".join(names[t] for t in sorted(leans)) or "the terms before it"
            raise RegressionError(f"the design matrix is singular: {names[j]!r} is a linear combination of the "
                                  f"terms before it ({before}); drop it from the formula")
        aliased.append(j)
    while (weak := _weakest(gram, kept)) is not None:
        kept.remove(weak)
        aliased.append(weak)
    warnings = []
    if unused:
        levels = [unused_level(names[j]) or ("", names[j]) for j in unused]
        warnings.append(("unused level: " if len(unused) == 1 else "unused levels: ")
                        + ", ".join(f"{level!r} of {term}" for term, level in levels)
                        + (" occurs" if len(unused) == 1 else " occur") + " in no row; dropped as R drops unused "
                        "levels (no estimate)")
    if aliased:
        warnings.append("not identified: " + ", ".join(repr(names[j]) for j in sorted(aliased)) + " nearly "
                        "collinear with the other terms (their columns are almost a linear combination of the "
                        "others, centred and scaled): aliased and dropped as R's glm drops them, no estimate; the "
                        "other terms are the fit without them. Drop them from the formula, or combine them")
    answer_aliased: list[int] = []
    if informative is not None and kept:
        if informative.weight <= 0:
            answer_aliased = list(kept)
        else:
            sub = _centred_gram(informative, std)
            still, _ = _sequential(sub, [j for j in order if j in kept])
            while (weak := _weakest(sub, still)) is not None:
                still.remove(weak)
            answer_aliased = [j for j in kept if j not in still]
        if answer_aliased:
            kept = [j for j in kept if j not in answer_aliased]
            warnings.append("not identified: " + ", ".join(repr(names[j]) for j in sorted(answer_aliased))
                            + " cannot be told from the other terms on the answers that carry information (the "
                            "others are given with the same probability whatever the true answer, such as "
                            "\"don't know\"): the likelihood is flat along them, so they are dropped, no estimate")
    if not kept:
        raise RegressionError("no term is identified: no answer carries information (every recorded answer, such as "
                              "\"don't know\", is given with the same probability whatever the true answer), so the "
                              "likelihood does not depend on the coefficients")
    return DesignPlan(tuple(sorted(kept)), tuple(sorted(aliased)), tuple(sorted(answer_aliased)), tuple(warnings),
                      tuple(unused))


def _number(value: float) -> str:
    return f"{value:.6g}"
