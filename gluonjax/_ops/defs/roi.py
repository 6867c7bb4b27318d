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


def _onehot_weights(low, high, w_low, w_high, size):
    """Sum over the last axis of samples of their interpolation weights, one-hot on
    ``size`` positions: (R, n_bins, G) taps -> (R, n_bins, size)."""
    col = jnp.arange(size)
    return (
        w_low[..., None] * (low[..., None] == col) + w_high[..., None] * (high[..., None] == col)
    ).sum(axis=2)


def _static_weights(start, bin_size, n_bins, g, size):
    """(R, n_bins, size) averaging weights of ``g`` samples per bin."""
    grid = jnp.asarray(g, start.dtype)
    taps = _samples(start, bin_size, n_bins, jnp.arange(g), grid, size)
    return _onehot_weights(*taps, size) / g


def _axis_weights(start, bin_size, n_bins, grid, size):
    """(R, n_bins, size) averaging weights of ``grid`` (per region) samples per bin."""
    gmax = jnp.max(grid)
    gridf = grid.astype(start.dtype)[:, None, None]

    def body(state):
        i, acc = state
        low, high, wl, wh = _samples(start, bin_size, n_bins, i, gridf, size)
        live = (i < grid)[:, None, None]
        wl, wh = jnp.where(live, wl, 0), jnp.where(live, wh, 0)
        return i + 1, acc + _onehot_weights(low, high, wl, wh, size)

    init = (jnp.zeros((), jnp.int32), jnp.zeros((start.shape[0], n_bins, size), start.dtype))
    acc = jax.lax.while_loop(lambda s: s[0] < gmax, body, init)[1]
    return acc / jnp.maximum(gridf, 1)


