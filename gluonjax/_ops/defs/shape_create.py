"""Creation ops with no array inputs, as used by the Symbol API and symbol JSON:
_zeros, _ones, _full, _arange, _eye, and _contrib_arange_like.

``ctx`` is accepted for MXNet compatibility and ignored (placement is done by the
caller).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp

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


def _range_values(start, step, n, repeat, dtype):
    """start + i*step for i < n (computed in ``dtype`` as MXNet), each repeated."""
    i = jnp.arange(n, dtype=jnp.int32)
    if jnp.issubdtype(dtype, jnp.integer):
        vals = jnp.asarray(int(start), dtype) + i.astype(dtype) * jnp.asarray(int(step), dtype)
    else:
        vals = jnp.asarray(start, dtype) + i.astype(dtype) * jnp.asarray(step, dtype)
    return jnp.repeat(vals, repeat) if repeat > 1 else vals


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
    n = max(int(math.ceil((stop - start) / step)), 0)
    return _range_values(start, step, n, repeat, jnp.dtype(dtype))


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
    vals = _range_values(start, step, -(-size // repeat), repeat, data.dtype)[:size]
    return jax.lax.stop_gradient(vals.reshape(shape))
