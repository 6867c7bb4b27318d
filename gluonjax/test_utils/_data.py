"""Random test data: arrays, shapes and NDArrays (dense or sparse) drawn from ``np.random``.

All draws use NumPy's global generator, so a test seeded with ``np.random.seed``
gets the same data on every run (and the same as MXNet's helpers for the dense
arrays and shapes).
"""

from __future__ import annotations

import numpy as np

from ._compare import default_context, default_dtype

__all__ = [
    "random_arrays",
    "random_uniform_arrays",
    "random_sample",
    "rand_shape_2d",
    "rand_shape_3d",
    "rand_shape_nd",
    "rand_coord_2d",
    "rand_ndarray",
    "rand_sparse_ndarray",
    "create_sparse_array",
    "create_sparse_array_zd",
    "shuffle_csr_column_indices",
    "assign_each",
    "assign_each2",
    "create_2d_tensor",
    "create_vector",
    "get_identity_mat",
    "get_identity_mat_batch",
    "new_matrix_with_real_eigvals_2d",
    "new_matrix_with_real_eigvals_nd",
    "new_orthonormal_matrix_2d",
    "new_sym_matrix_with_real_eigvals_2d",
    "new_sym_matrix_with_real_eigvals_nd",
]


def random_arrays(*shapes):
    """Standard-normal float32 NumPy arrays of the given shapes (one array if one shape).

    Examples
    --------
    >>> from gluonjax.test_utils import random_arrays
    >>> a, b = random_arrays((2, 3), (4,))
    >>> a.shape, b.dtype
    ((2, 3), dtype('float32'))
    """
    arrays = [
        np.array(np.random.randn(), dtype=default_dtype())
        if len(s) == 0
        else np.random.randn(*s).astype(default_dtype())
        for s in shapes
    ]
    return arrays[0] if len(arrays) == 1 else arrays


def random_uniform_arrays(*shapes, low=0.0, high=1.0, dtype=None):
    """A list of uniform ``[low, high)`` NumPy arrays of the given shapes."""
    dtype = default_dtype() if dtype is None else dtype
    return [np.random.uniform(low, high, size=s).astype(dtype) for s in shapes]


def random_sample(population, k):
    """``k`` distinct elements of the list ``population`` in random order."""
    if not 0 <= k <= len(population):
        raise ValueError(f"random_sample: k={k} must be between 0 and {len(population)}")
    pool = population[:]
    np.random.shuffle(pool)
    return pool[:k]


def rand_shape_2d(dim0=10, dim1=10, allow_zero_size=False):
    """A random 2-D shape with sides in ``[1, dim]`` (``[0, dim]`` with ``allow_zero_size``)."""
    low = 0 if allow_zero_size else 1
    return np.random.randint(low, dim0 + 1), np.random.randint(low, dim1 + 1)


def rand_shape_3d(dim0=10, dim1=10, dim2=10, allow_zero_size=False):
    """A random 3-D shape with sides in ``[1, dim]``."""
    low = 0 if allow_zero_size else 1
    return (
        np.random.randint(low, dim0 + 1),
        np.random.randint(low, dim1 + 1),
        np.random.randint(low, dim2 + 1),
    )


def rand_shape_nd(num_dim, dim=10, allow_zero_size=False):
    """A random ``num_dim``-D shape (tuple) with sides in ``[1, dim]``.

    Examples
    --------
    >>> from gluonjax.test_utils import rand_shape_nd
    >>> s = rand_shape_nd(3, dim=4)
    >>> len(s), all(1 <= d <= 4 for d in s)
    (3, True)
    """
    low = 0 if allow_zero_size else 1
    return tuple(np.random.randint(low, dim + 1, size=num_dim))


def rand_coord_2d(x_low, x_high, y_low, y_high):
    """A random integer point of ``[x_low, x_high) x [y_low, y_high)``."""
    return np.random.randint(x_low, x_high), np.random.randint(y_low, y_high)


def assign_each(the_input, function):
    """``function`` applied to every element of ``the_input`` (a copy if None)."""
    if function is None:
        return np.array(the_input)
    return np.vectorize(function, otypes=[np.float64])(the_input)


def assign_each2(input1, input2, function):
    """``function(a, b)`` over the elements of two equally shaped arrays."""
    if function is None:
        return np.array(input1)
    if input1.shape != input2.shape:
        raise ValueError(f"assign_each2: shapes {input1.shape} and {input2.shape} differ")
    return np.vectorize(function, otypes=[np.float64])(input1, input2)


