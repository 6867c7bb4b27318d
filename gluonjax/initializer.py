"""Weight initializers (MXNet 1.x's ``mx.init`` / ``mx.initializer``).

An initializer is called as ``init(desc, arr)`` and fills the NDArray ``arr``
in place; ``desc`` (an :class:`InitDesc` or a plain name) picks what to fill
(see :class:`Initializer`). :func:`create` builds one from a registered name
(``'xavier'``, ``'zeros'``...), a :meth:`Initializer.dumps` string or an
instance. Random initializers draw from the global generator, so
``gluonjax.random.seed(n)`` makes them reproducible.

Examples
--------
>>> import gluonjax as mx
>>> from gluonjax import initializer as init
>>> w = mx.nd.zeros((4, 3))
>>> init.create("xavier")(init.InitDesc("fc_weight"), w)
>>> bool((abs(w.asnumpy()) <= (3 / 3.5) ** 0.5).all())
True
"""

from __future__ import annotations

from ._init.compose import Load, Mixed
from ._init.core import InitDesc, Initializer
from ._init.fan import MSRAPrelu, Orthogonal, Xavier
from ._init.fused_rnn import FusedRNN
from ._init.registry import alias, create, register
from ._init.simple import Bilinear, Constant, LSTMBias, Normal, One, Uniform, Zero
from ._init.util import InitializerError

__all__ = [
    "InitDesc",
    "Initializer",
    "InitializerError",
    "register",
    "alias",
    "create",
    "Zero",
    "One",
    "Constant",
    "Uniform",
    "Normal",
    "Xavier",
    "MSRAPrelu",
    "Orthogonal",
    "Bilinear",
    "LSTMBias",
    "FusedRNN",
    "Mixed",
    "Load",
]
