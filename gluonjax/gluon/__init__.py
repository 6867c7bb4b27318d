"""``gluonjax.gluon``: Blocks, Parameters, layers (``nn``), data (``data``)."""

from . import (  # noqa: F401
    data,  # noqa: E402  (after nn: the transforms are Blocks)
    loss,  # noqa: F401
    nn,
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
    "utils",
    "Trainer",
    "DeferredInitializationError",
    "SymbolBlock",
    "data",
]
