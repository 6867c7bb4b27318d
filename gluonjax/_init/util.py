"""Array helpers of the initializers: in-place fill, seeded sampling, JSON encoding."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .. import _rng as _random
from ..base import ArgumentTypeError, MXNetError
from ..ndarray.ndarray import NDArray

__all__ = ["InitializerError"]


class InitializerError(MXNetError, ValueError):
    """An initializer cannot fill a parameter (unknown name, bad shape, bad option)."""


def _check_array(arr):
    if not isinstance(arr, NDArray):
        raise ArgumentTypeError(f"an initializer fills an NDArray, got {type(arr).__name__}")


def _assign(arr, value):
    """Fill ``arr`` in place with ``value`` (scalar or array, broadcast to arr's shape).

    A host value (scalar, list, numpy) is shaped on the host and sent with
    ``jax.device_put``: initializing a model compiles no XLA program.
    """
    _check_array(arr)
    if isinstance(value, NDArray):
        value = value._data
    on_host = not isinstance(value, jax.Array)
    v = np.asarray(value, dtype=arr.dtype) if on_host else jnp.asarray(value, dtype=arr.dtype)
    if v.shape != arr.shape:
        try:
            v = np.broadcast_to(v, arr.shape) if on_host else jnp.broadcast_to(v, arr.shape)
        except ValueError:
            raise InitializerError(
                f"cannot fill an array of shape {arr.shape} with a value of shape {v.shape}"
            ) from None
    old = arr._data.sharding if isinstance(arr._data, jax.Array) else None
    if on_host:  # a fresh C-contiguous copy: the device array never aliases caller memory
        where = old if old is not None and arr._data.committed else None
        v = jax.device_put(np.array(v, order="C"), where)
    elif old is not None and v.devices() != arr._data.devices():
        v = jax.device_put(v, old)
    arr._data, arr._node = v, None


def _sample(kind, shape, dtype, a=0.0, b=1.0):
    """Random values drawn in float32 from the global generator (``mx.random.seed``).

    Drawn with numpy on the host: initializing a model compiles no XLA program (one per
    parameter shape otherwise), as MXNet's initializers launch one kernel each.
    """
    rng, shape = _random.host_rng(), tuple(shape)
    if kind == "uniform":
        x = rng.uniform(a, b, shape).astype(np.float32)
    elif kind == "normal":
        x = (np.float32(a) + np.float32(b) * rng.standard_normal(shape, np.float32)).astype(
            np.float32
        )
    else:  # int8 range for quantized weights
        x = rng.integers(-127, 127, shape, np.int32)
    return x.astype(np.dtype(dtype), copy=False)


def _json_default(obj):
    if isinstance(obj, NDArray):
        return obj.asnumpy().tolist()
    if isinstance(obj, (np.ndarray, np.generic, jax.Array)):
        return np.asarray(obj).tolist()
    if hasattr(obj, "dumps") and hasattr(obj, "_kwargs"):  # an Initializer
        return obj.dumps()
    raise ArgumentTypeError(f"{type(obj).__name__} is not JSON serializable")
