"""contrib.DeformableConvolution and contrib.ModulatedDeformableConvolution (2-D, NCHW):
convolutions whose kernel taps are moved by learned fractional offsets and read with
bilinear interpolation (the modulated one also scales each tap by a learned mask).

Implemented as a deformable im2col (four gathers weighted by the bilinear
factors) followed by one grouped matmul; jax differentiates both, so the offset
gradient is the derivative of the bilinear weights, as in MXNet.
"""

from __future__ import annotations

import jax.numpy as jnp

from ..registry import Attr, register
from .conv import expand


def _inputs(attrs):
    return (
        ("data", "offset", "weight") if attrs["no_bias"] else ("data", "offset", "weight", "bias")
    )


def _infer(attrs, shapes):
    c = shapes["data"][1]
    out = {"weight": (attrs["num_filter"], c // attrs["num_group"], *attrs["kernel"])}
    if not attrs["no_bias"]:
        out["bias"] = (attrs["num_filter"],)
    return out


def _taps(pos, size, dtype):
    """Low/high indices and the high weight of linear interpolation at ``pos``
    (MXNet clamps a position in [size - 1, size) to the last row)."""
    low = jnp.floor(pos)
    edge = low >= size - 1
    frac = jnp.where(edge, jnp.zeros((), dtype), pos - low)
    low_i = jnp.clip(low.astype(jnp.int32), 0, size - 1)
    high_i = jnp.where(edge, low_i, jnp.clip(low_i + 1, 0, size - 1))
    return low_i, high_i, frac


def deformable_columns(data, offset, kernel, stride, pad, dilate, groups):
    """(N, C, kh*kw, Ho, Wo) bilinear samples of ``data`` at the offset taps."""
    n, c, h, w = data.shape
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel, stride, pad, dilate
    ho, wo = offset.shape[2:]
    k = kh * kw
    off = offset.reshape(n, groups, k, 2, ho, wo)
    tap_h = (jnp.arange(kh) * dh)[:, None].repeat(kw, 1).reshape(k)
    tap_w = (jnp.arange(kw) * dw)[None, :].repeat(kh, 0).reshape(k)
    base_h = tap_h[:, None, None] + (jnp.arange(ho) * sh - ph)[None, :, None]
    base_w = tap_w[:, None, None] + (jnp.arange(wo) * sw - pw)[None, None, :]
    py = base_h.astype(data.dtype) + off[:, :, :, 0]  # (N, G, K, Ho, Wo)
    px = base_w.astype(data.dtype) + off[:, :, :, 1]
    inside = (py >= 0) & (px >= 0) & (py < h) & (px < w)
    y0, y1, ly = _taps(py, h, data.dtype)
    x0, x1, lx = _taps(px, w, data.dtype)
    hy, hx = 1 - ly, 1 - lx
    zero = jnp.zeros((), data.dtype)
    flat = data.reshape(n, groups, c // groups, h * w)

    def read(yi, xi):
        idx = (yi * w + xi).reshape(n, groups, 1, -1)
        return jnp.take_along_axis(flat, idx, axis=3).reshape(n, groups, c // groups, k, ho, wo)

    def wt(v):
        return jnp.where(inside, v, zero)[:, :, None]

    cols = (
        wt(hy * hx) * read(y0, x0)
        + wt(hy * lx) * read(y0, x1)
        + wt(ly * hx) * read(y1, x0)
        + wt(ly * lx) * read(y1, x1)
    )
    return cols.reshape(n, c, k, ho, wo)


def _geometry(name, data, kernel, stride, dilate, pad, layout):
    """Checked 2-D NCHW geometry shared by both ops: ``(stride, dilate, pad, ho, wo)``."""
    if len(kernel) != 2 or data.ndim != 4 or layout not in (None, "NCHW"):
        raise ValueError(
            f"{name} supports 2-D NCHW data and kernels, got data "
            f"{tuple(data.shape)}, kernel={kernel}, layout={layout}"
        )
    stride = expand(stride, 2, 1, "stride")
    dilate = expand(dilate, 2, 1, "dilate")
    pad = expand(pad, 2, 0, "pad")
    _, _, h, w = data.shape
    ho = (h + 2 * pad[0] - dilate[0] * (kernel[0] - 1) - 1) // stride[0] + 1
    wo = (w + 2 * pad[1] - dilate[1] * (kernel[1] - 1) - 1) // stride[1] + 1
    return stride, dilate, pad, ho, wo


def _grouped_conv(cols, weight, bias, num_filter, num_group, num_deformable_group, kernel):
    """The convolution of sampled columns ``(N, C, kh*kw, Ho, Wo)`` with ``weight``."""
    n, c, k, ho, wo = cols.shape
    dg, g = num_deformable_group, num_group
    if c % dg or c % g or num_filter % g or weight.shape != (num_filter, c // g, *kernel):
        raise ValueError(
            f"weight {tuple(weight.shape)} must be {(num_filter, c // max(g, 1), *kernel)}, and "
            f"channels {c} divisible by num_group={g} and num_deformable_group={dg}"
        )
    cols = cols.reshape(n, g, c // g, k, ho * wo)
    wg = weight.reshape(g, num_filter // g, c // g, k)
    out = jnp.einsum("gfck,ngckp->ngfp", wg, cols).reshape(n, num_filter, ho, wo)
    if bias is not None:
        out = out + bias.reshape(1, -1, 1, 1)
    return out


@register(
    "_contrib_DeformableConvolution",
    inputs=_inputs,
    attrs={
        "kernel": Attr("shape"),
        "stride": Attr("shape", ()),
        "dilate": Attr("shape", ()),
        "pad": Attr("shape", ()),
        "num_filter": Attr("int"),
        "num_group": Attr("int", 1),
        "num_deformable_group": Attr("int", 1),
        "workspace": Attr("int", 1024),
        "no_bias": Attr("bool", False),
        "layout": Attr("str?", None, choices=("NCW", "NCHW", "NCDHW")),
    },
    infer_args=_infer,
)
def deformable_convolution(
    data,
    offset,
    weight,
    bias=None,
    *,
    kernel,
    stride,
    dilate,
    pad,
    num_filter,
    num_group,
    num_deformable_group,
    workspace,
    no_bias,
    layout,
):
    """Deformable convolution of ``data (N, C, H, W)``.

    ``offset (N, 2 * num_deformable_group * kh * kw, Ho, Wo)`` moves each kernel tap:
    for deformable group ``g`` and tap ``t = i * kw + j``, channel ``2t`` of the group's
    block is the row offset and ``2t + 1`` the column offset. A tap at (row, col) reads
    ``data`` bilinearly, 0 outside the image. ``weight (num_filter, C / num_group, kh,
    kw)``, optional ``bias (num_filter,)``. Only 2-D kernels and NCHW (as MXNet).
    """
    stride, dilate, pad, ho, wo = _geometry(
        "DeformableConvolution", data, kernel, stride, dilate, pad, layout
    )
    n, c = data.shape[:2]
    k, dg = kernel[0] * kernel[1], num_deformable_group
    if offset.shape != (n, 2 * dg * k, ho, wo):
        raise ValueError(
            f"offset must have shape {(n, 2 * dg * k, ho, wo)} for data {tuple(data.shape)}, "
            f"kernel {kernel} and {dg} deformable group(s), got {tuple(offset.shape)}"
        )
    if c % dg:
        raise ValueError(f"channels {c} must divide by num_deformable_group={dg}")
    cols = deformable_columns(data, offset, kernel, stride, pad, dilate, dg)
    return _grouped_conv(cols, weight, bias, num_filter, num_group, dg, kernel)


def _modulated_inputs(attrs):
    base = ("data", "offset", "mask", "weight")
    return base if attrs["no_bias"] else (*base, "bias")


def modulated_columns(data, offset, mask, kernel, stride, pad, dilate, groups):
    """(N, C, kh*kw, Ho, Wo) samples of ``data`` at the offset taps times ``mask``.

    Deformable ConvNets v2's sampling: a tap inside ``(-1, H) x (-1, W)`` reads its four
    neighbours bilinearly, each neighbour outside the image counting as 0.
    """
    n, c, h, w = data.shape
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel, stride, pad, dilate
    ho, wo = offset.shape[2:]
    k = kh * kw
    off = offset.reshape(n, groups, k, 2, ho, wo)
    tap_h = (jnp.arange(kh) * dh)[:, None].repeat(kw, 1).reshape(k)
    tap_w = (jnp.arange(kw) * dw)[None, :].repeat(kh, 0).reshape(k)
    base_h = tap_h[:, None, None] + (jnp.arange(ho) * sh - ph)[None, :, None]
    base_w = tap_w[:, None, None] + (jnp.arange(wo) * sw - pw)[None, None, :]
    py = base_h.astype(data.dtype) + off[:, :, :, 0]  # (N, G, K, Ho, Wo)
    px = base_w.astype(data.dtype) + off[:, :, :, 1]
    inside = (py > -1) & (px > -1) & (py < h) & (px < w)
    y0f, x0f = jnp.floor(py), jnp.floor(px)
    ly, lx = py - y0f, px - x0f
    y0, x0 = y0f.astype(jnp.int32), x0f.astype(jnp.int32)
    zero = jnp.zeros((), data.dtype)
    flat = data.reshape(n, groups, c // groups, h * w)

    def read(yi, xi, weight):
        ok = inside & (yi >= 0) & (yi <= h - 1) & (xi >= 0) & (xi <= w - 1)
        idx = (jnp.clip(yi, 0, h - 1) * w + jnp.clip(xi, 0, w - 1)).reshape(n, groups, 1, -1)
        vals = jnp.take_along_axis(flat, idx, axis=3).reshape(n, groups, c // groups, k, ho, wo)
        return jnp.where(ok, weight, zero)[:, :, None] * vals

    cols = (
        read(y0, x0, (1 - ly) * (1 - lx))
        + read(y0, x0 + 1, (1 - ly) * lx)
        + read(y0 + 1, x0, ly * (1 - lx))
        + read(y0 + 1, x0 + 1, ly * lx)
    )
    cols = cols * mask.reshape(n, groups, 1, k, ho, wo)
    return cols.reshape(n, c, k, ho, wo)


@register(
    "_contrib_ModulatedDeformableConvolution",
    inputs=_modulated_inputs,
    attrs={
        "kernel": Attr("shape"),
        "stride": Attr("shape", ()),
        "dilate": Attr("shape", ()),
        "pad": Attr("shape", ()),
        "num_filter": Attr("int"),
        "num_group": Attr("int", 1),
        "num_deformable_group": Attr("int", 1),
        "workspace": Attr("int", 1024),
        "no_bias": Attr("bool", False),
        "im2col_step": Attr("int", 64),
        "layout": Attr("str?", None, choices=("NCW", "NCHW", "NCDHW")),
    },
    infer_args=_infer,
)
def modulated_deformable_convolution(
    data, offset, mask, weight, bias=None, *, kernel, stride, dilate, pad, num_filter,
    num_group, num_deformable_group, workspace, no_bias, im2col_step, layout,
):  # fmt: skip
    """Modulated deformable convolution (Deformable ConvNets v2) of ``data (N, C, H, W)``:
    as :func:`deformable_convolution`, with each sampled tap multiplied by ``mask (N,
    num_deformable_group * kh * kw, Ho, Wo)`` and DCNv2's sampling at the border.
    """
    stride, dilate, pad, ho, wo = _geometry(
        "ModulatedDeformableConvolution", data, kernel, stride, dilate, pad, layout
    )
    n, c = data.shape[:2]
    k, dg = kernel[0] * kernel[1], num_deformable_group
    if offset.shape != (n, 2 * dg * k, ho, wo) or mask.shape != (n, dg * k, ho, wo):
        raise ValueError(
            f"offset must have shape {(n, 2 * dg * k, ho, wo)} and mask {(n, dg * k, ho, wo)} "
            f"for data {tuple(data.shape)}, kernel {kernel} and {dg} deformable group(s), got "
            f"{tuple(offset.shape)} and {tuple(mask.shape)}"
        )
    if c % dg:
        raise ValueError(f"channels {c} must divide by num_deformable_group={dg}")
    cols = modulated_columns(data, offset, mask, kernel, stride, pad, dilate, dg)
    return _grouped_conv(cols, weight, bias, num_filter, num_group, dg, kernel)
