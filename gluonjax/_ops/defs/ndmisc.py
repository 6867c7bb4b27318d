"""Assorted NDArray operators: legacy helpers (``fill_element_0index``,
``_onehot_encode``), ``_split_v2``, ``cumsum``, ``reset_arrays``, and the checks used by
mixed precision (``all_finite``, ``multi_all_finite``, ``multi_sum_sq``).

Examples
--------
>>> import gluonjax as mx
>>> mx.nd.cumsum(mx.nd.array([[1, 2], [3, 4]]), axis=1).asnumpy().tolist()
[[1.0, 3.0], [3.0, 7.0]]
>>> [p.shape for p in mx.nd.split_v2(mx.nd.zeros((6, 2)), (1, 4))]
[(1, 2), (3, 2), (2, 2)]
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ..registry import Attr, register

_MAX_ARRAYS = 256  # the most arrays one multi-array op can write back (aux names below)
_ALL_ARGS = tuple(f"arg{i}" for i in range(_MAX_ARRAYS))


def _int(x):
    return x.astype(jnp.int32) if not jnp.issubdtype(x.dtype, jnp.integer) else x


@register("fill_element_0index", inputs=("lhs", "mhs", "rhs"))
def fill_element_0index(lhs, mhs, rhs):
    """A copy of 2-D ``lhs`` with ``out[i, rhs[i]] = mhs[i]`` for every row ``i``.

    Inputs: lhs (n, m), mhs (n,) values, rhs (n,) column indices (0-based).
    """
    if lhs.ndim != 2 or mhs.shape != lhs.shape[:1] or rhs.shape != lhs.shape[:1]:
        raise ValueError(
            f"fill_element_0index needs lhs (n, m) and mhs, rhs of shape (n,); got "
            f"{lhs.shape}, {mhs.shape}, {rhs.shape}"
        )
    rows = jnp.arange(lhs.shape[0])
    return lhs.at[rows, _int(rhs)].set(mhs.astype(lhs.dtype))


@register("_onehot_encode", inputs=("lhs", "rhs"))
def onehot_encode(lhs, rhs):
    """One-hot rows of ``rhs``'s shape ``(n, depth)`` for the indices ``lhs`` (n,).

    MXNet's legacy form of ``one_hot``: ``rhs`` only gives the shape and dtype.
    """
    if rhs.ndim != 2 or lhs.shape != rhs.shape[:1]:
        raise ValueError(
            f"_onehot_encode needs indices (n,) and out (n, depth), got {lhs.shape} and {rhs.shape}"
        )
    return jax.nn.one_hot(_int(lhs), rhs.shape[1], dtype=rhs.dtype)


def _split_v2_count(a):
    return a["sections"] if a["sections"] > 0 else len(a["indices"])


@register(
    "_split_v2",
    attrs={
        "indices": Attr("shape"),
        "axis": Attr("int", 1),
        "squeeze_axis": Attr("bool", False),
        "sections": Attr("int", 0),
    },
    num_outputs=_split_v2_count,
)
def split_v2(data, *, indices, axis, squeeze_axis, sections):
    """Split along ``axis`` at ``indices`` (which start with 0), or into ``sections``
    parts (as MXNet: the first ``n % sections`` parts are one longer). Indices must
    increase and stay within the axis (an empty axis gives empty pieces).
    ``squeeze_axis`` drops the axis of pieces of length one."""
    if not -data.ndim <= axis < data.ndim:
        raise ValueError(f"axis {axis} is out of range for a {data.ndim}-d input")
    ax = axis % data.ndim
    n = data.shape[ax]
    if sections > 0:
        size, extra = divmod(n, sections)
        bounds = [i * size + min(i, extra) for i in range(sections)]
    else:
        bounds = list(indices)
    ends = bounds[1:] + [n]
    out = []
    for i, (lo, hi) in enumerate(zip(bounds, ends)):
        if n == 0:
            lo = hi = 0
        elif not 0 <= lo <= hi <= n:
            raise ValueError(
                f"split points {tuple(bounds[1:])} must increase within axis {axis} of "
                f"length {n} (piece {i} would be [{lo}, {hi}))"
            )
        piece = jax.lax.slice_in_dim(data, lo, hi, axis=ax)
        if squeeze_axis:
            if piece.shape[ax] != 1:
                raise ValueError("squeeze_axis needs pieces of length 1 along the axis")
            piece = jnp.squeeze(piece, ax)
        out.append(piece)
    return tuple(out)


_CUMSUM_DTYPES = ("float16", "float32", "float64", "int32", "int64", "int8")


@register(
    "_np_cumsum",
    inputs=("a",),
    attrs={"axis": Attr("int?", None), "dtype": Attr("dtype?", None, choices=_CUMSUM_DTYPES)},
    aliases=("cumsum",),
)
def cumsum(a, *, axis, dtype):
    """Cumulative sum along ``axis`` (the flattened array when None). Integer inputs
    narrower than int32 accumulate in int32 (jax's default integer)."""
    if dtype is not None:
        dt = jax.dtypes.canonicalize_dtype(np.dtype(dtype))
    elif jnp.issubdtype(a.dtype, jnp.integer) or a.dtype == jnp.bool_:
        dt = jnp.promote_types(a.dtype, jnp.int32)
    else:
        dt = a.dtype
    x = a.reshape(-1) if axis is None else a
    ax = 0 if axis is None else axis
    if dt == jnp.float16:  # one rounding per step, in order, as MXNet's (and NumPy's) loop
        x = jnp.moveaxis(x.astype(dt), ax, 0)

        def step(c, v):
            c = c + v
            return c, c

        _, out = jax.lax.scan(step, jnp.zeros(x.shape[1:], dt), x)
        return jnp.moveaxis(out, 0, ax)
    return jnp.cumsum(x.astype(dt), axis=ax)


@register(
    "reset_arrays",
    variadic=True,
    attrs={"num_arrays": Attr("int")},
    count=lambda a: a["num_arrays"],
    aux=_ALL_ARGS,
)
def reset_arrays(*arrays, num_arrays):
    """Set every input array to zero in place (returns the first one, zeroed).

    gluonjax returns the first array where MXNet returns nothing.
    """
    if len(arrays) > _MAX_ARRAYS:
        raise ValueError(f"reset_arrays takes at most {_MAX_ARRAYS} arrays")
    zeros = tuple(jnp.zeros_like(a) for a in arrays)
    return zeros[0], zeros


@register(
    "multi_sum_sq",
    variadic=True,
    attrs={"num_arrays": Attr("int")},
    count=lambda a: a["num_arrays"],
)
def multi_sum_sq(*arrays, num_arrays):
    """The sum of squares of each input array: one float32 array of ``num_arrays`` entries."""
    return jnp.stack([jnp.sum(jnp.square(a.astype(jnp.float32))) for a in arrays])


@register("all_finite", attrs={"init_output": Attr("bool", True)})
def all_finite(data, *, init_output):
    """``[1.0]`` if every element is finite, else ``[0.0]`` (float32, shape (1,))."""
    return jnp.all(jnp.isfinite(data)).astype(jnp.float32).reshape(1)


@register(
    "multi_all_finite",
    variadic=True,
    attrs={"num_arrays": Attr("int", 1), "init_output": Attr("bool", True)},
    count=lambda a: a["num_arrays"],
)
def multi_all_finite(*arrays, num_arrays, init_output):
    """``[1.0]`` if every element of every input is finite, else ``[0.0]``."""
    ok = jnp.array(True)
    for a in arrays:
        ok = ok & jnp.all(jnp.isfinite(a))
    return ok.astype(jnp.float32).reshape(1)
