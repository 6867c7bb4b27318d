"""8-bit quantization: contrib.quantize, quantize_v2 and dequantize (MXNet's CPU rules).

``uint8`` maps ``[min_range, max_range]`` affinely onto ``0..255``:
``q = trunc((x - min) * 255 / (max - min) + 0.5)``. ``int8`` keeps zero at zero:
with ``r = max(|min|, |max|)``, ``q = trunc(sign(x) * min(|x| * 127 / r + 0.5, 127))``
and the output range is ``[-r, r]``. Values outside the range saturate (MXNet's
unsigned cast of them is undefined). The ops are for inference: their gradients
are zeros, as in MXNet.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ..registry import Attr, register

_Q_OUT = ("output0", "output1", "output2")


def _scalar(x, name):
    if x.size != 1:
        raise ValueError(f"{name} must hold one value (shape (1,)), got shape {tuple(x.shape)}")
    return jax.lax.stop_gradient(x).astype(jnp.float32).reshape(())


def _round_half_up(v):
    """``trunc(v + 0.5)`` for ``v >= -0.5`` computed exactly (no rounding of ``v + 0.5``)."""
    f = jnp.floor(v)
    return f + (v - f >= 0.5).astype(v.dtype)


def _to_uint8(x, lo, hi):
    scale = jnp.float32(255.0) / (hi - lo)
    q = _round_half_up((x - lo) * scale)
    return jnp.clip(q, 0, 255).astype(jnp.uint8), lo.reshape(1), hi.reshape(1)


def _to_int8(x, lo, hi):
    real = jnp.maximum(jnp.abs(lo), jnp.abs(hi))
    scale = jnp.float32(127.0) / real
    mag = jnp.minimum(jnp.abs(x) * scale + jnp.float32(0.5), jnp.float32(127.0))
    q = jnp.trunc(jnp.sign(x) * mag)
    return q.astype(jnp.int8), (-real).reshape(1), real.reshape(1)


def _quantize(x, lo, hi, out_type):
    x = jax.lax.stop_gradient(x).astype(jnp.float32)
    return _to_uint8(x, lo, hi) if out_type == "uint8" else _to_int8(x, lo, hi)


@register(
    "_contrib_quantize",
    inputs=("data", "min_range", "max_range"),
    attrs={"out_type": Attr("str", "uint8", choices=("int8", "uint8"))},
    num_outputs=3,
    output_names=_Q_OUT,
)
def quantize(data, min_range, max_range, *, out_type):
    """Quantize float ``data`` known to lie in ``[min_range, max_range]`` (one-element
    arrays) to ``out_type``: outputs ``(quantized, min, max)``, the range of the
    quantized values (``uint8``: the input range; ``int8``: ``[-r, r]``).

    Examples
    --------
    >>> import gluonjax as mx
    >>> q, lo, hi = mx.nd.contrib.quantize(
    ...     mx.nd.array([0.1392, -0.5]), mx.nd.array([-1.0]), mx.nd.array([1.0]), out_type="int8")
    >>> q.asnumpy().tolist(), hi.asnumpy().tolist()
    ([18, -64], [1.0])
    """
    lo, hi = _scalar(min_range, "min_range"), _scalar(max_range, "max_range")
    return _quantize(data, lo, hi, out_type)


def _v2_type(out_type, min_calib):
    if out_type != "auto":
        return out_type
    return "uint8" if min_calib is not None and min_calib >= 0 else "int8"


@register(
    "_contrib_quantize_v2",
    attrs={
        "out_type": Attr("str", "int8", choices=("auto", "int8", "uint8")),
        "min_calib_range": Attr("float?", None),
        "max_calib_range": Attr("float?", None),
    },
    num_outputs=3,
    output_names=_Q_OUT,
)
def quantize_v2(data, *, out_type, min_calib_range, max_calib_range):
    """Quantize ``data`` with the calibrated range ``[min_calib_range,
    max_calib_range]`` or, without one, the range of ``data`` itself: outputs
    ``(quantized, min, max)``. ``out_type='auto'`` picks ``uint8`` for a calibrated
    range with ``min_calib_range >= 0``, else ``int8``. Already quantized ``uint8`` /
    ``int8`` data passes through with the calibrated range (default ``[0, 255]`` /
    ``[-127, 127]``).

    Examples
    --------
    >>> import gluonjax as mx
    >>> q, lo, hi = mx.nd.contrib.quantize_v2(mx.nd.array([0.0, 0.5, 1.0]), out_type="uint8")
    >>> q.asnumpy().tolist()
    [0, 128, 255]
    """
    kind = _v2_type(out_type, min_calib_range)
    calibrated = min_calib_range is not None and max_calib_range is not None
    if data.dtype in (jnp.uint8, jnp.int8):
        if calibrated:
            lo, hi = min_calib_range, max_calib_range
        else:
            lo, hi = (0.0, 255.0) if data.dtype == jnp.uint8 else (-127.0, 127.0)
        rng = (jnp.full((1,), lo, jnp.float32), jnp.full((1,), hi, jnp.float32))
        return (jax.lax.stop_gradient(data).astype(kind), *rng)
    x = jax.lax.stop_gradient(data).astype(jnp.float32)
    if calibrated:
        lo, hi = jnp.float32(min_calib_range), jnp.float32(max_calib_range)
    else:
        lo, hi = jnp.min(x), jnp.max(x)
    return _quantize(x, lo, hi, kind)


@register(
    "_contrib_dequantize",
    inputs=("data", "min_range", "max_range"),
    attrs={"out_type": Attr("str", "float32", choices=("float32",))},
)
def dequantize(data, min_range, max_range, *, out_type):
    """Float32 values of ``uint8`` / ``int8`` data quantized with the range
    ``[min_range, max_range]`` (one-element arrays): ``uint8``: ``q * (max - min) /
    255 + min``; ``int8``: ``q * max(|min|, |max|) / 127``.

    Examples
    --------
    >>> import gluonjax as mx
    >>> q = mx.nd.array([0, 127, -127], dtype="int8")
    >>> mx.nd.contrib.dequantize(q, mx.nd.array([-2.0]), mx.nd.array([1.0])).asnumpy().tolist()
    [0.0, 2.0, -2.0]
    """
    if data.dtype not in (jnp.uint8, jnp.int8):
        raise TypeError(f"data must be uint8 or int8 (quantized), got {data.dtype}")
    lo, hi = _scalar(min_range, "min_range"), _scalar(max_range, "max_range")
    q = jax.lax.stop_gradient(data).astype(jnp.float32)
    if data.dtype == jnp.uint8:
        return q * ((hi - lo) / jnp.float32(255.0)) + lo
    real = jnp.maximum(jnp.abs(lo), jnp.abs(hi))
    return q * (real / jnp.float32(127.0))
