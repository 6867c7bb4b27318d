"""Record real MXNet 1.9.1 results of ``gluon.rnn`` layers and cells for
``tests/gluon/rnn/``.

Run with the reference interpreter::

    .venv-mxnet/bin/python tools/make_rnn_fixtures.py [--out DIR]

It runs itself twice: the fused-op cases with MKLDNN on (MXNet 1.9.1's own CPU
RNN backward fails a shape check, "in_data.size() == num_inputs"; MKLDNN's RNN is
the CPU path that trains), everything else with ``MXNET_MKLDNN_ENABLED=0``.

Every case sets every parameter to random values, runs the forward under
``autograd.record`` and back-propagates random head gradients into the outputs
(and the returned states). MXNet's CPU RNN op cannot train an LSTM with a
projection, clip states or take sequence lengths (cuDNN only): for those cases
the reference is the equivalent stack of MXNet cells sharing the parameters
(``LSTMPCell``; ``unroll(valid_length=...)``; an LSTM cell that clips ``c``),
which is what the fused op computes on GPU.

Layout of DIR (default ``tests/fixtures/rnn``):

* ``cases.json``: ``{"layers": [...], "cells": [...]}``, one record per case
  (``id``, class, keyword arguments, shapes, ``params``: structural name ->
  shape, and for layers the display names);
* ``layers.npz`` / ``cells.npz``: ``<id>.x``, ``<id>.s<i>`` (given states),
  ``<id>.len`` (lengths), ``<id>.p.<structural name>``, ``<id>.out``,
  ``<id>.out_s<i>``, ``<id>.head``, ``<id>.head_s<i>``, ``<id>.g.x``,
  ``<id>.g.s<i>``, ``<id>.g.<structural name>``;
* ``lstm_bi.params``: a bidirectional 2-layer LSTM saved by MXNet
  (``save_parameters``) with ``lstm_bi.json`` (input and output);
* ``lm-symbol.json`` / ``lm-0000.params``: an Embedding + LSTM + Dense model
  exported by MXNet (hybridized, so its graph has ``_rnn_param_concat`` and
  ``RNN`` nodes), with ``lm_io.npz`` (an input and MXNet's output).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "rnn"
SEED = 20151

# id, class, kwargs, (T, N, C), give states, lengths, reference
LAYERS = [
    ("relu_1", "RNN", dict(hidden_size=3, activation="relu"), (4, 2, 3), False, None, "op"),
    (
        "tanh_2bi_ntc",
        "RNN",
        dict(hidden_size=3, num_layers=2, activation="tanh", bidirectional=True, layout="NTC"),
        (4, 2, 3),
        True,
        None,
        "op",
    ),
    ("lstm_1", "LSTM", dict(hidden_size=4), (5, 2, 3), True, None, "op"),
    (
        "lstm_2bi",
        "LSTM",
        dict(hidden_size=3, num_layers=2, bidirectional=True),
        (4, 3, 2),
        True,
        None,
        "op",
    ),
    (
        "lstm_2_ntc",
        "LSTM",
        dict(hidden_size=3, num_layers=2, layout="NTC"),
        (4, 2, 3),
        False,
        None,
        "op",
    ),
    ("gru_1_ntc", "GRU", dict(hidden_size=4, layout="NTC"), (5, 2, 3), True, None, "op"),
    (
        "gru_2bi",
        "GRU",
        dict(hidden_size=3, num_layers=2, bidirectional=True),
        (4, 2, 3),
        True,
        None,
        "op",
    ),
    (
        "lstmp_2bi",
        "LSTM",
        dict(hidden_size=4, projection_size=2, num_layers=2, bidirectional=True),
        (4, 2, 3),
        True,
        None,
        "cells",
    ),
    (
        "lstm_len_2bi_ntc",
        "LSTM",
        dict(
            hidden_size=3, num_layers=2, bidirectional=True, layout="NTC", use_sequence_length=True
        ),
        (5, 3, 2),
        True,
        [5, 2, 3],
        "cells",
    ),
    (
        "gru_len_1",
        "GRU",
        dict(hidden_size=3, use_sequence_length=True),
        (4, 3, 2),
        True,
        [1, 4, 2],
        "cells",
    ),
    (
        "rnn_len_1bi",
        "RNN",
        dict(hidden_size=3, activation="tanh", bidirectional=True, use_sequence_length=True),
        (4, 2, 2),
        True,
        [3, 4],
        "cells",
    ),
    (
        "lstm_clip",
        "LSTM",
        dict(hidden_size=3, state_clip_min=-0.3, state_clip_max=0.4),
        (6, 2, 3),
        True,
        None,
        "cells",
    ),
]

# id, builder name, kwargs, input shape, layout, lengths, merge_outputs, train mode
CELLS = [
    ("rnn_tanh", "RNNCell", dict(hidden_size=3), (2, 4, 3), "NTC", None, True, True),
    (
        "rnn_relu_tnc",
        "RNNCell",
        dict(hidden_size=3, activation="relu"),
        (4, 2, 3),
        "TNC",
        None,
        True,
        True,
    ),
    ("lstm", "LSTMCell", dict(hidden_size=3), (2, 4, 3), "NTC", None, True, True),
    ("lstm_len_tnc", "LSTMCell", dict(hidden_size=3), (4, 3, 2), "TNC", [4, 1, 2], True, True),
    ("gru", "GRUCell", dict(hidden_size=3), (2, 4, 3), "NTC", None, False, True),
    ("gru_len", "GRUCell", dict(hidden_size=3), (3, 4, 2), "NTC", [2, 4, 3], True, True),
    (
        "lstmp",
        "LSTMPCell",
        dict(hidden_size=4, projection_size=2),
        (2, 3, 3),
        "NTC",
        None,
        True,
        True,
    ),
    ("bi_lstm", "bidirectional", dict(hidden_size=3), (2, 4, 3), "NTC", None, True, True),
    (
        "bi_gru_len",
        "bidirectional_gru",
        dict(hidden_size=2),
        (3, 4, 2),
        "NTC",
        [4, 2, 3],
        True,
        True,
    ),
    ("stack", "stack", dict(), (2, 3, 3), "NTC", None, True, True),
    ("stack_len", "stack", dict(), (4, 2, 3), "TNC", [4, 2], True, True),
    ("dropout_stack", "dropout_stack", dict(), (2, 3, 3), "NTC", None, True, False),
    ("zoneout", "zoneout", dict(), (2, 3, 3), "NTC", None, True, False),
    ("vardrop", "vardrop", dict(), (2, 3, 3), "NTC", None, True, False),
    ("conv1d_gru", "conv1d_gru", dict(), (2, 3, 2, 5), "NTC", None, True, True),
    ("conv2d_lstm", "conv2d_lstm", dict(), (1, 2, 2, 4, 4), "NTC", None, True, True),
    ("conv3d_rnn", "conv3d_rnn", dict(), (1, 2, 1, 3, 3, 3), "NTC", None, True, True),
]


def _set_params(block, rng, scale=0.5):
    """Random values for every parameter; returns {structural name: array}."""
    import mxnet as mx

    out = {}
    for name, p in block._collect_params_with_prefix().items():
        v = rng.uniform(-scale, scale, p.shape).astype(np.float32)
        p.set_data(mx.nd.array(v))
        out[name] = v
    return out


def _clip_lstm_cell(lo, hi):
    from mxnet import gluon

    class ClipLSTMCell(gluon.rnn.LSTMCell):
        """An LSTM cell whose new cell state is clipped (cuDNN's LSTM state clipping)."""

        def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
            i2h = F.FullyConnected(inputs, i2h_weight, i2h_bias, num_hidden=4 * self._hidden_size)
            h2h = F.FullyConnected(
                states[0], h2h_weight, h2h_bias, num_hidden=4 * self._hidden_size
            )
            i, f, g, o = F.SliceChannel(i2h + h2h, num_outputs=4)
            c = F.sigmoid(f) * states[1] + F.sigmoid(i) * F.tanh(g)
            c = F.clip(c, lo, hi)
            h = F.sigmoid(o) * F.tanh(c)
            return h, [h, c]

    return ClipLSTMCell


def _cell_stack(cls, kwargs, prefix):
    """The stack of MXNet cells equivalent to a fused layer (sharing parameter names)."""
    from mxnet import gluon

    h, layers = kwargs["hidden_size"], kwargs.get("num_layers", 1)
    bi = kwargs.get("bidirectional", False)
    proj = kwargs.get("projection_size")

    def cell(p):
        if cls == "LSTM" and proj:
            return gluon.contrib.rnn.LSTMPCell(h, projection_size=proj, prefix=p)
        if cls == "LSTM" and kwargs.get("state_clip_min") is not None:
            return _clip_lstm_cell(kwargs["state_clip_min"], kwargs["state_clip_max"])(h, prefix=p)
        if cls == "LSTM":
            return gluon.rnn.LSTMCell(h, prefix=p)
        if cls == "GRU":
            return gluon.rnn.GRUCell(h, prefix=p)
        return gluon.rnn.RNNCell(h, activation=kwargs.get("activation", "relu"), prefix=p)

    stack = gluon.rnn.HybridSequentialRNNCell(prefix=prefix)
    with stack.name_scope():
        for i in range(layers):
            if bi:
                stack.add(gluon.rnn.BidirectionalCell(cell(f"l{i}_"), cell(f"r{i}_")))
            else:
                stack.add(cell(f"l{i}_"))
    return stack


def _fused_states(stack_states, n_state):
    """The cells' per-layer states ([h0, c0, h1, c1...]) as the fused layer's (L*D, N, H)."""
    import mxnet as mx

    return [mx.nd.stack(*stack_states[k::n_state], axis=0) for k in range(n_state)]


def layer_case(rec, rng, arrays):
    import mxnet as mx
    from mxnet import autograd, gluon

    cid, cls, kwargs, (t, n, c), give_states, lengths, ref = rec
    # input_size given: MXNet's infer_shape mixes up a GRU's inputs with use_sequence_length
    layer = getattr(gluon.rnn, cls)(**kwargs, input_size=c, prefix=f"{cls.lower()}0_")
    layer.initialize()
    layout = kwargs.get("layout", "TNC")
    xshape = (t, n, c) if layout == "TNC" else (n, t, c)
    x = mx.nd.array(rng.standard_normal(xshape).astype(np.float32))
    states = [
        mx.nd.array(rng.standard_normal(i["shape"]).astype(np.float32) * 0.5)
        for i in layer.state_info(n)
    ]
    seq = mx.nd.array(lengths) if lengths is not None else None
    params = _set_params(layer, rng)
    record = {
        "id": cid,
        "cls": cls,
        "kwargs": kwargs,
        "states": give_states,
        "lengths": lengths,
        "reference": ref,
        "repr": repr(layer),
        "params": {k: list(p.shape) for k, p in layer._collect_params_with_prefix().items()},
        "names": {k: p.name for k, p in layer._collect_params_with_prefix().items()},
    }
    arrays[f"{cid}.x"] = x.asnumpy()
    if give_states:
        for i, s in enumerate(states):
            arrays[f"{cid}.s{i}"] = s.asnumpy()
    if lengths is not None:
        arrays[f"{cid}.len"] = np.asarray(lengths, np.float32)
    for k, v in params.items():
        arrays[f"{cid}.p.{k}"] = v
    x.attach_grad()
    for s in states:
        s.attach_grad()
    if ref == "op":
        with autograd.record():
            res = layer(x, states) if give_states else layer(x)
    else:
        stack = _cell_stack(cls, kwargs, layer.prefix)
        stack.initialize()
        sp = stack.collect_params()
        for k, p in layer._collect_params_with_prefix().items():
            sp[p.name].set_data(mx.nd.array(params[k]))
        with autograd.record():
            cell_states = []  # per cell: [h, c] of layer 0 (l, r), then layer 1...
            for i in range(states[0].shape[0]):
                cell_states.extend(s[i] for s in states)
            # time-major for the cells (MXNet 1.9.1's stacked BidirectionalCell mixes up NTC
            # shapes with valid_length)
            xt = x if layout == "TNC" else mx.nd.swapaxes(x, 0, 1)
            out, st = stack.unroll(
                t, xt, begin_state=cell_states, layout="TNC", merge_outputs=True, valid_length=seq
            )
            out = out if layout == "TNC" else mx.nd.swapaxes(out, 0, 1)
            res = (out, _fused_states(st, len(states)))
    outs = [res[0], *res[1]] if give_states else [res]
    heads = [mx.nd.array(rng.standard_normal(o.shape).astype(np.float32)) for o in outs]
    autograd.backward(outs, heads)
    arrays[f"{cid}.out"] = outs[0].asnumpy()
    arrays[f"{cid}.head"] = heads[0].asnumpy()
    for i, (o, h) in enumerate(zip(outs[1:], heads[1:])):
        arrays[f"{cid}.out_s{i}"] = o.asnumpy()
        arrays[f"{cid}.head_s{i}"] = h.asnumpy()
    arrays[f"{cid}.g.x"] = x.grad.asnumpy()
    if give_states:
        for i, s in enumerate(states):
            arrays[f"{cid}.g.s{i}"] = s.grad.asnumpy()
    if ref == "op":
        grads = {k: p.grad().asnumpy() for k, p in layer._collect_params_with_prefix().items()}
    else:
        by_name = {p.name: p for p in stack.collect_params().values()}
        grads = {
            k: by_name[p.name].grad().asnumpy()
            for k, p in layer._collect_params_with_prefix().items()
        }
    for k, g in grads.items():
        arrays[f"{cid}.g.{k}"] = g
    return record


def build_cell(kind, kwargs):
    """The MXNet cell of a cells case (the tests build the same with gluonjax)."""
    from mxnet import gluon

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


def cell_case(rec, rng, arrays):
    import mxnet as mx
    from mxnet import autograd

    cid, kind, kwargs, shape, layout, lengths, merge, train = rec
    cell = build_cell(kind, kwargs)
    cell.initialize()
    x = mx.nd.array(rng.standard_normal(shape).astype(np.float32))
    t = shape[layout.find("T")]
    n = shape[layout.find("N")]
    with autograd.pause():
        cell.unroll(t, x, layout=layout, merge_outputs=True)  # finishes deferred shapes
    params = _set_params(cell, rng)
    states = [
        mx.nd.array(rng.standard_normal(i["shape"]).astype(np.float32) * 0.5)
        for i in cell.state_info(n)
    ]
    seq = mx.nd.array(lengths) if lengths is not None else None
    x.attach_grad()
    for s in states:
        s.attach_grad()
    with autograd.record(train_mode=train):
        out, st = cell.unroll(
            t, x, begin_state=states, layout=layout, merge_outputs=merge, valid_length=seq
        )
        if not merge:
            out = mx.nd.stack(*out, axis=layout.find("T"))
    outs = [out, *st]
    heads = [mx.nd.array(rng.standard_normal(o.shape).astype(np.float32)) for o in outs]
    autograd.backward(outs, heads)
    arrays[f"{cid}.x"] = x.asnumpy()
    for i, s in enumerate(states):
        arrays[f"{cid}.s{i}"] = s.asnumpy()
        arrays[f"{cid}.g.s{i}"] = s.grad.asnumpy()
    if lengths is not None:
        arrays[f"{cid}.len"] = np.asarray(lengths, np.float32)
    for k, v in params.items():
        arrays[f"{cid}.p.{k}"] = v
    arrays[f"{cid}.out"] = out.asnumpy()
    arrays[f"{cid}.head"] = heads[0].asnumpy()
    for i, (o, h) in enumerate(zip(st, heads[1:])):
        arrays[f"{cid}.out_s{i}"] = o.asnumpy()
        arrays[f"{cid}.head_s{i}"] = h.asnumpy()
    arrays[f"{cid}.g.x"] = x.grad.asnumpy()
    for k, p in cell._collect_params_with_prefix().items():
        arrays[f"{cid}.g.{k}"] = p.grad().asnumpy()
    return {
        "id": cid,
        "kind": kind,
        "kwargs": kwargs,
        "layout": layout,
        "lengths": lengths,
        "merge": merge,
        "train": train,
        "repr": repr(cell),
        "params": {k: list(p.shape) for k, p in cell._collect_params_with_prefix().items()},
    }


def saved_layer(out, rng):
    """A 2-layer bidirectional LSTM's .params file as MXNet writes it, with its output."""
    import mxnet as mx
    from mxnet import gluon

    layer = gluon.rnn.LSTM(3, num_layers=2, bidirectional=True, input_size=2)
    layer.initialize(mx.init.Uniform(0.5))
    x = rng.standard_normal((4, 2, 2)).astype(np.float32)
    y = layer(mx.nd.array(x)).asnumpy()
    layer.save_parameters(str(out / "lstm_bi.params"))
    (out / "lstm_bi.json").write_text(json.dumps({"x": x.tolist(), "y": y.tolist()}))


def exported_lm(out, rng):
    """Embedding + 2-layer LSTM + Dense, hybridized and exported by MXNet."""
    import mxnet as mx
    from mxnet import gluon

    net = gluon.nn.HybridSequential()
    with net.name_scope():
        net.add(gluon.nn.Embedding(20, 4))
        net.add(gluon.rnn.LSTM(5, num_layers=2, layout="NTC", input_size=4))
        net.add(gluon.nn.Dense(20, flatten=False))
    net.initialize(mx.init.Uniform(0.3))
    net.hybridize()
    x = rng.integers(0, 20, (2, 6)).astype(np.float32)
    y = net(mx.nd.array(x)).asnumpy()
    net.export(str(out / "lm"), epoch=0)
    np.savez(out / "lm_io.npz", x=x, y=y)


def _part(part, out):
    import mxnet as mx

    mx.random.seed(SEED)
    rng = np.random.default_rng(SEED + (part == "cells"))
    records, arrays = [], {}
    if part == "op":
        for rec in LAYERS:
            if rec[-1] == "op":
                records.append(layer_case(rec, rng, arrays))
        saved_layer(out, rng)
        exported_lm(out, rng)
    else:
        for rec in LAYERS:
            if rec[-1] != "op":
                records.append(layer_case(rec, rng, arrays))
        for rec in CELLS:
            records.append(cell_case(rec, rng, arrays))
    np.savez_compressed(out / f"part_{part}.npz", **arrays)
    (out / f"part_{part}.json").write_text(json.dumps(records))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--part", choices=("op", "cells"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.part:
        return _part(args.part, args.out)
    for part, mkldnn in (("op", "1"), ("cells", "0")):
        env = dict(os.environ, MXNET_MKLDNN_ENABLED=mkldnn)
        cmd = [sys.executable, __file__, "--out", str(args.out), "--part", part]
        subprocess.run(cmd, env=env, check=True, stderr=subprocess.DEVNULL)
    records = {"layers": [], "cells": []}
    layers, cells = {}, {}
    for part in ("op", "cells"):
        recs = json.loads((args.out / f"part_{part}.json").read_text())
        with np.load(args.out / f"part_{part}.npz") as f:
            data = {k: f[k] for k in f.files}
        for r in recs:
            kind = "layers" if "cls" in r else "cells"
            records[kind].append(r)
            pre = r["id"] + "."
            (layers if kind == "layers" else cells).update(
                {k: v for k, v in data.items() if k.startswith(pre)}
            )
        (args.out / f"part_{part}.json").unlink()
        (args.out / f"part_{part}.npz").unlink()
    np.savez_compressed(args.out / "layers.npz", **layers)
    np.savez_compressed(args.out / "cells.npz", **cells)
    (args.out / "cases.json").write_text(json.dumps(records, indent=1) + "\n")
    print(f"wrote {len(records['layers'])} layer and {len(records['cells'])} cell cases")


if __name__ == "__main__":
    main()
