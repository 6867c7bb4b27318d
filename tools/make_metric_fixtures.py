"""Record real MXNet 1.9.1 ``mx.metric`` results for ``tests/test_metric.py``.

Run with the reference interpreter::

    .venv-mxnet/bin/python tools/make_metric_fixtures.py [--out FILE]

Each case creates ``mx.metric.create(spec, **kwargs)``, updates it with two
batches, records ``get()`` / ``get_global()``, calls ``reset_local()``, updates
with a third batch and records both again. Output (default
``tests/fixtures/metrics.npz``): ``__cases__`` (JSON list of ``{"id", "spec",
"kwargs", "batches": [[n_labels, n_preds], ...], "results": [[get, get_global],
[get, get_global]]}``) and arrays ``<id>.b<k>.label<i>`` / ``<id>.b<k>.pred<i>``.
A spec ``"custom:<name>"`` names one of the ``CUSTOM`` functions below (the test
defines the same ones).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

DEFAULT_OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "metrics.npz"


def abs_sum_count(label, pred):
    """(sum |label - pred|, count): a tuple-returning feval."""
    return float(np.abs(label.ravel() - pred.ravel()).sum()), label.size


def max_err(label, pred):
    """max |label - pred|: a scalar feval."""
    return float(np.abs(label.ravel() - pred.ravel()).max())


CUSTOM = {"abs_sum_count": abs_sum_count, "max_err": max_err}


def _cases():
    r = np.random.RandomState(0)
    f32 = lambda a: np.asarray(a, np.float32)  # noqa: E731

    def probs(*s):
        e = np.exp(r.randn(*s) * 1.5)
        return f32(e / e.sum(-1, keepdims=True))

    ints = lambda k, *s: f32(r.randint(0, k, s))  # noqa: E731
    reals = lambda *s: f32(r.randn(*s))  # noqa: E731

    def batches(make, n=3):
        return [make() for _ in range(n)]

    c = []
    add = lambda cid, spec, kw, b: c.append((cid, spec, kw, b))  # noqa: E731
    cls3 = lambda: ([ints(3, 6)], [probs(6, 3)])  # noqa: E731
    add("acc", "acc", {}, batches(cls3))
    add(
        "acc_two_outputs",
        "accuracy",
        {},
        batches(lambda: ([ints(3, 6), ints(4, 5)], [probs(6, 3), probs(5, 4)])),
    )
    add(
        "acc_axis",
        "acc",
        {"axis": 1},
        batches(lambda: ([ints(3, 2, 4)], [probs(2, 4, 3).transpose(0, 2, 1).copy()])),
    )
    add("acc_same_shape", "acc", {}, batches(lambda: ([ints(3, 7)], [ints(3, 7)])))
    add("topk2", "top_k_accuracy", {"top_k": 2}, batches(lambda: ([ints(5, 8)], [probs(8, 5)])))
    add("topk3", "top_k_acc", {"top_k": 3}, batches(lambda: ([ints(5, 8)], [probs(8, 5)])))
    binary = lambda: ([ints(2, 10)], [probs(10, 2)])  # noqa: E731
    add("f1", "f1", {}, batches(binary))
    add("f1_micro", "f1", {"average": "micro"}, batches(binary))
    add("mcc", "mcc", {}, batches(binary))
    add("mcc_micro", "mcc", {"average": "micro"}, batches(binary))
    add("pcc", "pcc", {}, batches(lambda: ([ints(4, 12)], [probs(12, 4)])))
    reg = lambda: ([reals(5), reals(4, 2)], [reals(5), reals(4, 2)])  # noqa: E731
    add("mae", "mae", {}, batches(reg))
    add("mse", "mse", {}, batches(reg))
    add("rmse", "rmse", {}, batches(reg))
    add("mae_1d_vs_2d", "mae", {}, batches(lambda: ([reals(6)], [reals(6, 1)])))
    add("ce", "ce", {}, batches(lambda: ([ints(4, 6)], [probs(6, 4)])))
    add("ce_eps", "crossentropy", {"eps": 1e-3}, batches(lambda: ([ints(4, 6)], [probs(6, 4)])))
    add("nll", "nll_loss", {}, batches(lambda: ([ints(4, 6)], [probs(6, 4)])))
    add(
        "perplexity",
        "perplexity",
        {"ignore_label": None},
        batches(lambda: ([ints(5, 7)], [probs(7, 5)])),
    )
    add(
        "perplexity_ignore",
        "perplexity",
        {"ignore_label": 0},
        batches(lambda: ([ints(5, 7), ints(5, 3)], [probs(7, 5), probs(3, 5)])),
    )
    corr = lambda: ([reals(9)], [reals(9)])  # noqa: E731
    add("pearsonr", "pearsonr", {}, batches(corr))
    add("pearsonr_micro", "pearsoncorrelation", {"average": "micro"}, batches(corr))
    add("loss", "loss", {}, batches(lambda: ([], [reals(4), reals(2, 3)])))
    add(
        "composite",
        ["acc", "ce", "top_k_acc"],
        None,
        batches(lambda: ([ints(4, 6)], [probs(6, 4)])),
    )
    add("custom_tuple", "custom:abs_sum_count", {}, batches(reg))
    add("custom_scalar", "custom:max_err", {"name": "maxerr"}, batches(reg))
    return c


def _make(mx, spec, kwargs):
    if spec == ["acc", "ce", "top_k_acc"]:
        return mx.metric.create(["acc", "ce", mx.metric.TopKAccuracy(top_k=2)])
    if isinstance(spec, str) and spec.startswith("custom:"):
        return mx.metric.np(CUSTOM[spec[7:]], **kwargs)
    return mx.metric.create(spec, **kwargs)


def _value(v):
    if isinstance(v, list):
        return [float(x) for x in v]
    return float(v)


def main():
    import mxnet as mx

    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(DEFAULT_OUT))
    out_path = Path(ap.parse_args().out)
    arrays, meta = {}, []
    for cid, spec, kwargs, batch_list in _cases():
        metric = _make(mx, spec, kwargs or {})
        results, shapes = [], []
        for k, (labels, preds) in enumerate(batch_list):
            for i, a in enumerate(labels):
                arrays[f"{cid}.b{k}.label{i}"] = a
            for i, a in enumerate(preds):
                arrays[f"{cid}.b{k}.pred{i}"] = a
            shapes.append([len(labels), len(preds)])
            metric.update([mx.nd.array(a) for a in labels], [mx.nd.array(a) for a in preds])
            if k == 1:
                results.append([_value(metric.get()[1]), _value(metric.get_global()[1])])
                metric.reset_local()
        results.append([_value(metric.get()[1]), _value(metric.get_global()[1])])
        meta.append(
            {
                "id": cid,
                "spec": spec,
                "kwargs": kwargs or {},
                "name": metric.get()[0],
                "batches": shapes,
                "results": results,
            }
        )
    arrays["__cases__"] = np.array(json.dumps(meta))
    out_path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(out_path, **arrays)
    print(f"wrote {len(meta)} cases to {out_path}")


if __name__ == "__main__":
    main()
