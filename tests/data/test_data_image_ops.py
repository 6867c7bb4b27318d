"""mx.image, nd.image ops and vision transforms against MXNet 1.9.1's outputs on the same images."""

from __future__ import annotations

import random
import sys

import numpy as np
import pytest

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from _data_fixtures import REF, image_paths  # noqa: E402

import gluonjax as mx  # noqa: E402
from gluonjax._data import kernels  # noqa: E402
from gluonjax.gluon.data.vision import transforms as T  # noqa: E402

PATHS = image_paths()


def same(got, name, atol=0):
    got = got.asnumpy() if hasattr(got, "asnumpy") else np.asarray(got)
    ref = REF[name]
    assert got.shape == ref.shape and got.dtype == ref.dtype, (name, got.shape, got.dtype)
    np.testing.assert_allclose(got.astype(np.float64), ref.astype(np.float64), atol=atol, rtol=0)


def img():
    return mx.image.imread(PATHS[0])


@pytest.mark.parametrize("i", range(4))
def test_decode_is_pixel_exact(i):
    same(mx.image.imread(PATHS[i]), f"imread_{i}")
    same(mx.image.imread(PATHS[i], 0), f"imread_gray_{i}")
    with open(PATHS[i], "rb") as f:
        same(mx.image.imdecode(f.read(), to_rgb=False), f"imdecode_bgr_{i}")


@pytest.mark.parametrize("interp", [0, 1, 3, 4])
def test_imresize_exact(interp):
    same(mx.image.imresize(img(), 17, 13, interp=interp), f"imresize_{interp}")


def test_imresize_cubic_within_one():
    # OpenCV 3.4.2 (MXNet's) and OpenCV 4/5 round bicubic slightly differently
    same(mx.image.imresize(img(), 17, 13, interp=2), "imresize_2", atol=1)
    same(mx.image.resize_short(img(), 15), "resize_short", atol=1)


def test_crops_and_borders():
    out, box = mx.image.center_crop(img(), (12, 10))
    same(out, "center_crop")
    same(np.array(box), "center_crop_box")
    random.seed(3)
    out, box = mx.image.random_crop(img(), (12, 10))
    same(out, "random_crop")
    same(np.array(box), "random_crop_box")
    random.seed(4)  # the same python draws give MXNet's box
    out, box = mx.image.random_size_crop(img(), (9, 11), 0.3, (0.75, 1.33))
    same(np.array(box), "random_size_crop_box")
    same(out, "random_size_crop", atol=1)  # bicubic, see above
    same(mx.image.copyMakeBorder(img(), 1, 2, 3, 4, type=0, value=7), "border")
    same(mx.image.copyMakeBorder(img(), 2, 1, 0, 3, type=1), "border_rep")
    assert mx.image.scale_down((10, 20), (15, 30)) == tuple(REF["scale_down"])


def test_transforms_on_host_images_exact():
    x = img()
    t = T.ToTensor()(x)
    same(t, "to_tensor")
    same(T.Normalize((0.1, 0.2, 0.3), (0.5, 0.6, 0.7))(t), "normalize")
    same(T.Normalize(0.5, 0.25)(t), "normalize_scalar")
    same(T.Resize(14)(x), "resize_int")
    same(T.Resize(14, keep_ratio=True)(x), "resize_keep")
    same(T.Resize((15, 9), interpolation=0)(x), "resize_tuple_nearest")
    same(T.CenterCrop((10, 8))(x), "center_crop_t")
    same(T.CropResize(2, 3, 10, 8, size=(6, 5), interpolation=1)(x), "crop_resize")
    same(T.Cast("float16")(x), "cast")
    random.seed(7)
    same(T.RandomResizedCrop((12, 9), scale=(0.2, 1.0))(x), "random_resized_crop")
    comp = T.Compose([T.ToTensor(), T.Normalize((0.1, 0.2, 0.3), (0.5, 0.6, 0.7))])
    same(comp(x), "normalize")


