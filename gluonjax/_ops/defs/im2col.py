"""Sliding blocks: ``im2col`` and ``col2im`` (MXNet's ``src/operator/nn/im2col``).

``im2col`` turns ``(N, C, *spatial)`` into columns ``(N, C * prod(kernel), L)``, L the
number of convolution output positions; row ``c * prod(kernel) + k`` holds input
channel ``c`` at kernel offset ``k`` (row-major over the kernel). ``col2im`` sums
columns back into an image (overlapping entries add up), so each is the other's
gradient. Both are a loop over the kernel offsets of strided slices (no gather).
"""

from __future__ import annotations

import itertools
import math

import jax.numpy as jnp

from ..registry import Attr, register

_ATTRS = {
    "kernel": Attr("shape"),
    "stride": Attr("shape", ()),
    "dilate": Attr("shape", ()),
    "pad": Attr("shape", ()),
}


def _params(kernel, stride, dilate, pad):
    """Kernel, stride, dilate, pad with MXNet's defaults (1, 1, 0) filled in."""
    nd = len(kernel)
    if nd not in (1, 2, 3):
        raise ValueError(f"kernel must have 1, 2 or 3 dimensions, got kernel={kernel}")
    stride, dilate, pad = stride or (1,) * nd, dilate or (1,) * nd, pad or (0,) * nd
    for name, v in (("stride", stride), ("dilate", dilate), ("pad", pad)):
        if len(v) != nd:
            raise ValueError(f"{name}={v} must have as many dimensions as kernel={kernel}")
    if min(kernel) < 1 or min(stride) < 1 or min(dilate) < 1 or min(pad) < 0:
        raise ValueError(
            f"kernel, stride and dilate must be positive and pad non-negative, got "
            f"kernel={kernel}, stride={stride}, dilate={dilate}, pad={pad}"
        )
    return kernel, stride, dilate, pad


def _out_sizes(spatial, kernel, stride, dilate, pad, what):
    out = []
    for n, k, s, d, p in zip(spatial, kernel, stride, dilate, pad):
        span = d * (k - 1) + 1
        if span > n + 2 * p:
            raise ValueError(
                f"the dilated kernel ({span}) exceeds the padded {what} ({n} + 2 * {p})"
            )
        out.append((n + 2 * p - span) // s + 1)
    return tuple(out)


def _window(offset, dilate, stride, outs):
    """The strided slices of a padded image read by kernel offset ``offset``."""
    return tuple(
        slice(o * d, o * d + (n - 1) * s + 1, s) for o, d, s, n in zip(offset, dilate, stride, outs)
    )


@register("im2col", attrs=dict(_ATTRS))
def im2col(data, *, kernel, stride, dilate, pad):
    """Sliding blocks of ``data (N, C, *spatial)`` as columns
    ``(N, C * prod(kernel), L)``, L the number of output positions of a convolution
    with the same ``kernel``, ``stride``, ``dilate`` and ``pad`` (zero padding).

    Examples
    --------
    >>> import gluonjax as mx
    >>> x = mx.nd.arange(9).reshape((1, 1, 3, 3))
    >>> mx.nd.im2col(x, kernel=(2, 2)).asnumpy()[0]
    array([[0., 1., 3., 4.],
           [1., 2., 4., 5.],
           [3., 4., 6., 7.],
           [4., 5., 7., 8.]], dtype=float32)
    """
    kernel, stride, dilate, pad = _params(kernel, stride, dilate, pad)
    nd = len(kernel)
    if data.ndim != nd + 2:
        raise ValueError(
            f"data must be {nd + 2}-d (N, C, *spatial) for a {nd}-d kernel, got {tuple(data.shape)}"
        )
    outs = _out_sizes(data.shape[2:], kernel, stride, dilate, pad, "input")
    padded = jnp.pad(data, [(0, 0), (0, 0)] + [(p, p) for p in pad])
    lead = (slice(None), slice(None))
    pieces = [
        padded[lead + _window(off, dilate, stride, outs)]
        for off in itertools.product(*(range(k) for k in kernel))
    ]
    cols = jnp.stack(pieces, axis=2)  # (N, C, K, *outs)
    n, c = data.shape[:2]
    return cols.reshape(n, c * math.prod(kernel), math.prod(outs))


@register("col2im", attrs={"output_size": Attr("shape"), **_ATTRS})
def col2im(data, *, output_size, kernel, stride, dilate, pad):
    """Sum columns ``data (N, C * prod(kernel), L)`` back into an image
    ``(N, C, *output_size)``: the transpose of :func:`im2col` with the same
    parameters (entries read by several blocks get the sum of their columns).

    Examples
    --------
    >>> import gluonjax as mx
    >>> cols = mx.nd.ones((1, 4, 4))
    >>> mx.nd.col2im(cols, output_size=(3, 3), kernel=(2, 2)).asnumpy()[0, 0]
    array([[1., 2., 1.],
           [2., 4., 2.],
           [1., 2., 1.]], dtype=float32)
    """
    kernel, stride, dilate, pad = _params(kernel, stride, dilate, pad)
    nd = len(kernel)
    if len(output_size) != nd or min(output_size, default=0) < 1:
        raise ValueError(
            f"output_size={output_size} must be positive sizes, one per kernel dimension "
            f"(kernel={kernel})"
        )
    outs = _out_sizes(output_size, kernel, stride, dilate, pad, "output size")
    ksize = math.prod(kernel)
    if data.ndim != 3 or data.shape[1] % ksize or data.shape[2] != math.prod(outs):
        raise ValueError(
            f"data must be (N, C * {ksize}, {math.prod(outs)}) for kernel={kernel}, "
            f"stride={stride}, dilate={dilate}, pad={pad}, output_size={output_size}; "
            f"got {tuple(data.shape)}"
        )
    n, c = data.shape[0], data.shape[1] // ksize
    cols = data.reshape(n, c, ksize, *outs)
    padded = jnp.zeros((n, c, *(o + 2 * p for o, p in zip(output_size, pad))), data.dtype)
    lead = (slice(None), slice(None))
    for i, off in enumerate(itertools.product(*(range(k) for k in kernel))):
        padded = padded.at[lead + _window(off, dilate, stride, outs)].add(cols[:, :, i])
    crop = tuple(slice(p, p + o) for p, o in zip(pad, output_size))
    return padded[lead + crop]
