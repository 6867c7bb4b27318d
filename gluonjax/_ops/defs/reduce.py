"""Reductions: sum, mean, max, min, prod, nansum, nanprod, norm, argmax, argmin.

As in MXNet 1.x a reduction over every axis returns shape ``(1,)`` (not a 0-d
array), reductions keep the input dtype (``mean`` of int32 is int32) and the
gradient of ``max``/``min`` goes to every element equal to the extreme value.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

from ..registry import Attr, register
from . import _subgrad

_REDUCE_ATTRS = {
    "axis": Attr("axis", None),
    "keepdims": Attr("bool", False),
    "exclude": Attr("bool", False),
}


def norm_axes(ndim, axis, exclude=False, op="reduce"):
    """MXNet reduction axes as a sorted tuple (``None`` means every axis)."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    out = []
    for a in axes:
        if not -ndim <= a < max(ndim, 1):
            raise ValueError(f"axis {a} is out of range for a {ndim}-d input")
        out.append(a % ndim if ndim else 0)
    if len(set(out)) != len(out):
        raise ValueError(f"reduction axes have duplicates {axes}")
    if exclude:
        out = [i for i in range(ndim) if i not in out]
    return tuple(sorted(out))


def _finish(out, keepdims):
    """MXNet returns shape (1,) where numpy returns a 0-d array."""
    return out.reshape(1) if out.ndim == 0 and not keepdims else out


def _reducer(fn):
    def impl(data, *, axis, keepdims, exclude):
        axes = norm_axes(data.ndim, axis, exclude)
        if not axes:
            return data
        out = fn(data, axes, keepdims)
        return _finish(out.astype(data.dtype), keepdims)

    return impl


def _sum(x, axes, keepdims):
    return jnp.sum(x, axis=axes, keepdims=keepdims, dtype=x.dtype)


def _mean(x, axes, keepdims):
    if jnp.issubdtype(x.dtype, jnp.inexact):
        return jnp.mean(x, axis=axes, keepdims=keepdims)
    n = 1
    for a in axes:
        n *= x.shape[a]
    s = jnp.sum(x, axis=axes, keepdims=keepdims, dtype=x.dtype)
    return jnp.trunc(s / n)  # C integer division truncates toward zero


def _nan_to(x, value):
    if jnp.issubdtype(x.dtype, jnp.inexact):
        return jnp.where(jnp.isnan(x), jnp.asarray(value, x.dtype), x)
    return x


def _prod(x, axes, keepdims):
    return jnp.prod(x, axis=axes, keepdims=keepdims, dtype=x.dtype)


@functools.partial(jax.custom_vjp, nondiff_argnums=(1, 2, 3))
def _extreme(x, axes, keepdims, is_max):
    fn = jnp.max if is_max else jnp.min
    return fn(x, axis=axes, keepdims=keepdims)


def _extreme_fwd(x, axes, keepdims, is_max):
    out = _extreme(x, axes, keepdims, is_max)
    return out, (x, out)


def _extreme_bwd(axes, keepdims, is_max, res, g):
    x, out = res
    if not keepdims:
        out = jnp.expand_dims(out, axes)
        g = jnp.expand_dims(g, axes)
    return (jnp.where(x == out, g, jnp.zeros((), g.dtype)).astype(x.dtype),)


_extreme.defvjp(_extreme_fwd, _extreme_bwd)

_REDUCERS = {
    "sum": (_sum, ("sum_axis",), "Sum over ``axis``.", 0),
    "mean": (_mean, (), "Mean over ``axis`` (integer inputs: truncated, as MXNet).", "mean"),
    "max": (
        lambda x, a, k: _extreme(x, a, k, True),
        ("max_axis",),
        "Maximum over ``axis``.",
        "low",
    ),
    "min": (
        lambda x, a, k: _extreme(x, a, k, False),
        ("min_axis",),
        "Minimum over ``axis``.",
        "high",
    ),
    "prod": (_prod, (), "Product over ``axis``.", 1),
    "nansum": (lambda x, a, k: _sum(_nan_to(x, 0), a, k), (), "Sum treating NaN as 0.", 0),
    "nanprod": (lambda x, a, k: _prod(_nan_to(x, 1), a, k), (), "Product treating NaN as 1.", 1),
}

# the last field: the reduction's identity, what pads an input to its size class
for _name, (_fn, _aliases, _doc, _ident) in _REDUCERS.items():
    register(
        _name,
        attrs=_REDUCE_ATTRS,
        aliases=_aliases,
        bucket=("reduce", _ident),
        doc=_doc + "\n\nParameters: axis (int, tuple or None = all), keepdims, exclude "
        "(reduce the axes *not* listed).",
    )(_reducer(_fn))


@register(
    "norm",
    attrs={
        "ord": Attr("int", 2),
        "axis": Attr("axis", None),
        "out_dtype": Attr(
            "dtype?", None, choices=("float16", "float32", "float64", "int32", "int64", "int8")
        ),
        "keepdims": Attr("bool", False),
    },
    bucket=("reduce", 0),
)
def norm(data, *, ord, axis, out_dtype, keepdims):
    """L1 (``ord=1``) or L2 (``ord=2``) norm of the elements over ``axis`` (None = all)."""
    if ord not in (1, 2):
        raise ValueError(f"norm only supports ord=1 and ord=2, got ord={ord}")
    axes = norm_axes(data.ndim, axis)
    x = data.astype(out_dtype) if out_dtype else data
    if ord == 1:
        out = jnp.sum(_subgrad.abs_(x), axis=axes, keepdims=keepdims)
    else:
        out = jnp.sqrt(jnp.sum(x * x, axis=axes, keepdims=keepdims))
    return _finish(out.astype(out_dtype or data.dtype), keepdims)


def _arg_extreme(fn):
    def impl(data, *, axis, keepdims):
        if axis is None:
            out = fn(data.reshape(-1))
            out = out.reshape((1,) * data.ndim if keepdims else (1,))
        else:
            if not -data.ndim <= axis < data.ndim:
                raise ValueError(f"axis {axis} is out of range for a {data.ndim}-d input")
            out = _finish(fn(data, axis=axis, keepdims=keepdims), keepdims)
        return jax.lax.stop_gradient(out.astype(data.dtype))

    return impl


_ARG_ATTRS = {"axis": Attr("int?", None), "keepdims": Attr("bool", False)}
register(
    "argmax",
    attrs=_ARG_ATTRS,
    doc="Index of the maximum along ``axis`` (None: of the flattened input), in the "
    "input's dtype (float32 for float32 data, as MXNet).",
)(_arg_extreme(jnp.argmax))
register(
    "argmin",
    attrs=_ARG_ATTRS,
    doc="Index of the minimum along ``axis`` (None: flattened), in the input's dtype.",
)(_arg_extreme(jnp.argmin))


@register("argmax_channel")
def argmax_channel(data):
    """Index of the maximum along axis 1 (the channel axis), in the input's dtype."""
    if data.ndim < 2:
        raise ValueError(f"argmax_channel needs at least 2 dimensions, got shape {data.shape}")
    return jax.lax.stop_gradient(jnp.argmax(data, axis=1).astype(data.dtype))
