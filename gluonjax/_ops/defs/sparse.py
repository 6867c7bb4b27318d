"""Storage operators: cast_storage and _sparse_retain.

Every array's value is dense underneath (see ``docs/sparse.md``), so these ops
compute the dense value of MXNet's result; ``nd.sparse`` attaches the storage
type and pattern to it. In a symbol graph they are the same ops MXNet's JSON names.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ..registry import Attr, register

STYPES = ("default", "row_sparse", "csr")


@jax.custom_jvp
def _unstored_to_zero(data, stored):
    """``data`` with every position not ``stored`` set to +0 (a sparse array stores no -0.0)."""
    return jnp.where(stored, data, jnp.zeros_like(data))


@_unstored_to_zero.defjvp
def _unstored_to_zero_jvp(primals, tangents):
    return _unstored_to_zero(*primals), tangents[0]  # the gradient is the identity


@register("cast_storage", attrs={"stype": Attr("str", choices=STYPES)})
def cast_storage(data, *, stype):
    """The same values in storage type ``stype``.

    Positions a sparse result does not store read as +0.0 (MXNet stores no -0.0 there);
    the gradient is the identity.
    """
    if stype == "csr":
        if data.ndim != 2:
            raise ValueError(
                f"To convert to a CSR, the NDArray should be 2 Dimensional. Current shape is "
                f"{data.shape}"
            )
        return _unstored_to_zero(data, data != 0)
    if stype == "row_sparse":
        if data.ndim == 0:
            raise ValueError("a row_sparse array needs at least one dimension")
        rows = jnp.any(data.reshape(data.shape[0], -1) != 0, axis=1)
        return _unstored_to_zero(data, rows.reshape((-1,) + (1,) * (data.ndim - 1)))
    return data


@register("_sparse_retain", inputs=("data", "indices"))
def sparse_retain(data, indices):
    """Keep the rows of ``data`` listed in ``indices``; every other row becomes zero."""
    if data.ndim == 0:
        raise ValueError("_sparse_retain needs at least a 1-d data array")
    idx = indices.reshape(-1).astype(jnp.int32)
    keep = jnp.zeros((data.shape[0],), data.dtype).at[idx].set(1, mode="drop")
    return data * keep.reshape((-1,) + (1,) * (data.ndim - 1))


@register(
    "_sparse_csr_dot",
    inputs=("data", "indices", "rhs"),
    attrs={"shape": Attr("shape"), "transpose_a": Attr("bool", False)},
)
def sparse_csr_dot(data, indices, rhs, *, shape, transpose_a):
    """``dot(csr, rhs)`` of a csr matrix given as its stored ``data`` and ``(row, col)``
    ``indices`` (``jax.experimental.sparse`` BCOO): what ``nd.dot`` runs for a CSRNDArray
    whose pattern is known and that needs no gradient."""
    from jax.experimental import sparse as jsparse

    lhs = jsparse.BCOO(
        (data, indices), shape=tuple(shape), indices_sorted=True, unique_indices=True
    )
    contract = 0 if transpose_a else 1
    return jsparse.bcoo_dot_general(
        lhs, rhs, dimension_numbers=(((contract,), (0,)), ((), ()))
    ).astype(rhs.dtype)


@register("_contrib_getnnz", attrs={"axis": Attr("int?", None)})
def getnnz(data, *, axis):
    """The number of stored values of a csr matrix: in all (shape ``(1,)``) or per row
    (``axis=1``; MXNet 1.9.1 has no ``axis=0``). ``nd.contrib.getnnz`` counts the csr's
    stored positions (explicit zeros included); on a dense value (a symbol graph) it
    counts the non-zeros. int64 (int32 while 64-bit types are off).

    Examples
    --------
    >>> import gluonjax as mx
    >>> x = mx.nd.array([[0, 1, 2], [0, 0, 3]]).tostype('csr')
    >>> mx.nd.contrib.getnnz(x).asnumpy().tolist()
    [3]
    >>> mx.nd.contrib.getnnz(x, axis=1).asnumpy().tolist()
    [2, 1]
    """
    if data.ndim != 2:
        raise ValueError(f"getnnz needs a 2-d (csr) matrix, got shape {data.shape}")
    dt = jax.dtypes.canonicalize_dtype(jnp.int64)
    nz = (data != 0).astype(dt)
    if axis is None:
        return jnp.sum(nz).reshape(1)
    if axis != 1:
        raise ValueError(f"axis must be None or 1 (MXNet has no per-column count), got {axis}")
    return jnp.sum(nz, axis=1)
