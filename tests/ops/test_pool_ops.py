"""Pooling, UpSampling and Pad vs naive NumPy references (forward and gradients)."""

import math

import numpy as np
import pytest

import gluonjax as mx
from gluonjax import nd
from gluonjax._ops import registry
from gluonjax.base import MXNetError

RNG = np.random.default_rng(1)
LOWEST = np.finfo(np.float32).min


def np_pool(x, kernel, stride, pad, pool_type, conv="valid", include_pad=True, p=2):
    """MXNet pooling rule, naive: windows start at i*stride - pad; ``full`` uses ceil;
    avg divides by the window clipped to [-pad, size + pad) (or to the real input)."""
    sizes = x.shape[2:]
    if conv == "same":
        outs = [-(-n // s) for n, s in zip(sizes, stride, strict=True)]
        tot = [
            max((o - 1) * s + k - n, 0)
            for o, s, k, n in zip(outs, stride, kernel, sizes, strict=True)
        ]
        # MXNet 1.9.1: windows start at 0 (no left pad); averages count real elements
        pad = [0 for _ in tot]
        limit = list(sizes)
    else:
        rnd = math.ceil if conv == "full" else math.floor
        outs = [
            1 + rnd((n + 2 * q - k) / s)
            for n, q, k, s in zip(sizes, pad, kernel, stride, strict=True)
        ]
        limit = [n + q for n, q in zip(sizes, pad, strict=True)]
    res = np.zeros(x.shape[:2] + tuple(outs))
    for idx in np.ndindex(*outs):
        lo = [i * s - q for i, s, q in zip(idx, stride, pad, strict=True)]
        hi = [min(a + k, lim) for a, k, lim in zip(lo, kernel, limit, strict=True)]
        rlo = [max(a, 0) for a in lo]
        rhi = [min(a + k, n) for a, k, n in zip(lo, kernel, sizes, strict=True)]
        real = x[(Ellipsis,) + tuple(slice(a, max(a, b)) for a, b in zip(rlo, rhi, strict=True))]
        real = real.reshape(x.shape[:2] + (-1,))
        n_real = real.shape[-1]
        if pool_type == "max":
            val = real.max(-1) if n_real else LOWEST
        elif pool_type == "sum":
            val = real.sum(-1)
        elif pool_type == "lp":
            val = np.sum(real**p, -1) ** (1.0 / p)
        else:
            cnt = np.prod([b - a for a, b in zip(lo, hi, strict=True)]) if include_pad else n_real
            val = real.sum(-1) / cnt if cnt else 0.0
        res[(Ellipsis,) + idx] = val
    return res


def run_with_grads(fn, arrays, head):
    xs = [nd.array(a) for a in arrays]
    for v in xs:
        v.attach_grad()
    with mx.autograd.record():
        y = fn(*xs)
    y.backward(nd.array(head))
    return y.asnumpy(), [v.grad.asnumpy() for v in xs]


def check_fd(ref, x, head, grad, eps=1e-4):
    """Directional central finite differences of sum(ref(x) * head) in float64."""
    x = np.asarray(x, np.float64)
    for _ in range(3):
        v = RNG.standard_normal(x.shape)
        fd = (np.sum(ref(x + eps * v) * head) - np.sum(ref(x - eps * v) * head)) / (2 * eps)
        assert abs(np.sum(grad * v) - fd) <= 1e-3 * (1 + abs(fd)), (np.sum(grad * v), fd)


POOL_CASES = [
    # (data shape, kernel, stride, pad)
    ((2, 2, 7), (3,), (2,), (1,)),
    ((1, 2, 5, 5), (2, 2), (2, 2), (0, 0)),
    ((1, 2, 5, 6), (3, 2), (2, 3), (1, 1)),
    ((1, 1, 6, 5), (2, 3), (), ()),
    ((1, 2, 4, 5, 3), (2, 2, 2), (2, 2, 1), (1, 0, 1)),
]


@pytest.mark.parametrize("conv", ["valid", "full"])
@pytest.mark.parametrize("pool_type", ["max", "avg", "sum", "lp"])
@pytest.mark.parametrize("case", POOL_CASES)
def test_pooling(case, pool_type, conv):
    shape, kernel, stride, pad = case
    x = RNG.uniform(0.5, 2.0, shape).astype(np.float32)
    s, p = stride or (1,) * len(kernel), pad or (0,) * len(kernel)
    kw = dict(kernel=kernel, stride=stride, pad=pad, pool_type=pool_type, pooling_convention=conv)
    if pool_type == "lp":
        kw["p_value"] = 2

    def ref(x):
        return np_pool(x, kernel, s, p, pool_type, conv)

    expect = ref(x.astype(np.float64))
    head = RNG.standard_normal(expect.shape)
    out, (grad,) = run_with_grads(lambda v: nd.Pooling(v, **kw), [x], head)
    np.testing.assert_allclose(out, expect, rtol=1e-5, atol=1e-5)
    if pool_type != "lp" or np.all(expect > 0):
        check_fd(ref, x, head, grad)


@pytest.mark.parametrize("conv", ["valid", "full"])
@pytest.mark.parametrize("case", POOL_CASES)
def test_pooling_avg_exclude_pad(case, conv):
    shape, kernel, stride, pad = case
    x = RNG.standard_normal(shape).astype(np.float32)
    s, p = stride or (1,) * len(kernel), pad or (0,) * len(kernel)

    def ref(x):
        return np_pool(x, kernel, s, p, "avg", conv, include_pad=False)

    expect = ref(x.astype(np.float64))
    head = RNG.standard_normal(expect.shape)
    out, (grad,) = run_with_grads(
        lambda v: nd.Pooling(
            v,
            kernel=kernel,
            stride=stride,
            pad=pad,
            pool_type="avg",
            pooling_convention=conv,
            count_include_pad=False,
        ),
        [x],
        head,
    )
    np.testing.assert_allclose(out, expect, rtol=1e-5, atol=1e-5)
    check_fd(ref, x, head, grad)


def test_pooling_known_values():
    # checked against MXNet 1.9.1: the last 'full' window is clipped at size + pad
    x = nd.array(np.arange(1, 8, dtype=np.float32).reshape(1, 1, 7))
    out = nd.Pooling(
        x, kernel=(3,), stride=(3,), pad=(1,), pool_type="avg", pooling_convention="full"
    )
    np.testing.assert_allclose(out.asnumpy().ravel(), [1, 4, 13 / 3], rtol=1e-6)
    out = nd.Pooling(
        x,
        kernel=(3,),
        stride=(3,),
        pad=(1,),
        pool_type="avg",
        pooling_convention="full",
        count_include_pad=False,
    )
    np.testing.assert_allclose(out.asnumpy().ravel(), [1.5, 4, 6.5], rtol=1e-6)
    x5 = nd.array(np.arange(1, 6, dtype=np.float32).reshape(1, 1, 5))
    out = nd.Pooling(x5, kernel=(2,), stride=(2,), pad=(1,), pooling_convention="full")
    np.testing.assert_allclose(out.asnumpy().ravel(), [1, 3, 5, LOWEST])
    out = nd.Pooling(-x5, kernel=(2,), stride=(2,), pad=(1,))
    np.testing.assert_allclose(out.asnumpy().ravel(), [-1, -2, -4])


@pytest.mark.parametrize("pool_type", ["max", "avg", "sum", "lp"])
@pytest.mark.parametrize("shape", [(2, 3, 5), (1, 2, 4, 3), (1, 2, 2, 3, 4)])
def test_pooling_global(shape, pool_type):
    x = RNG.uniform(0.5, 2.0, shape).astype(np.float32)
    axes = tuple(range(2, len(shape)))
    ref = {
        "max": x.max(axes, keepdims=True),
        "avg": x.mean(axes, keepdims=True),
        "sum": x.sum(axes, keepdims=True),
        "lp": np.sqrt((x**2).sum(axes, keepdims=True)),
    }[pool_type]
    out = nd.Pooling(
        nd.array(x),
        kernel=(2,) * len(axes),
        stride=(2,) * len(axes),
        pad=(1,) * len(axes),
        global_pool=True,
        pool_type=pool_type,
    )
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-5)
    out = nd.Pooling(nd.array(x), global_pool="True", pool_type=pool_type)
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-5)


