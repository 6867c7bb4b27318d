"""Image transforms: Blocks over ``nd.image`` ops (device arrays) or numpy kernels (host images).

Each transform gives MXNet 1.9.1's values. Images from the vision datasets and
``mx.image`` keep their values in host memory; a transform runs on them with
numpy and OpenCV (:mod:`gluonjax._data.host`), so images of every size cost no
compilation, and a data-loader worker runs it without jax. On a device NDArray the
HybridBlocks run the ``nd.image`` registry ops (and hybridize); a Symbol gives the
``sym.image`` graph. The random transforms draw as MXNet does: ``RandomResizedCrop``
and ``RandomApply`` from Python's ``random``, ``RandomRotation`` from numpy's, and
the flips and color jitters from the generator ``mx.random.seed`` resets.
``HybridCompose`` and ``HybridRandomApply`` are MXNet 2's; here they take and
return 1.x NDArrays.
"""

from __future__ import annotations

import random

import numpy as np

from ...._data import host
from ....base import InvalidArgumentError
from ...block import Block
from ...hybrid import HybridBlock
from ...nn import HybridSequential, Sequential

__all__ = [
    "Compose",
    "HybridCompose",
    "Cast",
    "ToTensor",
    "Normalize",
    "Resize",
    "CenterCrop",
    "RandomResizedCrop",
    "CropResize",
    "RandomFlipLeftRight",
    "RandomFlipTopBottom",
    "RandomBrightness",
    "RandomContrast",
    "RandomSaturation",
    "RandomHue",
    "RandomColorJitter",
    "RandomLighting",
    "Rotate",
    "RandomRotation",
    "RandomApply",
    "HybridRandomApply",
]


def _host_twin_of(block):
    """The host version of ``block`` (None if some part has none)."""
    make = getattr(block, "_host_twin", None)
    return make() if make is not None else None


class _HostFirst:
    """Mixin: host inputs go to the numpy version, everything else to the Block path."""

    _twin = None

    def __call__(self, x, *args, **kwargs):
        if not args and not kwargs and host.is_host(x):
            return self._twin(x)
        return super().__call__(x, *args, **kwargs)

    def _host_twin(self):
        return self._twin


class _HostBlock(_HostFirst, Block):
    """A Block that only has the host version: device NDArrays go through numpy too."""

    def forward(self, x):
        return self._twin(x)


class _HostHybrid(_HostFirst, HybridBlock):
    pass


class Compose(Sequential):
    """Apply ``transforms`` (a list of Blocks or callables) in order.

    Unlike MXNet, consecutive HybridBlocks are not hybridized together: a host image
    runs through each transform's numpy version, and a device array through each
    Block (``hybridize()`` the Compose to compile them).
    """

    def __init__(self, transforms):
        super().__init__()
        self._fns = []
        for t in transforms:
            if t is None:
                continue
            if isinstance(t, Block):
                self.add(t)
            self._fns.append(t)

    def forward(self, x, *args):
        for t in self._fns:
            x = t(x)
        if args:
            return (x, *args)
        return x

    def __call__(self, x, *args):
        return self.forward(x, *args)

    def _host_twin(self):
        parts = []
        for t in self._fns:
            if isinstance(t, Block):
                twin = _host_twin_of(t)
                if twin is None:
                    return None
                parts.append(twin)
            else:
                parts.append(t)
        return host.Compose(parts)


class HybridCompose(HybridSequential):
    """:class:`Compose` of HybridBlocks only (MXNet 2's), hybridized on creation."""

    def __init__(self, transforms):
        super().__init__()
        for t in transforms:
            if not isinstance(t, HybridBlock):
                raise InvalidArgumentError(f"{t} is not a HybridBlock, try use `Compose` instead")
            self.add(t)
        self.hybridize()

    def __call__(self, x, *args):
        if not args and host.is_host(x):
            for t in self._children.values():
                x = t(x)
            return x
        return super().__call__(x, *args)

    def _host_twin(self):
        parts = [_host_twin_of(t) for t in self._children.values()]
        return None if any(p is None for p in parts) else host.Compose(parts)


class Cast(_HostHybrid):
    """Cast to ``dtype`` (default float32)."""

    def __init__(self, dtype="float32"):
        super().__init__()
        self._dtype = dtype
        self._twin = host.Cast(dtype)

    def hybrid_forward(self, F, x):
        return F.cast(x, self._dtype)


