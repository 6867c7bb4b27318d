"""``mx.rnn``: MXNet 1.x's symbolic recurrent cells and the bucketing sentence iterator.

These build ``mx.sym`` graphs (unrolled over time) for the Module API; for Gluon
layers use ``gluon.rnn``.
"""

from . import io, rnn_cell
from .io import BucketSentenceIter, encode_sentences
from .rnn_cell import (
    BaseConvRNNCell,
    BaseRNNCell,
    BidirectionalCell,
    ConvGRUCell,
    ConvLSTMCell,
    ConvRNNCell,
    DropoutCell,
    FusedRNNCell,
    GRUCell,
    LSTMCell,
    ModifierCell,
    ResidualCell,
    RNNCell,
    RNNParams,
    SequentialRNNCell,
    ZoneoutCell,
)

__all__ = [
    "BaseRNNCell",
    "RNNParams",
    "RNNCell",
    "LSTMCell",
    "GRUCell",
    "SequentialRNNCell",
    "FusedRNNCell",
    "DropoutCell",
    "ModifierCell",
    "ZoneoutCell",
    "ResidualCell",
    "BidirectionalCell",
    "BaseConvRNNCell",
    "ConvRNNCell",
    "ConvLSTMCell",
    "ConvGRUCell",
    "BucketSentenceIter",
    "encode_sentences",
    "io",
    "rnn_cell",
]
