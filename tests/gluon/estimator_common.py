"""Shared data, nets and fixtures of the Estimator tests (tests/fixtures/estimator, made
by tools/make_estimator_fixtures.py from MXNet 1.9.1)."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import numpy as np

import gluonjax as mx
from gluonjax import gluon

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "estimator"
ARRAYS = np.load(FIX / "estimator.npz")
CASES = json.loads((FIX / "cases.json").read_text())
WEIGHTS = [ARRAYS[f"w{i}"] for i in range(4)]


def make_net(hybridize=False, weights=WEIGHTS):
    """The fixture's MLP (Dense(8, relu) -> Dense(3)) with the recorded weights."""
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(8, activation="relu", in_units=5), gluon.nn.Dense(3, in_units=8))
    net.initialize()
    for p, v in zip(net.collect_params().values(), weights):
        p.set_data(mx.nd.array(v))
    if hybridize:
        net.hybridize()
    return net


def loader(y="y_cls", batch_size=8):
    ds = gluon.data.ArrayDataset(ARRAYS["x"], ARRAYS[y])
    return gluon.data.DataLoader(ds, batch_size=batch_size)


def params(net):
    return [p.data().asnumpy() for p in net.collect_params().values()]


def capture(est):
    """Send the estimator's log to a buffer; returns the buffer."""
    buf = io.StringIO()
    est.logger.handlers[0].stream = buf
    return buf


def normalized(lines, tmp=None):
    """Log lines without timings (and with the checkpoint folder as <dir>)."""
    out = []
    for line in lines:
        line = re.sub(r"\d+\.\d+s", "<t>s", line)
        line = re.sub(r"total \d+s", "total <t>s", line)
        line = re.sub(r"/tmp/\w+/", "<dir>/", line) if tmp is None else line.replace(tmp, "<dir>")
        out.append(line)
    return out


class Scripted(mx.metric.EvalMetric):
    """A metric whose value in epoch k is ``values[k]`` (the MetricHandler resets the
    metrics at each epoch begin); the same class as the fixture script's."""

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
