"""Storage patterns of sparse arrays, on the host (NumPy).

A *pattern* says which positions a sparse array stores; the values always come
from the dense array underneath (see ``docs/sparse.md``):

* row_sparse: ``rows``, a sorted 1-D int64 array of stored row indices;
* csr: ``(indptr, indices)``, the compressed-row offsets and the column index of
  each stored element (sorted within each row).
"""

from __future__ import annotations

import numpy as np

from ...base import MXNetError


class SparseStorageError(MXNetError, ValueError):
    """A storage type, shape or pattern that a sparse array cannot take."""


__all__ = [
    "SparseStorageError",
    "rows_from_dense",
    "csr_from_dense",
    "csr_row_ids",
    "check_rows",
    "check_csr",
    "coo_to_csr",
    "slice_csr",
]


def rows_from_dense(dense):
    """The rows of ``dense`` holding any non-zero (NaN counts as non-zero)."""
    a = np.asarray(dense)
    if a.ndim == 0:
        raise SparseStorageError("a row_sparse array needs at least one dimension")
    if a.shape[0] == 0:
        return np.zeros(0, np.int64)
    flat = a.reshape(a.shape[0], -1)
    return np.flatnonzero(np.any(flat != 0, axis=1)).astype(np.int64)


def csr_from_dense(dense):
    """``(indptr, indices)`` of the non-zeros of a 2-D array, row by row."""
    a = np.asarray(dense)
    if a.ndim != 2:
        raise SparseStorageError(f"a csr array must be 2-D, got shape {a.shape}")
    nz = a != 0
    indptr = np.zeros(a.shape[0] + 1, np.int64)
    np.cumsum(nz.sum(axis=1), out=indptr[1:])
    indices = np.nonzero(nz)[1].astype(np.int64)
    return indptr, indices


def csr_row_ids(indptr):
    """The row of each stored element of a csr pattern."""
    counts = np.diff(np.asarray(indptr, np.int64))
    return np.repeat(np.arange(len(counts), dtype=np.int64), counts)


def check_rows(rows, shape, what="row_sparse array"):
    """Validate row indices against ``shape`` (sorted, unique, in range)."""
    rows = np.asarray(rows)
    if rows.ndim != 1:
        raise SparseStorageError(f"{what}: indices must be 1-D, got shape {rows.shape}")
    if rows.size and (rows.min() < 0 or rows.max() >= shape[0]):
        raise SparseStorageError(
            f"{what}: row indices must lie in [0, {shape[0]}), got values from "
            f"{rows.min()} to {rows.max()}"
        )
    if rows.size > 1 and np.any(np.diff(rows) <= 0):
        raise SparseStorageError(
            f"{what}: row indices must be sorted in ascending order and unique"
        )


def check_csr(indptr, indices, shape, what="csr array"):
    """Validate a csr pattern against ``shape`` (MXNet's ``check_format(full_check=True)``)."""
    indptr, indices = np.asarray(indptr), np.asarray(indices)
    if indptr.ndim != 1 or indices.ndim != 1:
        raise SparseStorageError(f"{what}: indptr and indices must be 1-D")
    if len(indptr) != shape[0] + 1:
        raise SparseStorageError(
            f"{what}: indptr has {len(indptr)} entries, a matrix with {shape[0]} rows needs "
            f"{shape[0] + 1}"
        )
    if indptr[0] != 0 or indptr[-1] != len(indices) or np.any(np.diff(indptr) < 0):
        raise SparseStorageError(
            f"{what}: indptr must start at 0, never decrease and end at len(indices) "
            f"= {len(indices)}, got {indptr.tolist()}"
        )
    if indices.size and (indices.min() < 0 or indices.max() >= shape[1]):
        raise SparseStorageError(
            f"{what}: column indices must lie in [0, {shape[1]}), got values from "
            f"{indices.min()} to {indices.max()}"
        )
    if indices.size > 1:
        rows = csr_row_ids(indptr)
        bad = np.flatnonzero((rows[1:] == rows[:-1]) & (np.diff(indices) <= 0))
        if bad.size:
            r = int(rows[bad[0]])
            cols = indices[indptr[r] : indptr[r + 1]]
            raise SparseStorageError(
                f"{what}: the column indices of row {r} must be sorted and unique, "
                f"got {cols.tolist()}"
            )


def coo_to_csr(data, row, col, shape):
    """Sum duplicates and sort a COO triple; returns ``(data, indptr, indices)``."""
    data, row, col = np.asarray(data), np.asarray(row, np.int64), np.asarray(col, np.int64)
    if not (data.shape == row.shape == col.shape) or data.ndim != 1:
        raise SparseStorageError(
            f"csr_matrix((data, (row, col))): data, row and col must be 1-D of one length, "
            f"got shapes {data.shape}, {row.shape}, {col.shape}"
        )
    if row.size and (row.min() < 0 or row.max() >= shape[0] or col.min() < 0):
        raise SparseStorageError(f"csr_matrix: row/col indices out of range for shape {shape}")
    if col.size and col.max() >= shape[1]:
        raise SparseStorageError(
            f"csr_matrix: column index {col.max()} out of range for shape {shape}"
        )
    key = row * shape[1] + col
    uniq, inverse = np.unique(key, return_inverse=True)
    summed = np.zeros(len(uniq), data.dtype)
    np.add.at(summed, inverse, data)
    rows, cols = uniq // shape[1], uniq % shape[1]
    indptr = np.zeros(shape[0] + 1, np.int64)
    np.cumsum(np.bincount(rows, minlength=shape[0]), out=indptr[1:])
    return summed, indptr, cols.astype(np.int64)


def slice_csr(indptr, indices, begin, end):
    """The pattern of rows ``[begin, end)``."""
    lo, hi = int(indptr[begin]), int(indptr[end])
    return np.asarray(indptr[begin : end + 1]) - lo, np.asarray(indices[lo:hi])
