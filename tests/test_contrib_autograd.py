"""``mx.contrib.autograd``: MXNet's first autograd interface over gluonjax's engine
(expected values from NumPy)."""

from __future__ import annotations

import numpy as np
import pytest

import gluonjax as mx
from gluonjax.base import ArgumentTypeError, MXNetError
from gluonjax.contrib import autograd as cag


def test_grad_and_loss_matches_numpy():
    a = np.array([[0.5, -1.0], [2.0, 3.0]], np.float32)
    b = np.array([[1.5, 2.0], [-0.5, 1.0]], np.float32)
    grads, out = cag.grad_and_loss(lambda x, y: x * y + mx.nd.exp(x))(
        mx.nd.array(a), mx.nd.array(b)
    )
    np.testing.assert_allclose(out.asnumpy(), a * b + np.exp(a), rtol=1e-6)
    np.testing.assert_allclose(grads[0].asnumpy(), b + np.exp(a), rtol=1e-6)
    np.testing.assert_allclose(grads[1].asnumpy(), a, rtol=1e-6)


def test_grad_with_argnum_and_a_python_argument():
    def f(x, y, scale):
        return x * y * scale

    x, y = mx.nd.array([1.0, 2.0]), mx.nd.array([3.0, 4.0])
    (gy,) = cag.grad(f, argnum=1)(x, y, 2.0)
    np.testing.assert_allclose(gy.asnumpy(), [2.0, 4.0])
    with pytest.raises(ArgumentTypeError, match="argument 2"):
        cag.grad(f)(x, y, 2.0)


def test_sections_switch_training_and_recording():
    assert not mx.autograd.is_training() and not mx.autograd.is_recording()
    with cag.train_section():
        assert mx.autograd.is_training() and mx.autograd.is_recording()
        with cag.test_section():
            assert not mx.autograd.is_training() and not mx.autograd.is_recording()
        assert mx.autograd.is_training() and mx.autograd.is_recording()
    assert not mx.autograd.is_training() and not mx.autograd.is_recording()
    assert cag.set_is_training(True) is False
    assert cag.set_is_training(False) is True


def test_backward_with_head_gradients_and_add_req():
    x = mx.nd.ones((3, 2))
    dx = mx.nd.zeros((3, 2))
    cag.mark_variables([x], [dx], grad_reqs="add")
    for _ in range(2):
        with cag.train_section():
            a, b, c = mx.nd.split(x, axis=0, num_outputs=3, squeeze_axis=True)
            cag.backward([a, b, c], [None, mx.nd.array([2, 3]), mx.nd.array([4, 5])])
    np.testing.assert_array_equal(dx.asnumpy(), 2 * np.array([[1, 1], [2, 3], [4, 5]]))


def test_backward_needs_a_list_and_a_graph_once():
    x = mx.nd.ones((2,))
    cag.mark_variables([x], [mx.nd.zeros((2,))])
    with cag.train_section():
        y = x * 2
    with pytest.raises(ArgumentTypeError, match="list or tuple"):
        cag.backward(y)
    cag.compute_gradient([y])
    with pytest.raises(MXNetError, match="retain_graph"):
        cag.backward([y])
