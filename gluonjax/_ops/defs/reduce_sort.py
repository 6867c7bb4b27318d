"""Sorting: topk, sort, argsort (MXNet 1.x semantics).

Ties keep their original order (a stable sort, in both directions), as MXNet
does on GPU and on CPU for rows of up to 16 elements; for longer rows MXNet's CPU
order among ties is whatever libstdc++'s unstable ``std::sort``/``partial_sort``
leaves, which is no semantics to copy. ``axis=None`` works on the flattened
input. Index outputs have the ``dtype`` attribute (float32 by default, as MXNet).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ..registry import Attr, register

_IDX_DTYPES = ("float16", "float32", "float64", "int32", "int64", "uint8")


def _prepare(data, axis):
    """(array with the sort axis last, axis) — flattened when axis is None."""
    if axis is None:
        return data.reshape(-1), 0
    if not -data.ndim <= axis < data.ndim:
        raise ValueError(f"axis {axis} is out of range for a {data.ndim}-d input")
    return data, axis % data.ndim


def _order(x, axis, is_ascend):
    return jnp.argsort(x, axis=axis, stable=True, descending=not is_ascend)


@register(
    "topk",
    attrs={
        "axis": Attr("int?", -1),
        "k": Attr("int", 1),
        "ret_typ": Attr("str", "indices", choices=("both", "indices", "mask", "value")),
        "is_ascend": Attr("bool", False),
        "dtype": Attr("dtype", "float32", choices=_IDX_DTYPES),
    },
    num_outputs=lambda a: 2 if a["ret_typ"] == "both" else 1,
)
def topk(data, *, axis, k, ret_typ, is_ascend, dtype):
    """The ``k`` largest (``is_ascend``: smallest) entries along ``axis``.

    ``ret_typ``: ``indices`` (default, in ``dtype``), ``value``, ``both``
    (``[value, indices]``) or ``mask`` (same shape as data, 1 at the top-k
    positions). ``k <= 0`` means all entries.
    """
    x, ax = _prepare(data, axis)
    n = x.shape[ax]
    if k > n:
        raise ValueError(f"k must be at most {n} (the size of axis {axis}), got k={k}")
    kk = n if k <= 0 else k
    idx = jax.lax.slice_in_dim(_order(x, ax, is_ascend), 0, kk, axis=ax)
    if ret_typ == "mask":
        mask = jnp.zeros(x.shape, data.dtype)
        mask = jnp.put_along_axis(mask, idx, jnp.ones((), data.dtype), axis=ax, inplace=False)
        return jax.lax.stop_gradient(mask.reshape(data.shape))
    indices = jax.lax.stop_gradient(idx.astype(dtype))
    if ret_typ == "indices":
        return indices
    value = jnp.take_along_axis(x, idx, axis=ax)
    return (value, indices) if ret_typ == "both" else value


@register("sort", attrs={"axis": Attr("int?", -1), "is_ascend": Attr("bool", True)})
def sort(data, *, axis, is_ascend):
    """Sorted copy along ``axis`` (None: the flattened input)."""
    x, ax = _prepare(data, axis)
    return jnp.take_along_axis(x, _order(x, ax, is_ascend), axis=ax)


@register(
    "argsort",
    attrs={
        "axis": Attr("int?", -1),
        "is_ascend": Attr("bool", True),
        "dtype": Attr("dtype", "float32", choices=_IDX_DTYPES),
    },
)
def argsort(data, *, axis, is_ascend, dtype):
    """Indices that sort ``data`` along ``axis`` (stable), in ``dtype``."""
    x, ax = _prepare(data, axis)
    return jax.lax.stop_gradient(_order(x, ax, is_ascend).astype(dtype))
