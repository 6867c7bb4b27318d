"""Fused recurrent layers ``RNN``, ``LSTM``, ``GRU`` (MXNet 1.x ``gluon.rnn.rnn_layer``).

A layer holds MXNet's parameters (``l0_i2h_weight``, ``r1_h2h_bias``,
``l0_h2r_weight``...; in files ``_unfused.0.i2h_weight`` or, bidirectional,
``_unfused.0.l_cell.i2h_weight``, as MXNet writes them), packs them with
``_rnn_param_concat`` and runs the registry's ``RNN`` op: one ``lax.scan`` per
layer and direction. Exported, a layer is the same two nodes MXNet writes.
"""

from __future__ import annotations

import re

from ... import ndarray, symbol
from ..._ops.defs.rnn_scan import GATES, layer_shapes
from ...base import MXNetError
from ...ndarray.ndarray import NDArray
from ...symbol.symbol import Symbol
from ..hybrid import HybridBlock
from . import rnn_cell

__all__ = ["RNN", "LSTM", "GRU", "RecurrentStateError"]

_KEY = re.compile(r"(l|r)(\d+)_(i2h|h2h|h2r)_(weight|bias)\Z")


class RecurrentStateError(MXNetError, ValueError):
    """A recurrent layer got states of the wrong shape."""


