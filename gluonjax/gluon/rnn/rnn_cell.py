"""Recurrent cells (MXNet 1.x ``gluon.rnn.rnn_cell``): ``RNNCell``, ``LSTMCell``,
``GRUCell``, and (re-exported) the base classes and the cells made of cells."""

from __future__ import annotations

from ._base_cell import HybridRecurrentCell, ModifiedCellError, RecurrentCell
from ._sequence import (  # noqa: F401  (MXNet's helper names, imported by other libraries)
    _cells_begin_state,
    _cells_state_info,
    _format_sequence,
    _get_begin_state,
    _mask_sequence_variable_length,
    _reverse_sequences,
)
from ._wrappers import (
    BidirectionalCell,
    DropoutCell,
    HybridSequentialRNNCell,
    ModifierCell,
    ResidualCell,
    SequentialRNNCell,
    ZoneoutCell,
)

__all__ = [
    "RecurrentCell",
    "HybridRecurrentCell",
    "RNNCell",
    "LSTMCell",
    "GRUCell",
    "SequentialRNNCell",
    "HybridSequentialRNNCell",
    "DropoutCell",
    "ModifierCell",
    "ZoneoutCell",
    "ResidualCell",
    "BidirectionalCell",
    "ModifiedCellError",
]


class _GatedCell(HybridRecurrentCell):
    """A cell with ``i2h``/``h2h`` weights and biases of ``gates * hidden_size`` rows."""

    _auto_jit = False  # per-instance compiles cost more than eager steps of cached kernels
    _gates = 1
    _deferred_input = ("i2h_weight",)

    def __init__(
        self,
        hidden_size,
        i2h_weight_initializer,
        h2h_weight_initializer,
        i2h_bias_initializer,
        h2h_bias_initializer,
        input_size,
        prefix,
        params,
    ):
        super().__init__(prefix=prefix, params=params)
        self._hidden_size = hidden_size
        self._input_size = input_size
        rows = self._gates * hidden_size
        get = self.params.get
        self.i2h_weight = get(
            "i2h_weight",
            shape=(rows, input_size),
            init=i2h_weight_initializer,
            allow_deferred_init=True,
        )
        self.h2h_weight = get(
            "h2h_weight",
            shape=(rows, hidden_size),
            init=h2h_weight_initializer,
            allow_deferred_init=True,
        )
        self.i2h_bias = get(
            "i2h_bias", shape=(rows,), init=i2h_bias_initializer, allow_deferred_init=True
        )
        self.h2h_bias = get(
            "h2h_bias", shape=(rows,), init=h2h_bias_initializer, allow_deferred_init=True
        )

    def state_info(self, batch_size=0):
        return [{"shape": (batch_size, self._hidden_size), "__layout__": "NC"}]

    def __repr__(self):
        shape = self.i2h_weight.shape
        mapping = f"{shape[1] if shape[1] else None} -> {shape[0]}"
        act = f", {self._activation}" if isinstance(self, RNNCell) else ""
        return f"{type(self).__name__}({mapping}{act})"

    def _projections(self, F, inputs, h, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix = f"t{self._counter}_"
        n = self._hidden_size * self._gates
        i2h = F.FullyConnected(
            data=inputs, weight=i2h_weight, bias=i2h_bias, num_hidden=n, name=prefix + "i2h"
        )
        h2h = F.FullyConnected(
            data=h, weight=h2h_weight, bias=h2h_bias, num_hidden=n, name=prefix + "h2h"
        )
        return prefix, i2h, h2h


class RNNCell(_GatedCell):
    """Elman RNN cell: ``h' = activation(W_i x + b_i + W_h h + b_h)``.

    Parameters
    ----------
    hidden_size : int
    activation : str or Block, default 'tanh'
    i2h_weight_initializer, h2h_weight_initializer : Initializer or str
    i2h_bias_initializer, h2h_bias_initializer : Initializer or str, default 'zeros'
    input_size : int, default 0 (inferred at the first step)
    prefix : str, optional
    params : ParameterDict, optional

    Inputs: ``data`` (N, C) and ``states`` ``[h]`` (N, hidden). Outputs: ``h'`` and ``[h']``.

    Examples
    --------
    >>> import gluonjax as mx
    >>> cell = mx.gluon.rnn.RNNCell(4); cell.initialize()
    >>> out, states = cell(mx.nd.ones((2, 3)), cell.begin_state(batch_size=2))
    >>> out.shape
    (2, 4)
    """

    def __init__(
        self,
        hidden_size,
        activation="tanh",
        i2h_weight_initializer=None,
        h2h_weight_initializer=None,
        i2h_bias_initializer="zeros",
        h2h_bias_initializer="zeros",
        input_size=0,
        prefix=None,
        params=None,
    ):
        super().__init__(
            hidden_size,
            i2h_weight_initializer,
            h2h_weight_initializer,
            i2h_bias_initializer,
            h2h_bias_initializer,
            input_size,
            prefix,
            params,
        )
        self._activation = activation

    def _alias(self):
        return "rnn"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix, i2h, h2h = self._projections(
            F, inputs, states[0], i2h_weight, h2h_weight, i2h_bias, h2h_bias
        )
        summed = F.elemwise_add(i2h, h2h, name=prefix + "plus0")
        output = self._get_activation(F, summed, self._activation, name=prefix + "out")
        return output, [output]


class LSTMCell(_GatedCell):
    """Long short-term memory cell (gates ``i, f, g, o``).

    ``c' = sigmoid(f) c + sigmoid(i) tanh(g)``, ``h' = sigmoid(o) tanh(c')``
    (``activation`` / ``recurrent_activation`` replace tanh / sigmoid).

    Inputs: ``data`` (N, C), ``states`` ``[h, c]``. Outputs: ``h'`` and ``[h', c']``.

    Examples
    --------
    >>> import gluonjax as mx
    >>> cell = mx.gluon.rnn.LSTMCell(4); cell.initialize()
    >>> out, (h, c) = cell.unroll(3, mx.nd.ones((2, 3, 5)), merge_outputs=True)
    >>> out.shape, h.shape, c.shape
    ((2, 3, 4), (2, 4), (2, 4))
    """

    _gates = 4

    def __init__(
        self,
        hidden_size,
        i2h_weight_initializer=None,
        h2h_weight_initializer=None,
        i2h_bias_initializer="zeros",
        h2h_bias_initializer="zeros",
        input_size=0,
        prefix=None,
        params=None,
        activation="tanh",
        recurrent_activation="sigmoid",
    ):
        super().__init__(
            hidden_size,
            i2h_weight_initializer,
            h2h_weight_initializer,
            i2h_bias_initializer,
            h2h_bias_initializer,
            input_size,
            prefix,
            params,
        )
        self._activation = activation
        self._recurrent_activation = recurrent_activation

    def state_info(self, batch_size=0):
        info = {"shape": (batch_size, self._hidden_size), "__layout__": "NC"}
        return [dict(info), dict(info)]

    def _alias(self):
        return "lstm"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix, i2h, h2h = self._projections(
            F, inputs, states[0], i2h_weight, h2h_weight, i2h_bias, h2h_bias
        )
        gates = F.elemwise_add(i2h, h2h, name=prefix + "plus0")
        s = F.SliceChannel(gates, num_outputs=4, name=prefix + "slice")
        act, rec = self._activation, self._recurrent_activation
        in_gate = self._get_activation(F, s[0], rec, name=prefix + "i")
        forget_gate = self._get_activation(F, s[1], rec, name=prefix + "f")
        in_transform = self._get_activation(F, s[2], act, name=prefix + "c")
        out_gate = self._get_activation(F, s[3], rec, name=prefix + "o")
        next_c = F.elemwise_add(
            F.elemwise_mul(forget_gate, states[1], name=prefix + "mul0"),
            F.elemwise_mul(in_gate, in_transform, name=prefix + "mul1"),
            name=prefix + "state",
        )
        next_h = F.elemwise_mul(
            out_gate,
            F.Activation(next_c, act_type=act, name=prefix + "activation0"),
            name=prefix + "out",
        )
        return next_h, [next_h, next_c]


class GRUCell(_GatedCell):
    """Gated recurrent unit cell, cuDNN's variant (the reset gate multiplies
    ``W_hn h + b_hn``): gates ``r, z, n``; ``h' = (1 - z) n + z h``.

    Inputs: ``data`` (N, C), ``states`` ``[h]``. Outputs: ``h'`` and ``[h']``.
    """

    _gates = 3

    def __init__(
        self,
        hidden_size,
        i2h_weight_initializer=None,
        h2h_weight_initializer=None,
        i2h_bias_initializer="zeros",
        h2h_bias_initializer="zeros",
        input_size=0,
        prefix=None,
        params=None,
    ):
        super().__init__(
            hidden_size,
            i2h_weight_initializer,
            h2h_weight_initializer,
            i2h_bias_initializer,
            h2h_bias_initializer,
            input_size,
            prefix,
            params,
        )

    def _alias(self):
        return "gru"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prev_h = states[0]
        prefix, i2h, h2h = self._projections(
            F, inputs, prev_h, i2h_weight, h2h_weight, i2h_bias, h2h_bias
        )
        i2h_r, i2h_z, i2h = F.SliceChannel(i2h, num_outputs=3, name=prefix + "i2h_slice")
        h2h_r, h2h_z, h2h = F.SliceChannel(h2h, num_outputs=3, name=prefix + "h2h_slice")
        reset_gate = F.Activation(
            F.elemwise_add(i2h_r, h2h_r, name=prefix + "plus0"),
            act_type="sigmoid",
            name=prefix + "r_act",
        )
        update_gate = F.Activation(
            F.elemwise_add(i2h_z, h2h_z, name=prefix + "plus1"),
            act_type="sigmoid",
            name=prefix + "z_act",
        )
        next_h_tmp = F.Activation(
            F.elemwise_add(
                i2h, F.elemwise_mul(reset_gate, h2h, name=prefix + "mul0"), name=prefix + "plus2"
            ),
            act_type="tanh",
            name=prefix + "h_act",
        )
        ones = F.ones_like(update_gate, name=prefix + "ones_like0")
        next_h = F.elemwise_add(
            F.elemwise_mul(
                F.elemwise_sub(ones, update_gate, name=prefix + "minus0"),
                next_h_tmp,
                name=prefix + "mul1",
            ),
            F.elemwise_mul(update_gate, prev_h, name=prefix + "mul20"),
            name=prefix + "out",
        )
        return next_h, [next_h]
