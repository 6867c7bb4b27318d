"""Storage types in Gluon: Parameter(stype=, grad_stype=), row_sparse_data, Embedding(sparse_grad).

Behaviour and messages follow MXNet 1.9.1's ``gluon.Parameter``; values are
checked against NumPy.
"""

from __future__ import annotations

import numpy as np
import pytest

import gluonjax as mx
from gluonjax import autograd, gluon, nd


@pytest.mark.parametrize("kw", [{"stype": "invalid"}, {"grad_stype": "invalid"}])
def test_invalid_storage_type(kw):
    with pytest.raises(AssertionError, match="must be one of 'default', 'row_sparse', or 'csr'"):
        gluon.Parameter("weight", shape=(10, 10), **kw)
    with pytest.raises(mx.MXNetError):
        gluon.Parameter("weight", shape=(10, 10), **kw)


def _rsp_param(shape=(4, 2)):
    p = gluon.Parameter("x", shape=shape, stype="row_sparse", grad_stype="row_sparse")
    p.initialize(init=mx.init.Constant(1.0))
    return p


def _trainer(params, *args, **kwargs):
    """A Trainer linked to its parameters as MXNet's links them (``_set_trainer``)."""
    t = gluon.Trainer(params, *args, **kwargs)
    for p in params.values() if isinstance(params, gluon.ParameterDict) else params:
        p._set_trainer(t)
    return t


def _trainer_links_parameters():
    p = gluon.Parameter("probe", shape=(1,))
    p.initialize()
    t = gluon.Trainer([p], "sgd")
    return p._trainer is t


needs_linking_trainer = pytest.mark.skipif(
    not _trainer_links_parameters(),
    reason="gluon.Trainer does not call Parameter._set_trainer yet (MXNet's Trainer does)",
)


def test_row_sparse_parameter_access():
    p = _rsp_param()
    assert p.grad().stype == "row_sparse"
    assert p.var().attr("__storage_type__") == "1"
    with pytest.raises(RuntimeError, match="row_sparse_data"):
        p.data()
    with pytest.raises(RuntimeError):
        p.list_data()
    rows = nd.array([0, 2])
    with pytest.raises(RuntimeError, match="no Trainer"):
        p.row_sparse_data(rows)
    _trainer([p], "sgd")
    w = p.row_sparse_data(rows)
    assert w.stype == "row_sparse" and w.shape == (4, 2) and w.context == rows.context
    np.testing.assert_array_equal(w.asnumpy(), [[1, 1], [0, 0], [1, 1], [0, 0]])
    assert w.indices.asnumpy().tolist() == [0, 2]
    assert len(p.list_row_sparse_data(rows)) == len(p.list_ctx())
    with pytest.raises(TypeError):
        p.row_sparse_data([0, 1])
    dense = gluon.Parameter("d", shape=(4, 2))
    dense.initialize()
    with pytest.raises(RuntimeError, match="data()"):
        dense.row_sparse_data(rows)


def test_a_sparse_parameter_takes_one_trainer():
    p = _rsp_param()
    t0, t1 = gluon.Trainer([], "sgd"), gluon.Trainer([], "sgd")
    p._set_trainer(t0)
    assert p._trainer is t0
    p._set_trainer(None)
    assert p._trainer is None
    p._set_trainer(t0)
    with pytest.raises(RuntimeError, match="More than one trainers"):
        p._set_trainer(t1)
    d = gluon.Parameter("d", shape=(2,))
    d._set_trainer(t0)
    d._set_trainer(t1)  # dense parameters may change trainers
    assert d._trainer is t1


@needs_linking_trainer
def test_trainer_links_its_parameters():
    p = _rsp_param()
    t0 = gluon.Trainer([p], "sgd")
    assert p._trainer is t0
    with pytest.raises(RuntimeError, match="More than one trainers"):
        gluon.Trainer([p], "sgd")


def test_backward_through_row_sparse_data_writes_the_parameter_gradient():
    p = _rsp_param()
    _trainer([p], "sgd", {"learning_rate": 0.5})
    w = p.row_sparse_data(nd.array([1, 3]))
    with autograd.record():
        y = (w * nd.array([[1, 2], [3, 4], [5, 6], [7, 8]])).sum()
    y.backward()
    g = p.grad()
    assert g.stype == "row_sparse"
    np.testing.assert_array_equal(g.asnumpy(), [[1, 2], [3, 4], [5, 6], [7, 8]])


def test_sparse_grad_parameter_trains_like_a_dense_one():
    x = gluon.Parameter("x", shape=(10,), grad_stype="row_sparse")
    x.initialize(init="zeros")
    trainer = gluon.Trainer([x], "sgd", {"learning_rate": 1.0, "momentum": 0.5})
    with autograd.record():
        y = x.data() + 1
    y.backward()
    trainer.step(1)
    assert x.grad().stype == "row_sparse"
    np.testing.assert_array_equal(x.data().asnumpy(), -np.ones(10))


def test_save_and_load_a_row_sparse_parameter(tmp_path):
    params = gluon.ParameterDict("net_")
    params.get("w0", shape=(3, 2))
    params.get("w1", shape=(3, 2), stype="row_sparse")
    params.initialize(mx.init.Uniform())
    _trainer(params, "sgd")
    w1 = params.get("w1").row_sparse_data(nd.arange(0, 3)).asnumpy()
    f = str(tmp_path / "p.params")
    params.save(f)
    assert nd.load(f)["net_w1"].stype == "row_sparse"
    dense = gluon.ParameterDict("net_")
    dense.get("w0", shape=(3, 2))
    dense.get("w1", shape=(3, 2))
    dense.load(f)
    np.testing.assert_array_equal(dense.get("w1").data().asnumpy(), w1)


def test_embedding_sparse_grad():
    layer = gluon.nn.Embedding(10, 4, sparse_grad=True)
    layer.initialize()
    x = nd.array([3, 4, 2, 0, 3])
    with autograd.record():
        y = layer(x)
    y.backward()
    g = layer.weight.grad()
    assert g.stype == "row_sparse"
    assert g.indices.asnumpy().tolist() == [0, 2, 3, 4]
    want = np.zeros((10, 4))
    np.add.at(want, [3, 4, 2, 0, 3], 1.0)
    np.testing.assert_array_equal(g.asnumpy(), want)
    np.testing.assert_array_equal(g.data.asnumpy(), want[[0, 2, 3, 4]])
    layer.collect_params().zero_grad()
    assert layer.weight.grad().stype == "row_sparse"
    assert (layer.weight.grad().asnumpy() == 0).all()
    assert gluon.nn.Embedding(10, 4).weight._grad_stype == "default"


def test_hybridized_block_takes_csr_input():
    class Linear(gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            with self.name_scope():
                self.w = self.params.get("w", shape=(2, 2))

        def hybrid_forward(self, F, x, w):
            return F.dot(x, w) * x

    net = Linear()
    net.initialize(mx.init.One())
    net.hybridize()
    x = nd.array([[1.0, 0.0], [2.0, 3.0]]).tostype("csr")
    with autograd.record():
        z = net(x) + net(x)
    z.backward()
    xd = x.asnumpy()
    np.testing.assert_allclose(net.w.grad().asnumpy(), 2 * xd.T @ xd)


def test_symbol_block_refuses_a_row_sparse_parameter():
    data = mx.sym.var("data")
    weight = mx.sym.var("weight", stype="row_sparse")
    out = mx.sym.broadcast_add(mx.sym.dot(data, weight), mx.sym.var("bias"))
    with pytest.raises(AssertionError, match="row_sparse"):
        gluon.SymbolBlock(out, data)
