"""``FusedRNN``: initialize the packed parameter vector of a fused RNN one gate at a time.

The vector's layout is the ``RNN`` op's (MXNet's ``FusedRNNCell``): for every layer
and direction the input-to-hidden weights of each gate, then the hidden-to-hidden
weights of each gate; after all weights, the biases in the same order.
:func:`fused_rnn_layout` names each piece as ``mx.rnn.FusedRNNCell.unpack_weights``
does (``l0_i2h_i_weight``, ``r1_h2h_z_bias``...).
"""

from __future__ import annotations

import numpy as np

from .._ops.defs.rnn_scan import GATES, layer_shapes
from ..base import ArgumentTypeError
from .core import InitDesc, Initializer
from .registry import create, register
from .util import InitializerError, _assign

__all__ = ["FusedRNN", "fused_rnn_layout", "fused_rnn_input_size", "GATE_NAMES"]

GATE_NAMES = {
    "rnn_relu": ("",),
    "rnn_tanh": ("",),
    "lstm": ("_i", "_f", "_c", "_o"),
    "gru": ("_r", "_z", "_o"),
}


def _check_mode(mode):
    if mode not in GATES:
        raise InitializerError(f"fused RNN mode {mode!r} is not one of {', '.join(sorted(GATES))}")


def fused_rnn_layout(mode, num_layers, input_size, num_hidden, bidirectional, prefix=""):
    """The pieces of a packed fused-RNN vector, in order.

    Parameters
    ----------
    mode : str
        ``'rnn_relu'``, ``'rnn_tanh'``, ``'lstm'`` or ``'gru'``.
    num_layers, input_size, num_hidden : int
    bidirectional : bool
    prefix : str, default ''
        Prepended to every name.

    Returns
    -------
    list of (str, tuple)
        ``(name, shape)`` per gate of every weight and bias.

    Examples
    --------
    >>> from gluonjax._init.fused_rnn import fused_rnn_layout
    >>> for name, shape in fused_rnn_layout("gru", 1, 3, 2, False)[:4]:
    ...     print(name, shape)
    l0_i2h_r_weight (2, 3)
    l0_i2h_z_weight (2, 3)
    l0_i2h_o_weight (2, 3)
    l0_h2h_r_weight (2, 2)
    """
    _check_mode(mode)
    gates, h = GATE_NAMES[mode], num_hidden
    out = []
    for name, shape in layer_shapes(mode, num_layers, input_size, num_hidden, bidirectional):
        head, _, kind = name.rpartition("_")  # 'l0_i2h', 'weight'
        for gate in gates:
            out.append((f"{prefix}{head}{gate}_{kind}", (h,) + tuple(shape[1:])))
    return out


def fused_rnn_input_size(size, mode, num_layers, num_hidden, bidirectional):
    """The input size of layer 0 that a packed vector of ``size`` elements implies.

    Parameters
    ----------
    size : int
        Length of the packed vector.
    mode : str
    num_layers, num_hidden : int
    bidirectional : bool

    Returns
    -------
    int

    Examples
    --------
    >>> from gluonjax._init.fused_rnn import fused_rnn_input_size
    >>> fused_rnn_input_size(14, "rnn_tanh", 1, 2, False)
    3
    """
    _check_mode(mode)
    b, g, h = 2 if bidirectional else 1, len(GATE_NAMES[mode]), num_hidden
    per = b * g * h
    rest = (num_layers - 1) * per * (b * h + h + 2)
    ni, rem = divmod(size - rest, per)
    ni -= h + 2
    if rem or ni <= 0:
        raise InitializerError(
            f"a packed {mode} vector of {size} elements does not fit num_layers={num_layers}, "
            f"num_hidden={num_hidden}, bidirectional={bidirectional}: check the cell's "
            "arguments against the parameters"
        )
    return ni


@register
class FusedRNN(Initializer):
    """Initialize a fused RNN's packed ``parameters`` gate by gate.

    Each gate's weight is filled by ``init`` (or the global initializer), biases are 0
    and an LSTM's forget-gate biases are ``forget_bias``.

    Parameters
    ----------
    init : Initializer or str or None
        Applied to each gate's weight; None: the global initializer.
    num_hidden, num_layers : int
    mode : str
        ``'rnn_relu'``, ``'rnn_tanh'``, ``'lstm'`` or ``'gru'``.
    bidirectional : bool, default False
    forget_bias : float, default 1.0

    Examples
    --------
    >>> import gluonjax as mx
    >>> from gluonjax import initializer as init
    >>> arr = mx.nd.zeros((2 * 4 * 2 * (1 + 2 + 2),))
    >>> f = init.FusedRNN(init.One(), 2, 1, "lstm", forget_bias=3.0)
    >>> desc = init.InitDesc("lstm_parameters", {"__init__": f.dumps()})
    >>> init.Uniform()(desc, arr)
    >>> arr.asnumpy()[-16:].tolist()  # i2h biases i, f, c, o, then h2h biases
    [0.0, 0.0, 3.0, 3.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 3.0, 3.0, 0.0, 0.0, 0.0, 0.0]
    """

    def __init__(self, init, num_hidden, num_layers, mode, bidirectional=False, forget_bias=1.0):
        if init is not None and not isinstance(init, (str, dict, Initializer)):
            raise ArgumentTypeError(
                f"FusedRNN's init must be an Initializer, its name or None, got {init!r}"
            )
        init = create(init) if init is not None else None
        _check_mode(mode)
        super().__init__(
            init=init.dumps() if init is not None else None,
            num_hidden=num_hidden,
            num_layers=num_layers,
            mode=mode,
            bidirectional=bidirectional,
            forget_bias=forget_bias,
        )
        self._init = init
        self._num_hidden = num_hidden
        self._num_layers = num_layers
        self._mode = mode
        self._bidirectional = bidirectional
        self._forget_bias = forget_bias

    def _init_weight(self, desc, arr):
        from ..ndarray import zeros

        if arr.ndim != 1:
            raise InitializerError(
                f"FusedRNN initializes a packed vector; {desc} has shape {arr.shape}"
            )
        args = (self._mode, self._num_layers, self._num_hidden, self._bidirectional)
        ni = fused_rnn_input_size(arr.shape[0], *args)
        layout = fused_rnn_layout(
            self._mode, self._num_layers, ni, self._num_hidden, self._bidirectional
        )
        global_init = getattr(desc, "global_init", None) or self
        pieces = []
        for name, shape in layout:
            piece = zeros(shape, dtype=arr.dtype)
            if self._mode == "lstm" and name.endswith("_f_bias"):
                _assign(piece, self._forget_bias)
            elif self._init is None:
                global_init(InitDesc(name, global_init=global_init), piece)
            else:
                self._init(InitDesc(name, global_init=global_init), piece)
            pieces.append(piece.asnumpy().ravel())
        _assign(arr, np.concatenate(pieces))
