"""Contrib recurrent cells: ``VariationalDropoutCell``, ``LSTMPCell``, ``dynamic_unroll``."""

from __future__ import annotations

from ...._tape import state as _trace
from ....base import MXNetError
from ....ndarray.ndarray import NDArray
from ....symbol.symbol import Symbol
from ...rnn import HybridRecurrentCell, ModifierCell
from ...rnn._base_cell import current_trace_value
from ...rnn._sequence import _format_sequence, _get_begin_state, _mask_sequence_variable_length
from ...rnn._wrappers import _has_bidirectional

__all__ = ["VariationalDropoutCell", "LSTMPCell", "dynamic_unroll"]

_TENSORS = (NDArray, Symbol)


class VariationalDropoutCell(ModifierCell):
    """Variational dropout (Gal & Ghahramani, 2016) on a base cell: the same dropout
    mask on every step for the inputs, the first state and the outputs (three
    separate masks). Masks are drawn at the first step and kept until ``reset()``
    (``unroll`` resets).

    Parameters
    ----------
    base_cell : RecurrentCell
    drop_inputs, drop_states, drop_outputs : float, default 0
    """

    def __init__(self, base_cell, drop_inputs=0.0, drop_states=0.0, drop_outputs=0.0):
        if drop_states and _has_bidirectional(base_cell):
            raise MXNetError(
                "VariationalDropoutCell cannot drop the states of a BidirectionalCell; wrap the "
                "cells inside it instead"
            )
        super().__init__(base_cell)
        self.drop_inputs = drop_inputs
        self.drop_states = drop_states
        self.drop_outputs = drop_outputs
        self._mask_scope = None
        self.drop_inputs_mask = None
        self.drop_states_mask = None
        self.drop_outputs_mask = None

    def _alias(self):
        return "vardrop"

    def reset(self):
        super().reset()
        self.drop_inputs_mask = None
        self.drop_states_mask = None
        self.drop_outputs_mask = None

    def _initialize_input_masks(self, F, inputs, states):
        for name in ("drop_inputs_mask", "drop_states_mask", "drop_outputs_mask"):
            value = current_trace_value(getattr(self, name), self._mask_scope)
            object.__setattr__(self, name, value)
        self._mask_scope = _trace.current()
        if self.drop_states and self.drop_states_mask is None:
            self.drop_states_mask = F.Dropout(F.ones_like(states[0]), p=self.drop_states)
        if self.drop_inputs and self.drop_inputs_mask is None:
            self.drop_inputs_mask = F.Dropout(F.ones_like(inputs), p=self.drop_inputs)

    def _initialize_output_mask(self, F, output):
        if self.drop_outputs and self.drop_outputs_mask is None:
            self.drop_outputs_mask = F.Dropout(F.ones_like(output), p=self.drop_outputs)

    def hybrid_forward(self, F, inputs, states):
        self._initialize_input_masks(F, inputs, states)
        if self.drop_states:
            states = list(states)
            states[0] = states[0] * self.drop_states_mask
        if self.drop_inputs:
            inputs = inputs * self.drop_inputs_mask
        next_output, next_states = self.base_cell(inputs, states)
        self._initialize_output_mask(F, next_output)
        if self.drop_outputs:
            next_output = next_output * self.drop_outputs_mask
        return next_output, next_states

    def __repr__(self):
        return f"{type(self).__name__}(p_out = {self.drop_outputs}, p_state = {self.drop_states})"

    def unroll(
        self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None, valid_length=None
    ):
        """Unroll over ``length`` steps (see ``RecurrentCell.unroll``). Without state
        dropout the input and output masks apply to whole sequences at once."""
        if self.drop_states:
            return super().unroll(
                length, inputs, begin_state, layout, merge_outputs, valid_length=valid_length
            )
        self.reset()
        inputs, axis, F, batch_size = _format_sequence(length, inputs, layout, True)
        states = _get_begin_state(self, F, begin_state, inputs, batch_size, layout)
        if self.drop_inputs:
            inputs = F.Dropout(inputs, p=self.drop_inputs, axes=(axis,))
        outputs, states = self.base_cell.unroll(
            length, inputs, states, layout, merge_outputs=True, valid_length=valid_length
        )
        if self.drop_outputs:
            outputs = F.Dropout(outputs, p=self.drop_outputs, axes=(axis,))
        merge = isinstance(outputs, _TENSORS) if merge_outputs is None else merge_outputs
        outputs, _, _, _ = _format_sequence(length, outputs, layout, merge)
        if valid_length is not None:
            outputs = _mask_sequence_variable_length(F, outputs, length, valid_length, axis, merge)
        return outputs, states


