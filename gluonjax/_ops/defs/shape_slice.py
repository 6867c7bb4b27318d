"""Slicing, broadcasting and casting: slice (crop), slice_axis, slice_like,
broadcast_to, broadcast_like, broadcast_axis, Cast, diag."""

from __future__ import annotations

import ast
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np

from ...base import AttrError
from ..registry import Attr, dtype_of, register


def _to_index_tuple(v):
    """``(0, None, -1)`` from a tuple/list or MXNet's string form ``'(0, None, -1)'``."""
    if isinstance(v, str):
        text = v.strip()
        v = () if text in ("", "()", "[]") else ast.literal_eval(text)
    if v is None or isinstance(v, (int, np.integer)):
        v = (v,)
    out = []
    for x in v:
        if x is None or (isinstance(x, str) and x.strip() == "None"):
            out.append(None)
        elif isinstance(x, (bool, np.bool_)):
            raise ValueError(f"expected an int or None, got {x!r}")
        elif isinstance(x, (int, np.integer)) or (isinstance(x, float) and x.is_integer()):
            out.append(int(x))
        else:
            raise ValueError(f"expected an int or None, got {x!r}")
    return tuple(out)


@dataclass(frozen=True)
class IndexTupleAttr(Attr):
    """A tuple of ints in which ``None`` entries are allowed (slice begin/end/step)."""

    kind: str = "shape (None entries allowed)"

    def parse(self, op, name, value):
        try:
            return _to_index_tuple(value)
        except (ValueError, TypeError, SyntaxError) as err:
            raise AttrError(
                f"{op}: attribute {name}={value!r} is not a tuple of ints/None ({err})"
            ) from None


def _axis(a, ndim, what="axis"):
    if not -ndim <= a < ndim:
        raise ValueError(f"{what} {a} is out of range for a {ndim}-d input")
    return a % ndim


@register(
    "slice",
    attrs={
        "begin": IndexTupleAttr(),
        "end": IndexTupleAttr(),
        "step": IndexTupleAttr(default=()),
    },
    aliases=("crop",),
)
def slice_op(data, *, begin, end, step):
    """``data[b0:e0:s0, b1:e1:s1, ...]`` with Python slice rules (None = open end).

    ``begin``, ``end`` and ``step`` (if given) must have the same length, at most ndim.
    """
    if len(begin) != len(end):
        raise ValueError(f"begin {begin} and end {end} must have the same length")
    if step and len(step) != len(begin):
        raise ValueError(f"step {step} and begin {begin} must have the same length")
    if len(begin) > data.ndim:
        raise ValueError(f"{len(begin)} slice entries for a {data.ndim}-d input")
    steps = step or (None,) * len(begin)
    if any(s == 0 for s in steps):
        raise ValueError("slice step cannot be 0")
    return data[tuple(slice(b, e, s) for b, e, s in zip(begin, end, steps, strict=False))]


@register(
    "slice_axis",
    attrs={"axis": Attr("int"), "begin": Attr("int"), "end": Attr("int?")},
)
def slice_axis(data, *, axis, begin, end):
    """Elements ``begin:end`` along ``axis`` (negative values count from the end;
    ``end=None`` is the axis size)."""
    ax = _axis(axis, data.ndim)
    n = data.shape[ax]
    b = begin + n if begin < 0 else begin
    e = n if end is None else (end + n if end < 0 else end)
    if not (0 <= b < e <= n):
        raise ValueError(f"invalid begin={begin}, end={end} for axis {axis} of size {n}")
    idx = [slice(None)] * data.ndim
    idx[ax] = slice(b, e)
    return data[tuple(idx)]


@register("slice_like", inputs=("data", "shape_like"), attrs={"axes": Attr("shape", ())})
def slice_like(data, shape_like, *, axes):
    """Slice ``data`` to ``shape_like``'s size on ``axes`` (all axes when empty),
    starting at 0."""
    if not axes:
        if data.ndim != shape_like.ndim:
            raise ValueError(
                f"slicing all axes needs equal ndim, got {data.shape} and {shape_like.shape}"
            )
        pairs = [(i, i) for i in range(data.ndim)]
    else:  # a negative axis counts from the end of data's axes, for both inputs (MXNet)
        pairs = [(_axis(a, data.ndim),) * 2 for a in axes]
        for i, _ in pairs:
            if i >= shape_like.ndim:
                raise ValueError(f"axis {i} does not exist in shape_like {shape_like.shape}")
    idx = [slice(None)] * data.ndim
    for i, j in pairs:
        if shape_like.shape[j] > data.shape[i]:
            raise ValueError(
                f"axis {i}: size {shape_like.shape[j]} exceeds the input's {data.shape[i]}"
            )
        idx[i] = slice(0, shape_like.shape[j])
    return data[tuple(idx)]


