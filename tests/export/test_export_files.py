"""HybridBlock.export: the files, their names and contents, errors, atomicity."""

from __future__ import annotations

import json
import os
import sys

import export_nets as nets
import jax
import numpy as np
import pytest

import gluonjax as mx
from gluonjax._io.ndformat import read_arrays, write_arrays
from gluonjax.base import FileFormatError, MXNetError
from gluonjax.gluon import nn
from gluonjax.symbol import _json
from gluonjax.symbol._eval import graph_function

sys.path.insert(0, os.path.join(os.path.dirname(mx.__file__)))
import deploy  # noqa: E402  (gluonjax/deploy.py as a stand-alone module)

sys.path.pop(0)


def seed_net():
    net = nn.HybridSequential()
    net.add(nn.Dense(256, activation="relu"), nn.Dense(128, activation="relu"), nn.Dense(2))
    net.initialize()
    return net


def test_seed_flow_export_after_one_call(tmp_path):
    """Seed 000: ``net.export('tony_mlp')`` after a hybridized call; json.load works."""
    os.chdir(tmp_path)
    x = mx.nd.random.normal(shape=(1, 512))
    net = seed_net()
    net.hybridize()
    for _ in range(2):
        net(x)
        files = net.export("tony_mlp")
    assert {"tony_mlp-symbol.json", "tony_mlp-0000.params"} <= set(files)
    assert all(os.path.exists(f) for f in files)
    with open("tony_mlp-symbol.json", "rb") as f:
        graph = json.load(f)
    assert [n["op"] for n in graph["nodes"] if n["op"] != "null"] == [
        "FullyConnected",
        "Activation",
        "FullyConnected",
        "Activation",
        "FullyConnected",
    ]
    loaded = mx.nd.load("tony_mlp-0000.params")
    assert sorted(loaded) == sorted(f"arg:{i}.{k}" for i in range(3) for k in ("weight", "bias"))
    np.testing.assert_array_equal(loaded["arg:0.weight"].asnumpy(), net[0].weight.data().asnumpy())


def test_export_before_first_call_errors(tmp_path):
    net = seed_net()
    net.hybridize()
    with pytest.raises(MXNetError, match="run it once|example_inputs"):
        net.export(str(tmp_path / "m"))
    assert os.listdir(tmp_path) == []


def test_export_with_example_inputs_and_epoch(tmp_path):
    net = nets.convnet()
    x = mx.nd.random.normal(shape=(2, 2, 6, 6))
    files = net.export(str(tmp_path / "cnn"), epoch=7, example_inputs=[x], stablehlo_text=True)
    names = sorted(os.path.basename(f) for f in files)
    assert names == [
        "cnn-0007.manifest.json",
        "cnn-0007.mlir",
        "cnn-0007.params",
        "cnn-0007.stablehlo",
        "cnn-symbol.json",
    ]
    assert "stablehlo." in (tmp_path / "cnn-0007.mlir").read_text()
    man = json.loads((tmp_path / "cnn-0007.manifest.json").read_text())
    assert man["inputs"] == [{"name": "data", "shape": ["batch", 2, 6, 6], "dtype": "float32"}]
    assert man["outputs"] == [{"shape": ["batch", 4], "dtype": "float32"}]
    assert [p["key"] for p in man["params"]] == [
        "arg:0.weight",
        "arg:0.bias",
        "arg:1.gamma",
        "arg:1.beta",
        "aux:1.running_mean",
        "aux:1.running_var",
        "arg:6.weight",
        "arg:6.bias",
    ]
    # the JSON graph with the params file reproduces the NumPy forward
    symbol = _json.load(str(tmp_path / "cnn-symbol.json"))
    arrays = mx.nd.load(str(tmp_path / "cnn-0007.params"))
    args = {k[4:]: v._data for k, v in arrays.items() if k.startswith("arg:")}
    aux = {k[4:]: v._data for k, v in arrays.items() if k.startswith("aux:")}
    args["data"] = x._data
    out, _ = jax.jit(graph_function(symbol))(args, aux)
    np.testing.assert_allclose(
        np.asarray(out[0]), nets.convnet_ref(net, x.asnumpy()), rtol=1e-5, atol=1e-5
    )


def test_failed_export_writes_nothing(tmp_path):
    class Bad(nn.HybridBlock):
        def forward(self, x):
            return jax.lax.cond(
                x.sum() > 0, lambda v: v + 1, lambda v: v - 1, x._data if hasattr(x, "_data") else x
            )

    with pytest.raises(MXNetError, match="cond"):
        Bad().export(str(tmp_path / "bad"), example_inputs=[mx.nd.ones((2, 3))])
    assert os.listdir(tmp_path) == []


def test_stablehlo_can_be_skipped_and_fixed_batch(tmp_path):
    net = nets.mlp()
    x = mx.nd.ones((3, 10))
    files = net.export(str(tmp_path / "a"), example_inputs=[x], stablehlo=False)
    assert sorted(os.path.basename(f) for f in files) == ["a-0000.params", "a-symbol.json"]
    net.export(str(tmp_path / "b"), example_inputs=[x], dynamic_batch=False)
    man = json.loads((tmp_path / "b-0000.manifest.json").read_text())
    assert man["inputs"][0]["shape"] == [3, 10] and man["batch_symbol"] is None


