"""NDArray surface added for MXNet compatibility: views, pickling, truth values, DLPack,
NumPy-shape save/load, legacy files, the ``nd`` helper functions and module names."""

from __future__ import annotations

import copy
import os
import pickle
import struct

import numpy as np
import pytest

import gluonjax as mx
from gluonjax._io.ndformat import LIST_MAGIC


def test_contiguous_basic_index_is_a_view():
    a = mx.nd.arange(12).reshape((3, 4))
    row = a[1]
    row[:] = -1
    assert a.asnumpy()[1].tolist() == [-1] * 4
    a[1, 2] = 7
    assert row.asnumpy().tolist() == [-1, -1, 7, -1]
    block = a[0:2]
    block += 1
    assert a.asnumpy()[0].tolist() == [1, 2, 3, 4]
    col = a[:, 1]  # not contiguous: a copy, as in MXNet
    col[:] = 100
    assert 100 not in a.asnumpy()
    flat = a.reshape((12,))
    flat[0] = 42
    assert a.asnumpy()[0, 0] == 42
    with mx.autograd.record():  # recorded: a copy that carries the gradient
        assert type(a[0]) is mx.nd.NDArray


def test_inplace_flatten_squeeze_expand_dims():
    t = mx.nd.ones((2, 1, 3))
    ref = t.flatten(inplace=True)
    copy_ = t.flatten()
    t[0] = 5
    assert ref.asnumpy()[0].tolist() == [5, 5, 5]
    assert copy_.asnumpy()[0].tolist() == [1, 1, 1]
    assert t.squeeze(axis=1, inplace=True).shape == (2, 3)
    assert t.expand_dims(axis=0, inplace=True).shape == (1, 2, 1, 3)


def test_slice_contiguity_rule_matches_numpy():
    is_contig = mx.nd.NDArray._basic_indexing_slice_is_contiguous
    x = np.zeros((4, 5, 6))
    for key in [
        (slice(None), slice(None), slice(1, 3)),
        (slice(1, 2), slice(None), slice(None)),
        (slice(0, 1), slice(2, 3), slice(None)),
        (slice(None, None, -1),) + (slice(None),) * 2,
        (slice(1, 3), slice(0, 1), slice(None)),
    ]:
        assert is_contig(key, x.shape) == x[key].flags.contiguous, key


def test_truth_value():
    assert not bool(mx.nd.array([]))
    assert not bool(mx.nd.zeros((1,)))
    assert bool(mx.nd.ones((1, 1)))
    with pytest.raises(ValueError, match="ambiguous"):
        bool(mx.nd.ones((2,)))


def test_pickle_and_state():
    a = mx.nd.array([[1, 2], [3, 4]], dtype="int32")
    b = pickle.loads(pickle.dumps(a))
    assert b.dtype == np.int32 and b.asnumpy().tolist() == [[1, 2], [3, 4]]
    state = a.__getstate__()
    assert set(state) == {"handle"} and isinstance(state["handle"], bytearray)
    # MXNet's state of nd.arange(1, ctx=gpu()): a V2 record on device type 2 (GPU)
    gpu_state = {
        "handle": bytearray(
            struct.pack("<IiIqiii", 0xF993FAC9, 0, 1, 1, 2, 0, 0) + struct.pack("<f", 0.0)
        )
    }
    c = mx.nd.zeros((3,))
    c.__setstate__(gpu_state)
    assert c.shape == (1,) and c.asnumpy().tolist() == [0.0]
    with pytest.raises(mx.MXNetError, match="handle"):
        c.__setstate__({})
    v = a[0]
    assert type(pickle.loads(pickle.dumps(v))) is mx.nd.NDArray
    assert type(copy.deepcopy(v)) is mx.nd.NDArray
    d = copy.deepcopy(a)
    d[0, 0] = 9
    assert a.asnumpy()[0, 0] == 1


def test_dlpack_round_trip():
    a = mx.nd.random.uniform(shape=(3, 4))
    for pack in (a.to_dlpack_for_read(), a.to_dlpack_for_write(), mx.nd.to_dlpack_for_read(a)):
        np.testing.assert_array_equal(mx.nd.from_dlpack(pack).asnumpy(), a.asnumpy())
    np.testing.assert_array_equal(mx.nd.from_dlpack(np.arange(3.0)).asnumpy(), np.arange(3.0))


