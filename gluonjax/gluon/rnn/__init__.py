"""``gluon.rnn``: fused recurrent layers (``RNN``, ``LSTM``, ``GRU``) and cells."""

from . import rnn_cell, rnn_layer
from .rnn_cell import *  # noqa: F401,F403
from .rnn_cell import __all__ as _cell_all
from .rnn_layer import *  # noqa: F401,F403
from .rnn_layer import __all__ as _layer_all

__all__ = list(_cell_all) + list(_layer_all) + ["rnn_cell", "rnn_layer"]
