"""nn ops (FullyConnected, Activation, LeakyReLU, Dropout, Flatten, softmax family,
Embedding) and NDArray indexing ops vs NumPy, with gradients."""

import math

import numpy as np
import pytest

import gluonjax as mx
from gluonjax import autograd, nd

erf = np.vectorize(math.erf)


def _rand(shape, seed=0, lo=-1.0, hi=1.0):
    return np.random.RandomState(seed).uniform(lo, hi, shape).astype(np.float32)


@pytest.mark.parametrize("flatten", [True, False])
@pytest.mark.parametrize("no_bias", [False, True])
@pytest.mark.parametrize("shape", [(4, 6), (2, 3, 6)])
def test_fully_connected(shape, no_bias, flatten):
    xv = _rand(shape, 1)
    k = int(np.prod(shape[1:])) if flatten else shape[-1]
    wv, bv = _rand((5, k), 2), _rand((5,), 3)
    x, w, b = nd.array(xv), nd.array(wv), nd.array(bv)
    for a in (x, w, b):
        a.attach_grad()
    with autograd.record():
        args = (x, w) if no_bias else (x, w, b)
        y = nd.FullyConnected(*args, num_hidden=5, no_bias=no_bias, flatten=flatten)
    x2 = xv.reshape(shape[0], -1) if flatten else xv
    ref = x2 @ wv.T + (0 if no_bias else bv)
    np.testing.assert_allclose(y.asnumpy(), ref, rtol=1e-5, atol=1e-6)
    hv = _rand(ref.shape, 4)
    y.backward(nd.array(hv))
    gx = (hv @ wv).reshape(shape)
    gw = hv.reshape(-1, 5).T @ x2.reshape(-1, k)
    np.testing.assert_allclose(x.grad.asnumpy(), gx, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(w.grad.asnumpy(), gw, rtol=1e-4, atol=1e-5)
    if not no_bias:
        np.testing.assert_allclose(b.grad.asnumpy(), hv.reshape(-1, 5).sum(0), rtol=1e-4)


def test_fully_connected_errors():
    with pytest.raises(mx.base.ShapeError, match=r"FullyConnected.*\(3, 5\).*\(3, 4\)"):
        nd.FullyConnected(nd.ones((2, 4)), nd.ones((3, 5)), nd.ones((3,)), num_hidden=3)
    with pytest.raises(mx.base.AttrError, match="num_hidden"):
        nd.FullyConnected(nd.ones((2, 4)), nd.ones((3, 4)), nd.ones((3,)))
    with pytest.raises(mx.base.AttrError, match=r"unknown argument.*foo.*num_hidden"):
        nd.FullyConnected(nd.ones((2, 4)), nd.ones((3, 4)), nd.ones((3,)), num_hidden=3, foo=1)
    y = nd.FullyConnected(
        nd.ones((2, 4)),
        nd.ones((3, 4)),
        nd.zeros((3,)),
        num_hidden="3",
        flatten="False",
        no_bias="False",
    )
    np.testing.assert_allclose(y.asnumpy(), np.full((2, 3), 4.0))


ACTS = {
    "relu": (lambda x: np.maximum(x, 0), lambda x: (x > 0) * 1.0),
    "sigmoid": (lambda x: 1 / (1 + np.exp(-x)), lambda x: np.exp(-x) / (1 + np.exp(-x)) ** 2),
    "tanh": (np.tanh, lambda x: 1 - np.tanh(x) ** 2),
    "softrelu": (lambda x: np.log1p(np.exp(x)), lambda x: 1 / (1 + np.exp(-x))),
    "softsign": (lambda x: x / (1 + np.abs(x)), lambda x: 1 / (1 + np.abs(x)) ** 2),
    "log_sigmoid": (lambda x: -np.log1p(np.exp(-x)), lambda x: 1 - 1 / (1 + np.exp(-x))),
    "mish": (lambda x: x * np.tanh(np.log1p(np.exp(x))), None),
}


@pytest.mark.parametrize("act", sorted(ACTS))
def test_activation(act):
    xv = _rand((3, 4), 5, -2, 2)
    x = nd.array(xv)
    x.attach_grad()
    with autograd.record():
        y = nd.Activation(x, act_type=act)
    fwd, der = ACTS[act]
    np.testing.assert_allclose(y.asnumpy(), fwd(xv.astype(np.float64)), rtol=1e-5, atol=1e-6)
    if der is not None:
        y.backward()
        np.testing.assert_allclose(
            x.grad.asnumpy(), der(xv.astype(np.float64)), rtol=1e-4, atol=1e-6
        )


def test_activation_bad_type():
    with pytest.raises(mx.base.AttrError, match="act_type.*one of"):
        nd.Activation(nd.ones((2,)), act_type="swish9")


@pytest.mark.parametrize(
    "act,kw,ref",
    [
        ("leaky", {"slope": 0.1}, lambda x: np.where(x > 0, x, 0.1 * x)),
        ("elu", {"slope": 0.5}, lambda x: np.where(x > 0, x, 0.5 * np.expm1(x))),
        (
            "selu",
            {},
            lambda x: 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * np.expm1(x)),
        ),
        ("gelu", {}, lambda x: 0.5 * x * (1 + erf(x / np.sqrt(2)))),
        ("rrelu", {"lower_bound": 0.1, "upper_bound": 0.3}, lambda x: np.where(x > 0, x, 0.2 * x)),
    ],
)
def test_leaky_relu(act, kw, ref):
    xv = _rand((2, 3, 4), 6, -2, 2)
    x = nd.array(xv)
    x.attach_grad()
    with autograd.record():
        y = nd.LeakyReLU(x, act_type=act, **kw)
    if act == "rrelu":  # MXNet's rrelu returns [output, mask]; the mask holds the slope
        y, mask = y
        np.testing.assert_allclose(mask.asnumpy(), np.full(xv.shape, 0.2), rtol=1e-6)
    np.testing.assert_allclose(y.asnumpy(), ref(xv.astype(np.float64)), rtol=1e-5, atol=1e-6)
    y.backward()
    eps = 1e-3
    num = (ref(xv.astype(np.float64) + eps) - ref(xv.astype(np.float64) - eps)) / (2 * eps)
    np.testing.assert_allclose(x.grad.asnumpy(), num, rtol=1e-2, atol=1e-3)


