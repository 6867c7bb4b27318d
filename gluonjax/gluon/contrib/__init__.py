"""``gluon.contrib``: contributed layers (``contrib.nn``; ``contrib.rnn`` where present)."""

import importlib as _importlib
import importlib.util as _importlib_util

from . import nn

__all__ = ["nn"]

# contrib.rnn lives in its own subpackage, built separately: import it when it is there
if _importlib_util.find_spec(f"{__name__}.rnn") is not None:
    rnn = _importlib.import_module(f"{__name__}.rnn")
    __all__.append("rnn")
