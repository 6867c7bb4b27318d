"""``mx.kv``: the single-machine key-value store with MXNet 1.9.1's semantics.

The cases follow MXNet's own ``tests/python/unittest/test_kvstore.py`` (values
are sums of pushed NumPy values); 2-bit compression is checked against MXNet in
``tests/sparse/test_sparse_vs_mxnet.py`` (``kv_compress``).
"""

from __future__ import annotations

import numpy as np
import pytest

import gluonjax as mx
from gluonjax import nd

SHAPE = (4, 4)
KEYS = [5, 7, 11]
STR_KEYS = ["b", "c", "d"]


def _kv(stype="default", str_keys=False, name="local"):
    kv = mx.kv.create(name)
    first, rest = ("a", STR_KEYS) if str_keys else (3, KEYS)
    kv.init(first, nd.zeros(SHAPE, stype=stype))
    kv.init(rest, [nd.zeros(SHAPE, stype=stype)] * len(rest))
    return kv, first, rest


@pytest.mark.parametrize("str_keys", [False, True])
@pytest.mark.parametrize("stype", ["default", "row_sparse"])
def test_push_pull_single_and_list(stype, str_keys):
    kv, key, keys = _kv(str_keys=str_keys)
    kv.push(key, nd.ones(SHAPE).tostype(stype))
    out = nd.empty(SHAPE)
    kv.pull(key, out=out)
    assert (out.asnumpy() == 1).all()
    kv.push(keys, [nd.ones(SHAPE).tostype(stype) * 4] * len(keys))
    outs = [nd.empty(SHAPE) for _ in keys]
    kv.pull(keys, out=outs)
    assert all((o.asnumpy() == 4).all() for o in outs)


@pytest.mark.parametrize("stype", ["default", "row_sparse"])
def test_values_pushed_for_one_key_are_summed(stype):
    kv, key, keys = _kv()
    vals = [nd.ones(SHAPE).tostype(stype) * (i + 1) for i in range(4)]
    kv.push(key, vals)
    outs = [nd.empty(SHAPE) for _ in range(4)]
    kv.pull(key, out=outs)
    assert all((o.asnumpy() == 10).all() for o in outs)
    kv.push(keys, [vals] * len(keys))
    outs = [[nd.empty(SHAPE) for _ in range(4)] for _ in keys]
    kv.pull(keys, out=outs)
    assert all((o.asnumpy() == 10).all() for oo in outs for o in oo)
    kv.push([3, 3], [nd.ones(SHAPE), nd.ones(SHAPE) * 2])  # a key twice in one call
    kv.pull(3, out=outs[0][0])
    assert (outs[0][0].asnumpy() == 3).all()


def test_init_pull_and_pushpull():
    kv = mx.kv.create("device")
    kv.init("w", nd.ones(SHAPE) * 4)
    a = nd.zeros(SHAPE)
    kv.pull("w", out=a)
    assert (a.asnumpy() == 4).all()
    b = [nd.ones(SHAPE), nd.ones(SHAPE) * 2]
    kv.pushpull("w", b)  # out=None: the sum is written back into the values
    assert all((x.asnumpy() == 3).all() for x in b)
    out = nd.zeros(SHAPE)
    kv.pushpull("w", nd.ones(SHAPE), out=out)
    assert (out.asnumpy() == 1).all()


def test_broadcast():
    kv = mx.kv.create()
    outs = [nd.zeros(SHAPE), nd.zeros(SHAPE)]
    kv.broadcast(0, nd.ones(SHAPE) * 2, out=outs)
    assert all((o.asnumpy() == 2).all() for o in outs)
    with pytest.raises(mx.MXNetError, match="duplicate init"):
        kv.broadcast(0, nd.ones(SHAPE), out=outs)


@pytest.mark.parametrize("stype", ["default", "row_sparse"])
def test_updater_receives_the_sum_and_the_stored_value(stype):
    seen = []

    def updater(key, recv, local):
        seen.append(key)
        local += recv

    for str_keys in (False, True):
        kv, key, keys = _kv(str_keys=str_keys)
        kv._set_updater(updater)
        kv.push(key, [nd.ones(SHAPE).tostype(stype)] * 4)
        out = nd.empty(SHAPE)
        kv.pull(key, out=out)
        assert (out.asnumpy() == 4).all()
        for _ in range(4):
            kv.push(keys, [[nd.ones(SHAPE).tostype(stype)] * 4] * len(keys))
        outs = [nd.empty(SHAPE) for _ in keys]
        kv.pull(keys, out=outs)
        assert all((o.asnumpy() == 16).all() for o in outs)
    assert 3 in seen and "a" in seen


