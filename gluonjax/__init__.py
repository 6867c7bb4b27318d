"""gluonjax: MXNet 1.x's Gluon API on JAX. ``import gluonjax as mx``.

Examples
--------
>>> import gluonjax as mx
>>> (mx.nd.ones((2, 2)) + 1).asnumpy().tolist()
[[2.0, 2.0], [2.0, 2.0]]
"""

from __future__ import annotations

__version__ = "0.1.0"

from . import base, context  # noqa: E402
from .context import Context, cpu, cpu_pinned, current_context, gpu, num_gpus  # noqa: E402
from . import random, autograd  # noqa: E402
from . import ndarray  # noqa: E402
from . import ndarray as nd  # noqa: E402
from . import name, attribute  # noqa: E402
from . import symbol  # noqa: E402
from . import symbol as sym  # noqa: E402
from . import initializer  # noqa: E402
from . import initializer as init  # noqa: E402
from . import optimizer  # noqa: E402
from . import lr_scheduler  # noqa: E402
from . import gluon  # noqa: E402
from . import metric  # noqa: E402
from . import io, executor, callback, model, module  # noqa: E402
from . import module as mod  # noqa: E402
from . import viz  # noqa: E402
from .attribute import AttrScope  # noqa: E402
from .base import MXNetError  # noqa: E402

__all__ = [
    "base",
    "context",
    "Context",
    "cpu",
    "gpu",
    "cpu_pinned",
    "current_context",
    "num_gpus",
    "random",
    "autograd",
    "nd",
    "ndarray",
    "MXNetError",
    "AttrScope",
    "name",
    "attribute",
    "sym",
    "symbol",
    "initializer",
    "init",
    "gluon",
    "optimizer",
]
