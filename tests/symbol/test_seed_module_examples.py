"""Deployment seeds run as written with ``import gluonjax as mx``.

* Seed 001 (HybridBlock, hybridize, export / SymbolBlock.imports, operators
  that behave differently once hybridized).
* Seed 000's Module flow: an exported MLP loaded with ``mx.symbol.load`` and run
  by ``mx.mod.Module`` (bind, load_params, forward, get_outputs).

Expected names, printed texts and file contents were checked with real MXNet
1.9.1; numbers are recomputed here with NumPy from the network's parameters.
Each test runs in a fresh ``mx.name.NameManager()`` and a temporary cwd.
"""

from __future__ import annotations

import json
import os
from collections import namedtuple

import numpy as np
import pytest

import gluonjax as mx
from gluonjax import gluon, nd
from gluonjax.base import MXNetError
from gluonjax.gluon import nn


@pytest.fixture(autouse=True)
def _fresh_names(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with mx.name.NameManager():
        yield


# ---------------------------------------------------------------- seed 001
mx.random.seed(42)


class Net(gluon.HybridBlock):
    def __init__(self, **kwargs):
        super(Net, self).__init__(**kwargs)  # noqa: UP008 (as the tutorial writes it)
        with self.name_scope():
            # layers created in name_scope will inherit name space
            # from parent layer.
            self.conv1 = nn.Conv2D(6, kernel_size=5)
            self.pool1 = nn.MaxPool2D(pool_size=2)
            self.conv2 = nn.Conv2D(16, kernel_size=5)
            self.pool2 = nn.MaxPool2D(pool_size=2)
            self.fc1 = nn.Dense(120)
            self.fc2 = nn.Dense(84)
            # You can use a Dense layer for fc3 but we do dot product manually
            # here for illustration purposes.
            self.fc3_weight = self.params.get("fc3_weight", shape=(10, 84))

    def hybrid_forward(self, F, x, fc3_weight):
        # Here `F` can be either mx.nd or mx.sym, x is the input data,
        # and fc3_weight is either self.fc3_weight.data() or
        # self.fc3_weight.var() depending on whether x is Symbol or NDArray
        print(x)
        x = self.pool1(F.relu(self.conv1(x)))
        x = self.pool2(F.relu(self.conv2(x)))
        # 0 means copy over size from corresponding dimension.
        # -1 means infer size from the rest of dimensions.
        x = x.reshape((0, -1))
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = F.dot(x, fc3_weight, transpose_b=True)
        return x


def _np_conv_valid(x, w, b):
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    cols = np.lib.stride_tricks.sliding_window_view(x, (kh, kw), axis=(2, 3))
    return np.einsum("nchwij,ocij->nohw", cols, w) + b[None, :, None, None]


def _np_maxpool2(x):
    n, c, h, w = x.shape
    return x[:, :, : h // 2 * 2, : w // 2 * 2].reshape(n, c, h // 2, 2, w // 2, 2).max((3, 5))


def _np_net(net, x):
    p = {k: v.data().asnumpy().astype(np.float64) for k, v in net.collect_params().items()}
    g = lambda s: p[net.prefix + s]  # noqa: E731
    relu = lambda a: np.maximum(a, 0)  # noqa: E731
    h = _np_maxpool2(relu(_np_conv_valid(x, g("conv0_weight"), g("conv0_bias"))))
    h = _np_maxpool2(relu(_np_conv_valid(h, g("conv1_weight"), g("conv1_bias"))))
    h = h.reshape(h.shape[0], -1)
    h = relu(h @ g("dense0_weight").T + g("dense0_bias"))
    h = relu(h @ g("dense1_weight").T + g("dense1_bias"))
    return h @ g("fc3_weight").T


def test_seed001_prints_ndarray_eagerly_then_symbol_once(capsys):
    net = Net()
    net.initialize()
    x = mx.nd.random_normal(shape=(16, 1, 28, 28))
    net(x)
    x2 = mx.nd.random_normal(shape=(16, 1, 28, 28))
    out = net(x2)
    # each eager call prints its NDArray input
    assert capsys.readouterr().out == f"{x}\n{x2}\n"
    np.testing.assert_allclose(out.asnumpy(), _np_net(net, x2.asnumpy()), rtol=1e-4, atol=1e-5)

    net.hybridize()
    x = mx.nd.random_normal(shape=(16, 1, 28, 28))
    net(x)
    x = mx.nd.random_normal(shape=(16, 1, 28, 28))
    out = net(x)
    # only the first hybridized call runs hybrid_forward, with a Symbol
    assert capsys.readouterr().out == "<Symbol data>\n"
    assert out.shape == (16, 10)
    np.testing.assert_allclose(out.asnumpy(), _np_net(net, x.asnumpy()), rtol=1e-4, atol=1e-5)
    assert net.prefix == "net0_"


def test_seed001_hybridize_options(capsys):
    net = Net()
    net.initialize()
    x = mx.nd.random_normal(shape=(16, 1, 28, 28))
    net.hybridize(static_alloc=True)
    # or
    net.hybridize(static_alloc=True, static_shape=True)
    out = net(x).asnumpy()
    np.testing.assert_allclose(out, _np_net(net, x.asnumpy()), rtol=1e-4, atol=1e-5)
    net(x)
    assert capsys.readouterr().out == "<Symbol data>\n"


# gluonjax names exported variables and .params keys by STRUCTURE ('conv1.weight',
# '0.weight'), not by MXNet's prefixed names ('net0_conv0_weight'): the seed shows the
# prefix mismatch this avoids. Op nodes keep MXNet's names ('net0_conv0_fwd').


def _seed001_export():
    net = Net()
    net.initialize()
    net.hybridize()
    x = mx.nd.random_normal(shape=(16, 1, 28, 28))
    # 保存
    net(x)
    net.export("model", epoch=1)
    return net, x


def test_seed001_export_files(capsys):
    _seed001_export()
    # export reuses the graph of the hybridized call: hybrid_forward printed once
    assert capsys.readouterr().out == "<Symbol data>\n"
    # "two files are generated": model-symbol.json and model-0001.params
    assert {"model-0001.params", "model-symbol.json"} <= set(os.listdir("."))


def test_seed001_export_names():
    _seed001_export()
    # variables and .params keys: structural names; op nodes: MXNet's names
    keys = ["conv1.bias", "conv1.weight", "conv2.bias", "conv2.weight", "fc1.bias",
            "fc1.weight", "fc2.bias", "fc2.weight", "fc3_weight"]  # fmt: skip
    assert sorted(nd.load("model-0001.params")) == ["arg:" + k for k in keys]
    with open("model-symbol.json") as fh:
        graph = json.load(fh)
    assert [(n["op"], n["name"]) for n in graph["nodes"]] == [
        ("null", "data"), ("null", "conv1.weight"), ("null", "conv1.bias"),
        ("Convolution", "net0_conv0_fwd"), ("relu", "net0_relu0"), ("Pooling", "net0_pool0_fwd"),
        ("null", "conv2.weight"), ("null", "conv2.bias"),
        ("Convolution", "net0_conv1_fwd"), ("relu", "net0_relu1"), ("Pooling", "net0_pool1_fwd"),
        ("Reshape", "net0_reshape0"), ("null", "fc1.weight"), ("null", "fc1.bias"),
        ("FullyConnected", "net0_dense0_fwd"), ("relu", "net0_relu2"), ("null", "fc2.weight"),
        ("null", "fc2.bias"), ("FullyConnected", "net0_dense1_fwd"), ("relu", "net0_relu3"),
        ("null", "fc3_weight"), ("dot", "net0_dot0"),
    ]  # fmt: skip


def test_seed001_symbolblock_imports(capsys):
    net, x = _seed001_export()
    with open("model-symbol.json") as fh:
        graph = json.load(fh)
    ops = [n["op"] for n in graph["nodes"] if n["op"] != "null"]
    assert ops == [
        "Convolution", "relu", "Pooling", "Convolution", "relu", "Pooling",
        "Reshape", "FullyConnected", "relu", "FullyConnected", "relu", "dot",
    ]  # fmt: skip
    capsys.readouterr()
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        net2 = gluon.SymbolBlock.imports("model-symbol.json", ["data"], "model-0001.params")
    # the imported block's parameters are the file's arguments
    file_keys = sorted(k.split(":", 1)[1] for k in nd.load("model-0001.params"))
    assert sorted(net2.collect_params().keys()) == file_keys and len(file_keys) == 9
    ref = _np_net(net, x.asnumpy())
    np.testing.assert_allclose(net2(x).asnumpy(), ref, rtol=1e-4, atol=1e-5)
    assert capsys.readouterr().out == ""  # the imported graph has no Python print


def test_seed001_broadcast_add_hybridizes():
    class AddOnes(gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            # avoid writing: return x + F.ones((1, 1))
            return F.broadcast_add(x, F.ones((1, 1)))

    blk = AddOnes()
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    eager = blk(nd.array(x)).asnumpy()
    blk.hybridize()
    np.testing.assert_array_equal(eager, x + 1)
    np.testing.assert_array_equal(blk(nd.array(x)).asnumpy(), x + 1)


def test_seed001_plain_plus_after_hybridize():
    """``x + F.ones((1, 1))``: NDArray ``+`` broadcasts.

    MXNet 1.9.1's hybridized graph raises here (Symbol ``+`` is elemwise_add);
    gluonjax's traced symbols know their shapes and pick broadcast_add, so the
    hybridized block keeps the eager result. Declarative symbols keep MXNet's
    check: elemwise_add of (2, 3) and (1, 1) fails shape inference.
    """

    class PlusOnes(gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            return x + F.ones((1, 1))

    blk = PlusOnes()
    expect = np.zeros((2, 3), np.float32) + np.ones((1, 1), np.float32)
    np.testing.assert_array_equal(blk(nd.zeros((2, 3))).asnumpy(), expect)
    blk.hybridize()
    np.testing.assert_array_equal(blk(nd.zeros((2, 3))).asnumpy(), expect)
    a, b = mx.sym.var("a"), mx.sym.var("b")
    with pytest.raises(MXNetError):
        (a + b).infer_shape(a=(2, 3), b=(1, 1))


def test_seed001_shape_in_hybrid_forward(capsys):
    """``print(x.shape)`` in hybrid_forward.

    MXNet 1.9.1 raises ``AttributeError: 'Symbol' object has no attribute
    'shape'`` once hybridized; gluonjax's traced symbols carry their shape, so the
    hybridized trace prints it too. A declarative symbol has no shape (an
    AttributeError, so ``hasattr(sym, 'shape')`` is False as in MXNet).
    """

    class PrintShape(gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            print(x.shape)
            return x

    blk = PrintShape()
    blk(nd.zeros((2, 3)))
    blk.hybridize()
    blk(nd.zeros((2, 3)))
    assert capsys.readouterr().out == "(2, 3)\n(2, 3)\n"
    assert not hasattr(mx.sym.var("x"), "shape")
    with pytest.raises(AttributeError, match="'Symbol' object has no attribute 'shape'"):
        mx.sym.var("x").shape  # noqa: B018


def test_seed001_slice_in_hybrid_forward():
    """``x[0]``: the first row of an NDArray.

    MXNet 1.9.1's hybridized ``x[0]`` selects output 0 of the symbol (all of x);
    gluonjax's traced symbols index like the NDArray. On a declarative symbol
    ``[0]`` still selects output 0, as in MXNet.
    """

    class First(gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            return x[0]

    blk = First()
    x = np.array([[1.0, 2], [3, 4]], np.float32)
    np.testing.assert_array_equal(blk(nd.array(x)).asnumpy(), x[0])
    blk.hybridize()
    np.testing.assert_array_equal(blk(nd.array(x)).asnumpy(), x[0])
    s = mx.sym.var("x")
    assert s[0].name == "x" and s[0].list_outputs() == ["x"]


# ---------------------------------------------------------------- seed 000: Module flow
def get_net():
    # HybridSequential是HybridBlock类的子类
    net = nn.HybridSequential()
    net.add(nn.Dense(256, activation="relu"), nn.Dense(128, activation="relu"), nn.Dense(2))
    net.initialize()
    return net


def _np_mlp(net, x):
    h = x.astype(np.float64)
    for i, layer in enumerate(net._children.values()):
        h = h @ layer.weight.data().asnumpy().T + layer.bias.data().asnumpy()
        if i < 2:
            h = np.maximum(h, 0)
    return h


def _seed000_export():
    x = nd.random.normal(shape=(1, 512))

    def benchmark(net, x):
        for _i in range(2):
            _ = net(x)
            net.export("tony_mlp")  # 或者放在循环外也可以
        nd.waitall()

    net = get_net()
    net.hybridize()
    benchmark(net, x)
    return net


def test_seed000_exported_json(capsys):
    _seed000_export()
    with open("tony_mlp-symbol.json", "rb") as f:
        c = json.load(f)
        print(c)
    assert [n["name"] for n in c["nodes"]] == [
        "data", "0.weight", "0.bias", "dense0_fwd", "dense0_relu_fwd",
        "1.weight", "1.bias", "dense1_fwd", "dense1_relu_fwd",
        "2.weight", "2.bias", "dense2_fwd",
    ]  # fmt: skip
    assert c["heads"] == [[11, 0, 0]] and c["arg_nodes"] == [0, 1, 2, 5, 6, 9, 10]
    assert c["attrs"] == {"mxnet_version": ["int", 10901]}
    keys = [f"arg:{i}.{k}" for i in range(3) for k in ("bias", "weight")]
    assert sorted(nd.load("tony_mlp-0000.params")) == keys


def test_seed000_load_with_module(capsys):
    net = _seed000_export()
    with open("tony_mlp-symbol.json", "rb") as f:
        c = json.load(f)
    assert [n["op"] for n in c["nodes"] if n["op"] != "null"] == [
        "FullyConnected", "Activation", "FullyConnected", "Activation", "FullyConnected",
    ]  # fmt: skip
    assert c["heads"] == [[11, 0, 0]] and c["arg_nodes"] == [0, 1, 2, 5, 6, 9, 10]
    capsys.readouterr()

    x = nd.random.normal(shape=(3, 512))
    symnet = mx.symbol.load("tony_mlp-symbol.json")
    mod = mx.mod.Module(symbol=symnet, context=mx.cpu())
    mod.bind(data_shapes=[("data", (3, 512))])
    mod.load_params("tony_mlp-0000.params")
    print(mod.data_names)
    print(mod.data_shapes)
    print(mod.output_names)
    print(mod.output_shapes)
    Batch = namedtuple("Batch", ["data"])
    mod.forward(Batch([x]))
    out = mod.get_outputs()
    print("\n")
    print(out)
    printed = capsys.readouterr().out.split("\n")
    assert printed[:4] == [
        "['data']",
        "[DataDesc[data,(3, 512),<class 'numpy.float32'>,NCHW]]",
        "['dense2_fwd_output']",
        "[('dense2_fwd_output', (3, 2))]",
    ]
    assert printed[4:6] == ["", ""]  # print('\\n')
    assert printed[6] == "["  # a list of one NDArray
    assert isinstance(out, list) and len(out) == 1 and out[0].shape == (3, 2)
    np.testing.assert_allclose(out[0].asnumpy(), _np_mlp(net, x.asnumpy()), rtol=1e-4, atol=1e-5)
    arg_params, aux_params = mod.get_params()
    file_keys = sorted(k.split(":", 1)[1] for k in nd.load("tony_mlp-0000.params"))
    assert sorted(arg_params) == file_keys and len(file_keys) == 6
    assert aux_params == {}
