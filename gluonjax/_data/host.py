"""The vision transforms on host arrays, and the helpers that move values in and out of them.

Each transform of ``gluon.data.vision.transforms`` keeps one of these objects and
hands it every host input (a numpy array, or an NDArray whose values are a numpy
array, as images from ``mx.image.imread`` and the vision datasets are). A
data-loader worker receives these objects instead of the Blocks, so it runs the
pipeline on numpy without importing jax. The arithmetic is in :mod:`.kernels` and
:mod:`.cv`; the registry ops ``_image_*`` use the same kernels with jax.numpy.
"""

from __future__ import annotations

import random
import sys

import numpy as np

from ..base import ArgumentTypeError, InvalidArgumentError
from . import cv, kernels, rng

_ND_MODULE = "gluonjax.ndarray.ndarray"


def raw(x):
    """The numpy values of ``x`` (an NDArray, numpy array, jax array or scalar)."""
    return np.asarray(getattr(x, "_data", x))


def is_host(x):
    """True for a numpy array or an NDArray holding a numpy array."""
    return isinstance(x, np.ndarray) or isinstance(getattr(x, "_data", None), np.ndarray)


def item(values):
    """A dataset item: an NDArray over ``values`` where gluonjax's arrays are loaded,
    the numpy array itself in a jax-free data-loader worker."""
    mod = sys.modules.get(_ND_MODULE)
    if mod is None:
        return values
    return mod.NDArray(values)


def like(x, out):
    """``out`` (numpy) in the kind of ``x``: numpy, host NDArray or device NDArray."""
    if isinstance(x, np.ndarray) or not hasattr(x, "_data"):
        return out
    mod = sys.modules[_ND_MODULE]
    if isinstance(x._data, np.ndarray):
        return mod.NDArray(out)
    import jax.numpy as jnp  # the input already lives in jax

    return mod.NDArray(jnp.asarray(out))


def rebuild(cls, state):
    """Unpickle a host transform (the pickled stand-in of a transform Block)."""
    obj = cls.__new__(cls)
    obj.__dict__.update(state)
    return obj


class Transform:
    """Base of the host transforms: ``t(x)`` applies :meth:`apply` to ``raw(x)``."""

    def __call__(self, x, *args):
        out = like(x, self.apply(raw(x)))
        if args:
            return (out, *args)
        return out

    def apply(self, img):
        raise NotImplementedError

    def __repr__(self):
        fields = ", ".join(f"{k.lstrip('_')}={v!r}" for k, v in vars(self).items())
        return f"{type(self).__name__}({fields})"


class Compose(Transform):
    """Apply ``transforms`` in order (each may be a host transform or any callable)."""

    def __init__(self, transforms):
        self.transforms = list(transforms)

    def __call__(self, x, *args):
        for t in self.transforms:
            x = t(x)
        if args:
            return (x, *args)
        return x


class RandomApply(Transform):
    """Apply ``transforms`` with probability ``p`` (python ``random``, as MXNet)."""

    def __init__(self, transforms, p=0.5):
        self.transforms = transforms
        self.p = p

    def __call__(self, x, *args):
        if not self.p < random.random():
            x = self.transforms(x)
        if args:
            return (x, *args)
        return x


class Cast(Transform):
    def __init__(self, dtype="float32"):
        self.dtype = np.dtype(dtype)

    def apply(self, img):
        return img.astype(self.dtype)


class ToTensor(Transform):
    def apply(self, img):
        if img.ndim not in (3, 4):
            raise InvalidArgumentError(
                f"ToTensor: input must be (H, W, C) or (N, H, W, C), got shape {img.shape}"
            )
        if img.ndim == 3:  # per channel from contiguous planes: the same values, faster
            planes = cv.planes(img)
            out = np.empty((len(planes),) + img.shape[:2], np.float32)
            for c, plane in enumerate(planes):
                np.divide(plane, np.float32(255.0), out=out[c], dtype=np.float32)
            return out
        return np.ascontiguousarray(kernels.to_tensor(np, img))


class Normalize(Transform):
    def __init__(self, mean=0.0, std=1.0):
        self.mean = mean
        self.std = std

    def apply(self, img):
        if img.ndim not in (3, 4) or img.shape[-3] not in (1, 3):
            raise InvalidArgumentError(
                f"Normalize: input must be (C, H, W) or (N, C, H, W) with C = 1 or 3, "
                f"got shape {img.shape}"
            )
        return kernels.normalize(np, img, self.mean, self.std)


class Resize(Transform):
    def __init__(self, size, keep_ratio=False, interpolation=1):
        self.size = size
        self.keep_ratio = keep_ratio
        self.interpolation = interpolation

    def apply(self, img):
        h, w = kernels.resize_hw(img.shape[-3], img.shape[-2], self.size, self.keep_ratio)
        return cv.resize_images(img, h, w, self.interpolation)


