"""The image ops' arithmetic, written once for numpy and jax.numpy (``xp``).

These are MXNet 1.9.1's image operators (``src/operator/image``) as array
functions: the registry ops ``_image_*`` (``gluonjax/_ops/defs/image.py``) call them
with ``jax.numpy``, the host transforms and data-loader workers with ``numpy``.
Images are HWC (or NHWC), tensors CHW (or NCHW). Float arithmetic is float32 in
MXNet's order, and a float result stored into uint8 is clipped to [0, 255] and
truncated (MXNet's ``saturate_cast``).

One deliberate difference: MXNet's ``_image_random_saturation`` (and the
saturation step of ``_image_random_color_jitter``) computes its gray level from
the blue channel alone (``gray = x*coef`` where ``gray += x*coef`` was meant); here
the gray level is the full luma ``0.299 R + 0.587 G + 0.114 B``, as MXNet's own
``mx.image.SaturationJitterAug`` and every other library computes it
(``tests/data/test_image_ops.py`` shows both).
"""

from __future__ import annotations

import numpy as np

from ..base import InvalidArgumentError

_F32 = np.float32
_GRAY = (_F32(0.299), _F32(0.587), _F32(0.114))
# AlexNet's PCA lighting: eigenvalue * eigenvector, computed in double, stored as float
_EIG = np.array(
    [
        [55.46 * -0.5675, 4.794 * 0.7192, 1.148 * 0.4009],
        [55.46 * -0.5808, 4.794 * -0.0045, 1.148 * -0.8140],
        [55.46 * -0.5836, 4.794 * -0.6948, 1.148 * 0.4203],
    ],
    dtype=np.float32,
)
# OpenCV's HLS -> RGB sector table: indices into (p2, p1, rising, falling) for b, g, r
_HLS_SECTORS = np.array(
    [[1, 3, 0], [1, 0, 2], [3, 0, 1], [0, 2, 1], [0, 1, 3], [2, 1, 0]], dtype=np.int32
)


def _f(xp, value):
    """A float32 scalar (a traced one under jax)."""
    return xp.asarray(value, dtype=_F32)


def saturate(xp, val, dtype):
    """Store float32 ``val`` as ``dtype`` the way MXNet does (uint8: clip, truncate)."""
    dtype = np.dtype(dtype)
    if dtype == np.uint8:
        return xp.clip(val, _F32(0), _F32(255)).astype(np.uint8)
    return val.astype(dtype)


def to_tensor(xp, data):
    """HWC (or NHWC) values in [0, 255] -> float32 CHW (NCHW) in [0, 1]."""
    if xp is np:  # the same values, in one float pass over contiguous memory
        chw = np.ascontiguousarray(np.moveaxis(data, -1, -3))
        return np.divide(chw, _F32(255.0), dtype=_F32)
    out = data.astype(_F32) / _F32(255.0)
    return xp.moveaxis(out, -1, -3)


def _per_channel(values, n):
    values = [float(v) for v in np.atleast_1d(np.asarray(values, dtype=np.float64))]
    if len(values) == 1:
        values = values * n
    return np.asarray(values[:n], dtype=_F32)


def normalize(xp, data, mean, std):
    """``(data - mean[c]) / std[c]`` per channel of a CHW or NCHW tensor."""
    c = data.shape[-3]
    m = _per_channel(mean, c).reshape(c, 1, 1)
    s = _per_channel(std, c).reshape(c, 1, 1)
    if xp is np:  # the same values without the temporary copies
        out = np.subtract(data, m, dtype=_F32)
        np.divide(out, s, out=out)
        return out if data.dtype == _F32 else out.astype(data.dtype)
    out = (data.astype(_F32) - m) / s
    return out.astype(data.dtype)


def flip_left_right(xp, data):
    return xp.flip(data, axis=-2)


def flip_top_bottom(xp, data):
    return xp.flip(data, axis=-3)


def crop(xp, data, x, y, width, height):
    """``data[y:y+height, x:x+width]`` of an HWC or NHWC image."""
    return data[..., y : y + height, x : x + width, :]


def adjust_brightness(xp, data, alpha):
    return saturate(xp, data.astype(_F32) * _f(xp, alpha), data.dtype)


def _seq_sum(xp, v):
    """float32 sum; numpy adds in order, as MXNet's loop does (jax: tree order)."""
    if xp is np:
        return np.cumsum(v.ravel(), dtype=_F32)[-1] if v.size else _F32(0)
    return xp.sum(v, dtype=_F32)


def adjust_contrast(xp, data, alpha):
    """Blend an HWC image with its mean gray level: ``x*alpha + (1-alpha)*mean_gray``."""
    h, w, c = data.shape
    x = data.astype(_F32)
    if c > 1:
        coef = np.asarray(_GRAY, dtype=_F32)
        total = _seq_sum(xp, x[..., :3] * coef)
    else:
        total = _seq_sum(xp, x)
    gray_mean = total / _F32(h * w)
    beta = (_F32(1) - _f(xp, alpha)) * gray_mean
    return saturate(xp, x * _f(xp, alpha) + beta, data.dtype)


