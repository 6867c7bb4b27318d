"""Image operators ``_image_*`` (``nd.image.*`` / ``sym.image.*``), MXNet 1.9.1's.

The arithmetic is :mod:`gluonjax._data.kernels`, shared with the host transforms
(numpy) so the two never differ; here it runs with ``jax.numpy``. ``resize`` calls
OpenCV on the host through ``jax.pure_callback`` (as MXNet's CPU op does), so its
pixels are OpenCV's. The ``random_*`` ops draw from the op's PRNG key: a uniform
factor, a coin for the flips, three normals for the lighting. Images are HWC
(``resize``, ``crop`` and ``to_tensor`` also NHWC), tensors CHW or NCHW.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ..._data import cv, kernels
from ..registry import REQUIRED, Attr, register

_XP = jnp


def _check_hwc(data, op):
    if data.ndim != 3 or data.shape[-1] not in (1, 3):
        raise ValueError(f"{op}: input must be (H, W, C) with C = 1 or 3, got {data.shape}")


@register("_image_to_tensor", aliases=("_npx__image_to_tensor",))
def _to_tensor(data):
    """HWC (NHWC) image in [0, 255] -> float32 CHW (NCHW) tensor in [0, 1]."""
    if data.ndim not in (3, 4):
        raise ValueError(f"to_tensor: input must be (H, W, C) or (N, H, W, C), got {data.shape}")
    return kernels.to_tensor(_XP, data)


@register(
    "_image_normalize",
    aliases=("_npx__image_normalize",),
    attrs={
        "mean": Attr("floats", (0.0, 0.0, 0.0, 0.0)),
        "std": Attr("floats", (1.0, 1.0, 1.0, 1.0)),
    },
)
def _normalize(data, mean, std):
    """``(data - mean[c]) / std[c]`` per channel of a CHW (NCHW) tensor (C = 1 or 3)."""
    if data.ndim not in (3, 4) or data.shape[-3] not in (1, 3):
        raise ValueError(
            f"normalize: input must be (C, H, W) or (N, C, H, W) with C = 1 or 3, got {data.shape}"
        )
    return kernels.normalize(_XP, data, mean, std)


@register(
    "_image_resize",
    aliases=("_npx__image_resize",),
    attrs={
        "size": Attr("shape", ()),
        "keep_ratio": Attr("bool", False),
        "interp": Attr("int", 1),
    },
)
def _resize(data, size, keep_ratio, interp):
    """Resize an HWC (NHWC) image with OpenCV: ``size`` (w, h), or an int (short side
    with ``keep_ratio``). ``interp`` is OpenCV's code (1 bilinear)."""
    if data.ndim not in (3, 4):
        raise ValueError(f"resize: input must be (H, W, C) or (N, H, W, C), got {data.shape}")
    h, w = kernels.resize_hw(data.shape[-3], data.shape[-2], size, keep_ratio)
    shape = data.shape[:-3] + (h, w, data.shape[-1])
    dtype = data.dtype

    def host(a):
        return cv.resize_images(np.asarray(a), h, w, interp).astype(dtype).reshape(shape)

    return jax.pure_callback(host, jax.ShapeDtypeStruct(shape, dtype), data)


@register(
    "_image_crop",
    aliases=("_npx__image_crop",),
    attrs={
        "x": Attr("int", REQUIRED),
        "y": Attr("int", REQUIRED),
        "width": Attr("int", REQUIRED),
        "height": Attr("int", REQUIRED),
    },
)
def _crop(data, x, y, width, height):
    """The box ``[y:y+height, x:x+width]`` of an HWC (NHWC) image."""
    if data.ndim not in (3, 4):
        raise ValueError(f"crop: input must be (H, W, C) or (N, H, W, C), got {data.shape}")
    if width <= 0 or height <= 0:
        raise ValueError("crop: height and width must be greater than 0")
    if x < 0 or y < 0 or x + width > data.shape[-2] or y + height > data.shape[-3]:
        raise ValueError(
            f"crop: box x={x}, y={y}, width={width}, height={height} is outside the image "
            f"{data.shape}"
        )
    return kernels.crop(_XP, data, x, y, width, height)


@register("_image_flip_left_right", aliases=("_npx__image_flip_left_right",))
def _flip_lr(data):
    """Mirror an HWC image left to right."""
    return kernels.flip_left_right(_XP, data)


