"""ONNX LSTM / GRU / RNN nodes as the fused ``RNN`` op (one layer each)."""

from __future__ import annotations

import numpy as np

from ... import symbol as S
from ._import import importer
from ._import_ops import _name

# ONNX's gate blocks in MXNet's (cuDNN's) order: LSTM i,o,f,c -> i,f,g,o; GRU z,r,h -> r,z,n
_ORDER = {"LSTM": [0, 2, 3, 1], "GRU": [1, 0, 2], "RNN": [0]}


def _gates(w, op_type, hidden):
    blocks = w.reshape(len(_ORDER[op_type]), hidden, *w.shape[1:])
    return blocks[_ORDER[op_type]].reshape(w.shape)


@importer("LSTM", "GRU", "RNN")
def recurrent(g, node):
    a = g.attrs(node)
    op_type = node.op_type
    hidden = int(a["hidden_size"])
    direction = a.get("direction", b"forward")
    direction = direction.decode() if isinstance(direction, bytes) else direction
    if direction not in ("forward", "bidirectional") or a.get("layout", 0):
        raise g.fail(
            f"direction {direction!r} or layout {a.get('layout', 0)} (MXNet's RNN runs "
            "forward or both ways on (T, N, C))"
        )
    if "clip" in a or a.get("input_forget", 0):
        raise g.fail("clip or input_forget")
    if op_type == "GRU" and not a.get("linear_before_reset", 0):
        raise g.fail("linear_before_reset=0 (MXNet's GRU applies the reset after the product)")
    mode = {"LSTM": "lstm", "GRU": "gru"}.get(op_type)
    acts = [x.decode() if isinstance(x, bytes) else x for x in a.get("activations", [])]
    if op_type == "RNN":
        kinds = set(acts or ["Tanh"])
        if kinds not in ({"Tanh"}, {"Relu"}):
            raise g.fail(f"activations {acts} (one of Tanh, Relu for every direction)")
        mode = "rnn_tanh" if kinds == {"Tanh"} else "rnn_relu"
    elif acts:
        raise g.fail(f"activations {acts} (MXNet's gates use the default ones)")
    if len(node.input) > 4 and node.input[4]:
        raise g.fail("sequence_lens")
    w = g.need_const(node.input[1], "W")
    r = g.need_const(node.input[2], "R")
    dirs = w.shape[0]
    gh = w.shape[1]
    b = (
        g.const(node.input[3])
        if len(node.input) > 3 and node.input[3]
        else np.zeros((dirs, 2 * gh), w.dtype)
    )
    if b is None:
        raise g.fail("B must be a constant (an initializer)")
    packed = []
    for d in range(dirs):
        packed += [
            _gates(w[d], op_type, hidden).reshape(-1),
            _gates(r[d], op_type, hidden).reshape(-1),
        ]
    for d in range(dirs):
        packed += [_gates(b[d, :gh], op_type, hidden), _gates(b[d, gh:], op_type, hidden)]
    params = np.concatenate(packed).astype(w.dtype)
    pname = f"{_name(node)}_parameters"
    g.consts[pname] = params
    x = g.sym(node.input[0])

    def state(i):
        if len(node.input) > i and node.input[i]:
            return g.sym(node.input[i])
        # zeros of (directions, batch, hidden), the batch axis following X's
        zeros = S.zeros(shape=(dirs, 1, hidden), dtype=str(w.dtype))
        return S.broadcast_like(zeros, x, lhs_axes=(1,), rhs_axes=(1,))

    ins = [x, g.sym(pname), state(5)]
    if mode == "lstm":
        ins.append(state(6))
    out = S.RNN(
        *ins,
        state_size=hidden,
        num_layers=1,
        bidirectional=dirs == 2,
        mode=mode,
        state_outputs=True,
        name=_name(node),
    )
    # MXNet's (T, N, D*H) output -> ONNX's Y (T, D, N, H)
    y = S.transpose(S.reshape(out[0], shape=(0, 0, dirs, hidden)), axes=(0, 2, 1, 3))
    outs = [y, out[1]]
    if mode == "lstm":
        outs.append(out[2])
    return outs[: len(node.output)]
