"""mx.contrib.onnx on models exported by PyTorch (``torch.onnx.export``, its TorchScript
exporter, opsets 13 and 17), with PyTorch's own node patterns.

tests/fixtures/onnx_torch holds the graphs, made by tools/make_torch_onnx_fixtures.py.
ResNet-18's large weights are not stored: ``fill_weights`` puts seeded ones back. Every
output is compared with ONNX Runtime running the same file, and the LSTMs' also with
torch's outputs stored by the tool; errors are relative to the largest output.
"""

from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np
import pytest
from onnx_common import onnx, run_ort

import gluonjax as mx

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "onnx_torch"
RTOL = 1e-4


def fill_weights(model):
    """Seeded weights for the initializers stored without data (LeCun-normal, by the
    consumer's fan-in, so activations stay of order 1)."""
    from onnx import numpy_helper

    fan_in_axis = {}
    for node in model.graph.node:
        if node.op_type == "MatMul" or (node.op_type == "Gemm" and not _trans_b(node)):
            fan_in_axis[node.input[1]] = 0
    for t in model.graph.initializer:
        if t.raw_data or t.float_data or not t.dims:
            continue
        dims = tuple(t.dims)
        rng = np.random.default_rng(zlib.crc32(t.name.encode()))
        if len(dims) == 1:  # a bias
            w = rng.uniform(-0.1, 0.1, dims)
        else:  # (out, in, k...) of Conv and Gemm(transB=1); (in, out) of MatMul
            fan_in = dims[0] if fan_in_axis.get(t.name) == 0 else int(np.prod(dims[1:]))
            w = rng.standard_normal(dims) / np.sqrt(fan_in)
        t.CopyFrom(numpy_helper.from_array(w.astype(np.float32), t.name))
    return model


def _trans_b(node):
    return any(a.name == "transB" and a.i for a in node.attribute)


def model_file(name, tmp_path):
    model = fill_weights(onnx.load(str(FIXTURES / name)))
    path = tmp_path / name
    onnx.save(model, str(path))
    return str(path)


def ops_of(name):
    return {n.op_type for n in onnx.load(str(FIXTURES / name)).graph.node}


def assert_close(got, want, what):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape}, expected {want.shape}"
    scale = max(float(np.abs(want).max()), 1e-6)
    err = float(np.abs(got - want).max()) / scale
    assert err <= RTOL, f"{what}: max error {err:.3g} of the largest output {scale:.3g}"


def imported_outputs(path, feed):
    """The model's outputs for ``feed`` (name -> array) through ``import_model`` (the symbol
    bound with its parameters) and through ``import_to_gluon``."""
    sym, arg, aux = mx.contrib.onnx.import_model(path)
    args = dict(arg)
    args.update({k: mx.nd.array(v) for k, v in feed.items()})
    ex = sym.bind(mx.cpu(), args, aux_states=aux)
    bound = [o.asnumpy() for o in ex.forward()]
    block = mx.contrib.onnx.import_to_gluon(path, mx.cpu())
    names = [n for n, _ in mx.contrib.onnx.get_model_metadata(path)["input_tensor_data"]]
    out = block(*[mx.nd.array(feed[n]) for n in names])
    out = out if isinstance(out, (list, tuple)) else [out]
    return bound, [o.asnumpy() for o in out]


def check_against_ort(path, feed, torch_outputs=None):
    want = run_ort(path, feed)
    bound, gluon = imported_outputs(path, feed)
    assert len(bound) == len(gluon) == len(want)
    for i, w in enumerate(want):
        assert_close(bound[i], w, f"import_model output {i}")
        assert_close(gluon[i], w, f"import_to_gluon output {i}")
        if torch_outputs is not None:
            assert_close(w, torch_outputs[i], f"ONNX Runtime vs torch, output {i}")
            assert_close(gluon[i], torch_outputs[i], f"import_to_gluon vs torch, output {i}")


