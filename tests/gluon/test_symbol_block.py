"""gluon.SymbolBlock on in-memory graphs: params, eager / hybridized forward, training,
composition on symbols, imports / export round trips.

References are NumPy code written here (and naming rules checked with MXNet 1.9.1).
"""

from __future__ import annotations

import numpy as np
import pytest

import gluonjax as mx
from gluonjax import nd
from gluonjax.base import DeferredInitializationError, MXNetError, ParameterMismatchError

EPS = 1e-3  # BatchNorm's default eps
RNG = np.random.RandomState(3)


def _graph():
    """data(N,4) -> fc1(5) -> bn -> relu -> fc2(3)."""
    data = mx.sym.var("data")
    h = mx.sym.FullyConnected(data, num_hidden=5, name="fc1")
    h = mx.sym.BatchNorm(h, fix_gamma=False, name="bn")
    h = mx.sym.Activation(h, act_type="relu", name="relu1")
    return data, mx.sym.FullyConnected(h, num_hidden=3, name="fc2")


def _values():
    r = np.random.RandomState(11)
    return {
        "fc1_weight": r.randn(5, 4).astype(np.float32),
        "fc1_bias": r.randn(5).astype(np.float32),
        "bn_gamma": (1 + 0.3 * r.randn(5)).astype(np.float32),
        "bn_beta": r.randn(5).astype(np.float32) * 0.2,
        "fc2_weight": r.randn(3, 5).astype(np.float32),
        "fc2_bias": r.randn(3).astype(np.float32),
        "bn_moving_mean": r.randn(5).astype(np.float32) * 0.1,
        "bn_moving_var": (1 + r.rand(5)).astype(np.float32),
    }


def _block(hybrid=False):
    data, out = _graph()
    net = mx.gluon.SymbolBlock(out, data)
    net.initialize()
    for k, v in _values().items():
        net.collect_params()[k].set_data(v)
    if hybrid:
        net.hybridize()
    return net


def _np_forward(v, x, training=False):
    """(output, hidden before fc2, batch mean, batch var) in float64."""
    v = {k: a.astype(np.float64) for k, a in v.items()}
    h = x @ v["fc1_weight"].T + v["fc1_bias"]
    if training:
        mean, var = h.mean(0), h.var(0)
    else:
        mean, var = v["bn_moving_mean"], v["bn_moving_var"]
    n = (h - mean) / np.sqrt(var + EPS) * v["bn_gamma"] + v["bn_beta"]
    r = np.maximum(n, 0)
    return r @ v["fc2_weight"].T + v["fc2_bias"], r, mean, var


def test_parameters_names_and_grad_req():
    data, out = _graph()
    net = mx.gluon.SymbolBlock(out, data)
    params = net.collect_params()
    # arguments first (graph order), then auxiliary states, named after their variables
    assert list(params.keys()) == [
        "fc1_weight",
        "fc1_bias",
        "bn_gamma",
        "bn_beta",
        "fc2_weight",
        "fc2_bias",
        "bn_moving_mean",
        "bn_moving_var",
    ]
    assert params["bn_moving_mean"].grad_req == "null"
    assert params["bn_moving_var"].grad_req == "null"
    assert params["fc1_weight"].grad_req == "write"
    assert net.prefix == "" and net.name.startswith("symbolblock")
    assert repr(net) == "SymbolBlock(\n<Symbol fc2> : 1 -> 1\n)"


def test_structural_names_strip_common_prefix():
    # MXNet 1.9.1: structural names drop the parameters' longest common prefix
    data = mx.sym.var("data")
    out = mx.sym.FullyConnected(data, num_hidden=2, name="net0_fc")
    net = mx.gluon.SymbolBlock(out, data)
    assert list(net._collect_params_with_prefix()) == ["weight", "bias"]
    assert list(net.collect_params()) == ["net0_fc_weight", "net0_fc_bias"]


@pytest.mark.parametrize("hybrid", [False, True])
def test_forward_predict(hybrid):
    net = _block(hybrid)
    x = RNG.randn(6, 4).astype(np.float32)
    want = _np_forward(_values(), x)[0]
    np.testing.assert_allclose(net(nd.array(x)).asnumpy(), want, rtol=1e-5, atol=1e-5)
    # a second call (cached graph) and a new batch size
    x2 = RNG.randn(2, 4).astype(np.float32)
    np.testing.assert_allclose(
        net(nd.array(x2)).asnumpy(), _np_forward(_values(), x2)[0], rtol=1e-5, atol=1e-5
    )


