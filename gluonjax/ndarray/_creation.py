"""Array creation: ``array``, ``zeros``, ``ones``, ``full``, ``empty``, ``arange``, ``eye``..."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .._ops.defs.shape_create import range_length, range_values
from .._ops.registry import dtype_of
from ..base import ArgumentTypeError, InvalidArgumentError, ShapeError
from ..context import Context, current_context
from ..util import is_np_shape
from .ndarray import NDArray

__all__ = ["array", "zeros", "ones", "full", "empty", "arange", "eye", "linspace", "from_jax"]


def _place(x, ctx):
    """Put ``x`` on ``ctx``.

    Host data goes over with ``jax.device_put``, which compiles nothing (``jnp.asarray``
    of a numpy array compiles one XLA program per shape and dtype).
    """
    ctx = ctx if ctx is not None else current_context()
    if not isinstance(ctx, Context):
        ctx = Context(ctx)
    if ctx.device_type != "gpu" and ctx.device_id == 0:
        return jax.device_put(x) if isinstance(x, (np.ndarray, np.generic)) else jnp.asarray(x)
    return jax.device_put(x, ctx.jax_device)


def _new(x, ctx):
    """An NDArray of ``x`` on ``ctx`` (a logical context is remembered, see context.py)."""
    out = NDArray(_place(x, ctx))
    ctx = ctx if ctx is not None else current_context()
    if isinstance(ctx, Context) and ctx.device_id and ctx.is_logical:
        out._ctx = ctx
    return out


def _dt(dtype):
    return np.float32 if dtype is None else dtype_of(dtype)


def array(source_array, ctx=None, dtype=None):
    """An NDArray from a list, numpy array or NDArray.

    Parameters
    ----------
    source_array : array_like
        The values.
    ctx : Context, optional
        Device (default: ``current_context()``).
    dtype : str or numpy dtype, optional
        Default: the source's dtype for an NDArray, otherwise float32 (as MXNet).

    Examples
    --------
    >>> import gluonjax as mx
    >>> mx.nd.array([[1, 2], [3, 4]]).dtype
    dtype('float32')
    """
    if getattr(source_array, "stype", "default") != "default" or _is_scipy_csr(source_array):
        from .sparse import array as sparse_array

        return sparse_array(source_array, ctx=ctx, dtype=dtype)
    if isinstance(source_array, NDArray):
        dt = source_array.dtype if dtype is None else dtype_of(dtype)
        return _new(source_array._data.astype(dt), ctx)
    if isinstance(source_array, jax.Array) and dtype is None:
        return _new(source_array, ctx)
    try:
        host = np.asarray(source_array, dtype=_dt(dtype))
    except (ValueError, TypeError) as e:
        raise ArgumentTypeError(
            f"nd.array: cannot make an array of dtype {np.dtype(_dt(dtype)).name} from the "
            f"{type(source_array).__name__} given ({e}); a nested list must be rectangular "
            f"(every row of one length) and hold numbers"
        ) from None
    return _new(host, ctx)


def _is_scipy_csr(x):
    return (type(x).__module__ or "").startswith("scipy.sparse") and getattr(
        x, "format", ""
    ) == "csr"


def from_jax(x):
    """Wrap a jax array without copying."""
    return NDArray(jnp.asarray(x))


def _shape(shape, what="array"):
    out = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
    if any(d < 0 for d in out):
        raise ShapeError(f"nd.{what}: shape {out} has a negative dimension; sizes must be >= 0")
    return out


def _into(res, out):
    """Write ``res`` into NDArray ``out`` (MXNet's ``out=``) and return ``out``."""
    if out is None:
        return res
    out._data = res._data.astype(out.dtype) if res.dtype != out.dtype else res._data
    out._node = None
    return out


def _known(shape, what):
    """``shape`` as a tuple; without np_shape, ``()`` and 0 dims mean "unknown" (MXNet's
    legacy shapes), and an op that infers its output from them raises (as MXNet)."""
    shape = _shape(shape, what)
    if not is_np_shape() and (not shape or 0 in shape):
        raise ShapeError(
            f"nd.{what}: shape {shape} is not a known shape: without np_shape, MXNet reads "
            "() and 0 dimensions as unknown; give every dimension, or make scalar and "
            "zero-size arrays inside `with mx.np_shape(True):` (or with nd.empty/nd.array)"
        )
    return shape


def zeros(shape, ctx=None, dtype=None, stype=None, out=None, **kwargs):
    """An array of zeros (float32 by default); ``stype`` 'row_sparse'/'csr' makes a sparse
    one; ``out=`` fills an existing array.

    Without ``np_shape``, a shape of ``()`` or with a 0 dimension raises ``ShapeError``
    (MXNet reads them as unknown)."""
    if stype not in (None, "default"):
        from .sparse import zeros as sparse_zeros

        return sparse_zeros(stype, shape, ctx=ctx, dtype=dtype)
    return _into(_new(np.zeros(_known(shape, "zeros"), _dt(dtype)), ctx), out)


def ones(shape, ctx=None, dtype=None, out=None, **kwargs):
    """An array of ones (float32 by default); ``out=`` fills an existing array.

    Without ``np_shape``, a shape of ``()`` or with a 0 dimension raises ``ShapeError``
    (MXNet reads them as unknown)."""
    return _into(_new(np.ones(_known(shape, "ones"), _dt(dtype)), ctx), out)


def full(shape, val, ctx=None, dtype=None, out=None):
    """An array filled with ``val``."""
    return _into(_new(np.full(_shape(shape, "full"), val, _dt(dtype)), ctx), out)


def empty(shape, ctx=None, dtype=None, stype=None):
    """An array of the given shape (zero-filled: XLA has no uninitialised memory)."""
    if stype not in (None, "default"):
        return zeros(shape, ctx, dtype, stype=stype)
    return _new(np.zeros(_shape(shape, "empty"), _dt(dtype)), ctx)


def arange(start, stop=None, step=1.0, repeat=1, infer_range=False, ctx=None, dtype=None):
    """Evenly spaced values in [start, stop), each repeated ``repeat`` times."""
    if stop is None:
        start, stop = 0, start
    if step == 0:
        raise InvalidArgumentError("arange: step cannot be 0")
    vals = range_values(start, step, range_length(start, stop, step), repeat, _dt(dtype))
    return _new(vals, ctx)


def linspace(start, stop, num, endpoint=True, ctx=None, dtype=None):
    """``num`` evenly spaced values from start to stop."""
    return _new(np.linspace(start, stop, int(num), endpoint=endpoint).astype(_dt(dtype)), ctx)


def eye(N, M=0, k=0, ctx=None, dtype=None):
    """A 2-D array with ones on the k-th diagonal."""
    return _new(np.eye(int(N), int(M) or None, int(k), dtype=_dt(dtype)), ctx)
