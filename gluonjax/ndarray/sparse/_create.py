"""Making sparse arrays: ``csr_matrix``, ``row_sparse_array``, ``zeros``, ``empty``, ``array``."""

from __future__ import annotations

import numpy as np

from ..._ops.registry import dtype_of
from ...base import ArgumentTypeError
from ..ndarray import NDArray
from . import _pattern as P
from ._array import BaseSparseNDArray, CSRNDArray, RowSparseNDArray, SparseStorageError
from ._malformed import malformed

__all__ = ["csr_matrix", "row_sparse_array", "zeros", "empty", "array"]


def _place(x, ctx):
    from .._creation import _place as place

    return place(x, ctx)


def _ctx(ctx):
    from ...context import Context, current_context

    ctx = ctx if ctx is not None else current_context()
    return ctx if isinstance(ctx, Context) else Context(ctx)


def _sparse(cls, dense, ctx, pattern):
    """A ``cls`` of the host array ``dense`` on ``ctx`` (a logical context is remembered)."""
    out = cls(_place(dense, ctx), pattern)
    ctx = _ctx(ctx)
    if ctx.device_id and ctx.is_logical:
        out._ctx = ctx
    return out


def _flag(arr, problem):
    """Remember that ``arr``'s definition was out of order: ``check_format()`` reports it
    (as MXNet's does) until the array gets a new value."""
    if problem is not None:
        arr._format_problem(problem)
    return arr


def _is_scipy(x, kind=None):
    mod = type(x).__module__ or ""
    if not mod.startswith("scipy.sparse"):
        return False
    return kind is None or getattr(x, "format", None) == kind


def _default_dtype(src, dtype):
    if dtype is not None:
        return dtype_of(dtype)
    if isinstance(src, (NDArray, np.ndarray)) or _is_scipy(src):
        return np.dtype(src.dtype)
    return np.dtype(np.float32)


def _host(x, dtype=None):
    if isinstance(x, NDArray):
        x = x.asnumpy()
    try:
        return np.asarray(x, dtype=dtype)
    except (TypeError, ValueError) as err:
        raise ArgumentTypeError(
            f"values must be array like, got {type(x).__name__} ({err})"
        ) from None


def _check_shape(given, wanted):
    if given and wanted and tuple(given) != tuple(wanted):
        raise SparseStorageError(f"Shape mismatch detected. {tuple(given)} v.s. {tuple(wanted)}")


def _shape(shape):
    return (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)


def _csr_from_definition(data, indices, indptr, shape=None, ctx=None, dtype=None):
    dtype = _default_dtype(data, dtype)
    data, indptr, indices = _host(data, dtype), _host(indptr, np.int64), _host(indices, np.int64)
    if shape is None:
        if indices.size == 0:
            raise SparseStorageError("csr_matrix: invalid shape (no indices to infer it from)")
        shape = (len(indptr) - 1, int(indices.max()) + 1)
    shape = _shape(shape)
    if data.ndim != 1 or indptr.ndim != 1 or indices.ndim != 1 or indptr.size == 0:
        raise SparseStorageError(
            f"csr_matrix((data, indices, indptr)): all three must be 1-D and indptr non-empty, "
            f"got shapes {data.shape}, {indices.shape}, {indptr.shape}"
        )
    if len(shape) != 2:
        raise SparseStorageError(f"csr_matrix: the shape must be 2-D, got {shape}")
    unsorted = None
    try:
        if data.size != indices.size:
            raise SparseStorageError(f"data has {data.size} values but indices has {indices.size}")
        P.check_csr(indptr, indices, shape, "csr_matrix")
    except SparseStorageError as err:  # MXNet builds it; check_format() fails
        try:  # columns out of order only: the value is defined (MXNet's ops accept it)
            order = np.lexsort((indices, P.csr_row_ids(indptr)))
            P.check_csr(indptr, indices[order], shape, "csr_matrix")
        except (SparseStorageError, ValueError):
            return malformed("csr", shape, dtype, _ctx(ctx), (data, indices, indptr), str(err))
        data, indices, unsorted = data[order], indices[order], str(err)
    dense = np.zeros(shape, dtype)
    dense[P.csr_row_ids(indptr), indices] = data
    return _flag(_sparse(CSRNDArray, dense, ctx, (indptr, indices)), unsorted)


