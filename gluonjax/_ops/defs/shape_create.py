"""Creation ops with no array inputs, as used by the Symbol API and symbol JSON:
_zeros, _ones, _full, _arange, _eye, and _contrib_arange_like.

``ctx`` is accepted for MXNet compatibility and ignored (placement is done by the
caller).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from ..registry import Attr, register

_DTYPES = ("bfloat16", "bool", "float16", "float32", "float64", "int32", "int64", "int8", "uint8")


def _fill_attrs(**extra):
    return {
        "shape": Attr("shape", ()),
        "ctx": Attr("str", ""),
        "dtype": Attr("dtype", "float32", choices=_DTYPES),
        **extra,
    }


@register("_zeros", inputs=(), attrs=_fill_attrs())
def zeros(*, shape, ctx, dtype):
    """An array of zeros of ``shape`` and ``dtype`` (default float32)."""
    return jnp.zeros(shape, dtype)


@register("_ones", inputs=(), attrs=_fill_attrs())
def ones(*, shape, ctx, dtype):
    """An array of ones of ``shape`` and ``dtype`` (default float32)."""
    return jnp.ones(shape, dtype)


@register("_full", inputs=(), attrs=_fill_attrs(value=Attr("float")))
def full(*, shape, ctx, dtype, value):
    """An array of ``shape`` filled with ``value``."""
    return jnp.full(shape, value, dtype)


def range_values(start, step, n, repeat, dtype):
    """``start + i*step`` for ``i < n``, each repeated, as MXNet's range kernel computes it:
    integer dtypes cast start and step to the dtype first (and wrap), floats multiply and
    add in the dtype, rounding each (no fused multiply-add). NumPy values: they depend on
    the attributes alone, so a program embeds them."""
    dt = np.dtype(dtype)
    i = np.arange(n, dtype=np.int64)
    if np.issubdtype(dt, np.integer):
        with np.errstate(over="ignore"):
            vals = (int(start) + i * int(step)).astype(dt)
    else:
        vals = dt.type(start) + i.astype(dt) * dt.type(step)
    return np.repeat(vals, int(repeat)) if repeat > 1 else vals


def range_length(start, stop, step):
    """The number of values of ``arange(start, stop, step)`` (MXNet: ceil((stop-start)/step))."""
    return max(int(math.ceil((stop - start) / step)), 0)


@register(
    "_arange",
    inputs=(),
    attrs={
        "start": Attr("float"),
        "stop": Attr("float?", None),
        "step": Attr("float", 1.0),
        "repeat": Attr("int", 1),
        "infer_range": Attr("bool", False),
        "ctx": Attr("str", ""),
        "dtype": Attr("dtype", "float32", choices=_DTYPES),
    },
)
def arange(*, start, stop, step, repeat, infer_range, ctx, dtype):
    """Values ``start, start+step, ...`` below ``stop`` (``stop=None``: 0..start),
    each repeated ``repeat`` times. ``infer_range`` is accepted and ignored."""
    if step == 0:
        raise ValueError("step cannot be 0")
    if repeat <= 0:
        raise ValueError(f"repeat must be positive, got {repeat}")
    if stop is None:
        start, stop = 0.0, start
    return jnp.asarray(range_values(start, step, range_length(start, stop, step), repeat, dtype))


@register(
    "_eye",
    inputs=(),
    attrs={
        "N": Attr("int"),
        "M": Attr("int", 0),
        "k": Attr("int", 0),
        "ctx": Attr("str", ""),
        "dtype": Attr("dtype", "float32", choices=_DTYPES),
    },
)
def eye(*, N, M, k, ctx, dtype):
    """An N x M (M=0: N x N) matrix with ones on diagonal ``k``."""
    return jnp.eye(N, M or N, k, dtype=dtype)


@register(
    "_contrib_arange_like",
    attrs={
        "start": Attr("float", 0.0),
        "step": Attr("float", 1.0),
        "repeat": Attr("int", 1),
        "ctx": Attr("str", ""),
        "axis": Attr("int?", None),
    },
    aliases=("arange_like",),
)
def arange_like(data, *, start, step, repeat, ctx, axis):
    """A range shaped like ``data`` (axis=None) or as long as ``data``'s ``axis``;
    values ``start + (i // repeat) * step`` in data's dtype."""
    if repeat <= 0:
        raise ValueError(f"repeat must be positive, got {repeat}")
    if axis is None:
        shape = data.shape
    else:
        if not -data.ndim <= axis < data.ndim:
            raise ValueError(f"axis {axis} is out of range for a {data.ndim}-d input")
        shape = (data.shape[axis],)
    size = math.prod(shape)
    vals = jnp.asarray(range_values(start, step, -(-size // repeat), repeat, data.dtype)[:size])
    return jax.lax.stop_gradient(vals.reshape(shape))
