"""Record MXNet 1.9.1's ``gluon.contrib.estimator`` runs for ``tests/gluon/test_estimator.py``.

Run with the reference interpreter::

    MXNET_MKLDNN_ENABLED=0 .venv-mxnet/bin/python tools/make_estimator_fixtures.py [--out DIR]

Each case builds a two-layer MLP with seeded weights, fits it with an Estimator on
seeded data (DataLoader, batch size 8, no shuffling) and records the parameters after
``fit``, the estimator's log lines and the files a CheckpointHandler left.

Layout of DIR (default ``tests/fixtures/estimator``): ``estimator.npz`` with ``x``,
``y_cls``, ``y_reg``, ``w<i>`` (initial parameters in ``collect_params()`` order) and
``<case>.p<i>`` (parameters after fit), and ``cases.json``: per case its log lines and
the sorted checkpoint file names.
"""

from __future__ import annotations

import argparse
import io
import json
import logging
import os
import tempfile
from pathlib import Path

import mxnet as mx
import numpy as np
from mxnet import gluon
from mxnet.gluon.contrib.estimator import CheckpointHandler, EarlyStoppingHandler, Estimator

OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "estimator"


def data():
    rng = np.random.RandomState(0)
    x = rng.randn(40, 5).astype("float32")
    y_cls = rng.randint(0, 3, 40).astype("float32")
    y_reg = rng.randn(40, 3).astype("float32")
    rs = np.random.RandomState(1)
    w = [(rs.randn(*s) * 0.3).astype("float32") for s in [(8, 5), (8,), (3, 8), (3,)]]
    return x, y_cls, y_reg, w


def make_net(w):
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(8, activation="relu", in_units=5), gluon.nn.Dense(3, in_units=8))
    net.initialize()
    for p, v in zip(net.collect_params().values(), w):
        p.set_data(mx.nd.array(v))
    return net


def loader(x, y):
    return gluon.data.DataLoader(gluon.data.ArrayDataset(x, y), batch_size=8)


def run(case, x, y_cls, y_reg, w, tmp):
    net = make_net(w)
    if case == "adam_cls":
        trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.01})
        est = Estimator(net, gluon.loss.SoftmaxCrossEntropyLoss(), trainer=trainer)
        fit = dict(train_data=loader(x, y_cls), val_data=loader(x, y_cls), epochs=3)
    elif case == "sgd_reg_batches":
        trainer = gluon.Trainer(
            net.collect_params(), "sgd", {"learning_rate": 0.05, "momentum": 0.9}
        )
        est = Estimator(net, gluon.loss.L2Loss(), train_metrics=mx.metric.MAE(), trainer=trainer)
        ckpt = CheckpointHandler(
            tmp, model_prefix="reg", epoch_period=None, batch_period=3, max_checkpoints=2
        )
        fit = dict(train_data=loader(x, y_reg), batches=11, event_handlers=[ckpt])
    elif case == "early_stop":
        trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 2.0})
        est = Estimator(net, gluon.loss.L2Loss(), trainer=trainer)
        stop = EarlyStoppingHandler(monitor=est.train_metrics[0], patience=2, mode="max")
        fit = dict(train_data=loader(x, y_reg), epochs=8, event_handlers=[stop])
    buf = io.StringIO()
    est.logger.handlers[0].stream = buf
    est.fit(**fit)
    files = sorted(os.listdir(tmp))
    lines = buf.getvalue().splitlines()
    return [p.data().asnumpy() for p in net.collect_params().values()], lines, files


class Scripted(mx.metric.EvalMetric):
    """A metric whose value at epoch k is ``values[k]`` (k counts the resets that the
    MetricHandler does at each epoch begin)."""

    def __init__(self, name, values):
        self.values = values
        super().__init__(name)
        self.epoch = -1

    def reset(self):
        self.epoch = getattr(self, "epoch", -2) + 1
        self.num_inst, self.sum_metric = 1, 0.0

    def update(self, labels, preds):
        pass

    def get(self):
        return self.name, self.values[min(max(self.epoch, 0), len(self.values) - 1)]


# (name, metric name, values, EarlyStoppingHandler keyword arguments)
EARLY = [
    (
        "min_patience2",
        "loss",
        [5, 4, 4.5, 3, 3.2, 3.1, 3.05, 2, 2, 2],
        dict(patience=2, mode="min"),
    ),
    ("max_patience0", "score", [0.1, 0.2, 0.2, 0.5, 0.6, 0.7], dict(patience=0, mode="max")),
    (
        "min_delta",
        "loss",
        [5, 4.8, 4.0, 3.8, 3.7, 3.6],
        dict(patience=1, mode="min", min_delta=0.5),
    ),
    (
        "baseline",
        "score",
        [0.3, 0.4, 0.6, 0.6, 0.65, 0.9],
        dict(patience=1, mode="max", baseline=0.5),
    ),
    ("auto_accuracy", "accuracy", [0.5, 0.4, 0.3, 0.2, 0.1], dict(patience=1, mode="auto")),
]


def early(x, y_reg, w):
    out = {}
    for case, name, values, kwargs in EARLY:
        net = make_net(w)
        metric = Scripted(name, values)
        trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01})
        est = Estimator(net, gluon.loss.L2Loss(), train_metrics=metric, trainer=trainer)
        stop = EarlyStoppingHandler(monitor=metric, **kwargs)
        est.logger.handlers[0].stream = io.StringIO()
        est.fit(loader(x, y_reg), epochs=10, event_handlers=[stop])
        out[case] = {"stopped_epoch": stop.stopped_epoch, "current_epoch": stop.current_epoch}
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(OUT))
    out = Path(ap.parse_args().out)
    out.mkdir(parents=True, exist_ok=True)
    x, y_cls, y_reg, w = data()
    arrays = {"x": x, "y_cls": y_cls, "y_reg": y_reg}
    arrays.update({f"w{i}": v for i, v in enumerate(w)})
    cases = {}
    for case in ("adam_cls", "sgd_reg_batches", "early_stop"):
        with tempfile.TemporaryDirectory() as tmp:
            params, lines, files = run(case, x, y_cls, y_reg, w, tmp)
        arrays.update({f"{case}.p{i}": v for i, v in enumerate(params)})
        cases[case] = {"log": lines, "files": files}
    cases["early_stopping"] = early(x, y_reg, w)
    np.savez(out / "estimator.npz", **arrays)
    (out / "cases.json").write_text(json.dumps(cases, indent=1) + "\n")


if __name__ == "__main__":
    logging.basicConfig()
    main()
