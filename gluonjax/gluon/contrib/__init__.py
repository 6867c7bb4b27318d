"""``gluon.contrib``: contributed Gluon blocks (MXNet 1.x ``gluon.contrib``):
``nn`` (layers), ``rnn`` (recurrent cells), ``data`` (samplers, text data sets) and
``estimator`` (the ``fit`` loop)."""

from . import data, estimator, nn, rnn

__all__ = ["data", "estimator", "nn", "rnn"]
