"""LibSVMIter and CSVIter over several passes, and Module.score on LibSVMIter batches,
against MXNet 1.9.1 (tests/fixtures/io/file_iters.json, made by
tools/make_file_iter_fixtures.py).

MXNet's loader treats the data as a cycle: after a pass whose last batch wrapped to
the start, ``reset()`` does not rewind, and its prefetch thread reads up to 16
batches ahead, so a reset right after construction or a second reset in a row
skips a whole short pass. example/sparse/linear_classification/train.py (score,
then ``eval_data.reset()``) reports its eval NLL over batches chosen that way.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import gluonjax as mx

FIX = json.loads(
    (Path(__file__).resolve().parents[1] / "fixtures" / "io" / "file_iters.json").read_text()
)


def replay(it, steps):
    passes = []
    for step in steps:
        if step == "reset":
            it.reset()
        elif step == "pass":
            passes.append(list(it))
        else:
            passes.append([it.next() for _ in range(int(step.split()[1]))])
    return passes


def assert_csr(got, want):
    assert isinstance(got, mx.nd.sparse.CSRNDArray)
    assert got.indptr.asnumpy().tolist() == want["indptr"]
    assert got.indices.asnumpy().tolist() == want["indices"]
    np.testing.assert_array_equal(got.data.asnumpy(), np.float32(want["values"]))


@pytest.mark.parametrize("case", FIX["libsvm"], ids=lambda c: f"bs{c['batch_size']}")
def test_libsvm_iter_passes_match_mxnet(case, tmp_path):
    (tmp_path / "d.svm").write_text(case["data_text"])
    kwargs = {"data_libsvm": str(tmp_path / "d.svm"), "data_shape": (case["width"],)}
    if case["label_text"] is not None:
        (tmp_path / "l.svm").write_text(case["label_text"])
        kwargs.update(label_libsvm=str(tmp_path / "l.svm"), label_shape=(case["label_width"],))
    it = mx.io.LibSVMIter(batch_size=case["batch_size"], **kwargs)
    got = replay(it, case["steps"])
    assert [len(p) for p in got] == [len(p["batches"]) for p in case["passes"]]
    for gp, wp in zip(got, case["passes"]):
        for g, w in zip(gp, wp["batches"]):
            assert g.pad == w["pad"]
            assert_csr(g.data[0], w["data"])
            if isinstance(w["label"], dict):
                assert_csr(g.label[0], w["label"])
            else:
                assert g.label[0].stype == "default"
                assert g.label[0].asnumpy().tolist() == w["label"]


@pytest.mark.parametrize("case", FIX["csv"], ids=lambda c: f"round{c['round_batch']}")
def test_csv_iter_passes_match_mxnet(case, tmp_path):
    (tmp_path / "d.csv").write_text(case["data_text"])
    (tmp_path / "l.csv").write_text(case["label_text"])
    it = mx.io.CSVIter(
        data_csv=str(tmp_path / "d.csv"),
        data_shape=(2,),
        label_csv=str(tmp_path / "l.csv"),
        batch_size=case["batch_size"],
        round_batch=case["round_batch"],
    )
    got = [
        [
            {
                "data": b.data[0].asnumpy()[:, 0].tolist(),
                "label": b.label[0].asnumpy().ravel().tolist(),
                "pad": b.pad,
            }
            for b in p
        ]
        for p in replay(it, case["steps"])
    ]
    assert got == [p["batches"] for p in case["passes"]]


def test_module_score_on_libsvm_iter_matches_mxnet(tmp_path):
    case = FIX["score"]
    (tmp_path / "s.svm").write_text(case["data_text"])
    width = case["width"]
    x = mx.sym.Variable("data", stype="csr")
    w = mx.sym.Variable("weight", shape=(width, 2), stype="row_sparse")
    b = mx.sym.Variable("bias", shape=(2,))
    pred = mx.sym.broadcast_add(mx.sym.sparse.dot(x, w), b)
    net = mx.sym.SoftmaxOutput(pred, mx.sym.Variable("softmax_label"), name="out")
    it = mx.io.LibSVMIter(
        data_libsvm=str(tmp_path / "s.svm"), data_shape=(width,), batch_size=case["batch_size"]
    )
    mod = mx.mod.Module(net, data_names=["data"], label_names=["softmax_label"])
    mod.bind(data_shapes=it.provide_data, label_shapes=it.provide_label, for_training=False)
    weight = mx.nd.array(np.float32(case["weight"])).tostype("row_sparse")
    mod.init_params(arg_params={"weight": weight, "bias": mx.nd.array(np.float32(case["bias"]))})
    nll = []
    for _ in range(3):  # as example/sparse/linear_classification/train.py evaluates
        nll.append(mod.score(it, ["nll_loss"])[0][1])
        it.reset()
    np.testing.assert_allclose(nll, case["nll"], rtol=1e-6)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"round_batch": False}, "round_batch"),
        ({"data_shape": (6, 1)}, "data_shape"),
        ({"label_shape": (2,)}, "label_shape"),
        ({"batch_size": 40}, "batch_size 40"),
    ],
)
def test_libsvm_iter_rejects_what_mxnet_rejects(kwargs, match, tmp_path):
    (tmp_path / "d.svm").write_text(FIX["libsvm"][0]["data_text"])
    args = {"data_libsvm": str(tmp_path / "d.svm"), "data_shape": (6,), "batch_size": 2}
    args.update(kwargs)
    with pytest.raises(mx.MXNetError, match=match):
        list(mx.io.LibSVMIter(**args))
