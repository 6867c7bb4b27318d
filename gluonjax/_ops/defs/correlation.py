"""``Correlation``: FlowNet's correlation layer between two feature maps.

For every output position ``(i, j)`` (the top-left of a ``kernel_size`` patch at
``(i * stride1 + max_displacement, j * stride1 + max_displacement)`` of the padded
``data1``) and every displacement ``(dy, dx)`` on a grid of step ``stride2`` within
``max_displacement``, the patch of padded ``data1`` is compared with the displaced patch
of padded ``data2``: the sum over the patch and the channels of their product
(``is_multiply``) or absolute difference, divided by ``kernel_size ** 2 * channels``.
Output channel ``q`` is displacement ``(q // D - r, q % D - r) * stride2`` with
``r = max_displacement // stride2`` and ``D = 2 * r + 1``.

The gradient is jax's autodiff; for the absolute difference it is MXNet's subgradient
(``+1`` for data1 and ``-1`` for data2 where the two are equal).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp

from ..registry import Attr, register


def correlation_geometry(shape, kernel_size, max_displacement, stride1, stride2, pad_size):
    """``(top_h, top_w, radius, width)`` of a Correlation on data of ``shape``
    (MXNet rounds the output size up); raises ValueError when nothing fits."""
    if kernel_size < 1 or kernel_size % 2 == 0:
        raise ValueError(f"kernel_size must be a positive odd number, got {kernel_size}")
    if stride1 < 1 or stride2 < 1:
        raise ValueError(f"stride1 and stride2 must be positive, got {stride1}, {stride2}")
    border = max_displacement + (kernel_size - 1) // 2
    hp, wp = shape[2] + 2 * pad_size, shape[3] + 2 * pad_size
    top_h = math.ceil((hp - 2 * border) / stride1)
    top_w = math.ceil((wp - 2 * border) / stride1)
    if top_h < 1 or top_w < 1:
        raise ValueError(
            f"the neighborhood (max_displacement={max_displacement}) and the kernel "
            f"(kernel_size={kernel_size}) do not fit in the padded {hp}x{wp} input "
            f"(pad_size={pad_size}); pad more or lower max_displacement"
        )
    radius = max_displacement // stride2
    return top_h, top_w, radius, 2 * radius + 1


def _absdiff(a, b):
    d = a - b
    return jnp.where(d >= 0, d, -d)  # gradient +1 at d == 0, as MXNet's sign(a >= b)


@register(
    "Correlation",
    inputs=("data1", "data2"),
    attrs={
        "kernel_size": Attr("int", 1),
        "max_displacement": Attr("int", 1),
        "stride1": Attr("int", 1),
        "stride2": Attr("int", 1),
        "pad_size": Attr("int", 0),
        "is_multiply": Attr("bool", True),
    },
    num_outputs=3,
    visible_outputs=1,
    output_names=("output", "tmp1", "tmp2"),
)
def correlation(
    data1, data2, *, kernel_size, max_displacement, stride1, stride2, pad_size, is_multiply
):
    """Correlate ``data1`` and ``data2`` (N, C, H, W): output (N, D * D, top_h, top_w).

    Hidden outputs ``tmp1``/``tmp2``: the zero-padded inputs in (N, H, W, C) layout.

    Examples
    --------
    >>> import gluonjax as mx
    >>> a = mx.nd.arange(9).reshape((1, 1, 3, 3))
    >>> mx.nd.Correlation(a, a, max_displacement=1, pad_size=1)[0, :, 1, 1].asnumpy()
    array([ 0.,  4.,  8., 12., 16., 20., 24., 28., 32.], dtype=float32)
    """
    if data1.ndim != 4 or data1.shape != data2.shape:
        raise ValueError(
            f"data1 and data2 must be 4-d (N, C, H, W) of the same shape, got "
            f"{data1.shape} and {data2.shape}"
        )
    k, md, s1 = kernel_size, max_displacement, stride1
    top_h, top_w, radius, width = correlation_geometry(data1.shape, k, md, s1, stride2, pad_size)
    acc = jnp.promote_types(data1.dtype, jnp.float32)
    pads = ((0, 0), (0, 0), (pad_size, pad_size), (pad_size, pad_size))
    p1 = jnp.pad(data1.astype(acc), pads)
    p2 = jnp.pad(data2.astype(acc), pads)
    rows, cols = (top_h - 1) * s1 + k, (top_w - 1) * s1 + k
    a = p1[:, :, md : md + rows, md : md + cols]
    maps = []
    for q in range(width * width):
        dy, dx = (q // width - radius) * stride2, (q % width - radius) * stride2
        b = p2[:, :, md + dy : md + dy + rows, md + dx : md + dx + cols]
        maps.append(jnp.sum(a * b if is_multiply else _absdiff(a, b), axis=1))
    per_pixel = jnp.stack(maps, axis=1)  # (N, D * D, rows, cols)
    # a Python init value: a jax array there breaks reverse-mode inside jit
    out = jax.lax.reduce_window(per_pixel, 0.0, jax.lax.add, (1, 1, k, k), (1, 1, s1, s1), "VALID")
    out = (out / (k * k * data1.shape[1])).astype(data1.dtype)
    tmp1 = jax.lax.stop_gradient(jnp.transpose(p1, (0, 2, 3, 1)).astype(data1.dtype))
    tmp2 = jax.lax.stop_gradient(jnp.transpose(p2, (0, 2, 3, 1)).astype(data1.dtype))
    return out, tmp1, tmp2
