"""Executor.backward's head gradients as MXNet 1.9.1 reads them, reverse Reshape
inference, PReLU's gamma alignment and the deprecated NumpyOp (cases from MXNet's
test_operator.py; expected values from NumPy)."""

import warnings

import numpy as np
import pytest

import gluonjax as mx
from gluonjax.base import MXNetError
from gluonjax.symbol.executor import BindError


def _bind(sym, **arrays):
    args = {k: mx.nd.array(v) for k, v in arrays.items()}
    grads = {k: mx.nd.zeros(v.shape) for k, v in arrays.items()}
    return sym.bind(mx.cpu(), args=args, args_grad=grads), grads


@pytest.mark.parametrize("op", ["eq", "gt", "bcast", "scalar"])
def test_backward_without_heads_where_no_gradient_uses_them(op):
    x, y = mx.sym.Variable("x"), mx.sym.Variable("y")
    sym = {
        "eq": x == y,
        "gt": x > y,
        "bcast": mx.sym.broadcast_greater(x, y),
        "scalar": x == 1,
    }[op]
    xa, ya = np.array([[1.0, 2.0], [3.0, 1.0]]), np.array([[1.0, 0.0], [3.0, 5.0]])
    arrays = {"x": xa} if op == "scalar" else {"x": xa, "y": ya}
    exe, grads = _bind(sym, **arrays)
    out = exe.forward(is_train=True)[0].asnumpy()
    want = {"eq": xa == ya, "gt": xa > ya, "bcast": xa > ya, "scalar": xa == 1}[op]
    np.testing.assert_array_equal(out, want.astype(np.float32))
    exe.backward()  # MXNet: no head gradient needed, the gradients are zero
    for g in grads.values():
        np.testing.assert_array_equal(g.asnumpy(), 0)


def test_backward_without_heads_raises_where_a_gradient_needs_them():
    exe, _ = _bind(mx.sym.Variable("x") * 2, x=np.ones(3))
    exe.forward(is_train=True)
    with pytest.raises(MXNetError, match=r"_mulscalar\d+_output.*not loss outputs"):
        exe.backward()


def test_unused_head_of_another_shape_is_ignored():
    # MXNet's test_shape_array passes ones(x.shape) as the head of shape_array's output
    x = np.random.RandomState(0).rand(2, 3)
    exe, grads = _bind(mx.sym.shape_array(mx.sym.Variable("x")), x=x)
    out = exe.forward(is_train=True)[0].asnumpy()
    np.testing.assert_array_equal(out, [2, 3])
    exe.backward([mx.nd.ones((2, 3))])
    np.testing.assert_array_equal(grads["x"].asnumpy(), 0)


def test_used_head_of_another_shape_raises():
    exe, _ = _bind(mx.sym.Variable("x") * 2, x=np.ones(3))
    exe.forward(is_train=True)
    with pytest.raises(BindError, match=r"has shape \(4,\), the output has \(3,\)"):
        exe.backward([mx.nd.ones(4)])


def test_extra_heads_are_ignored_and_too_few_raise():
    exe, grads = _bind(mx.sym.Variable("x") * 2, x=np.ones(3))
    exe.forward(is_train=True)
    exe.backward([mx.nd.array([1.0, 2.0, 3.0]), mx.nd.ones(7)])  # MXNet reads the first
    np.testing.assert_array_equal(grads["x"].asnumpy(), [2.0, 4.0, 6.0])
    exe2, _ = _bind(
        mx.sym.Group([mx.sym.Variable("x") * 2, mx.sym.Variable("x") * 3]), x=np.ones(3)
    )
    exe2.forward(is_train=True)
    with pytest.raises(BindError, match="1 out_grads for 2 outputs"):
        exe2.backward([mx.nd.ones(3)])


@pytest.mark.parametrize("hold", [0, 1, 2, 3])
def test_reshape_infers_its_unknown_input_dimension_from_the_output(hold):
    src, dst = (2, 3, 5, 5), (2, 75)
    partial = tuple(0 if i == hold else d for i, d in enumerate(src))
    net = mx.sym.elemwise_add(mx.sym.Variable("data").reshape((0, -1)), mx.sym.ones(shape=dst))
    arg_shapes, out_shapes, _ = net.infer_shape(data=partial)
    assert arg_shapes == [src] and out_shapes == [dst]