def test_from_numpy():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(mx.nd.from_numpy(x).asnumpy(), x)
    assert mx.nd.from_numpy(np.ones(())).shape == ()
    with pytest.raises(ValueError, match="C-contiguous"):
        mx.nd.from_numpy(x.T)
    assert mx.nd.from_numpy(x.T, zero_copy=False).shape == (3, 2)


def _save_load(tmp_path, save_np, load_np, arrays):
    f = os.path.join(tmp_path, "a.nd")
    with mx.np_shape(save_np):
        mx.nd.save(f, [mx.nd.array(a) for a in arrays])
    with mx.np_shape(load_np):
        return mx.nd.load(f)


def test_save_load_numpy_shape_semantics(tmp_path):
    zero_size = [np.zeros((2, 0, 1)), np.zeros((0,)), np.ones((2, 1))]
    assert [a.shape for a in _save_load(tmp_path, False, False, zero_size)] == [
        (2, 0, 1),
        (0,),
        (2, 1),
    ]
    with pytest.raises(mx.MXNetError, match="np_shape\\(True\\)"):
        _save_load(tmp_path, True, False, zero_size)
    with pytest.raises(mx.MXNetError, match="np_shape\\(False\\)"):
        _save_load(tmp_path, False, True, zero_size)
    out = _save_load(tmp_path, True, True, zero_size + [np.array(3.0)])
    assert out[-1].shape == () and out[-1].asscalar() == 3.0


def test_load_legacy_v0_and_frombuffer(tmp_path):
    # MXNet before 0.9: each record starts with ndim and u32 dims (no magic)
    data = np.arange(4, dtype=np.float32)
    rec = struct.pack("<II", 1, 4) + struct.pack("<iii", 1, 0, 0) + data.tobytes()
    raw = struct.pack("<QQQ", LIST_MAGIC, 0, 2) + rec + rec + struct.pack("<Q", 0)
    f = os.path.join(tmp_path, "legacy.v0")
    with open(f, "wb") as fh:
        fh.write(raw)
    out = mx.nd.load(f)
    assert len(out) == 2 and out[1].asnumpy().tolist() == data.tolist()
    assert mx.nd.load_frombuffer(raw)[0].asnumpy().tolist() == data.tolist()
    with pytest.raises(mx.MXNetError):
        mx.nd.load_frombuffer(raw[:-10])


def test_ufunc_helpers_dispatch():
    a = mx.nd.array([1.0, 5.0])
    assert mx.nd.maximum(a, 3).asnumpy().tolist() == [3.0, 5.0]
    assert mx.nd.minimum(4, a).asnumpy().tolist() == [1.0, 4.0]
    assert mx.nd.subtract(10, a).asnumpy().tolist() == [9.0, 5.0]
    assert mx.nd.divide(a, mx.nd.array([2.0])).asnumpy().tolist() == [0.5, 2.5]
    assert mx.nd.power(2, a).asnumpy().tolist() == [2.0, 32.0]
    assert mx.nd.greater(3, a).asnumpy().tolist() == [1.0, 0.0]
    assert mx.nd.lesser_equal(a, 1).asnumpy().tolist() == [1.0, 0.0]
    assert mx.nd.equal(2, 2) == 1 and mx.nd.add(1, 2) == 3
    with pytest.raises(TypeError):
        mx.nd.add(a, "x")
    x, y = mx.nd.array([np.nan, 1.0]), mx.nd.array([0.0, np.nan])
    np.testing.assert_array_equal(
        mx.nd.maximum(x, y).asnumpy(), np.maximum([np.nan, 1], [0, np.nan])
    )


def test_integer_arithmetic_is_exact():
    big = mx.nd.array([50000001], dtype="int32")
    assert (big == 50000001).asscalar() == 1
    assert big.round().asscalar() == 50000001 and big.floor().asscalar() == 50000001
    q = mx.nd.array([7, -7], dtype="int32") / mx.nd.array([2, 2], dtype="int32")
    assert q.dtype == np.int32 and q.asnumpy().tolist() == [3, -3]


