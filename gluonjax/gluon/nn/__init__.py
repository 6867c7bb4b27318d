"""``gluon.nn``: neural-network layers."""

from .activations import *  # noqa: F401,F403
from .activations import __all__ as _act_all
from .basic_layers import *  # noqa: F401,F403
from .basic_layers import __all__ as _basic_all
from .conv_layers import *  # noqa: F401,F403
from .conv_layers import __all__ as _conv_all
from .norm_layers import *  # noqa: F401,F403
from .norm_layers import __all__ as _norm_all

__all__ = list(_basic_all) + list(_norm_all) + list(_act_all) + list(_conv_all)

from ..block import Block  # noqa: E402,F401
from ..hybrid import HybridBlock  # noqa: E402,F401
from ..symbol_block import SymbolBlock  # noqa: E402,F401

__all__ += ["Block", "HybridBlock", "SymbolBlock"]