@pytest.fixture(scope="module")
def torch_io():
    with np.load(FIXTURES / "torch_io.npz") as f:
        return {k: f[k] for k in f.files}


def test_resnet18_opset13(tmp_path):
    """The default eval-mode export: BatchNorm folded into Conv, Flatten + Gemm."""
    name = "resnet18_opset13.onnx"
    assert {"Conv", "MaxPool", "GlobalAveragePool", "Flatten", "Gemm", "Add"} <= ops_of(name)
    path = model_file(name, tmp_path)
    x = np.random.default_rng(1).standard_normal((2, 3, 64, 64)).astype(np.float32)
    check_against_ort(path, {"input": x})


@pytest.mark.parametrize("batch", [1, 3])
def test_resnet18_opset17_symbolic_batch(batch, tmp_path):
    """BatchNormalization nodes kept (TrainingMode.PRESERVE) and a symbolic batch axis."""
    name = "resnet18_opset17.onnx"
    assert "BatchNormalization" in ops_of(name)
    path = model_file(name, tmp_path)
    meta = mx.contrib.onnx.get_model_metadata(path)
    assert meta["input_tensor_data"] == [("input", ("batch", 3, 64, 64))]
    x = np.random.default_rng(batch).standard_normal((batch, 3, 64, 64)).astype(np.float32)
    check_against_ort(path, {"input": x})


@pytest.mark.parametrize("batch", [3, 5])
def test_lstm_symbolic_batch(batch, tmp_path, torch_io):
    """Two LSTM nodes whose zero initial states are made in the graph from Shape(x)
    (Shape, Gather, Unsqueeze, Concat, ConstantOfShape, Slice), then MatMul + Add."""
    name = "lstm_opset13.onnx"
    assert {"Shape", "Gather", "ConstantOfShape", "Slice", "LSTM", "Squeeze"} <= ops_of(name)
    x, want_torch = torch_io["lstm.x"], [torch_io["lstm.y"]]
    if batch != x.shape[1]:
        x = np.random.default_rng(batch).standard_normal((5, batch, 16)).astype(np.float32)
        want_torch = None
    check_against_ort(str(FIXTURES / name), {"x": x}, want_torch)


def test_bidirectional_lstm_with_initial_states(torch_io):
    """Batch-first bidirectional 2-layer LSTM: Transpose / Slice of h0, c0 / Transpose +
    Reshape of Y between the layers; the final states concatenated."""
    name = "bilstm_opset13.onnx"
    assert {"Transpose", "Reshape", "Slice", "LSTM", "Concat"} <= ops_of(name)
    feed = {k: torch_io[f"bilstm.{k}"] for k in ("x", "h0", "c0")}
    want = [torch_io[f"bilstm.{k}"] for k in ("y", "h", "c")]
    check_against_ort(str(FIXTURES / name), feed, want)


@pytest.mark.parametrize("batch", [2, 5])
def test_sizes_read_from_tensors(batch, torch_io):
    """view(n, -1), expand(n, -1), zeros(n, 5), new_ones(y.shape), reshape(n, 4, 9) with n
    = x.size(0) symbolic: Shape / Gather / Unsqueeze / Concat into Reshape, Expand (after
    PyTorch's Equal / Where for -1) and ConstantOfShape follow the batch size."""
    name = "shape_ops_opset13.onnx"
    assert {"Shape", "Equal", "Where", "Expand", "ConstantOfShape", "Reshape"} <= ops_of(name)
    x, want_torch = torch_io["shape_ops.x"], [torch_io["shape_ops.y"], torch_io["shape_ops.t"]]
    if batch != x.shape[0]:
        x = np.random.default_rng(batch).standard_normal((batch, 4, 3, 3)).astype(np.float32)
        want_torch = None
    check_against_ort(str(FIXTURES / name), {"x": x}, want_torch)


def test_fixtures_stay_small():
    assert sum(p.stat().st_size for p in FIXTURES.iterdir()) < 1 << 20