def test_moveaxis_and_split_v2():
    x = mx.nd.zeros((1, 2, 3, 4))
    assert mx.nd.moveaxis(x, [0, -1], [-1, 0]).shape == (4, 2, 3, 1)
    assert x.moveaxis(1, 3).shape == (1, 3, 4, 2)
    for bad in ((x, 4, 0), (x, [0, 0], [1, 2]), (x, [0, 1], [0])):
        with pytest.raises(ValueError):
            mx.nd.moveaxis(*bad)
    parts = mx.nd.split_v2(mx.nd.arange(6), (2, 3))
    assert [p.asnumpy().tolist() for p in parts] == [[0, 1], [2], [3, 4, 5]]
    assert [p.shape for p in mx.nd.ones((2, 6)).split_v2(3, axis=1)] == [(2, 2)] * 3
    with pytest.raises(mx.MXNetError):
        mx.nd.split_v2(mx.nd.arange(5), 2)


def test_onehot_encode_writes_out():
    out = mx.nd.zeros((3, 4))
    assert mx.nd.onehot_encode(mx.nd.array([3, 0, 1]), out) is out
    assert out.asnumpy().argmax(1).tolist() == [3, 0, 1]


def test_reset_arrays_and_broadcast_to_numpy_shape():
    a, b = mx.nd.ones(3), mx.nd.ones((2, 2))
    mx.nd.reset_arrays(a, b, num_arrays=2)
    assert a.asnumpy().sum() == 0 and b.asnumpy().sum() == 0
    assert mx.nd.ones((1, 3)).broadcast_to(shape=np.array([4, 3])).shape == (4, 3)


def test_contrib_checks_and_zipfian():
    x = mx.nd.array([1.0, np.inf, -np.inf, np.nan])
    assert mx.nd.contrib.isinf(x).asnumpy().tolist() == [0, 1, 1, 0]
    assert mx.nd.contrib.isfinite(x).asnumpy().tolist() == [1, 0, 0, 0]
    assert mx.nd.contrib.isnan(x).asnumpy().tolist() == [0, 0, 0, 1]
    mx.random.seed(0)
    true = mx.nd.array([0, 3], dtype="int32")
    sampled, exp_true, exp_sampled = mx.nd.contrib.rand_zipfian(true, 500, 10)
    expected = np.log((np.arange(10) + 2) / (np.arange(10) + 1)) / np.log(11) * 500
    np.testing.assert_allclose(exp_true.asnumpy(), expected[[0, 3]], rtol=1e-5)
    np.testing.assert_allclose(exp_sampled.asnumpy(), expected[sampled.asnumpy()], rtol=1e-5)
    freq = np.bincount(sampled.asnumpy(), minlength=10) / 500.0 * 500
    assert abs(freq[0] - expected[0]) < 60


def test_cached_op_records_gradients():
    x, w = mx.sym.var("x"), mx.sym.var("w")
    op = mx.nd.CachedOp(mx.sym.FullyConnected(x, w, num_hidden=2, no_bias=True))
    xv, wv = mx.nd.ones((3, 4)), mx.nd.ones((2, 4))
    wv.attach_grad()
    with mx.autograd.record():
        y = op(xv, wv)
    y.backward()
    assert y.shape == (3, 2) and wv.grad.asnumpy().tolist() == [[3.0] * 4] * 2
    out = mx.nd.zeros((3, 2))
    op(xv, wv, out=out)
    assert out.asnumpy()[0, 0] == 4.0


def test_module_names():
    from gluonjax.base import (
        NotImplementedForSymbol,
        _Null,
        integer_types,
        mx_real_t,
        numeric_types,
        py_str,
        string_types,
    )
    from gluonjax.ndarray import _internal
    from gluonjax.ndarray.ndarray import _STORAGE_TYPE_STR_TO_ID, py_slice

    assert isinstance(np.float32(1), numeric_types) and isinstance(3, integer_types)
    assert isinstance("a", string_types) and py_str(b"ab") == "ab" and repr(_Null) == "_Null"
    assert mx_real_t is np.float32 and _internal._plus_scalar is mx.nd._plus_scalar
    assert py_slice is slice and _STORAGE_TYPE_STR_TO_ID["csr"] == 2
    err = NotImplementedForSymbol(len, "len", 1)
    assert "len" in str(err) and isinstance(err, mx.MXNetError)
    assert not mx.is_np_array() and not mx.is_np_shape()

    @mx.use_np
    def inside():
        return mx.is_np_shape(), mx.is_np_array()

    assert inside() == (True, True) and not mx.util.is_np_shape()
    prev = mx.set_np_shape(True)
    assert prev is False and mx.is_np_shape()
    mx.set_np_shape(False)
