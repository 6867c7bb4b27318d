"""``mx.rnn.FusedRNNCell``: a whole multi-layer RNN as one ``RNN`` op over the sequence.

Its only parameter is ``<prefix>parameters``, the packed vector of the ``RNN`` op
(``init.FusedRNN`` fills it gate by gate). :meth:`FusedRNNCell.unpack_weights` splits it
into per-gate arrays named ``<prefix><l|r><layer>_<i2h|h2h><gate>_<weight|bias>``
(``lstm_l0_i2h_f_weight``), :meth:`FusedRNNCell.pack_weights` joins them back, and
:meth:`FusedRNNCell.unfuse` builds the equivalent stack of step cells whose parameters
have the same names after unpacking.
"""

from __future__ import annotations

from .. import ndarray, symbol
from .._init.fused_rnn import GATE_NAMES, FusedRNN, fused_rnn_input_size, fused_rnn_layout
from .modifier_cells import BidirectionalCell, DropoutCell
from .rnn_cell import (
    BaseRNNCell,
    GRUCell,
    LSTMCell,
    RNNCell,
    RNNCellError,
    RNNCellStepError,
    SequentialRNNCell,
    _normalize_sequence,
)

__all__ = ["FusedRNNCell"]


class FusedRNNCell(BaseRNNCell):
    """Several RNN layers fused over time into one ``RNN`` op (unroll only).

    Parameters
    ----------
    num_hidden : int
    num_layers : int, default 1
    mode : str, default 'lstm'
        ``'rnn_relu'``, ``'rnn_tanh'``, ``'lstm'`` or ``'gru'``.
    bidirectional : bool, default False
        Outputs have ``2 * num_hidden`` channels when True.
    dropout : float, default 0.
        Dropout between layers during training.
    get_next_state : bool, default False
        Return the final states from :meth:`unroll` (else ``[]``).
    forget_bias : float, default 1.0
        Initial bias of an LSTM's forget gates.
    prefix : str, default ``'<mode>_'``
    params : RNNParams, optional

    Examples
    --------
    >>> import gluonjax as mx
    >>> cell = mx.rnn.FusedRNNCell(8, num_layers=2, mode="gru", prefix="g_")
    >>> out, _ = cell.unroll(5, mx.sym.Variable("data"), layout="TNC", merge_outputs=True)
    >>> out.list_arguments()
    ['data', 'g_parameters']
    >>> out.infer_shape(data=(5, 2, 3))[1]
    [(5, 2, 8)]
    >>> sorted(cell.unfuse().unroll(5, [mx.sym.Variable(f"x{i}") for i in range(5)])[0][0]
    ...        .list_arguments())[:3]
    ['g_l0_h2h_bias', 'g_l0_h2h_weight', 'g_l0_i2h_bias']
    """

    _steppable = False

    def __init__(
        self,
        num_hidden,
        num_layers=1,
        mode="lstm",
        bidirectional=False,
        dropout=0.0,
        get_next_state=False,
        forget_bias=1.0,
        prefix=None,
        params=None,
    ):
        if mode not in GATE_NAMES:
            raise RNNCellError(
                f"FusedRNNCell: mode {mode!r} is not one of {', '.join(sorted(GATE_NAMES))}"
            )
        if prefix is None:
            prefix = f"{mode}_"
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._num_layers = num_layers
        self._mode = mode
        self._bidirectional = bool(bidirectional)
        self._dropout = dropout
        self._get_next_state = get_next_state
        self._forget_bias = forget_bias
        self._directions = ["l", "r"] if bidirectional else ["l"]
        initializer = FusedRNN(None, num_hidden, num_layers, mode, bidirectional, forget_bias)
        self._parameter = self.params.get("parameters", init=initializer)

    @property
    def state_info(self):
        shape = (len(self._directions) * self._num_layers, 0, self._num_hidden)
        n = 2 if self._mode == "lstm" else 1
        return [{"shape": shape, "__layout__": "LNC"} for _ in range(n)]

    @property
    def _gate_names(self):
        return list(GATE_NAMES[self._mode])

    @property
    def _num_gates(self):
        return len(self._gate_names)

    def _layout(self, input_size):
        return fused_rnn_layout(
            self._mode,
            self._num_layers,
            input_size,
            self._num_hidden,
            self._bidirectional,
            prefix=self._prefix,
        )

    def unpack_weights(self, args):
        """Split ``<prefix>parameters`` into one array per layer, direction, gate and kind.

        Parameters
        ----------
        args : dict of str to NDArray

        Returns
        -------
        dict of str to NDArray
            ``args`` without the packed vector, with the pieces added.
        """
        args = dict(args)
        name = self._parameter.name
        if name not in args:
            raise RNNCellError(f"FusedRNNCell.unpack_weights: args have no {name!r}")
        arr = args.pop(name)
        size = arr.size
        try:
            ni = fused_rnn_input_size(
                size, self._mode, self._num_layers, self._num_hidden, self._bidirectional
            )
        except ValueError as err:
            raise RNNCellError(f"FusedRNNCell.unpack_weights: {name}: {err}") from None
        flat, p = arr.reshape((-1,)), 0
        for piece, shape in self._layout(ni):
            n = 1
            for d in shape:
                n *= d
            args[piece] = flat[p : p + n].reshape(shape).copy()
            p += n
        return args

    def pack_weights(self, args):
        """Join the pieces :meth:`unpack_weights` makes into ``<prefix>parameters``.

        Parameters
        ----------
        args : dict of str to NDArray

        Returns
        -------
        dict of str to NDArray
        """
        args = dict(args)
        first = f"{self._prefix}l0_i2h{self._gate_names[0]}_weight"
        if first not in args:
            raise RNNCellError(f"FusedRNNCell.pack_weights: args have no {first!r}")
        pieces = []
        for piece, shape in self._layout(args[first].shape[1]):
            if piece not in args:
                raise RNNCellError(f"FusedRNNCell.pack_weights: args have no {piece!r}")
            value = args.pop(piece)
            if tuple(value.shape) != shape:
                raise RNNCellError(
                    f"FusedRNNCell.pack_weights: {piece} has shape {tuple(value.shape)}, "
                    f"the cell needs {shape}"
                )
            pieces.append(value.reshape((-1,)))
        args[self._parameter.name] = ndarray.concat(*pieces, dim=0)
        return args

    def __call__(self, inputs, states):
        raise RNNCellStepError("a FusedRNNCell cannot be stepped: call unroll (or unfuse())")

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        """Run the sequence through one ``RNN`` op (named ``<prefix>rnn``).

        Parameters and returns as :meth:`BaseRNNCell.unroll`; the states are ``[]``
        unless ``get_next_state``.
        """
        self.reset()
        inputs, axis = _normalize_sequence(length, inputs, layout, True)
        if axis not in (0, 1):
            raise RNNCellError(f"FusedRNNCell.unroll: layout {layout!r} is not 'NTC' or 'TNC'")
        if axis == 1:
            inputs = symbol.swapaxes(inputs, dim1=0, dim2=1)
        if begin_state is None:
            begin_state = self.begin_state()
        states = {"state": begin_state[0]}
        if self._mode == "lstm":
            states["state_cell"] = begin_state[1]
        rnn = symbol.RNN(
            data=inputs,
            parameters=self._parameter,
            state_size=self._num_hidden,
            num_layers=self._num_layers,
            bidirectional=self._bidirectional,
            p=self._dropout,
            state_outputs=self._get_next_state,
            mode=self._mode,
            name=self._prefix + "rnn",
            **states,
        )
        if not self._get_next_state:
            outputs, states = rnn, []
        else:
            n_states = 2 if self._mode == "lstm" else 1
            outputs, states = rnn[0], [rnn[i + 1] for i in range(n_states)]
            for s in states:
                s._set_attr(__layout__="LNC")
        if axis == 1:
            outputs = symbol.swapaxes(outputs, dim1=0, dim2=1)
        outputs, _ = _normalize_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def unfuse(self):
        """The equivalent :class:`SequentialRNNCell` of step cells (layer ``i``'s cells have
        prefixes ``<prefix>l<i>_`` / ``<prefix>r<i>_``, so their unpacked weights match).

        Returns
        -------
        SequentialRNNCell
        """
        h = self._num_hidden

        def make(prefix):
            if self._mode == "lstm":
                return LSTMCell(h, prefix=prefix, forget_bias=self._forget_bias)
            if self._mode == "gru":
                return GRUCell(h, prefix=prefix)
            return RNNCell(h, activation=self._mode[4:], prefix=prefix)

        stack = SequentialRNNCell()
        for i in range(self._num_layers):
            if self._bidirectional:
                stack.add(
                    BidirectionalCell(
                        make(f"{self._prefix}l{i}_"),
                        make(f"{self._prefix}r{i}_"),
                        output_prefix=f"{self._prefix}bi_l{i}_",
                    )
                )
            else:
                stack.add(make(f"{self._prefix}l{i}_"))
            if self._dropout > 0 and i != self._num_layers - 1:
                stack.add(DropoutCell(self._dropout, prefix=f"{self._prefix}_dropout{i}_"))
        return stack
