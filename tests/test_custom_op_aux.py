"""Custom operators with auxiliary states (listed, shape-inferred, written by forward and
seen by backward, as in MXNet), errors in a custom operator's Python code, and potrf of
a matrix without a Cholesky factor (MXNet raises; expected values from NumPy)."""

import numpy as np
import pytest

import gluonjax as mx
from gluonjax.base import MXNetError, OpError
from gluonjax.operator import CustomOpError


class _Sqr(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        aux[0][:] = 1
        self.assign(out_data[0], req[0], in_data[0] * in_data[0])

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        assert (aux[0].asnumpy() == 1).all()  # the forward's write is visible
        self.assign(in_grad[0], req[0], 2 * in_data[0] * out_grad[0] * aux[0])


@mx.operator.register("test_aux_sqr")
class _SqrProp(mx.operator.CustomOpProp):
    def list_arguments(self):
        return ["data"]

    def list_auxiliary_states(self):
        return ["aux"]

    def infer_shape(self, in_shape):
        return in_shape, [in_shape[0]], [in_shape[0]]

    def create_operator(self, ctx, shapes, dtypes):
        return _Sqr()


def _sym():
    return mx.sym.Custom(
        data=mx.sym.Variable("data"), aux=mx.sym.Variable("aux"), op_type="test_aux_sqr"
    )


def test_aux_states_are_listed_and_inferred():
    s = _sym()
    assert s.list_arguments() == ["data"]
    assert s.list_auxiliary_states() == ["aux"]
    assert s.infer_shape(data=(4, 10)) == ([(4, 10)], [(4, 10)], [(4, 10)])


def test_forward_writes_aux_and_backward_sees_it():
    x = np.random.RandomState(0).uniform(-1, 1, (4, 10)).astype(np.float32)
    gx = mx.nd.zeros((4, 10))
    exe = _sym().bind(
        mx.cpu(),
        args={"data": mx.nd.array(x)},
        args_grad={"data": gx},
        aux_states={"aux": mx.nd.zeros((4, 10))},
    )
    out = exe.forward(is_train=True)[0].asnumpy()
    np.testing.assert_allclose(out, x * x, rtol=1e-6)
    np.testing.assert_array_equal(exe.aux_dict["aux"].asnumpy(), 1)
    exe.backward(mx.nd.ones((4, 10)))
    np.testing.assert_allclose(gx.asnumpy(), 2 * x, rtol=1e-6)


def test_numeric_gradient_with_aux_states():
    x = np.random.RandomState(1).uniform(-1, 1, (3, 5))
    mx.test_utils.check_numeric_gradient(_sym(), [x], [np.zeros((3, 5))])


def test_python_error_in_custom_op_is_an_mxnet_error():
    class Bad(mx.operator.CustomOp):
        def forward(self, is_train, req, in_data, out_data, aux):
            raise KeyError("missing")

    @mx.operator.register("test_bad_forward")
    class BadProp(mx.operator.CustomOpProp):
        def create_operator(self, ctx, shapes, dtypes):
            return Bad()

    with pytest.raises(CustomOpError, match="'test_bad_forward': its forward raised KeyError"):
        mx.nd.Custom(mx.nd.ones(3), op_type="test_bad_forward")


def test_mxnet_error_in_custom_op_passes_through():
    class Chol(mx.operator.CustomOp):
        def forward(self, is_train, req, in_data, out_data, aux):
            self.assign(out_data[0], req[0], mx.nd.linalg.potrf(in_data[0]))

    @mx.operator.register("test_chol")
    class CholProp(mx.operator.CustomOpProp):
        def create_operator(self, ctx, shapes, dtypes):
            return Chol()

    with pytest.raises(OpError, match="not symmetric positive definite"):
        mx.nd.Custom(mx.nd.zeros((2, 2)), op_type="test_chol")


@pytest.mark.parametrize("a", [np.zeros((2, 2)), np.array([[1.0, 2.0], [2.0, 1.0]])])
def test_potrf_without_a_cholesky_factor_raises(a):
    with pytest.raises(MXNetError, match="potrf"):
        mx.nd.linalg.potrf(mx.nd.array(a))


def test_potrf_values():
    a = np.array([[4.0, 2.0], [2.0, 3.0]])
    got = mx.nd.linalg.potrf(mx.nd.array(a)).asnumpy()
    np.testing.assert_allclose(got, np.linalg.cholesky(a), rtol=1e-6)


class _SoftmaxLoss(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        x = in_data[0].asnumpy()
        y = np.exp(x - x.max(axis=1, keepdims=True))
        self.assign(out_data[0], req[0], mx.nd.array(y / y.sum(axis=1, keepdims=True)))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        lab = in_data[1].asnumpy().astype(int)
        y = out_data[0].asnumpy()
        y[np.arange(len(lab)), lab] -= 1.0
        self.assign(in_grad[0], req[0], mx.nd.array(y))


@mx.operator.register("test_softmax_loss")
class _SoftmaxLossProp(mx.operator.CustomOpProp):
    def __init__(self):
        super().__init__(need_top_grad=False)

    def list_arguments(self):
        return ["data", "label"]

    def infer_shape(self, in_shape):
        return [in_shape[0], (in_shape[0][0],)], [in_shape[0]], []

    def create_operator(self, ctx, shapes, dtypes):
        return _SoftmaxLoss()


def test_custom_loss_label_shape_is_inferred_and_needs_no_head():
    fc = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=3, name="fc")
    net = mx.sym.Custom(fc, name="softmax", op_type="test_softmax_loss")
    assert net.list_arguments() == ["data", "fc_weight", "fc_bias", "softmax_label"]
    arg_shapes, out_shapes, _ = net.infer_shape(data=(4, 5))
    assert arg_shapes[-1] == (4,) and out_shapes == [(4, 3)]
    rs = np.random.RandomState(0)
    x, w, b = rs.randn(4, 5), rs.randn(3, 5), rs.randn(3)
    lab = np.array([0, 2, 1, 2])
    exe = net.simple_bind(mx.cpu(), data=(4, 5))  # the label's shape from infer_shape
    for n, v in (("data", x), ("fc_weight", w), ("fc_bias", b), ("softmax_label", lab)):
        exe.arg_dict[n][:] = v
    exe.forward(is_train=True)
    exe.backward()  # a loss (need_top_grad=False): no head gradient needed
    z = x @ w.T + b
    p = np.exp(z - z.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    dz = p.copy()
    dz[np.arange(4), lab] -= 1
    np.testing.assert_allclose(exe.grad_dict["fc_weight"].asnumpy(), dz.T @ x, rtol=1e-4)
    np.testing.assert_allclose(exe.grad_dict["fc_bias"].asnumpy(), dz.sum(0), rtol=1e-4)
