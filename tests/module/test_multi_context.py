"""Module and DataParallelExecutorGroup over several (logical) contexts."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import gluonjax as mx
from gluonjax.module.executor_group import DataParallelExecutorGroup

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mxnet_ref import needs_mxnet, run_mxnet  # noqa: E402

CTXS = [mx.cpu(0), mx.cpu(1)]


def test_batch_is_split_along_the_layout_batch_axis():
    sym = mx.sym.Activation(mx.sym.var("data"), act_type="relu", __layout__="TNC")
    mod = mx.mod.Module(sym, ("data",), None, context=CTXS)
    mod.bind(data_shapes=[mx.io.DataDesc("data", (3, 8, 7), layout="TNC")])
    mod.init_params()
    x = np.linspace(-1, 1, 3 * 8 * 7, dtype=np.float32).reshape(3, 8, 7)
    mod.forward(mx.io.DataBatch([mx.nd.array(x)]))
    np.testing.assert_array_equal(mod.get_outputs()[0].asnumpy(), np.maximum(x, 0))
    parts = mod.get_outputs(merge_multi_context=False)[0]
    assert [p.shape for p in parts] == [(3, 4, 7), (3, 4, 7)]
    np.testing.assert_array_equal(parts[1].asnumpy(), np.maximum(x[:, 4:], 0))


def test_input_gradients_are_merged_over_contexts():
    a, b, c = (mx.sym.var(n, __layout__="NC") for n in "abc")
    net = mx.mod.Module(
        a + 2 * b + 3 * c, data_names=["b", "c", "a"], label_names=None, context=CTXS
    )
    net.bind(data_shapes=[("b", (5, 5)), ("c", (5, 5)), ("a", (5, 5))], inputs_need_grad=True)
    net.init_params()
    net.forward(mx.io.DataBatch([mx.nd.ones((5, 5))] * 3))
    net.backward([mx.nd.ones((5, 5))])
    grads = [g.asnumpy() for g in net.get_input_grads()]
    for g, want in zip(grads, (2.0, 3.0, 1.0), strict=True):
        np.testing.assert_array_equal(g, np.full((5, 5), want))


def test_bad_shapes_raise_type_error_and_leave_the_module_unbound():
    sym = mx.sym.Activation(mx.sym.var("data"), act_type="relu")
    mod = mx.mod.Module(sym, ("data",), None, context=CTXS)
    with pytest.raises(TypeError):
        mod.bind(data_shapes=[("data", mx.nd.array([10, 10]))])
    assert not mod.binded
    mod.bind(data_shapes=[("data", (10, 10))])
    assert mod.binded


def _fc_module(ctx):
    sym = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=3, name="fc")
    mod = mx.mod.Module(sym, ("data",), None, context=ctx)
    mod.bind(data_shapes=[("data", (4, 5))])
    mod.init_params(mx.init.Uniform(0.5))
    mod.init_optimizer(optimizer_params={"learning_rate": 0.1, "momentum": 0.9})
    return mod


def test_multi_device_states_are_keyed_by_name_and_load_into_one_device(tmp_path):
    mod = _fc_module(CTXS)
    assert mod._updater is None and mod._kvstore is not None
    x = mx.nd.array(np.arange(20, dtype=np.float32).reshape(4, 5) / 20)
    mod.forward(mx.io.DataBatch([x]))
    mod.backward([mx.nd.ones((4, 3))])
    mod.update()
    states = mod._kvstore._updater.states
    assert set(states) == {"fc_weight", "fc_bias"}
    mod.save_checkpoint(str(tmp_path / "m"), 0, save_optimizer_states=True)
    one = mx.mod.Module.load(
        str(tmp_path / "m"), 0, load_optimizer_states=True, data_names=("data",), label_names=None
    )
    one.bind(data_shapes=[("data", (4, 5))])
    one.init_optimizer(optimizer_params={"learning_rate": 0.1, "momentum": 0.9})
    loaded = one._updater.states
    assert set(loaded) == set(states)
    for k in states:
        np.testing.assert_array_equal(loaded[k].asnumpy(), states[k].asnumpy())
    for k, v in mod.get_params()[0].items():
        np.testing.assert_array_equal(one.get_params()[0][k].asnumpy(), v.asnumpy())


@needs_mxnet
def test_two_context_training_matches_mxnet():
    rng = np.random.RandomState(0)
    x = rng.uniform(-1, 1, (6, 4, 5)).astype(np.float32)
    w0 = rng.uniform(-0.5, 0.5, (3, 5)).astype(np.float32)
    b0 = rng.uniform(-0.5, 0.5, (3,)).astype(np.float32)
    y = rng.randint(0, 3, (6, 4)).astype(np.float32)
    script = f"""
