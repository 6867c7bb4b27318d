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
