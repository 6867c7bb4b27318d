"""Basic layers against NumPy formulas (semantics checked with MXNet 1.9.1)."""

from __future__ import annotations

import numpy as np
import pytest

import gluonjax as mx
from gluonjax import nd
from gluonjax.base import DeferredInitializationError
from gluonjax.gluon import nn

RNG = np.random.RandomState(3)


def _np(*shape):
    return RNG.randn(*shape).astype(np.float32)


def _maybe_hybridize(blk, hybrid):
    if hybrid:
        blk.hybridize()
    return blk


HYB = pytest.mark.parametrize("hybrid", [False, True])


# ---------------------------------------------------------------- deferred init (shape 0)
@pytest.mark.parametrize(
    "make, x_shape, expect",
    [
        (lambda: nn.Dense(3), (2, 5), {"weight": (3, 5), "bias": (3,)}),
        (lambda: nn.Dense(3, flatten=False), (2, 4, 5), {"weight": (3, 5), "bias": (3,)}),
        (lambda: nn.Dense(3), (2, 2, 3), {"weight": (3, 6), "bias": (3,)}),
        (
            lambda: nn.BatchNorm(),
            (2, 4, 3),
            {"gamma": (4,), "beta": (4,), "running_mean": (4,), "running_var": (4,)},
        ),
        (
            lambda: nn.BatchNorm(axis=-1),
            (2, 3, 5),
            {"gamma": (5,), "beta": (5,), "running_mean": (5,), "running_var": (5,)},
        ),
        (lambda: nn.LayerNorm(), (2, 3, 6), {"gamma": (6,), "beta": (6,)}),
        (lambda: nn.InstanceNorm(), (2, 4, 3), {"gamma": (4,), "beta": (4,)}),
        # MXNet 1.9.1: GroupNorm's gamma/beta have one value per group
        (lambda: nn.GroupNorm(num_groups=2), (2, 4, 3), {"gamma": (2,), "beta": (2,)}),
    ],
)
def test_deferred_shapes_inferred_at_first_forward(make, x_shape, expect):
    layer = make()
    layer.initialize()
    for attr in expect:  # unknown dims are deferred until the forward
        p = getattr(layer, attr)
        if 0 in p.shape:
            with pytest.raises(DeferredInitializationError):
                p.data()
    layer(nd.ones(x_shape))
    for attr, shape in expect.items():
        p = getattr(layer, attr)
        assert p.shape == shape
        assert p.data().shape == shape


# ---------------------------------------------------------------- Dense
@HYB
@pytest.mark.parametrize(
    "act, fn",
    [
        (None, lambda v: v),
        ("relu", lambda v: np.maximum(v, 0)),
        ("sigmoid", lambda v: 1 / (1 + np.exp(-v))),
        ("tanh", np.tanh),
        ("softrelu", lambda v: np.log1p(np.exp(v))),
    ],
)
def test_dense_activation(hybrid, act, fn):
    d = _maybe_hybridize(nn.Dense(3, activation=act), hybrid)
    d.initialize(mx.init.Normal(0.5))
    x = _np(2, 4)
    out = d(nd.array(x)).asnumpy()
    w, b = d.weight.data().asnumpy(), d.bias.data().asnumpy()
    np.testing.assert_allclose(out, fn(x @ w.T + b), rtol=1e-5, atol=1e-6)


@HYB
@pytest.mark.parametrize("flatten", [True, False])
def test_dense_flatten_no_bias(hybrid, flatten):
    d = _maybe_hybridize(nn.Dense(2, use_bias=False, flatten=flatten), hybrid)
    d.initialize(mx.init.Normal(0.5))
    assert d.bias is None and len(d.collect_params()) == 1
    x = _np(2, 3, 4)
    out = d(nd.array(x)).asnumpy()
    w = d.weight.data().asnumpy()
    ref = x.reshape(2, -1) @ w.T if flatten else x @ w.T
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6)


