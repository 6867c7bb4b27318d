"""``gluonjax.gluon``: Blocks, Parameters, layers (``nn``)."""

from . import nn, utils  # noqa: F401
from . import loss  # noqa: F401
from .block import Block
from .hybrid import HybridBlock
from .parameter import Constant, DeferredInitializationError, Parameter
from .parameter_dict import ParameterDict
from .trainer import Trainer
from .symbol_block import SymbolBlock

__all__ = ["Block", "HybridBlock", "Parameter", "Constant", "ParameterDict", "nn", "utils", "Trainer",
           "DeferredInitializationError", "SymbolBlock"]
