"""Whole models: MXNet 1.9.1's own model-zoo exports (tests/fixtures/zoo, with MXNet's
outputs) and gluonjax's model zoo, exported to ONNX and run in ONNX Runtime."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from onnx_common import onnx, run_ort

import gluonjax as mx
from gluonjax.gluon.model_zoo import vision

ZOO = Path(__file__).resolve().parents[1] / "fixtures" / "zoo"
# every family of gluon.model_zoo.vision, reduced, as real MXNet exported it
FAMILIES = [
    "resnet1",
    "resnet2",
    "mobilenet",
    "mobilenet2",
    "squeezenet10",
    "squeezenet11",
    "densenet",
    "inception3",
    "vgg_bn",
    "alexnet",
]


@pytest.fixture(scope="module")
def io():
    with np.load(ZOO / "io.npz") as f:
        return {k: f[k] for k in f.files}


@pytest.mark.parametrize("name", FAMILIES)
def test_mxnet_zoo_files_export_and_match_mxnet(name, io, tmp_path):
    x = io[f"{name}.x"].astype(np.float32)
    want = io[f"{name}.y"]
    path = mx.onnx.export_model(
        str(ZOO / f"{name}-symbol.json"),
        str(ZOO / f"{name}-0000.params"),
        [x.shape],
        [np.float32],
        str(tmp_path / f"{name}.onnx"),
    )
    (got,) = run_ort(path, [x])
    assert np.abs(want).max() > 1e-2  # the comparison is not vacuous
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def _spread(net):
    """Weights and statistics of unit scale, so that outputs are not vanishingly small."""
    rng = np.random.RandomState(1)
    for name, p in net.collect_params().items():
        shape = p.shape
        if name.endswith(("running_var", "gamma")):
            value = rng.uniform(0.5, 1.5, shape)
        elif name.endswith(("running_mean", "beta", "bias")):
            value = rng.uniform(-0.1, 0.1, shape)
        else:
            fan_in = int(np.prod(shape[1:])) or 1
            value = rng.normal(0, 1.4 / np.sqrt(fan_in), shape)
        p.set_data(mx.nd.array(value, dtype=p.dtype))


@pytest.mark.parametrize(
    "name, size",
    [("mobilenetv2_0.25", 64), pytest.param("resnet18_v1", 32, marks=pytest.mark.slow)],
)
def test_gluonjax_zoo_block_exports(name, size, tmp_path):
    net = vision.get_model(name, classes=10)
    net.initialize()
    x = mx.nd.array(np.random.RandomState(0).uniform(size=(2, 3, size, size)))
    net(x)
    _spread(net)
    net.hybridize()
    want = net(x).asnumpy()
    path = mx.onnx.export_block(net, x, str(tmp_path / "m.onnx"))
    (got,) = run_ort(path, [x.asnumpy()])
    assert np.abs(want).max() > 1e-2
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())


def test_dynamic_batch(tmp_path):
    net = mx.gluon.nn.HybridSequential()
    net.add(
        mx.gluon.nn.Conv2D(4, 3),
        mx.gluon.nn.BatchNorm(),
        mx.gluon.nn.Activation("relu"),
        mx.gluon.nn.GlobalAvgPool2D(),
        mx.gluon.nn.Flatten(),
        mx.gluon.nn.Dense(3),
    )
    net.initialize()
    net.hybridize()
    x = mx.nd.array(np.random.RandomState(0).uniform(size=(2, 3, 8, 8)))
    net(x)
    path = mx.onnx.export_block(net, x, str(tmp_path / "dyn.onnx"), dynamic=True)
    dims = onnx.load(path).graph.input[0].type.tensor_type.shape.dim
    assert not dims[0].HasField("dim_value") and [d.dim_value for d in dims[1:]] == [3, 8, 8]
    for batch in (1, 5):
        xb = mx.nd.array(np.random.RandomState(batch).uniform(size=(batch, 3, 8, 8)))
        (got,) = run_ort(path, [xb.asnumpy()])
        np.testing.assert_allclose(got, net(xb).asnumpy(), rtol=1e-5, atol=1e-5)
    # MXNet's form: export_model(..., dynamic=True) makes every axis symbolic
    prefix = str(tmp_path / "net")
    net.export(prefix, 0, stablehlo=False)
    path = mx.onnx.export_model(
        prefix + "-symbol.json",
        prefix + "-0000.params",
        [x.shape],
        np.float32,
        str(tmp_path / "all.onnx"),
        dynamic=True,
    )
    dims = onnx.load(path).graph.input[0].type.tensor_type.shape.dim
    assert not any(d.HasField("dim_value") for d in dims)
    (got,) = run_ort(path, [x.asnumpy()[:1]])
    np.testing.assert_allclose(got, net(x[:1]).asnumpy(), rtol=1e-5, atol=1e-5)


def test_symbol_and_params_objects(tmp_path):
    data = mx.sym.var("data")
    out = mx.sym.FullyConnected(data, num_hidden=2, name="fc")
    w = mx.nd.array([[1.0, 2.0, 3.0], [0.5, -1.0, 0.0]])
    b = mx.nd.array([0.25, -0.5])
    x = np.array([[1.0, 1.0, 1.0]], np.float32)
    want = x @ w.asnumpy().T + b.asnumpy()
    for params in ({"arg:fc_weight": w, "arg:fc_bias": b}, [{"fc_weight": w, "fc_bias": b}, {}]):
        path = mx.onnx.export_model(out, params, [(1, 3)], np.float32, str(tmp_path / "fc.onnx"))
        np.testing.assert_allclose(run_ort(path, [x])[0], want, rtol=1e-6)
    # MXNet's old keyword names
    path = mx.onnx.export_model(
        out,
        {"fc_weight": w, "fc_bias": b},
        input_shape=[(1, 3)],
        input_type=np.float32,
        onnx_file_path=str(tmp_path / "old.onnx"),
    )
    np.testing.assert_allclose(run_ort(path, [x])[0], want, rtol=1e-6)


@pytest.mark.parametrize("name", ["resnet1", "inception3", "squeezenet10"])
def test_mxnet_zoo_files_with_a_dynamic_batch(name, io, tmp_path):
    """A symbolic batch axis: MXNet's inputs stacked three times give MXNet's outputs."""
    x = io[f"{name}.x"].astype(np.float32)
    sig = [(None, *x.shape[1:])]
    path = mx.onnx.export_model(
        str(ZOO / f"{name}-symbol.json"),
        str(ZOO / f"{name}-0000.params"),
        [x.shape],
        np.float32,
        str(tmp_path / f"{name}.onnx"),
        dynamic=True,
        dynamic_input_shapes=sig,
    )
    (got,) = run_ort(path, [np.concatenate([x, x, x])])
    want = np.concatenate([io[f"{name}.y"]] * 3)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_duplicate_node_names_and_a_parameter_output(tmp_path):
    data = mx.sym.var("data")
    a = mx.sym.relu(data, name="same")
    b = mx.sym.sigmoid(a, name="same")  # MXNet graphs may repeat a name
    w = mx.sym.var("w")
    out = mx.sym.Group([b, w, b])
    wv = mx.nd.array([1.0, 2.0])
    path = mx.onnx.export_model(out, {"w": wv}, [(2,)], np.float32, str(tmp_path / "d.onnx"))
    x = np.array([-1.0, 2.0], np.float32)
    got = run_ort(path, [x])
    want = 1 / (1 + np.exp(-np.maximum(x, 0)))
    np.testing.assert_allclose(got[0], want, rtol=1e-6)
    np.testing.assert_array_equal(got[1], wv.asnumpy())
    np.testing.assert_allclose(got[2], want, rtol=1e-6)


@pytest.mark.parametrize(
    "make",
    [
        lambda: mx.gluon.rnn.LSTM(4, num_layers=2, bidirectional=True, input_size=3),
        lambda: mx.gluon.rnn.GRU(5, num_layers=2, input_size=3),
        lambda: mx.gluon.rnn.RNN(3, activation="relu", bidirectional=True, input_size=3),
        lambda: mx.gluon.rnn.RNN(3, activation="tanh", input_size=3),
    ],
    ids=["lstm", "gru", "rnn_relu", "rnn_tanh"],
)
@pytest.mark.parametrize("opset", [12, onnx.defs.onnx_opset_version()])
def test_recurrent_layers(make, opset, tmp_path):
    """The fused RNN op (its packed parameters folded into ONNX's W, R, B in ONNX's gate
    order) with the final states as outputs too."""
    layer = make()
    layer.initialize(mx.init.Uniform(0.5))
    layer.hybridize()
    x = mx.nd.array(np.random.RandomState(0).uniform(-1, 1, size=(5, 2, 3)))
    states = [
        mx.nd.array(np.random.RandomState(i + 1).uniform(-1, 1, size=s.shape))
        for i, s in enumerate(layer.begin_state(batch_size=2))
    ]
    out, new_states = layer(x, states)
    want = [out.asnumpy()] + [s.asnumpy() for s in new_states]
    path = mx.onnx.export_block(
        layer, [x, *states], str(tmp_path / "rnn.onnx"), opset_version=opset
    )
    got = run_ort(path, [x.asnumpy()] + [s.asnumpy() for s in states])
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
