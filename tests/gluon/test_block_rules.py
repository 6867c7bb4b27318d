"""MXNet 1.9.1's Block rules: attribute types, unregistered containers, Sequential's
warning, legacy save_params/load_params, whole-model save/load, stale caches."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import gluonjax as mx
from gluonjax import gluon
from gluonjax.gluon import nn


def test_child_and_parameter_attributes_keep_their_type():
    b = gluon.Block()
    b.a = None
    b.a = 1  # plain attributes may change type
    b.c = gluon.Block()
    c2 = gluon.Block()
    b.c = c2  # a block may replace a block
    assert b.c is c2 and list(b._children.values()) == [c2]
    with pytest.raises(TypeError, match="Block.c"):
        b.c = (2,)
    b.p = gluon.Parameter("p", shape=(1,))
    with pytest.raises(TypeError):
        b.p = 3
    with pytest.raises(mx.base.MXNetError, match="params="):
        b.p = gluon.Parameter("q", shape=(1,))


class _ListModel(gluon.Block):
    def __init__(self, container, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.layers = container()


@pytest.mark.parametrize(
    "container, warns",
    [
        (lambda: [nn.Dense(3), nn.Dense(4)], True),
        (lambda: {"a": [nn.Dense(3)]}, True),
        (lambda: (1, {"b": nn.Dense(2)}), True),
        (lambda: nn.Sequential(), False),
        (lambda: {"a": "4", "b": 123}, False),
    ],
)
def test_blocks_in_plain_containers_warn(container, warns):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        _ListModel(container).collect_params()
    hits = [x for x in w if "unregistered container" in str(x.message)]
    assert len(hits) == (1 if warns else 0)


def test_registered_blocks_in_a_list_do_not_warn():
    class Net(gluon.Block):
        def __init__(self):
            super().__init__()
            self.layers = [nn.Dense(2), nn.Dense(3)]
            for i, layer in enumerate(self.layers):
                self.register_child(layer, str(i))

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(Net().collect_params()) == 4


def test_sequential_of_hybrid_blocks_suggests_hybrid_sequential():
    seq = nn.Sequential()
    seq.add(nn.Dense(2))
    with pytest.warns(UserWarning, match="HybridSequential"):
        seq.hybridize()
    mixed = nn.Sequential()
    mixed.add(nn.Dense(2), nn.Lambda(lambda x: x))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mixed.hybridize()


def test_legacy_save_params_loads_into_symbol_block(tmp_path):
    net = nn.HybridSequential(prefix="")
    with net.name_scope():
        net.add(nn.Conv2D(4, 3), nn.Dense(5))
    net.initialize()
    x = mx.nd.array(np.random.RandomState(0).standard_normal((1, 1, 6, 6)).astype(np.float32))
    want = net(x).asnumpy()
    sym = net(mx.sym.var("data"))
    with pytest.warns(UserWarning, match="deprecated"):
        net.save_params(str(tmp_path / "legacy.params"))
    names = sorted(mx.nd.load(str(tmp_path / "legacy.params")))
    assert names == sorted(net.collect_params().keys())  # display names, not '0.weight'
    model = gluon.SymbolBlock(outputs=sym, inputs=mx.sym.var("data"))
    with pytest.warns(UserWarning, match="deprecated"):
        model.load_params(str(tmp_path / "legacy.params"), ctx=mx.cpu())
    np.testing.assert_allclose(model(x).asnumpy(), want, rtol=1e-6)


def test_legacy_save_params_strips_and_restores_the_prefix(tmp_path):
    def make(prefix):
        net = nn.HybridSequential(prefix=prefix)
        with net.name_scope():
            net.add(nn.Dense(3, in_units=2))
        return net

    a = make("first_")
    a.initialize()
    with pytest.warns(UserWarning):
        a.save_params(str(tmp_path / "p.params"))
    assert sorted(mx.nd.load(str(tmp_path / "p.params"))) == ["dense0_bias", "dense0_weight"]
    b = make("second_")
    with pytest.warns(UserWarning):
        b.load_params(str(tmp_path / "p.params"))
    np.testing.assert_array_equal(b[0].weight.data().asnumpy(), a[0].weight.data().asnumpy())


class _Stack(gluon.Block):
    def add(self, block):
        self._children[block.name + str(len(self._children))] = block

    def forward(self, x):
        for block in self._children.values():
            x = block(x)
        return x


def _make_stack():
    inner = _Stack()
    inner.add(nn.Dense(4))
    net = _Stack()
    net.add(inner)
    net.add(nn.Dense(3))
    return net


def test_block_save_and_load_restore_names_and_parameters(tmp_path):
    net1 = _make_stack()
    net1.initialize()
    net1.hybridize()
    x = mx.nd.array(np.random.RandomState(1).standard_normal((2, 5)).astype(np.float32))
    want = net1(x).asnumpy()
    net1.save(str(tmp_path / "model"))
    assert (tmp_path / "model-model.json").exists() and (tmp_path / "model-model.params").exists()
    net2 = _make_stack()  # new blocks: new names (dense2, ...), uninitialized
    assert net2.name != net1.name
    net2.load(str(tmp_path / "model"))
    assert net2.name == net1.name
    assert list(net2._children) == list(net1._children)
    assert list(net2.collect_params()) == list(net1.collect_params())
    assert net2._children[list(net2._children)[1]]._active  # it was hybridized when saved
    np.testing.assert_allclose(net2(x).asnumpy(), want, rtol=1e-6)


def test_block_load_rejects_another_architecture(tmp_path):
    net = _make_stack()
    net.initialize()
    net(mx.nd.ones((1, 5)))
    net.save(str(tmp_path / "m"))
    other = nn.HybridSequential()
    other.add(nn.Dense(2))
    with pytest.raises(mx.base.FileFormatError, match="same architecture"):
        other.load(str(tmp_path / "m"))


def test_hybridized_sequential_sees_added_layers():
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(10, weight_initializer="zeros", bias_initializer="ones", flatten=False))
    net.hybridize()
    net.initialize()
    assert net(mx.nd.ones((2, 3, 5))).shape == (2, 3, 10)
    net.add(nn.Flatten())
    assert net(mx.nd.ones((2, 3, 5))).shape == (2, 30)


def test_squeeze_flatten_expand_dims_accept_inplace():
    x = mx.nd.ones((2, 1, 3))
    assert x.squeeze(inplace=True).shape == (2, 3)
    assert x.flatten(inplace=False).shape == (2, 3)
    assert x.expand_dims(0, inplace=True).shape == (1, 2, 1, 3)
    assert mx.sym.var("a").squeeze(inplace=True).infer_shape(a=(2, 1))[1] == [(2,)]

    class Squeeze(gluon.HybridBlock):
        def forward(self, x):
            return x.squeeze(inplace=True)

    block = Squeeze()
    block.hybridize()
    assert block(mx.nd.ones((3, 4, 1))).shape == (3, 4)


def test_summary_of_a_hybridized_block_fails_as_in_mxnet(capsys):
    net = nn.HybridSequential()
    net.add(nn.Dense(3, in_units=2))
    net.initialize()
    net.summary(mx.nd.ones((1, 2)))
    assert "Dense-1" in capsys.readouterr().out
    net.hybridize()
    with pytest.raises(AssertionError, match="hybridize"):
        net.summary(mx.nd.ones((1, 2)))