class ToTensor(_HostHybrid):
    """uint8 HWC (or NHWC) in [0, 255] -> float32 CHW (NCHW) in [0, 1]."""

    def __init__(self):
        super().__init__()
        self._twin = host.ToTensor()

    def hybrid_forward(self, F, x):
        return F.image.to_tensor(x)


class Normalize(_HostHybrid):
    """``(x - mean[c]) / std[c]`` per channel of a CHW (NCHW) tensor; scalars for all."""

    def __init__(self, mean=0.0, std=1.0):
        super().__init__()
        self._mean = mean
        self._std = std
        self._twin = host.Normalize(mean, std)

    def hybrid_forward(self, F, x):
        return F.image.normalize(x, mean=self._mean, std=self._std)


class Resize(_HostHybrid):
    """Resize an HWC (NHWC) image to ``size`` (w, h); an int with ``keep_ratio`` sets the
    short side. ``interpolation``: OpenCV's code (1 bilinear)."""

    def __init__(self, size, keep_ratio=False, interpolation=1):
        super().__init__()
        self._keep = keep_ratio
        self._size = size
        self._interpolation = interpolation
        self._twin = host.Resize(size, keep_ratio, interpolation)

    def hybrid_forward(self, F, x):
        return F.image.resize(x, size=self._size, keep_ratio=self._keep, interp=self._interpolation)


class CropResize(_HostHybrid):
    """Crop the box (x, y, width, height) and optionally resize it to ``size``."""

    def __init__(self, x, y, width, height, size=None, interpolation=None):
        super().__init__()
        self._box = (x, y, width, height)
        self._size = size
        self._interpolation = interpolation
        self._twin = host.CropResize(x, y, width, height, size, interpolation)

    def hybrid_forward(self, F, x):
        bx, by, bw, bh = self._box
        out = F.image.crop(x, x=bx, y=by, width=bw, height=bh)
        if self._size:
            interp = 1 if self._interpolation is None else self._interpolation
            out = F.image.resize(out, size=self._size, keep_ratio=False, interp=interp)
        return out


class CenterCrop(_HostBlock):
    """Crop the center ``size`` (w, h) region (scaled down to fit, then resized to ``size``)."""

    def __init__(self, size, interpolation=1):
        super().__init__()
        self._twin = host.CenterCrop(size, interpolation)


class RandomResizedCrop(_HostBlock):
    """Crop a random region (area fraction in ``scale``, aspect ratio in ``ratio``), resize
    it to ``size``. Ten tries, then the center crop (MXNet's ``image.random_size_crop``)."""

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0), interpolation=1):
        super().__init__()
        self._twin = host.RandomResizedCrop(size, scale, ratio, interpolation)


class RandomFlipLeftRight(_HostHybrid):
    """Flip an HWC image left to right with probability 1/2."""

    def __init__(self):
        super().__init__()
        self._twin = host.RandomFlipLeftRight()

    def hybrid_forward(self, F, x):
        return F.image.random_flip_left_right(x)


class RandomFlipTopBottom(_HostHybrid):
    """Flip an HWC image top to bottom with probability 1/2."""

    def __init__(self):
        super().__init__()
        self._twin = host.RandomFlipTopBottom()

    def hybrid_forward(self, F, x):
        return F.image.random_flip_top_bottom(x)


class _Enhance(_HostHybrid):
    _op = ""
    _host = None

    def __init__(self, amount):
        super().__init__()
        self._args = (max(0, 1 - amount), 1 + amount)
        self._twin = type(self)._host(*self._args)

    def hybrid_forward(self, F, x):
        return getattr(F.image, self._op)(x, min_factor=self._args[0], max_factor=self._args[1])


class RandomBrightness(_Enhance):
    """Scale by a factor drawn from [max(0, 1 - brightness), 1 + brightness]."""

    _op, _host = "random_brightness", host.RandomBrightness


class RandomContrast(_Enhance):
    """Blend with the mean gray level, factor from [max(0, 1 - contrast), 1 + contrast]."""

    _op, _host = "random_contrast", host.RandomContrast


