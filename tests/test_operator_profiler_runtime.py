"""``mx.operator`` (Python operators), ``mx.profiler`` (on jax.profiler), ``mx.runtime``."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import gluonjax as mx


class _Softmax(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        x = in_data[0].asnumpy()
        y = np.exp(x - x.max(axis=1, keepdims=True))
        self.assign(out_data[0], req[0], mx.nd.array(y / y.sum(axis=1, keepdims=True)))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        y = out_data[0].asnumpy()
        g = out_grad[0].asnumpy()
        self.assign(in_grad[0], req[0], mx.nd.array(y * (g - (g * y).sum(1, keepdims=True))))


@mx.operator.register("test_softmax")
class _SoftmaxProp(mx.operator.CustomOpProp):
    def __init__(self, scale="1"):
        super().__init__(need_top_grad=True)
        self.scale = float(scale)

    def create_operator(self, ctx, shapes, dtypes):
        return _Softmax()


def test_custom_op_forward_and_gradient():
    x = mx.nd.array([[1.0, 2.0, 3.0], [0.0, 0.0, 1.0]])
    x.attach_grad()
    head = mx.nd.array([[1.0, 0.0, 0.0], [0.0, 2.0, 0.0]])
    with mx.autograd.record():
        y = mx.nd.Custom(x, op_type="test_softmax", scale=2)
    y.backward(head)
    x2 = x.copy()
    x2.attach_grad()
    with mx.autograd.record():
        y2 = mx.nd.softmax(x2)
    y2.backward(head)
    np.testing.assert_allclose(y.asnumpy(), y2.asnumpy(), rtol=1e-5)
    np.testing.assert_allclose(x.grad.asnumpy(), x2.grad.asnumpy(), rtol=1e-4, atol=1e-6)
    assert "test_softmax" in mx.operator.get_all_registered_operators()


def test_custom_op_errors_and_assign():
    with pytest.raises(mx.MXNetError, match="no operator registered"):
        mx.nd.Custom(mx.nd.ones(2), op_type="nope")
    with pytest.raises(mx.MXNetError, match="inputs"):
        mx.nd.Custom(mx.nd.ones(2), mx.nd.ones(2), op_type="test_softmax")
    op = mx.operator.CustomOp()
    dst = mx.nd.ones(2)
    op.assign(dst, "add", mx.nd.ones(2))
    op.assign(dst, "null", mx.nd.zeros(2))
    assert dst.asnumpy().tolist() == [2.0, 2.0]
    prop = mx.operator.CustomOpProp()
    assert prop.infer_shape([(2, 3)]) == ([(2, 3)], [(2, 3)], [])
    assert prop.declare_backward_dependency([1], [2], [3]) == [1, 2, 3]


def test_profiler_trace_dump_and_stats(tmp_path):
    out = os.path.join(tmp_path, "profile.json")
    mx.profiler.set_config(filename=out, profile_all=True, aggregate_stats=True)
    mx.profiler.set_state("run")
    assert mx.profiler.state() == "run"
    domain = mx.profiler.Domain("train")
    task = domain.new_task("batch")
    counter = domain.new_counter("seen", 0)
    with mx.profiler.scope("fwd"):
        task.start()
        (mx.nd.ones((8, 8)) * 3).wait_to_read()
        task.stop()
    counter += 5
    domain.new_marker("done").mark()
    mx.profiler.set_state("stop")
    mx.profiler.dump()
    with open(out) as f:
        trace = json.load(f)
    assert "traceEvents" in trace
    table = mx.profiler.dumps()
    assert "fwd" in table and "train::batch" in table
    stats = json.loads(mx.profiler.dumps(format="json", sort_by="count"))
    assert stats["Time"]["counter:train::seen"]["total"] == 5.0
    with pytest.raises(mx.MXNetError):
        mx.profiler.set_state("go")
    with pytest.raises(mx.MXNetError):
        mx.profiler.set_config(bogus=1)


def test_runtime_features():
    f = mx.runtime.Features()
    assert f is mx.runtime.Features()
    assert f.is_enabled("lapack") and f.is_enabled("PROFILER")
    assert not f.is_enabled("MKLDNN")
    assert f.is_enabled("INT64_TENSOR_SIZE")  # jax's 64-bit types are on in gluonjax
    assert f.is_enabled("CUDA") == (mx.context.num_gpus() > 0)
    with pytest.raises(RuntimeError, match="unknown"):
        f.is_enabled("NOPE")
    assert len(mx.runtime.feature_list()) == len(f)
    assert repr(f["LAPACK"]).endswith("LAPACK")


def test_custom_op_in_a_graph_and_a_hybridized_block():
    data = mx.sym.var("data")
    y = mx.sym.Custom(data, op_type="test_softmax", name="sm", scale=2)
    assert y.list_arguments() == ["data"]
    x = mx.nd.array([[1.0, 2.0, 3.0], [0.0, 0.0, 1.0]])
    grad = mx.nd.zeros(x.shape)
    ex = y.bind(mx.cpu(), {"data": x}, args_grad={"data": grad})
    out = ex.forward(is_train=True)[0]
    np.testing.assert_allclose(out.asnumpy(), mx.nd.softmax(x).asnumpy(), rtol=1e-5)
    head = mx.nd.array([[1.0, 0.0, 0.0], [0.0, 2.0, 0.0]])
    ex.backward(head)
    x2 = x.copy()
    x2.attach_grad()
    with mx.autograd.record():
        s = mx.nd.softmax(x2)
    s.backward(head)
    np.testing.assert_allclose(grad.asnumpy(), x2.grad.asnumpy(), rtol=1e-4, atol=1e-6)
    back = mx.sym.load_json(y.tojson())
    np.testing.assert_allclose(back.eval(data=x)[0].asnumpy(), out.asnumpy(), rtol=1e-6)

    class Net(mx.gluon.HybridBlock):
        def hybrid_forward(self, F, v):
            return F.Custom(v * 1.0, op_type="test_softmax")

    net = Net()
    net.hybridize()
    np.testing.assert_allclose(net(x).asnumpy(), out.asnumpy(), rtol=1e-5)