class _RNNLayer(HybridBlock):
    """The implementation shared by :class:`RNN`, :class:`LSTM` and :class:`GRU`."""

    _auto_jit = False  # eager: two cached op kernels (shared by every layer of a config)

    def __init__(
        self,
        hidden_size,
        num_layers,
        layout,
        dropout,
        bidirectional,
        input_size,
        i2h_weight_initializer,
        h2h_weight_initializer,
        i2h_bias_initializer,
        h2h_bias_initializer,
        mode,
        projection_size,
        h2r_weight_initializer,
        lstm_state_clip_min,
        lstm_state_clip_max,
        lstm_state_clip_nan,
        dtype,
        use_sequence_length=False,
        **kwargs,
    ):
        super().__init__(**kwargs)
        if layout not in ("TNC", "NTC"):
            raise MXNetError(f"Invalid layout {layout}; must be one of ['TNC' or 'NTC']")
        self._hidden_size = hidden_size
        self._projection_size = projection_size if projection_size else None
        self._num_layers = num_layers
        self._mode = mode
        self._layout = layout
        self._dropout = dropout
        self._dir = 2 if bidirectional else 1
        self._input_size = input_size
        self._i2h_weight_initializer = i2h_weight_initializer
        self._h2h_weight_initializer = h2h_weight_initializer
        self._i2h_bias_initializer = i2h_bias_initializer
        self._h2h_bias_initializer = h2h_bias_initializer
        self._h2r_weight_initializer = h2r_weight_initializer
        self._lstm_state_clip_min = lstm_state_clip_min
        self._lstm_state_clip_max = lstm_state_clip_max
        self._lstm_state_clip_nan = lstm_state_clip_nan
        self._dtype = dtype
        self._use_sequence_length = use_sequence_length
        self.skip_states = None
        self._gates = GATES[mode]
        inits = {
            "i2h_weight": i2h_weight_initializer,
            "h2h_weight": h2h_weight_initializer,
            "h2r_weight": h2r_weight_initializer,
            "i2h_bias": i2h_bias_initializer,
            "h2h_bias": h2h_bias_initializer,
        }
        # MXNet's registration order: per layer and direction i2h/h2h weight, biases, h2r
        for name, shape in sorted(self._shapes(input_size), key=_registration_order):
            p = self.params.get(
                name,
                shape=shape,
                init=inits[name.split("_", 1)[1]],
                allow_deferred_init=True,
                dtype=dtype,
            )
            setattr(self, name, p)

    def _shapes(self, input_size):
        return layer_shapes(
            self._mode,
            self._num_layers,
            input_size,
            self._hidden_size,
            self._dir == 2,
            self._projection_size,
        )

    def __repr__(self):
        s = f"{type(self).__name__}({{mapping}}, {self._layout}"
        if self._num_layers != 1:
            s += f", num_layers={self._num_layers}"
        if self._dropout != 0:
            s += f", dropout={self._dropout}"
        if self._dir == 2:
            s += ", bidirectional"
        shape = self.l0_i2h_weight.shape
        mapping = f"{shape[1] if shape[1] else None} -> {shape[0] // self._gates}"
        return (s + ")").format(mapping=mapping)

    def _local_params(self):
        # file keys as MXNet writes them (compatible with the unfused cells' structure)
        bidirectional = any(_KEY.match(k).group(1) == "r" for k in self._reg_params)
        ret = {}
        for key, val in self._reg_params.items():
            d, layer, g, t = _KEY.match(key).groups()
            cell = f"{d}_cell." if bidirectional else ""
            ret[f"_unfused.{layer}.{cell}{g}_{t}"] = val
        return ret

    def state_info(self, batch_size=0):
        raise NotImplementedError

    def _unfuse(self):
        """A stack of cells sharing this layer's parameters (no projection or clipping)."""
        if self._projection_size:
            raise MXNetError("_unfuse does not support a projection layer")
        if self._lstm_state_clip_min is not None or self._lstm_state_clip_max is not None:
            raise MXNetError("_unfuse does not support state clipping")
        mode, h = self._mode, self._hidden_size

        def get_cell(**kw):
            if mode in ("rnn_relu", "rnn_tanh"):
                return rnn_cell.RNNCell(h, activation=mode[4:], **kw)
            if mode == "lstm":
                return rnn_cell.LSTMCell(h, **kw)
            return rnn_cell.GRUCell(h, **kw)

        stack = rnn_cell.HybridSequentialRNNCell(prefix=self.prefix, params=self.params)
        with stack.name_scope():
            ni = self._input_size
            for i in range(self._num_layers):
                kw = {
                    "input_size": ni,
                    "i2h_weight_initializer": self._i2h_weight_initializer,
                    "h2h_weight_initializer": self._h2h_weight_initializer,
                    "i2h_bias_initializer": self._i2h_bias_initializer,
                    "h2h_bias_initializer": self._h2h_bias_initializer,
                }
                if self._dir == 2:
                    stack.add(
                        rnn_cell.BidirectionalCell(
                            get_cell(prefix=f"l{i}_", **kw), get_cell(prefix=f"r{i}_", **kw)
                        )
                    )
                else:
                    stack.add(get_cell(prefix=f"l{i}_", **kw))
                if self._dropout > 0 and i != self._num_layers - 1:
                    stack.add(rnn_cell.DropoutCell(self._dropout))
                ni = h * self._dir
        return stack

    def cast(self, dtype):
        super().cast(dtype)
        self._dtype = dtype

    def begin_state(self, batch_size=0, func=ndarray.zeros, **kwargs):
        """Initial states: ``func(name=..., shape=(L*D, batch_size, H), **kwargs)`` each.

        Parameters
        ----------
        batch_size : int
            The batch size ('N' of the layout).
        func : callable, default ``nd.zeros``
            ``nd.zeros``, ``nd.ones``, ``sym.zeros``, ``sym.var``...
        **kwargs
            More arguments for ``func`` (``ctx``, ``dtype``...).

        Returns
        -------
        list of NDArray or Symbol
        """
        states = []
        for i, info in enumerate(self.state_info(batch_size)):
            info = dict(info or {})
            info.update(kwargs)
            states.append(func(name=f"{self.prefix}h0_{i}", **info))
        return states

    # ------------------------------------------------------------ calling
    def __call__(self, inputs, states=None, sequence_length=None, **kwargs):
        self.skip_states = states is None
        if states is not None and not isinstance(states, (list, tuple)):
            states = [states]
        self.infer_shape(inputs)
        args = list(states) if states is not None else []
        if self._use_sequence_length:
            if sequence_length is None:
                raise MXNetError(
                    f"{type(self).__name__} '{self.name}' was created with "
                    f"use_sequence_length=True: pass sequence_length=<(batch,) lengths>"
                )
            args.append(sequence_length)
        return super().__call__(inputs, *args, **kwargs)

    def infer_shape(self, inputs, *args):
        """Give deferred parameters their shapes from ``inputs`` (its last axis is the
        input size)."""
        shape = getattr(inputs, "shape", None) if _has_shape(inputs) else None
        if shape is None or not any(p._data is None for p in self._reg_params.values()):
            return
        for name, full in self._shapes(shape[-1]):
            p = self._reg_params[name]
            if p._data is None and p._deferred is not None:
                p._finish_deferred_init(full)
            elif p._data is None:
                p.shape = full

    def hybrid_forward(self, F, inputs, *args, **params):
        seq = args[-1] if self._use_sequence_length else None
        states = list(args[:-1] if self._use_sequence_length else args)
        skip = not states
        if skip:
            states = self._zero_states(F, inputs)
        else:
            self._check_states(inputs, states)
        out, new_states = self._forward_kernel(F, inputs, states, seq, **params)
        return out if skip else (out, new_states)

    def _zero_states(self, F, inputs):
        if not _has_shape(inputs):  # a declarative symbol: MXNet's zeros of unknown batch
            return self.begin_state(0, func=symbol.zeros)
        axis = self._layout.find("N")
        out = []
        for info in self.state_info(1):
            z = F.zeros(shape=info["shape"], dtype=inputs.dtype)
            out.append(F.broadcast_like(z, inputs, lhs_axes=(1,), rhs_axes=(axis,)))
        return out

    def _check_states(self, inputs, states):
        if not _has_shape(inputs):
            return
        infos = self.state_info(inputs.shape[self._layout.find("N")])
        if len(states) != len(infos):
            raise RecurrentStateError(
                f"{type(self).__name__} '{self.name}' takes {len(infos)} state(s), got "
                f"{len(states)}"
            )
        for s, info in zip(states, infos):
            if _has_shape(s) and tuple(s.shape) != tuple(info["shape"]):
                raise RecurrentStateError(
                    f"Invalid recurrent state shape. Expecting {info['shape']}, got "
                    f"{tuple(s.shape)} ({type(self).__name__} '{self.name}')."
                )

    def _forward_kernel(self, F, inputs, states, sequence_length, **params):
        if self._layout == "NTC":
            inputs = F.swapaxes(inputs, dim1=0, dim2=1)
        names = [n for n, _ in self._shapes(self.l0_i2h_weight.shape[1])]
        packed = F._rnn_param_concat(*[params[n].reshape(-1) for n in names], dim=0)
        rnn_args = list(states)
        if self._use_sequence_length:
            rnn_args.append(sequence_length)
        rnn = F.RNN(
            inputs,
            packed,
            *rnn_args,
            use_sequence_length=self._use_sequence_length,
            state_size=self._hidden_size,
            projection_size=self._projection_size,
            num_layers=self._num_layers,
            bidirectional=self._dir == 2,
            p=self._dropout,
            state_outputs=True,
            mode=self._mode,
            lstm_state_clip_min=self._lstm_state_clip_min,
            lstm_state_clip_max=self._lstm_state_clip_max,
            lstm_state_clip_nan=self._lstm_state_clip_nan,
        )
        if self._mode == "lstm":
            outputs, states = rnn[0], [rnn[1], rnn[2]]
        else:
            outputs, states = rnn[0], [rnn[1]]
        if self._layout == "NTC":
            outputs = F.swapaxes(outputs, dim1=0, dim2=1)
        return outputs, states