def adjust_saturation(xp, data, alpha):
    """Blend each pixel with its luma: ``x*alpha + (1-alpha)*gray`` (see module doc)."""
    if data.shape[-1] == 1:
        return data
    x = data.astype(_F32)
    gray = x[..., 0:1] * _GRAY[0] + x[..., 1:2] * _GRAY[1] + x[..., 2:3] * _GRAY[2]
    gray = gray * (_F32(1) - _f(xp, alpha))
    return saturate(xp, gray + x * _f(xp, alpha), data.dtype)


def _rgb_to_hls(xp, r, g, b):
    r, g, b = r / _F32(255), g / _F32(255), b / _F32(255)
    vmax = xp.maximum(xp.maximum(r, g), b)
    vmin = xp.minimum(xp.minimum(r, g), b)
    diff = vmax - vmin
    light = (vmax + vmin) * _F32(0.5)
    has = diff > _F32(np.finfo(np.float32).eps)
    safe = xp.where(has, diff, _F32(1))
    lo = xp.where(has & (light < 0.5), vmax + vmin, _F32(1))
    hi = xp.where(has & (light >= 0.5), _F32(2) - vmax - vmin, _F32(1))
    sat = xp.where(light < 0.5, safe / lo, safe / hi)
    d = _F32(60) / safe
    hue = xp.where(
        vmax == r,
        (g - b) * d,
        xp.where(vmax == g, (b - r) * d + _F32(120), (r - g) * d + _F32(240)),
    )
    hue = xp.where(hue < 0, hue + _F32(360), hue)
    zero = _F32(0)
    return xp.where(has, hue, zero), light, xp.where(has, sat, zero)


def _hls_to_rgb(xp, hue, light, sat):
    p2 = xp.where(light <= 0.5, light * (_F32(1) + sat), light + sat - light * sat)
    p1 = _F32(2) * light - p2
    h = hue * _F32(1.0 / 60.0)
    for _ in range(8):  # MXNet wraps with repeated +-6, not fmod
        h = xp.where(h < 0, h + _F32(6), h)
    for _ in range(8):
        h = xp.where(h >= 6, h - _F32(6), h)
    sector = xp.clip(h.astype(np.int32), 0, 5)
    h = h - sector.astype(_F32)
    tab = xp.stack([p2, p1, p1 + (p2 - p1) * (_F32(1) - h), p1 + (p2 - p1) * h], axis=-1)
    idx = xp.asarray(_HLS_SECTORS)[sector]
    b = xp.take_along_axis(tab, idx[..., 0:1], axis=-1)[..., 0]
    g = xp.take_along_axis(tab, idx[..., 1:2], axis=-1)[..., 0]
    r = xp.take_along_axis(tab, idx[..., 2:3], axis=-1)[..., 0]
    gray = sat == 0
    r, g, b = (xp.where(gray, light, v) for v in (r, g, b))
    return r * _F32(255), g * _F32(255), b * _F32(255)


def adjust_hue(xp, data, alpha):
    """Rotate the hue of an RGB HWC image by ``alpha * 360`` degrees (through HLS)."""
    if data.shape[-1] == 1:
        return data
    x = data.astype(_F32)
    hue, light, sat = _rgb_to_hls(xp, x[..., 0], x[..., 1], x[..., 2])
    hue = hue + _f(xp, alpha) * _F32(360)
    r, g, b = _hls_to_rgb(xp, hue, light, sat)
    return saturate(xp, xp.stack([r, g, b], axis=-1), data.dtype)


def adjust_lighting(xp, data, alpha):
    """Add AlexNet's PCA lighting noise ``eig @ alpha`` to each RGB pixel."""
    if data.shape[-1] == 1:
        return data
    a = xp.asarray(alpha, dtype=_F32).reshape(3)
    eig = xp.asarray(_EIG)
    pca = eig[:, 0] * a[0] + eig[:, 1] * a[1] + eig[:, 2] * a[2]
    return saturate(xp, data.astype(_F32) + pca, data.dtype)


def resize_hw(h, w, size, keep_ratio):
    """Output (height, width) of ``_image_resize`` for an ``h x w`` image.

    ``size``: an int (both sides, or the short side with ``keep_ratio``) or ``(w, h)``.
    """
    size = (size,) if isinstance(size, (int, np.integer)) else tuple(size)
    if len(size) == 1:
        s = int(size[0])
        if s <= 0:
            raise InvalidArgumentError(f"size must be positive, got {s}")
        if not keep_ratio:
            return s, s
        if h > w:
            return int(h * s // w), s
        return s, int(w * s // h)
    if len(size) != 2 or size[0] <= 0 or size[1] <= 0:
        raise InvalidArgumentError(f"size must be an int or (width, height) > 0, got {size}")
    return int(size[1]), int(size[0])
