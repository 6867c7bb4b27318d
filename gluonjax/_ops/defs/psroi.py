"""Position-sensitive region pooling: contrib.PSROIPooling (R-FCN).

Every region ``[batch_index, x1, y1, x2, y2]`` of ``rois (R, 5)`` (corners rounded to
whole image pixels, then scaled by ``spatial_scale``) is split into
``pooled_size x pooled_size`` bins; bin ``(i, j)`` of output channel ``d`` is the
mean of input channel ``(d * group_size + gi) * group_size + gj`` over the bin's
pixels, ``(gi, gj)`` the bin's cell in a ``group_size x group_size`` grid. Windows
are computed with array ops (no per-region Python loop); the gradient reaches
``data`` only (``rois`` get zeros, as in MXNet).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ..registry import Attr, register
from .roi import _pool_by_weights, _round_half_away


def _bin_weights(start, size, n_bins, limit):
    """(R, n_bins, limit) 0/1 membership of each pixel in each bin window, and the
    window sizes (R, n_bins), in MXNet's floor/ceil rule (clipped to the image)."""
    dtype = start.dtype
    step = size / jnp.asarray(n_bins, dtype)
    p = jnp.arange(n_bins, dtype=dtype)[None, :]
    lo = jnp.floor(p * step[:, None] + start[:, None]).astype(jnp.int32)
    hi = jnp.ceil((p + 1) * step[:, None] + start[:, None]).astype(jnp.int32)
    lo, hi = jnp.clip(lo, 0, limit), jnp.clip(hi, 0, limit)
    pix = jnp.arange(limit)[None, None, :]
    inside = (pix >= lo[..., None]) & (pix < hi[..., None])
    return inside, hi - lo


@register(
    "_contrib_PSROIPooling",
    inputs=("data", "rois"),
    attrs={
        "spatial_scale": Attr("float"),
        "output_dim": Attr("int"),
        "pooled_size": Attr("int"),
        "group_size": Attr("int", 0),
    },
)
def psroi_pooling(data, rois, *, spatial_scale, output_dim, pooled_size, group_size):
    """Position-sensitive average pooling of regions: output
    ``(R, output_dim, pooled_size, pooled_size)``.

    ``data (B, C, H, W)`` needs ``C >= output_dim * group_size**2`` channels
    (``group_size=0`` means ``pooled_size``). Regions narrower than 0.1 feature pixel
    count as 0.1 wide; empty bins give 0; a region whose batch index is not an image
    of ``data`` gives zeros.

    Examples
    --------
    >>> import gluonjax as mx
    >>> x = mx.nd.arange(16).reshape((1, 4, 2, 2))  # channel k holds 4k..4k+3
    >>> rois = mx.nd.array([[0, 0, 0, 1, 1]])
    >>> y = mx.nd.contrib.PSROIPooling(x, rois, spatial_scale=1.0, output_dim=1, pooled_size=2)
    >>> y.asnumpy().tolist()  # bin (i, j) reads pixel (i, j) of channel 2 i + j
    [[[[0.0, 5.0], [10.0, 15.0]]]]
    """
    if data.ndim != 4:
        raise ValueError(f"data must be 4-D (B, C, H, W), got {tuple(data.shape)}")
    if rois.ndim != 2 or rois.shape[1] != 5:
        raise ValueError(f"rois must be (R, 5) [batch, x1, y1, x2, y2], got {tuple(rois.shape)}")
    if pooled_size < 1 or output_dim < 1 or group_size < 0:
        raise ValueError(
            f"pooled_size and output_dim must be positive and group_size >= 0, got "
            f"pooled_size={pooled_size}, output_dim={output_dim}, group_size={group_size}"
        )
    g = group_size or pooled_size
    nb, c, h, w = data.shape
    if c < output_dim * g * g:
        raise ValueError(
            f"data has {c} channels but output_dim * group_size**2 = {output_dim}*{g}*{g} = "
            f"{output_dim * g * g} are read; make the channels at least that many"
        )
    r = jax.lax.stop_gradient(rois).astype(data.dtype)
    b = r[:, 0].astype(jnp.int32)
    scale = jnp.asarray(np.float32(spatial_scale), data.dtype)  # MXNet keeps a float32
    corner = _round_half_away(r[:, 1:])  # C's round
    x0, y0 = corner[:, 0] * scale, corner[:, 1] * scale
    x1, y1 = (corner[:, 2] + 1) * scale, (corner[:, 3] + 1) * scale
    tenth = jnp.asarray(0.1, data.dtype)
    wy, ny = _bin_weights(y0, jnp.maximum(y1 - y0, tenth), pooled_size, h)
    wx, nx = _bin_weights(x0, jnp.maximum(x1 - x0, tenth), pooled_size, w)
    # the pooled sums of every channel, then each output bin's own channel
    sums = _pool_by_weights(data, b, wy.astype(data.dtype), wx.astype(data.dtype))
    cell = np.clip(np.arange(pooled_size) * g // pooled_size, 0, g - 1)
    d = np.arange(output_dim)[:, None, None]
    chan = (d * g + cell[None, :, None]) * g + cell[None, None, :]  # (D, P, P)
    pi = np.arange(pooled_size)
    picked = sums[:, chan, pi[None, :, None], pi[None, None, :]]  # (R, D, P, P)
    area = (ny[:, :, None] * nx[:, None, :])[:, None]  # (R, 1, P, P)
    empty = area <= 0
    safe = jnp.where(empty, 1, area).astype(data.dtype)
    return jnp.where(empty, jnp.zeros((), data.dtype), picked / safe)