class RandomSaturation(_Enhance):
    """Blend with each pixel's gray level, factor from [max(0, 1 - s), 1 + s]."""

    _op, _host = "random_saturation", host.RandomSaturation


class RandomHue(_Enhance):
    """Rotate the hue by ``alpha * 360`` degrees, alpha from [max(0, 1 - hue), 1 + hue]."""

    _op, _host = "random_hue", host.RandomHue


class RandomColorJitter(_HostHybrid):
    """Brightness, contrast, saturation and hue jitter in a random order."""

    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0):
        super().__init__()
        self._args = (brightness, contrast, saturation, hue)
        self._twin = host.RandomColorJitter(*self._args)

    def hybrid_forward(self, F, x):
        b, c, s, h = self._args
        return F.image.random_color_jitter(x, brightness=b, contrast=c, saturation=s, hue=h)


class RandomLighting(_HostHybrid):
    """AlexNet's PCA lighting noise with intensity ``alpha`` (the noise's std)."""

    def __init__(self, alpha):
        super().__init__()
        self._alpha = alpha
        self._twin = host.RandomLighting(alpha)

    def hybrid_forward(self, F, x):
        return F.image.random_lighting(x, alpha_std=self._alpha)


class Rotate(_HostBlock):
    """Rotate a float32 CHW image (or NCHW batch) by ``rotation_degrees``, keeping its shape
    (``mx.image.imrotate``; zeros where the rotated image does not reach).

    Parameters
    ----------
    rotation_degrees : float
        The angle in degrees (counter-clockwise).
    zoom_in : bool, default False
        Zoom in so that no padding shows.
    zoom_out : bool, default False
        Zoom out so that the whole image stays inside (calling it with both zooms raises
        ValueError, as MXNet).

    Inputs:
        - **data**: a float32 (C, H, W) or (N, C, H, W) array.

    Outputs:
        - **out**: the rotated array, of the input's shape.

    Examples
    --------
    >>> import gluonjax as mx
    >>> img = mx.nd.array([[[0, 0, 0], [0, 0, 1], [0, 0, 0]]])
    >>> Rotate(90)(img).asnumpy().round(3).tolist()
    [[[0.0, 1.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]]
    """

    def __init__(self, rotation_degrees, zoom_in=False, zoom_out=False):
        super().__init__()
        self._twin = host.Rotate(rotation_degrees, zoom_in, zoom_out)


class RandomRotation(_HostBlock):
    """Rotate a float32 CHW (NCHW) tensor by an angle from ``angle_limits`` (degrees),
    with probability ``rotate_with_proba``; ``zoom_in``/``zoom_out`` rescale."""

    def __init__(self, angle_limits, zoom_in=False, zoom_out=False, rotate_with_proba=1.0):
        super().__init__()
        lower, upper = angle_limits
        if lower >= upper:
            raise InvalidArgumentError("`angle_limits` must be an ordered tuple")
        if rotate_with_proba < 0 or rotate_with_proba > 1:
            raise InvalidArgumentError(
                "Probability of rotating the image should be between 0 and 1"
            )
        self._twin = host.RandomRotation(angle_limits, zoom_in, zoom_out, rotate_with_proba)


class RandomApply(Sequential):
    """Apply ``transforms`` with probability ``p`` (Python's ``random``, as MXNet)."""

    def __init__(self, transforms, p=0.5):
        super().__init__()
        self.transforms = transforms
        self.p = p

    def forward(self, x, *args):
        if self.p < random.random():
            return (x, *args) if args else x
        x = self.transforms(x)
        return (x, *args) if args else x

    def __call__(self, x, *args):
        return self.forward(x, *args)

    def _host_twin(self):
        inner = _host_twin_of(self.transforms) if isinstance(self.transforms, Block) else None
        if inner is None and isinstance(self.transforms, Block):
            return None
        return host.RandomApply(inner if inner is not None else self.transforms, self.p)


class HybridRandomApply(RandomApply):
    """:class:`RandomApply` of a HybridBlock (MXNet 2's); the draw happens per call."""

    def __init__(self, transforms, p=0.5):
        if not isinstance(transforms, HybridBlock):
            raise InvalidArgumentError(
                f"HybridRandomApply needs a HybridBlock, got {type(transforms)}"
            )
        super().__init__(transforms, p)


del np
