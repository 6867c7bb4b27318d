"""The fused ``RNN`` op (rnn_relu, rnn_tanh, lstm, gru) as ONNX RNN / LSTM / GRU nodes."""

from __future__ import annotations

import numpy as np

from ._table import converter

_GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}
# MXNet's (cuDNN's) gate blocks in ONNX's order: LSTM i,f,g,o -> i,o,f,c; GRU r,z,n -> z,r,h
_ORDER = {"rnn_relu": [0], "rnn_tanh": [0], "lstm": [0, 3, 1, 2], "gru": [1, 0, 2]}
_OP = {"rnn_relu": "RNN", "rnn_tanh": "RNN", "lstm": "LSTM", "gru": "GRU"}


def _gates(w, mode, hidden):
    g = _GATES[mode]
    blocks = w.reshape(g, hidden, *w.shape[1:])
    return blocks[_ORDER[mode]].reshape(w.shape)


@converter("RNN")
def rnn(cx, node):
    from .._ops.defs.rnn_scan import unpack

    a = node.attrs
    mode = a["mode"]
    if a["projection_size"] or a["lstm_state_clip_min"] is not None or a["use_sequence_length"]:
        raise cx.unsupported("projection_size, state clipping or sequence lengths")
    packed = cx.param(node.inputs[1])
    if packed is None:
        raise cx.unsupported("parameters that are not constants of the graph")
    seq, batch, width = node.in_shapes[0]
    hidden, layers = a["state_size"], a["num_layers"]
    dirs = 2 if a["bidirectional"] else 1
    dtype = np.dtype(node.in_dtypes[0])
    weights = unpack(
        np.asarray(packed, dtype), mode, layers, width, hidden, a["bidirectional"], None
    )
    weights = {k: np.asarray(v) for k, v in weights.items()}
    extra = {"hidden_size": hidden, "direction": "bidirectional" if dirs == 2 else "forward"}
    if mode == "gru":
        extra["linear_before_reset"] = 1
    if _OP[mode] == "RNN":
        extra["activations"] = ["Relu" if mode == "rnn_relu" else "Tanh"] * dirs
    x, finals_h, finals_c = node.inputs[0], [], []
    for layer in range(layers):
        tags = "lr"[:dirs]
        w = np.stack([_gates(weights[f"{t}{layer}_i2h_weight"], mode, hidden) for t in tags])
        r = np.stack([_gates(weights[f"{t}{layer}_h2h_weight"], mode, hidden) for t in tags])
        b = np.stack(
            [
                np.concatenate(
                    [
                        _gates(weights[f"{t}{layer}_i2h_bias"], mode, hidden),
                        _gates(weights[f"{t}{layer}_h2h_bias"], mode, hidden),
                    ]
                )
                for t in tags
            ]
        )
        span = [
            cx.ints([layer * dirs], "starts"),
            cx.ints([(layer + 1) * dirs], "ends"),
            cx.ints([0], "axes"),
        ]
        h0 = cx.add("Slice", [node.inputs[2], *span])
        ins = [x, cx.const(w, hint="W"), cx.const(r, hint="R"), cx.const(b, hint="B"), "", h0]
        if mode == "lstm":
            ins.append(cx.add("Slice", [node.inputs[3], *span]))
        n_out = 3 if mode == "lstm" else 2
        outs = cx.add(_OP[mode], ins, n_out=n_out, **extra)
        y = cx.add("Transpose", [outs[0]], perm=[0, 2, 1, 3])  # (T, D, N, H) -> (T, N, D, H)
        out = node.outputs[0] if layer == layers - 1 else None
        x = cx.add("Reshape", [y, cx.ints([0, 0, dirs * hidden], "shape")], out)
        finals_h.append(outs[1])
        if mode == "lstm":
            finals_c.append(outs[2])
    if len(node.outputs) > 1:
        cx.add("Concat", finals_h, node.outputs[1:2], axis=0)
    if len(node.outputs) > 2:
        cx.add("Concat", finals_c, node.outputs[2:3], axis=0)
