"""Indexing: pick, one_hot, take, batch_take, gather_nd, scatter_nd.

Index arrays may be float (MXNet's default dtype): they are truncated toward
zero, as MXNet's cast does. Indices never receive gradients.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ..bounds import check_values, is_concrete
from ..registry import Attr, register


def _int(index):
    return jax.lax.stop_gradient(index).astype(jnp.int32)


def _fix_mode(idx, n, mode):
    """``clip`` to [0, n-1] or ``wrap`` (python modulo)."""
    if mode == "wrap":
        return jnp.mod(idx, n)
    return jnp.clip(idx, 0, n - 1)


def _axis(a, ndim):
    if not -ndim <= a < ndim:
        raise ValueError(f"axis {a} is out of range for a {ndim}-d input")
    return a % ndim


@register(
    "pick",
    inputs=("data", "index"),
    attrs={
        "axis": Attr("int?", -1),
        "keepdims": Attr("bool", False),
        "mode": Attr("str", "clip", choices=("clip", "wrap")),
    },
    aliases=("choose_element_0index",),
)
def pick(data, index, *, axis, keepdims, mode):
    """``out[i, j] = data[i, index[i, j], j]`` along ``axis``; index has data's shape
    without ``axis`` (or with it of size 1). Out-of-range: ``clip`` or ``wrap``."""
    if axis is None:
        raise ValueError("axis=None is not supported by pick; give an axis")
    ax = _axis(axis, data.ndim)
    keep_shape = data.shape[:ax] + (1,) + data.shape[ax + 1 :]
    drop_shape = data.shape[:ax] + data.shape[ax + 1 :]
    if index.shape not in (keep_shape, drop_shape):
        raise ValueError(
            f"index shape {index.shape} does not match data {data.shape} on axis {axis}"
        )
    idx = _fix_mode(_int(index).reshape(keep_shape), data.shape[ax], mode)
    out = jnp.take_along_axis(data, idx, axis=ax)
    return out if keepdims else jnp.squeeze(out, ax)


@register(
    "one_hot",
    inputs=("indices",),
    attrs={
        "depth": Attr("int"),
        "on_value": Attr("float", 1.0),
        "off_value": Attr("float", 0.0),
        "dtype": Attr(
            "dtype",
            "float32",
            choices=(
                "bfloat16",
                "float16",
                "float32",
                "float64",
                "int32",
                "int64",
                "int8",
                "uint8",
            ),
        ),
    },
)
def one_hot(indices, *, depth, on_value, off_value, dtype):
    """A new last axis of size ``depth``: ``on_value`` at each index, else ``off_value``
    (indices outside [0, depth) give an all-``off_value`` row)."""
    if depth < 0:
        raise ValueError(f"depth must be a non-negative integer, got depth={depth}")
    idx = _int(indices)
    hot = idx[..., None] == jnp.arange(depth, dtype=jnp.int32)
    return jnp.where(hot, jnp.asarray(on_value, dtype), jnp.asarray(off_value, dtype))


def _take_check(attrs, arrays):
    """``mode='raise'``: indices outside ``[0, n)`` raise IndexError (eager values only)."""
    if attrs["mode"] == "raise":
        a, idx = arrays[0], arrays[1]
        shape = tuple(getattr(a, "shape", ()))
        ax = _axis(attrs["axis"], len(shape))
        check_values(idx, 0, shape[ax], ax, shape, "take(mode='raise')")


@register(
    "take",
    inputs=("a", "indices"),
    attrs={
        "axis": Attr("int", 0),
        "mode": Attr("str", "clip", choices=("clip", "raise", "wrap")),
    },
    check=_take_check,
)
def take(a, indices, *, axis, mode):
    """Slices of ``a`` along ``axis`` at ``indices``: output shape
    ``a.shape[:axis] + indices.shape + a.shape[axis+1:]``.

    ``mode='raise'``: in eager mode an index outside ``[0, n)`` raises ``IndexError``;
    inside a traced (hybridized) program, where values are unknown, it clips."""
    ax = _axis(axis, a.ndim)
    idx = _fix_mode(_int(indices), a.shape[ax], "wrap" if mode == "wrap" else "clip")
    return jnp.take(a, idx, axis=ax)


@register("batch_take", inputs=("a", "indices"))
def batch_take(a, indices):
    """``out[i] = a[i, indices[i]]`` for a 2-D ``a`` (indices clipped)."""
    if a.ndim != 2 or indices.shape != (a.shape[0],):
        raise ValueError(
            f"batch_take needs a 2-d input and (rows,) indices, got {a.shape}, {indices.shape}"
        )
    idx = jnp.clip(_int(indices), 0, a.shape[1] - 1)
    return jnp.take_along_axis(a, idx[:, None], axis=1)[:, 0]


def _gather_nd_check(attrs, arrays):
    """Index rows outside ``[-n, n)`` of their axis raise IndexError (eager values only)."""
    data, idx = arrays[0], arrays[1]
    shape = tuple(getattr(data, "shape", ()))
    ishape = tuple(getattr(idx, "shape", ()))
    if not ishape or ishape[0] > len(shape) or not is_concrete(idx):
        return  # the implementation reports a shape error; traced values are unknown
    idx = np.asarray(idx)
    for i in range(ishape[0]):
        check_values(idx[i], -shape[i], shape[i], i, shape, "gather_nd")


@register("gather_nd", inputs=("data", "indices"), check=_gather_nd_check)
def gather_nd(data, indices):
    """``out[y] = data[indices[0, y], ..., indices[M-1, y]]`` for indices of shape
    (M, Y...); output shape ``Y + data.shape[M:]``. Negative indices count from the end.
    In eager mode an index outside ``[-n, n)`` raises ``IndexError``; inside a traced
    (hybridized) program, where values are unknown, out-of-range ones are clipped."""
    if indices.ndim < 1 or indices.shape[0] > data.ndim:
        raise ValueError(f"indices of shape {indices.shape} cannot index data {data.shape}")
    idx = _int(indices)
    return data[tuple(idx[i] for i in range(idx.shape[0]))]


@register("scatter_nd", inputs=("data", "indices"), attrs={"shape": Attr("shape")})
def scatter_nd(data, indices, *, shape):
    """Zeros of ``shape`` with ``out[indices[0, y], ..., indices[M-1, y]] = data[y]``;
    the inverse of gather_nd. Duplicate indices: one of the values is kept; negative or
    out-of-range indices are dropped."""
    m = indices.shape[0] if indices.ndim else 0
    if indices.ndim < 1 or m > len(shape) or data.shape != indices.shape[1:] + tuple(shape[m:]):
        raise ValueError(
            f"invalid data {data.shape}, indices {indices.shape} and shape {tuple(shape)}"
        )
    idx = _int(indices)
    idx = tuple(jnp.where(idx[i] < 0, shape[i], idx[i]) for i in range(m))
    return jnp.zeros(shape, data.dtype).at[idx].set(data, mode="drop")
