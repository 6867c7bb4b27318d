"""Rotated region pooling: ``contrib.RROIAlign`` (MXNet's
``src/operator/contrib/rroi_align.cc``).

Regions ``rois (R, 6)`` are ``[batch_index, center_x, center_y, width, height,
theta]`` (theta in degrees, counter-clockwise) in image coordinates, scaled by
``spatial_scale``. Every bin averages bilinear samples on a grid rotated with the
region. The number of samples per bin can depend on the region (``sampling_ratio <=
0``), so the samples are visited by one loop whose trip count is the largest grid;
each step adds one sample of every bin of every region, in MXNet's order.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp

from ..bounds import check_values
from ..registry import Attr, register


def _geometry(rois, pooled_size, spatial_scale, sampling_ratio, dtype):
    """Per-region centre, start, bin size, rotation and sample grid (all (R,))."""
    r = rois.astype(dtype)
    scale = jnp.asarray(spatial_scale, dtype)
    cx, cy, w, h = (r[:, i] * scale for i in range(1, 5))
    theta = (r[:, 5] * jnp.asarray(math.pi, dtype)) / jnp.asarray(180.0, dtype)
    one = jnp.ones((), dtype)
    w, h = jnp.maximum(w, one), jnp.maximum(h, one)
    ph, pw = pooled_size
    bin_h, bin_w = h / ph, w / pw
    if sampling_ratio > 0:
        gh = gw = jnp.full(r.shape[0], sampling_ratio, jnp.int32)
    else:
        gh = jnp.ceil(h / ph).astype(jnp.int32)
        gw = jnp.ceil(w / pw).astype(jnp.int32)
    return {
        "cx": cx, "cy": cy, "start_h": -h / 2, "start_w": -w / 2,
        "bin_h": bin_h, "bin_w": bin_w, "cos": jnp.cos(theta), "sin": jnp.sin(theta),
        "gh": gh, "gw": gw, "gw_max": jnp.max(gw), "n": jnp.max(gh) * jnp.max(gw),
    }  # fmt: skip


def _taps(g, k, pooled_size, height, width):
    """Sample ``k`` (row-major over the largest grid) of every bin: flat pixel indices
    ``(4, R, PH, PW)`` and bilinear weights (zero outside the map or the region's own
    grid)."""
    dtype = g["cx"].dtype
    iy, ix = k // g["gw_max"], k % g["gw_max"]
    live = ((iy < g["gh"]) & (ix < g["gw"]))[:, None, None]
    ph, pw = pooled_size
    p = jnp.arange(ph, dtype=dtype)[None, :, None]
    q = jnp.arange(pw, dtype=dtype)[None, None, :]
    col = lambda v: v[:, None, None]  # noqa: E731
    half = jnp.asarray(0.5, dtype)
    yy = (col(g["start_h"]) + p * col(g["bin_h"])) + (
        (iy.astype(dtype) + half) * col(g["bin_h"])
    ) / col(g["gh"].astype(dtype))
    xx = (col(g["start_w"]) + q * col(g["bin_w"])) + (
        (ix.astype(dtype) + half) * col(g["bin_w"])
    ) / col(g["gw"].astype(dtype))
    c, s = col(g["cos"]), col(g["sin"])
    x = (xx * c + yy * s) + col(g["cx"])
    y = (yy * c - xx * s) + col(g["cy"])
    live = live & ~((y < -1.0) | (y > height) | (x < -1.0) | (x > width))
    y, x = jnp.maximum(y, 0), jnp.maximum(x, 0)
    y_low, x_low = y.astype(jnp.int32), x.astype(jnp.int32)
    y_edge, x_edge = y_low >= height - 1, x_low >= width - 1
    y_low = jnp.where(y_edge, height - 1, y_low)
    x_low = jnp.where(x_edge, width - 1, x_low)
    y_high = jnp.where(y_edge, height - 1, y_low + 1)
    x_high = jnp.where(x_edge, width - 1, x_low + 1)
    ly = jnp.where(y_edge, jnp.zeros((), dtype), y - y_low.astype(dtype))
    lx = jnp.where(x_edge, jnp.zeros((), dtype), x - x_low.astype(dtype))
    hy, hx = 1 - ly, 1 - lx
    zero = jnp.zeros((), dtype)
    weights = [jnp.where(live, wt, zero) for wt in (hy * hx, hy * lx, ly * hx, ly * lx)]
    pos = [y_low * width + x_low, y_low * width + x_high,
           y_high * width + x_low, y_high * width + x_high]  # fmt: skip
    return pos, weights


def _loop(g, body, init):
    return jax.lax.while_loop(
        lambda st: st[0] < g["n"], lambda st: (st[0] + 1, body(st[0], st[1])), (0, init)
    )[1]


def _forward(data, b, g, pooled_size):
    nb, c, h, w = data.shape
    flat = data.transpose(0, 2, 3, 1).reshape(nb, h * w, c)
    bi = b[:, None, None]

    def body(k, acc):
        pos, wts = _taps(g, k, pooled_size, h, w)
        val = wts[0][..., None] * flat[bi, pos[0]]
        for wt, ps in zip(wts[1:], pos[1:]):
            val = val + wt[..., None] * flat[bi, ps]
        return acc + val

    acc = jnp.zeros((b.shape[0], *pooled_size, c), data.dtype)
    count = (g["gh"] * g["gw"]).astype(data.dtype)[:, None, None, None]
    return (_loop(g, body, acc) / count).transpose(0, 3, 1, 2)


def _backward(shape, b, g, pooled_size, head):
    nb, c, h, w = shape
    count = (g["gh"] * g["gw"]).astype(head.dtype)[:, None, None, None]
    gout = (head / count.transpose(0, 3, 1, 2)).transpose(0, 2, 3, 1)  # (R, PH, PW, C)
    bi = b[:, None, None]

    def body(k, acc):
        pos, wts = _taps(g, k, pooled_size, h, w)
        for wt, ps in zip(wts, pos):
            acc = acc.at[bi, ps].add(wt[..., None] * gout)
        return acc

    acc = _loop(g, body, jnp.zeros((nb, h * w, c), head.dtype))
    return acc.reshape(nb, h, w, c).transpose(0, 3, 1, 2)


def _check(a, arrays):
    data, rois = arrays
    if rois.ndim == 2 and rois.shape[1] == 6 and data.ndim == 4:
        check_values(rois[:, 0], 0, data.shape[0], 0, data.shape, "RROIAlign batch index")


@register(
    "_contrib_RROIAlign",
    inputs=("data", "rois"),
    attrs={
        "pooled_size": Attr("shape"),
        "spatial_scale": Attr("float"),
        "sampling_ratio": Attr("int", -1),
    },
    check=_check,
)
def rroi_align(data, rois, *, pooled_size, spatial_scale, sampling_ratio):
    """Rotated ROI align: output ``(R, C, ph, pw)``, the average of bilinear samples
    in each bin of every rotated region.

    Each bin takes ``sampling_ratio x sampling_ratio`` samples (``sampling_ratio <=
    0``: ``ceil(region size / pooled size)`` per axis, per region); regions smaller
    than a pixel count as 1x1; samples more than a pixel outside the map count as 0.
    The gradient reaches ``data`` (MXNet 1.9.1 has no backward for this op); ``rois``
    get none. In eager mode a batch index outside the batch raises ``IndexError``.
    """
    if data.ndim != 4:
        raise ValueError(f"data must be 4-D (B, C, H, W), got {tuple(data.shape)}")
    if rois.ndim != 2 or rois.shape[1] != 6:
        raise ValueError(f"rois must be (R, 6) [batch, x, y, w, h, theta], got {rois.shape}")
    if len(pooled_size) != 2 or min(pooled_size) < 1:
        raise ValueError(f"pooled_size must be (height, width) > 0, got {pooled_size}")
    if not 0.0 <= spatial_scale <= 1.0:
        raise ValueError(f"spatial_scale must be in [0, 1], got {spatial_scale}")
    nb = data.shape[0]

    def setup(r):
        b = jnp.clip(r[:, 0].astype(jnp.int32), 0, nb - 1)
        return b, _geometry(r, pooled_size, spatial_scale, sampling_ratio, data.dtype)

    @jax.custom_vjp
    def pool(x, r):
        return _forward(x, *setup(r), pooled_size)

    def fwd(x, r):
        return pool(x, r), r

    def bwd(r, head):
        return _backward(data.shape, *setup(r), pooled_size, head), jnp.zeros_like(r)

    pool.defvjp(fwd, bwd)
    return pool(data, jax.lax.stop_gradient(rois))
