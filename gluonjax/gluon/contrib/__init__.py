"""``gluon.contrib``: contributed Gluon blocks (MXNet 1.x ``gluon.contrib``):
``nn`` (layers), ``cnn`` (deformable convolutions), ``rnn`` (recurrent cells), ``data``
(samplers, text data sets) and ``estimator`` (the ``fit`` loop)."""

from . import cnn, data, estimator, nn, rnn

__all__ = ["cnn", "data", "estimator", "nn", "rnn"]
