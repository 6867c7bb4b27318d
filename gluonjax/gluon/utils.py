"""``gluon.utils``: split_data, split_and_load, clip_global_norm, and the file helpers
download, check_sha1, replace_file (see :mod:`gluonjax._io.download`)."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from .._io.download import check_sha1, download, replace_file
from ..autograd import is_recording
from ..base import InvalidArgumentError, MXNetError
from ..ndarray.ndarray import NDArray

__all__ = [
    "split_data",
    "split_and_load",
    "clip_global_norm",
    "download",
    "check_sha1",
    "replace_file",
]


def split_data(data, num_slice, batch_axis=0, even_split=True):
    """Split ``data`` into ``num_slice`` slices along ``batch_axis``.

    Parameters
    ----------
    data : NDArray
    num_slice : int
    batch_axis : int
    even_split : bool
        Require the size to divide evenly (else ValueError, an ``InvalidArgumentError``);
        with False the first ``size % num_slice`` slices are one longer, as
        ``numpy.array_split`` and MXNet 1.9.1 split.

    Outputs: a list of NDArrays.

    Examples
    --------
    >>> import gluonjax as mx
    >>> [s.shape for s in mx.gluon.utils.split_data(mx.nd.ones((6, 2)), 3)]
    [(2, 2), (2, 2), (2, 2)]
    """
    size = data.shape[batch_axis]
    if even_split and size % num_slice != 0:
        raise InvalidArgumentError(
            f"data with shape {data.shape} cannot be evenly split into {num_slice} slices along "
            f"axis {batch_axis}. Use a batch size that's multiple of {num_slice} or set "
            f"even_split=False to allow uneven partitioning of data."
        )
    if num_slice == 1:
        return [data]
    # MXNet 1.9.1 (as numpy.array_split): the first ``size % num_slice`` slices take one
    # extra row; with more slices than rows the last ones are empty
    each, extra = divmod(size, num_slice)
    bounds = np.cumsum([0] + [each + 1] * extra + [each] * (num_slice - extra))
    out = []
    for i in range(num_slice):
        idx = [slice(None)] * data.ndim
        idx[batch_axis] = slice(int(bounds[i]), int(bounds[i + 1]))
        out.append(data[tuple(idx)])
    return out


def split_and_load(data, ctx_list, batch_axis=0, even_split=True):
    """Split ``data`` into ``len(ctx_list)`` slices along ``batch_axis`` and put slice i
    on ``ctx_list[i]`` (as :func:`split_data` splits).

    Parameters
    ----------
    data : NDArray or array-like
    ctx_list : list of Context
    batch_axis : int
    even_split : bool

    Returns
    -------
    list of NDArray
        One per context, even if ``ctx_list`` has one context.

    On several distinct devices an even split is ONE transfer of the batch, sharded
    over the devices (outside ``autograd.record``, where the slices are recorded).
    """
    if not isinstance(data, NDArray):
        from ..ndarray import array

        data = array(data, ctx=ctx_list[0])
    if len(ctx_list) == 1:
        return [data.as_in_context(ctx_list[0])]
    if not is_recording():
        parts = _shard_over_devices(data, ctx_list, batch_axis)
        if parts is not None:
            return parts
    slices = split_data(data, len(ctx_list), batch_axis, even_split)
    return [s.as_in_context(c) for s, c in zip(slices, ctx_list)]


def _shard_over_devices(data, ctx_list, batch_axis):
    """The slices of ``data`` (an NDArray) on the distinct devices of ``ctx_list`` from
    one sharded transfer, or None (logical contexts, an uneven split, sparse data)."""
    from ._mesh import ShardedBatch, batch_sharding, mesh_devices, mesh_of

    devices = mesh_devices(ctx_list)
    raw = data._data
    if devices is None or not isinstance(raw, jax.Array) or data.stype != "default":
        return None
    if raw.ndim <= batch_axis or raw.shape[batch_axis] % len(devices):
        return None
    whole = jax.device_put(raw, batch_sharding(mesh_of(devices), raw.ndim, batch_axis))
    on = {s.device: s.data for s in whole.addressable_shards}
    parts = [on[d] for d in devices]
    # each piece remembers the sharded batch: a compiled step over these devices given
    # exactly these pieces uses it as is (see _mesh.ShardedBatch)
    info = ShardedBatch(whole, parts, devices, batch_axis)
    out = []
    for part in parts:
        piece = NDArray(part)
        piece.__dict__["_sharded_batch"] = info
        out.append(piece)
    return out


@jax.jit
def _global_norm(arrays):
    return jnp.sqrt(sum(jnp.sum(jnp.square(a.astype(jnp.float32))) for a in arrays))


def clip_global_norm(arrays, max_norm, check_isfinite=True):
    """Scale ``arrays`` in place so that their joint 2-norm is at most ``max_norm``.

    Returns the norm before clipping (a float; NaN/inf warn when ``check_isfinite``).
    """
    if not arrays:
        raise MXNetError("clip_global_norm needs at least one array")
    total = float(_global_norm([a._data for a in arrays]))
    if check_isfinite and not math.isfinite(total):
        import warnings

        warnings.warn(
            UserWarning("nan or inf is detected. Clipping results will be undefined."), stacklevel=2
        )
    scale = max_norm / (total + 1e-8)
    if scale < 1.0:
        for a in arrays:
            a._data = a._data * np.asarray(scale, a.dtype)
    return total
