"""The ``mx.rnn`` cell graphs that ``make_sym_rnn_fixtures.py`` runs in MXNet 1.9.1 and
``tests/rnn/test_symbolic_rnn_cells.py`` rebuilds in gluonjax (the same code, given
either package as ``mx``).

Each builder returns ``(outputs, data_shapes)``: a grouped symbol of the unrolled
outputs (and states, where a case returns them) and the shapes of its data variables.
"""

from __future__ import annotations

N, T, C = 2, 3, 4


def _steps(mx, n=T):
    return [mx.sym.Variable(f"rnn_t{i}_data") for i in range(n)]


def _step_shapes(shape, n=T):
    return {f"rnn_t{i}_data": shape for i in range(n)}


def _group(mx, outputs, states=()):
    outs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
    flat = []
    for s in states:
        flat.extend(s if isinstance(s, (list, tuple)) else [s])
    return mx.sym.Group(outs + flat)


def residual_gru(mx):
    cell = mx.rnn.ResidualCell(mx.rnn.GRUCell(C, prefix="rnn_"))
    outputs, _ = cell.unroll(T, _steps(mx))
    return _group(mx, outputs), _step_shapes((N, C))


def residual_gru_merged(mx):
    cell = mx.rnn.ResidualCell(mx.rnn.GRUCell(C, prefix="rnn_"))
    outputs, states = cell.unroll(T, mx.sym.Variable("data"), merge_outputs=True)
    return _group(mx, outputs, states), {"data": (N, T, C)}


def bi_lstm_list(mx):
    cell = mx.rnn.BidirectionalCell(
        mx.rnn.LSTMCell(3, prefix="l_"), mx.rnn.LSTMCell(3, prefix="r_"), output_prefix="bi_"
    )
    outputs, states = cell.unroll(T, _steps(mx))
    return _group(mx, outputs, states), _step_shapes((N, C))


def bi_gru_merged_tnc(mx):
    cell = mx.rnn.BidirectionalCell(
        mx.rnn.GRUCell(3, prefix="l_"), mx.rnn.GRUCell(3, prefix="r_"), output_prefix="b_"
    )
    outputs, states = cell.unroll(T, mx.sym.Variable("data"), layout="TNC", merge_outputs=True)
    return _group(mx, outputs, states), {"data": (T, N, C)}


def residual_bi_gru(mx):
    cell = mx.rnn.ResidualCell(
        mx.rnn.BidirectionalCell(
            mx.rnn.GRUCell(C // 2, prefix="rnn_l_"), mx.rnn.GRUCell(C // 2, prefix="rnn_r_")
        )
    )
    outputs, _ = cell.unroll(T, _steps(mx), merge_outputs=False)
    return _group(mx, outputs), _step_shapes((N, C))


def zoneout_rnn(mx):
    cell = mx.rnn.ZoneoutCell(
        mx.rnn.RNNCell(C, prefix="rnn_"), zoneout_outputs=0.5, zoneout_states=0.5
    )
    outputs, states = cell.unroll(T, _steps(mx))
    return _group(mx, outputs, states), _step_shapes((N, C))


def stack_dropout_residual(mx):
    stack = mx.rnn.SequentialRNNCell()
    stack.add(mx.rnn.LSTMCell(C, prefix="s0_"))
    stack.add(mx.rnn.DropoutCell(0.5, prefix="d0_"))
    stack.add(mx.rnn.ResidualCell(mx.rnn.LSTMCell(C, prefix="s1_")))
    outputs, states = stack.unroll(T, mx.sym.Variable("data"), merge_outputs=True)
    return _group(mx, outputs, states), {"data": (N, T, C)}


def _fused(mx, name):
    return {
        "fused_lstm_2bi": lambda: mx.rnn.FusedRNNCell(
            3, num_layers=2, mode="lstm", bidirectional=True, get_next_state=True, prefix="f_"
        ),
        "fused_gru": lambda: mx.rnn.FusedRNNCell(
            3, num_layers=2, mode="gru", get_next_state=True, prefix="g_"
        ),
        "fused_rnn_relu_bi": lambda: mx.rnn.FusedRNNCell(
            2, mode="rnn_relu", bidirectional=True, prefix="r_"
        ),
    }[name]()


FUSED = ("fused_lstm_2bi", "fused_gru", "fused_rnn_relu_bi")


def fused_builder(name, layout):
    def build(mx):
        cell = _fused(mx, name)
        outputs, states = cell.unroll(T, mx.sym.Variable("data"), layout=layout, merge_outputs=True)
        shape = (N, T, C) if layout == "NTC" else (T, N, C)
        return _group(mx, outputs, states), {"data": shape}

    return build


def unfused_builder(name, layout):
    def build(mx):
        cell = _fused(mx, name).unfuse()
        outputs, _ = cell.unroll(T, mx.sym.Variable("data"), layout=layout, merge_outputs=True)
        shape = (N, T, C) if layout == "NTC" else (T, N, C)
        return _group(mx, outputs), {"data": shape}

    return build


def _conv(kind, **kw):
    def build(mx):
        shape = (N, 3, 5, 4)
        cls = {"rnn": mx.rnn.ConvRNNCell, "lstm": mx.rnn.ConvLSTMCell, "gru": mx.rnn.ConvGRUCell}
        cell = cls[kind](input_shape=shape, num_hidden=2, prefix="c_", **kw)
        outputs, states = cell.unroll(T, _steps(mx))
        return _group(mx, outputs, states), _step_shapes(shape)

    return build


CASES = {
    "residual_gru": residual_gru,
    "residual_gru_merged": residual_gru_merged,
    "bi_lstm_list": bi_lstm_list,
    "bi_gru_merged_tnc": bi_gru_merged_tnc,
    "residual_bi_gru": residual_bi_gru,
    "zoneout_rnn": zoneout_rnn,
    "stack_dropout_residual": stack_dropout_residual,
    "fused_lstm_2bi": fused_builder("fused_lstm_2bi", "NTC"),
    "fused_gru": fused_builder("fused_gru", "TNC"),
    "fused_rnn_relu_bi": fused_builder("fused_rnn_relu_bi", "NTC"),
    "unfused_lstm_2bi": unfused_builder("fused_lstm_2bi", "NTC"),
    "unfused_gru": unfused_builder("fused_gru", "TNC"),
    "conv_rnn": _conv("rnn"),
    "conv_lstm": _conv("lstm"),
    "conv_gru": _conv("gru"),
    "conv_lstm_tanh_valid": _conv("lstm", activation="tanh", i2h_pad=(0, 0), h2h_kernel=(3, 1)),
    "conv_gru_dilated": _conv("gru", i2h_kernel=(3, 3), i2h_dilate=(2, 1), i2h_pad=(2, 1)),
}

# FusedRNN initializer cases: (id, init kwargs, global initializer, packed size input C)
FUSED_INIT = {
    "lstm_2bi_const": (
        dict(num_hidden=3, num_layers=2, mode="lstm", bidirectional=True, forget_bias=2.0),
        "constant0.25",
        C,
    ),
    "gru_1_global": (
        dict(num_hidden=2, num_layers=1, mode="gru", bidirectional=False),
        "global",
        C,
    ),
}


def fused_init(mx, case):
    """``(initializer, global initializer)`` of a FUSED_INIT case."""
    kw, how, _ = FUSED_INIT[case]
    inner = mx.init.Constant(0.25) if how == "constant0.25" else None
    return mx.init.FusedRNN(inner, **kw), mx.init.Constant(0.5)
