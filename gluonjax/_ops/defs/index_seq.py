"""Variable-length sequence ops: SequenceMask, SequenceLast, SequenceReverse.

``axis`` is the time axis: 0 for (T, B, ...) data, 1 for (B, T, ...); the other
of the two is the batch axis. ``sequence_length`` (shape (B,), float or int,
truncated) is an input only when ``use_sequence_length`` is true.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ..registry import Attr, register


def _inputs(attrs):
    return ("data", "sequence_length") if attrs["use_sequence_length"] else ("data",)


def _setup(data, sequence_length, axis):
    """(time axis, batch axis, int lengths shaped (B,) or None)."""
    if axis not in (0, 1):
        raise ValueError(f"axis must be 0 (time-major) or 1 (batch-major), got {axis}")
    if data.ndim < 2:
        raise ValueError(f"data must have at least 2 dims, got shape {data.shape}")
    bax = 1 - axis
    if sequence_length is None:
        return axis, bax, None
    if sequence_length.shape != (data.shape[bax],):
        raise ValueError(
            f"sequence_length shape {sequence_length.shape} does not match batch size "
            f"{data.shape[bax]}"
        )
    return axis, bax, jax.lax.stop_gradient(sequence_length).astype(jnp.int32)


def _time_batch_grid(data, tax, bax):
    """Time index broadcastable to data and the shape to broadcast lengths with."""
    shape = [1] * data.ndim
    shape[tax] = data.shape[tax]
    t = jnp.arange(data.shape[tax], dtype=jnp.int32).reshape(shape)
    lshape = [1] * data.ndim
    lshape[bax] = data.shape[bax]
    return t, lshape


_ATTRS = {"use_sequence_length": Attr("bool", False), "axis": Attr("int", 0)}


@register(
    "SequenceMask",
    inputs=_inputs,
    attrs={
        "use_sequence_length": Attr("bool", False),
        "value": Attr("float", 0.0),
        "axis": Attr("int", 0),
    },
)
def sequence_mask(data, sequence_length=None, *, use_sequence_length, value, axis):
    """Set the steps at or after each sequence's length to ``value``."""
    tax, bax, lens = _setup(data, sequence_length if use_sequence_length else None, axis)
    if lens is None:
        return data
    t, lshape = _time_batch_grid(data, tax, bax)
    keep = t < lens.reshape(lshape)
    return jnp.where(keep, data, jnp.asarray(value, data.dtype))


@register("SequenceLast", inputs=_inputs, attrs=_ATTRS)
def sequence_last(data, sequence_length=None, *, use_sequence_length, axis):
    """The last valid step of each sequence (the time axis is removed). A length of 0
    gives step 0 (MXNet reads out of bounds there)."""
    tax, bax, lens = _setup(data, sequence_length if use_sequence_length else None, axis)
    n = data.shape[tax]
    if lens is None:
        return jnp.take(data, n - 1, axis=tax)
    last = jnp.clip(lens - 1, 0, n - 1)
    idx_shape = [1] * data.ndim
    idx_shape[bax] = data.shape[bax]
    out = jnp.take_along_axis(data, last.reshape(idx_shape), axis=tax)
    return jnp.squeeze(out, tax)


@register("SequenceReverse", inputs=_inputs, attrs=_ATTRS)
def sequence_reverse(data, sequence_length=None, *, use_sequence_length, axis):
    """Reverse the first ``length`` steps of each sequence; later steps stay in place.
    (MXNet only implements axis=0; axis=1 is supported here too.)"""
    tax, bax, lens = _setup(data, sequence_length if use_sequence_length else None, axis)
    if lens is None:
        return jnp.flip(data, tax)
    t, lshape = _time_batch_grid(data, tax, bax)
    ln = jnp.clip(lens, 0, data.shape[tax]).reshape(lshape)
    src = jnp.where(t < ln, ln - 1 - t, t)
    return jnp.take_along_axis(data, src, axis=tax)