@pytest.mark.parametrize("p_value", [1, 3])
def test_pooling_lp_p_value(p_value):
    x = RNG.uniform(0.5, 2.0, (1, 2, 6)).astype(np.float32)
    out = nd.Pooling(nd.array(x), kernel=(2,), stride=(2,), pool_type="lp", p_value=p_value)
    ref = np_pool(x.astype(np.float64), (2,), (2,), (0,), "lp", p=p_value)
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-5)


@pytest.mark.parametrize("layout", ["NWC", "NHWC", "NDHWC"])
@pytest.mark.parametrize("pool_type", ["max", "avg"])
def test_pooling_channel_last(layout, pool_type):
    nd_ = len(layout) - 2
    x = RNG.standard_normal((2, 3) + (5,) * nd_).astype(np.float32)
    ref = np_pool(x, (2,) * nd_, (2,) * nd_, (1,) * nd_, pool_type)
    out = nd.Pooling(
        nd.array(np.moveaxis(x, 1, -1)),
        kernel=(2,) * nd_,
        stride=(2,) * nd_,
        pad=(1,) * nd_,
        pool_type=pool_type,
        layout=layout,
    )
    np.testing.assert_allclose(out.asnumpy(), np.moveaxis(ref, 1, -1), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("case", [((1, 1, 7), (3,), (2,)), ((2, 3, 10), (4,), (3,))])
@pytest.mark.parametrize("pool_type", ["max", "avg", "sum"])
def test_pooling_same(case, pool_type):
    shape, kernel, stride = case
    x = RNG.standard_normal(shape).astype(np.float32)
    out = nd.Pooling(
        nd.array(x), kernel=kernel, stride=stride, pool_type=pool_type, pooling_convention="same"
    )
    ref = np_pool(x, kernel, stride, None, pool_type, "same")
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-5, atol=1e-6)