def rand_ndarray(
    shape,
    stype="default",
    density=None,
    dtype=None,
    modifier_func=None,
    shuffle_csr_indices=False,
    distribution=None,
    ctx=None,
):
    """A random NDArray: standard normal values for ``stype='default'``, else a sparse array
    from :func:`rand_sparse_ndarray`.

    Examples
    --------
    >>> from gluonjax.test_utils import rand_ndarray
    >>> rand_ndarray((2, 3)).shape
    (2, 3)
    """
    from .. import nd

    ctx = ctx if ctx else default_context()
    if stype == "default":
        return nd.array(random_arrays(shape), dtype=dtype, ctx=ctx)
    arr, _ = rand_sparse_ndarray(
        shape,
        stype,
        density=density,
        modifier_func=modifier_func,
        dtype=dtype,
        shuffle_csr_indices=shuffle_csr_indices,
        distribution=distribution,
        ctx=ctx,
    )
    return arr


def _sparse_module():
    from .. import nd

    sp = getattr(nd, "sparse", None)
    if sp is None:
        from ..base import MXNetError

        raise MXNetError(
            "sparse test arrays need mx.nd.sparse (csr_matrix, row_sparse_array), which this "
            "gluonjax build does not have; use stype='default'"
        )
    return sp


def shuffle_csr_column_indices(csr):
    """Shuffle the column indices within each row of a scipy CSR matrix, in place."""
    for i in range(len(csr.indptr) - 1):
        lo, hi = csr.indptr[i], csr.indptr[i + 1]
        part = np.array(csr.indices[lo:hi])
        np.random.shuffle(part)
        csr.indices[lo:hi] = part


def _csr_uniform(rows, cols, density, dtype, data_init, shuffle):
    if not 0 <= density <= 1:
        raise ValueError(f"density must be in [0, 1], got {density}")
    nnz = int(rows * cols * density)
    flat = np.sort(np.random.choice(rows * cols, nnz, replace=False))
    values = np.random.rand(nnz).astype(dtype)
    if data_init is not None:
        values.fill(data_init)
    r, c = np.divmod(flat, cols)
    indptr = np.concatenate([[0], np.cumsum(np.bincount(r, minlength=rows))]).astype(np.int64)
    indices = c.astype(np.int64)
    if shuffle:
        for i in range(rows):
            part = indices[indptr[i] : indptr[i + 1]]
            np.random.shuffle(part)
    return values, indices, indptr


def _csr_powerlaw(rows, cols, density, dtype):
    """Dense matrix whose row ``i`` holds about ``2**i`` non-zeros (row 0 at least one)."""
    total = int(rows * cols * density)
    if total < 2 * rows:
        raise ValueError(
            f"powerlaw csr needs rows * cols * density >= 2 * rows; got density {density} "
            f"for shape ({rows}, {cols})"
        )
    out = np.zeros((rows, cols), dtype=dtype)
    left = total
    for row in range(rows):
        out[row, 0] = 1 + np.random.uniform(0.001, 2)
        left -= 1
        if left <= 0:
            return out
    width = 2
    for row in range(rows):
        limit = min(cols, width)
        if limit == cols and left > limit:
            out[row] = 1 + np.random.uniform(0.001, 2)
            left -= limit - 1
            if left <= 0:
                return out
            continue
        for col in range(1, limit):
            out[row, col] = 1 + np.random.uniform(0.001, 2)
            left -= 1
            if left <= 0:
                return out
        width *= 2
    return out


def rand_sparse_ndarray(
    shape,
    stype,
    density=None,
    dtype=None,
    distribution=None,
    data_init=None,
    rsp_indices=None,
    modifier_func=None,
    shuffle_csr_indices=False,
    ctx=None,
):
    """A random sparse NDArray and its NumPy parts.

    Returns
    -------
    (arr, parts)
        ``row_sparse``: ``parts = (values, row_indices)``; ``csr``:
        ``parts = (indptr, indices, data)`` of the returned array. ``density`` (random
        when None) is the fraction of rows (row_sparse) or elements (csr) kept;
        ``distribution`` is ``'uniform'`` or ``'powerlaw'`` (csr only).
    """
    from .. import nd

    sp = _sparse_module()
    ctx = ctx if ctx else default_context()
    density = np.random.rand() if density is None else density
    dtype = default_dtype() if dtype is None else dtype
    distribution = distribution or "uniform"
    if stype == "row_sparse":
        if distribution != "uniform":
            raise ValueError(
                f"row_sparse supports the uniform distribution only, not {distribution}"
            )
        if rsp_indices is not None:
            indices = np.asarray(rsp_indices)
        else:
            indices = np.argwhere(np.random.rand(shape[0]) < density).flatten()
        if indices.shape[0] == 0:
            return nd.zeros(shape, ctx=ctx, dtype=dtype, stype="row_sparse"), (
                np.array([], dtype=dtype),
                np.array([]),
            )
        val = np.random.rand(indices.shape[0], *shape[1:]).astype(dtype)
        if data_init is not None:
            val.fill(data_init)
        if modifier_func is not None:
            val = assign_each(val, modifier_func).astype(dtype)
        arr = sp.row_sparse_array((val, indices), shape=shape, dtype=dtype, ctx=ctx)
        return arr, (val, indices)
    if stype == "csr":
        if len(shape) != 2:
            raise ValueError(f"csr arrays are 2-D, got shape {shape}")
        if distribution == "uniform":
            data, indices, indptr = _csr_uniform(
                shape[0], shape[1], density, dtype, data_init, shuffle_csr_indices
            )
            arr = sp.csr_matrix((data, indices, indptr), shape=shape, dtype=dtype, ctx=ctx)
        elif distribution == "powerlaw":
            arr = nd.array(_csr_powerlaw(shape[0], shape[1], density, dtype), ctx=ctx).tostype(
                "csr"
            )
        else:
            raise ValueError(f"unknown distribution {distribution!r}; use uniform or powerlaw")
        return arr, (arr.indptr, arr.indices, arr.data)
    raise ValueError(f"unknown storage type {stype!r}; use 'row_sparse' or 'csr'")


