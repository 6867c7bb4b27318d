"""mx.contrib.onnx: import_model / import_to_gluon / get_model_metadata.

Round trips compare with ONNX Runtime running the same file (independent code), and
MXNet 1.9.1's outputs of its own zoo exports."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from onnx_common import onnx, run_ort

import gluonjax as mx

ZOO = Path(__file__).resolve().parents[1] / "fixtures" / "zoo"


@pytest.fixture(scope="module")
def io():
    with np.load(ZOO / "io.npz") as f:
        return {k: f[k] for k in f.files}


@pytest.mark.parametrize("opset", [12, 13, onnx.defs.onnx_opset_version()])
@pytest.mark.parametrize("name", ["resnet2", "squeezenet11", "inception3", "mobilenet2"])
def test_round_trip_matches_mxnet_and_onnxruntime(name, opset, io, tmp_path):
    x = io[f"{name}.x"].astype(np.float32)
    path = mx.onnx.export_model(
        str(ZOO / f"{name}-symbol.json"),
        str(ZOO / f"{name}-0000.params"),
        [x.shape],
        np.float32,
        str(tmp_path / "m.onnx"),
        opset_version=opset,
    )
    net = mx.contrib.onnx.import_to_gluon(path, mx.cpu())
    got = net(mx.nd.array(x)).asnumpy()
    np.testing.assert_allclose(got, io[f"{name}.y"], rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got, run_ort(path, [x])[0], rtol=1e-4, atol=1e-5)


def test_import_model_returns_symbol_and_params(tmp_path):
    net = mx.gluon.nn.HybridSequential()
    net.add(
        mx.gluon.nn.Conv2D(2, 3, padding=1),
        mx.gluon.nn.BatchNorm(),
        mx.gluon.nn.Dense(3, activation="tanh"),
    )
    net.initialize()
    x = mx.nd.array(np.random.RandomState(0).uniform(size=(1, 3, 4, 4)))
    net.hybridize()
    net(x)
    path = mx.onnx.export_block(net, x, str(tmp_path / "m.onnx"))
    sym, arg, aux = mx.contrib.onnx.import_model(path)
    assert isinstance(sym, mx.sym.Symbol)
    assert sorted(aux) == ["1.running_mean", "1.running_var"]
    assert {"0.weight", "0.bias", "1.gamma", "1.beta", "2.weight", "2.bias"} <= set(arg)
    ex = sym.bind(mx.cpu(), dict(arg, data=x), aux_states=aux)
    (want,) = run_ort(path, [x.asnumpy()])
    np.testing.assert_allclose(ex.forward()[0].asnumpy(), want, rtol=1e-5, atol=1e-6)
    meta = mx.contrib.onnx.get_model_metadata(path)
    assert meta["input_tensor_data"] == [("data", (1, 3, 4, 4))]
    assert [shape for _, shape in meta["output_tensor_data"]] == [(1, 3)]


def test_dynamic_batch_imports(tmp_path):
    net = mx.gluon.nn.Dense(2)
    net.initialize()
    x = mx.nd.ones((2, 5))
    net.hybridize()
    net(x)
    path = mx.onnx.export_block(net, x, str(tmp_path / "d.onnx"), dynamic=True)
    meta = mx.contrib.onnx.get_model_metadata(path)
    assert meta["input_tensor_data"][0][1][1:] == (5,)
    block = mx.contrib.onnx.import_to_gluon(path)
    x7 = mx.nd.array(np.random.RandomState(0).uniform(size=(7, 5)))
    np.testing.assert_allclose(block(x7).asnumpy(), run_ort(path, [x7.asnumpy()])[0], rtol=1e-5)


# export cases that do not import back, and why
NOT_IMPORTED = {
    "indexing": "Size has no importer",
    "harness_fixes": "Einsum (float64 batch_dot with a transpose) has no importer",
    "BatchNorm": "the case feeds the running statistics as inputs (the zoo round trips "
    "import BatchNorm)",
}


def _import_cases():
    from test_export_ops import CASES

    return sorted(c for c in CASES if c not in NOT_IMPORTED)


@pytest.mark.parametrize("case", _import_cases())
def test_exported_ops_import_back(case, tmp_path):
    """export -> import_to_gluon -> the same outputs as ONNX Runtime on the file."""
    from onnx_common import export_op
    from test_export_ops import CASES

    fn, inputs = CASES[case]
    _, want = export_op(tmp_path, fn, inputs, name=case)
    net = mx.contrib.onnx.import_to_gluon(str(tmp_path / f"{case}.onnx"))
    names = [
        n
        for n, _ in mx.contrib.onnx.get_model_metadata(str(tmp_path / f"{case}.onnx"))[
            "input_tensor_data"
        ]
    ]
    by_name = {f"data{i}" if len(inputs) > 1 else "data": x for i, x in enumerate(inputs)}
    got = net(*[by_name[n] for n in names])
    got = got if isinstance(got, (list, tuple)) else [got]
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(
            g.asnumpy().astype(w.dtype), w, rtol=1e-5, atol=1e-5, err_msg=f"{case} output {i}"
        )


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
def test_recurrent_layers_import_back(kind, tmp_path):
    """ONNX LSTM / GRU / RNN nodes become the fused RNN op (gates back in MXNet's order)."""
    make = getattr(mx.gluon.rnn, kind)
    layer = make(4, num_layers=2, bidirectional=kind != "GRU", input_size=3)
    layer.initialize(mx.init.Uniform(0.5))
    layer.hybridize()
    x = mx.nd.array(np.random.RandomState(0).uniform(-1, 1, size=(5, 2, 3)))
    layer(x)
    path = mx.onnx.export_block(layer, x, str(tmp_path / "rnn.onnx"))
    (want,) = run_ort(path, [x.asnumpy()])
    net = mx.contrib.onnx.import_to_gluon(path)
    np.testing.assert_allclose(net(x).asnumpy(), want, rtol=1e-5, atol=1e-6)
