"""Convolution and Deconvolution (1-D, 2-D and 3-D, grouped, dilated, NCHW or NHWC)."""

from __future__ import annotations

import itertools
import math

import jax
import jax.numpy as jnp

from ..registry import Attr, register

CONV_LAYOUTS = ("NCW", "NCHW", "NCDHW", "NWC", "NHWC", "NDHWC")
_SPATIAL = {1: "W", 2: "HW", 3: "DHW"}


def channel_last(layout):
    """True for NWC/NHWC/NDHWC layouts."""
    return layout is not None and layout.endswith("C")


def spatial_axes(ndim, layout):
    """Indices of the spatial axes of an ``ndim``-d array in ``layout``."""
    return tuple(range(1, ndim - 1)) if channel_last(layout) else tuple(range(2, ndim))


def expand(value, n, fill, name):
    """``value`` (a tuple, maybe empty) as an ``n``-tuple; ``()`` means ``fill``."""
    if not value:
        return (fill,) * n
    if len(value) != n:
        raise ValueError(f"{name}={value} must have {n} entries, one per spatial axis")
    return tuple(value)


def check_layout(data, kernel, layout):
    """Validate ``kernel`` against ``data`` and ``layout``; returns the spatial rank."""
    nd = len(kernel)
    if nd not in (1, 2, 3):
        raise ValueError(f"kernel={kernel} must have 1, 2 or 3 entries (1-D/2-D/3-D)")
    if data.ndim != nd + 2:
        raise ValueError(
            f"data of shape {tuple(data.shape)} must be {nd + 2}-D for a {nd}-D kernel {kernel}"
        )
    if layout is not None and len(layout) != nd + 2:
        raise ValueError(f"layout {layout} does not fit a {nd}-D kernel {kernel}")
    return nd


def _specs(nd, layout, transposed=False):
    sp = _SPATIAL[nd]
    if channel_last(layout):
        return ("N" + sp + "C", "O" + sp + "I", "N" + sp + "C")
    return ("NC" + sp, "OI" + sp, "NC" + sp)


def _channels(shape, layout):
    return shape[-1] if channel_last(layout) else shape[1]


def _bias(out, bias, layout):
    if bias is None:
        return out
    shape = [1] * out.ndim
    shape[-1 if channel_last(layout) else 1] = -1
    return out + bias.reshape(shape).astype(out.dtype)


def _weight_shape(layout, lead, per_group, kernel):
    if channel_last(layout):
        return (lead, *kernel, per_group)
    return (lead, per_group, *kernel)


def _conv_inputs(attrs):
    return ("data", "weight") if attrs["no_bias"] else ("data", "weight", "bias")


