"""Cells made of cells: stacks, dropout, modifiers (zoneout, residual), bidirectional."""

from __future__ import annotations

from numbers import Number

from ... import symbol
from ..._tape import state as _trace
from ...base import MXNetError
from ...ndarray.ndarray import NDArray
from ...symbol.symbol import Symbol
from ..block import _indent
from ._base_cell import (
    HybridRecurrentCell,
    ModifiedCellError,
    RecurrentCell,
    _check_unmodified,
    current_trace_value,
)
from ._scan import can_scan
from ._sequence import (
    _cells_begin_state,
    _cells_state_info,
    _format_sequence,
    _get_begin_state,
    _mask_sequence_variable_length,
    _reverse_sequences,
    traced,
)

__all__ = [
    "SequentialRNNCell",
    "HybridSequentialRNNCell",
    "DropoutCell",
    "ModifierCell",
    "ZoneoutCell",
    "ResidualCell",
    "BidirectionalCell",
]

_TENSORS = (NDArray, Symbol)


class _StackMixin:
    """Shared by SequentialRNNCell and HybridSequentialRNNCell."""

    def __repr__(self):
        mods = "\n".join(f"({i}): {_indent(repr(m), 2)}" for i, m in self._children.items())
        return f"{type(self).__name__}(\n{mods}\n)"

    def add(self, cell):
        """Append ``cell`` to the stack."""
        self.register_child(cell)

    def state_info(self, batch_size=0):
        return _cells_state_info(self._children.values(), batch_size)

    def begin_state(self, **kwargs):
        _check_unmodified(self)
        return _cells_begin_state(self._children.values(), **kwargs)

    def __call__(self, inputs, states):
        self._counter += 1
        if any(isinstance(c, BidirectionalCell) for c in self._children.values()):
            raise MXNetError(
                f"{type(self).__name__} '{self.name}' holds a BidirectionalCell, which cannot "
                f"be stepped; use unroll()"
            )
        next_states, p = [], 0
        for cell in self._children.values():
            n = len(cell.state_info())
            inputs, state = cell(inputs, states[p : p + n])
            p += n
            next_states.extend(state)
        return inputs, next_states

    def unroll(
        self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None, valid_length=None
    ):
        self.reset()
        inputs, _, F, batch_size = _format_sequence(length, inputs, layout, None)
        begin_state = _get_begin_state(self, F, begin_state, inputs, batch_size, layout)
        inner_merge = True if traced(inputs) else None  # traced: no per-step split between layers
        cells = list(self._children.values())
        next_states, p = [], 0
        for i, cell in enumerate(cells):
            n = len(cell.state_info())
            states = begin_state[p : p + n]
            p += n
            inputs, states = cell.unroll(
                length,
                inputs=inputs,
                begin_state=states,
                layout=layout,
                merge_outputs=inner_merge if i < len(cells) - 1 else merge_outputs,
                valid_length=valid_length,
            )
            next_states.extend(states)
        return inputs, next_states

    def __getitem__(self, i):
        return self._children[str(i)]

    def __len__(self):
        return len(self._children)


class SequentialRNNCell(_StackMixin, RecurrentCell):
    """A stack of cells run one after the other (each step goes through all of them).

    Examples
    --------
    >>> import gluonjax as mx
    >>> stack = mx.gluon.rnn.SequentialRNNCell()
    >>> stack.add(mx.gluon.rnn.LSTMCell(4)); stack.add(mx.gluon.rnn.GRUCell(3))
    >>> stack.initialize()
    >>> out, states = stack.unroll(5, mx.nd.ones((2, 5, 6)), merge_outputs=True)
    >>> out.shape, [s.shape for s in states]
    ((2, 5, 3), [(2, 4), (2, 4), (2, 3)])
    """

    def hybrid_forward(self, *args, **kwargs):
        raise NotImplementedError


class HybridSequentialRNNCell(_StackMixin, HybridRecurrentCell):
    """A stack of hybrid cells (see :class:`SequentialRNNCell`)."""

    def hybrid_forward(self, F, inputs, states):
        return self.__call__(inputs, states)


