"""``gluon.contrib``: contributed Gluon blocks (MXNet 1.x ``gluon.contrib``):
``nn`` (layers), ``rnn`` (recurrent cells) and ``estimator`` (the ``fit`` loop)."""

from . import estimator, nn, rnn

__all__ = ["estimator", "nn", "rnn"]
