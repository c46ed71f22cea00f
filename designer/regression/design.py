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

from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

__all__ = ["CHUNK_ROWS", "COLLINEAR_TOL", "SPARSE_CELLS", "Design", "build_rows", "column_norms", "constant_columns",
           "design_info", "leverages", "weighted_gram"]

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
    (default: ``np`` alone)."""
    from .plain_terms import plain_design

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


def weighted_gram(z: Design, weight: NDArray[np.float64]) -> NDArray[np.float64]:
    """``z' diag(weight) z``, ``(q, q)`` dense, for a dense or sparse ``z``."""
    if sp.issparse(z):
        return np.asarray((z.T @ sp.diags(weight) @ z).toarray())
    return np.asarray(z.T @ (weight[:, None] * z))


def column_norms(z: Design, weights: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    """The Euclidean norm of every column, ``(q,)``; with ``weights`` ``(n,)`` (frequency weights: a row stands
    for that many), ``sqrt(sum_i w_i z_ij^2)``, the norm of the replicated rows."""
    if weights is not None:
        return np.sqrt(np.asarray(weighted_gram(z, weights).diagonal(), dtype=np.float64))
    if sp.issparse(z):
        return np.sqrt(np.asarray(z.multiply(z).sum(axis=0), dtype=np.float64).ravel())
    return np.asarray(np.linalg.norm(z, axis=0))


def constant_columns(z: Design, value: float = 1.0) -> NDArray[np.int64]:
    """The columns whose every entry equals ``value`` (non-zero), in order."""
    if sp.issparse(z):
        hits = np.asarray((z == value).sum(axis=0)).ravel()
        return np.flatnonzero(hits == z.shape[0])
    return np.flatnonzero(np.all(z == value, axis=0))


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