@register("_image_flip_top_bottom", aliases=("_npx__image_flip_top_bottom",))
def _flip_tb(data):
    """Mirror an HWC image top to bottom."""
    return kernels.flip_top_bottom(_XP, data)


@register(
    "_image_random_flip_left_right", aliases=("_npx__image_random_flip_left_right",), random=True
)
def _random_flip_lr(_key, data):
    """Mirror left to right with probability 1/2."""
    return jnp.where(
        jax.random.bernoulli(_key, np.float32(0.5)), data, kernels.flip_left_right(_XP, data)
    )


@register(
    "_image_random_flip_top_bottom", aliases=("_npx__image_random_flip_top_bottom",), random=True
)
def _random_flip_tb(_key, data):
    """Mirror top to bottom with probability 1/2."""
    return jnp.where(
        jax.random.bernoulli(_key, np.float32(0.5)), data, kernels.flip_top_bottom(_XP, data)
    )


def _uniform(key, lo, hi):
    return jax.random.uniform(key, (), jnp.float32, lo, hi)


_ENHANCE = {
    "min_factor": Attr("float", REQUIRED, static=False),
    "max_factor": Attr("float", REQUIRED, static=False),
}


def _make_enhance(name, kernel, what):
    def impl(_key, data, min_factor, max_factor):
        _check_hwc(data, name)
        return kernel(_XP, data, _uniform(_key, min_factor, max_factor))

    impl.__doc__ = f"{what}, factor drawn uniformly from [min_factor, max_factor]."
    register(
        f"_image_random_{name}",
        aliases=(f"_npx__image_random_{name}",),
        attrs=dict(_ENHANCE),
        random=True,
    )(impl)


_make_enhance("brightness", kernels.adjust_brightness, "Scale an HWC image's values")
_make_enhance("contrast", kernels.adjust_contrast, "Blend an HWC image with its mean gray")
_make_enhance("saturation", kernels.adjust_saturation, "Blend each pixel with its gray level")
_make_enhance("hue", kernels.adjust_hue, "Rotate the hue by factor * 360 degrees")


@register(
    "_image_random_color_jitter",
    aliases=("_npx__image_random_color_jitter",),
    attrs={
        "brightness": Attr("float", REQUIRED),
        "contrast": Attr("float", REQUIRED),
        "saturation": Attr("float", REQUIRED),
        "hue": Attr("float", REQUIRED),
    },
    random=True,
)
def _random_color_jitter(_key, data, brightness, contrast, saturation, hue):
    """Brightness, contrast, saturation and hue jitter (those > 0) in a random order."""
    _check_hwc(data, "random_color_jitter")
    kperm, *keys = jax.random.split(_key, 5)
    order = jax.random.permutation(kperm, 4)
    steps = (
        (brightness, kernels.adjust_brightness, 1.0),
        (contrast, kernels.adjust_contrast, 1.0),
        (saturation, kernels.adjust_saturation, 1.0),
        (hue, kernels.adjust_hue, 0.0),
    )

    def branch(i):
        amount, kernel, center = steps[i]

        def run(img, key):
            if amount <= 0:
                return img
            return kernel(_XP, img, center + _uniform(key, -amount, amount))

        return run

    branches = [branch(i) for i in range(4)]
    for pos in range(4):
        data = jax.lax.switch(order[pos], branches, data, keys[pos])
    return data


@register(
    "_image_adjust_lighting",
    aliases=("_npx__image_adjust_lighting",),
    attrs={"alpha": Attr("floats", REQUIRED)},
)
def _adjust_lighting(data, alpha):
    """Add AlexNet's PCA lighting noise for the given R, G, B ``alpha``."""
    _check_hwc(data, "adjust_lighting")
    return kernels.adjust_lighting(_XP, data, alpha)


@register(
    "_image_random_lighting",
    aliases=("_npx__image_random_lighting",),
    attrs={"alpha_std": Attr("float", 0.05)},
    random=True,
)
def _random_lighting(_key, data, alpha_std):
    """AlexNet's PCA lighting noise with alphas drawn from N(0, alpha_std**2)."""
    _check_hwc(data, "random_lighting")
    alpha = jax.random.normal(_key, (3,), jnp.float32) * jnp.float32(alpha_std)
    return kernels.adjust_lighting(_XP, data, alpha)
