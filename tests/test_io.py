"""gluonjax.io: NDArrayIter batches against MXNet 1.9.1's (fixture), DataDesc, DataBatch."""

import json
from pathlib import Path

import numpy as np
import pytest

import gluonjax as mx

FIX = json.loads((Path(__file__).parent / "fixtures" / "io" / "ndarrayiter.json").read_text())


@pytest.mark.parametrize(
    "case", FIX["cases"], ids=lambda c: f"{c['n']}-{c['batch_size']}-{c['last_batch_handle']}"
)
def test_ndarrayiter_matches_mxnet(case):
    n, bs = case["n"], case["batch_size"]
    data = np.arange(n * 2).reshape(n, 2).astype("int64")
    it = mx.io.NDArrayIter(
        data, np.arange(n) + 100, batch_size=bs, last_batch_handle=case["last_batch_handle"]
    )
    assert [[d.name, list(d.shape), np.dtype(d.dtype).name] for d in it.provide_data] == case[
        "provide_data"
    ]
    assert [[d.name, list(d.shape), np.dtype(d.dtype).name] for d in it.provide_label] == case[
        "provide_label"
    ]
    for want in case["epochs"]:
        got = []
        for b in it:
            assert b.data[0].dtype == np.float32
            got.append(
                {
                    "data": b.data[0].asnumpy()[:, 0].tolist(),
                    "label": b.label[0].asnumpy().tolist(),
                    "pad": b.pad,
                }
            )
        assert got == want
        it.reset()


def test_names_of_dict_and_list_inputs_match_mxnet():
    it = mx.io.NDArrayIter(
        {"b": np.ones((4, 3)), "a": np.ones((4, 1))}, [np.ones((4,)), np.ones((4, 2))], batch_size=2
    )
    assert [[d.name, list(d.shape)] for d in it.provide_data] == FIX["names"]["provide_data"]
    assert [[d.name, list(d.shape)] for d in it.provide_label] == FIX["names"]["provide_label"]


def test_pad_batch_wraps_to_start_numpy_reference():
    x = np.random.RandomState(0).rand(7, 3).astype(np.float32)
    it = mx.io.NDArrayIter(x, batch_size=3)
    batches = list(it)
    assert len(batches) == 3 and [b.pad for b in batches] == [0, 0, 2]
    np.testing.assert_array_equal(batches[2].data[0].asnumpy(), x[[6, 0, 1]])
    assert batches[0].label == [] and it.provide_label == []


def test_shuffle_is_a_permutation_and_keeps_pairs():
    np.random.seed(3)
    x = np.arange(12, dtype=np.float32).reshape(6, 2)
    it = mx.io.NDArrayIter(x, x[:, 0] * 10, batch_size=3, shuffle=True)
    seen = np.concatenate([b.data[0].asnumpy() for b in it])
    lab = np.concatenate(
        [
            b.label[0].asnumpy()
            for b in mx.io.NDArrayIter(x, x[:, 0] * 10, batch_size=6, shuffle=False)
        ]
    )
    assert sorted(seen[:, 0].tolist()) == x[:, 0].tolist()
    it.reset()
    for b in it:
        np.testing.assert_array_equal(b.label[0].asnumpy(), b.data[0].asnumpy()[:, 0] * 10)
    assert lab.tolist() == (x[:, 0] * 10).tolist()


def test_ndarray_input_keeps_dtype_and_bad_inputs_fail():
    it = mx.io.NDArrayIter(mx.nd.array(np.ones((4, 2)), dtype="float16"), batch_size=2)
    assert it.provide_data[0].dtype == np.float16
    with pytest.raises(mx.MXNetError):
        mx.io.NDArrayIter(np.ones((4, 2)), np.ones(3), batch_size=2)
    with pytest.raises(mx.MXNetError):
        mx.io.NDArrayIter(np.ones((4, 2)), last_batch_handle="keep")
    with pytest.raises(TypeError):
        mx.io.NDArrayIter("abc")


def test_datadesc_and_databatch():
    d = mx.io.DataDesc("x", (2, 3))
    assert d == ("x", (2, 3)) and d.dtype is np.float32 and d.layout == "NCHW"
    assert repr(d) == "DataDesc[x,(2, 3),<class 'numpy.float32'>,NCHW]"
    assert mx.io.DataDesc.get_batch_axis("TNC") == 1
    assert mx.io.DataDesc.get_batch_axis(None) == 0
    lst = mx.io.DataDesc.get_list([("a", (1, 2))], [("a", np.int32)])
    assert lst[0].dtype is np.int32 and lst[0].shape == (1, 2)
    b = mx.io.DataBatch([mx.nd.ones((2, 3))])
    assert str(b) == "DataBatch: data shapes: [(2, 3)] label shapes: None"
    with pytest.raises(mx.MXNetError):
        mx.io.DataBatch(mx.nd.ones((2, 3)))


def test_resize_iter_restarts_inner_iterator():
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    it = mx.io.ResizeIter(mx.io.NDArrayIter(x, batch_size=1), 5)
    firsts = [b.data[0].asnumpy()[0, 0] for b in it]
    assert firsts == [0.0, 2.0, 4.0, 0.0, 2.0]