def test_dense_float16():
    d = nn.Dense(2, in_units=3, dtype="float16")
    d.initialize(mx.init.One())
    assert d.weight.data().dtype == np.float16
    out = d(nd.ones((1, 3), dtype="float16"))
    assert out.dtype == np.float16
    np.testing.assert_array_equal(out.asnumpy(), [[3, 3]])


# ---------------------------------------------------------------- Dropout
def test_dropout_train_scaling_and_predict_identity():
    d = nn.Dropout(0.5)
    x = nd.ones((2000,))
    np.testing.assert_array_equal(d(x).asnumpy(), np.ones(2000))  # predict mode
    with mx.autograd.record():
        y = d(x).asnumpy()
    assert set(np.unique(y)) <= {0.0, 2.0}  # kept values are scaled by 1/(1-p)
    assert 0.4 < (y == 0).mean() < 0.6


def test_dropout_hybridized_new_mask_each_call():
    d = nn.Dropout(0.5)
    d.hybridize()
    x = nd.ones((200,))
    with mx.autograd.train_mode():
        a, b = d(x).asnumpy(), d(x).asnumpy()
    assert not np.array_equal(a, b)
    assert set(np.unique(a)) <= {0.0, 2.0}
    np.testing.assert_array_equal(d(x).asnumpy(), np.ones(200))


def test_dropout_seed_reproducible():
    d = nn.Dropout(0.5)
    d.hybridize()
    x = nd.ones((100,))
    mx.random.seed(7)
    with mx.autograd.train_mode():
        a = d(x).asnumpy()
    mx.random.seed(7)
    with mx.autograd.train_mode():
        b = d(x).asnumpy()
    np.testing.assert_array_equal(a, b)


def test_dropout_axes_shares_mask():
    d = nn.Dropout(0.5, axes=(1,))
    with mx.autograd.train_mode():
        y = d(nd.ones((50, 6))).asnumpy()
    assert np.all(y == y[:, :1])  # same value along the shared axis


# ---------------------------------------------------------------- BatchNorm
def _bn_ref(x, gamma, beta, eps=1e-5):
    axes = (0, 2)
    m, v = x.mean(axes), x.var(axes)  # biased variance in the output
    n = (x - m[None, :, None]) / np.sqrt(v[None, :, None] + eps)
    return n * gamma[None, :, None] + beta[None, :, None], m, v


