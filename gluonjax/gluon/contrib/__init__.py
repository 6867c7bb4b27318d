"""``gluon.contrib``: experimental Gluon blocks (MXNet 1.x ``gluon.contrib``).

``rnn`` holds the contrib recurrent cells; other subpackages (``nn``...) are
imported when present.
"""

import importlib.util as _util

from . import rnn

if _util.find_spec(__name__ + ".nn") is not None:
    from . import nn  # noqa: F401

__all__ = ["rnn"]
