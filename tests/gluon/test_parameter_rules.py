"""MXNet 1.9.1's Parameter rules: storage types, invalid access, the private views
(``_grad``, ``_ctx_list``, ``_trainer``) MXNet code reads, and row_sparse_data."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import gluonjax as mx
from gluonjax import gluon


@pytest.mark.parametrize("kw", [{"stype": "invalid"}, {"grad_stype": "invalid"}])
def test_invalid_storage_types_fail_as_in_mxnet(kw):
    with pytest.raises(AssertionError, match="invalid"):
        gluon.Parameter("weight", shape=(10, 10), **kw)


def test_invalid_access_raises_runtime_error():
    sparse = gluon.Parameter("w", shape=(4, 3), stype="row_sparse", grad_stype="row_sparse")
    sparse.initialize(init="xavier")
    for read in (sparse.data, sparse.list_data):
        with pytest.raises(RuntimeError, match="row_sparse_data"):
            read()
    with pytest.raises(RuntimeError, match="no Trainer"):
        sparse.row_sparse_data(mx.nd.array([0]))
    dense = gluon.Parameter("d", shape=(4, 3))
    dense.initialize()
    row_id = mx.nd.arange(0, 4)
    with pytest.raises(RuntimeError, match="use data"):
        dense.row_sparse_data(row_id)
    with pytest.raises(RuntimeError, match="use list_data"):
        dense.list_row_sparse_data(row_id)


def test_grad_view_follows_grad_req():
    model = gluon.nn.Sequential()
    model.add(gluon.nn.Dense(4, in_units=3))
    p = list(model.collect_params().values())[0]
    assert p._grad is None and p._ctx_list is None  # not initialized yet
    model.initialize()
    assert len(p._grad) == 1 and p._grad[0] is p.grad()
    assert p._ctx_list == [mx.cpu()]
    model.collect_params().setattr("grad_req", "null")
    assert p._grad is None
    model.collect_params().setattr("grad_req", "write")
    assert p._grad is not None


def test_trainer_link_and_one_trainer_per_sparse_parameter():
    class Owner:  # stands for a Trainer: any object the parameter can refer to
        pass

    x = gluon.Parameter("x", shape=(10,), stype="row_sparse")
    x.initialize()
    first, second = Owner(), Owner()
    x._set_trainer(first)
    assert x._trainer is first
    x._set_trainer(first)  # the same trainer again is fine
    with pytest.raises(RuntimeError, match="already set"):
        x._set_trainer(second)
    x._set_trainer(None)
    assert x._trainer is None
    x._set_trainer(second)
    del second
    gc.collect()
    assert x._trainer is None  # the link does not keep a trainer alive
    dense = gluon.Parameter("d", shape=(2,))
    dense._set_trainer(first)
    dense._set_trainer(Owner())  # dense parameters may move between trainers


def test_row_sparse_data_keeps_requested_rows_and_differentiates():
    class Owner:
        pass

    w = gluon.Parameter("w", shape=(5, 2), stype="row_sparse", grad_stype="row_sparse")
    w.initialize(init=mx.init.Constant(2.0))
    owner = Owner()
    w._set_trainer(owner)
    rows = mx.nd.array([3, 0, 3])
    with mx.autograd.record():
        kept = w.row_sparse_data(rows)
        loss = (kept * mx.nd.arange(10).reshape((5, 2))).sum()
    loss.backward()
    want = np.zeros((5, 2), np.float32)
    want[[0, 3]] = 2.0
    np.testing.assert_array_equal(kept.asnumpy(), want)
    grad = np.arange(10, dtype=np.float32).reshape(5, 2) * (want != 0)
    np.testing.assert_array_equal(w.grad().asnumpy(), grad)
    assert len(w.list_row_sparse_data(rows)) == 1
    saved = w._reduce().asnumpy()
    np.testing.assert_array_equal(saved, np.full((5, 2), 2.0, np.float32))


@pytest.mark.parametrize("unknown", [0, -1])
def test_unknown_dimensions_fill_in(unknown):
    p = gluon.Parameter("w", shape=(16, unknown), allow_deferred_init=True)
    p.shape = (16, 7)
    assert p.shape == (16, 7)
    with pytest.raises(mx.base.ShapeError, match="does not match"):
        p.shape = (15, 7)