def test_prelu_per_channel():
    xv = _rand((2, 3, 4), 7, -2, 2)
    gv = np.array([0.1, 0.2, 0.3], np.float32)
    x, g = nd.array(xv), nd.array(gv)
    g.attach_grad()
    with autograd.record():
        y = nd.LeakyReLU(x, g, act_type="prelu")
    ref = np.where(xv > 0, xv, xv * gv[None, :, None])
    np.testing.assert_allclose(y.asnumpy(), ref, rtol=1e-6)
    y.backward()
    np.testing.assert_allclose(g.grad.asnumpy(), np.where(xv > 0, 0, xv).sum((0, 2)), rtol=1e-5)


def test_dropout_modes():
    x = nd.ones((200, 50))
    np.testing.assert_array_equal(nd.Dropout(x, p=0.5).asnumpy(), x.asnumpy())  # inference
    with autograd.train_mode():
        y = nd.Dropout(x, p=0.25).asnumpy()
        y2 = nd.Dropout(x, p=0.25).asnumpy()
        shared = nd.Dropout(x, p=0.5, axes=(1,)).asnumpy()
    np.testing.assert_allclose(np.unique(y), [0.0, 1 / 0.75], rtol=1e-6)
    assert abs((y == 0).mean() - 0.25) < 0.02
    assert not np.array_equal(y, y2)
    assert all(len(set(row)) == 1 for row in shared)  # one mask value per row
    always = nd.Dropout(x, p=0.5, mode="always").asnumpy()
    assert (always == 0).any()


