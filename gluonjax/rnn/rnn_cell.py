"""MXNet 1.x's symbolic RNN cells (``mx.rnn.LSTMCell`` ...), unrolled into ``mx.sym`` graphs.

A cell call ``cell(inputs, states)`` adds one time step to the graph; ``unroll``
adds ``length`` steps. Parameters are variables named ``<prefix>i2h_weight``,
``<prefix>i2h_bias``, ``<prefix>h2h_weight``, ``<prefix>h2h_bias`` (gates packed in
MXNet's order), and step ``t``'s nodes are named ``<prefix>t<t>_...``, so graphs,
parameter files and checkpoints match MXNet's. Begin states are ``(0, num_hidden)``
symbols: their batch size is found by shape inference.
"""

from __future__ import annotations

from .. import symbol
from ..base import MXNetError
from ..initializer import LSTMBias

__all__ = [
    "RNNParams",
    "BaseRNNCell",
    "RNNCell",
    "LSTMCell",
    "GRUCell",
    "SequentialRNNCell",
    "FusedRNNCell",
    "DropoutCell",
    "ModifierCell",
    "ZoneoutCell",
    "ResidualCell",
    "BidirectionalCell",
    "BaseConvRNNCell",
    "ConvRNNCell",
    "ConvLSTMCell",
    "ConvGRUCell",
]


class RNNCellError(MXNetError, ValueError):
    """Inputs, states or cells an RNN cell cannot work with."""


class RNNCellStepError(RNNCellError, NotImplementedError):
    """A cell that can only be unrolled (fused, bidirectional) was called for one step."""


def _normalize_sequence(length, inputs, layout, merge, in_layout=None):
    """``(inputs as a list of per-step symbols or one merged symbol, time axis)``."""
    if inputs is None:
        raise RNNCellError(
            "unroll(inputs=None) is not supported: create the input variables outside unroll"
        )
    axis = layout.find("T")
    in_axis = in_layout.find("T") if in_layout is not None else axis
    if isinstance(inputs, symbol.Symbol):
        if merge is False:
            if len(inputs.list_outputs()) != 1:
                raise RNNCellError(
                    "unroll does not take a grouped symbol as inputs: pass list(inputs), or "
                    "one symbol to be split over time"
                )
            inputs = list(symbol.split(inputs, axis=in_axis, num_outputs=length, squeeze_axis=1))
    else:
        if length is not None and len(inputs) != length:
            raise RNNCellError(f"unroll of length {length} got {len(inputs)} inputs")
        if merge is True:
            inputs = [symbol.expand_dims(i, axis=axis) for i in inputs]
            inputs = symbol.Concat(*inputs, dim=axis)
            in_axis = axis
    if isinstance(inputs, symbol.Symbol) and axis != in_axis:
        inputs = symbol.swapaxes(inputs, dim1=axis, dim2=in_axis)
    return inputs, axis


class RNNParams:
    """The variables of a cell, created on first use and shared by name.

    Parameters
    ----------
    prefix : str
        Prepended to every variable name.
    """

    def __init__(self, prefix=""):
        self._prefix = prefix
        self._params = {}

    def get(self, name, **kwargs):
        """The variable ``prefix + name`` (created with ``kwargs`` the first time)."""
        name = self._prefix + name
        if name not in self._params:
            self._params[name] = symbol.Variable(name, **kwargs)
        return self._params[name]


