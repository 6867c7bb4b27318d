"""mx.metric against real MXNet 1.9.1 (fixture) and NumPy references.

``tests/fixtures/metrics.npz`` is written by ``tools/make_metric_fixtures.py``
with the MXNet interpreter: three batches per case, ``get()``/``get_global()``
after two updates, then after ``reset_local()`` and a third update.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

import gluonjax as mx

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "metrics.npz"
_DATA = np.load(FIXTURE)
CASES = json.loads(str(_DATA["__cases__"]))


def abs_sum_count(label, pred):
    return float(np.abs(label.ravel() - pred.ravel()).sum()), label.size


def max_err(label, pred):
    return float(np.abs(label.ravel() - pred.ravel()).max())


CUSTOM = {"abs_sum_count": abs_sum_count, "max_err": max_err}
# MXNet's PearsonCorrelation(average='micro') never fills its global counters
# (get_global() is always 0.0); gluonjax returns the streaming value instead.
SKIP_GLOBAL = {"pearsonr_micro"}


def _make(spec, kwargs):
    if spec == ["acc", "ce", "top_k_acc"]:
        return mx.metric.create(["acc", "ce", mx.metric.TopKAccuracy(top_k=2)])
    if isinstance(spec, str) and spec.startswith("custom:"):
        return mx.metric.np(CUSTOM[spec[7:]], **kwargs)
    return mx.metric.create(spec, **kwargs)


def _batch(cid, k, n_labels, n_preds, wrap):
    labels = [_DATA[f"{cid}.b{k}.label{i}"] for i in range(n_labels)]
    preds = [_DATA[f"{cid}.b{k}.pred{i}"] for i in range(n_preds)]
    return [wrap(a) for a in labels], [wrap(a) for a in preds]


@pytest.mark.parametrize("wrap", [mx.nd.array, np.asarray], ids=["ndarray", "numpy"])
@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_metric_matches_mxnet(case, wrap):
    metric = _make(case["spec"], case["kwargs"])
    got = []
    for k, (n_labels, n_preds) in enumerate(case["batches"]):
        metric.update(*_batch(case["id"], k, n_labels, n_preds, wrap))
        if k == 1:
            got.append([metric.get()[1], metric.get_global()[1]])
            metric.reset_local()
    got.append([metric.get()[1], metric.get_global()[1]])
    assert metric.get()[0] == case["name"]
    for (g_local, g_global), (w_local, w_global) in zip(got, case["results"], strict=True):
        np.testing.assert_allclose(g_local, w_local, rtol=1e-5, atol=1e-7)
        if case["id"] not in SKIP_GLOBAL:
            np.testing.assert_allclose(g_global, w_global, rtol=1e-5, atol=1e-7)


# ----------------------------------------------------------------------------- NumPy references
def test_accuracy_single_arrays_and_nan():
    acc = mx.metric.Accuracy()
    assert math.isnan(acc.get()[1])
    acc.update(mx.nd.array([0, 2, 1]), mx.nd.array([[1, 0, 0], [0, 0, 1], [0, 0, 1.0]]))
    assert acc.get() == ("accuracy", 2 / 3)
    assert acc.num_inst == 3 and acc.sum_metric == 2
    acc.reset()
    assert acc.num_inst == 0 and acc.global_num_inst == 0


@pytest.mark.parametrize("top_k", [2, 3])
def test_topk_numpy(top_k):
    r = np.random.RandomState(5)
    pred, label = r.rand(20, 6), r.randint(0, 6, 20)
    m = mx.metric.TopKAccuracy(top_k=top_k)
    m.update([label], [pred])
    ref = np.mean([label[i] in np.argsort(-pred[i])[:top_k] for i in range(20)])
    assert m.get() == (f"top_k_accuracy_{top_k}", pytest.approx(ref))
    with pytest.raises(ValueError):
        mx.metric.TopKAccuracy(top_k=1)


@pytest.mark.parametrize("average", ["macro", "micro"])
def test_f1_mcc_numpy(average):
    r = np.random.RandomState(6)
    label = r.randint(0, 2, 30)
    pred = r.rand(30, 2)
    hard = pred.argmax(1)
    tp = np.sum((hard == 1) & (label == 1))
    fp = np.sum((hard == 1) & (label == 0))
    fn = np.sum((hard == 0) & (label == 1))
    tn = np.sum((hard == 0) & (label == 0))
    prec, rec = tp / (tp + fp), tp / (tp + fn)
    f1 = mx.metric.F1(average=average)
    mcc = mx.metric.MCC(average=average)
    for m in (f1, mcc):
        m.update([mx.nd.array(label)], [mx.nd.array(pred)])
    assert f1.get()[1] == pytest.approx(2 * prec * rec / (prec + rec))
    ref = (tp * tn - fp * fn) / np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    assert mcc.get()[1] == pytest.approx(ref)
    with pytest.raises(ValueError):
        f1.update([mx.nd.array([0, 1, 2])], [mx.nd.ones((3, 2))])


def test_regression_and_perplexity_numpy():
    r = np.random.RandomState(7)
    lab, pred = r.randn(8), r.randn(8)
    for name, ref in [
        ("mae", np.abs(lab - pred).mean()),
        ("mse", ((lab - pred) ** 2).mean()),
        ("rmse", np.sqrt(((lab - pred) ** 2).mean())),
    ]:
        m = mx.metric.create(name)
        m.update([lab], [pred])
        assert m.get() == (name, pytest.approx(ref))
    probs = r.dirichlet(np.ones(4), 10)
    y = r.randint(0, 4, 10)
    m = mx.metric.Perplexity(ignore_label=None)
    m.update([mx.nd.array(y)], [mx.nd.array(probs)])
    ref = np.exp(-np.log(probs[np.arange(10), y]).mean())
    assert m.get()[1] == pytest.approx(ref, rel=1e-5)
    corr = mx.metric.PearsonCorrelation(average="micro")
    a, b = r.randn(12), r.randn(12)
    corr.update([a[:5]], [b[:5]])
    corr.update([a[5:]], [b[5:]])
    assert corr.get()[1] == pytest.approx(np.corrcoef(a, b)[0, 1])


def test_create_register_composite_custom():
    assert isinstance(mx.metric.create("acc"), mx.metric.Accuracy)
    assert isinstance(mx.metric.create("NLL_loss"), mx.metric.NegativeLogLikelihood)
    assert isinstance(mx.metric.create('["top_k_acc", {"top_k": 2}]'), mx.metric.TopKAccuracy)
    comp = mx.metric.create(["acc", "mse"])
    assert isinstance(comp, mx.metric.CompositeEvalMetric) and len(comp.metrics) == 2
    assert isinstance(comp.get_metric(1), mx.metric.MSE)
    with pytest.raises(ValueError):
        comp.get_metric(5)
    with pytest.raises(ValueError):
        mx.metric.create("no_such_metric")
    custom = mx.metric.create(lambda label, pred: 1.0)
    assert custom.name == "custom(<lambda>)"

    @mx.metric.register
    class Zero(mx.metric.EvalMetric):
        def __init__(self, name="zero"):
            super().__init__(name)

        def update(self, labels, preds):
            self.sum_metric, self.num_inst = 0.0, 1

    m = mx.metric.create("zero")
    m.update(None, None)
    assert m.get_name_value() == [("zero", 0.0)]
    assert str(m) == "EvalMetric: {'zero': 0.0}"


def test_update_dict_and_extra_outputs():
    acc = mx.metric.Accuracy(output_names=["out"], label_names=["y"])
    acc.update_dict(
        {"y": mx.nd.array([1, 0]), "z": mx.nd.array([0, 0])},
        {"out": mx.nd.array([[0.1, 0.9], [0.2, 0.8]])},
    )
    assert acc.get()[1] == 0.5
    m = mx.metric.np(max_err, allow_extra_outputs=True)
    m.update([mx.nd.array([1.0])], [mx.nd.array([3.0]), mx.nd.array([9.0])])
    assert m.get() == ("max_err", 2.0)
    with pytest.raises(ValueError):
        mx.metric.np(max_err).update([mx.nd.array([1.0])], [mx.nd.ones(1), mx.nd.ones(1)])