@pytest.mark.parametrize("momentum", [0.9, 0.7])
def test_batchnorm_running_stats_eager_hybrid_formula(momentum):
    x = _np(4, 3, 5)
    res = []
    for hybrid in (False, True):
        bn = _maybe_hybridize(nn.BatchNorm(momentum=momentum), hybrid)
        bn.initialize()
        with mx.autograd.record():
            y = bn(nd.array(x))
        y.backward()  # MXNet 1.9.1 applies the running update by the end of backward
        res.append((y.asnumpy(), bn.running_mean.data().asnumpy(), bn.running_var.data().asnumpy()))
    ref_y, m, v = _bn_ref(x, np.ones(3), np.zeros(3))
    for y, rm, rv in res:
        np.testing.assert_allclose(y, ref_y, rtol=1e-4, atol=1e-5)
        # MXNet 1.9.1: running = momentum * running + (1 - momentum) * batch, biased var
        np.testing.assert_allclose(rm, (1 - momentum) * m, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(rv, momentum + (1 - momentum) * v, rtol=1e-5, atol=1e-6)


@HYB
def test_batchnorm_momentum_is_a_float32(hybrid):
    # MXNet's momentum attribute is a C float: 1 - 0.9f = 0.100000024, so a batch mean of 1000
    # moves a zero running mean to 100.0000229 (values printed by MXNet 1.9.1), not 100
    x = np.full((4, 2, 2), 1000.0, np.float32)
    x[:, 1] = -3.7
    bn = _maybe_hybridize(nn.BatchNorm(in_channels=2, momentum=0.9), hybrid)
    bn.initialize()
    bn.running_mean.set_data(nd.array([0.0, 5.0]))
    with mx.autograd.record():
        y = bn(nd.array(x))
    y.backward()
    rm = bn.running_mean.data().asnumpy()
    assert rm[0] == np.float32(100.0000228881836)
    # 5 * 0.9f + (-3.7f) * 0.100000024f: MXNet prints 4.130000114; XLA may fuse it (1 ulp)
    np.testing.assert_allclose(rm[1], 4.130000114440918, rtol=2e-7)


@HYB
def test_batchnorm_predict_uses_running_stats(hybrid):
    bn = _maybe_hybridize(nn.BatchNorm(in_channels=2), hybrid)
    bn.initialize()
    bn.running_mean.set_data(nd.array([1.0, 2.0]))
    bn.running_var.set_data(nd.array([4.0, 9.0]))
    bn.gamma.set_data(nd.array([2.0, 1.0]))
    bn.beta.set_data(nd.array([0.5, 0.0]))
    x = _np(3, 2, 2)
    std = np.sqrt(np.array([4, 9.0]) + 1e-5)[None, :, None]
    ref = (x - np.array([1, 2.0])[None, :, None]) / std
    ref = ref * np.array([2, 1.0])[None, :, None] + np.array([0.5, 0])[None, :, None]
    np.testing.assert_allclose(bn(nd.array(x)).asnumpy(), ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(bn.running_mean.data().asnumpy(), [1, 2])  # unchanged


@HYB
def test_batchnorm_use_global_stats_in_training(hybrid):
    bn = _maybe_hybridize(nn.BatchNorm(in_channels=2, use_global_stats=True), hybrid)
    bn.initialize()
    bn.running_mean.set_data(nd.array([1.0, 2.0]))
    bn.running_var.set_data(nd.array([4.0, 9.0]))
    with mx.autograd.record():
        out = bn(nd.ones((1, 2, 2)))
    # MXNet 1.9.1 gives [0, 0, -1/3, -1/3]
    ref = (1 - np.array([1, 2.0])) / np.sqrt(np.array([4, 9.0]) + 1e-5)
    np.testing.assert_allclose(out.asnumpy().ravel(), np.repeat(ref, 2), rtol=1e-5, atol=1e-6)


@HYB
def test_batchnorm_scale_false_ignores_gamma(hybrid):
    bn = _maybe_hybridize(nn.BatchNorm(in_channels=2, scale=False), hybrid)
    bn.initialize()
    bn.gamma.set_data(nd.array([5.0, 5.0]))
    assert bn.gamma.grad_req == "null"
    x = np.arange(8.0, dtype=np.float32).reshape(2, 2, 2)
    with mx.autograd.record():
        out = bn(nd.array(x))
    ref, _, _ = _bn_ref(x, np.ones(2), np.zeros(2))
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------- other norms
@HYB
def test_layernorm(hybrid):
    ln = _maybe_hybridize(nn.LayerNorm(), hybrid)
    ln.initialize()
    x = _np(2, 3, 6)
    ln(nd.array(x))
    g, b = _np(6), _np(6)
    ln.gamma.set_data(nd.array(g))
    ln.beta.set_data(nd.array(b))
    n = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(ln(nd.array(x)).asnumpy(), n * g + b, rtol=1e-4, atol=1e-5)


@HYB
def test_instancenorm(hybrid):
    inn = _maybe_hybridize(nn.InstanceNorm(in_channels=4, scale=True), hybrid)
    inn.initialize()
    g, b = np.array([1, 2, 3, 4.0], np.float32), np.array([0, 1, 0, 1.0], np.float32)
    inn.gamma.set_data(nd.array(g))
    inn.beta.set_data(nd.array(b))
    x = _np(2, 4, 3)
    n = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    ref = n * g[None, :, None] + b[None, :, None]
    np.testing.assert_allclose(inn(nd.array(x)).asnumpy(), ref, rtol=1e-4, atol=1e-5)


@HYB
def test_groupnorm_per_group_affine(hybrid):
    gn = _maybe_hybridize(nn.GroupNorm(num_groups=2), hybrid)
    gn.initialize()
    x = _np(2, 4, 3)
    gn(nd.array(x))
    gn.gamma.set_data(nd.array([2.0, 3.0]))  # MXNet 1.9.1: one gamma/beta per group
    gn.beta.set_data(nd.array([0.5, -1.0]))
    xr = x.reshape(2, 2, -1)
    n = (xr - xr.mean(-1, keepdims=True)) / np.sqrt(xr.var(-1, keepdims=True) + 1e-5)
    ref = n * np.array([2.0, 3])[None, :, None] + np.array([0.5, -1])[None, :, None]
    np.testing.assert_allclose(
        gn(nd.array(x)).asnumpy(), ref.reshape(x.shape), rtol=1e-4, atol=1e-5
    )


# ---------------------------------------------------------------- Embedding, Flatten, Lambda
@HYB
def test_embedding_forward_and_grad(hybrid):
    e = _maybe_hybridize(nn.Embedding(4, 2), hybrid)
    e.initialize()
    idx = np.array([[0, 2], [2, 3]])
    with mx.autograd.record():
        out = e(nd.array(idx))
    np.testing.assert_allclose(out.asnumpy(), e.weight.data().asnumpy()[idx])
    out.backward()
    expect = np.zeros((4, 2))
    np.add.at(expect, idx.ravel(), 1.0)  # MXNet: [[1,1],[0,0],[2,2],[1,1]]
    np.testing.assert_allclose(e.weight.grad().asnumpy(), expect)


@HYB
def test_flatten(hybrid):
    f = _maybe_hybridize(nn.Flatten(), hybrid)
    x = _np(2, 3, 4)
    np.testing.assert_array_equal(f(nd.array(x)).asnumpy(), x.reshape(2, 12))


def test_lambda_and_hybrid_lambda():
    np.testing.assert_array_equal(nn.Lambda(lambda v: v * 3)(nd.ones((2,))).asnumpy(), [3, 3])
    np.testing.assert_allclose(
        nn.Lambda("tanh")(nd.array([0.5])).asnumpy(), np.tanh([0.5]), rtol=1e-6
    )
    hl = nn.HybridLambda(lambda F, v: F.relu(v) - 1)
    hl.hybridize()
    np.testing.assert_array_equal(hl(nd.array([-1.0, 2.0])).asnumpy(), [-1, 1])
    np.testing.assert_allclose(
        nn.HybridLambda("tanh")(nd.array([0.5])).asnumpy(), np.tanh([0.5]), rtol=1e-6
    )


# ---------------------------------------------------------------- Sequential
def test_sequential_len_getitem_slice():
    seq = nn.Sequential()
    seq.add(nn.Dense(2), nn.Dense(3), nn.Dense(4))
    assert len(seq) == 3
    assert seq[-1] is list(seq._children.values())[2]
    tail = seq[1:]
    assert type(tail) is nn.Sequential and len(tail) == 2
    assert tail[0] is seq[1]


@HYB
def test_hybrid_sequential_forward(hybrid):
    net = nn.HybridSequential()
    net.add(nn.Dense(4, activation="relu"), nn.Flatten(), nn.Dense(2))
    net = _maybe_hybridize(net, hybrid)
    net.initialize(mx.init.Normal(0.3))
    x = _np(3, 5)
    out = net(nd.array(x)).asnumpy()
    (w0, b0), (w1, b1) = [
        (d.weight.data().asnumpy(), d.bias.data().asnumpy()) for d in (net[0], net[2])
    ]
    ref = np.maximum(x @ w0.T + b0, 0) @ w1.T + b1
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6)