def _broadcast(data, shape):
    if len(shape) != data.ndim:
        raise ValueError(f"cannot broadcast {data.shape} to {tuple(shape)} (ndim differs)")
    for d, s in zip(data.shape, shape, strict=False):
        if d != s and d != 1:
            raise ValueError(f"cannot broadcast {data.shape} to {tuple(shape)}")
    return jnp.broadcast_to(data, tuple(shape))


@register("broadcast_to", attrs={"shape": Attr("shape", ())})
def broadcast_to(data, *, shape):
    """Broadcast size-1 axes to ``shape`` (same ndim; 0 keeps that input dim)."""
    if len(shape) != data.ndim:
        raise ValueError(f"cannot broadcast {data.shape} to {shape} (ndim differs)")
    return _broadcast(data, [d if s == 0 else s for d, s in zip(data.shape, shape, strict=False)])


@register(
    "broadcast_like",
    inputs=("lhs", "rhs"),
    attrs={"lhs_axes": Attr("shape?", None), "rhs_axes": Attr("shape?", None)},
)
def broadcast_like(lhs, rhs, *, lhs_axes, rhs_axes):
    """Broadcast ``lhs`` to ``rhs``'s shape, or only ``lhs_axes`` to ``rhs``'s ``rhs_axes``."""
    if lhs_axes is None and rhs_axes is None:
        return _broadcast(lhs, rhs.shape)
    if lhs_axes == () or rhs_axes == ():
        raise ValueError("empty lhs_axes/rhs_axes are not allowed; omit both to broadcast all axes")
    lhs_axes, rhs_axes = lhs_axes or (), rhs_axes or ()
    if len(lhs_axes) != len(rhs_axes):
        raise ValueError(f"lhs_axes {lhs_axes} and rhs_axes {rhs_axes} differ in length")
    shape = list(lhs.shape)
    for a, b in zip(lhs_axes, rhs_axes, strict=False):
        shape[_axis(a, lhs.ndim)] = rhs.shape[_axis(b, rhs.ndim)]
    return _broadcast(lhs, shape)


@register(
    "broadcast_axis",
    attrs={"axis": Attr("shape", ()), "size": Attr("shape", ())},
    aliases=("broadcast_axes",),
)
def broadcast_axis(data, *, axis, size):
    """Broadcast the size-1 axes ``axis`` to sizes ``size``."""
    if len(axis) != len(size):
        raise ValueError(f"axis {axis} and size {size} differ in length")
    shape = list(data.shape)
    for a, s in zip(axis, size, strict=False):
        a = _axis(a, data.ndim)
        if data.shape[a] != 1:
            raise ValueError(f"broadcasting axis {a} must have size 1, not {data.shape[a]}")
        shape[a] = s
    return jnp.broadcast_to(data, tuple(shape))


_CAST_DTYPES = (
    "bfloat16",
    "bool",
    "float16",
    "float32",
    "float64",
    "int32",
    "int64",
    "int8",
    "uint8",
)


@register(
    "Cast", attrs={"dtype": Attr("dtype", choices=_CAST_DTYPES)}, aliases=("cast",), bucket="map"
)
def cast(data, *, dtype):
    """Convert to ``dtype``. Float to (u)int8 wraps around as C/MXNet does (300 -> 44)."""
    dt = jax.dtypes.canonicalize_dtype(dtype_of(dtype))
    if dt == np.bool_:
        return data != 0
    if dt.itemsize == 1 and dt.kind in "iu" and jnp.issubdtype(data.dtype, jnp.inexact):
        return data.astype(jnp.int32).astype(dt)
    return data.astype(dt)


@register("diag", attrs={"k": Attr("int", 0), "axis1": Attr("int", 0), "axis2": Attr("int", 1)})
def diag(data, *, k, axis1, axis2):
    """1-D input: a 2-D matrix with ``data`` on diagonal ``k``. N-d input: diagonal
    ``k`` of the planes (axis1, axis2), appended as the last axis (numpy.diagonal)."""
    if data.ndim == 0:
        raise ValueError("diag needs at least a 1-d input")
    if data.ndim == 1:
        return jnp.diag(data, k)
    a1, a2 = _axis(axis1, data.ndim, "axis1"), _axis(axis2, data.ndim, "axis2")
    if a1 == a2:
        raise ValueError(f"axis1 and axis2 cannot both be {a1}")
    if k > data.shape[a2] or -k > data.shape[a1]:
        raise ValueError(f"diagonal k={k} does not exist for shape {data.shape}")
    return jnp.diagonal(data, k, a1, a2)