class _FixedBatch(mx.gluon.HybridBlock):
    """A forward that only works at batch size 2 (like gluoncv's CenterNet decoder)."""

    def hybrid_forward(self, F, x):
        return F.broadcast_add(x, F.arange(2).reshape((2, 1)))


def test_export_falls_back_to_the_example_batch_when_the_batch_cannot_be_symbolic(tmp_path):
    # MXNet's export writes any model; the artifact is then fixed to the example's batch
    net = _FixedBatch()
    x = mx.nd.ones((2, 3))
    with pytest.warns(UserWarning, match="symbolic batch"):
        net.export(str(tmp_path / "a"), example_inputs=[x])
    man = json.loads((tmp_path / "a-0000.manifest.json").read_text())
    assert man["inputs"][0]["shape"] == [2, 3] and man["batch_symbol"] is None
    want = np.ones((2, 3)) + np.arange(2).reshape(2, 1)
    back = mx.gluon.SymbolBlock.imports(str(tmp_path / "a-symbol.json"), ["data"])
    np.testing.assert_allclose(back(x).asnumpy(), want)
    with pytest.raises(MXNetError, match="symbolic batch"):
        net.export(str(tmp_path / "b"), example_inputs=[x], dynamic_batch=True)


class _ProdAll(mx.gluon.HybridBlock):
    """A forward whose gradient (not its value) needs the batch size as a constant."""

    def hybrid_forward(self, F, x):
        return F.prod(x, keepdims=True)


def test_export_falls_back_when_only_the_gradient_needs_a_fixed_batch(tmp_path):
    # MXNet's ONNX tests export prod over every axis through HybridBlock.export
    net = _ProdAll()
    x = mx.nd.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    with pytest.warns(UserWarning, match="gradient cannot be traced with a symbolic batch"):
        net.export(str(tmp_path / "p"), example_inputs=[x])
    man = json.loads((tmp_path / "p-0000.manifest.json").read_text())
    assert man["inputs"][0]["shape"] == [2, 3] and man["batch_symbol"] is None


@pytest.mark.parametrize(
    "arrays",
    [
        {
            "arg:w": np.arange(6, dtype=np.float32).reshape(2, 3),
            "aux:m": np.array([1, 2], np.int64),
        },
        {"arg:s": np.array(2.5, np.float64), "arg:b": np.array([True, False])},  # V3 records
        {"arg:h": np.ones((2, 2), np.float16), "arg:u": np.arange(4, dtype=np.uint8)},
    ],
)
def test_deploy_params_reader_agrees_with_ndformat(tmp_path, arrays):
    path = tmp_path / "p.params"
    path.write_bytes(write_arrays(list(arrays.values()), list(arrays)))
    ours = deploy.read_params(str(path))
    vals, names = read_arrays(path.read_bytes())
    assert list(ours) == names == list(arrays)
    for (k, a), b in zip(ours.items(), vals, strict=True):
        assert a.dtype == b.dtype == arrays[k].dtype
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, arrays[k])


@pytest.mark.parametrize("cut", [3, 30, 60, -1])
def test_both_readers_reject_damaged_files(tmp_path, cut):
    data = write_arrays([np.ones((2, 3), np.float32)], ["arg:w"])
    bad = data[:cut] if cut > 0 else data + b"\0"
    path = tmp_path / "bad.params"
    path.write_bytes(bad)
    with pytest.raises(deploy.DeployError):
        deploy.read_params(str(path))
    with pytest.raises(FileFormatError):
        read_arrays(bad)


class TwoInTwoOut(nn.HybridBlock):
    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.fc = nn.Dense(3, in_units=4)

    def hybrid_forward(self, F, x, y):
        return self.fc(x), F.broadcast_add(x, y)


def test_two_inputs_two_outputs(tmp_path):
    net = TwoInTwoOut()
    net.initialize()
    x = np.random.RandomState(0).normal(size=(2, 4)).astype(np.float32)
    y = np.random.RandomState(1).normal(size=(1, 4)).astype(np.float32)
    net.export(str(tmp_path / "two"), example_inputs=[mx.nd.array(x), mx.nd.array(y)])
    man = json.loads((tmp_path / "two-0000.manifest.json").read_text())
    # only inputs with the first input's leading size share the symbolic batch
    assert [i["shape"] for i in man["inputs"]] == [["batch", 4], [1, 4]]
    assert [i["name"] for i in man["inputs"]] == ["data0", "data1"]
    f = deploy.load(str(tmp_path / "two"))
    w, b = net.fc.weight.data().asnumpy(), net.fc.bias.data().asnumpy()
    for n in (2, 5):
        xn = np.random.RandomState(n).normal(size=(n, 4)).astype(np.float32)
        o1, o2 = f(xn, y)
        np.testing.assert_allclose(o1, xn @ w.T + b, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(o2, xn + y, rtol=1e-6)
    symbol = _json.load(str(tmp_path / "two-symbol.json"))
    # nodes keep the names the hybridized trace gave them, as MXNet's export does
    assert symbol.list_outputs() == [
        f"{net.prefix}dense0_fwd_output",
        f"{net.prefix}broadcast_add0_output",
    ]
