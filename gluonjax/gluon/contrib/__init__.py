"""``gluon.contrib``: contributed Gluon blocks (MXNet 1.x ``gluon.contrib``):
``nn`` (layers) and ``rnn`` (recurrent cells)."""

from . import nn, rnn

__all__ = ["nn", "rnn"]
