"""Pooling, UpSampling and Pad."""

from __future__ import annotations

import functools
import itertools
import math

import jax
import jax.numpy as jnp
import numpy as np

from ..registry import Attr, register
from .conv import check_layout, deconvolution, expand, spatial_axes

POOL_LAYOUTS = ("NCW", "NCHW", "NCDHW", "NWC", "NHWC", "NDHWC")


def _pool_geometry(size, k, s, p, convention):
    """``(out, pad_low, pad_high, limit)`` of one spatial axis; avg windows that
    count padding are clipped at ``limit`` (the end of the symmetric padding)."""
    if convention == "same":  # MXNet: windows start at 0, the last ones run past the end
        out = -(-size // s)
        total = max((out - 1) * s + k - size, 0)
        return out, 0, total, size
    span = size + 2 * p - k
    if span < 0:
        raise ValueError(f"kernel {k} is larger than the padded input size {size + 2 * p}")
    out = 1 + (-(-span // s) if convention == "full" else span // s)
    return out, p, max((out - 1) * s + k - size - p, 0), size + p


def _counts(size, k, s, lo, out, include_pad, hi_limit):
    """Number of elements each window averages over, along one axis."""
    start = np.arange(out) * s - lo
    if include_pad:
        return np.minimum(start + k, hi_limit) - start
    return np.maximum(np.minimum(start + k, size) - np.maximum(start, 0), 0)


# The unrolled max-pool derivative below costs one strided slice per window position;
# past this many positions XLA's select_and_scatter (the reduce_window fallback) wins.
_MAX_UNROLLED_WINDOW = 49


@functools.partial(jax.custom_vjp, nondiff_argnums=(1, 2, 3))
def _max_pool(x, window, strides, padding):
    """``reduce_window`` max with -inf padding; its gradient is :func:`_max_pool_bwd`."""
    return jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, window, strides, padding)


def _max_pool_fwd(x, window, strides, padding):
    out = _max_pool(x, window, strides, padding)
    return out, (x, out)


def _max_pool_bwd(window, strides, padding, res, g):
    """Gradient of max pooling: each window gives its gradient to its FIRST maximum.

    The window is scanned row-major (as MXNet's CPU kernel and XLA's select_and_scatter
    with ``>=`` do), so ties go to the earliest position. The scan is unrolled over the
    window offsets: per offset, a strided slice of the padded input is compared with
    the pooled output and the selected gradient is put back with an interior-padded
    ``lax.pad``; XLA:CPU fuses these into one pass, several times faster than
    select_and_scatter. A NaN counts as a maximum (the output of a window holding one is
    NaN), so such a window gives its gradient to its first NaN (select_and_scatter's
    choice there depends on the window's order of comparisons). The body is
    made of differentiable ops, so ``create_graph`` gradients (reverse over reverse)
    work; forward mode (``jax.jvp``) is not defined for a ``custom_vjp``.
    """
    x, out = res
    cfg = [(lo, hi, 0) for lo, hi in padding]
    xp = jax.lax.pad(x, np.array(-np.inf, x.dtype), cfg)
    zero = np.zeros((), g.dtype)
    taken, acc = None, None
    for offset in itertools.product(*[range(k) for k in window]):
        limit = [o + (n - 1) * s + 1 for o, n, s in zip(offset, out.shape, strides, strict=True)]
        xs = jax.lax.slice(xp, offset, limit, strides)
        hit = (xs == out) | (xs != xs)
        if taken is None:
            taken = hit
        else:
            hit = hit & ~taken
            taken = taken | hit
        back = [
            (o, n - e, s - 1) for o, e, n, s in zip(offset, limit, xp.shape, strides, strict=True)
        ]
        part = jax.lax.pad(jnp.where(hit, g, zero), zero, back)
        acc = part if acc is None else acc + part
    crop = tuple(slice(lo, lo + n) for (lo, _), n in zip(padding, x.shape, strict=True))
    return (acc[crop],)


_max_pool.defvjp(_max_pool_fwd, _max_pool_bwd)


def _max_reduce(data, window, strides, padding):
    """Max over windows; the unrolled-derivative path where its invariants hold."""
    window, strides = tuple(window), tuple(strides)
    padding = tuple(tuple(p) for p in padding)
    if (
        jnp.issubdtype(data.dtype, jnp.floating)
        and math.prod(window) <= _MAX_UNROLLED_WINDOW
        and all(lo >= 0 and hi >= 0 for lo, hi in padding)
    ):
        return _max_pool(data, window, strides, padding)
    return jax.lax.reduce_window(data, -jnp.inf, jax.lax.max, window, strides, padding)


@register(
    "Pooling",
    attrs={
        "kernel": Attr("shape", ()),
        "pool_type": Attr("str", "max", choices=("max", "avg", "sum", "lp")),
        "global_pool": Attr("bool", False),
        "cudnn_off": Attr("bool", False),
        "pooling_convention": Attr("str", "valid", choices=("valid", "full", "same")),
        "stride": Attr("shape", ()),
        "pad": Attr("shape", ()),
        "p_value": Attr("int?", None),
        "count_include_pad": Attr("bool?", None),
        "layout": Attr("str?", None, choices=POOL_LAYOUTS),
    },
)
def pooling(
    data,
    *,
    kernel,
    pool_type,
    global_pool,
    cudnn_off,
    pooling_convention,
    stride,
    pad,
    p_value,
    count_include_pad,
    layout,
):
    """Max/avg/sum/Lp pooling over the 1-3 spatial axes.

    ``valid`` uses ``floor`` and ``full`` uses ``ceil`` for the output size
    ``(x + 2*pad - k) / stride + 1``; ``same`` (1-D only, no pad, as MXNet) gives
    ``ceil(x / stride)`` windows starting at ``0, stride, ...``.
    ``avg`` divides by the window size clipped to the padded input, or (with
    ``count_include_pad=False``) by the number of real elements.
    """
    axes = spatial_axes(data.ndim, layout) if data.ndim >= 3 else ()
    if not axes:
        raise ValueError(f"data of shape {tuple(data.shape)} needs at least one spatial axis")
    sizes = [data.shape[a] for a in axes]
    nd = len(axes)
    if global_pool:
        kernel, stride, pad, conv = tuple(sizes), (1,) * nd, (0,) * nd, "valid"
    else:
        if not kernel:
            raise ValueError("kernel is required unless global_pool=True")
        check_layout(data, kernel, layout)
        conv = pooling_convention
        if conv == "same" and (nd != 1 or any(pad)):
            raise ValueError(
                "pooling_convention='same' supports 1-D pooling of (batch, channel, x) data "
                f"without pad (got data {tuple(data.shape)}, pad={tuple(pad)}); use 'valid' "
                "or 'full' with an explicit pad for 2-D/3-D"
            )
        # MXNet reads the first len(kernel) entries of stride and pad (more are ignored)
        stride = expand(tuple(stride)[:nd] if len(stride) > nd else stride, nd, 1, "stride")
        pad = expand(tuple(pad)[:nd] if len(pad) > nd else pad, nd, 0, "pad")
    geo = [_pool_geometry(*a, conv) for a in zip(sizes, kernel, stride, pad, strict=True)]
    window, strides, padding = [1] * data.ndim, [1] * data.ndim, [(0, 0)] * data.ndim
    for a, k, s, (_, lo, hi, _) in zip(axes, kernel, stride, geo, strict=True):
        window[a], strides[a], padding[a] = k, s, (lo, hi)

    def reduce(x, init, fn):
        return jax.lax.reduce_window(x, init, fn, window, strides, padding)

    if pool_type == "max":
        out = _max_reduce(data, window, strides, padding)
        return jnp.where(out == -jnp.inf, jnp.finfo(data.dtype).min, out).astype(data.dtype)
    if pool_type == "lp":
        p = 2 if p_value is None else p_value
        s = reduce(data**p if p != 1 else data, np.zeros((), data.dtype), jax.lax.add)
        if p == 1:
            return s
        if p == 2:
            return jnp.sqrt(s)
        if p == 3:
            return jnp.cbrt(s)
        return s ** (1.0 / p)
    total = reduce(data, np.zeros((), data.dtype), jax.lax.add)
    if pool_type == "sum":
        return total
    include = count_include_pad is None or bool(count_include_pad)
    count = np.ones([1] * data.ndim, np.float64)
    for a, size, k, s, (out, lo, _, limit) in zip(axes, sizes, kernel, stride, geo, strict=True):
        shape = [1] * data.ndim
        shape[a] = out
        count = count * _counts(size, k, s, lo, out, include, limit).reshape(shape)
    safe = np.where(count > 0, count, 1).astype(np.dtype(data.dtype))
    return jnp.where(count > 0, total / safe, 0).astype(data.dtype)


def _upsampling_infer(attrs, shapes):
    if attrs["sample_type"] != "bilinear":
        return {}
    s = attrs["scale"]
    k = 2 * s - s % 2
    return {"arg1": (shapes["arg0"][1], 1, k, k)}


@register(
    "UpSampling",
    variadic=True,
    attrs={
        "num_args": Attr("int", 1),
        "scale": Attr("int"),
        "num_filter": Attr("int", 0),
        "sample_type": Attr("str", choices=("nearest", "bilinear")),
        "multi_input_mode": Attr("str", "concat", choices=("concat", "sum")),
        "workspace": Attr("int", 512),
    },
    infer_args=_upsampling_infer,
)
def upsampling(*args, num_args, scale, num_filter, sample_type, multi_input_mode, workspace):
    """Nearest-neighbour or bilinear up-sampling of NCHW data by an integer ``scale``.

    ``nearest``: every input is repeated up to ``scale`` times the first input's size,
    then the results are concatenated along channels (or summed).
    ``bilinear``: inputs (data, weight (C, 1, k, k)); a grouped Deconvolution with
    ``k = 2*scale - scale % 2``, stride ``scale``, pad ``ceil((scale-1)/2)``.
    """
    if scale < 1:
        raise ValueError(f"scale must be >= 1, got {scale}")
    if any(a.ndim != 4 for a in args):
        raise ValueError(f"every input must be 4-D (N, C, H, W), got {[a.shape for a in args]}")
    if sample_type == "bilinear":
        if len(args) != 2:
            raise ValueError("bilinear UpSampling takes exactly two inputs (data, weight)")
        data, weight = args
        c, k = data.shape[1], 2 * scale - scale % 2
        return deconvolution(
            data,
            weight,
            kernel=(k, k),
            stride=(scale, scale),
            dilate=(),
            adj=(),
            pad=(math.ceil((scale - 1) / 2),) * 2,
            num_filter=c,
            num_group=c,
            workspace=0,
            no_bias=True,
            cudnn_tune=None,
            cudnn_off=False,
            layout=None,
            target_shape=(),
        )
    oh, ow = args[0].shape[2] * scale, args[0].shape[3] * scale
    outs = []
    for a in args:
        if oh % a.shape[2] or ow % a.shape[3] or oh // a.shape[2] != ow // a.shape[3]:
            raise ValueError(f"input of shape {a.shape} cannot be up-sampled to ({oh}, {ow})")
        s = oh // a.shape[2]
        outs.append(jnp.repeat(jnp.repeat(a, s, axis=2), s, axis=3))
    if multi_input_mode == "sum":
        if len({o.shape for o in outs}) != 1:
            raise ValueError(f"sum mode needs equal channels, got {[a.shape for a in args]}")
        return sum(outs[1:], outs[0])
    return jnp.concatenate(outs, axis=1) if len(outs) > 1 else outs[0]


@register(
    "Pad",
    aliases=("pad",),
    attrs={
        "mode": Attr("str", choices=("constant", "edge", "reflect")),
        "pad_width": Attr("shape"),
        "constant_value": Attr("float", 0.0),
    },
)
def pad_op(data, *, mode, pad_width, constant_value):
    """Pad every axis by ``pad_width = (before0, after0, before1, after1, ...)``.

    ``constant`` fills with ``constant_value``; ``edge`` repeats the border; ``reflect``
    mirrors without repeating the border (as ``numpy.pad``).
    """
    if len(pad_width) != 2 * data.ndim:
        raise ValueError(
            f"pad_width {pad_width} must have 2*ndim = {2 * data.ndim} entries for data of "
            f"shape {tuple(data.shape)}"
        )
    widths = [(pad_width[2 * i], pad_width[2 * i + 1]) for i in range(data.ndim)]
    if mode == "constant":
        return jnp.pad(data, widths, constant_values=jnp.asarray(constant_value, data.dtype))
    if mode == "reflect":
        for (lo, hi), n in zip(widths, data.shape, strict=True):
            if lo >= n or hi >= n:
                raise ValueError(f"reflect padding {pad_width} must be smaller than the axis")
    return jnp.pad(data, widths, mode=mode)
