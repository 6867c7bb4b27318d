"""OpenCV on numpy: decoding, resizing and borders exactly as MXNet's C++ image functions.

MXNet 1.9.1 links OpenCV 3.4.2 and calls ``cv::imdecode`` (ignoring EXIF
orientation for JPEG/PNG), ``cv::cvtColor(BGR2RGB)``, ``cv::resize`` and
``cv::copyMakeBorder``; these functions make the same calls through
``opencv-python-headless``. Also here: the parts of ``mx.image`` that are plain
arithmetic on sizes (``scale_down``, the interpolation choice, the crop boxes).
"""

from __future__ import annotations

import random

import numpy as np

from ..base import InvalidArgumentError, MXNetError

_CV = []


def cv2():
    """The cv2 module, imported on first use (a clear error when it is missing)."""
    if not _CV:
        try:
            import cv2 as mod
        except ImportError as err:  # pragma: no cover - a dependency of gluonjax
            raise MXNetError(
                "gluonjax's image functions need OpenCV: pip install opencv-python-headless"
            ) from err
        mod.setNumThreads(1)  # data-loader workers parallelise; keep each decode single-threaded
        _CV.append(mod)
    return _CV[0]


def _as_bytes(buf):
    if isinstance(buf, (bytes, bytearray, memoryview)):
        return np.frombuffer(buf, dtype=np.uint8)
    arr = np.asarray(buf)
    if arr.dtype != np.uint8:
        arr = arr.astype(np.uint8)
    return arr.reshape(-1)


def imdecode(buf, flag=1, to_rgb=True, what="buffer"):
    """Decode an encoded image (bytes or uint8 array) to a uint8 HWC numpy array.

    ``flag``: 1 color (3 channels), 0 grayscale (1 channel). ``to_rgb``: RGB order
    (OpenCV decodes BGR).
    """
    cv = cv2()
    data = _as_bytes(buf)
    if data.size == 0:
        raise MXNetError(f"imdecode: the {what} is empty")
    mode = cv.IMREAD_GRAYSCALE if flag == 0 else cv.IMREAD_COLOR
    img = cv.imdecode(data, mode | cv.IMREAD_IGNORE_ORIENTATION)
    if img is None:
        raise MXNetError(f"imdecode: decoding failed, the {what} is not a valid image")
    if flag == 0:
        return img.reshape(img.shape[0], img.shape[1], 1)
    if to_rgb:
        img = cv.cvtColor(img, cv.COLOR_BGR2RGB)
    return img


def planes(img):
    """The channels of an HWC image as contiguous 2-D arrays (``cv::split``: one pass,
    several times faster than numpy's transposing copy)."""
    if img.shape[2] == 1:
        return [img[:, :, 0]]
    if img.dtype in (np.uint8, np.float32) and img.shape[2] <= 4:
        return list(cv2().split(img))
    return [np.ascontiguousarray(img[:, :, c]) for c in range(img.shape[2])]


def imread(filename, flag=1, to_rgb=True):
    """Read and decode an image file (see :func:`imdecode`)."""
    try:
        with open(filename, "rb") as f:
            data = f.read()
    except OSError as err:
        raise MXNetError(f"imread: '{filename}' couldn't open file: {err}") from None
    return imdecode(data, flag, to_rgb, what=f"file '{filename}'")


def _check_dtype(src, what):
    if src.dtype == np.float16:
        raise MXNetError(f"{what}: OpenCV does not take float16 images; cast to float32 first")
    if src.dtype not in (np.uint8, np.float32, np.float64, np.int32):
        raise MXNetError(f"{what}: OpenCV does not take {src.dtype} images")


_RESIZE_INTERP = (0, 1, 2, 3, 4, 5)  # the codes cv::resize accepts (MXNet's OpenCV 3.4)