def test_registry_ops_on_device_arrays():
    dev = mx.nd.array(img().asnumpy(), dtype="uint8")
    devf = dev.astype("float32")
    same(mx.nd.image.to_tensor(mx.nd.stack(dev, dev)), "to_tensor_batch", atol=1e-7)
    same(mx.nd.image.resize(mx.nd.stack(dev, dev), (7, 5)), "resize_batch")
    same(mx.nd.image.flip_left_right(dev), "flip_lr")
    same(mx.nd.image.flip_top_bottom(dev), "flip_tb")
    same(mx.nd.image.crop(dev, 1, 2, 5, 6), "crop")
    same(mx.nd.image.adjust_lighting(dev, alpha=(0.3, -0.2, 0.1)), "lighting_u8")
    same(mx.nd.image.adjust_lighting(devf, alpha=(0.3, -0.2, 0.1)), "lighting_f32")
    same(T.ToTensor()(dev), "to_tensor", atol=1e-7)
    sym = mx.sym.image.to_tensor(mx.sym.var("x"))
    assert sym.infer_shape(x=(5, 6, 3))[1] == [(3, 5, 6)]


@pytest.mark.parametrize("name", ["brightness", "contrast", "hue"])
@pytest.mark.parametrize("alpha", [0.6, 1.3])
def test_random_enhance_given_the_same_draw(name, alpha):
    # min_factor == max_factor fixes MXNet's draw; the host kernels are exact,
    # the jax ops agree to float rounding (XLA's own division and summation order)
    x = img()
    same(getattr(kernels, f"adjust_{name}")(np, x.asnumpy(), alpha), f"{name}_u8_{alpha}")
    f = x.asnumpy().astype(np.float32)
    same(getattr(kernels, f"adjust_{name}")(np, f, alpha), f"{name}_f32_{alpha}", atol=1e-4)
    op = getattr(mx.nd.image, f"random_{name}")
    dev = mx.nd.array(x.asnumpy(), dtype="uint8")
    same(op(dev, min_factor=alpha, max_factor=alpha), f"{name}_u8_{alpha}", atol=1)
    same(op(dev.astype("float32"), min_factor=alpha, max_factor=alpha), f"{name}_f32_{alpha}", 1e-3)


@pytest.mark.parametrize("alpha", [0.6, 1.3])
def test_saturation_uses_full_luma_not_mxnets_blue_only_gray(alpha):
    # MXNet 1.9.1 assigns (not adds) the gray terms, so its gray level is 0.114 * B;
    # gluonjax uses 0.299 R + 0.587 G + 0.114 B (as mx.image.SaturationJitterAug does)
    x = img().asnumpy().astype(np.float32)
    a = np.float32(alpha)
    blue_gray = x[..., 2:3] * np.float32(0.114) * (np.float32(1) - a)
    np.testing.assert_allclose(REF[f"saturation_f32_{alpha}"], blue_gray + x * a, atol=1e-4)
    luma = (x * np.array([0.299, 0.587, 0.114], np.float32)).sum(-1, keepdims=True)
    got = kernels.adjust_saturation(np, x, alpha)
    np.testing.assert_allclose(got, luma * (1 - a) + x * a, atol=1e-3)


def test_random_ops_follow_the_seed():
    x = img()
    mx.random.seed(3)
    a = [T.RandomFlipLeftRight()(x).asnumpy() for _ in range(6)]
    mx.random.seed(3)
    b = [T.RandomFlipLeftRight()(x).asnumpy() for _ in range(6)]
    assert all((p == q).all() for p, q in zip(a, b))
    flipped = x.asnumpy()[:, ::-1]
    assert all((p == x.asnumpy()).all() or (p == flipped).all() for p in a)
    assert any((p == flipped).all() for p in a) and any((p == x.asnumpy()).all() for p in a)
    out = T.RandomColorJitter(0.2, 0.2, 0.2, 0.05)(x)
    assert out.shape == x.shape and out.dtype == np.uint8
    assert T.RandomLighting(0.1)(x).shape == x.shape


def test_rotation_and_random_apply():
    t = T.ToTensor()(img())
    r = mx.image.imrotate(t, 90)
    assert r.shape == t.shape
    with pytest.raises(TypeError):
        mx.image.imrotate(img(), 10)
    random.seed(0)
    out = T.RandomApply(T.Cast("float16"), p=1.0)(img())
    assert out.dtype == np.float16


AUGS = {
    "aug_resize": lambda: mx.image.ResizeAug(11),
    "aug_force": lambda: mx.image.ForceResizeAug((9, 7)),
    "aug_center": lambda: mx.image.CenterCropAug((8, 8)),
    "aug_randsized": lambda: mx.image.RandomSizedCropAug((8, 9), 0.3, (0.75, 1.33)),
    "aug_flip": lambda: mx.image.HorizontalFlipAug(1.0),
    "aug_brightness": lambda: mx.image.BrightnessJitterAug(0.4),
    "aug_contrast": lambda: mx.image.ContrastJitterAug(0.4),
    "aug_saturation": lambda: mx.image.SaturationJitterAug(0.4),
    "aug_hue": lambda: mx.image.HueJitterAug(0.3),
    "aug_gray": lambda: mx.image.RandomGrayAug(1.0),
    "aug_norm": lambda: mx.image.ColorNormalizeAug(mx.nd.array([1, 2, 3]), mx.nd.array([2, 3, 4])),
    "aug_lighting": lambda: mx.image.LightingAug(
        0.5, np.array([55.46, 4.794, 1.148]), np.array([[-0.5, 0.7, 0.4]] * 3)
    ),
}


