"""``gluonjax.gluon``: Blocks, Parameters, layers (``nn``), data (``data``)."""

from . import (  # noqa: F401
    contrib,
    data,  # (after nn: the transforms are Blocks)
    loss,  # noqa: F401
    model_zoo,
    nn,
    rnn,
    utils,
)
from .block import Block
from .hybrid import HybridBlock
from .parameter import Constant, DeferredInitializationError, Parameter
from .parameter_dict import ParameterDict
from .symbol_block import SymbolBlock
from .trainer import Trainer

__all__ = [
    "Block",
    "HybridBlock",
    "Parameter",
    "Constant",
    "ParameterDict",
    "nn",
    "rnn",
    "contrib",
    "model_zoo",
    "utils",
    "Trainer",
    "DeferredInitializationError",
    "SymbolBlock",
    "data",
]