def _has_shape(x):
    if isinstance(x, NDArray):
        return True
    return isinstance(x, Symbol) and x._value is not None


def _registration_order(item):
    d, layer, g, t = _KEY.match(item[0]).groups()
    return (
        int(layer),
        d,
        ("i2h_weight", "h2h_weight", "i2h_bias", "h2h_bias", "h2r_weight").index(f"{g}_{t}"),
    )


def _state(layer, batch_size, size):
    return {
        "shape": (layer._num_layers * layer._dir, batch_size, size),
        "__layout__": "LNC",
        "dtype": layer._dtype,
    }


class RNN(_RNNLayer):
    """Multi-layer Elman RNN with ``tanh`` or ``relu``:
    ``h_t = act(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh)``.

    Parameters
    ----------
    hidden_size : int
    num_layers : int, default 1
    activation : {'relu', 'tanh'}, default 'relu'
    layout : {'TNC', 'NTC'}, default 'TNC'
    dropout : float, default 0
        Dropout on the outputs of every layer but the last (training only).
    bidirectional : bool, default False
    i2h_weight_initializer, h2h_weight_initializer : Initializer or str
    i2h_bias_initializer, h2h_bias_initializer : Initializer or str, default 'zeros'
    input_size : int, default 0 (inferred from the first input)
    dtype : str, default 'float32'
    use_sequence_length : bool, default False
        Take ``sequence_length`` (N,): steps past a sequence's length output zeros
        and the returned states are those of its last valid step.

    Inputs: ``data`` (T, N, C) in ``layout``; optional ``states`` (L*D, N, H).
    Outputs: ``out`` (T, N, D*H); ``out_states`` only when states were given.

    Examples
    --------
    >>> import gluonjax as mx
    >>> layer = mx.gluon.rnn.RNN(8, 2); layer.initialize()
    >>> x = mx.nd.ones((5, 3, 4))
    >>> layer(x).shape
    (5, 3, 8)
    >>> out, hn = layer(x, layer.begin_state(3))
    >>> hn[0].shape
    (2, 3, 8)
    """

    def __init__(
        self,
        hidden_size,
        num_layers=1,
        activation="relu",
        layout="TNC",
        dropout=0,
        bidirectional=False,
        i2h_weight_initializer=None,
        h2h_weight_initializer=None,
        i2h_bias_initializer="zeros",
        h2h_bias_initializer="zeros",
        input_size=0,
        dtype="float32",
        **kwargs,
    ):
        if activation not in ("relu", "tanh"):
            raise MXNetError(f"RNN: activation must be 'relu' or 'tanh', got {activation!r}")
        super().__init__(
            hidden_size,
            num_layers,
            layout,
            dropout,
            bidirectional,
            input_size,
            i2h_weight_initializer,
            h2h_weight_initializer,
            i2h_bias_initializer,
            h2h_bias_initializer,
            "rnn_" + activation,
            None,
            None,
            None,
            None,
            False,
            dtype,
            **kwargs,
        )

    def state_info(self, batch_size=0):
        return [_state(self, batch_size, self._hidden_size)]