class BaseRNNCell:
    """Base class of the cells: parameters, begin states and unrolling.

    Parameters
    ----------
    prefix : str
        Prefix of the node and (when ``params`` is None) parameter names.
    params : RNNParams, optional
        Share another cell's parameters.
    """

    def __init__(self, prefix="", params=None):
        if params is None:
            params = RNNParams(prefix)
            self._own_params = True
        else:
            self._own_params = False
        self._prefix = prefix
        self._params = params
        self._modified = False
        self.reset()

    def reset(self):
        """Restart the step and begin-state counters before building another graph."""
        self._init_counter = -1
        self._counter = -1
        for cell in getattr(self, "_cells", ()):
            cell.reset()

    def __call__(self, inputs, states):
        raise NotImplementedError()

    @property
    def params(self):
        """This cell's :class:`RNNParams`."""
        self._own_params = False
        return self._params

    @property
    def state_info(self):
        """Shape and layout of each state (``{'shape': (0, n), '__layout__': 'NC'}``)."""
        raise NotImplementedError()

    @property
    def state_shape(self):
        return [info["shape"] for info in self.state_info]

    @property
    def _gate_names(self):
        return ()

    def begin_state(self, func=symbol.zeros, **kwargs):
        """The states of the first step, made by ``func`` (``sym.zeros`` by default;
        ``sym.Variable`` to feed them as inputs) with each state's shape and layout."""
        if self._modified:
            raise RNNCellError(
                "after applying a modifier cell the base cell cannot be called directly; "
                "call the modifier cell instead"
            )
        states = []
        for info in self.state_info:
            self._init_counter += 1
            kw = dict(kwargs)
            if info is not None:
                kw.update(info)
            states.append(func(name=f"{self._prefix}begin_state_{self._init_counter}", **kw))
        return states

    def unpack_weights(self, args):
        """Split the packed i2h/h2h weights and biases into one array per gate."""
        args = dict(args)
        if not self._gate_names:
            return args
        h = self._num_hidden
        for group in ("i2h", "h2h"):
            weight = args.pop(f"{self._prefix}{group}_weight")
            bias = args.pop(f"{self._prefix}{group}_bias")
            for j, gate in enumerate(self._gate_names):
                args[f"{self._prefix}{group}{gate}_weight"] = weight[j * h : (j + 1) * h].copy()
                args[f"{self._prefix}{group}{gate}_bias"] = bias[j * h : (j + 1) * h].copy()
        return args

    def pack_weights(self, args):
        """The reverse of :meth:`unpack_weights`."""
        from ..ndarray import concat

        args = dict(args)
        if not self._gate_names:
            return args
        for group in ("i2h", "h2h"):
            weights = [args.pop(f"{self._prefix}{group}{g}_weight") for g in self._gate_names]
            biases = [args.pop(f"{self._prefix}{group}{g}_bias") for g in self._gate_names]
            args[f"{self._prefix}{group}_weight"] = concat(*weights, dim=0)
            args[f"{self._prefix}{group}_bias"] = concat(*biases, dim=0)
        return args

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        """Add ``length`` steps to the graph.

        Parameters
        ----------
        length : int
        inputs : Symbol or list of Symbol
            One symbol laid out as ``layout`` (split over time), or one per step.
        begin_state : list of Symbol, optional
            Default: :meth:`begin_state`.
        layout : str, default 'NTC'
        merge_outputs : bool, optional
            True: one symbol laid out as ``layout``; False: one per step.

        Returns
        -------
        (outputs, states)
        """
        self.reset()
        inputs, _ = _normalize_sequence(length, inputs, layout, False)
        states = self.begin_state() if begin_state is None else begin_state
        outputs = []
        for i in range(length):
            output, states = self(inputs[i], states)
            outputs.append(output)
        outputs, _ = _normalize_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def _get_activation(self, inputs, activation, **kwargs):
        if isinstance(activation, str):
            return symbol.Activation(inputs, act_type=activation, **kwargs)
        return activation(inputs, **kwargs)


def _state(n):
    return {"shape": (0, n), "__layout__": "NC"}


class RNNCell(BaseRNNCell):
    """A simple recurrent cell: ``h' = act(W_i x + b_i + W_h h + b_h)``.

    Parameters
    ----------
    num_hidden : int
    activation : str or callable, default 'tanh'
    prefix : str, default 'rnn_'
    params : RNNParams, optional
    """

    def __init__(self, num_hidden, activation="tanh", prefix="rnn_", params=None):
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._activation = activation
        self._iW = self.params.get("i2h_weight")
        self._iB = self.params.get("i2h_bias")
        self._hW = self.params.get("h2h_weight")
        self._hB = self.params.get("h2h_bias")

    @property
    def state_info(self):
        return [_state(self._num_hidden)]

    @property
    def _gate_names(self):
        return ("",)

    def __call__(self, inputs, states):
        self._counter += 1
        name = f"{self._prefix}t{self._counter}_"
        i2h = symbol.FullyConnected(
            data=inputs,
            weight=self._iW,
            bias=self._iB,
            num_hidden=self._num_hidden,
            name=f"{name}i2h",
        )
        h2h = symbol.FullyConnected(
            data=states[0],
            weight=self._hW,
            bias=self._hB,
            num_hidden=self._num_hidden,
            name=f"{name}h2h",
        )
        output = self._get_activation(i2h + h2h, self._activation, name=f"{name}out")
        return output, [output]


class LSTMCell(BaseRNNCell):
    """Long short-term memory cell (gates packed as input, forget, cell, output).

    Parameters
    ----------
    num_hidden : int
    prefix : str, default 'lstm_'
    params : RNNParams, optional
    forget_bias : float, default 1.0
        Initial bias of the forget gate (through ``init.LSTMBias``).
    """

    def __init__(self, num_hidden, prefix="lstm_", params=None, forget_bias=1.0):
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._iW = self.params.get("i2h_weight")
        self._hW = self.params.get("h2h_weight")
        self._iB = self.params.get("i2h_bias", init=LSTMBias(forget_bias=forget_bias))
        self._hB = self.params.get("h2h_bias")

    @property
    def state_info(self):
        return [_state(self._num_hidden), _state(self._num_hidden)]

    @property
    def _gate_names(self):
        return ["_i", "_f", "_c", "_o"]

    def __call__(self, inputs, states):
        self._counter += 1
        name = f"{self._prefix}t{self._counter}_"
        n = self._num_hidden * 4
        i2h = symbol.FullyConnected(
            data=inputs, weight=self._iW, bias=self._iB, num_hidden=n, name=f"{name}i2h"
        )
        h2h = symbol.FullyConnected(
            data=states[0], weight=self._hW, bias=self._hB, num_hidden=n, name=f"{name}h2h"
        )
        gates = symbol.SliceChannel(i2h + h2h, num_outputs=4, name=f"{name}slice")
        in_gate = symbol.Activation(gates[0], act_type="sigmoid", name=f"{name}i")
        forget_gate = symbol.Activation(gates[1], act_type="sigmoid", name=f"{name}f")
        in_transform = symbol.Activation(gates[2], act_type="tanh", name=f"{name}c")
        out_gate = symbol.Activation(gates[3], act_type="sigmoid", name=f"{name}o")
        next_c = symbol.elemwise_add(
            forget_gate * states[1], in_gate * in_transform, name=f"{name}state"
        )
        next_h = symbol.elemwise_mul(
            out_gate, symbol.Activation(next_c, act_type="tanh"), name=f"{name}out"
        )
        return next_h, [next_h, next_c]


