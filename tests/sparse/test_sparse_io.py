"""Sparse arrays in MXNet's NDArray file format and in NDArrayIter.

``tests/fixtures/sparse/arrays.nd`` was written by MXNet 1.9.1's ``mx.nd.save``
(``tools/make_sparse_fixtures.py``), with its values in ``cases.npz``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

import gluonjax as mx
from gluonjax import nd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mxnet_ref import needs_mxnet, run_mxnet  # noqa: E402

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sparse"
_Z = np.load(FIXTURES / "cases.npz")
NAMES = ("csr", "rsp", "csr_empty", "rsp_empty", "dense")
STYPES = {"csr": "csr", "rsp": "row_sparse", "dense": "default"}


def _check(name, arr):
    assert arr.stype == STYPES[name.split("_")[0]]
    np.testing.assert_array_equal(arr.asnumpy(), _Z[f"file.{name}.dense"])
    if arr.stype != "default":
        np.testing.assert_array_equal(arr.indices.asnumpy(), _Z[f"file.{name}.indices"])
        np.testing.assert_array_equal(arr.data.asnumpy(), _Z[f"file.{name}.data"])
    if arr.stype == "csr":
        np.testing.assert_array_equal(arr.indptr.asnumpy(), _Z[f"file.{name}.indptr"])


def test_load_sparse_arrays_saved_by_mxnet():
    loaded = nd.load(str(FIXTURES / "arrays.nd"))
    assert sorted(loaded) == sorted(NAMES)
    for name in NAMES:
        _check(name, loaded[name])


def test_save_load_round_trip(tmp_path):
    loaded = nd.load(str(FIXTURES / "arrays.nd"))
    f = str(tmp_path / "again.nd")
    nd.save(f, loaded)
    again = nd.load(f)
    for name in NAMES:
        _check(name, again[name])


@needs_mxnet
def test_mxnet_loads_sparse_arrays_saved_by_gluonjax(tmp_path):
    f = tmp_path / "ours.nd"
    nd.save(str(f), nd.load(str(FIXTURES / "arrays.nd")))
    out = run_mxnet(
        "import mxnet as mx, json\n"
        f"d = mx.nd.load({str(f)!r})\n"
        "print(json.dumps({k: [v.stype, v.asnumpy().tolist()] for k, v in d.items()}))\n"
    )
    got = json.loads(out.strip().splitlines()[-1])
    for name in NAMES:
        stype, values = got[name]
        assert stype == STYPES[name.split("_")[0]]
        np.testing.assert_array_equal(np.asarray(values, np.float32), _Z[f"file.{name}.dense"])


def test_ndarray_iter_with_csr_data():
    spsp = pytest.importorskip("scipy.sparse")
    dns = _Z["file.csr.dense"]
    csr = nd.array(dns).tostype("csr")
    for data in ({"data": csr}, {"data": spsp.csr_matrix(dns)}):
        with pytest.raises(NotImplementedError):
            mx.io.NDArrayIter(data, dns, 2)
    it = mx.io.NDArrayIter(csr, csr, 2, last_batch_handle="discard")
    batches = list(it)
    assert len(batches) == dns.shape[0] // 2
    for k, b in enumerate(batches):
        assert b.data[0].stype == "csr" and b.label[0].stype == "csr"
        np.testing.assert_array_equal(b.data[0].asnumpy(), dns[2 * k : 2 * k + 2])
    np.random.seed(0)
    it = mx.io.NDArrayIter(
        {"c": spsp.csr_matrix(dns), "d": dns}, None, 2, shuffle=True, last_batch_handle="discard"
    )
    for b in it:
        assert b.data[0].stype == "csr" and not b.label
        np.testing.assert_array_equal(b.data[0].asnumpy(), b.data[1].asnumpy())