@pytest.mark.parametrize("hybrid", [False, True])
def test_training_mode_updates_running_stats(hybrid):
    net = _block(hybrid)
    x = RNG.randn(8, 4).astype(np.float32)
    v = _values()
    want, _, mean, var = _np_forward(v, x, training=True)
    with mx.autograd.record():
        y = net(nd.array(x))
    np.testing.assert_allclose(y.asnumpy(), want, rtol=1e-4, atol=1e-4)
    p = net.collect_params()
    # MXNet 1.x moves them in the backward, not in the recorded forward
    np.testing.assert_array_equal(p["bn_moving_mean"].data().asnumpy(), v["bn_moving_mean"])
    y.backward()
    np.testing.assert_allclose(
        p["bn_moving_mean"].data().asnumpy(),
        0.9 * v["bn_moving_mean"] + 0.1 * mean,
        rtol=1e-5,
        atol=1e-6,
    )
    np.testing.assert_allclose(
        p["bn_moving_var"].data().asnumpy(),
        0.9 * v["bn_moving_var"] + 0.1 * var,
        rtol=1e-5,
        atol=1e-6,
    )
    # predict mode leaves them alone
    before = p["bn_moving_mean"].data().asnumpy().copy()
    net(nd.array(x))
    np.testing.assert_array_equal(p["bn_moving_mean"].data().asnumpy(), before)


@pytest.mark.parametrize("hybrid", [False, True])
def test_gradients_and_trainer_step(hybrid):
    net = _block(hybrid)
    x = RNG.randn(4, 4).astype(np.float32)
    head = RNG.randn(4, 3).astype(np.float32)
    with mx.autograd.record(train_mode=False):
        y = net(nd.array(x))
    y.backward(nd.array(head))
    v = _values()
    _, r, _, _ = _np_forward(v, x)
    p = net.collect_params()
    np.testing.assert_allclose(p["fc2_weight"].grad().asnumpy(), head.T @ r, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(p["fc2_bias"].grad().asnumpy(), head.sum(0), rtol=1e-5, atol=1e-5)
    # fc1_bias by central finite differences of sum(y * head) in float64
    fd = np.zeros(5)
    for i in range(5):
        for s in (1, -1):
            w = dict(v)
            w["fc1_bias"] = v["fc1_bias"].astype(np.float64).copy()
            w["fc1_bias"][i] += s * 1e-6
            fd[i] += s * (_np_forward(w, x.astype(np.float64))[0] * head).sum() / 2e-6
    np.testing.assert_allclose(p["fc1_bias"].grad().asnumpy(), fd, rtol=1e-3, atol=1e-3)
    trainer = mx.gluon.Trainer(p, "sgd", {"learning_rate": 0.5})
    g = p["fc2_weight"].grad().asnumpy().copy()
    trainer.step(1)
    np.testing.assert_allclose(
        p["fc2_weight"].data().asnumpy(), v["fc2_weight"] - 0.5 * g, rtol=1e-5, atol=1e-5
    )
    assert p["bn_moving_var"].grad_req == "null"


def test_deferred_init_infers_shapes():
    data, out = _graph()
    net = mx.gluon.SymbolBlock(out, data)
    net.initialize()
    assert net.collect_params()["fc1_weight"].shape is None
    net(nd.ones((2, 7)))
    shapes = {k: p.shape for k, p in net.collect_params().items()}
    assert shapes["fc1_weight"] == (5, 7) and shapes["fc2_weight"] == (3, 5)
    assert shapes["bn_moving_var"] == (5,)


def test_errors():
    data, out = _graph()
    with pytest.raises(MXNetError, match="must be variables"):
        mx.gluon.SymbolBlock(out, [data * 2])
    net = mx.gluon.SymbolBlock(out, data)
    with pytest.raises(MXNetError, match="not been initialized"):
        net(nd.ones((2, 4)))
    net.initialize()
    with pytest.raises(MXNetError, match="takes 1 input"):
        net(nd.ones((2, 4)), nd.ones((2, 4)))
    data = mx.sym.var("data")
    net2 = mx.gluon.SymbolBlock(mx.sym.broadcast_add(data, mx.sym.var("w")), data)
    net2.initialize()
    with pytest.raises(DeferredInitializationError, match="'w|w:"):  # nothing fixes w's shape
        net2(nd.ones((2, 4)))


def test_multiple_inputs_and_outputs():
    a, b = mx.sym.var("a"), mx.sym.var("b")
    s = mx.sym.elemwise_add(a, b, name="s")
    net = mx.gluon.SymbolBlock([s, a * 2], [a, b])
    x, y = RNG.randn(2, 3).astype(np.float32), RNG.randn(2, 3).astype(np.float32)
    for hybrid in (False, True):
        net.hybridize(hybrid)
        out = net(nd.array(x), nd.array(y))
        assert isinstance(out, list) and len(out) == 2
        np.testing.assert_allclose(out[0].asnumpy(), x + y, rtol=1e-6)
        np.testing.assert_allclose(out[1].asnumpy(), 2 * x, rtol=1e-6)


def test_call_on_symbol_composes():
    net = _block()
    e = mx.sym.var("e")
    out = net(mx.sym.relu(e, name="pre"))
    assert out.list_arguments() == [
        "e",
        "fc1_weight",
        "fc1_bias",
        "bn_gamma",
        "bn_beta",
        "fc2_weight",
        "fc2_bias",
    ]
    assert out.list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]
    from gluonjax.symbol._eval import graph_function

    x = RNG.randn(3, 4).astype(np.float32)
    vals = {k: p.data()._data for k, p in net.collect_params().items()}
    args = {k: vals[k] for k in out.list_arguments() if k != "e"}
    args["e"] = x
    aux = {k: vals[k] for k in out.list_auxiliary_states()}
    got = graph_function(out)(args, aux)[0][0]
    np.testing.assert_allclose(
        np.asarray(got), _np_forward(_values(), np.maximum(x, 0))[0], rtol=1e-5, atol=1e-5
    )
    # the original graph is unchanged
    assert net._graph.list_arguments()[0] == "data"


