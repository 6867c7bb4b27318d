"""Autograd: tape, grad_req, head gradients, higher order, Function, errors."""

import numpy as np
import pytest

import gluonjax as mx
from gluonjax import autograd, nd


def test_backward_matches_numpy():
    xv = np.array([[1.0, -2.0, 3.0], [0.5, 0.0, -1.0]], np.float32)
    x = nd.array(xv)
    x.attach_grad()
    with autograd.record():
        y = nd.exp(x) * x + nd.sin(x)
    y.backward()
    expected = np.exp(xv) * xv + np.exp(xv) + np.cos(xv)
    np.testing.assert_allclose(x.grad.asnumpy(), expected, rtol=1e-5)


def test_head_grads_and_retain_graph():
    x = nd.array([1.0, 2.0])
    x.attach_grad()
    with autograd.record():
        y = x * x
    y.backward(nd.array([1.0, 10.0]), retain_graph=True)
    np.testing.assert_allclose(x.grad.asnumpy(), [2.0, 40.0])
    y.backward()  # allowed: the graph was retained
    np.testing.assert_allclose(x.grad.asnumpy(), [2.0, 4.0])
    with pytest.raises(mx.MXNetError, match="retain_graph"):
        y.backward()


def test_grad_req_add_accumulates():
    x = nd.array([1.0, 2.0, 3.0])
    x.attach_grad(grad_req="add")
    for _ in range(2):
        with autograd.record():
            y = (x * 3).sum()
        y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [6.0, 6.0, 6.0])


def test_grad_req_null_and_detach():
    x = nd.array([1.0, 2.0])
    w = nd.array([3.0, 4.0])
    x.attach_grad()
    w.attach_grad(grad_req="null")
    with autograd.record():
        y = (x * w + x.detach() * 100).sum()
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [3.0, 4.0])
    np.testing.assert_allclose(w.grad.asnumpy(), [0.0, 0.0])  # MXNet keeps a zero buffer


def test_backward_outside_record_is_clear_error():
    x = nd.array([1.0])
    x.attach_grad()
    y = x * 2
    with pytest.raises(mx.MXNetError, match="record"):
        y.backward()


def test_pause_and_modes():
    x = nd.array([1.0, 2.0])
    x.attach_grad()
    assert not autograd.is_recording() and not autograd.is_training()
    with autograd.record():
        assert autograd.is_recording() and autograd.is_training()
        with autograd.pause():
            assert not autograd.is_recording()
            z = x * 5  # not recorded
        with autograd.predict_mode():
            assert not autograd.is_training()
        y = x * 2 + z
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [2.0, 2.0])
    with autograd.record(train_mode=False):
        assert not autograd.is_training()
    with autograd.train_mode():
        assert autograd.is_training()


def test_grad_function_returns_without_writing():
    x = nd.array([2.0, 3.0])
    x.attach_grad()
    with autograd.record():
        y = x**3
    g = autograd.grad(y, [x])[0]
    np.testing.assert_allclose(g.asnumpy(), 3 * np.array([2.0, 3.0]) ** 2)
    np.testing.assert_allclose(x.grad.asnumpy(), [0.0, 0.0])


def test_higher_order_grad():
    xv = np.array([0.5, 1.0, 2.0], np.float32)
    x = nd.array(xv)
    x.attach_grad()
    with autograd.record():
        y = nd.sin(x) * x
        dy = autograd.grad(y, x, create_graph=True)[0]
        s = dy.sum()
    s.backward()
    np.testing.assert_allclose(dy.asnumpy(), np.cos(xv) * xv + np.sin(xv), rtol=1e-5)
    np.testing.assert_allclose(x.grad.asnumpy(), -np.sin(xv) * xv + 2 * np.cos(xv), rtol=1e-5)


def test_higher_order_through_hybridized_block():
    net = mx.gluon.nn.Dense(1, in_units=2, use_bias=False)
    net.initialize(mx.init.Constant(2.0))
    net.hybridize()
    x = nd.array([[1.0, 3.0]])
    x.attach_grad()
    with autograd.record():
        out = (net(x) ** 3).sum()  # (2a + 2b)^3
        g = autograd.grad(out, x, create_graph=True)[0]
        gs = g.sum()
    gs.backward()
    s = 2.0 * 1 + 2.0 * 3
    np.testing.assert_allclose(g.asnumpy(), [[3 * s * s * 2, 3 * s * s * 2]], rtol=1e-5)
    # d/dx of sum(6 s^2 * 2) = 24 s * ds/dx = 24 s * 2
    np.testing.assert_allclose(x.grad.asnumpy(), [[48 * s, 48 * s]], rtol=1e-5)


def test_custom_function():
    class Clip(autograd.Function):
        def forward(self, x):
            self.save_for_backward(x)
            return nd.clip(x, -1, 1)

        def backward(self, dy):
            (x,) = self.saved_tensors
            return dy * 10  # a custom (non-true) gradient

    x = nd.array([0.5, 3.0])
    x.attach_grad()
    with autograd.record():
        y = Clip()(x)
    y.backward()
    np.testing.assert_allclose(y.asnumpy(), [0.5, 1.0])
    np.testing.assert_allclose(x.grad.asnumpy(), [10.0, 10.0])


def test_mark_variables():
    x = nd.array([1.0, 2.0])
    g = nd.zeros((2,))
    autograd.mark_variables([x], [g])
    with autograd.record():
        y = (x * x).sum()
    y.backward()
    np.testing.assert_allclose(g.asnumpy(), [2.0, 4.0])