def create_sparse_array(
    shape,
    stype,
    data_init=None,
    rsp_indices=None,
    dtype=None,
    modifier_func=None,
    density=0.5,
    shuffle_csr_indices=False,
):
    """A sparse NDArray of ``stype`` (see :func:`rand_sparse_ndarray`)."""
    if stype == "row_sparse":
        arr, _ = rand_sparse_ndarray(
            shape,
            stype,
            density=density,
            dtype=dtype,
            data_init=data_init,
            rsp_indices=rsp_indices,
            modifier_func=modifier_func,
        )
    else:
        arr, _ = rand_sparse_ndarray(
            shape,
            stype,
            density=density,
            dtype=dtype,
            data_init=data_init,
            modifier_func=modifier_func,
            shuffle_csr_indices=shuffle_csr_indices,
        )
    return arr


def create_sparse_array_zd(
    shape,
    stype,
    density,
    data_init=None,
    rsp_indices=None,
    dtype=None,
    modifier_func=None,
    shuffle_csr_indices=False,
):
    """Like :func:`create_sparse_array`; ``density=0`` gives an all-zero array."""
    if stype == "row_sparse":
        density = 0.0
        if rsp_indices is not None and len(rsp_indices) > shape[0]:
            raise ValueError("more row indices than rows")
    return create_sparse_array(
        shape,
        stype,
        data_init=data_init,
        rsp_indices=rsp_indices,
        dtype=dtype,
        modifier_func=modifier_func,
        density=density,
        shuffle_csr_indices=shuffle_csr_indices,
    )


def create_2d_tensor(rows, columns, dtype=np.int64):
    """``rows x columns`` NDArray whose row ``i`` is filled with ``i``."""
    from .. import nd

    col = nd.arange(0, rows, dtype=dtype).reshape(rows, 1)
    return nd.broadcast_to(col, shape=(rows, columns))


def create_vector(size, dtype=np.int64):
    """``nd.arange(size)``."""
    from .. import nd

    return nd.arange(0, size, dtype=dtype)


def get_identity_mat(size):
    """A ``size x size`` identity NDArray."""
    from .. import nd

    return nd.eye(size)


def get_identity_mat_batch(size):
    """Two stacked ``size x size`` identity matrices."""
    from .. import nd

    eye = np.eye(size, dtype=np.float32)
    return nd.array([eye, eye])


def new_matrix_with_real_eigvals_2d(n):
    """A random ``n x n`` matrix with real, distinct eigenvalues (Q diag Q^-1)."""
    shape = (n, n)
    q = np.random.normal(size=shape)
    while abs(np.linalg.det(q)) < 1e-3:
        q = np.random.normal(size=shape)
    eig = np.sort(np.random.uniform(-1, 1, size=n))
    return q @ np.diag(eig) @ np.linalg.inv(q)


def new_matrix_with_real_eigvals_nd(shape):
    """A batch (leading axes of ``shape``) of :func:`new_matrix_with_real_eigvals_2d`."""
    n = int(np.prod(shape[:-2]))
    return np.array([new_matrix_with_real_eigvals_2d(shape[-1]) for _ in range(n)]).reshape(shape)


def new_orthonormal_matrix_2d(n):
    """A random ``n x n`` orthonormal matrix."""
    q, _ = np.linalg.qr(np.random.uniform(-10, 10, (n, n)))
    return q


def new_sym_matrix_with_real_eigvals_2d(n):
    """A random symmetric ``n x n`` matrix with eigenvalues in [-1, 1]."""
    q = new_orthonormal_matrix_2d(n)
    return q @ np.diag(np.random.uniform(-1, 1, size=n)) @ q.T


def new_sym_matrix_with_real_eigvals_nd(shape):
    """A batch of :func:`new_sym_matrix_with_real_eigvals_2d`."""
    n = int(np.prod(shape[:-2]))
    return np.array([new_sym_matrix_with_real_eigvals_2d(shape[-1]) for _ in range(n)]).reshape(
        shape
    )
