"""Automatic mixed precision casts: ``amp_cast`` and ``amp_multicast``.

Graphs from MXNet's AMP (and libraries such as gluoncv, whose box coders call
``F.amp_multicast`` to align dtypes) hold these ops; only float inputs are cast, other dtypes
pass through unchanged, as in MXNet.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ..registry import Attr, dtype_of, register
from .shape_slice import _CAST_DTYPES

_FLOATS = (jnp.float16, jnp.bfloat16, jnp.float32)


def _is_amp_float(dtype):
    return any(dtype == f for f in _FLOATS)


@register("amp_cast", attrs={"dtype": Attr("dtype", choices=_CAST_DTYPES)})
def amp_cast(data, *, dtype):
    """Cast a float16/bfloat16/float32 input to ``dtype``; other dtypes are returned as is."""
    if not _is_amp_float(data.dtype):
        return data
    return data.astype(jax.dtypes.canonicalize_dtype(dtype_of(dtype)))


@register(
    "amp_multicast",
    variadic=True,
    attrs={"num_outputs": Attr("int"), "cast_narrow": Attr("bool", False)},
    count=lambda a: a["num_outputs"],
    num_outputs=lambda a: a["num_outputs"],
)
def amp_multicast(*data, num_outputs, cast_narrow):
    """Cast the float inputs to their widest float type (``cast_narrow``: the narrowest).

    MXNet's rule: without ``cast_narrow`` the target is float32 if any input is float32, else
    the first input's type; with it, float16 (or bfloat16) if any input has it, else float32.
    Non-float inputs keep their dtype.
    """
    if len(data) != num_outputs:
        raise ValueError(f"amp_multicast: num_outputs={num_outputs} but {len(data)} inputs")
    if cast_narrow:
        target = jnp.float32
        for d in data:
            if d.dtype in (jnp.float16, jnp.bfloat16):
                target = d.dtype
    else:
        target = data[0].dtype
        if any(d.dtype == jnp.float32 for d in data):
            target = jnp.float32
    return tuple(d.astype(target) if _is_amp_float(d.dtype) else d for d in data)