class LSTM(_RNNLayer):
    """Multi-layer LSTM (gates ``i, f, g, o``), optionally with a projection (LSTMP)
    and cell-state clipping.

    Parameters
    ----------
    hidden_size, num_layers, layout, dropout, bidirectional, input_size, dtype :
        as for :class:`RNN`.
    projection_size : int, optional
        Project each ``h_t`` to this size (``h2r_weight``); the projection is the
        output and the recurrent state.
    h2r_weight_initializer : Initializer or str, optional
    state_clip_min, state_clip_max : float, optional
        Clip the cell state to ``[min, max]`` after each step (both or neither).
    state_clip_nan : bool, default False
        Also replace a NaN cell state by ``state_clip_min``.

    Inputs: ``data``; optional ``states`` ``[h0 (L*D, N, P or H), c0 (L*D, N, H)]``.
    Outputs: ``out`` (T, N, D*(P or H)); ``[hn, cn]`` only when states were given.

    Examples
    --------
    >>> import gluonjax as mx
    >>> layer = mx.gluon.rnn.LSTM(
    ...     6, num_layers=2, layout='NTC', bidirectional=True, prefix='lstm0_'
    ... )
    >>> layer.initialize()
    >>> out, (h, c) = layer(mx.nd.ones((3, 5, 4)), layer.begin_state(3))
    >>> out.shape, h.shape
    ((3, 5, 12), (4, 3, 6))
    >>> sorted(layer.collect_params())[:2]
    ['lstm0_l0_h2h_bias', 'lstm0_l0_h2h_weight']
    """

    def __init__(
        self,
        hidden_size,
        num_layers=1,
        layout="TNC",
        dropout=0,
        bidirectional=False,
        input_size=0,
        i2h_weight_initializer=None,
        h2h_weight_initializer=None,
        i2h_bias_initializer="zeros",
        h2h_bias_initializer="zeros",
        projection_size=None,
        h2r_weight_initializer=None,
        state_clip_min=None,
        state_clip_max=None,
        state_clip_nan=False,
        dtype="float32",
        **kwargs,
    ):
        super().__init__(
            hidden_size,
            num_layers,
            layout,
            dropout,
            bidirectional,
            input_size,
            i2h_weight_initializer,
            h2h_weight_initializer,
            i2h_bias_initializer,
            h2h_bias_initializer,
            "lstm",
            projection_size,
            h2r_weight_initializer,
            state_clip_min,
            state_clip_max,
            state_clip_nan,
            dtype,
            **kwargs,
        )

    def state_info(self, batch_size=0):
        h = _state(self, batch_size, self._projection_size or self._hidden_size)
        return [h, _state(self, batch_size, self._hidden_size)]


class GRU(_RNNLayer):
    """Multi-layer GRU, cuDNN's variant (gates ``r, z, n``; the reset gate multiplies
    ``W_hn h + b_hn``). Arguments, inputs and outputs as for :class:`RNN`.

    Examples
    --------
    >>> import gluonjax as mx
    >>> layer = mx.gluon.rnn.GRU(4, input_size=3); layer.initialize()
    >>> layer.l0_i2h_weight.shape
    (12, 3)
    """

    def __init__(
        self,
        hidden_size,
        num_layers=1,
        layout="TNC",
        dropout=0,
        bidirectional=False,
        input_size=0,
        i2h_weight_initializer=None,
        h2h_weight_initializer=None,
        i2h_bias_initializer="zeros",
        h2h_bias_initializer="zeros",
        dtype="float32",
        **kwargs,
    ):
        super().__init__(
            hidden_size,
            num_layers,
            layout,
            dropout,
            bidirectional,
            input_size,
            i2h_weight_initializer,
            h2h_weight_initializer,
            i2h_bias_initializer,
            h2h_bias_initializer,
            "gru",
            None,
            None,
            None,
            None,
            False,
            dtype,
            **kwargs,
        )

    def state_info(self, batch_size=0):
        return [_state(self, batch_size, self._hidden_size)]
