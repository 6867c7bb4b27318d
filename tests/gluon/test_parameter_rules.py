"""MXNet 1.9.1's Parameter rules: storage types, invalid access, the private views
(``_grad``, ``_ctx_list``) MXNet code reads, unknown dimensions."""

from __future__ import annotations

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
    with pytest.raises(RuntimeError, match="use data"):
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


@pytest.mark.parametrize("unknown", [0, -1])
def test_unknown_dimensions_fill_in(unknown):
    p = gluon.Parameter("w", shape=(16, unknown), allow_deferred_init=True)
    p.shape = (16, 7)
    assert p.shape == (16, 7)
    with pytest.raises(mx.base.ShapeError, match="does not match"):
        p.shape = (15, 7)
