"""``mx.image`` functions: decode, resize, crop and normalize images (OpenCV, as MXNet).

Images are uint8 HWC NDArrays whose values stay in host memory (numpy) until a
device op uses them, so decoding and cropping images of any size compile nothing.
Functions given a device NDArray return one. Random choices use Python's
``random`` (crops, ``interp=10``) and numpy's (rotation) as MXNet does, so the
same seeds give MXNet's crop boxes.

Examples
--------
>>> import numpy as np, gluonjax as mx
>>> img = mx.nd.array(np.zeros((40, 60, 3)), dtype="uint8")
>>> mx.image.resize_short(img, 20).shape
(20, 30, 3)
>>> out, box = mx.image.center_crop(img, (16, 16)); out.shape, box
((16, 16, 3), (22, 12, 16, 16))
"""

from __future__ import annotations

from numbers import Number

import numpy as np

from .._data import cv, host
from .._data.rotate import imrotate as _imrotate
from .._data.rotate import random_rotate as _random_rotate
from ..base import ArgumentTypeError, InvalidArgumentError

__all__ = [
    "imread",
    "imdecode",
    "imresize",
    "scale_down",
    "copyMakeBorder",
    "resize_short",
    "fixed_crop",
    "random_crop",
    "center_crop",
    "color_normalize",
    "random_size_crop",
    "imrotate",
    "random_rotate",
]

scale_down = cv.scale_down
_get_interp_method = cv.interp_method


def imread(filename, flag=1, to_rgb=True, out=None):
    """Read an image file into a uint8 HWC NDArray (RGB; ``flag=0``: 1-channel gray)."""
    return _out(host.item(cv.imread(filename, flag, to_rgb)), out)


def imdecode(buf, flag=1, to_rgb=True, out=None):
    """Decode an encoded image (bytes, bytearray, uint8 numpy array or NDArray).

    Raises ``MXNetError`` when the buffer is not a valid image.
    """
    if not isinstance(buf, (bytes, bytearray, memoryview, np.ndarray)) and not hasattr(
        buf, "_data"
    ):
        raise InvalidArgumentError(
            "buf must be of type bytes, bytearray or numpy.ndarray, if you would like to "
            "input type str, please convert to bytes"
        )
    data = buf if isinstance(buf, (bytes, bytearray, memoryview)) else host.raw(buf)
    return _out(host.item(cv.imdecode(data, flag, to_rgb)), out)


def _out(res, out):
    if out is None:
        return res
    out._data = res._data
    return out


def imresize(src, w, h, interp=1, out=None):
    """Resize an HWC image to ``w x h`` (OpenCV's ``interp`` code; 1 bilinear)."""
    return _out(host.like(src, cv.imresize(host.raw(src), w, h, interp)), out)


def copyMakeBorder(src, top, bot, left, right, type=0, value=0.0, values=(), out=None):  # noqa: N802
    """Pad an HWC image (OpenCV's ``copyMakeBorder``; ``type`` 0 constant, 1 replicate...)."""
    res = cv.copy_make_border(host.raw(src), top, bot, left, right, type, value, values)
    return _out(host.like(src, res), out)


def resize_short(src, size, interp=2):
    """Resize so that the short side is ``size`` (aspect ratio kept)."""
    h, w = src.shape[:2]
    if h > w:
        new_h, new_w = size * h // w, size
    else:
        new_h, new_w = size, size * w // h
    return imresize(src, new_w, new_h, interp=cv.interp_method(interp, (h, w, new_h, new_w)))


def fixed_crop(src, x0, y0, w, h, size=None, interp=2):
    """Crop ``(x0, y0, w, h)``, then resize to ``size`` (w, h) if given and different."""
    return host.like(src, cv.fixed_crop(host.raw(src), x0, y0, w, h, size, interp))


def random_crop(src, size, interp=2):
    """A random crop of ``size`` (w, h) (scaled down to fit); returns ``(image, box)``."""
    h, w = src.shape[:2]
    box = cv.random_box(w, h, size)
    return fixed_crop(src, *box, size, interp), box


def center_crop(src, size, interp=2):
    """The center crop of ``size`` (w, h) (scaled down to fit); returns ``(image, box)``."""
    h, w = src.shape[:2]
    box = cv.center_box(w, h, size)
    return fixed_crop(src, *box, size, interp), box


def color_normalize(src, mean, std=None):
    """``(src - mean) / std``."""
    if mean is not None:
        src -= mean
    if std is not None:
        src /= std
    return src


def random_size_crop(src, size, area, ratio, interp=2, **kwargs):
    """A crop of random area fraction (``area``) and aspect ratio (``ratio``) resized to
    ``size``; the center crop after ten misses. Returns ``(image, box)``."""
    if "min_area" in kwargs:
        area = kwargs.pop("min_area")
    if kwargs:
        raise ArgumentTypeError(
            f"unexpected keyword arguments for `random_size_crop`: {list(kwargs)}"
        )
    h, w = src.shape[:2]
    box = cv.random_size_box(w, h, area, ratio)
    if box is None:
        return center_crop(src, size, interp)
    return fixed_crop(src, *box, size, interp), box


def imrotate(src, rotation_degrees, zoom_in=False, zoom_out=False):
    """Rotate a float32 CHW image (or NCHW batch) by ``rotation_degrees`` (zeros outside)."""
    degrees = rotation_degrees
    if not isinstance(degrees, Number):  # a scalar stays one: CHW images need a scalar
        degrees = host.raw(degrees)
    return host.like(src, _imrotate(host.raw(src), degrees, zoom_in, zoom_out))


def random_rotate(src, angle_limits, zoom_in=False, zoom_out=False):
    """Rotate by angles drawn from ``angle_limits`` with numpy's generator."""
    return host.like(src, _random_rotate(host.raw(src), angle_limits, zoom_in, zoom_out))