def _conv_infer(attrs, shapes):
    data, layout, kernel = shapes["data"], attrs["layout"], attrs["kernel"]
    c = _channels(data, layout)
    out = {"weight": _weight_shape(layout, attrs["num_filter"], c // attrs["num_group"], kernel)}
    if not attrs["no_bias"]:
        out["bias"] = (attrs["num_filter"],)
    return out


def _common_attrs(no_bias, workspace):
    return {
        "kernel": Attr("shape"),
        "stride": Attr("shape", ()),
        "dilate": Attr("shape", ()),
        "pad": Attr("shape", ()),
        "num_filter": Attr("int"),
        "num_group": Attr("int", 1),
        "workspace": Attr("int", workspace),
        "no_bias": Attr("bool", no_bias),
        "cudnn_tune": Attr("str?", None, choices=("off", "limited_workspace", "fastest")),
        "cudnn_off": Attr("bool", False),
        "layout": Attr("str?", None, choices=CONV_LAYOUTS),
    }


def _check_groups(c, num_filter, num_group):
    if num_group < 1 or c % num_group or num_filter % num_group:
        raise ValueError(
            f"input channels {c} and num_filter {num_filter} must both be divisible by "
            f"num_group {num_group}"
        )


def _check_param(what, got, want):
    if tuple(got) != tuple(want):
        raise ValueError(f"{what} shape {tuple(got)} does not match the expected {tuple(want)}")


@register(
    "Convolution", inputs=_conv_inputs, attrs=_common_attrs(False, 1024), infer_args=_conv_infer
)
def convolution(
    data,
    weight,
    bias=None,
    *,
    kernel,
    stride,
    dilate,
    pad,
    num_filter,
    num_group,
    workspace,
    no_bias,
    cudnn_tune,
    cudnn_off,
    layout,
):
    """N-d cross-correlation (MXNet ``Convolution``).

    Inputs: data (N, C, *spatial) [or channel-last], weight (num_filter, C/num_group, *kernel)
    [(num_filter, *kernel, C/num_group) for channel-last layouts], bias (num_filter,).
    Output size per axis: ``(x + 2*pad - dilate*(k-1) - 1) // stride + 1``.
    """
    nd = check_layout(data, kernel, layout)
    stride, dilate = expand(stride, nd, 1, "stride"), expand(dilate, nd, 1, "dilate")
    pad = expand(pad, nd, 0, "pad")
    c = _channels(data.shape, layout)
    _check_groups(c, num_filter, num_group)
    _check_param("weight", weight.shape, _weight_shape(layout, num_filter, c // num_group, kernel))
    if bias is not None:
        _check_param("bias", bias.shape, (num_filter,))
    for a, k, d, p in zip(spatial_axes(data.ndim, layout), kernel, dilate, pad, strict=True):
        if data.shape[a] + 2 * p < d * (k - 1) + 1:
            raise ValueError(
                f"kernel {kernel} (dilate {dilate}) is larger than the padded input "
                f"{tuple(data.shape)} (pad {pad})"
            )
    out_spatial = tuple(
        (data.shape[a] + 2 * p - d * (k - 1) - 1) // s + 1
        for a, k, s, d, p in zip(spatial_axes(data.ndim, layout), kernel, stride, dilate, pad)
    )
    if _few_outputs(out_spatial, kernel):
        out = _conv_by_patches(data, weight, kernel, stride, dilate, pad, num_group, layout)
    elif _by_taps(data, kernel, num_group, layout):
        geom = (tuple(kernel), stride, dilate, pad, num_group, out_spatial)
        out = _taps(data, weight.astype(data.dtype), geom)
    else:
        out = _xla_conv(data, weight, stride, dilate, pad, num_group, layout)
    return _bias(out, bias, layout)


def _xla_conv(data, weight, stride, dilate, pad, num_group, layout):
    return jax.lax.conv_general_dilated(
        data,
        weight.astype(data.dtype),
        window_strides=stride,
        padding=[(p, p) for p in pad],
        rhs_dilation=dilate,
        dimension_numbers=_specs(len(stride), layout),
        feature_group_count=num_group,
    )


_MAX_TAPS = 49


def _by_taps(data, kernel, num_group, layout):
    """A depthwise 2-D NCHW convolution (every output channel reads one input channel,
    ``num_group`` = input channels > 1) with a kernel of at most 7x7.

    XLA:CPU runs these through its general convolution, 10-60x slower than PyTorch's
    oneDNN (jax-ml/jax#23713): a 3x3 depthwise layer over 32x112x112 takes 12 ms there
    and 0.26 ms as nine shifted multiply-adds (one fused loop), PyTorch 0.23 ms; forward
    and backward of 8x256x28x28 stride 2: 170 ms against 15 ms. (A single-input-channel
    layer such as LeNet's first gains in the forward but its gradient through the taps is
    5x slower than XLA's, and a custom JVP with XLA's gradients made the LeNet step
    slower as a whole: XLA fuses the taps into their consumers.)
    """
    return (
        len(kernel) == 2
        and not channel_last(layout)
        and num_group > 1
        and data.shape[1] == num_group
        and math.prod(kernel) <= _MAX_TAPS
    )


def _taps(x, w, geom):
    """``sum over taps (i, j) of shifted(x) * w[:, :, i, j]`` (see _by_taps)."""
    kernel, stride, dilate, pad, g, (ho, wo) = geom
    n, _, h, wd = x.shape
    m = w.shape[0] // g  # output channels per input channel
    xp = jnp.pad(x, ((0, 0), (0, 0), (pad[0], pad[0]), (pad[1], pad[1])))
    xp = xp.reshape(n, g, 1, h + 2 * pad[0], wd + 2 * pad[1])
    wr = w.reshape(g, m, *kernel)
    out = None
    for i, j in itertools.product(range(kernel[0]), range(kernel[1])):
        a, b = i * dilate[0], j * dilate[1]
        tap = xp[
            ...,
            a : a + stride[0] * (ho - 1) + 1 : stride[0],
            b : b + stride[1] * (wo - 1) + 1 : stride[1],
        ]
        term = tap * wr[None, :, :, i, j, None, None]
        out = term if out is None else out + term
    return out.reshape(n, g * m, ho, wo)


_MAX_PATCHES = 16


def _few_outputs(out_spatial, kernel):
    """A kernel larger than a small output (e.g. a 224x224 kernel over a 224x224 image).

    XLA differentiates a convolution with respect to its input by a transposed
    convolution over the input padded by the kernel size: its cost grows with the
    input size times the kernel size, minutes on a CPU for such a layer. Computed
    as one dot product per output position instead, the forward costs the same
    and the gradients cost as much as the forward.
    """
    n_out = math.prod(out_spatial)
    return n_out <= _MAX_PATCHES and math.prod(kernel) > n_out


def _conv_by_patches(data, weight, kernel, stride, dilate, pad, groups, layout):
    """Convolution as ``sum(patch * weight)`` at each output position (see _few_outputs)."""
    last = channel_last(layout)
    nd = len(kernel)
    axes = spatial_axes(data.ndim, layout)
    widths = [(0, 0)] * data.ndim
    for a, p in zip(axes, pad):
        widths[a] = (p, p)
    x = jnp.pad(data, widths) if any(pad) else data
    w = weight.astype(data.dtype)
    o = w.shape[0]
    if last:  # weight (O, *K, C/g) -> (g, O/g, C/g, *K)
        w = jnp.moveaxis(w, -1, 1)
    w = w.reshape(groups, o // groups, *w.shape[1:])
    out_spatial = [
        (x.shape[a] - d * (k - 1) - 1) // s + 1 for a, k, s, d in zip(axes, kernel, stride, dilate)
    ]
    letters = "hijk"[:nd]
    outs = []
    for pos in itertools.product(*(range(n) for n in out_spatial)):
        index = [slice(None)] * x.ndim
        for a, i, k, s, d in zip(axes, pos, kernel, stride, dilate):
            index[a] = slice(i * s, i * s + d * (k - 1) + 1, d)
        patch = x[tuple(index)]
        if last:  # (N, *K, C) -> (N, C, *K)
            patch = jnp.moveaxis(patch, -1, 1)
        patch = patch.reshape(patch.shape[0], groups, -1, *kernel)
        outs.append(jnp.einsum(f"ngc{letters},goc{letters}->ngo", patch, w))
    out = jnp.stack(outs, axis=-1).reshape(x.shape[0], o, *out_spatial)
    return jnp.moveaxis(out, 1, -1) if last else out


def deconv_geometry(in_spatial, kernel, stride, dilate, pad, adj, target_shape):
    """``(pad, adj, out_spatial)`` of a Deconvolution (``target_shape`` overrides pad/adj)."""
    if target_shape and any(target_shape):
        pads, adjs = [], []
        for x, k, s, d, t in zip(in_spatial, kernel, stride, dilate, target_shape, strict=True):
            full = s * (x - 1) + d * (k - 1) + 1
            if t > full:
                raise ValueError(f"target_shape {target_shape} is too big (at most {full})")
            pads.append((full - t + 1) // 2)
            adjs.append((full - t) % 2)
        pad, adj = tuple(pads), tuple(adjs)
    out = tuple(
        (x - 1) * s - 2 * p + d * (k - 1) + a + 1
        for x, k, s, d, p, a in zip(in_spatial, kernel, stride, dilate, pad, adj, strict=True)
    )
    return pad, adj, out


def _deconv_infer(attrs, shapes):
    data, layout, kernel = shapes["data"], attrs["layout"], attrs["kernel"]
    c = _channels(data, layout)
    out = {"weight": _weight_shape(layout, c, attrs["num_filter"] // attrs["num_group"], kernel)}
    if not attrs["no_bias"]:
        out["bias"] = (attrs["num_filter"],)
    return out


_DECONV_ATTRS = dict(
    _common_attrs(True, 512), adj=Attr("shape", ()), target_shape=Attr("shape", ())
)


@register("Deconvolution", inputs=_conv_inputs, attrs=_DECONV_ATTRS, infer_args=_deconv_infer)
def deconvolution(
    data,
    weight,
    bias=None,
    *,
    kernel,
    stride,
    dilate,
    pad,
    num_filter,
    num_group,
    workspace,
    no_bias,
    cudnn_tune,
    cudnn_off,
    layout,
    adj,
    target_shape,
):
    """Transposed convolution (the gradient of Convolution w.r.t. its data).

    Inputs: data (N, C, *spatial), weight (C, num_filter/num_group, *kernel) [channel-last:
    (C, *kernel, num_filter/num_group)], bias (num_filter,) unless ``no_bias`` (default True).
    Output size: ``(x-1)*stride - 2*pad + dilate*(k-1) + adj + 1``, or ``target_shape``.
    """
    nd = check_layout(data, kernel, layout)
    stride, dilate = expand(stride, nd, 1, "stride"), expand(dilate, nd, 1, "dilate")
    pad, adj = expand(pad, nd, 0, "pad"), expand(adj, nd, 0, "adj")
    target = expand(target_shape, nd, 0, "target_shape")
    axes = spatial_axes(data.ndim, layout)
    pad, adj, out_size = deconv_geometry(
        [data.shape[a] for a in axes], kernel, stride, dilate, pad, adj, target
    )
    if min(out_size) < 1:
        raise ValueError(f"pad {pad} leaves an empty output {out_size}")
    c = _channels(data.shape, layout)
    _check_groups(c, num_filter, num_group)
    fpg = num_filter // num_group
    _check_param("weight", weight.shape, _weight_shape(layout, c, fpg, kernel))
    if bias is not None:
        _check_param("bias", bias.shape, (num_filter,))
    w = weight.astype(data.dtype)
    if _deconv_by_taps(nd, layout, num_group, stride):
        return _bias(_deconv_taps(data, w, kernel, stride, dilate, pad, out_size), bias, layout)
    if channel_last(layout):  # (C, *k, F/g) -> (C, F/g, *k)
        w = jnp.moveaxis(w, -1, 1)
    # (g, C/g, F/g, *k) -> (g, F/g, C/g, *k) -> (F, C/g, *k), spatially flipped
    w = w.reshape((num_group, c // num_group, fpg) + tuple(kernel))
    w = jnp.swapaxes(w, 1, 2).reshape((num_filter, c // num_group) + tuple(kernel))
    w = jnp.flip(w, axis=tuple(range(2, 2 + nd)))
    if channel_last(layout):
        w = jnp.moveaxis(w, 1, -1)
    padding = [
        (d * (k - 1) - p, d * (k - 1) - p + a)
        for k, d, p, a in zip(kernel, dilate, pad, adj, strict=True)
    ]
    out = jax.lax.conv_general_dilated(
        data,
        w,
        window_strides=(1,) * nd,
        padding=padding,
        lhs_dilation=stride,
        rhs_dilation=dilate,
        dimension_numbers=_specs(nd, layout),
        feature_group_count=num_group,
    )
    return _bias(out, bias, layout)


def _deconv_by_taps(nd, layout, num_group, stride):
    """A strided 2-D NCHW transposed convolution without groups (DCGAN's, FCN's).

    XLA:CPU runs the input-dilated convolution it would be otherwise with its slowest
    emitter (jax-ml/jax#23783): three quarters of the work multiply the inserted zeros.
    As one matrix product (every input pixel times every kernel tap) and the taps
    added into the strided output, no zero is multiplied: a DCGAN
    generator step (batch 64, one core) took 7.3 s and takes 2.4 s (PyTorch 0.48 s: what is
    left is the taps' strided adds, docs/performance.md).
    """
    return nd == 2 and not channel_last(layout) and num_group == 1 and max(stride) > 1


def _deconv_taps(x, w, kernel, stride, dilate, pad, out_size):
    """``x`` (N, C, H, W) transposed-convolved with ``w`` (C, F, kh, kw) (see above)."""
    n, _, h, wd = x.shape
    full = [
        (size - 1) * s + d * (k - 1) + 1 for size, s, d, k in zip((h, wd), stride, dilate, kernel)
    ]
    cols = jnp.einsum("nchw,cfij->nfijhw", x, w)
    zero = jnp.zeros((), x.dtype)
    out = None
    for i, j in itertools.product(range(kernel[0]), range(kernel[1])):
        lo = (i * dilate[0], j * dilate[1])
        cfg = [(0, 0, 0), (0, 0, 0)] + [
            (a, f - a - (size - 1) * s - 1, s - 1)
            for a, f, size, s in zip(lo, full, (h, wd), stride)
        ]
        term = jax.lax.pad(cols[:, :, i, j], zero, cfg)
        out = term if out is None else out + term
    # crop MXNet's pad from the start, keep out_size (zeros past the end for adj > pad)
    cfg = [(0, 0, 0), (0, 0, 0)] + [(-p, o + p - f, 0) for p, o, f in zip(pad, out_size, full)]
    return jax.lax.pad(out, zero, cfg)