import mxnet as mx, numpy as np
x = np.array({x.tolist()}, dtype=np.float32)
y = np.array({y.tolist()}, dtype=np.float32)
sym = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=3, name='fc'),
                           name='softmax')
mod = mx.mod.Module(sym, context=[mx.cpu(0), mx.cpu(1)])
mod.bind(data_shapes=[('data', (4, 5))], label_shapes=[('softmax_label', (4,))])
mod.init_params(arg_params={{'fc_weight': mx.nd.array({w0.tolist()}),
                            'fc_bias': mx.nd.array({b0.tolist()})}})
mod.init_optimizer(optimizer='sgd', optimizer_params={{'learning_rate': 0.5, 'momentum': 0.9}})
for i in range(6):
    mod.forward_backward(mx.io.DataBatch([mx.nd.array(x[i])], [mx.nd.array(y[i])]))
    mod.update()
p = mod.get_params()[0]
print(repr([p['fc_weight'].asnumpy().tolist(), p['fc_bias'].asnumpy().tolist()]))
"""
    ref = eval(run_mxnet(script).strip().splitlines()[-1])  # noqa: S307
    sym = mx.sym.SoftmaxOutput(
        mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=3, name="fc"), name="softmax"
    )
    mod = mx.mod.Module(sym, context=CTXS)
    mod.bind(data_shapes=[("data", (4, 5))], label_shapes=[("softmax_label", (4,))])
    mod.init_params(arg_params={"fc_weight": mx.nd.array(w0), "fc_bias": mx.nd.array(b0)})
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.5, "momentum": 0.9})
    for i in range(6):
        mod.forward_backward(mx.io.DataBatch([mx.nd.array(x[i])], [mx.nd.array(y[i])]))
        mod.update()
    p = mod.get_params()[0]
    np.testing.assert_allclose(p["fc_weight"].asnumpy(), ref[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(p["fc_bias"].asnumpy(), ref[1], rtol=1e-5, atol=1e-6)


def test_shared_group_shares_parameters_and_data_arrays():
    def net(layers):
        x = mx.sym.var("data")
        for i in range(layers):
            x = mx.sym.FullyConnected(x, num_hidden=4, name=f"fc{i}")
        return mx.sym.SoftmaxOutput(x, name="softmax")

    shapes = [("data", (6, 4))], [("softmax_label", (6,))]
    sym1 = net(2)
    params = [n for n in sym1.list_arguments() if n not in ("data", "softmax_label")]
    g1 = DataParallelExecutorGroup(sym1, CTXS, [1, 1], *shapes, params, True, False)
    assert all(set(d) == {"data", "softmax_label"} for d in g1.shared_data_arrays)
    g2 = DataParallelExecutorGroup(
        net(3), CTXS, [1, 1], *shapes, params, True, False, shared_group=g1
    )
    assert g2.shared_data_arrays is g1.shared_data_arrays
    assert {"fc2_weight", "fc2_bias"} <= set(g1.shared_data_arrays[0])
    for e1, e2 in zip(g1.execs, g2.execs, strict=True):
        for n in params:
            assert e1.arg_dict[n] is e2.arg_dict[n] and e1.grad_dict[n] is e2.grad_dict[n]
        assert e1.arg_dict["data"] is e2.arg_dict["data"]
    assert g1.slices == [slice(0, 3), slice(3, 6)]