def test_pooling_same_is_1d_without_pad():
    # MXNet 1.9.1: 'same' is 1-D only and refuses a non-zero pad
    with pytest.raises(MXNetError, match="same"):
        nd.Pooling(nd.ones((1, 2, 5, 6)), kernel=(2, 2), stride=(2, 2), pooling_convention="same")
    with pytest.raises(MXNetError, match="pad"):
        nd.Pooling(nd.ones((1, 1, 10)), kernel=2, stride=2, pad=2, pooling_convention="same")
    # MXNet reads the first len(kernel) pad entries: (0, 0, 0) is accepted for 1-D
    out = nd.Pooling(
        nd.ones((1, 1, 10)), kernel=2, stride=2, pad=(0, 0, 0), pooling_convention="same"
    )
    assert out.shape == (1, 1, 5)


def test_pooling_errors():
    x = nd.ones((1, 1, 4, 4))
    with pytest.raises(MXNetError, match="Pooling"):
        nd.Pooling(x, pool_type="max")  # no kernel, not global
    with pytest.raises(MXNetError, match="Pooling"):
        nd.Pooling(x, kernel=(5, 5))
    with pytest.raises(MXNetError):
        nd.Pooling(x, kernel=(2, 2), pool_type="median")


def test_upsampling_nearest():
    a = RNG.standard_normal((2, 2, 2, 3)).astype(np.float32)
    b = RNG.standard_normal((2, 1, 4, 6)).astype(np.float32)
    c = RNG.standard_normal((2, 2, 4, 6)).astype(np.float32)
    up = lambda v, s: v.repeat(s, axis=2).repeat(s, axis=3)  # noqa: E731
    out, (ga,) = run_with_grads(
        lambda v: nd.UpSampling(v, scale=3, sample_type="nearest"), [a], np.ones((2, 2, 6, 9))
    )
    np.testing.assert_allclose(out, up(a, 3))
    np.testing.assert_allclose(ga, np.full(a.shape, 9.0))
    out = nd.UpSampling(nd.array(a), nd.array(b), scale=2, sample_type="nearest", num_args=2)
    np.testing.assert_allclose(out.asnumpy(), np.concatenate([up(a, 2), b], axis=1))
    out = nd.UpSampling(
        nd.array(a), nd.array(c), scale=2, sample_type="nearest", multi_input_mode="sum"
    )
    np.testing.assert_allclose(out.asnumpy(), up(a, 2) + c, rtol=1e-6)
    with pytest.raises(MXNetError, match="UpSampling"):
        nd.UpSampling(
            nd.array(a), nd.array(b), scale=2, sample_type="nearest", multi_input_mode="sum"
        )


@pytest.mark.parametrize("scale", [2, 3])
def test_upsampling_bilinear(scale):
    x = RNG.standard_normal((1, 2, 3, 3)).astype(np.float32)
    k, pad = 2 * scale - scale % 2, math.ceil((scale - 1) / 2)
    w = RNG.standard_normal((2, 1, k, k)).astype(np.float32)
    full = (3 - 1) * scale + k
    buf = np.zeros((1, 2, full, full))
    for c in range(2):  # depthwise transposed convolution by scattering
        for i in range(3):
            for j in range(3):
                rows, cols = slice(i * scale, i * scale + k), slice(j * scale, j * scale + k)
                buf[0, c, rows, cols] += x[0, c, i, j] * w[c, 0]
    ref = buf[:, :, pad : full - pad, pad : full - pad]
    out = nd.UpSampling(
        nd.array(x), nd.array(w), scale=scale, sample_type="bilinear", num_filter=2, num_args=2
    )
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-4, atol=1e-5)
    op = registry.get("UpSampling")
    attrs = op.attr_dict(op.parse_attrs(dict(scale=scale, sample_type="bilinear", num_args=2))[0])
    assert op.infer_args(attrs, {"arg0": (1, 2, 3, 3)}) == {"arg1": (2, 1, k, k)}


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect"])
@pytest.mark.parametrize(
    "shape,width",
    [((1, 2, 3, 4), (0, 0, 0, 0, 2, 1, 1, 2)), ((1, 2, 3, 3, 4), (0, 0, 1, 0, 1, 2, 0, 1, 2, 2))],
)
def test_pad(shape, width, mode):
    x = RNG.standard_normal(shape).astype(np.float32)
    pw = [(width[2 * i], width[2 * i + 1]) for i in range(len(shape))]

    def ref(v):
        if mode == "constant":
            return np.pad(v, pw, mode="constant", constant_values=1.5)
        return np.pad(v, pw, mode=mode)

    expect = ref(x.astype(np.float64))
    head = RNG.standard_normal(expect.shape)
    fn = nd.Pad if mode != "edge" else nd.pad
    out, (grad,) = run_with_grads(
        lambda v: fn(v, mode=mode, pad_width=width, constant_value=1.5), [x], head
    )
    np.testing.assert_allclose(out, expect, rtol=1e-6)
    check_fd(ref, x, head, grad)
    with pytest.raises(MXNetError, match="pad_width"):
        nd.Pad(nd.array(x), mode=mode, pad_width=(1, 1))
