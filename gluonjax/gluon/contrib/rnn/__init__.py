"""``gluon.contrib.rnn``: VariationalDropoutCell, LSTMPCell, convolutional RNN cells."""

from . import conv_rnn_cell, rnn_cell  # noqa: F401
from .conv_rnn_cell import *  # noqa: F401,F403
from .conv_rnn_cell import __all__ as _conv_all
from .rnn_cell import *  # noqa: F401,F403
from .rnn_cell import __all__ as _cell_all

__all__ = list(_cell_all) + list(_conv_all)