@pytest.mark.parametrize("name", sorted(AUGS))
def test_augmenters_with_the_same_seed(name):
    random.seed(11)
    np.random.seed(11)
    src = img()
    if name not in ("aug_resize", "aug_force", "aug_center", "aug_randsized"):
        src = src.astype("float32")
    atol = 1 if name in ("aug_resize", "aug_force", "aug_center", "aug_randsized") else 2e-3
    same(AUGS[name]()(src), name, atol=atol)
    assert len(mx.image.CreateAugmenter((3, 8, 8), resize=10, rand_crop=True, mean=True)) == 4


def test_each_image_op_by_its_name_against_numpy():
    # the identity settings of the random ops, and the deterministic ones, against NumPy
    x = np.random.RandomState(0).randint(0, 255, (6, 5, 3)).astype(np.float32)
    nd_x = mx.nd.array(x)
    im = mx.nd.image
    np.testing.assert_array_equal(im.flip_top_bottom(nd_x).asnumpy(), x[::-1])
    np.testing.assert_array_equal(im.flip_left_right(nd_x).asnumpy(), x[:, ::-1])
    for got, flipped in (
        (im.random_flip_left_right(nd_x).asnumpy(), x[:, ::-1]),
        (im.random_flip_top_bottom(nd_x).asnumpy(), x[::-1]),
    ):
        assert (got == x).all() or (got == flipped).all()
    np.testing.assert_allclose(
        im.random_contrast(nd_x, min_factor=1.0, max_factor=1.0).asnumpy(), x, atol=1e-3
    )
    np.testing.assert_array_equal(im.crop(nd_x, x=1, y=2, width=3, height=4).asnumpy(), x[2:6, 1:4])
    np.testing.assert_allclose(im.random_lighting(nd_x, alpha_std=0.0).asnumpy(), x, atol=1e-4)
    np.testing.assert_allclose(
        im.random_saturation(nd_x, min_factor=1.0, max_factor=1.0).asnumpy(), x, atol=1e-3
    )
    np.testing.assert_allclose(
        im.random_hue(nd_x, min_factor=0.0, max_factor=0.0).asnumpy(), x, atol=1e-2
    )
    np.testing.assert_allclose(
        im.random_color_jitter(nd_x, 0.0, 0.0, 0.0, 0.0).asnumpy(), x, atol=1e-2
    )
    np.testing.assert_allclose(
        im.random_brightness(nd_x, min_factor=0.5, max_factor=0.5).asnumpy(), x * 0.5, rtol=1e-6
    )
    assert im.resize(nd_x, size=(4, 3)).shape == (3, 4, 3)
    chw = x.transpose(2, 0, 1) / 255
    got = im.normalize(mx.nd.array(chw), mean=(0.5, 0.4, 0.3), std=(0.2, 0.2, 0.1)).asnumpy()
    want = (chw - np.array([0.5, 0.4, 0.3])[:, None, None]) / np.array([0.2, 0.2, 0.1])[
        :, None, None
    ]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_batchnorm_with_relu_op_is_relu_of_batchnorm():
    rs = np.random.RandomState(1)
    x, g, b = (
        rs.randn(4, 3, 2).astype(np.float32),
        rs.rand(3).astype(np.float32),
        rs.randn(3).astype(np.float32),
    )
    mean, var = rs.randn(3).astype(np.float32), rs.rand(3).astype(np.float32) + 0.5
    got = mx.nd.contrib.BatchNormWithReLU(
        *(mx.nd.array(a) for a in (x, g, b, mean, var)),
        use_global_stats=True,
        fix_gamma=False,
        eps=1e-5,
    ).asnumpy()
    norm = (x - mean[:, None]) / np.sqrt(var[:, None] + 1e-5) * g[:, None] + b[:, None]
    np.testing.assert_allclose(got, np.maximum(norm, 0), rtol=1e-5, atol=1e-5)
