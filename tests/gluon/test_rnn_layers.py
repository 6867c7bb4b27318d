"""Fused recurrent layers ``gluon.rnn.RNN/LSTM/GRU`` against MXNet 1.9.1.

Outputs and gradients (inputs, given states, every parameter) on MXNet's fixtures
(``tools/make_rnn_fixtures.py``), eager and hybridized; parameter names, shapes,
file keys both ways; calling with and without states; export and import of the
``RNN`` node.
"""

import json
import sys
from pathlib import Path

import jax
import numpy as np
import pytest
import rnn_fixtures as rf

import gluonjax as mx
from gluonjax import autograd, gluon, nd
from gluonjax.base import MXNetError
from gluonjax.gluon.rnn.rnn_layer import RecurrentStateError

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mxnet_ref import needs_mxnet, run_mxnet  # noqa: E402

LAYERS = rf.records()["layers"]
# each case runs one path (compiles dominate the test time): these hybridized, the rest eager
HYBRID = {"lstm_2bi", "gru_1_ntc", "lstmp_2bi", "lstm_len_2bi_ntc", "relu_1", "lstm_clip"}


def _run(layer, a, record):
    def fn(x, states, lengths):
        kw = {"sequence_length": lengths} if lengths is not None else {}
        if record["states"]:
            return layer(x, states, **kw)
        return layer(x, **kw), []

    return rf.run_and_grad(fn, layer, a, len(layer.state_info()) if record["states"] else 0)


@pytest.mark.parametrize("record", LAYERS, ids=[r["id"] for r in LAYERS])
def test_layer_matches_mxnet(record):
    a = rf.arrays(record, "layers")
    layer = rf.build_layer(record)
    layer.initialize()
    layer.infer_shape(nd.array(a["x"]))  # input_size deferred: from the input
    rf.set_params(layer, a)
    assert repr(layer) == record["repr"]
    assert {k: list(p.shape) for k, p in layer._collect_params_with_prefix().items()} == record[
        "params"
    ]
    assert {k: p.name for k, p in layer._collect_params_with_prefix().items()} == record["names"]
    if record["id"] in HYBRID:
        layer.hybridize()
    rf.check(_run(layer, a, record), a, record["id"])


def test_deferred_input_size_and_call_forms():
    layer = gluon.rnn.GRU(4, num_layers=2, layout="NTC")
    layer.initialize()
    assert layer.l0_i2h_weight.shape == (12, 0)
    x = nd.ones((2, 5, 3))
    out = layer(x)
    assert isinstance(out, nd.NDArray) and out.shape == (2, 5, 4)
    assert layer.l0_i2h_weight.shape == (12, 3) and layer.l1_i2h_weight.shape == (12, 4)
    out2, states = layer(x, layer.begin_state(2))
    assert isinstance(states, list) and [s.shape for s in states] == [(2, 2, 4)]
    np.testing.assert_allclose(out.asnumpy(), out2.asnumpy(), rtol=1e-6)
    out3, h = layer(x, layer.begin_state(2)[0])  # a single state array is accepted
    assert h[0].shape == (2, 2, 4)


def test_begin_state_and_state_info():
    layer = gluon.rnn.LSTM(5, num_layers=3, bidirectional=True, projection_size=2)
    info = layer.state_info(4)
    assert [i["shape"] for i in info] == [(6, 4, 2), (6, 4, 5)]
    assert all(i["__layout__"] == "LNC" for i in info)
    ones = layer.begin_state(4, func=nd.ones)
    assert [s.shape for s in ones] == [(6, 4, 2), (6, 4, 5)]
    assert float(ones[1].asnumpy().min()) == 1.0
    syms = layer.begin_state(0, func=mx.sym.var)
    assert [s.name for s in syms] == [layer.prefix + "h0_0", layer.prefix + "h0_1"]


def test_wrong_state_shape_raises():
    layer = gluon.rnn.RNN(3, input_size=2)
    layer.initialize()
    with pytest.raises(RecurrentStateError, match=r"Expecting \(1, 2, 3\)"):
        layer(nd.ones((4, 2, 2)), nd.zeros((1, 3, 3)))
    with pytest.raises(ValueError):  # RecurrentStateError is a ValueError, as in MXNet
        layer(nd.ones((4, 2, 2)), nd.zeros((2, 2, 3)))


def test_invalid_arguments():
    with pytest.raises(MXNetError, match="layout"):
        gluon.rnn.LSTM(3, layout="NCT")
    with pytest.raises(MXNetError, match="activation"):
        gluon.rnn.RNN(3, activation="sigmoid")
    layer = gluon.rnn.GRU(3, use_sequence_length=True)
    layer.initialize()
    with pytest.raises(MXNetError, match="sequence_length"):
        layer(nd.ones((2, 1, 2)))


def test_dropout_between_layers_only_in_training():
    layer = gluon.rnn.LSTM(8, num_layers=2, dropout=0.5, input_size=4)
    layer.initialize()
    x = nd.ones((6, 3, 4))
    a, b = layer(x).asnumpy(), layer(x).asnumpy()
    np.testing.assert_array_equal(a, b)  # predict mode: no dropout
    with autograd.record():
        c = layer(x).asnumpy()
        d = layer(x).asnumpy()
    assert not np.allclose(c, a) and not np.allclose(c, d)  # fresh masks per call


