"""Cells that wrap or combine other ``mx.rnn`` cells: dropout, zoneout, residual, bidirectional.

``ModifierCell`` wraps a base cell (which must then only be used through the wrapper);
``BidirectionalCell`` runs one cell forwards and another backwards over the sequence
and concatenates their outputs step by step (it can only be unrolled, not stepped).
"""

from __future__ import annotations

from numbers import Number

from .. import symbol
from .rnn_cell import BaseRNNCell, RNNCellError, RNNCellStepError, _normalize_sequence

__all__ = ["DropoutCell", "ModifierCell", "ZoneoutCell", "ResidualCell", "BidirectionalCell"]


def _cells_begin_state(cells, func, **kwargs):
    return [s for cell in cells for s in cell.begin_state(func, **kwargs)]


def _cells_unpack(cells, args, pack):
    for cell in cells:
        args = cell.pack_weights(args) if pack else cell.unpack_weights(args)
    return args


class DropoutCell(BaseRNNCell):
    """Dropout on the input of each step (no state).

    Parameters
    ----------
    dropout : float
        Probability of dropping an element (during training).
    prefix : str, default 'dropout_'
    params : RNNParams, optional
    """

    def __init__(self, dropout, prefix="dropout_", params=None):
        super().__init__(prefix, params)
        if isinstance(dropout, bool) or not isinstance(dropout, Number):
            raise RNNCellError(
                f"DropoutCell: dropout must be a number (a probability), got {dropout!r}"
            )
        self.dropout = dropout

    @property
    def state_info(self):
        return []

    def __call__(self, inputs, states):
        if self.dropout > 0:
            inputs = symbol.Dropout(data=inputs, p=self.dropout)
        return inputs, states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        """Apply dropout to the whole sequence at once when it is one symbol.

        Parameters and returns as :meth:`BaseRNNCell.unroll`.
        """
        self.reset()
        inputs, _ = _normalize_sequence(length, inputs, layout, merge_outputs)
        if isinstance(inputs, symbol.Symbol):
            return self(inputs, [])
        return super().unroll(
            length, inputs, begin_state=begin_state, layout=layout, merge_outputs=merge_outputs
        )


class ModifierCell(BaseRNNCell):
    """Base class of the cells that modify a base cell (its parameters and states are the base
    cell's; the base cell must not be called directly any more).

    Parameters
    ----------
    base_cell : BaseRNNCell
    """

    def __init__(self, base_cell):
        super().__init__()
        base_cell._modified = True
        self.base_cell = base_cell

    @property
    def params(self):
        self._own_params = False
        return self.base_cell.params

    @property
    def state_info(self):
        return self.base_cell.state_info

    def begin_state(self, init_sym=symbol.zeros, **kwargs):
        """The base cell's begin states (see :meth:`BaseRNNCell.begin_state`; ``func=`` is
        accepted for ``init_sym``, as the other cells name it)."""
        init_sym = kwargs.pop("func", init_sym)
        if self._modified:
            raise RNNCellError("call the modifier cell instead of its base cell")
        self.base_cell._modified = False
        try:
            return self.base_cell.begin_state(init_sym, **kwargs)
        finally:
            self.base_cell._modified = True

    def unpack_weights(self, args):
        return self.base_cell.unpack_weights(args)

    def pack_weights(self, args):
        return self.base_cell.pack_weights(args)

    def __call__(self, inputs, states):
        raise NotImplementedError(f"{type(self).__name__} must define __call__")


class ZoneoutCell(ModifierCell):
    """Zoneout (Krueger et al. 2016): during training each output and state element keeps its
    previous value with the given probability.

    Parameters
    ----------
    base_cell : BaseRNNCell
        A cell that can be stepped (not fused, not bidirectional).
    zoneout_outputs : float, default 0.
    zoneout_states : float, default 0.
    """

    def __init__(self, base_cell, zoneout_outputs=0.0, zoneout_states=0.0):
        cells = getattr(base_cell, "_cells", [base_cell])
        if not all(getattr(c, "_steppable", True) for c in [base_cell, *cells]):
            raise RNNCellError(
                f"ZoneoutCell needs a cell that can be stepped, got {type(base_cell).__name__} "
                "(or one containing a fused or bidirectional cell): unfuse a FusedRNNCell, and "
                "wrap the cells inside a BidirectionalCell instead"
            )
        super().__init__(base_cell)
        self.zoneout_outputs = zoneout_outputs
        self.zoneout_states = zoneout_states
        self.prev_output = None

    def reset(self):
        super().reset()
        self.prev_output = None

    def __call__(self, inputs, states):
        next_output, next_states = self.base_cell(inputs, states)

        def keep_new(p, like):  # nonzero where the new value is kept (always outside training)
            return symbol.Dropout(symbol.ones_like(like), p=p)

        prev = self.prev_output if self.prev_output is not None else symbol.zeros((0, 0))
        p_out, p_state = self.zoneout_outputs, self.zoneout_states
        output = next_output
        if p_out != 0.0:
            output = symbol.where(keep_new(p_out, next_output), next_output, prev)
        if p_state != 0.0:
            next_states = [
                symbol.where(keep_new(p_state, new), new, old)
                for new, old in zip(next_states, states, strict=True)
            ]
        self.prev_output = output
        return output, next_states


