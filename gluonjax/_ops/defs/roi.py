"""Region pooling: contrib.ROIAlign and ROIPooling.

Both read ``data (B, C, H, W)`` inside regions ``rois (R, 5)`` given as
``[batch_index, x1, y1, x2, y2]`` in image coordinates (multiplied by
``spatial_scale``). Regions are data, so every sampling position and window is
computed with array ops (no per-region Python loop); the gradient reaches
``data`` only (``rois`` get zeros, as in MXNet).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ..registry import Attr, register


def _split_rois(rois, op):
    if rois.ndim != 2 or rois.shape[1] not in (4, 5):
        raise ValueError(f"{op}: rois must be (R, 5) [batch, x1, y1, x2, y2], got {rois.shape}")
    r = jax.lax.stop_gradient(rois)
    if r.shape[1] == 4:
        return jnp.zeros(r.shape[0], jnp.int32), r
    return r[:, 0].astype(jnp.int32), r[:, 1:]


def _check_data(data, pooled_size, op):
    if data.ndim != 4:
        raise ValueError(f"{op}: data must be 4-D (B, C, H, W), got {tuple(data.shape)}")
    if len(pooled_size) != 2 or min(pooled_size) < 1:
        raise ValueError(f"{op}: pooled_size must be (height, width) > 0, got {pooled_size}")


# ----------------------------------------------------------------------------- ROIAlign
def _samples(start, bin_size, n_bins, index, grid, size):
    """Sample positions ``(R, n_bins, G)`` along one axis for grid indices ``index``
    and their linear-interpolation taps: (low, high, w_low, w_high)."""
    dtype = start.dtype
    p = jnp.arange(n_bins, dtype=dtype)[None, :, None]
    i = jnp.asarray(index, dtype)[None, None, :] if jnp.ndim(index) else index
    b = bin_size[:, None, None]
    pos = (start[:, None, None] + p * b) + ((i + 0.5) * b) / grid
    keep = ~((pos < -1.0) | (pos > size))
    pos = jnp.maximum(pos, 0.0)
    low = pos.astype(jnp.int32)
    edge = low >= size - 1
    low = jnp.where(edge, size - 1, low)
    high = jnp.where(edge, size - 1, low + 1)
    frac = jnp.where(edge, jnp.zeros((), dtype), pos - low.astype(dtype))
    zero = jnp.zeros((), dtype)
    return low, high, jnp.where(keep, 1 - frac, zero), jnp.where(keep, frac, zero)


def _align_static(data, b, y0, x0, bh, bw, ph, pw, g):
    """Fixed ``g x g`` samples per bin: gather rows, then columns (separably)."""
    nr = b.shape[0]
    c = data.shape[1]
    grid = jnp.asarray(g, data.dtype)
    yl, yh, wyl, wyh = _samples(y0, bh, ph, jnp.arange(g), grid, data.shape[2])
    xl, xh, wxl, wxh = _samples(x0, bw, pw, jnp.arange(g), grid, data.shape[3])
    yl, yh, wyl, wyh = (a.reshape(nr, ph * g) for a in (yl, yh, wyl, wyh))
    xl, xh, wxl, wxh = (a.reshape(nr, 1, 1, pw * g) for a in (xl, xh, wxl, wxh))
    rows = (
        wyl[:, :, None, None] * data[b[:, None], :, yl]
        + wyh[:, :, None, None] * data[b[:, None], :, yh]
    )  # (R, PH*G, C, W)
    vals = wxl * jnp.take_along_axis(rows, jnp.broadcast_to(xl, rows.shape[:3] + xl.shape[3:]), 3)
    vals = vals + wxh * jnp.take_along_axis(
        rows, jnp.broadcast_to(xh, rows.shape[:3] + xh.shape[3:]), 3
    )  # (R, PH*G, C, PW*G)
    vals = vals.reshape(nr, ph, g, c, pw, g).sum(axis=(2, 5)) / (g * g)
    return vals.transpose(0, 2, 1, 3)  # (R, C, PH, PW)


def _axis_weights(start, bin_size, n_bins, grid, size):
    """(R, n_bins, size) averaging weights of ``grid`` (per region) samples per bin."""
    col = jnp.arange(size)
    gmax = jnp.max(grid)
    gridf = grid.astype(start.dtype)[:, None, None]

    def body(state):
        i, acc = state
        low, high, wl, wh = _samples(start, bin_size, n_bins, i, gridf, size)
        live = (i < grid)[:, None, None]
        wl, wh = jnp.where(live, wl, 0), jnp.where(live, wh, 0)
        acc = acc + wl * (col == low) + wh * (col == high)
        return i + 1, acc

    init = (jnp.zeros((), jnp.int32), jnp.zeros((start.shape[0], n_bins, size), start.dtype))
    acc = jax.lax.while_loop(lambda s: s[0] < gmax, body, init)[1]
    return acc / jnp.maximum(gridf, 1)


def _align_adaptive(data, b, y0, x0, bh, bw, rh, rw, ph, pw):
    """Per-region ``ceil(size / pooled)`` samples per bin, as weight matrices."""
    gh = jnp.ceil(rh / ph).astype(jnp.int32)
    gw = jnp.ceil(rw / pw).astype(jnp.int32)
    wy = _axis_weights(y0, bh, ph, gh, data.shape[2])
    wx = _axis_weights(x0, bw, pw, gw, data.shape[3])
    t = jnp.einsum("rph,nchw->rncpw", wy, data)
    t = jnp.take_along_axis(t, b[:, None, None, None, None], axis=1)[:, 0]
    return jnp.einsum("rcpw,rqw->rcpq", t, wx)


@register(
    "_contrib_ROIAlign",
    inputs=("data", "rois"),
    attrs={
        "pooled_size": Attr("shape"),
        "spatial_scale": Attr("float"),
        "sample_ratio": Attr("int", -1),
        "position_sensitive": Attr("bool", False),
        "aligned": Attr("bool", False),
    },
)
def roi_align(data, rois, *, pooled_size, spatial_scale, sample_ratio, position_sensitive, aligned):
    """Average of bilinear samples in each of ``pooled_size`` bins of every region:
    output ``(R, C, ph, pw)``.

    Each bin takes ``sample_ratio x sample_ratio`` samples (``sample_ratio <= 0``:
    ``ceil(region size / pooled size)`` per axis, per region). ``aligned`` shifts the
    region by -0.5 pixel (Detectron2); otherwise regions smaller than a pixel count
    as 1x1. Samples more than a pixel outside the map count as 0.
    ``position_sensitive``: output channel ``c`` of bin (i, j) reads input channel
    ``(c * ph + i) * pw + j`` (R-FCN), so C must be a multiple of ph * pw. A region
    with a negative batch index gives zeros.
    """
    _check_data(data, pooled_size, "ROIAlign")
    ph, pw = pooled_size
    b, box = _split_rois(rois, "ROIAlign")
    box = box.astype(data.dtype)
    off = 0.5 if aligned else 0.0
    x0, y0, x1, y1 = (box[:, i] * spatial_scale - off for i in range(4))
    rw, rh = x1 - x0, y1 - y0
    if not aligned:
        rw, rh = jnp.maximum(rw, 1.0), jnp.maximum(rh, 1.0)
    bh, bw = rh / ph, rw / pw
    bi = jnp.clip(b, 0, data.shape[0] - 1)
    if sample_ratio > 0:
        out = _align_static(data, bi, y0, x0, bh, bw, ph, pw, sample_ratio)
    else:
        out = _align_adaptive(data, bi, y0, x0, bh, bw, rh, rw, ph, pw)
    if position_sensitive:
        c = data.shape[1]
        if c % (ph * pw):
            raise ValueError(f"position_sensitive needs channels {c} divisible by {ph * pw}")
        full = out.reshape(out.shape[0], c // (ph * pw), ph * pw, ph * pw)
        out = jnp.diagonal(full, axis1=2, axis2=3).reshape(out.shape[0], -1, ph, pw)
    return jnp.where((b >= 0)[:, None, None, None], out, jnp.zeros((), out.dtype))


# ----------------------------------------------------------------------------- ROIPooling
def _round_half_away(x):
    return jnp.sign(x) * jnp.floor(jnp.abs(x) + 0.5)


def _windows(start, size, n_bins, limit):
    """Per-region bin windows [lo, hi) along one axis: (R, n_bins) each."""
    bin_size = size.astype(jnp.float32) / n_bins
    p = jnp.arange(n_bins, dtype=jnp.float32)[None]
    lo = jnp.floor(p * bin_size[:, None]).astype(jnp.int32) + start[:, None]
    hi = jnp.ceil((p + 1) * bin_size[:, None]).astype(jnp.int32) + start[:, None]
    return jnp.clip(lo, 0, limit), jnp.clip(hi, 0, limit)


@register(
    "ROIPooling",
    inputs=("data", "rois"),
    attrs={"pooled_size": Attr("shape"), "spatial_scale": Attr("float")},
    num_outputs=2,
    visible_outputs=1,
    output_names=("output", "maxidx"),
)
def roi_pooling(data, rois, *, pooled_size, spatial_scale):
    """Max over each of ``pooled_size`` bins of every region (coordinates rounded to
    whole pixels): output ``(R, C, ph, pw)``. Empty bins and regions with an invalid
    batch index give 0. A tie sends the gradient to the first maximum in row-major
    order, as MXNet. (The hidden second output is the flat index of the maximum, -1
    for empty bins.)
    """
    _check_data(data, pooled_size, "ROIPooling")
    ph, pw = pooled_size
    nb, c, h, w = data.shape
    b, box = _split_rois(rois, "ROIPooling")
    x0, y0, x1, y1 = (_round_half_away(box[:, i] * spatial_scale).astype(jnp.int32)
                      for i in range(4))  # fmt: skip
    hs, he = _windows(y0, jnp.maximum(y1 - y0 + 1, 1), ph, h)
    ws, we = _windows(x0, jnp.maximum(x1 - x0 + 1, 1), pw, w)
    ok_b = (b >= 0) & (b < nb)
    bi = jnp.clip(b, 0, nb - 1)
    xs = jax.lax.stop_gradient(data)[bi]  # (R, C, H, W)
    neg = jnp.asarray(-jnp.inf, data.dtype)
    col = jnp.arange(w)
    in_w = (col >= ws[..., None]) & (col < we[..., None])  # (R, PW, W)
    masked = jnp.where(in_w[:, None, None], xs[:, :, :, None, :], neg)  # (R, C, H, PW, W)
    wmax, warg = masked.max(-1), jnp.argmax(masked, axis=-1)  # (R, C, H, PW)
    row = jnp.arange(h)
    in_h = (row >= hs[..., None]) & (row < he[..., None])  # (R, PH, H)
    masked = jnp.where(in_h[:, None, :, :, None], wmax[:, :, None], neg)  # (R, C, PH, H, PW)
    harg = jnp.argmax(masked, axis=3)  # (R, C, PH, PW)
    wsel = jnp.take_along_axis(warg[:, :, None], harg[:, :, :, None], axis=3)[:, :, :, 0]
    flat = harg * w + wsel
    live = ok_b[:, None, None, None] & ((he > hs)[:, None, :, None] & (we > ws)[:, None, None, :])
    vals = data.reshape(nb, c, h * w)
    out = vals[bi[:, None, None], jnp.arange(c)[None, :, None], flat.reshape(-1, c, ph * pw)]
    out = out.reshape(flat.shape)
    out = jnp.where(live, out, jnp.zeros((), data.dtype))
    chan = (bi[:, None] * c + jnp.arange(c)[None])[:, :, None, None] * (h * w)
    maxidx = jnp.where(live, chan + flat, -1).astype(data.dtype)
    return out, maxidx