class GRUCell(BaseRNNCell):
    """Gated recurrent unit cell (gates packed as reset, update, new).

    Parameters
    ----------
    num_hidden : int
    prefix : str, default 'gru_'
    params : RNNParams, optional
    """

    def __init__(self, num_hidden, prefix="gru_", params=None):
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._iW = self.params.get("i2h_weight")
        self._iB = self.params.get("i2h_bias")
        self._hW = self.params.get("h2h_weight")
        self._hB = self.params.get("h2h_bias")

    @property
    def state_info(self):
        return [_state(self._num_hidden)]

    @property
    def _gate_names(self):
        return ["_r", "_z", "_o"]

    def __call__(self, inputs, states):
        self._counter += 1
        name = f"{self._prefix}t{self._counter}_"
        prev = states[0]
        n = self._num_hidden * 3
        i2h = symbol.FullyConnected(
            data=inputs, weight=self._iW, bias=self._iB, num_hidden=n, name=f"{name}_i2h"
        )
        h2h = symbol.FullyConnected(
            data=prev, weight=self._hW, bias=self._hB, num_hidden=n, name=f"{name}_h2h"
        )
        i2h_r, i2h_z, i2h = symbol.SliceChannel(i2h, num_outputs=3, name=f"{name}_i2h_slice")
        h2h_r, h2h_z, h2h = symbol.SliceChannel(h2h, num_outputs=3, name=f"{name}_h2h_slice")
        reset = symbol.Activation(i2h_r + h2h_r, act_type="sigmoid", name=f"{name}_r_act")
        update = symbol.Activation(i2h_z + h2h_z, act_type="sigmoid", name=f"{name}_z_act")
        candidate = symbol.Activation(i2h + reset * h2h, act_type="tanh", name=f"{name}_h_act")
        next_h = symbol.elemwise_add((1.0 - update) * candidate, update * prev, name=f"{name}out")
        return next_h, [next_h]


class SequentialRNNCell(BaseRNNCell):
    """A stack of cells: each one's output is the next one's input.

    Parameters
    ----------
    params : RNNParams, optional
        Parameters shared by every cell added (then cells must not have their own).
    """

    def __init__(self, params=None):
        super().__init__(prefix="", params=params)
        self._override_cell_params = params is not None
        self._cells = []

    def add(self, cell):
        """Append ``cell`` to the stack."""
        self._cells.append(cell)
        if self._override_cell_params:
            if not cell._own_params:
                raise RNNCellError(
                    "give params either to the SequentialRNNCell or to its cells, not both"
                )
            cell.params._params.update(self.params._params)
        self.params._params.update(cell.params._params)

    @property
    def state_info(self):
        return [info for cell in self._cells for info in cell.state_info]

    def begin_state(self, func=symbol.zeros, **kwargs):
        if self._modified:
            raise RNNCellError("call the modifier cell instead of its base cell")
        return [s for cell in self._cells for s in cell.begin_state(func, **kwargs)]

    def unpack_weights(self, args):
        for cell in self._cells:
            args = cell.unpack_weights(args)
        return args

    def pack_weights(self, args):
        for cell in self._cells:
            args = cell.pack_weights(args)
        return args

    def __call__(self, inputs, states):
        self._counter += 1
        next_states, p = [], 0
        for cell in self._cells:
            n = len(cell.state_info)
            inputs, state = cell(inputs, states[p : p + n])
            p += n
            next_states.extend(state)
        return inputs, next_states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        if begin_state is None:
            begin_state = self.begin_state()
        p, next_states = 0, []
        last = len(self._cells) - 1
        for i, cell in enumerate(self._cells):
            n = len(cell.state_info)
            inputs, states = cell.unroll(
                length,
                inputs=inputs,
                begin_state=begin_state[p : p + n],
                layout=layout,
                merge_outputs=None if i < last else merge_outputs,
            )
            p += n
            next_states.extend(states)
        return inputs, next_states


# MXNet keeps every cell in ``mx.rnn.rnn_cell``; the others live in sibling modules (which
# import this one's classes, all defined above) and are re-exported here.
from .conv_cells import BaseConvRNNCell, ConvGRUCell, ConvLSTMCell, ConvRNNCell  # noqa: E402
from .fused_cell import FusedRNNCell  # noqa: E402
from .modifier_cells import (  # noqa: E402
    BidirectionalCell,
    DropoutCell,
    ModifierCell,
    ResidualCell,
    ZoneoutCell,
)