def _pool_by_weights(data, b, wy, wx):
    """out[r, c, p, q] = sum_hw wy[r, p, h] * data[b_r, c, h, w] * wx[r, q, w], as
    matmuls (one per image of the batch, each over the regions of that image)."""
    out = 0
    for i in range(data.shape[0]):
        mine = (b == i).astype(data.dtype)[:, None, None]
        rows = jnp.einsum("rph,chw->rpcw", wy * mine, data[i])  # two explicit matmuls
        out = out + jnp.einsum("rpcw,rqw->rcpq", rows, wx)
    return out


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
    h, w = data.shape[2:]
    if sample_ratio > 0:
        wy = _static_weights(y0, bh, ph, sample_ratio, h)
        wx = _static_weights(x0, bw, pw, sample_ratio, w)
    else:
        wy = _axis_weights(y0, bh, ph, jnp.ceil(rh / ph).astype(jnp.int32), h)
        wx = _axis_weights(x0, bw, pw, jnp.ceil(rw / pw).astype(jnp.int32), w)
    out = _pool_by_weights(data, b, wy, wx)
    if position_sensitive:
        c = data.shape[1]
        if c % (ph * pw):
            raise ValueError(f"position_sensitive needs channels {c} divisible by {ph * pw}")
        full = out.reshape(out.shape[0], c // (ph * pw), ph * pw, ph * pw)
        out = jnp.diagonal(full, axis1=2, axis2=3).reshape(out.shape[0], -1, ph, pw)
    return out


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


def _first_max(va, ia, vb, ib):
    """Elementwise (value, index) of the larger value; a tie keeps the smaller index."""
    take_a = (va > vb) | ((va == vb) & (ia <= ib))
    return jnp.where(take_a, va, vb), jnp.where(take_a, ia, ib)


def _range_max_table(vals, idx, axis):
    """Sparse table along ``axis``: level k holds, at position i, the maximum of
    ``vals`` over ``[i, i + 2**k)`` (-inf past the end) and its first ``idx``.
    Returns arrays with a new leading levels axis."""
    size = vals.shape[axis]
    neg = jnp.asarray(-jnp.inf, vals.dtype)
    out_v, out_i = [vals], [idx]
    step = 1
    while 2 * step <= size:
        pad = [(0, 0)] * vals.ndim
        pad[axis] = (0, step)
        tail = [slice(None)] * vals.ndim
        tail[axis] = slice(step, None)
        v_next = jnp.pad(out_v[-1][tuple(tail)], pad, constant_values=neg)
        i_next = jnp.pad(out_i[-1][tuple(tail)], pad, constant_values=jnp.iinfo(jnp.int32).max)
        v, i = _first_max(out_v[-1], out_i[-1], v_next, i_next)
        out_v.append(v)
        out_i.append(i)
        step *= 2
    return jnp.stack(out_v), jnp.stack(out_i)


def _log_level(lo, hi, levels):
    lvl = jnp.floor(jnp.log2(jnp.maximum(hi - lo, 1).astype(jnp.float32))).astype(jnp.int32)
    return jnp.minimum(lvl, levels - 1)


def _first_argmax(x, bi, hs, he, ws, we):
    """Row-major index of the first maximum of every bin ``[hs, he) x [ws, we)``:
    each bin's column range from two lookups in a range-maximum table, then one pass
    over the rows."""
    h, w = x.shape[2:]
    xt = x.transpose(0, 3, 2, 1)  # (B, W, H, C): a lookup reads whole (H, C) planes
    cols = jnp.broadcast_to(jnp.arange(w, dtype=jnp.int32)[:, None, None], xt.shape)
    tv, ti = _range_max_table(xt, cols, axis=1)  # (Lw, B, W, H, C)
    lw = _log_level(ws, we, tv.shape[0])
    at = (lw, bi[:, None])
    a, b = jnp.clip(ws, 0, w - 1), jnp.clip(we - (1 << lw), 0, w - 1)
    colmax, colarg = _first_max(tv[(*at, a)], ti[(*at, a)], tv[(*at, b)], ti[(*at, b)])
    # rows: one pass over the image rows keeps each bin's first maximum (a strict >)

    def body(r, state):
        best, harg, warg = state
        inside = ((r >= hs) & (r < he))[:, :, None, None]  # (R, PH, 1, 1)
        v = jax.lax.dynamic_index_in_dim(colmax, r, axis=2, keepdims=False)[:, None]
        i = jax.lax.dynamic_index_in_dim(colarg, r, axis=2, keepdims=False)[:, None]
        better = inside & (v > best)
        return jnp.where(better, v, best), jnp.where(better, r, harg), jnp.where(better, i, warg)

    shape = (hs.shape[0], hs.shape[1], ws.shape[1], x.shape[1])  # (R, PH, PW, C)
    init = (
        jnp.full(shape, -jnp.inf, x.dtype),
        jnp.broadcast_to(jnp.clip(hs, 0, h - 1)[:, :, None, None], shape),
        jnp.zeros(shape, jnp.int32),
    )
    lo, hi = jnp.clip(jnp.min(hs), 0, h), jnp.clip(jnp.max(he), 0, h)
    _, harg, warg = jax.lax.fori_loop(lo, hi, body, init)
    return (harg * w + warg).transpose(0, 3, 1, 2)


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

    Column ranges are answered by a range-maximum table of the image (two lookups per
    bin, whatever its width), rows by one pass over the image rows.
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
    flat = _first_argmax(jax.lax.stop_gradient(data), bi, hs, he, ws, we)  # (R, C, PH, PW)
    live = ok_b[:, None, None, None] & ((he > hs)[:, None, :, None] & (we > ws)[:, None, None, :])
    vals = data.reshape(nb, c, h * w)
    out = vals[bi[:, None, None], jnp.arange(c)[None, :, None], flat.reshape(-1, c, ph * pw)]
    out = jnp.where(live, out.reshape(flat.shape), jnp.zeros((), data.dtype))
    chan = (bi[:, None] * c + jnp.arange(c)[None])[:, :, None, None] * (h * w)
    maxidx = jnp.where(live, chan + flat, -1).astype(data.dtype)
    return out, maxidx