class ResidualCell(ModifierCell):
    """Adds the input to the base cell's output (Wu et al. 2016); names
    ``<output>_plus_residual``.

    Parameters
    ----------
    base_cell : BaseRNNCell
    """

    def __call__(self, inputs, states):
        output, states = self.base_cell(inputs, states)
        output = symbol.elemwise_add(output, inputs, name=f"{output.name}_plus_residual")
        return output, states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        """Unroll the base cell, then add the inputs to its outputs.

        Parameters and returns as :meth:`BaseRNNCell.unroll`.
        """
        self.reset()
        self.base_cell._modified = False
        try:
            outputs, states = self.base_cell.unroll(
                length,
                inputs=inputs,
                begin_state=begin_state,
                layout=layout,
                merge_outputs=merge_outputs,
            )
        finally:
            self.base_cell._modified = True
        if merge_outputs is None:
            merge_outputs = isinstance(outputs, symbol.Symbol)
        inputs, _ = _normalize_sequence(length, inputs, layout, merge_outputs)
        if merge_outputs:
            outputs = symbol.elemwise_add(outputs, inputs, name=f"{outputs.name}_plus_residual")
        else:
            outputs = [
                symbol.elemwise_add(o, i, name=f"{o.name}_plus_residual")
                for o, i in zip(outputs, inputs, strict=True)
            ]
        return outputs, states


class BidirectionalCell(BaseRNNCell):
    """``l_cell`` forwards and ``r_cell`` backwards in time, outputs concatenated
    (``<output_prefix>t<i>``, or ``<output_prefix>out`` when merged).

    Parameters
    ----------
    l_cell, r_cell : BaseRNNCell
    params : RNNParams, optional
        Parameters shared by both cells (then they must not have their own).
    output_prefix : str, default 'bi_'
    """

    _steppable = False

    def __init__(self, l_cell, r_cell, params=None, output_prefix="bi_"):
        super().__init__("", params=params)
        self._output_prefix = output_prefix
        self._override_cell_params = params is not None
        if self._override_cell_params:
            if not (l_cell._own_params and r_cell._own_params):
                raise RNNCellError(
                    "give params either to the BidirectionalCell or to its cells, not both"
                )
            l_cell.params._params.update(self.params._params)
            r_cell.params._params.update(self.params._params)
        self.params._params.update(l_cell.params._params)
        self.params._params.update(r_cell.params._params)
        self._cells = [l_cell, r_cell]

    def unpack_weights(self, args):
        return _cells_unpack(self._cells, args, pack=False)

    def pack_weights(self, args):
        return _cells_unpack(self._cells, args, pack=True)

    def __call__(self, inputs, states):
        raise RNNCellStepError("a BidirectionalCell cannot be stepped: call unroll")

    @property
    def state_info(self):
        return [info for cell in self._cells for info in cell.state_info]

    def begin_state(self, func=symbol.zeros, **kwargs):
        if self._modified:
            raise RNNCellError("call the modifier cell instead of its base cell")
        return _cells_begin_state(self._cells, func, **kwargs)

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        """Unroll both cells; states are returned as ``[l_states, r_states]``.

        Parameters and returns as :meth:`BaseRNNCell.unroll`.
        """
        self.reset()
        inputs, axis = _normalize_sequence(length, inputs, layout, False)
        if begin_state is None:
            begin_state = self.begin_state()
        l_cell, r_cell = self._cells
        n_l = len(l_cell.state_info)
        kw = dict(layout=layout, merge_outputs=merge_outputs)
        l_out, l_states = l_cell.unroll(length, inputs, begin_state=begin_state[:n_l], **kw)
        r_out, r_states = r_cell.unroll(
            length, list(reversed(inputs)), begin_state=begin_state[n_l:], **kw
        )
        if merge_outputs is None:
            merge_outputs = isinstance(l_out, symbol.Symbol) and isinstance(r_out, symbol.Symbol)
            if not merge_outputs:
                l_out, r_out = (
                    list(symbol.SliceChannel(o, axis=axis, num_outputs=length, squeeze_axis=1))
                    if isinstance(o, symbol.Symbol)
                    else o
                    for o in (l_out, r_out)
                )
        prefix = self._output_prefix
        if merge_outputs:
            outputs = symbol.Concat(
                l_out, symbol.reverse(r_out, axis=axis), dim=2, name=f"{prefix}out"
            )
        else:
            outputs = [
                symbol.Concat(lo, ro, dim=1, name=f"{prefix}t{i}")
                for i, (lo, ro) in enumerate(zip(l_out, reversed(r_out), strict=True))
            ]
        return outputs, [l_states, r_states]
