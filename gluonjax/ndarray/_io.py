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

from .._io.atomic import atomic_write, read_bytes
from .._io.ndformat import SparseRecord, read_arrays, write_arrays
from ..base import ArgumentTypeError, FileFormatError
from ..context import current_context
from ..util import np_shape_state
from .ndarray import NDArray

__all__ = ["save", "load", "load_frombuffer"]


def _host(a, what):
    if not isinstance(a, NDArray):
        raise ArgumentTypeError(
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
    is written atomically: an error never leaves a half-written file. Inside
    ``mx.np_shape(True)`` the records are MXNet's NumPy-shape (V3) records, which
    load only inside ``np_shape(True)`` again, as in MXNet.
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
        raise ArgumentTypeError(
            f"nd.save: data is a {type(data).__name__}; it must be an NDArray, a list of "
            f"NDArrays or a dict of str -> NDArray (convert a numpy array with mx.nd.array)"
        )
    atomic_write(fname, write_arrays(arrays, names, np_shape=np_shape_state()))


def load(fname):
    """Load arrays saved by ``nd.save`` (gluonjax or MXNet): a list, or a dict if named.

    float64/int64 arrays load as float64/int64 (as MXNet).
    Raises :class:`~gluonjax.base.FileFormatError` for a damaged or foreign file,
    and (as MXNet) for NumPy-shape records outside ``mx.np_shape(True)`` (unless the file
    holds a 0-d array, which only such files can) or plain records inside it. Files of
    MXNet before 0.9 (V0 records) load too. Nothing in the file is unpickled or executed.
    """
    path = os.fspath(fname)
    return _from_bytes(read_bytes(path, "reading NDArray file"), path)


def load_frombuffer(buf):
    """Load arrays from the bytes of a file written by ``nd.save`` (a list or a dict).

    Examples
    --------
    >>> import os, tempfile
    >>> import gluonjax as mx
    >>> f = os.path.join(tempfile.mkdtemp(), "x.nd")
    >>> mx.nd.save(f, [mx.nd.ones(2)])
    >>> mx.nd.load_frombuffer(open(f, "rb").read())[0].asnumpy().tolist()
    [1.0, 1.0]
    """
    if not isinstance(buf, (bytes, bytearray, memoryview)):
        raise FileFormatError(f"load_frombuffer needs bytes, got {type(buf).__name__}")
    return _from_bytes(bytes(buf), "buffer")


def _from_bytes(raw, source):
    arrays, names = read_arrays(raw, source=source, np_shape=np_shape_state())
    out = _to_nd(arrays)
    return dict(zip(names, out, strict=True)) if names else out


def _to_nd(arrays):
    """NDArrays on the current context: one batched transfer for the whole file."""
    from .sparse import csr_matrix, row_sparse_array

    ctx = current_context()
    dense = [a for a in arrays if not isinstance(a, SparseRecord)]
    host = [a.astype(jax.dtypes.canonicalize_dtype(a.dtype), copy=False) for a in dense]
    device = ctx.jax_device if ctx.device_type == "gpu" else jax.local_devices(backend="cpu")[0]
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