def test_hybridized_layer_is_one_compiled_call_with_a_scan_per_layer_and_direction():
    layer = gluon.rnn.LSTM(4, num_layers=2, bidirectional=True, input_size=3)
    layer.initialize()
    layer.hybridize()
    x = nd.ones((5, 2, 3))
    layer(x)
    cached = layer._cached
    key = jax.random.PRNGKey(0)
    jaxpr = jax.make_jaxpr(lambda p, v: cached._pure(p, [v], key, np.uint32(0), False)[0])(
        [p.data()._data for p in cached.params], x._data
    )

    def count(j, name):
        n = 0
        for e in j.eqns:
            n += e.primitive.name == name
            for sub in jax.core.jaxprs_in_params(e.params):
                n += count(sub, name)
        return n

    assert count(jaxpr.jaxpr, "scan") == 4  # 2 layers x 2 directions, time not unrolled


def test_file_keys_are_mxnets(tmp_path):
    layer = gluon.rnn.LSTM(3, num_layers=2, bidirectional=True, input_size=2)
    keys = list(layer._collect_params_with_prefix())
    assert keys[:5] == [
        "_unfused.0.l_cell.i2h_weight",
        "_unfused.0.l_cell.h2h_weight",
        "_unfused.0.l_cell.i2h_bias",
        "_unfused.0.l_cell.h2h_bias",
        "_unfused.0.r_cell.i2h_weight",
    ]
    proj = gluon.rnn.LSTM(3, projection_size=2, input_size=2)
    assert list(proj._collect_params_with_prefix())[-1] == "_unfused.0.h2r_weight"


def test_loads_mxnet_params_file():
    ref = json.loads((rf.FIXTURES / "lstm_bi.json").read_text())
    layer = gluon.rnn.LSTM(3, num_layers=2, bidirectional=True)
    layer.load_parameters(str(rf.FIXTURES / "lstm_bi.params"))
    y = layer(nd.array(ref["x"])).asnumpy()
    np.testing.assert_allclose(y, np.array(ref["y"], np.float32), rtol=1e-5, atol=1e-6)


@needs_mxnet
def test_mxnet_loads_gluonjax_params_file(tmp_path):
    layer = gluon.rnn.GRU(3, num_layers=2, bidirectional=True, layout="NTC", input_size=2)
    layer.initialize(mx.init.Uniform(0.5))
    x = np.random.default_rng(1).standard_normal((2, 4, 2)).astype(np.float32)
    y = layer(nd.array(x)).asnumpy()
    path = tmp_path / "gru.params"
    layer.save_parameters(str(path))
    np.save(tmp_path / "x.npy", x)
    script = f"""
import mxnet as mx, numpy as np
layer = mx.gluon.rnn.GRU(3, num_layers=2, bidirectional=True, layout='NTC')
layer.load_parameters({str(path)!r})
print(list(layer(mx.nd.array(np.load({str(tmp_path / "x.npy")!r}))).asnumpy().ravel()))
"""
    out = run_mxnet(script).strip().splitlines()[-1]
    got = np.array(eval(out), np.float32).reshape(y.shape)  # noqa: S307  (our own output)
    np.testing.assert_allclose(got, y, rtol=1e-5, atol=1e-6)


def test_export_writes_the_rnn_node(tmp_path):
    net = gluon.nn.HybridSequential()
    with net.name_scope():
        net.add(gluon.nn.Embedding(10, 4))
        net.add(gluon.rnn.LSTM(5, num_layers=2, layout="NTC"))
        net.add(gluon.nn.Dense(10, flatten=False))
    net.initialize()
    net.hybridize()
    x = nd.array([[1, 2, 3], [4, 5, 6]])
    y = net(x).asnumpy()
    net.export(str(tmp_path / "m"), stablehlo=False)
    graph = json.loads((tmp_path / "m-symbol.json").read_text())
    ops = [n["op"] for n in graph["nodes"]]
    assert ops.count("RNN") == 1 and ops.count("_rnn_param_concat") == 1
    assert "scan" not in json.dumps(graph)
    rnn = next(n for n in graph["nodes"] if n["op"] == "RNN")
    assert rnn["attrs"]["mode"] == "lstm" and rnn["attrs"]["state_size"] == "5"
    back = gluon.SymbolBlock.imports(
        str(tmp_path / "m-symbol.json"), ["data"], str(tmp_path / "m-0000.params")
    )
    np.testing.assert_allclose(back(x).asnumpy(), y, rtol=1e-5, atol=1e-6)
    x5 = nd.array([[1, 2, 3], [4, 5, 6], [7, 8, 9], [1, 1, 1], [2, 2, 2]])
    assert back(x5).shape == (5, 3, 10)  # the begin state follows the batch size


def test_imports_mxnet_exported_rnn_graph():
    io = np.load(rf.FIXTURES / "lm_io.npz")
    net = gluon.SymbolBlock.imports(
        str(rf.FIXTURES / "lm-symbol.json"), ["data"], str(rf.FIXTURES / "lm-0000.params")
    )
    graph = json.loads((rf.FIXTURES / "lm-symbol.json").read_text())
    assert "RNN" in [n["op"] for n in graph["nodes"]]
    np.testing.assert_allclose(net(nd.array(io["x"])).asnumpy(), io["y"], rtol=1e-5, atol=1e-6)


def test_float16_layer():
    layer = gluon.rnn.GRU(4, input_size=3, dtype="float16")
    layer.initialize()
    x = nd.ones((2, 1, 3), dtype="float16")
    out, h = layer(x, layer.begin_state(1))
    assert out.dtype == np.float16 and h[0].dtype == np.float16
    ref = gluon.rnn.GRU(4, input_size=3)
    ref.initialize()
    for (_, p), (_, q) in zip(
        sorted(layer.collect_params().items()), sorted(ref.collect_params().items())
    ):
        q.set_data(p.data().astype("float32"))
    np.testing.assert_allclose(
        out.asnumpy(), ref(x.astype("float32")).asnumpy(), rtol=1e-2, atol=1e-3
    )
