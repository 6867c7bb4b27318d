"""The hybrid-programming seed tutorials (seeds 000 and 003), line by line.

Expected texts follow the tutorial outputs recorded with MXNet 1.x, with
``mxnet`` replaced by ``gluonjax``.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import gluonjax as mx
from gluonjax import nd, sym
from gluonjax.base import MXNetError
from gluonjax.gluon import nn


def get_net():
    net = nn.HybridSequential()
    net.add(nn.Dense(256, activation="relu"), nn.Dense(128, activation="relu"), nn.Dense(2))
    net.initialize()
    return net


def _ref_mlp(net, x):
    h = x
    for i, layer in enumerate(net._children.values()):
        h = h @ layer.weight.data().asnumpy().T + layer.bias.data().asnumpy()
        if i < 2:
            h = np.maximum(h, 0)
    return h


def test_hybrid_sequential_same_result_and_symbol_name():
    with mx.name.NameManager():
        x = nd.random_normal(shape=(1, 512))
        net = get_net()
        eager = net(x).asnumpy()
        np.testing.assert_allclose(eager, _ref_mlp(net, x.asnumpy()), rtol=1e-4, atol=1e-6)
        net.hybridize()
        np.testing.assert_allclose(net(x).asnumpy(), eager, rtol=1e-5, atol=1e-6)
        net = get_net()  # the benchmark builds a second net: dense3..dense5
        net.hybridize()
        for _ in range(3):
            net(x)
        out = net(sym.var("data"))
    assert repr(out) == "<Symbol dense5_fwd>"
    assert out.list_arguments() == ["data"] + [
        f"dense{i}_{k}" for i in (3, 4, 5) for k in ("weight", "bias")
    ]


class HybridNet(nn.HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.hidden = nn.Dense(10)
        self.output = nn.Dense(2)

    def hybrid_forward(self, F, x):
        print("F: ", F)
        print("x: ", x)
        x = F.relu(self.hidden(x))
        print("hidden: ", x)
        return self.output(x)


def _eager_lines(text, x, hidden):
    lines = text.splitlines()
    assert re.fullmatch(r"F:  <module 'gluonjax\.ndarray' from '.*__init__\.py'>", lines[0])
    body = "\n".join(lines[1:])
    m = re.fullmatch(
        r"x:  \n(.*)\n<NDArray 1x4 @cpu\(0\)>\nhidden:  \n(.*)\n"
        r"<NDArray 1x10 @cpu\(0\)>",
        body,
        flags=re.S,
    )
    assert m, body
    assert m.group(1) == str(x)  # printed like numpy, as MXNet does
    printed = np.array([float(v) for v in re.findall(r"[-+0-9.e]+", m.group(2))])
    np.testing.assert_allclose(printed, hidden.ravel(), rtol=1e-5, atol=1e-7)


@pytest.fixture()
def seed_net():
    with mx.name.NameManager():
        net = HybridNet()
    net.initialize()
    return net


def test_hybridnet_prints(seed_net, capsys):
    net = seed_net
    x = nd.random_normal(shape=(1, 4))
    eager = net(x).asnumpy()
    w1, b1 = net.hidden.weight.data().asnumpy(), net.hidden.bias.data().asnumpy()
    hidden = np.maximum(x.asnumpy() @ w1.T + b1, 0).astype(np.float32)
    _eager_lines(capsys.readouterr().out, x.asnumpy(), hidden)

    np.testing.assert_array_equal(net(x).asnumpy(), eager)  # eager again: prints again
    _eager_lines(capsys.readouterr().out, x.asnumpy(), hidden)

    net.hybridize()
    hyb = net(x).asnumpy()
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3
    assert re.fullmatch(r"F:  <module 'gluonjax\.symbol' from '.*__init__\.py'>", lines[0])
    assert lines[1:] == ["x:  <Symbol data>", "hidden:  <Symbol hybridnet0_relu0>"]
    np.testing.assert_allclose(hyb, eager, rtol=1e-5, atol=1e-7)

    x2 = nd.random_normal(shape=(1, 4))
    out2 = net(x2).asnumpy()
    assert capsys.readouterr().out == ""  # same shape: the compiled program runs, no Python
    w2, b2 = net.output.weight.data().asnumpy(), net.output.bias.data().asnumpy()
    ref2 = np.maximum(x2.asnumpy() @ w1.T + b1, 0) @ w2.T + b2
    np.testing.assert_allclose(out2, ref2, rtol=1e-4, atol=1e-6)


def test_hybridnet_new_shape_prints_again(seed_net, capsys):
    net = seed_net
    net.hybridize()
    net(nd.ones((1, 4)))
    capsys.readouterr()
    net(nd.ones((3, 4)))  # a new input shape is traced again
    assert "x:  <Symbol data>" in capsys.readouterr().out
    net(nd.ones((3, 4)))
    assert capsys.readouterr().out == ""


def test_hybridnet_symbol_input(seed_net, capsys):
    out = seed_net(sym.var("data"))
    lines = capsys.readouterr().out.splitlines()
    assert lines[1:] == ["x:  <Symbol data>", "hidden:  <Symbol hybridnet0_relu0>"]
    assert isinstance(out, mx.sym.Symbol)
    assert out.list_arguments() == [
        "data",
        "dense0_weight",
        "dense0_bias",
        "dense1_weight",
        "dense1_bias",
    ]


def test_seed000_prefix_mismatch_message(tmp_path):
    # seed 000: loading display names saved from another instance fails, naming
    # the missing parameter and the file's parameters
    path = str(tmp_path / "tony_mlp-0000.params")
    a = get_net()
    a(nd.ones((1, 512)))
    a.collect_params().save(path)
    b = get_net()
    b(nd.ones((1, 512)))
    with pytest.raises(MXNetError) as err:
        b.collect_params().load(path)
    msg = str(err.value)
    assert b[0].weight.name in msg and a[0].weight.name in msg
    # structural names do not depend on the prefixes
    a.save_parameters(path)
    b.load_parameters(path)
    x = nd.random_normal(shape=(3, 512))
    np.testing.assert_allclose(b(x).asnumpy(), a(x).asnumpy(), rtol=1e-5, atol=1e-6)