def imresize(src, w, h, interp=1):
    """Resize an HWC numpy image to ``w x h`` with ``cv::resize`` (interp: OpenCV code)."""
    src = np.asarray(src)
    _check_dtype(src, "imresize")
    cv = cv2()
    if not (int(w) > 0 and int(h) > 0):
        raise MXNetError(f"imresize: width and height must be positive, got {w}x{h}")
    if isinstance(interp, bool) or interp not in _RESIZE_INTERP:
        raise InvalidArgumentError(
            f"imresize: unknown interpolation method interp={interp!r} for an image of shape "
            f"{src.shape}; cv::resize takes 0 (nearest), 1 (bilinear), 2 (bicubic), "
            f"3 (area), 4 (Lanczos) or 5 (exact bilinear)"
        )
    c = src.shape[-1]
    out = cv.resize(np.ascontiguousarray(src), (int(w), int(h)), interpolation=int(interp))
    return out.reshape(int(h), int(w), c)


def resize_images(src, h, w, interp=1):
    """:func:`imresize` of an HWC image or of each image of an NHWC batch."""
    if src.ndim == 3:
        return imresize(src, w, h, interp)
    return np.stack([imresize(im, w, h, interp) for im in src])


def copy_make_border(src, top, bot, left, right, type=0, value=0.0, values=()):
    """``cv::copyMakeBorder`` of an HWC image (``values`` per channel beat ``value``)."""
    cv = cv2()
    src = np.asarray(src)
    _check_dtype(src, "copyMakeBorder")
    color = tuple(float(v) for v in values) if len(values) else (float(value),) * 3
    out = cv.copyMakeBorder(
        np.ascontiguousarray(src), int(top), int(bot), int(left), int(right), int(type), value=color
    )
    return out.reshape(out.shape[0], out.shape[1], src.shape[-1])


def scale_down(src_size, size):
    """Shrink ``size`` (w, h) to fit in ``src_size`` (w, h), keeping its aspect ratio."""
    w, h = size
    sw, sh = src_size
    if sh < h:
        w, h = float(w * sh) / h, sh
    if sw < w:
        w, h = sw, float(h * sw) / w
    return int(w), int(h)


def interp_method(interp, sizes=()):
    """MXNet's interpolation codes: 0-4 OpenCV's, 9 automatic, 10 random (python ``random``)."""
    if interp == 9:
        if sizes:
            oh, ow, nh, nw = sizes
            if nh > oh and nw > ow:
                return 2
            if nh < oh and nw < ow:
                return 3
            return 1
        return 2
    if interp == 10:
        return random.randint(0, 4)
    if interp not in (0, 1, 2, 3, 4):
        raise InvalidArgumentError(f"Unknown interp method {interp}")
    return interp


def center_box(w, h, size):
    """(x0, y0, w, h) of ``mx.image.center_crop`` for a ``w x h`` image."""
    new_w, new_h = scale_down((w, h), size)
    return int((w - new_w) / 2), int((h - new_h) / 2), new_w, new_h


def random_box(w, h, size):
    """(x0, y0, w, h) of ``mx.image.random_crop`` (python ``random``, as MXNet)."""
    new_w, new_h = scale_down((w, h), size)
    x0 = random.randint(0, w - new_w)
    y0 = random.randint(0, h - new_h)
    return x0, y0, new_w, new_h


def random_size_box(w, h, area, ratio):
    """(x0, y0, w, h) of ``mx.image.random_size_crop``, or None to fall back to the center.

    Ten tries of a random area fraction and a log-uniform aspect ratio, with python's
    ``random`` in MXNet's order of draws.
    """
    if isinstance(area, (int, float)):
        area = (area, 1.0)
    src_area = h * w
    log_ratio = (np.log(ratio[0]), np.log(ratio[1]))
    for _ in range(10):
        target_area = random.uniform(area[0], area[1]) * src_area
        new_ratio = np.exp(random.uniform(*log_ratio))
        new_w = int(round(np.sqrt(target_area * new_ratio)))
        new_h = int(round(np.sqrt(target_area / new_ratio)))
        if new_w <= w and new_h <= h:
            x0 = random.randint(0, w - new_w)
            y0 = random.randint(0, h - new_h)
            return x0, y0, new_w, new_h
    return None


def fixed_crop(src, x0, y0, w, h, size=None, interp=2):
    """Crop ``src[y0:y0+h, x0:x0+w]`` and resize to ``size`` (w, h) if it differs."""
    out = src[y0 : y0 + h, x0 : x0 + w]
    if size is not None and (w, h) != tuple(size):
        method = interp_method(interp, (h, w, size[1], size[0]))
        out = imresize(out, size[0], size[1], method)
    return out
