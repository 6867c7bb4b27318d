"""Misuse of the tape: an MXNetError naming what is wrong, never a hang or a wrong value.

The expected behaviour is MXNet 1.9.1's where it raises (checked with real MXNet:
in-place writes into recorded arrays, unreachable variables, arrays used after
their graph was freed); where MXNet gives a silent wrong value or crashes (a head
gradient of the wrong shape is broadcast, mismatched ``mark_variables`` lists
segfault), gluonjax raises.
"""

from __future__ import annotations

import numpy as np
import pytest

from gluonjax import autograd, nd
from gluonjax.base import MXNetError


def _x():
    x = nd.array([1.0, 2.0])
    x.attach_grad()
    return x


@pytest.mark.parametrize(
    "write, what",
    [
        (lambda y, x: y.__setitem__(slice(None), 0), "NDArray[...] = value"),
        (lambda y, x: y.__iadd__(1), "'+='"),
        (lambda y, x: y.__imul__(2), "'*='"),
        (lambda y, x: x.__setitem__(slice(None), 3), "variable"),
        (lambda y, x: nd.relu(x, out=y), "out="),
        (lambda y, x: x.copyto(y), "copyto"),
    ],
)
def test_in_place_write_into_the_tape_while_recording_raises(write, what):
    x = _x()
    with autograd.record():
        y = x * 2
        with pytest.raises(MXNetError, match="in place") as err:
            write(y, x)
    assert what in str(err.value) and "(2,)" in str(err.value)
    # nothing was written: the recorded value and the tape are intact
    np.testing.assert_array_equal(y.asnumpy(), [2.0, 4.0])
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [2.0, 2.0])


def test_a_write_that_used_to_loop_forever_raises():
    x = _x()
    with autograd.record():
        y = x * 1
        for _ in range(3):
            with pytest.raises(MXNetError):
                y *= 2


def test_writes_outside_record_leave_the_recorded_graph_intact():
    """The tape holds its inputs' entries, not the arrays: rebinding ``y`` after the
    forward changes neither the gradient nor what ``z`` was computed from."""
    x = _x()
    with autograd.record():
        y = x * 2
        z = (y * x).sum()  # dz/dx = 2 * 2x = 4x
    y[:] = 0  # outside record: allowed, y is a plain array now
    y += 5
    z.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [4.0, 8.0])
    np.testing.assert_allclose(y.asnumpy(), [5.0, 5.0])


def test_writing_into_a_fresh_array_under_record_is_recorded():
    x = _x()
    buf = nd.zeros((2,))
    with autograd.record():
        buf[:] = x * 3  # buf had no part in the graph: the write is an op on the tape
        loss = (buf * buf).sum()
    loss.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [18.0, 36.0])


def test_head_gradient_of_the_wrong_shape_fails_at_backward():
    x = _x()
    with autograd.record():
        y = x * 2
    with pytest.raises(MXNetError, match=r"head gradient 0 has shape \(3,\) but head 0 has "):
        y.backward(nd.ones((3,)))
    with pytest.raises(MXNetError, match="2 head"):
        autograd.backward([y, y], [nd.ones((2,))])


def test_mark_variables_with_lists_of_different_lengths():
    x, z = nd.ones((2,)), nd.ones((3,))
    with pytest.raises(MXNetError, match="2 variable.*1 gradient"):
        autograd.mark_variables([x, z], [nd.zeros((2,))])
    with pytest.raises(MXNetError, match="shape"):
        autograd.mark_variables([x], [nd.zeros((3,))])
    assert x._grad is None  # nothing was marked


def test_grad_with_respect_to_an_unreachable_variable_raises_as_mxnet():
    x, z = _x(), _x()
    with autograd.record():
        y = (x * x).sum()
    with pytest.raises(MXNetError, match="variable 1.*unreachable"):
        autograd.grad(y, [x, z])


def test_grad_with_respect_to_a_non_variable_raises():
    x = _x()
    with autograd.record():
        y = x * 2
        loss = (y * y).sum()
    with pytest.raises(MXNetError, match="does not require a gradient"):
        autograd.grad(loss, [y])
    with pytest.raises(MXNetError, match="does not require a gradient"):
        autograd.grad(loss, [nd.ones((2,))])


def test_backward_twice_without_retain_graph():
    x = _x()
    with autograd.record():
        y = (x * 2).sum()
    y.backward()
    with pytest.raises(MXNetError, match="retain_graph=True"):
        y.backward()


def test_a_head_whose_graph_another_backward_freed():
    x = _x()
    with autograd.record():
        y = x * 2
        a, b = (y * y).sum(), (y * 3).sum()
    a.backward()
    with pytest.raises(MXNetError, match="a second time"):
        b.backward()


def test_a_result_of_a_freed_graph_is_a_constant_afterwards():
    """As MXNet: after backward, ``y`` no longer links to x (real MXNet gives [2, 4])."""
    x = _x()
    with autograd.record():
        y = x * 2
        loss = y.sum()
    loss.backward()
    with autograd.record():
        z = (y * x).sum()
    z.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [2.0, 4.0])


def test_backward_of_an_array_that_was_not_recorded():
    with pytest.raises(MXNetError, match="autograd.record"):
        nd.ones((2,)).backward()


def test_custom_function_returning_the_wrong_number_of_gradients():
    class Bad(autograd.Function):
        def forward(self, a, b):
            return a * b

        def backward(self, dy):
            return dy  # one gradient for two inputs

    x, w = _x(), _x()
    with autograd.record():
        y = Bad()(x, w).sum()
    with pytest.raises(MXNetError, match="1 gradient.*2 input"):
        y.backward()
