"""Convolutional recurrent cells (Shi et al., 2015): ``Conv{1,2,3}D{RNN,LSTM,GRU}Cell``.

The input-to-state and state-to-state transforms are convolutions; the state
keeps the spatial size of the i2h convolution's output (the h2h convolution pads
``dilate * (kernel - 1) / 2``, so its kernel must be odd).
"""

from __future__ import annotations

from math import floor
from numbers import Number

from ....base import MXNetError
from ...rnn import HybridRecurrentCell

__all__ = [
    "Conv1DRNNCell",
    "Conv2DRNNCell",
    "Conv3DRNNCell",
    "Conv1DLSTMCell",
    "Conv2DLSTMCell",
    "Conv3DLSTMCell",
    "Conv1DGRUCell",
    "Conv2DGRUCell",
    "Conv3DGRUCell",
]


def _conv_out_size(dimensions, kernels, paddings, dilations):
    return tuple(
        int(floor(x + 2 * p - d * (k - 1) - 1) + 1) if x else 0
        for x, k, p, d in zip(dimensions, kernels, paddings, dilations)
    )


def _tuple(spec, dims, what):
    if isinstance(spec, Number):
        return (int(spec),) * dims
    spec = tuple(spec)
    if len(spec) != dims:
        raise MXNetError(
            f"For {dims}D convolution, {what} must be an int or a tuple of length {dims}, "
            f"got {spec}"
        )
    return spec


class _BaseConvRNNCell(HybridRecurrentCell):
    """Shared parameters, shapes and the two convolutions of a convolutional cell."""

    _gate_names = ("",)

    def __init__(
        self,
        input_shape,
        hidden_channels,
        i2h_kernel,
        h2h_kernel,
        i2h_pad,
        i2h_dilate,
        h2h_dilate,
        i2h_weight_initializer,
        h2h_weight_initializer,
        i2h_bias_initializer,
        h2h_bias_initializer,
        dims,
        conv_layout,
        activation,
        prefix=None,
        params=None,
    ):
        super().__init__(prefix=prefix, params=params)
        self._hidden_channels = hidden_channels
        self._input_shape = tuple(input_shape)
        self._conv_layout = conv_layout
        self._activation = activation
        self._i2h_kernel = _tuple(i2h_kernel, dims, "i2h_kernel")
        self._stride = (1,) * dims
        self._i2h_pad = _tuple(i2h_pad, dims, "i2h_pad")
        self._i2h_dilate = _tuple(i2h_dilate, dims, "i2h_dilate")
        self._h2h_kernel = _tuple(h2h_kernel, dims, "h2h_kernel")
        if any(k % 2 == 0 for k in self._h2h_kernel):
            raise MXNetError(f"Only support odd number, get h2h_kernel= {h2h_kernel}")
        self._h2h_dilate = _tuple(h2h_dilate, dims, "h2h_dilate")
        (
            self._channel_axis,
            self._in_channels,
            i2h_shape,
            h2h_shape,
            self._h2h_pad,
            self._state_shape,
        ) = self._decide_shapes()
        n = hidden_channels * len(self._gate_names)
        get = self.params.get
        self.i2h_weight = get(
            "i2h_weight", shape=i2h_shape, init=i2h_weight_initializer, allow_deferred_init=True
        )
        self.h2h_weight = get(
            "h2h_weight", shape=h2h_shape, init=h2h_weight_initializer, allow_deferred_init=True
        )
        self.i2h_bias = get(
            "i2h_bias", shape=(n,), init=i2h_bias_initializer, allow_deferred_init=True
        )
        self.h2h_bias = get(
            "h2h_bias", shape=(n,), init=h2h_bias_initializer, allow_deferred_init=True
        )

    def _decide_shapes(self):
        channel_axis = self._conv_layout.find("C")
        shape = self._input_shape
        in_channels = shape[channel_axis - 1]
        dimensions = shape[1:] if channel_axis == 1 else shape[:-1]
        total = self._hidden_channels * len(self._gate_names)
        out = _conv_out_size(dimensions, self._i2h_kernel, self._i2h_pad, self._i2h_dilate)
        h2h_pad = tuple(d * (k - 1) // 2 for d, k in zip(self._h2h_dilate, self._h2h_kernel))
        if channel_axis == 1:
            i2h = (total, in_channels) + self._i2h_kernel
            h2h = (total, self._hidden_channels) + self._h2h_kernel
            state = (self._hidden_channels,) + out
        else:
            i2h = (total,) + self._i2h_kernel + (in_channels,)
            h2h = (total,) + self._h2h_kernel + (self._hidden_channels,)
            state = out + (self._hidden_channels,)
        return channel_axis, in_channels, i2h, h2h, h2h_pad, state

    def __repr__(self):
        shape = self.i2h_weight.shape
        in_channels = shape[1 if self._channel_axis == 1 else -1]
        act = f", {self._activation}" if isinstance(self._activation, str) else ""
        return (
            f"{type(self).__name__}({in_channels if in_channels else None} -> {shape[0]}"
            f"{act}, {self._conv_layout})"
        )

    def state_info(self, batch_size=0):
        info = {"shape": (batch_size,) + self._state_shape, "__layout__": self._conv_layout}
        return [dict(info) for _ in range(self._n_states)]

    _n_states = 1

    def _conv_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias, prefix):
        n = self._hidden_channels * len(self._gate_names)
        i2h = F.Convolution(
            data=inputs,
            num_filter=n,
            kernel=self._i2h_kernel,
            stride=self._stride,
            pad=self._i2h_pad,
            dilate=self._i2h_dilate,
            weight=i2h_weight,
            bias=i2h_bias,
            layout=self._conv_layout,
            name=prefix + "i2h",
        )
        h2h = F.Convolution(
            data=states[0],
            num_filter=n,
            kernel=self._h2h_kernel,
            dilate=self._h2h_dilate,
            pad=self._h2h_pad,
            stride=self._stride,
            weight=h2h_weight,
            bias=h2h_bias,
            layout=self._conv_layout,
            name=prefix + "h2h",
        )
        return i2h, h2h


