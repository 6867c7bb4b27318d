"""``mx.image.imrotate`` on numpy: MXNet's rotation grid sampled bilinearly with zero padding.

MXNet builds a sampling grid in [-1, 1] (rotated, optionally zoomed) and calls its
``BilinearSampler`` operator; this module computes the same grid and the same
bilinear sampling (corners outside the image count as 0) in float32.
"""

from __future__ import annotations

from numbers import Number

import numpy as np

from ..base import ArgumentTypeError, InvalidArgumentError

_F32 = np.float32


def _grid(h, w, rad, zoom_in, zoom_out):
    hscale = _F32((h - 1) / 2.0)
    wscale = _F32((w - 1) / 2.0)
    hm = np.repeat(np.arange(h, dtype=_F32).reshape(h, 1), w, axis=1) - hscale
    wm = np.repeat(np.arange(w, dtype=_F32).reshape(1, w), h, axis=0) - wscale
    c, s = _F32(np.cos(rad)), _F32(np.sin(rad))
    wr = (wm * c - hm * s) / wscale
    hr = (wm * s + hm * c) / hscale
    scale = _F32(1)
    if zoom_in or zoom_out:
        hh, ww = _F32(h), _F32(w)
        rho = np.sqrt(hh * hh + ww * ww)
        ang = np.arctan(hh / ww)
        a = np.abs(_F32(rad))
        x1, y1 = np.abs(rho * np.cos(ang + a)), np.abs(rho * np.sin(ang + a))
        x2, y2 = np.abs(rho * np.cos(ang - a)), np.abs(rho * np.sin(ang - a))
        max_x, max_y = max(x1, x2), max(y1, y2)
        if zoom_out:
            scale = _F32(max(max_x / ww, max_y / hh))
        else:
            scale = _F32(min(ww / max_x, hh / max_y))
    return wr * scale, hr * scale


def _sample(img, gx, gy):
    """Bilinear sampling of a CHW image at grid points in [-1, 1] (zeros outside)."""
    c, h, w = img.shape
    rx = (gx + _F32(1)) * _F32(w - 1) / _F32(2)
    ry = (gy + _F32(1)) * _F32(h - 1) / _F32(2)
    x0 = np.floor(rx).astype(np.int64)
    y0 = np.floor(ry).astype(np.int64)
    wx = (_F32(1) - (rx - x0)).astype(_F32)
    wy = (_F32(1) - (ry - y0)).astype(_F32)
    out = np.zeros((c,) + gx.shape, _F32)

    def corner(yy, xx):
        ok = (xx >= 0) & (xx <= w - 1) & (yy >= 0) & (yy <= h - 1)
        v = img[:, np.clip(yy, 0, h - 1), np.clip(xx, 0, w - 1)]
        return np.where(ok, v, _F32(0))

    out += corner(y0, x0) * wy * wx
    out += corner(y0, x0 + 1) * wy * (_F32(1) - wx)
    out += corner(y0 + 1, x0) * (_F32(1) - wy) * wx
    out += corner(y0 + 1, x0 + 1) * (_F32(1) - wy) * (_F32(1) - wx)
    return out


def imrotate(src, degrees, zoom_in=False, zoom_out=False):
    """Rotate a float32 CHW image (or NCHW batch, one angle per image) by ``degrees``.

    Parameters
    ----------
    src : numpy.ndarray
        A float32 CHW image or NCHW batch.
    degrees : number or 1-D array
        The angle; for a batch, a number (every image) or one angle per image.
    zoom_in, zoom_out : bool
        Scale so that no padding shows / the whole image stays inside (not both).

    Returns
    -------
    numpy.ndarray
        The rotated image(s), of ``src``'s shape.
    """
    if zoom_in and zoom_out:
        raise InvalidArgumentError("imrotate: `zoom_in` and `zoom_out` cannot be both True")
    if src.dtype != np.float32:
        raise ArgumentTypeError(
            f"imrotate: only float32 images are supported, got {src.dtype} (cast the image, "
            f"e.g. with transforms.ToTensor, first)"
        )
    single = src.ndim == 3
    scalar = isinstance(degrees, Number)
    if single and not scalar:
        raise ArgumentTypeError(
            f"imrotate: a single CHW image {src.shape} needs a scalar rotation angle, got "
            f"{type(degrees).__name__} of shape {np.shape(degrees)}; stack images into an "
            f"NCHW batch to rotate each by its own angle"
        )
    batch = src[None] if single else src
    if batch.ndim != 4:
        raise InvalidArgumentError(
            f"imrotate: only 3D (CHW) and 4D (NCHW) images are supported, got shape {src.shape}"
        )
    angles = np.asarray(degrees, dtype=np.float64).reshape(-1)
    if scalar:
        angles = np.repeat(angles, len(batch))
    elif angles.shape != (len(batch),) or np.ndim(degrees) != 1:
        raise InvalidArgumentError(
            f"imrotate: the number of images must be equal to the number of rotation angles: "
            f"{len(batch)} images, angles of shape {np.shape(degrees)}"
        )
    out = []
    for img, deg in zip(batch, angles):
        rad = np.pi * deg / 180
        gx, gy = _grid(img.shape[1], img.shape[2], rad, zoom_in, zoom_out)
        out.append(_sample(img, gx, gy))
    out = np.stack(out)
    return out[0] if single else out


def random_rotate(src, angle_limits, zoom_in=False, zoom_out=False):
    """Rotate by angles drawn uniformly from ``angle_limits`` (numpy's generator, as MXNet)."""
    if src.ndim == 3:
        degrees = np.random.uniform(*angle_limits)
    else:
        degrees = np.random.uniform(*angle_limits, size=src.shape[0])
    return imrotate(src, degrees, zoom_in, zoom_out)
