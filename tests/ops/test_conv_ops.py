"""Convolution and Deconvolution vs naive NumPy references (forward and gradients)."""

import numpy as np
import pytest

import gluonjax as mx
from gluonjax import nd
from gluonjax._ops import registry
from gluonjax.base import AttrError, MXNetError

RNG = np.random.default_rng(0)


def np_conv(x, w, b, stride, pad, dilate, groups):
    """Channel-first N-d cross-correlation, naive loops over output positions."""
    nd_ = x.ndim - 2
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in pad])
    f, k = w.shape[0], w.shape[2:]
    osz = [(xp.shape[2 + i] - dilate[i] * (k[i] - 1) - 1) // stride[i] + 1 for i in range(nd_)]
    out = np.zeros((x.shape[0], f, *osz))
    cg, fg = x.shape[1] // groups, f // groups
    axes = list(range(1, nd_ + 2))
    for idx in np.ndindex(*osz):
        sl = tuple(
            slice(idx[i] * stride[i], idx[i] * stride[i] + dilate[i] * (k[i] - 1) + 1, dilate[i])
            for i in range(nd_)
        )
        patch = xp[(slice(None), slice(None)) + sl]
        for g in range(groups):
            res = np.tensordot(
                patch[:, g * cg : (g + 1) * cg], w[g * fg : (g + 1) * fg], (axes, axes)
            )
            out[(slice(None), slice(g * fg, (g + 1) * fg)) + idx] = res
    if b is not None:
        out += b.reshape((1, -1) + (1,) * nd_)
    return out


def np_deconv(x, w, b, stride, pad, dilate, adj, groups):
    """Transposed convolution by scattering every input element (channel-first)."""
    nd_ = x.ndim - 2
    n, c = x.shape[:2]
    fg, k = w.shape[1], w.shape[2:]
    cg = c // groups
    full = [
        (x.shape[2 + i] - 1) * stride[i] + dilate[i] * (k[i] - 1) + 1 + adj[i] for i in range(nd_)
    ]
    buf = np.zeros((n, fg * groups, *full))
    for idx in np.ndindex(*x.shape[2:]):
        for kk in np.ndindex(*k):
            pos = tuple(idx[i] * stride[i] + kk[i] * dilate[i] for i in range(nd_))
            for g in range(groups):
                xs = x[(slice(None), slice(g * cg, (g + 1) * cg)) + idx]  # (n, cg)
                ws = w[(slice(g * cg, (g + 1) * cg), slice(None)) + kk]  # (cg, fg)
                buf[(slice(None), slice(g * fg, (g + 1) * fg)) + pos] += xs @ ws
    crop = tuple(slice(pad[i], full[i] - pad[i]) for i in range(nd_))
    out = buf[(slice(None), slice(None)) + crop]
    if b is not None:
        out = out + b.reshape((1, -1) + (1,) * nd_)
    return out


def run_with_grads(fn, arrays, head):
    """Forward under autograd.record and backward(head); returns (out, [grads])."""
    xs = [nd.array(a) for a in arrays]
    for v in xs:
        v.attach_grad()
    with mx.autograd.record():
        y = fn(*xs)
    y.backward(nd.array(head))
    return y.asnumpy(), [v.grad.asnumpy() for v in xs]


def check_fd(ref, arrays, head, grads, eps=1e-5, n_dir=2):
    """Directional central finite differences of sum(ref(*arrays) * head) in float64."""
    arrays = [np.asarray(a, np.float64) for a in arrays]
    for i, a in enumerate(arrays):
        for _ in range(n_dir):
            v = RNG.standard_normal(a.shape)
            plus, minus = list(arrays), list(arrays)
            plus[i], minus[i] = a + eps * v, a - eps * v
            fd = (np.sum(ref(*plus) * head) - np.sum(ref(*minus) * head)) / (2 * eps)
            got = np.sum(grads[i] * v)
            assert abs(got - fd) <= 1e-3 * (1 + abs(fd)), (i, got, fd)


CONV_CASES = [
    # (data shape, num_filter, kernel, stride, pad, dilate, groups)
    ((2, 3, 7), 4, (3,), (), (), (), 1),
    ((1, 4, 9), 6, (3,), (2,), (1,), (2,), 2),
    ((2, 3, 5, 6), 4, (3, 3), (), (), (), 1),
    ((1, 4, 6, 7), 4, (3, 2), (2, 1), (1, 0), (1, 2), 2),
    ((1, 6, 5, 5), 6, (3, 3), (1, 1), (1, 1), (2, 2), 6),
    ((1, 2, 4, 5, 4), 3, (2, 3, 2), (1, 2, 1), (1, 1, 0), (), 1),
]


@pytest.mark.parametrize("no_bias", [False, True])
@pytest.mark.parametrize("case", CONV_CASES)
def test_convolution_forward_and_grad(case, no_bias):
    shape, nf, kernel, stride, pad, dilate, groups = case
    nd_ = len(kernel)
    x = RNG.standard_normal(shape).astype(np.float32)
    w = RNG.standard_normal((nf, shape[1] // groups, *kernel)).astype(np.float32)
    b = RNG.standard_normal(nf).astype(np.float32)
    s, p, d = stride or (1,) * nd_, pad or (0,) * nd_, dilate or (1,) * nd_
    kw = dict(
        kernel=kernel,
        stride=stride,
        pad=pad,
        dilate=dilate,
        num_filter=nf,
        num_group=groups,
        no_bias=no_bias,
    )
    arrays = [x, w] if no_bias else [x, w, b]

    def ref(x, w, b=None):
        return np_conv(x, w, b, s, p, d, groups)

    expect = ref(*[a.astype(np.float64) for a in arrays])
    head = RNG.standard_normal(expect.shape)
    out, grads = run_with_grads(lambda *a: nd.Convolution(*a, **kw), arrays, head)
    np.testing.assert_allclose(out, expect, rtol=1e-4, atol=1e-4)
    check_fd(ref, arrays, head, grads)


@pytest.mark.parametrize("nd_", [1, 2, 3])
def test_convolution_channel_last(nd_):
    layout = {1: "NWC", 2: "NHWC", 3: "NDHWC"}[nd_]
    x = RNG.standard_normal((2, 3) + (5,) * nd_).astype(np.float32)
    w = RNG.standard_normal((4, 3) + (2,) * nd_).astype(np.float32)
    b = RNG.standard_normal(4).astype(np.float32)
    expect = np_conv(x, w, b, (2,) * nd_, (1,) * nd_, (1,) * nd_, 1)
    last = lambda a: np.moveaxis(a, 1, -1)  # noqa: E731
    out = nd.Convolution(
        nd.array(last(x)),
        nd.array(last(w)),
        nd.array(b),
        kernel=(2,) * nd_,
        stride=(2,) * nd_,
        pad=(1,) * nd_,
        num_filter=4,
        layout=layout,
    )
    np.testing.assert_allclose(out.asnumpy(), last(expect), rtol=1e-4, atol=1e-4)


def test_convolution_string_attrs_and_infer_args():
    x = RNG.standard_normal((1, 4, 5, 5)).astype(np.float32)
    w = RNG.standard_normal((6, 2, 3, 3)).astype(np.float32)
    out = nd.Convolution(
        nd.array(x),
        nd.array(w),
        kernel="(3, 3)",
        num_filter="6",
        num_group="2",
        no_bias="True",
        pad="(1, 1)",
    )
    np.testing.assert_allclose(
        out.asnumpy(), np_conv(x, w, None, (1, 1), (1, 1), (1, 1), 2), rtol=1e-4, atol=1e-4
    )
    op = registry.get("Convolution")
    attrs = op.attr_dict(op.parse_attrs(dict(kernel=(3, 3), num_filter=6, num_group=2))[0])
    assert op.infer_args(attrs, {"data": (1, 4, 5, 5)}) == {"weight": (6, 2, 3, 3), "bias": (6,)}
    attrs = op.attr_dict(op.parse_attrs(dict(kernel=(3,), num_filter=6, layout="NWC"))[0])
    assert op.infer_args(attrs, {"data": (1, 5, 4)}) == {"weight": (6, 3, 4), "bias": (6,)}


def test_convolution_errors():
    x, b = nd.ones((1, 3, 5, 5)), nd.zeros((4,))
    with pytest.raises(MXNetError) as err:
        nd.Convolution(x, nd.ones((4, 3, 2, 2)), b, kernel=(3, 3), num_filter=4)
    msg = str(err.value)
    assert "Convolution" in msg and "(4, 3, 2, 2)" in msg and "(4, 3, 3, 3)" in msg
    with pytest.raises(AttrError):
        nd.Convolution(x, nd.ones((4, 3, 3, 3)), b, num_filter=4)
    with pytest.raises(MXNetError, match="Convolution"):
        nd.Convolution(x, nd.ones((4, 3, 3)), b, kernel=(3,), num_filter=4)
    with pytest.raises(MXNetError, match="num_group"):
        nd.Convolution(x, nd.ones((4, 1, 3, 3)), b, kernel=(3, 3), num_filter=4, num_group=2)
    with pytest.raises(AttrError):
        nd.Convolution(x, nd.ones((4, 3, 3, 3)), b, kernel=(3, 3), num_filter=4, layout="XY")
    with pytest.raises(MXNetError, match="larger than the padded input"):
        nd.Convolution(x, nd.ones((4, 3, 6, 6)), b, kernel=(6, 6), num_filter=4)


DECONV_CASES = [
    # (data shape, num_filter, kernel, stride, pad, dilate, adj, groups)
    ((2, 3, 4), 2, (3,), (), (), (), (), 1),
    ((1, 4, 5), 6, (3,), (2,), (1,), (1,), (1,), 2),
    ((1, 3, 3, 4), 2, (3, 3), (2, 2), (1, 0), (1, 1), (1, 0), 1),
    ((1, 4, 3, 3), 4, (2, 3), (1, 2), (0, 1), (2, 1), (0, 1), 4),
    ((1, 2, 2, 3, 2), 2, (2, 2, 2), (2, 1, 2), (0, 1, 0), (), (), 1),
]


@pytest.mark.parametrize("no_bias", [True, False])
@pytest.mark.parametrize("case", DECONV_CASES)
def test_deconvolution_forward_and_grad(case, no_bias):
    shape, nf, kernel, stride, pad, dilate, adj, groups = case
    nd_ = len(kernel)
    x = RNG.standard_normal(shape).astype(np.float32)
    w = RNG.standard_normal((shape[1], nf // groups, *kernel)).astype(np.float32)
    b = RNG.standard_normal(nf).astype(np.float32)
    s, p = stride or (1,) * nd_, pad or (0,) * nd_
    d, a = dilate or (1,) * nd_, adj or (0,) * nd_
    kw = dict(
        kernel=kernel,
        stride=stride,
        pad=pad,
        dilate=dilate,
        adj=adj,
        num_filter=nf,
        num_group=groups,
        no_bias=no_bias,
    )
    arrays = [x, w] if no_bias else [x, w, b]

    def ref(x, w, b=None):
        return np_deconv(x, w, b, s, p, d, a, groups)

    expect = ref(*[v.astype(np.float64) for v in arrays])
    head = RNG.standard_normal(expect.shape)
    out, grads = run_with_grads(lambda *v: nd.Deconvolution(*v, **kw), arrays, head)
    np.testing.assert_allclose(out, expect, rtol=1e-4, atol=1e-4)
    check_fd(ref, arrays, head, grads)


@pytest.mark.parametrize("target", [(10, 10), (9, 9), (10, 11)])
def test_deconvolution_target_shape(target):
    x = RNG.standard_normal((1, 2, 5, 5)).astype(np.float32)
    w = RNG.standard_normal((2, 3, 3, 3)).astype(np.float32)
    out = nd.Deconvolution(
        nd.array(x),
        nd.array(w),
        kernel=(3, 3),
        stride=(2, 2),
        num_filter=3,
        target_shape=target,
        pad=(5, 5),
    )
    assert out.shape == (1, 3) + target
    # full size is 2*4 + 3 = 11; pad = ceil((11 - t)/2), adj = (11 - t) % 2
    p = tuple((11 - t + 1) // 2 for t in target)
    a = tuple((11 - t) % 2 for t in target)
    np.testing.assert_allclose(
        out.asnumpy(), np_deconv(x, w, None, (2, 2), p, (1, 1), a, 1), rtol=1e-4, atol=1e-4
    )
    with pytest.raises(MXNetError, match="target_shape"):
        nd.Deconvolution(
            nd.array(x),
            nd.array(w),
            kernel=(3, 3),
            stride=(2, 2),
            num_filter=3,
            target_shape=(12, 12),
        )


def test_deconvolution_nhwc_and_infer_args():
    x = RNG.standard_normal((1, 4, 3, 3)).astype(np.float32)
    w = RNG.standard_normal((4, 1, 3, 3)).astype(np.float32)
    expect = np_deconv(x, w, None, (2, 2), (1, 1), (1, 1), (1, 1), 2)
    out = nd.Deconvolution(
        nd.array(x.transpose(0, 2, 3, 1)),
        nd.array(w.transpose(0, 2, 3, 1)),
        kernel=(3, 3),
        stride=(2, 2),
        pad=(1, 1),
        adj=(1, 1),
        num_filter=2,
        num_group=2,
        layout="NHWC",
    )
    np.testing.assert_allclose(out.asnumpy(), expect.transpose(0, 2, 3, 1), rtol=1e-4, atol=1e-4)
    op = registry.get("Deconvolution")
    attrs = op.attr_dict(op.parse_attrs(dict(kernel=(3, 3), num_filter=4, num_group=2))[0])
    assert attrs["no_bias"] is True
    assert op.infer_args(attrs, {"data": (1, 6, 5, 5)}) == {"weight": (6, 2, 3, 3)}
    with pytest.raises(MXNetError, match="Deconvolution"):
        nd.Deconvolution(
            nd.array(x), nd.ones((4, 1, 3, 3)), kernel=(3, 3), num_filter=4, num_group=2
        )