class _ConvRNNCell(_BaseConvRNNCell):
    def _alias(self):
        return "conv_rnn"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix = f"t{self._counter}_"
        i2h, h2h = self._conv_forward(
            F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias, prefix
        )
        output = self._get_activation(F, i2h + h2h, self._activation, name=prefix + "out")
        return output, [output]


class _ConvLSTMCell(_BaseConvRNNCell):
    _gate_names = ("_i", "_f", "_c", "_o")
    _n_states = 2

    def _alias(self):
        return "conv_lstm"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix = f"t{self._counter}_"
        i2h, h2h = self._conv_forward(
            F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias, prefix
        )
        gates = i2h + h2h
        s = F.SliceChannel(gates, num_outputs=4, name=prefix + "slice", axis=self._channel_axis)
        in_gate = F.Activation(s[0], act_type="sigmoid", name=prefix + "i")
        forget_gate = F.Activation(s[1], act_type="sigmoid", name=prefix + "f")
        in_transform = self._get_activation(F, s[2], self._activation, name=prefix + "c")
        out_gate = F.Activation(s[3], act_type="sigmoid", name=prefix + "o")
        next_c = F.elemwise_add(
            forget_gate * states[1], in_gate * in_transform, name=prefix + "state"
        )
        next_h = F.elemwise_mul(
            out_gate, self._get_activation(F, next_c, self._activation), name=prefix + "out"
        )
        return next_h, [next_h, next_c]


class _ConvGRUCell(_BaseConvRNNCell):
    _gate_names = ("_r", "_z", "_o")

    def _alias(self):
        return "conv_gru"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix = f"t{self._counter}_"
        i2h, h2h = self._conv_forward(
            F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias, prefix
        )
        ax = self._channel_axis
        i2h_r, i2h_z, i2h = F.SliceChannel(i2h, num_outputs=3, name=prefix + "i2h_slice", axis=ax)
        h2h_r, h2h_z, h2h = F.SliceChannel(h2h, num_outputs=3, name=prefix + "h2h_slice", axis=ax)
        reset_gate = F.Activation(i2h_r + h2h_r, act_type="sigmoid", name=prefix + "r_act")
        update_gate = F.Activation(i2h_z + h2h_z, act_type="sigmoid", name=prefix + "z_act")
        next_h_tmp = self._get_activation(
            F, i2h + reset_gate * h2h, self._activation, name=prefix + "h_act"
        )
        next_h = F.elemwise_add(
            (1.0 - update_gate) * next_h_tmp, update_gate * states[0], name=prefix + "out"
        )
        return next_h, [next_h]


_DOC = """{dims}D convolutional {kind} cell.

    Parameters
    ----------
    input_shape : tuple of int
        Shape of one step of one sample, in ``conv_layout`` without N (e.g. {example}).
    hidden_channels : int
    i2h_kernel, h2h_kernel : int or tuple of int
        Kernel sizes (``h2h_kernel`` odd).
    i2h_pad, i2h_dilate, h2h_dilate : int or tuple of int
    i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
    h2h_bias_initializer : Initializer or str
    conv_layout : str, default '{layout}'
    activation : str or Block, default 'tanh'
    prefix : str, optional
    params : ParameterDict, optional
"""

_LAYOUTS = {1: ("NCW", "(C, W)"), 2: ("NCHW", "(C, H, W)"), 3: ("NCDHW", "(C, D, H, W)")}


def _make(base, dims, kind):
    layout, example = _LAYOUTS[dims]

    def __init__(
        self,
        input_shape,
        hidden_channels,
        i2h_kernel,
        h2h_kernel,
        i2h_pad=(0,) * dims,
        i2h_dilate=(1,) * dims,
        h2h_dilate=(1,) * dims,
        i2h_weight_initializer=None,
        h2h_weight_initializer=None,
        i2h_bias_initializer="zeros",
        h2h_bias_initializer="zeros",
        conv_layout=layout,
        activation="tanh",
        prefix=None,
        params=None,
    ):
        base.__init__(
            self,
            input_shape,
            hidden_channels,
            i2h_kernel,
            h2h_kernel,
            i2h_pad,
            i2h_dilate,
            h2h_dilate,
            i2h_weight_initializer,
            h2h_weight_initializer,
            i2h_bias_initializer,
            h2h_bias_initializer,
            dims,
            conv_layout,
            activation,
            prefix,
            params,
        )

    name = f"Conv{dims}D{kind}Cell"
    cls = type(name, (base,), {"__init__": __init__, "__module__": __name__, "__qualname__": name})
    cls.__doc__ = _DOC.format(dims=dims, kind=kind, example=example, layout=layout)
    return cls


Conv1DRNNCell = _make(_ConvRNNCell, 1, "RNN")
Conv2DRNNCell = _make(_ConvRNNCell, 2, "RNN")
Conv3DRNNCell = _make(_ConvRNNCell, 3, "RNN")
Conv1DLSTMCell = _make(_ConvLSTMCell, 1, "LSTM")
Conv2DLSTMCell = _make(_ConvLSTMCell, 2, "LSTM")
Conv3DLSTMCell = _make(_ConvLSTMCell, 3, "LSTM")
Conv1DGRUCell = _make(_ConvGRUCell, 1, "GRU")
Conv2DGRUCell = _make(_ConvGRUCell, 2, "GRU")
Conv3DGRUCell = _make(_ConvGRUCell, 3, "GRU")