@pytest.mark.parametrize("hybrid", [False, True])
def test_inside_hybrid_blocks(hybrid):
    inner = _block()

    class Outer(mx.gluon.HybridBlock):
        def __init__(self, **kw):
            super().__init__(**kw)
            self.inner = inner

        def hybrid_forward(self, F, x):
            return F.relu(self.inner(x * 2))

    seq = mx.gluon.nn.HybridSequential()
    seq.add(Outer())
    if hybrid:
        seq.hybridize()
    x = RNG.randn(5, 4).astype(np.float32)
    want = np.maximum(_np_forward(_values(), 2 * x)[0], 0)
    np.testing.assert_allclose(seq(nd.array(x)).asnumpy(), want, rtol=1e-5, atol=1e-5)
    with mx.autograd.record():  # a training step through the parent's trace updates the stats
        y = seq(nd.array(x))
    y.backward()  # (in the backward, as MXNet 1.x)
    _, _, mean, _ = _np_forward(_values(), 2 * x, training=True)
    np.testing.assert_allclose(
        inner.collect_params()["bn_moving_mean"].data().asnumpy(),
        0.9 * _values()["bn_moving_mean"] + 0.1 * mean,
        rtol=1e-5,
        atol=1e-6,
    )


def test_shared_params():
    net = _block()
    data, out = _graph()
    net2 = mx.gluon.SymbolBlock(out, data, params=net.collect_params())
    assert net2.collect_params()["fc1_weight"] is net.collect_params()["fc1_weight"]
    x = RNG.randn(2, 4).astype(np.float32)
    # the first call on a shape may sum in NumPy's order (gluonjax._ops.hostcall): rounding
    np.testing.assert_allclose(
        net2(nd.array(x)).asnumpy(), net(nd.array(x)).asnumpy(), rtol=1e-5, atol=1e-6
    )


def test_dropout_in_graph():
    data = mx.sym.var("data")
    net = mx.gluon.SymbolBlock(mx.sym.Dropout(data, p=0.5), data)
    x = np.ones((50, 40), np.float32)
    np.testing.assert_array_equal(net(nd.array(x)).asnumpy(), x)  # predict: identity
    for hybrid in (False, True):
        net.hybridize(hybrid)
        with mx.autograd.record():
            y = net(nd.array(x)).asnumpy()
        assert set(np.unique(y)) <= {0.0, 2.0}
        assert 0.35 < (y == 0).mean() < 0.65


