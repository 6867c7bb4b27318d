"""Convolutional ``mx.rnn`` cells: ``ConvRNNCell``, ``ConvLSTMCell``, ``ConvGRUCell``.

The input-to-state and state-to-state transforms are convolutions (``<prefix>i2h_weight``
of shape ``(gates * num_hidden, C, kh, kw)``, ``<prefix>h2h_weight``...); the state-to-state
convolution keeps the spatial size (stride 1, "same" padding, so its kernel must be odd).
The state shape is the i2h convolution's output for ``input_shape``.
"""

from __future__ import annotations

import functools

from .. import symbol
from .rnn_cell import BaseRNNCell, RNNCellError, RNNCellStepError

__all__ = ["BaseConvRNNCell", "ConvRNNCell", "ConvLSTMCell", "ConvGRUCell"]

_LEAKY = functools.partial(symbol.LeakyReLU, act_type="leaky", slope=0.2)


class BaseConvRNNCell(BaseRNNCell):
    """Base class of the convolutional cells.

    Parameters
    ----------
    input_shape : tuple of int
        Shape of one step's input (with the batch axis).
    num_hidden : int
        Channels of the state.
    h2h_kernel, h2h_dilate : tuple of int
        State-to-state convolution (odd kernel).
    i2h_kernel, i2h_stride, i2h_pad, i2h_dilate : tuple of int
        Input-to-state convolution.
    i2h_weight_initializer, h2h_weight_initializer : str or Initializer or None
    i2h_bias_initializer, h2h_bias_initializer : str or Initializer
    activation : str or callable
        ``Activation``'s ``act_type`` or a function of a symbol (and ``name=``).
    prefix : str
    params : RNNParams, optional
    conv_layout : str, default 'NCHW'
    """

    def __init__(
        self,
        input_shape,
        num_hidden,
        h2h_kernel,
        h2h_dilate,
        i2h_kernel,
        i2h_stride,
        i2h_pad,
        i2h_dilate,
        i2h_weight_initializer,
        h2h_weight_initializer,
        i2h_bias_initializer,
        h2h_bias_initializer,
        activation,
        prefix="",
        params=None,
        conv_layout="NCHW",
    ):
        super().__init__(prefix=prefix, params=params)
        if any(k % 2 != 1 for k in h2h_kernel):
            raise RNNCellError(
                f"{type(self).__name__}: h2h_kernel must have odd sizes (the state keeps its "
                f"spatial shape), got {tuple(h2h_kernel)}"
            )
        self._h2h_kernel = tuple(h2h_kernel)
        self._h2h_dilate = tuple(h2h_dilate)
        self._h2h_pad = tuple(d * (k - 1) // 2 for k, d in zip(h2h_kernel, h2h_dilate, strict=True))
        self._i2h_kernel = tuple(i2h_kernel)
        self._i2h_stride = tuple(i2h_stride)
        self._i2h_pad = tuple(i2h_pad)
        self._i2h_dilate = tuple(i2h_dilate)
        self._num_hidden = num_hidden
        self._input_shape = tuple(input_shape)
        self._conv_layout = conv_layout
        self._activation = activation

        probe = symbol.Convolution(
            data=symbol.Variable("data"),
            num_filter=num_hidden,
            kernel=self._i2h_kernel,
            stride=self._i2h_stride,
            pad=self._i2h_pad,
            dilate=self._i2h_dilate,
            layout=conv_layout,
        )
        out_shape = probe.infer_shape(data=self._input_shape)[1][0]
        self._state_shape = (0,) + tuple(out_shape[1:])

        self._iW = self.params.get("i2h_weight", init=i2h_weight_initializer)
        self._hW = self.params.get("h2h_weight", init=h2h_weight_initializer)
        self._iB = self.params.get("i2h_bias", init=i2h_bias_initializer)
        self._hB = self.params.get("h2h_bias", init=h2h_bias_initializer)

    @property
    def _num_gates(self):
        return len(self._gate_names)

    @property
    def state_info(self):
        info = {"shape": self._state_shape, "__layout__": self._conv_layout}
        return [dict(info) for _ in range(self._num_states)]

    _num_states = 2

    def _conv_forward(self, inputs, states, name):
        filters = self._num_hidden * self._num_gates
        i2h = symbol.Convolution(
            data=inputs,
            weight=self._iW,
            bias=self._iB,
            num_filter=filters,
            kernel=self._i2h_kernel,
            stride=self._i2h_stride,
            pad=self._i2h_pad,
            dilate=self._i2h_dilate,
            layout=self._conv_layout,
            name=f"{name}i2h",
        )
        h2h = symbol.Convolution(
            data=states[0],
            weight=self._hW,
            bias=self._hB,
            num_filter=filters,
            kernel=self._h2h_kernel,
            stride=(1,) * len(self._h2h_kernel),
            pad=self._h2h_pad,
            dilate=self._h2h_dilate,
            layout=self._conv_layout,
            name=f"{name}h2h",
        )
        return i2h, h2h

    def __call__(self, inputs, states):
        raise RNNCellStepError("BaseConvRNNCell is abstract: use ConvRNNCell, ConvLSTMCell...")


def _conv_init(cls):
    """Give ``cls`` MXNet's constructor (defaults and a class-specific prefix)."""

    def __init__(
        self,
        input_shape,
        num_hidden,
        h2h_kernel=(3, 3),
        h2h_dilate=(1, 1),
        i2h_kernel=(3, 3),
        i2h_stride=(1, 1),
        i2h_pad=(1, 1),
        i2h_dilate=(1, 1),
        i2h_weight_initializer=None,
        h2h_weight_initializer=None,
        i2h_bias_initializer="zeros",
        h2h_bias_initializer="zeros",
        activation=_LEAKY,
        prefix=cls._default_prefix,
        params=None,
        conv_layout="NCHW",
    ):
        BaseConvRNNCell.__init__(
            self,
            input_shape,
            num_hidden,
            h2h_kernel,
            h2h_dilate,
            i2h_kernel,
            i2h_stride,
            i2h_pad,
            i2h_dilate,
            i2h_weight_initializer,
            h2h_weight_initializer,
            i2h_bias_initializer,
            h2h_bias_initializer,
            activation,
            prefix=prefix,
            params=params,
            conv_layout=conv_layout,
        )

    cls.__init__ = __init__
    return cls


_PARAMS_DOC = """
    Parameters
    ----------
    input_shape : tuple of int
        Shape of one step's input, batch axis included (e.g. ``(N, C, H, W)``).
    num_hidden : int
        Channels of the state.
    h2h_kernel : tuple of int, default (3, 3)
    h2h_dilate : tuple of int, default (1, 1)
    i2h_kernel : tuple of int, default (3, 3)
    i2h_stride : tuple of int, default (1, 1)
    i2h_pad : tuple of int, default (1, 1)
    i2h_dilate : tuple of int, default (1, 1)
    i2h_weight_initializer, h2h_weight_initializer : Initializer, optional
    i2h_bias_initializer, h2h_bias_initializer : Initializer or str, default 'zeros'
    activation : str or callable, default LeakyReLU(slope=0.2)
    prefix : str
    params : RNNParams, optional
    conv_layout : str, default 'NCHW'
"""


@_conv_init
class ConvRNNCell(BaseConvRNNCell):
    __doc__ = "Convolutional simple RNN cell: ``h' = act(conv(x) + conv(h))``.\n" + _PARAMS_DOC

    _default_prefix = "ConvRNN_"
    _num_states = 1

    @property
    def _gate_names(self):
        return ("",)

    def __call__(self, inputs, states):
        self._counter += 1
        name = f"{self._prefix}t{self._counter}_"
        i2h, h2h = self._conv_forward(inputs, states, name)
        output = self._get_activation(i2h + h2h, self._activation, name=f"{name}out")
        return output, [output]


@_conv_init
class ConvLSTMCell(BaseConvRNNCell):
    __doc__ = "Convolutional LSTM cell (Shi et al. 2015), gates i, f, c, o.\n" + _PARAMS_DOC

    _default_prefix = "ConvLSTM_"
    _num_states = 2

    @property
    def _gate_names(self):
        return ["_i", "_f", "_c", "_o"]

    def __call__(self, inputs, states):
        self._counter += 1
        name = f"{self._prefix}t{self._counter}_"
        i2h, h2h = self._conv_forward(inputs, states, name)
        gates = symbol.SliceChannel(
            i2h + h2h, num_outputs=4, axis=self._conv_layout.find("C"), name=f"{name}slice"
        )
        in_gate = symbol.Activation(gates[0], act_type="sigmoid", name=f"{name}i")
        forget_gate = symbol.Activation(gates[1], act_type="sigmoid", name=f"{name}f")
        in_transform = self._get_activation(gates[2], self._activation, name=f"{name}c")
        out_gate = symbol.Activation(gates[3], act_type="sigmoid", name=f"{name}o")
        next_c = symbol.elemwise_add(
            forget_gate * states[1], in_gate * in_transform, name=f"{name}state"
        )
        next_h = symbol.elemwise_mul(
            out_gate, self._get_activation(next_c, self._activation), name=f"{name}out"
        )
        return next_h, [next_h, next_c]


@_conv_init
class ConvGRUCell(BaseConvRNNCell):
    __doc__ = "Convolutional GRU cell, gates r, z, o (new).\n" + _PARAMS_DOC

    _default_prefix = "ConvGRU_"
    _num_states = 1

    @property
    def _gate_names(self):
        return ["_r", "_z", "_o"]

    def __call__(self, inputs, states):
        self._counter += 1
        name = f"{self._prefix}t{self._counter}_"
        i2h, h2h = self._conv_forward(inputs, states, name)
        axis = self._conv_layout.find("C")
        i2h_r, i2h_z, i2h = symbol.SliceChannel(
            i2h, num_outputs=3, axis=axis, name=f"{name}_i2h_slice"
        )
        h2h_r, h2h_z, h2h = symbol.SliceChannel(
            h2h, num_outputs=3, axis=axis, name=f"{name}_h2h_slice"
        )
        reset = symbol.Activation(i2h_r + h2h_r, act_type="sigmoid", name=f"{name}_r_act")
        update = symbol.Activation(i2h_z + h2h_z, act_type="sigmoid", name=f"{name}_z_act")
        candidate = self._get_activation(i2h + reset * h2h, self._activation, name=f"{name}_h_act")
        next_h = symbol.elemwise_add(
            (1.0 - update) * candidate, update * states[0], name=f"{name}out"
        )
        return next_h, [next_h]