class CropResize(Transform):
    def __init__(self, x, y, width, height, size=None, interpolation=None):
        self.box = (x, y, width, height)
        self.size = size
        self.interpolation = interpolation

    def apply(self, img):
        x, y, w, h = self.box
        if x + w > img.shape[-2] or y + h > img.shape[-3]:
            raise InvalidArgumentError(
                f"CropResize: box x={x}, y={y}, width={w}, height={h} does not fit an image "
                f"of shape {img.shape}"
            )
        out = kernels.crop(np, img, x, y, w, h)
        if self.size:
            oh, ow = kernels.resize_hw(h, w, self.size, False)
            interp = 1 if self.interpolation is None else self.interpolation
            out = cv.resize_images(np.ascontiguousarray(out), oh, ow, interp)
        return out


def _pair(size):
    return (size, size) if isinstance(size, (int, np.integer)) else tuple(size)


class CenterCrop(Transform):
    def __init__(self, size, interpolation=1):
        self.size = _pair(size)
        self.interpolation = interpolation

    def apply(self, img):
        h, w = img.shape[:2]
        x0, y0, cw, ch = cv.center_box(w, h, self.size)
        return cv.fixed_crop(img, x0, y0, cw, ch, self.size, self.interpolation)


class RandomResizedCrop(Transform):
    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0), interpolation=1):
        self.size = _pair(size)
        self.scale = scale
        self.ratio = ratio
        self.interpolation = interpolation

    def apply(self, img):
        h, w = img.shape[:2]
        box = cv.random_size_box(w, h, self.scale, self.ratio)
        if box is None:
            box = cv.center_box(w, h, self.size)
        return cv.fixed_crop(img, *box, self.size, self.interpolation)


def _flip(img, code):
    """``img`` flipped left-right (code 1) or top-bottom (code 0), contiguous."""
    if img.ndim == 3 and img.shape[2] <= 4 and img.dtype in (np.uint8, np.float32):
        return cv.cv2().flip(img, code).reshape(img.shape)  # much faster than numpy's copy
    flip = kernels.flip_left_right if code == 1 else kernels.flip_top_bottom
    return np.ascontiguousarray(flip(np, img))


class RandomFlipLeftRight(Transform):
    def apply(self, img):
        return img if rng.coin() else _flip(img, 1)


class RandomFlipTopBottom(Transform):
    def apply(self, img):
        return img if rng.coin() else _flip(img, 0)


def _check_hwc(img, what):
    if img.ndim != 3 or img.shape[2] not in (1, 3):
        raise InvalidArgumentError(
            f"{what}: input must be (H, W, C) with C = 1 or 3, got shape {img.shape}"
        )


class _Enhance(Transform):
    kernel = None

    def __init__(self, min_factor, max_factor):
        self.min_factor = min_factor
        self.max_factor = max_factor

    def apply(self, img):
        _check_hwc(img, type(self).__name__)
        alpha = np.float32(rng.uniform(self.min_factor, self.max_factor))
        return type(self).kernel(np, img, alpha)


class RandomBrightness(_Enhance):
    kernel = staticmethod(kernels.adjust_brightness)


class RandomContrast(_Enhance):
    kernel = staticmethod(kernels.adjust_contrast)


class RandomSaturation(_Enhance):
    kernel = staticmethod(kernels.adjust_saturation)


class RandomHue(_Enhance):
    kernel = staticmethod(kernels.adjust_hue)


class RandomColorJitter(Transform):
    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0):
        self.factors = (brightness, contrast, saturation, hue)

    def apply(self, img):
        _check_hwc(img, "RandomColorJitter")
        steps = (
            kernels.adjust_brightness,
            kernels.adjust_contrast,
            kernels.adjust_saturation,
            kernels.adjust_hue,
        )
        for i in rng.permutation(4):
            f = self.factors[i]
            if f > 0:
                alpha = rng.uniform(-f, f) + (0.0 if i == 3 else 1.0)
                img = steps[i](np, img, np.float32(alpha))
        return img


class RandomLighting(Transform):
    def __init__(self, alpha):
        self.alpha = alpha

    def apply(self, img):
        _check_hwc(img, "RandomLighting")
        return kernels.adjust_lighting(np, img, rng.normal(self.alpha, 3))


class Rotate(Transform):
    def __init__(self, rotation_degrees, zoom_in=False, zoom_out=False):
        self.rotation_degrees = rotation_degrees
        self.zoom_in = zoom_in
        self.zoom_out = zoom_out

    def apply(self, img):
        if img.dtype != np.float32:
            raise ArgumentTypeError(
                f"Rotate only supports float32 images, got {img.dtype}. "
                "Consider calling it after ToTensor"
            )
        from .rotate import imrotate

        return imrotate(img, self.rotation_degrees, self.zoom_in, self.zoom_out)


class RandomRotation(Transform):
    def __init__(self, angle_limits, zoom_in=False, zoom_out=False, rotate_with_proba=1.0):
        self.angle_limits = angle_limits
        self.zoom_in = zoom_in
        self.zoom_out = zoom_out
        self.rotate_with_proba = rotate_with_proba

    def apply(self, img):
        if np.random.random() > self.rotate_with_proba:
            return img
        if img.dtype != np.float32:
            raise ArgumentTypeError(
                "This transformation only supports float32. Consider calling it after ToTensor"
            )
        from .rotate import random_rotate

        return random_rotate(img, self.angle_limits, self.zoom_in, self.zoom_out)
