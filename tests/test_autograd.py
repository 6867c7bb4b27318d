"""Autograd: tape, grad_req, head gradients, higher order, Function, errors."""

import json

import numpy as np
import pytest

import gluonjax as mx
from gluonjax import autograd, nd
from gluonjax.base import MXNetError


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
    # MXNet 1.9.1: a zero buffer after attach_grad('null'), None once a backward ran
    assert w.grad is None
    v = nd.array([1.0])
    v.attach_grad(grad_req="null")
    np.testing.assert_allclose(v.grad.asnumpy(), [0.0])


def test_integer_variables_get_gradients_as_in_mxnet():
    # MXNet 1.9.1 (checked with .venv-mxnet): (i * 3).sum() gives i.grad == [3, 3], int32
    i = nd.array([1, 2], dtype="int32")
    i.attach_grad()
    with autograd.record():
        z = (i * 3).sum()
    z.backward()
    assert i.grad.dtype == np.int32 and i.grad.asnumpy().tolist() == [3, 3]


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


def test_create_graph_outside_record_then_backward():
    """MXNet 1.9.1's test_gradient: the gradient is on the tape even when not recording."""
    x = nd.ones((1,))
    x.attach_grad()
    with autograd.record():
        z = nd.elemwise_add(nd.exp(x), x)
    (dx,) = autograd.grad(z, [x], create_graph=True)
    np.testing.assert_allclose(dx.asnumpy(), [np.e + 1], rtol=1e-6)
    dx.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [np.e], rtol=1e-6)


def test_second_order_with_respect_to_another_variable():
    """d(dy/dx)/dw for y = x w^T: the gradient node depends on every leaf, not only x."""
    x = nd.array(np.arange(6, dtype=np.float32).reshape(2, 3))
    w = nd.array(np.full((4, 3), 0.5, np.float32))
    x.attach_grad()
    w.attach_grad()
    o_y = nd.array(np.arange(8, dtype=np.float32).reshape(2, 4))
    with autograd.record():
        y = nd.FullyConnected(x, w, num_hidden=4, no_bias=True)
        (x_grad,) = autograd.grad(y, [x], head_grads=o_y, create_graph=True, retain_graph=True)
        o_x = nd.array(np.arange(6, dtype=np.float32).reshape(2, 3))
        (w_gg,) = autograd.grad(x_grad, [w], head_grads=o_x)
    np.testing.assert_allclose(x_grad.asnumpy(), o_y.asnumpy() @ w.asnumpy(), rtol=1e-6)
    np.testing.assert_allclose(w_gg.asnumpy(), o_y.asnumpy().T @ o_x.asnumpy(), rtol=1e-6)


def test_third_order():
    x = nd.array([0.3, 0.7])
    x.attach_grad()
    with autograd.record():
        y = nd.sin(x)
        g1 = autograd.grad(y, [x], create_graph=True)[0]
        g2 = autograd.grad(g1, [x], create_graph=True)[0]
    g2.backward()
    xv = np.array([0.3, 0.7], np.float32)
    np.testing.assert_allclose(g2.asnumpy(), -np.sin(xv), rtol=1e-6)
    np.testing.assert_allclose(x.grad.asnumpy(), -np.cos(xv), rtol=1e-6)


def test_second_derivative_of_arcsinh_is_the_true_one():
    """MXNet 1.9.1 gives +x/(x^2+1)^1.5 (a sign error in its _backward_arcsinh gradient,
    src/operator/tensor/elemwise_unary_op_trig.cc); the derivative of 1/sqrt(x^2+1) is
    -x/(x^2+1)^1.5. gluonjax differentiates the op's jax implementation: the true value,
    so MXNet's own test_higher_order_grad.py::test_arcsinh (which encodes the sign error)
    fails on gluonjax on purpose."""
    xv = np.array([-1.5, 0.2, 2.0], np.float32)
    x = nd.array(xv)
    x.attach_grad()
    with autograd.record():
        (g,) = autograd.grad(nd.arcsinh(x), [x], create_graph=True)
    g.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), -xv / (xv**2 + 1) ** 1.5, rtol=1e-5)


def test_get_symbol_of_eager_ops_and_of_a_hybridized_block():
    x, z = nd.ones((1,)), nd.ones((1,))
    x.attach_grad()
    with autograd.record():
        y = x * x + 2 * x - 1
    sym = autograd.get_symbol(y)
    assert len(sym.list_arguments()) == 1
    ops = [n["op"] for n in json.loads(sym.tojson())["nodes"] if n["op"] != "null"]
    assert ops == ["broadcast_mul", "_mul_scalar", "broadcast_add", "_minus_scalar"]
    z.attach_grad()
    with autograd.record():
        y = x * x + 2 * z - 1
    assert len(autograd.get_symbol(y).list_arguments()) == 2

    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Dense(3), mx.gluon.nn.Dense(2))
    net.initialize()
    net.hybridize()
    for _ in range(2):  # the second call is deferred: same graph
        with autograd.record():
            out = net(nd.zeros((1, 4)))
        graph = json.loads(autograd.get_symbol(out).tojson())
        assert [n["op"] for n in graph["nodes"] if n["op"] != "null"] == ["FullyConnected"] * 2
        assert len(autograd.get_symbol(out).list_arguments()) == 5  # data + 4 parameters
        out.backward()
    with pytest.raises(MXNetError, match="not computed under autograd.record"):
        autograd.get_symbol(nd.ones((1,)))


def test_gradient_passes_an_integer_result_as_in_mxnet():
    # MXNet 1.9.1 (checked with .venv-mxnet): astype('int32') passes the gradient, [1, 1];
    # np.mean(float16 x, dtype='int32') gives x.grad == 1/4 everywhere
    n = nd.array([1.5, 2.5])
    n.attach_grad()
    with autograd.record():
        q = n.astype("int32").sum()
    q.backward()
    assert n.grad.asnumpy().tolist() == [1.0, 1.0]
    x = mx.np.array(np.ones((3, 4), np.float16))
    x.attach_grad()
    with autograd.record():
        y = mx.np.mean(x, axis=1, dtype="int32")
    y.backward()
    assert y.dtype == np.int32 and (x.grad.asnumpy() == 0.25).all()