def csr_matrix(arg1, shape=None, ctx=None, dtype=None):
    """A CSRNDArray: a 2-D array in compressed sparse row format.

    Parameters
    ----------
    arg1 : tuple or array_like
        ``(M, N)`` for an empty matrix; ``(data, indices, indptr)``; ``(data, (row, col))``
        in coordinate form (duplicates are summed); a CSRNDArray or
        ``scipy.sparse.csr_matrix``; or any dense 2-D array.
    shape : tuple of int, optional
        Inferred from the indices when not given.
    ctx : Context, optional
    dtype : str or numpy dtype, optional
        Default: the data's dtype for NumPy/NDArray/scipy data, else float32.

    Returns
    -------
    CSRNDArray

    Examples
    --------
    >>> import gluonjax as mx
    >>> a = mx.nd.sparse.csr_matrix(([1.0, 2.0, 3.0], [1, 0, 2], [0, 1, 2, 2, 3]), shape=(4, 3))
    >>> a.asnumpy().tolist()
    [[0.0, 1.0, 0.0], [2.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 3.0]]
    """
    if isinstance(arg1, tuple):
        if len(arg1) == 2 and isinstance(arg1[1], tuple) and len(arg1[1]) == 2:
            data, (row, col) = arg1
            data, row, col = _host(data), _host(row, np.int64), _host(col, np.int64)
            if shape is None:
                if row.size == 0:
                    raise SparseStorageError("csr_matrix: cannot infer the shape of empty data")
                shape = (int(row.max()) + 1, int(col.max()) + 1)
            shape = _shape(shape)
            summed, indptr, indices = P.coo_to_csr(data, row, col, shape)
            return _csr_from_definition(
                summed, indices, indptr, shape, ctx, dtype if dtype is not None else np.float32
            )
        if len(arg1) == 2:
            _check_shape(arg1, shape)
            return zeros("csr", arg1, ctx=ctx, dtype=dtype)
        if len(arg1) == 3:
            return _csr_from_definition(arg1[0], arg1[1], arg1[2], shape, ctx, dtype)
        raise SparseStorageError(f"csr_matrix: unexpected length of input tuple: {len(arg1)}")
    if isinstance(arg1, CSRNDArray) or _is_scipy(arg1, "csr"):
        _check_shape(arg1.shape, shape)
        return array(arg1, ctx=ctx, dtype=dtype)
    if isinstance(arg1, RowSparseNDArray):
        raise SparseStorageError("csr_matrix: unexpected input type RowSparseNDArray")
    if _is_scipy(arg1):
        return csr_matrix(arg1.tocsr(), shape, ctx, dtype)
    from .._creation import array as dense_array

    dns = dense_array(arg1, ctx=ctx, dtype=_default_dtype(arg1, dtype))
    _check_shape(dns.shape, shape)
    return dns.tostype("csr")


def _rsp_from_definition(data, indices, shape=None, ctx=None, dtype=None):
    dtype = _default_dtype(data, dtype)
    data, indices = _host(data, dtype), _host(indices, np.int64)
    if shape is None:
        if indices.size == 0:
            raise SparseStorageError(
                "row_sparse_array: invalid shape (no indices to infer it from)"
            )
        shape = (int(indices[-1]) + 1,) + data.shape[1:]
    shape = _shape(shape)
    if data.ndim != len(shape) or indices.ndim != 1 or int(np.prod(shape[1:])) == 0:
        raise SparseStorageError(
            f"row_sparse_array((data, indices)): data of shape {data.shape} and indices of shape "
            f"{indices.shape} do not describe an array of shape {shape}"
        )
    if data.shape[1:] != shape[1:]:
        raise SparseStorageError(
            f"row_sparse_array: data of shape {data.shape} needs rows of shape {shape[1:]}"
        )
    unsorted = None
    try:
        if data.shape[0] != indices.size:
            raise SparseStorageError(
                f"data has {data.shape[0]} rows but indices has {indices.size} entries"
            )
        P.check_rows(indices, shape, "row_sparse_array")
    except SparseStorageError as err:  # MXNet builds it; check_format() fails
        try:  # rows out of order only: the value is defined (MXNet's ops accept it)
            order = np.argsort(indices, kind="stable")
            if data.shape[0] != indices.size:
                raise
            P.check_rows(indices[order], shape, "row_sparse_array")
        except SparseStorageError:
            return malformed("row_sparse", shape, dtype, _ctx(ctx), (data, indices), str(err))
        data, indices, unsorted = data[order], indices[order], str(err)
    dense = np.zeros(shape, dtype)
    dense[indices] = data
    return _flag(_sparse(RowSparseNDArray, dense, ctx, indices), unsorted)