class DropoutCell(HybridRecurrentCell):
    """Dropout on the inputs (no state).

    Parameters
    ----------
    rate : float
        Fraction of the elements to drop.
    axes : tuple of int
        Axes along which the dropout mask is shared.
    """

    def __init__(self, rate, axes=(), prefix=None, params=None):
        super().__init__(prefix, params)
        if not isinstance(rate, Number):
            raise MXNetError(f"DropoutCell: rate must be a number, got {rate!r}")
        self._rate = rate
        self._axes = axes

    def __repr__(self):
        return f"{type(self).__name__}(rate={self._rate}, axes={self._axes})"

    def state_info(self, batch_size=0):
        return []

    def _alias(self):
        return "dropout"

    def hybrid_forward(self, F, inputs, states):
        if self._rate > 0:
            inputs = F.Dropout(
                data=inputs, p=self._rate, axes=self._axes, name=f"t{self._counter}_fwd"
            )
        return inputs, states

    def unroll(
        self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None, valid_length=None
    ):
        self.reset()
        inputs, _, F, _ = _format_sequence(length, inputs, layout, merge_outputs)
        if isinstance(inputs, _TENSORS):
            return self.hybrid_forward(F, inputs, begin_state if begin_state else [])
        return super().unroll(
            length,
            inputs,
            begin_state=begin_state,
            layout=layout,
            merge_outputs=merge_outputs,
            valid_length=None,
        )


class ModifierCell(HybridRecurrentCell):
    """Base class of cells that modify another cell (the base cell is then used only
    through the modifier)."""

    def __init__(self, base_cell):
        if base_cell._modified:
            raise ModifiedCellError(
                f"Cell {base_cell.name} is already modified; a cell cannot be modified twice"
            )
        base_cell._modified = True
        super().__init__(prefix=base_cell.prefix + self._alias(), params=None)
        self.base_cell = base_cell

    @property
    def params(self):
        return self.base_cell.params

    def state_info(self, batch_size=0):
        return self.base_cell.state_info(batch_size)

    def begin_state(self, func=symbol.zeros, **kwargs):
        _check_unmodified(self)
        self.base_cell._modified = False
        try:
            return self.base_cell.begin_state(func=func, **kwargs)
        finally:
            self.base_cell._modified = True

    def hybrid_forward(self, F, inputs, states):
        raise NotImplementedError

    def __repr__(self):
        return f"{type(self).__name__}({self.base_cell!r})"


def _has_bidirectional(cell):
    return isinstance(cell, BidirectionalCell) or any(
        _has_bidirectional(c) for c in getattr(cell, "_children", {}).values()
    )


class ZoneoutCell(ModifierCell):
    """Zoneout on a base cell: each output/state element keeps its previous value with
    probability ``zoneout_outputs``/``zoneout_states`` (training only)."""

    _step_state = ("_prev_output",)  # carried through a traced unroll's scan

    def __init__(self, base_cell, zoneout_outputs=0.0, zoneout_states=0.0):
        if _has_bidirectional(base_cell):
            raise MXNetError(
                "ZoneoutCell cannot wrap a BidirectionalCell (it cannot be stepped); wrap "
                "the cells inside it instead"
            )
        super().__init__(base_cell)
        self.zoneout_outputs = zoneout_outputs
        self.zoneout_states = zoneout_states
        self._prev_output = None
        self._prev_scope = None

    def __repr__(self):
        return (
            f"{type(self).__name__}(p_out={self.zoneout_outputs}, "
            f"p_state={self.zoneout_states}, {self.base_cell!r})"
        )

    def _alias(self):
        return "zoneout"

    def reset(self):
        super().reset()
        self._prev_output = None
        self._prev_scope = None

    def hybrid_forward(self, F, inputs, states):
        p_out, p_st = self.zoneout_outputs, self.zoneout_states
        next_output, next_states = self.base_cell(inputs, states)

        def mask(p, like):
            return F.Dropout(F.ones_like(like), p=p)

        prev = current_trace_value(self._prev_output, self._prev_scope)
        if prev is None:
            prev = F.zeros_like(next_output)
        output = F.where(mask(p_out, next_output), next_output, prev) if p_out else next_output
        if p_st:
            states = [F.where(mask(p_st, n), n, o) for n, o in zip(next_states, states)]
        else:
            states = next_states
        self._prev_output, self._prev_scope = output, _trace.current()
        return output, states


class ResidualCell(ModifierCell):
    """Adds the input to the base cell's output (Wu et al., 2016)."""

    def hybrid_forward(self, F, inputs, states):
        output, states = self.base_cell(inputs, states)
        output = F.elemwise_add(output, inputs, name=f"t{self._counter}_fwd")
        return output, states

    def unroll(
        self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None, valid_length=None
    ):
        self.reset()
        self.base_cell._modified = False
        try:
            outputs, states = self.base_cell.unroll(
                length,
                inputs=inputs,
                begin_state=begin_state,
                layout=layout,
                merge_outputs=merge_outputs,
                valid_length=valid_length,
            )
        finally:
            self.base_cell._modified = True
        merge = isinstance(outputs, _TENSORS) if merge_outputs is None else merge_outputs
        inputs, axis, F, _ = _format_sequence(length, inputs, layout, merge)
        if valid_length is not None:
            inputs = _mask_sequence_variable_length(F, inputs, length, valid_length, axis, merge)
        if merge:
            return F.elemwise_add(outputs, inputs), states
        return [F.elemwise_add(i, j) for i, j in zip(outputs, inputs)], states


