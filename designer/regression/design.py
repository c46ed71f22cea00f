"""The design matrix of a regression: dense for the usual model, sparse (``scipy.sparse`` CSR) when it would be
large and mostly zeros, as with region, district or interviewer effects of hundreds of levels.

A formula of plain terms (columns, ``C(column)``, the intercept) is built without patsy
(:mod:`designer.regression.plain_terms`, the same matrix); for any other, patsy reads the formula and learns every
factor's levels (and any stateful transform) in one pass over row chunks (:func:`patsy.incr_dbuilder`). The rows
are then built chunk by chunk (:func:`patsy.build_design_matrices` for patsy's), each chunk kept sparse, so the
dense matrix never exists. Everything
downstream (:class:`~designer.regression.likelihood.Likelihood`) takes either kind through :func:`weighted_gram`.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from .identify import constant_columns, weighted_gram

__all__ = ["CHUNK_ROWS", "COLLINEAR_TOL", "SPARSE_CELLS", "Design", "build_rows", "column_norms", "constant_columns",
           "design_info", "design_matrix", "leverages", "weighted_gram"]

#: A design of more cells than this (rows x columns) is built sparse when at most a quarter of its cells are
#: non-zero (2e7 cells: 160 MB dense).
SPARSE_CELLS = 20_000_000
#: Rows per chunk when a design is built sparse.
CHUNK_ROWS = 20_000

#: A design matrix: a dense ``(n, q)`` array or a CSR matrix of that shape.
Design = Any


def _chunks(data: Any, rows: int) -> Any:
    return (data.iloc[start:start + rows] for start in range(0, len(data), rows))


def design_info(rhs: str, data: Any, eval_env: Any = None) -> Any:
    """The design of the right-hand side over all of ``data``: a plain formula's
    (:class:`~designer.regression.plain_terms.PlainDesign`, the same matrix without importing patsy), else patsy's
    :class:`DesignInfo` (levels, stateful transforms) read in chunks of :data:`CHUNK_ROWS` rows, in ``eval_env``
    (default: ``np`` alone). A PlainTable that holds the design of this right-hand side (made when the file was
    read) gives it."""
    from .plain_terms import plain_design

    held = getattr(data, "design", None)  # of a DataFrame, a column that may be called "design": not a tuple
    if isinstance(held, tuple) and held[0] == rhs:
        return held[1]
    plain = plain_design(rhs, data)
    if plain is not None:
        return plain
    import patsy

    env = eval_env if eval_env is not None else patsy.EvalEnvironment([{"np": np}])
    return patsy.incr_dbuilder(rhs, lambda: _chunks(data, CHUNK_ROWS), eval_env=env, NA_action="raise")


def _builder(info: Any) -> Any:
    """The function building the rows of some data for ``info`` (a plain design's own, else patsy's)."""
    from .plain_terms import PlainDesign

    if isinstance(info, PlainDesign):
        return info.build
    import patsy

    return lambda data: np.asarray(patsy.build_design_matrices([info], data, NA_action="raise")[0], dtype=np.float64)


def build_rows(info: Any, data: Any, *, sparse: bool | None = None) -> Design:
    """The design matrix of ``data`` for ``info``, ``(n, q)``: dense unless ``sparse`` (or, when ``sparse`` is
    None, unless it has more than :data:`SPARSE_CELLS` cells and at most a quarter of them are non-zero, judged
    on the first chunk)."""
    build = _builder(info)
    n, q = len(data), len(info.column_names)
    judge = sparse is None
    if sparse is None:
        sparse = n * q > SPARSE_CELLS
    if not sparse:
        return build(data)
    parts: list[Any] = []
    for chunk in _chunks(data, CHUNK_ROWS):
        block = build(chunk)
        if not parts and judge and np.count_nonzero(block) > 0.25 * block.size:
            return build_rows(info, data, sparse=False)  # dense after all: most cells are non-zero
        parts.append(sp.csr_matrix(block))
    return sp.vstack(parts, format="csr") if parts else sp.csr_matrix((0, q))


def column_norms(z: Design, weights: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    """The Euclidean norm of every column, ``(q,)``; with ``weights`` ``(n,)`` (frequency weights: a row stands
    for that many), ``sqrt(sum_i w_i z_ij^2)``, the norm of the replicated rows."""
    if weights is not None:
        return np.sqrt(np.asarray(weighted_gram(z, weights).diagonal(), dtype=np.float64))
    if sp.issparse(z):
        return np.sqrt(np.asarray(z.multiply(z).sum(axis=0), dtype=np.float64).ravel())
    return np.asarray(np.linalg.norm(z, axis=0))


def leverages(z: Design, info: NDArray[np.float64]) -> NDArray[np.float64]:
    """``z_i' info^-1 z_i`` of every row, ``(n,)`` (``info`` positive definite ``(q, q)``); a sparse ``z`` in row
    chunks, so no ``(n, q)`` dense array is formed."""
    if not sp.issparse(z):
        return np.asarray(np.einsum("ij,ji->i", z, np.linalg.solve(info, z.T)))
    inverse = np.linalg.inv(info)
    out = np.empty(z.shape[0])
    for start in range(0, z.shape[0], CHUNK_ROWS):
        rows = z[start:start + CHUNK_ROWS]
        out[start:start + rows.shape[0]] = np.asarray(rows.multiply(rows @ inverse).sum(axis=1)).ravel()
    return out


#: A direction of the covariates (columns scaled to unit norm) whose squared length is at most this share of the
#: largest is near-collinear: the data barely tell the terms along it apart.
COLLINEAR_TOL = 1e-6


def design_matrix(rhs: str, data: Any) -> tuple[Any, list[str], Any]:
    """``(z, names, info)``: the covariates of ``rhs`` over ``data`` (a plain formula's without patsy, any other
    through patsy), the columns' names as written and the design (:func:`design_info`), with one-line errors
    naming the column or row at fault."""
    from ..exceptions import RegressionError

    # a PlainTable (no isna) is complete: designer.regression.plain_table reads no table with a missing cell
    frame = hasattr(data, "isna")
    columns = [str(c) for c in data.columns] if frame else []
    named = set(re.findall(r"[A-Za-z_][A-Za-z0-9_.]*", rhs)) if frame else set()
    for name in sorted(named & set(columns)):
        missing = np.flatnonzero(data[name].isna().to_numpy())
        if missing.size:
            raise RegressionError(f"column {name!r} is missing at row {int(missing[0]) + 1} ({missing.size} row(s)): "
                                  "fill or drop those rows")
    try:
        info = design_info(rhs, data)
        z = build_rows(info, data)
    except Exception as exc:
        import patsy  # an error of patsy's is only raised when patsy built the design

        if not isinstance(exc, patsy.PatsyError):
            raise
        unknown = re.search(r"name '([^']+)' is not defined", str(exc))
        if unknown:
            every = list(getattr(data, "attrs", {}).get("file_columns", [str(c) for c in data.columns]))  # all
            raise RegressionError(f"formula names {unknown.group(1)!r}, which is not a column of the data; "
                                  f"the columns are {every}") from None
        said = str(exc).strip()
        raise RegressionError(f"formula {rhs!r}: {said.splitlines()[0] if said else type(exc).__name__}") from None
    one = _one_level(info)
    if one is not None:
        raise RegressionError(f"the design matrix is singular: {one[0]!r} has one level ({one[1]!r} in every row): "
                              "constant, a multiple of the intercept; drop it from the formula")
    names = [re.sub(r"Q\(\"([^\"]+)\"\)", r"\1", str(c)) for c in info.column_names]  # cov.age as written
    values = z.data if sp.issparse(z) else z
    if not np.all(np.isfinite(values)):
        raise RegressionError("the covariates contain inf or nan after the formula's transformations")
    subnormal = (values != 0) & (np.abs(values) < np.finfo(np.float64).tiny)
    if subnormal.any():  # their digits are lost, and a coefficient of their scale overflows
        column = int((z.tocoo().col[np.flatnonzero(subnormal.ravel())] if sp.issparse(z)
                      else np.flatnonzero(subnormal.any(axis=0)))[0])
        raise RegressionError(f"{names[column]!r} holds values below {np.finfo(np.float64).tiny:.3g} in magnitude "
                              "(subnormal numbers, whose digits are lost): multiply the column by a power of ten "
                              "first")
    if z.shape[1] == 0:
        raise RegressionError("the formula has no terms; write 'response ~ 1' for the intercept-only model")
    return z, names, info


def _one_level(info: Any) -> tuple[str, str] | None:
    """``(factor, level)`` of a categorical factor with a single level whose term has no column (beside the
    intercept its one level is the reference: the term is constant, like a covariate with one value), else None."""
    from .plain_terms import PlainDesign

    if isinstance(info, PlainDesign):
        for term in info.terms:
            if term.levels is not None and len(term.levels) == 1 and not term.column_names():
                return term.name, str(term.levels[0])
        return None
    for term in info.terms:
        span = info.term_name_slices[term.name()]
        if span.stop > span.start:
            continue
        for factor in term.factors:
            levels = info.factor_infos[factor].categories
            if levels is not None and len(levels) == 1:
                return factor.name(), str(levels[0])
    return None