def test_flatten():
    xv = _rand((2, 3, 4), 8)
    np.testing.assert_array_equal(nd.Flatten(nd.array(xv)).asnumpy(), xv.reshape(2, 12))
    np.testing.assert_array_equal(nd.flatten(nd.array(xv[0])).asnumpy(), xv[0])


def _softmax(x, axis):
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


@pytest.mark.parametrize("axis", [-1, 0, 1])
@pytest.mark.parametrize("temperature", [None, 2.0])
def test_softmax_family(axis, temperature):
    xv = _rand((3, 4, 5), 9, -3, 3).astype(np.float64)
    t = temperature or 1.0
    kw = {"axis": axis, "temperature": temperature}
    x = nd.array(xv)
    x.attach_grad()
    with autograd.record():
        y = nd.softmax(x, **kw)
    ref = _softmax(xv / t, axis)
    np.testing.assert_allclose(y.asnumpy(), ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(nd.log_softmax(x, **kw).asnumpy(), np.log(ref), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(
        nd.softmin(x, **kw).asnumpy(), _softmax(-xv / t, axis), rtol=1e-5, atol=1e-6
    )
    hv = _rand((3, 4, 5), 10)
    y.backward(nd.array(hv))
    gref = ref * (hv - (hv * ref).sum(axis, keepdims=True)) / t
    np.testing.assert_allclose(x.grad.asnumpy(), gref, rtol=1e-4, atol=1e-6)


def test_softmax_with_length():
    xv = _rand((2, 5), 11)
    lens = np.array([2, 4], np.float32)
    y = nd.softmax(nd.array(xv), nd.array(lens), axis=-1, use_length=True).asnumpy()
    for i, n in enumerate([2, 4]):
        np.testing.assert_allclose(y[i, :n], _softmax(xv[i, :n], 0), rtol=1e-5)
        np.testing.assert_array_equal(y[i, n:], 0)


def test_embedding():
    wv = _rand((6, 3), 12)
    idx = np.array([[0, 5], [2, 2]], np.float32)
    w = nd.array(wv)
    w.attach_grad()
    with autograd.record():
        y = nd.Embedding(nd.array(idx), w, input_dim=6, output_dim=3)
    np.testing.assert_allclose(y.asnumpy(), wv[idx.astype(int)])
    y.backward()
    expect = np.zeros_like(wv)
    for i in idx.astype(int).ravel():
        expect[i] += 1
    np.testing.assert_allclose(w.grad.asnumpy(), expect)


def test_getitem_setitem_ops_and_grads():
    """NDArray indexing runs the registry's _getitem / _setitem ops."""
    xv = _rand((4, 5), 13)
    x = nd.array(xv)
    x.attach_grad()
    with autograd.record():
        y = x[1:3, ::2] * 2
    y.backward()
    g = np.zeros_like(xv)
    g[1:3, ::2] = 2
    np.testing.assert_allclose(x.grad.asnumpy(), g)
    np.testing.assert_allclose(x[nd.array([3, 0])].asnumpy(), xv[[3, 0]])
    np.testing.assert_allclose(x[None, 1, ..., -1].asnumpy(), xv[None, 1, ..., -1])
    assert x[2, 3].shape == (1,)  # MXNet 1.x returns (1,) for full integer indexing
    a = nd.zeros((3, 4))
    a[1] = 5
    a[:, 0] = nd.array([7.0, 8.0, 9.0])
    a[2, 1:3] = nd.array([[1.0, 2.0]])
    ref = np.zeros((3, 4), np.float32)
    ref[1] = 5
    ref[:, 0] = [7, 8, 9]
    ref[2, 1:3] = [1, 2]
    np.testing.assert_array_equal(a.asnumpy(), ref)
    with pytest.raises(mx.MXNetError, match="boolean"):
        a[True]