class BidirectionalCell(HybridRecurrentCell):
    """Runs ``l_cell`` forward and ``r_cell`` backward over the sequence and joins their
    outputs on the feature axis (unroll only).

    Parameters
    ----------
    l_cell, r_cell : RecurrentCell
    output_prefix : str, default 'bi_'
    """

    def __init__(self, l_cell, r_cell, output_prefix="bi_"):
        super().__init__(prefix="", params=None)
        self.register_child(l_cell, "l_cell")
        self.register_child(r_cell, "r_cell")
        self._output_prefix = output_prefix

    def __call__(self, inputs, states=None, *args):
        raise NotImplementedError("Bidirectional cannot be stepped. Please use unroll")

    def __repr__(self):
        return (
            f"{type(self).__name__}(forward={self._children['l_cell']!r}, "
            f"backward={self._children['r_cell']!r})"
        )

    def state_info(self, batch_size=0):
        return _cells_state_info(self._children.values(), batch_size)

    def begin_state(self, **kwargs):
        _check_unmodified(self)
        return _cells_begin_state(self._children.values(), **kwargs)

    def unroll(
        self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None, valid_length=None
    ):
        self.reset()
        if can_scan(inputs, length):
            return self._traced_unroll(
                length, inputs, begin_state, layout, merge_outputs, valid_length
            )
        inputs, axis, F, batch_size = _format_sequence(length, inputs, layout, False)
        reversed_inputs = list(_reverse_sequences(inputs, length, valid_length))
        begin_state = _get_begin_state(self, F, begin_state, inputs, batch_size, layout)
        l_cell, r_cell = self._children.values()
        n_l = len(l_cell.state_info(batch_size))
        l_outputs, l_states = l_cell.unroll(
            length,
            inputs=inputs,
            begin_state=begin_state[:n_l],
            layout=layout,
            merge_outputs=merge_outputs,
            valid_length=valid_length,
        )
        r_outputs, r_states = r_cell.unroll(
            length,
            inputs=reversed_inputs,
            begin_state=begin_state[n_l:],
            layout=layout,
            merge_outputs=False,
            valid_length=valid_length,
        )
        reversed_r = _reverse_sequences(r_outputs, length, valid_length)
        if merge_outputs is None:
            merge_outputs = isinstance(l_outputs, _TENSORS)
            l_outputs, _, _, _ = _format_sequence(None, l_outputs, layout, merge_outputs)
            reversed_r, _, _, _ = _format_sequence(None, reversed_r, layout, merge_outputs)
        if merge_outputs:
            reversed_r = F.stack(*reversed_r, axis=axis)
            outputs = F.concat(l_outputs, reversed_r, dim=2, name=f"{self._output_prefix}out")
        else:
            outputs = [
                F.concat(lo, ro, dim=1, name=f"{self._output_prefix}t{i}")
                for i, (lo, ro) in enumerate(zip(l_outputs, reversed_r))
            ]
        if valid_length is not None:
            outputs = _mask_sequence_variable_length(
                F, outputs, length, valid_length, axis, merge_outputs
            )
        return outputs, l_states + r_states

    def _traced_unroll(self, length, inputs, begin_state, layout, merge_outputs, valid_length):
        """Inside a trace: both directions on merged time-major tensors (no per-step ops)."""
        inputs, axis, F, batch_size = _format_sequence(length, inputs, layout, True)
        begin_state = _get_begin_state(self, F, begin_state, inputs, batch_size, layout)
        x = inputs if axis == 0 else F.swapaxes(inputs, dim1=0, dim2=axis)
        l_cell, r_cell = self._children.values()
        n_l = len(l_cell.state_info(batch_size))

        def flip(t):
            if valid_length is None:
                return F.reverse(t, axis=0)
            return F.SequenceReverse(t, sequence_length=valid_length, use_sequence_length=True)

        l_out, l_states = l_cell.unroll(
            length, x, begin_state[:n_l], "TNC", merge_outputs=True, valid_length=valid_length
        )
        r_out, r_states = r_cell.unroll(
            length, flip(x), begin_state[n_l:], "TNC", merge_outputs=True, valid_length=valid_length
        )
        outputs = F.concat(l_out, flip(r_out), dim=2, name=f"{self._output_prefix}out")
        if valid_length is not None:
            outputs = F.SequenceMask(
                outputs, sequence_length=valid_length, use_sequence_length=True, axis=0
            )
        if merge_outputs:
            if axis != 0:
                outputs = F.swapaxes(outputs, dim1=0, dim2=axis)
            return outputs, l_states + r_states
        steps = F.split(outputs, num_outputs=length, axis=0, squeeze_axis=True)
        return list(steps), l_states + r_states