class LSTMPCell(HybridRecurrentCell):
    """LSTM with a projected recurrent state (Sak et al., 2014): after the LSTM step,
    ``r_t = W_hr h_t`` is the output and the recurrent state.

    Parameters
    ----------
    hidden_size : int
        Size of the cell state.
    projection_size : int
        Size of the output / recurrent state.
    i2h_weight_initializer, h2h_weight_initializer, h2r_weight_initializer : optional
    i2h_bias_initializer, h2h_bias_initializer : default 'zeros'
    input_size : int, default 0 (inferred)

    Inputs: ``data`` (N, C), ``states`` ``[r (N, projection), c (N, hidden)]``.
    Outputs: ``r'`` and ``[r', c']``.

    Examples
    --------
    >>> import gluonjax as mx
    >>> cell = mx.gluon.contrib.rnn.LSTMPCell(6, 3); cell.initialize()
    >>> out, (r, c) = cell(mx.nd.ones((2, 4)), cell.begin_state(batch_size=2))
    >>> out.shape, c.shape
    ((2, 3), (2, 6))
    """

    _deferred_input = ("i2h_weight",)

    def __init__(
        self,
        hidden_size,
        projection_size,
        i2h_weight_initializer=None,
        h2h_weight_initializer=None,
        h2r_weight_initializer=None,
        i2h_bias_initializer="zeros",
        h2h_bias_initializer="zeros",
        input_size=0,
        prefix=None,
        params=None,
    ):
        super().__init__(prefix=prefix, params=params)
        self._hidden_size = hidden_size
        self._input_size = input_size
        self._projection_size = projection_size
        get = self.params.get
        self.i2h_weight = get(
            "i2h_weight",
            shape=(4 * hidden_size, input_size),
            init=i2h_weight_initializer,
            allow_deferred_init=True,
        )
        self.h2h_weight = get(
            "h2h_weight",
            shape=(4 * hidden_size, projection_size),
            init=h2h_weight_initializer,
            allow_deferred_init=True,
        )
        self.h2r_weight = get(
            "h2r_weight",
            shape=(projection_size, hidden_size),
            init=h2r_weight_initializer,
            allow_deferred_init=True,
        )
        self.i2h_bias = get(
            "i2h_bias",
            shape=(4 * hidden_size,),
            init=i2h_bias_initializer,
            allow_deferred_init=True,
        )
        self.h2h_bias = get(
            "h2h_bias",
            shape=(4 * hidden_size,),
            init=h2h_bias_initializer,
            allow_deferred_init=True,
        )

    def state_info(self, batch_size=0):
        return [
            {"shape": (batch_size, self._projection_size), "__layout__": "NC"},
            {"shape": (batch_size, self._hidden_size), "__layout__": "NC"},
        ]

    def _alias(self):
        return "lstmp"

    def __repr__(self):
        shape, proj = self.i2h_weight.shape, self.h2r_weight.shape
        mapping = f"{shape[1] if shape[1] else None} -> {shape[0]} -> {proj[0]}"
        return f"{type(self).__name__}({mapping})"

    def hybrid_forward(
        self, F, inputs, states, i2h_weight, h2h_weight, h2r_weight, i2h_bias, h2h_bias
    ):
        prefix = f"t{self._counter}_"
        n = self._hidden_size * 4
        i2h = F.FullyConnected(
            data=inputs, weight=i2h_weight, bias=i2h_bias, num_hidden=n, name=prefix + "i2h"
        )
        h2h = F.FullyConnected(
            data=states[0], weight=h2h_weight, bias=h2h_bias, num_hidden=n, name=prefix + "h2h"
        )
        gates = i2h + h2h
        s = F.SliceChannel(gates, num_outputs=4, name=prefix + "slice")
        in_gate = F.Activation(s[0], act_type="sigmoid", name=prefix + "i")
        forget_gate = F.Activation(s[1], act_type="sigmoid", name=prefix + "f")
        in_transform = F.Activation(s[2], act_type="tanh", name=prefix + "c")
        out_gate = F.Activation(s[3], act_type="sigmoid", name=prefix + "o")
        next_c = F.elemwise_add(
            forget_gate * states[1], in_gate * in_transform, name=prefix + "state"
        )
        hidden = F.elemwise_mul(
            out_gate, F.Activation(next_c, act_type="tanh"), name=prefix + "hidden"
        )
        next_r = F.FullyConnected(
            data=hidden,
            num_hidden=self._projection_size,
            weight=h2r_weight,
            no_bias=True,
            name=prefix + "out",
        )
        return next_r, [next_r, next_c]


def dynamic_unroll(
    cell, inputs, begin_state, drop_inputs=0, drop_outputs=0, layout="TNC", valid_length=None
):
    """Run ``cell`` over ``inputs`` with ``F.contrib.foreach`` (a ``lax.scan`` when
    hybridized).

    Parameters
    ----------
    cell : RecurrentCell
    inputs : NDArray or Symbol
        (T, N, ...) for 'TNC', (N, T, ...) for 'NTC'.
    begin_state : list
    drop_inputs, drop_outputs : float
        Dropout rates with one mask shared over time.
    layout : str, default 'TNC'
    valid_length : NDArray or Symbol, optional
        (N,) lengths: later outputs are zeros, the states stop at each length.

    Returns
    -------
    (outputs in ``layout``, final states)
    """
    inputs, axis, F, _ = _format_sequence(0, inputs, layout, True)
    axes = None
    if axis != 0:
        axes = list(range(len(layout)))
        axes[0], axes[axis] = axes[axis], axes[0]
        inputs = F.transpose(inputs, axes=axes)
    states = list(begin_state)
    if drop_inputs:  # one mask for all steps (MXNet shares it along `axis` of the
        inputs = F.Dropout(inputs, p=drop_inputs, axes=(0,))  # time-major data, wrong for NTC)
    if valid_length is None:

        def loop_body(x, states):
            return cell(x, states)
    else:
        states.append(F.zeros((1,)))

        def loop_body(x, states):
            cell_states, iter_no = states[:-1], states[-1]
            out, new_states = cell(x, cell_states)
            new_states = list(new_states)
            for i, state in enumerate(cell_states):
                alive = F.broadcast_greater(valid_length, iter_no)
                new_states[i] = F.where(alive, new_states[i], state)
            new_states.append(iter_no + 1)
            return out, new_states

    outputs, states = F.contrib.foreach(loop_body, inputs, states)
    if drop_outputs:
        outputs = F.Dropout(outputs, p=drop_outputs, axes=(0,))
    if axes is not None:
        outputs = F.transpose(outputs, axes=axes)
    if valid_length is not None:
        outputs = F.SequenceMask(
            outputs, sequence_length=valid_length, use_sequence_length=True, axis=axis
        )
        return outputs, states[:-1]
    return outputs, states