def test_set_optimizer_updates_stored_weights(tmp_path):
    kv = mx.kv.create("local")
    kv.init(0, nd.ones((2, 3)))
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9))
    g = np.arange(6, dtype=np.float32).reshape(2, 3)
    for _ in range(2):
        kv.push(0, [nd.array(g), nd.array(g)])
    w = nd.zeros((2, 3))
    kv.pull(0, out=w)
    # SGD with momentum on the summed gradient 2g, twice: mom = -0.2g, then -0.38g
    np.testing.assert_allclose(w.asnumpy(), 1 - 0.58 * g, rtol=1e-6)
    f = str(tmp_path / "states")
    kv.save_optimizer_states(f)
    fresh = mx.kv.create("local")
    fresh.set_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9))
    fresh.load_optimizer_states(f)
    np.testing.assert_allclose(fresh._updater.states[0].asnumpy(), -0.38 * g, rtol=1e-6)


def test_row_sparse_pull():
    kv, _, _ = _kv("row_sparse", str_keys=True)
    kv.init("e", nd.ones(SHAPE).tostype("row_sparse"))
    rng = np.random.RandomState(0)
    for count in (1, 4):
        vals = [nd.zeros(SHAPE).tostype("row_sparse") for _ in range(count)]
        ids = [nd.array(rng.randint(4, size=4)).reshape((2, 2)) for _ in range(count)]
        kv.row_sparse_pull("e", out=vals[0] if count == 1 else vals, row_ids=ids)
        for v, rid in zip(vals, ids):
            want = np.zeros(SHAPE)
            want[np.unique(rid.asnumpy().astype(int))] = 1
            np.testing.assert_array_equal(v.asnumpy(), want)
            assert v.indices.asnumpy().tolist() == np.unique(rid.asnumpy()).tolist()
    outs = [nd.zeros(SHAPE).tostype("row_sparse") for _ in range(3)]
    kv.row_sparse_pull("e", out=outs, row_ids=nd.array([1]))  # one row_ids for all outputs
    assert all(o.indices.asnumpy().tolist() == [1] for o in outs)


def test_pull_skips_sparse_outputs_unless_asked():
    kv, key, _ = _kv()
    kv.push(key, nd.ones(SHAPE) * 3)
    rsp = (nd.ones(SHAPE) * 2).tostype("row_sparse")
    kv.pull(key, out=rsp)
    assert (rsp.asnumpy() == 2).all()
    kv.pull(key, out=rsp, ignore_sparse=False)
    assert (rsp.asnumpy() == 3).all() and rsp.stype == "row_sparse"


@pytest.mark.parametrize(
    "call",
    [
        lambda kv: kv.row_sparse_pull(3, out=nd.ones(SHAPE), row_ids=nd.array([1])),
        lambda kv: kv.row_sparse_pull(
            3, out=nd.zeros(SHAPE).tostype("row_sparse"), row_ids=nd.array([1])
        ),  # the stored value is dense
        lambda kv: kv.init("x", nd.ones(SHAPE)),  # str key in an int-key store
        lambda kv: kv.push("x", nd.ones(SHAPE)),
        lambda kv: kv.pull(99, out=nd.ones(SHAPE)),  # never initialized
        lambda kv: kv.push(3, nd.ones(SHAPE).tostype("csr")),
        lambda kv: kv.init(3, nd.ones(SHAPE)),  # initialized twice
        lambda kv: kv.push([3, "a"], [nd.ones(SHAPE)] * 2),
        lambda kv: kv.set_gradient_compression({"type": "2bit"}),  # 'local' does not compress
        lambda kv: kv.save_optimizer_states("unused"),
    ],
)
def test_invalid_calls_raise(call):
    kv, _, _ = _kv()
    with pytest.raises(mx.MXNetError):
        call(kv)


def test_gradient_compression_parameters():
    kv = mx.kv.create("device")
    for bad in ({"type": "1bit"}, {"type": "2bit", "threshold": 0}, "2bit"):
        with pytest.raises(mx.MXNetError):
            kv.set_gradient_compression(bad)
    kv.set_gradient_compression({"type": "2bit", "threshold": 0.25})


def test_store_description():
    kv = mx.kv.create("local_allreduce_cpu")
    assert kv.type == "local_allreduce_cpu" and kv.rank == 0 and kv.num_workers == 1
    assert isinstance(kv, mx.kvstore.KVStore) and isinstance(kv, mx.kvstore.KVStoreBase)
    assert kv.is_capable(mx.kvstore.KVStoreBase.OPTIMIZER)
    kv.barrier()
    assert mx.kv.create("Device").type == "device"
    with pytest.raises(TypeError):
        mx.kv.create(3)


def test_registered_store_and_test_store():
    @mx.kvstore.KVStoreBase.register
    class CountingStore(mx.kvstore.KVStoreBase):
        pass

    try:
        assert isinstance(mx.kv.create("countingstore"), CountingStore)
    finally:
        del mx.kvstore.KVStoreBase.kv_registry["countingstore"]
    ts = mx.kv.create("teststore")
    assert ts.type == "teststore" and not ts.is_capable("optimizer")
    vals = [nd.ones((2,)), nd.ones((2,)) * 2]
    ts.pushpull(0, vals)
    assert all((v.asnumpy() == 3).all() for v in vals)
