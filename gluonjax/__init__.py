"""gluonjax: MXNet 1.x's Gluon API on JAX. ``import gluonjax as mx``.

Examples
--------
>>> import gluonjax as mx
>>> (mx.nd.ones((2, 2)) + 1).asnumpy().tolist()
[[2.0, 2.0], [2.0, 2.0]]
"""

from __future__ import annotations

__version__ = "0.1.0"

from . import (  # noqa: E402  # noqa: E402  # noqa: E402  # noqa: E402
    attribute,
    autograd,
    base,
    callback,
    context,
    contrib,  # noqa: E402
    executor,
    gluon,  # noqa: E402
    image,
    initializer,  # noqa: E402
    io,
    lr_scheduler,  # noqa: E402
    metric,  # noqa: E402
    model,
    module,
    name,
    ndarray,  # noqa: E402
    optimizer,  # noqa: E402
    random,
    recordio,
    symbol,  # noqa: E402
    viz,  # noqa: E402
)
from . import initializer as init  # noqa: E402
from . import module as mod  # noqa: E402
from . import ndarray as nd  # noqa: E402
from . import symbol as sym  # noqa: E402
from .attribute import AttrScope  # noqa: E402
from .base import MXNetError  # noqa: E402
from .context import Context, cpu, cpu_pinned, current_context, gpu, num_gpus  # noqa: E402

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
    "lr_scheduler",
    "metric",
    "io",
    "executor",
    "callback",
    "model",
    "module",
    "mod",
    "viz",
    "contrib",
    "image",
    "recordio",
]
