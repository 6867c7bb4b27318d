"""gluonjax: MXNet 1.x's Gluon API on JAX. ``import gluonjax as mx``.

Examples
--------
>>> import gluonjax as mx
>>> (mx.nd.ones((2, 2)) + 1).asnumpy().tolist()
[[2.0, 2.0], [2.0, 2.0]]
"""

from __future__ import annotations

__version__ = "0.1.0"

from . import _compile  # noqa: E402

_compile.setup()  # jax's persistent compilation cache, the long-compile notice

from . import _distributed  # noqa: E402

_distributed.init_from_env()  # a launched worker joins its job before jax computes

from . import (  # noqa: E402  # noqa: E402  # noqa: E402  # noqa: E402  # noqa: E402
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
    kvstore,
    lr_scheduler,  # noqa: E402
    metric,  # noqa: E402
    model,
    module,
    monitor,
    name,
    ndarray,  # noqa: E402
    numpy,  # noqa: F401
    numpy_dispatch_protocol,  # noqa: F401
    numpy_extension,  # noqa: F401
    operator,
    optimizer,  # noqa: E402
    profiler,
    random,
    recordio,
    rnn,
    runtime,
    symbol,  # noqa: E402
    util,
    viz,  # noqa: E402
)
from . import image as img  # noqa: E402
from . import initializer as init  # noqa: E402
from . import kvstore as kv  # noqa: E402
from . import module as mod  # noqa: E402
from . import monitor as mon  # noqa: E402
from . import ndarray as nd  # noqa: E402
from . import numpy as np  # noqa: E402,F401
from . import numpy_extension as npx  # noqa: E402,F401
from . import random as rnd  # noqa: E402
from . import symbol as sym  # noqa: E402
from ._caches import clear_caches  # noqa: E402
from .attribute import AttrScope  # noqa: E402
from .base import MXNetError  # noqa: E402
from .context import Context, cpu, cpu_pinned, current_context, gpu, num_gpus  # noqa: E402
from .util import (  # noqa: E402
    is_np_array,
    is_np_shape,
    np_array,
    np_shape,
    set_np_shape,
    use_np,
    use_np_array,
    use_np_shape,
)

ndarray.np, ndarray.npx = np, npx  # F.np / F.npx in hybrid_forward(F, ...)
# mx.contrib.nd / mx.contrib.sym: MXNet's contrib op modules (the same as nd.contrib, sym.contrib)
contrib.nd = contrib.ndarray = ndarray.contrib
contrib.sym = contrib.symbol = symbol.contrib
# mx.contrib.autograd / mx.contrib.text, imported with mx.contrib as MXNet does (they sit
# in higher layers than the contrib package, so the package cannot import them itself)
from .contrib import autograd as _contrib_autograd  # noqa: E402,F401
from .contrib import text as _contrib_text  # noqa: E402,F401


def _contrib_getattr(name):
    # mx.contrib.onnx (a higher layer than the contrib package): imported on first use,
    # so importing gluonjax never imports the onnx package
    if name == "onnx":
        import importlib

        return importlib.import_module(f"{__name__}.contrib.onnx")
    raise AttributeError(f"module {contrib.__name__!r} has no attribute {name!r}")


contrib.__getattr__ = _contrib_getattr
symbol.npx = npx  # npx functions given a Symbol build symbols (see numpy._array.SYMBOLIC)

_LAZY = ("test_utils", "onnx")


def __getattr__(name):
    # test_utils pulls in numpy.testing, onnx the onnx package: imported on first use
    # (``mx.test_utils``, ``mx.onnx``)
    if name in _LAZY:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
    "np",
    "npx",
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
    "kvstore",
    "kv",
    "executor",
    "callback",
    "model",
    "module",
    "mod",
    "viz",
    "contrib",
    "rnn",
    "monitor",
    "mon",
    "clear_caches",
    "util",
    "operator",
    "profiler",
    "runtime",
    "rnd",
    "np_shape",
    "is_np_shape",
    "set_np_shape",
    "use_np_shape",
    "np_array",
    "is_np_array",
    "use_np_array",
    "use_np",
    "image",
    "img",
    "recordio",
]
