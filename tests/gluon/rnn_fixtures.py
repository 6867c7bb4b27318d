"""Load the MXNet 1.9.1 RNN fixtures written by ``tools/make_rnn_fixtures.py`` and run
gluonjax on the same parameters and inputs."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import numpy as np

import gluonjax as mx
from gluonjax import autograd, gluon

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "rnn"
RTOL, ATOL = 1e-4, 1e-5


@cache
def records():
    return json.loads((FIXTURES / "cases.json").read_text())


@cache
def _npz(name):
    with np.load(FIXTURES / name) as f:
        return {k: f[k] for k in f.files}


def arrays(record, family):
    pre = record["id"] + "."
    data = _npz(f"{family}.npz")
    return {k[len(pre) :]: v for k, v in data.items() if k.startswith(pre)}


def set_params(block, a):
    for name, p in block._collect_params_with_prefix().items():
        p.set_data(mx.nd.array(a["p." + name]))


def run_and_grad(fn, block, a, n_states, train=True):
    """``fn(x, states, lengths) -> (out, [states])``; returns outputs and gradients."""
    x = mx.nd.array(a["x"])
    states = [mx.nd.array(a[f"s{i}"]) for i in range(n_states)]
    lengths = mx.nd.array(a["len"]) if "len" in a else None
    x.attach_grad()
    for s in states:
        s.attach_grad()
    with autograd.record(train_mode=train):
        out, st = fn(x, states, lengths)
        outs = [out, *st]
    heads = [mx.nd.array(a["head"])] + [mx.nd.array(a[f"head_s{i}"]) for i in range(len(st))]
    autograd.backward(outs, heads)
    res = {"out": out.asnumpy(), "g.x": x.grad.asnumpy()}
    for i, s in enumerate(st):
        res[f"out_s{i}"] = s.asnumpy()
    for i, s in enumerate(states):
        res[f"g.s{i}"] = s.grad.asnumpy()
    for name, p in block._collect_params_with_prefix().items():
        res["g." + name] = p.grad().asnumpy()
    return res


def check(res, a, what):
    for k, v in res.items():
        np.testing.assert_allclose(v, a[k], rtol=RTOL, atol=ATOL, err_msg=f"{what}: {k}")


def build_layer(record):
    cls = getattr(gluon.rnn, record["cls"])
    return cls(**record["kwargs"], prefix=f"{record['cls'].lower()}0_")


def build_cell(kind, kwargs):
    """The gluonjax cell of a cells case (as ``tools/make_rnn_fixtures.py`` builds it)."""
    rnn, contrib = gluon.rnn, gluon.contrib.rnn
    if kind in ("RNNCell", "LSTMCell", "GRUCell"):
        return getattr(rnn, kind)(**kwargs)
    if kind == "LSTMPCell":
        return contrib.LSTMPCell(**kwargs)
    if kind == "bidirectional":
        return rnn.BidirectionalCell(rnn.LSTMCell(3), rnn.LSTMCell(3))
    if kind == "bidirectional_gru":
        return rnn.BidirectionalCell(rnn.GRUCell(2), rnn.GRUCell(2))
    if kind == "stack":
        s = rnn.SequentialRNNCell()
        s.add(rnn.LSTMCell(3))
        s.add(rnn.ResidualCell(rnn.GRUCell(3)))
        s.add(rnn.RNNCell(2, activation="relu"))
        return s
    if kind == "dropout_stack":
        s = rnn.HybridSequentialRNNCell()
        s.add(rnn.GRUCell(3))
        s.add(rnn.DropoutCell(0.5))
        s.add(rnn.LSTMCell(2))
        return s
    if kind == "zoneout":
        return rnn.ZoneoutCell(rnn.LSTMCell(3), zoneout_outputs=0.5, zoneout_states=0.3)
    if kind == "vardrop":
        return contrib.VariationalDropoutCell(
            rnn.GRUCell(3), drop_inputs=0.3, drop_states=0.2, drop_outputs=0.4
        )
    if kind == "conv1d_gru":
        return contrib.Conv1DGRUCell((2, 5), 2, 3, 3, i2h_pad=1)
    if kind == "conv2d_lstm":
        return contrib.Conv2DLSTMCell((2, 4, 4), 2, 3, 3, i2h_pad=(1, 0))
    if kind == "conv3d_rnn":
        return contrib.Conv3DRNNCell((1, 3, 3, 3), 2, 2, 3, activation="relu")
    raise ValueError(kind)
