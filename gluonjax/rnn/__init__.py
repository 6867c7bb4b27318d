"""``mx.rnn``: MXNet 1.x's symbolic recurrent cells and the bucketing sentence iterator.

These build ``mx.sym`` graphs (unrolled over time) for the Module API; for Gluon
layers use ``gluon.rnn``.
"""

from . import io, rnn_cell
from .io import BucketSentenceIter, encode_sentences
from .rnn_cell import (
    BaseRNNCell,
    GRUCell,
    LSTMCell,
    RNNCell,
    RNNParams,
    SequentialRNNCell,
)

__all__ = [
    "BaseRNNCell",
    "RNNParams",
    "RNNCell",
    "LSTMCell",
    "GRUCell",
    "SequentialRNNCell",
    "BucketSentenceIter",
    "encode_sentences",
    "io",
    "rnn_cell",
]