def row_sparse_array(arg1, shape=None, ctx=None, dtype=None):
    """A RowSparseNDArray: the rows ``data[i]`` stored at ``indices[i]``, other rows zero.

    Parameters
    ----------
    arg1 : tuple or array_like
        A shape ``(D0, D1, ...)`` for an empty array; ``(data, indices)`` with
        ascending row indices; a RowSparseNDArray; or any dense array.
    shape : tuple of int, optional
        Inferred as ``(indices[-1] + 1,) + data.shape[1:]`` when not given.
    ctx : Context, optional
    dtype : str or numpy dtype, optional

    Returns
    -------
    RowSparseNDArray

    Examples
    --------
    >>> import gluonjax as mx
    >>> a = mx.nd.sparse.row_sparse_array(([[1.0, 2.0], [3.0, 4.0]], [1, 4]), shape=(6, 2))
    >>> a.asnumpy()[[1, 4]].tolist(), a.indices.asnumpy().tolist()
    ([[1.0, 2.0], [3.0, 4.0]], [1, 4])
    """
    if isinstance(arg1, tuple):
        if len(arg1) < 2:
            raise SparseStorageError(f"row_sparse_array: unexpected tuple length {len(arg1)}")
        if len(arg1) > 2 or all(isinstance(a, (int, np.integer)) for a in arg1):
            _check_shape(arg1, shape)
            return zeros("row_sparse", arg1, ctx=ctx, dtype=dtype)
        return _rsp_from_definition(arg1[0], arg1[1], shape, ctx, dtype)
    if isinstance(arg1, RowSparseNDArray):
        _check_shape(arg1.shape, shape)
        return array(arg1, ctx=ctx, dtype=dtype)
    if isinstance(arg1, CSRNDArray):
        raise SparseStorageError("row_sparse_array: unexpected input type CSRNDArray")
    from .._creation import array as dense_array

    dns = dense_array(arg1, ctx=ctx, dtype=_default_dtype(arg1, dtype))
    _check_shape(dns.shape, shape)
    return dns.tostype("row_sparse")


def zeros(stype, shape, ctx=None, dtype=None, **kwargs):
    """An all-zero array of storage type ``stype`` (nothing stored).

    Examples
    --------
    >>> import gluonjax as mx
    >>> z = mx.nd.sparse.zeros('csr', (2, 3))
    >>> z.stype, z.indptr.asnumpy().tolist()
    ('csr', [0, 0, 0])
    """
    from .._creation import zeros as dense_zeros

    if stype in (None, "default"):
        return dense_zeros(shape, ctx=ctx, dtype=dtype, **kwargs)
    shape = _shape(shape)
    dt = np.float32 if dtype is None else dtype_of(dtype)
    if stype == "row_sparse":
        if not shape:
            raise SparseStorageError("a row_sparse array needs at least one dimension")
        return _sparse(RowSparseNDArray, np.zeros(shape, dt), ctx, np.zeros(0, np.int64))
    if stype == "csr":
        if len(shape) != 2:
            raise SparseStorageError(f"a csr array must be 2-D, got shape {shape}")
        pattern = (np.zeros(shape[0] + 1, np.int64), np.zeros(0, np.int64))
        return _sparse(CSRNDArray, np.zeros(shape, dt), ctx, pattern)
    raise SparseStorageError(
        f"unknown storage type {stype!r}; use 'default', 'row_sparse' or 'csr'"
    )


def empty(stype, shape, ctx=None, dtype=None):
    """An array of storage type ``stype``; like ``zeros`` (nothing is stored)."""
    if stype is None:
        raise SparseStorageError("empty() needs a storage type")
    return zeros(stype, shape, ctx=ctx, dtype=dtype)


def array(source_array, ctx=None, dtype=None):
    """A sparse copy of a CSRNDArray, RowSparseNDArray or ``scipy.sparse.csr_matrix``.

    Examples
    --------
    >>> import gluonjax as mx
    >>> a = mx.nd.array([[0, 1], [0, 0]]).tostype('csr')
    >>> b = mx.nd.sparse.array(a, dtype='float16')
    >>> b.stype, b.dtype.name
    ('csr', 'float16')
    """
    if isinstance(source_array, NDArray):
        if not isinstance(source_array, BaseSparseNDArray):
            raise SparseStorageError(
                "Please use `tostype` to create RowSparseNDArray or CSRNDArray from an NDArray"
            )
        out = source_array.astype(_default_dtype(source_array, dtype))
        if ctx is not None:
            out = out.as_in_context(ctx)
        return out
    if _is_scipy(source_array, "csr"):
        csr = source_array.sorted_indices()
        csr.sum_duplicates()
        return _csr_from_definition(
            csr.data, csr.indices, csr.indptr, csr.shape, ctx, _default_dtype(source_array, dtype)
        )
    if isinstance(source_array, (np.ndarray, np.generic)):
        raise SparseStorageError(
            "Please use mx.nd.array to create an NDArray with a source_array of type "
            f"{type(source_array).__name__}"
        )
    raise SparseStorageError(f"Unexpected source_array type: {type(source_array).__name__}")
