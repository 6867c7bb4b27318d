"""``nd.save`` / ``nd.load`` in MXNet's own binary format (files MXNet 1.x reads and writes).

Examples
--------
>>> import os, tempfile
>>> import gluonjax as mx
>>> f = os.path.join(tempfile.mkdtemp(), "x.nd")
>>> mx.nd.save(f, {"w": mx.nd.ones((2, 3))})
>>> mx.nd.load(f)["w"].shape
(2, 3)
"""

from __future__ import annotations

import os

import jax
import numpy as np

from .._io.atomic import atomic_write
from .._io.ndformat import SparseRecord, read_arrays, write_arrays
from ..base import FileFormatError
from ..context import current_context
from .ndarray import NDArray

__all__ = ["save", "load"]


def _host(a, what):
    if not isinstance(a, NDArray):
        raise FileFormatError(
            f"nd.save: {what} is a {type(a).__name__}, not an NDArray; data must be an "
            f"NDArray, a list of NDArrays or a dict of str -> NDArray"
        )
    if a.stype != "default":  # MXNet's sparse record: stored values and aux arrays
        aux = [a.indices.asnumpy()] if a.stype == "row_sparse" else [a.indptr, a.indices]
        aux = [np.asarray(getattr(x, "asnumpy", lambda x=x: x)(), np.int64) for x in aux]
        return SparseRecord(a.stype, a.shape, a.data.asnumpy(), aux)
    return np.asarray(a.asnumpy())


def save(fname, data):
    """Save an NDArray, a list of NDArrays or a dict str -> NDArray to ``fname``.

    The file is MXNet's binary format (``mx.nd.load`` in MXNet 1.x reads it) and
    is written atomically: an error never leaves a half-written file.
    """
    if isinstance(data, NDArray):
        data = [data]
    if isinstance(data, dict):
        names = list(data)
        for k in names:
            if not isinstance(k, str):
                raise FileFormatError(f"nd.save: dict keys must be str, got {k!r}")
        arrays = [_host(data[k], f"data[{k!r}]") for k in names]
    elif isinstance(data, (list, tuple)):
        names = []
        arrays = [_host(a, f"data[{i}]") for i, a in enumerate(data)]
    else:
        raise FileFormatError(
            f"nd.save: data is a {type(data).__name__}; it must be an NDArray, a list of "
            f"NDArrays or a dict of str -> NDArray"
        )
    atomic_write(fname, write_arrays(arrays, names))


def load(fname):
    """Load arrays saved by ``nd.save`` (gluonjax or MXNet): a list, or a dict if named.

    float64/int64 arrays load as float32/int32 unless jax's x64 mode is on.
    Raises :class:`~gluonjax.base.FileFormatError` for a damaged or foreign file.
    """
    path = os.fspath(fname)
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except IsADirectoryError:
        raise FileFormatError(f"{path}: is a directory, not an NDArray file") from None
    arrays, names = read_arrays(raw, source=path)
    out = _to_nd(arrays)
    return dict(zip(names, out, strict=True)) if names else out


def _to_nd(arrays):
    """NDArrays on the current context: one batched transfer for the whole file."""
    from .sparse import csr_matrix, row_sparse_array

    ctx = current_context()
    dense = [a for a in arrays if not isinstance(a, SparseRecord)]
    host = [a.astype(jax.dtypes.canonicalize_dtype(a.dtype), copy=False) for a in dense]
    device = ctx.jax_device if ctx.device_type == "gpu" else jax.devices("cpu")[0]
    placed = iter(jax.device_put(host, device))
    out = []
    for a in arrays:
        if not isinstance(a, SparseRecord):
            out.append(NDArray(next(placed)))
        elif a.stype == "row_sparse":
            out.append(row_sparse_array((a.data, a.aux[0]), shape=a.shape, ctx=ctx))
        else:
            out.append(csr_matrix((a.data, a.aux[1], a.aux[0]), shape=a.shape, ctx=ctx))
    return out
