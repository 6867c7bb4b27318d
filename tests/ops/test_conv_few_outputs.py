"""Convolutions whose kernel is larger than their (small) output are computed by patches.

XLA differentiates a convolution with respect to its input by a transposed
convolution over the input padded by the kernel size: for MXNet's test_conv2d_16c
(a 224x224 kernel over 224x224 images) that took minutes. Values and gradients are
checked against naive NumPy and jax's own convolution.
"""

import jax
import numpy as np
import pytest
from test_conv_ops import np_conv

import gluonjax as mx
from gluonjax import nd
from gluonjax._ops.defs import conv

RNG = np.random.default_rng(3)

CASES = [  # data shape, num_filter, kernel, stride, pad, dilate, groups
    ((2, 4, 5, 5), 6, (5, 5), (1, 1), (0, 0), (1, 1), 2),
    ((2, 3, 7, 6), 4, (5, 4), (2, 3), (1, 2), (1, 1), 1),
    ((2, 3, 9), 4, (4,), (2,), (1,), (2,), 1),
    ((1, 2, 4, 4, 4), 3, (3, 3, 3), (1, 1, 1), (0, 0, 0), (1, 1, 1), 1),
]


def _ref(x, w, stride, pad, dilate, groups):
    nd_ = x.ndim - 2
    return jax.lax.conv_general_dilated(
        x, w, stride, [(p, p) for p in pad], rhs_dilation=dilate,
        dimension_numbers=conv._specs(nd_, None), feature_group_count=groups,
    )  # fmt: skip


@pytest.mark.parametrize("shape, nf, kernel, stride, pad, dilate, groups", CASES)
def test_patch_path_matches_numpy_and_jax(shape, nf, kernel, stride, pad, dilate, groups):
    x = RNG.standard_normal(shape).astype(np.float32)
    w = RNG.standard_normal((nf, shape[1] // groups, *kernel)).astype(np.float32)
    out_spatial = [
        (s + 2 * p - d * (k - 1) - 1) // st + 1
        for s, k, st, p, d in zip(shape[2:], kernel, stride, pad, dilate)
    ]
    assert conv._few_outputs(out_spatial, kernel)  # the cases exercise the patch path
    xs, ws = mx.nd.array(x), mx.nd.array(w)
    xs.attach_grad()
    ws.attach_grad()
    with mx.autograd.record():
        y = nd.Convolution(
            xs, ws, kernel=kernel, stride=stride, pad=pad, dilate=dilate,
            num_filter=nf, num_group=groups, no_bias=True,
        )  # fmt: skip
        (y * y).sum().backward()
    np.testing.assert_allclose(
        y.asnumpy(), np_conv(x, w, None, stride, pad, dilate, groups), rtol=1e-4, atol=1e-4
    )
    gx, gw = jax.grad(lambda a, b: (_ref(a, b, stride, pad, dilate, groups) ** 2).sum(), (0, 1))(
        x, w
    )
    np.testing.assert_allclose(xs.grad.asnumpy(), gx, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(ws.grad.asnumpy(), gw, rtol=1e-4, atol=1e-3)


def test_channel_last_patch_path():
    x = RNG.standard_normal((2, 6, 5, 4)).astype(np.float32)  # NHWC
    w = RNG.standard_normal((4, 5, 4, 2)).astype(np.float32)  # OHWI, 2 groups
    got = nd.Convolution(
        mx.nd.array(x), mx.nd.array(w), kernel=(5, 4), num_filter=4, num_group=2,
        layout="NHWC", no_bias=True,
    )  # fmt: skip
    want = np_conv(
        x.transpose(0, 3, 1, 2), w.transpose(0, 3, 1, 2), None, (1, 1), (0, 0), (1, 1), 2
    )
    np.testing.assert_allclose(got.asnumpy(), want.transpose(0, 2, 3, 1), rtol=1e-4, atol=1e-4)


def test_ordinary_convolutions_keep_xla_convolution():
    assert not conv._few_outputs((5, 5), (3, 3))
    assert not conv._few_outputs((20,), (30,))  # 20 outputs: more than the patch budget
    assert conv._few_outputs((1, 1), (224, 224))