def test_save_load_parameters_roundtrip(tmp_path):
    net = _block()
    f = str(tmp_path / "net.params")
    net.save_parameters(f)
    assert set(nd.load(f)) == set(net._collect_params_with_prefix())
    data, out = _graph()
    net2 = mx.gluon.SymbolBlock(out, data)
    net2.load_parameters(f)
    x = RNG.randn(2, 4).astype(np.float32)
    np.testing.assert_allclose(
        net2(nd.array(x)).asnumpy(), _np_forward(_values(), x)[0], rtol=1e-5, atol=1e-5
    )


def _write_model(tmp_path, arrays):
    data, out = _graph()
    sym_file = tmp_path / "m-symbol.json"
    sym_file.write_text(out.tojson())
    param_file = str(tmp_path / "m-0000.params")
    nd.save(param_file, {k: nd.array(v, dtype=v.dtype) for k, v in arrays.items()})
    return str(sym_file), param_file


def test_imports_arg_aux_keys(tmp_path):
    v = _values()
    aux = ("bn_moving_mean", "bn_moving_var")
    sym_file, param_file = _write_model(
        tmp_path, {("aux:" if k in aux else "arg:") + k: a for k, a in v.items()}
    )
    for hybrid in (False, True):
        net = mx.gluon.SymbolBlock.imports(sym_file, ["data"], param_file)
        net.hybridize(hybrid)
        x = RNG.randn(3, 4).astype(np.float32)
        np.testing.assert_allclose(
            net(nd.array(x)).asnumpy(), _np_forward(v, x)[0], rtol=1e-5, atol=1e-5
        )


def test_imports_missing_and_extra(tmp_path):
    v = _values()
    partial = {"arg:" + k: a for k, a in v.items() if k != "fc2_bias"}
    sym_file, param_file = _write_model(tmp_path, dict(partial, **{"arg:stray": v["fc2_bias"]}))
    with pytest.raises(ParameterMismatchError, match="fc2_bias") as err:
        mx.gluon.SymbolBlock.imports(sym_file, "data", param_file)
    assert "stray" in str(err.value)
    with pytest.raises(ParameterMismatchError, match="stray"):
        mx.gluon.SymbolBlock.imports(sym_file, "data", param_file, allow_missing=True)
    net = mx.gluon.SymbolBlock.imports(
        sym_file, "data", param_file, allow_missing=True, ignore_extra=True
    )
    assert net.collect_params()["fc2_bias"]._data is None
    with pytest.raises(MXNetError, match="not been initialized"):
        net(nd.ones((2, 4)))
    with pytest.raises(MXNetError, match="bogus"):
        mx.gluon.SymbolBlock.imports(sym_file, ["bogus"], param_file)


def test_imports_keeps_saved_dtype(tmp_path):
    v = {k: a.astype(np.float16) for k, a in _values().items()}
    sym_file, param_file = _write_model(tmp_path, {"arg:" + k: a for k, a in v.items()})
    net = mx.gluon.SymbolBlock.imports(sym_file, "data", param_file)
    assert net.collect_params()["fc1_weight"].data().dtype == np.float16


def test_export_then_imports(tmp_path):
    net = _block(hybrid=True)
    x = RNG.randn(3, 4).astype(np.float32)
    net(nd.array(x))
    net.export(str(tmp_path / "again"), example_inputs=[nd.array(x)], stablehlo=False)
    net2 = mx.gluon.SymbolBlock.imports(
        str(tmp_path / "again-symbol.json"), ["data"], str(tmp_path / "again-0000.params")
    )
    np.testing.assert_allclose(
        net2(nd.array(x)).asnumpy(), _np_forward(_values(), x)[0], rtol=1e-5, atol=1e-5
    )


def test_cast_float16_keeps_batchnorm_float32():
    net = _block()
    net.cast("float16")
    p = net.collect_params()
    assert p["fc1_weight"].dtype == np.float16
    for k in ("bn_gamma", "bn_beta", "bn_moving_mean", "bn_moving_var"):
        assert p[k].dtype == np.float32