def _prelu(x, gamma_shape_in_data, gamma):
    return np.where(x > 0, x, x * gamma.reshape(gamma_shape_in_data))


@pytest.mark.parametrize(
    "xshape,gshape,aligned",
    [
        ((3, 4), (4,), (1, 4)),
        ((3, 4), (3, 4), (3, 4)),
        ((3, 4, 4, 5), (4,), (1, 4, 1, 1)),
        ((3, 4, 4, 5), (3, 4), (3, 4, 1, 1)),
        ((6,), (1,), (1,)),
    ],
)
def test_prelu_gamma_aligns_with_the_first_two_axes(xshape, gshape, aligned):
    rs = np.random.RandomState(1)
    x = rs.uniform(-1, 1, xshape).astype(np.float32)
    g = rs.uniform(0.1, 0.5, gshape).astype(np.float32)
    sym = mx.sym.LeakyReLU(mx.sym.Variable("x"), mx.sym.Variable("gamma"), act_type="prelu")
    exe, grads = _bind(sym, x=x, gamma=g)
    out = exe.forward(is_train=True)[0].asnumpy()
    np.testing.assert_allclose(out, _prelu(x, aligned, g), rtol=1e-6)
    exe.backward([mx.nd.ones(xshape)])
    gx = np.where(x > 0, 1.0, np.broadcast_to(g.reshape(aligned), xshape))
    np.testing.assert_allclose(grads["x"].asnumpy(), gx, rtol=1e-6)
    neg = np.where(x > 0, 0.0, x)
    axes = tuple(i for i, (a, b) in enumerate(zip(aligned, xshape)) if a == 1 and b != 1)
    want = neg.sum(axis=axes).reshape(gshape) if axes else neg.reshape(gshape)
    np.testing.assert_allclose(grads["gamma"].asnumpy(), want, rtol=1e-5, atol=1e-6)


def test_prelu_gamma_that_does_not_fit_raises():
    sym = mx.sym.LeakyReLU(mx.sym.Variable("x"), mx.sym.Variable("gamma"), act_type="prelu")
    with pytest.raises(MXNetError, match="prelu: gamma of shape"):
        _bind(sym, x=np.ones((3, 4)), gamma=np.ones(5))[0].forward()


def test_numpy_op_default_is_identity_with_unit_gradient():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        op = mx.operator.NumpyOp()
    s = op.get_symbol(mx.sym.Variable("X"), name="numpy_op")
    x, dx = mx.nd.ones(10) * 10, mx.nd.zeros(10)
    exe = s.bind(mx.cpu(), args=[x], args_grad={"X": dx})
    np.testing.assert_array_equal(exe.forward(is_train=True)[0].asnumpy(), np.full(10, 10.0))
    exe.backward(mx.nd.ones(10))
    np.testing.assert_array_equal(dx.asnumpy(), np.ones(10))


def test_numpy_op_subclass_computes_on_numpy_arrays():
    class Square(mx.operator.NumpyOp):
        def __init__(self):
            super().__init__(need_top_grad=True)

        def forward(self, in_data, out_data):
            assert isinstance(in_data[0], np.ndarray)
            out_data[0][:] = in_data[0] ** 2

        def backward(self, out_grad, in_data, out_data, in_grad):
            in_grad[0][:] = 2 * in_data[0] * out_grad[0]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        op = Square()
    s = op(mx.sym.Variable("X"))
    x = np.array([1.0, -2.0, 3.0], np.float32)
    dx = mx.nd.zeros(3)
    exe = s.bind(mx.cpu(), args=[mx.nd.array(x)], args_grad={"X": dx})
    np.testing.assert_allclose(exe.forward(is_train=True)[0].asnumpy(), x**2)
    exe.backward(mx.nd.array([1.0, 0.5, 2.0]))
    np.testing.assert_allclose(dx.asnumpy(), 2 * x * np.array([1.0, 0.5, 2.0]))
