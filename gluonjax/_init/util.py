"""Array helpers of the initializers: in-place fill, seeded sampling, JSON encoding."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from .. import random as _random
from ..base import MXNetError
from ..ndarray.ndarray import NDArray

__all__ = ["InitializerError"]


class InitializerError(MXNetError, ValueError):
    """An initializer cannot fill a parameter (unknown name, bad shape, bad option)."""


def _check_array(arr):
    if not isinstance(arr, NDArray):
        raise TypeError(f"an initializer fills an NDArray, got {type(arr).__name__}")


def _assign(arr, value):
    """Fill ``arr`` in place with ``value`` (scalar or array, broadcast to arr's shape)."""
    _check_array(arr)
    if isinstance(value, NDArray):
        value = value._data
    v = jnp.asarray(value, dtype=arr.dtype)
    if v.shape != arr.shape:
        try:
            v = jnp.broadcast_to(v, arr.shape)
        except ValueError:
            raise InitializerError(
                f"cannot fill an array of shape {arr.shape} with a value of shape {v.shape}"
            ) from None
    old = getattr(arr._data, "devices", None)
    if old is not None and v.devices() != old():
        v = jax.device_put(v, arr._data.sharding)
    arr._data, arr._node = v, None


@functools.partial(jax.jit, static_argnames=("kind", "shape", "dtype"))
def _sample_kernel(key, counter, a, b, kind, shape, dtype):
    k = jax.random.fold_in(key, counter)
    if kind == "uniform":
        x = jax.random.uniform(k, shape, jnp.float32, a, b)
    elif kind == "normal":
        x = a + b * jax.random.normal(k, shape, jnp.float32)
    else:  # int8 range for quantized weights
        x = jax.random.randint(k, shape, -127, 127, jnp.int32)
    return x.astype(dtype)


def _sample(kind, shape, dtype, a=0.0, b=1.0):
    """Random values drawn in float32 from the global generator (``mx.random.seed``)."""
    key, counter = _random.key_and_counter()
    return _sample_kernel(
        key,
        counter,
        np.float32(a),
        np.float32(b),
        kind=kind,
        shape=tuple(shape),
        dtype=np.dtype(dtype),
    )


def _json_default(obj):
    if isinstance(obj, NDArray):
        return obj.asnumpy().tolist()
    if isinstance(obj, (np.ndarray, np.generic, jax.Array)):
        return np.asarray(obj).tolist()
    if hasattr(obj, "dumps") and hasattr(obj, "_kwargs"):  # an Initializer
        return obj.dumps()
    raise TypeError(f"{type(obj).__name__} is not JSON serializable")
