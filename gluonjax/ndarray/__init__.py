"""``gluonjax.nd``: NDArray, creation functions and every registry op as a function.

Examples
--------
>>> import gluonjax as mx
>>> x = mx.nd.ones((2, 4))
>>> w = mx.nd.ones((3, 4)); b = mx.nd.zeros((3,))
>>> mx.nd.FullyConnected(x, w, b, num_hidden=3).asnumpy().tolist()
[[4.0, 4.0, 4.0], [4.0, 4.0, 4.0]]
"""

from __future__ import annotations

import jax as _jax
import numpy as _np

from .. import _ops  # noqa: F401  (registers the ops)
from ._creation import arange, array, empty, eye, from_jax, full, linspace, ones, zeros
from ._generate import generate as _generate
from .ndarray import NDArray
from .ndarray import install_fluent as _install_fluent

_generate(globals())
_install_fluent()

from . import sparse  # noqa: E402

sparse.install(globals())  # nd.<op> gives MXNet's storage types for sparse inputs

from .. import contrib as _contrib_mod  # noqa: E402
from . import random  # noqa: E402

contrib = _contrib_mod.namespace(__import__(__name__, fromlist=["x"]), "nd")
from ._cached_op import CachedOp  # noqa: E402
from ._extra import (  # noqa: E402
    from_dlpack,
    from_numpy,
    histogram,
    moveaxis,
    onehot_encode,
    split_v2,
    to_dlpack_for_read,
    to_dlpack_for_write,
)
from ._io import load, load_frombuffer, save  # noqa: E402
from ._ufuncs import (  # noqa: E402
    add,
    divide,
    equal,
    greater,
    greater_equal,
    lesser,
    lesser_equal,
    logical_and,
    logical_or,
    logical_xor,
    maximum,
    minimum,
    modulo,
    multiply,
    not_equal,
    power,
    subtract,
    true_divide,
)

linalg = _contrib_mod.prefixed(
    __import__(__name__, fromlist=["x"]), "linalg", "_linalg_", "Batched linear algebra."
)
_internal = _contrib_mod.prefixed(
    __import__(__name__, fromlist=["x"]), "_internal", "", "Every operator, by its MXNet name."
)
image = _contrib_mod.prefixed(
    __import__(__name__, fromlist=["x"]), "image", "_image_", "Image operators (``_image_*``)."
)


def waitall():
    """Wait for every pending computation (jax's async dispatch), as MXNet's does.

    That includes computations whose outputs were already dropped (``net(x)`` with its
    result unused, then ``waitall()`` to time it): a device runs the programs it was given
    in order, so a trivial program dispatched now to every device finishes after them.
    """
    _jax.effects_barrier()
    for a in _jax.live_arrays():
        a.block_until_ready()
    for d in _jax.local_devices():
        _touch(_jax.device_put(_np.zeros((), _np.int8), d)).block_until_ready()


_touch = _jax.jit(lambda v: v + 1)  # waitall's trivial program (compiled on first use)


def concatenate(arrays, axis=0, always_copy=True):
    """Join arrays along an existing axis."""
    return globals()["Concat"](*arrays, dim=axis)


random_normal = getattr(random, "normal", None)
random_uniform = getattr(random, "uniform", None)

__all__ = [
    "NDArray",
    "array",
    "zeros",
    "ones",
    "full",
    "empty",
    "arange",
    "eye",
    "linspace",
    "from_jax",
    "waitall",
    "save",
    "load",
    "random",
    "concatenate",
    "sparse",
    "random_normal",
    "random_uniform",
    "load_frombuffer",
    "CachedOp",
    "Custom",
    "moveaxis",
    "split_v2",
    "histogram",
    "onehot_encode",
    "from_numpy",
    "from_dlpack",
    "to_dlpack_for_read",
    "to_dlpack_for_write",
    "add",
    "subtract",
    "multiply",
    "divide",
    "true_divide",
    "modulo",
    "power",
    "maximum",
    "minimum",
    "equal",
    "not_equal",
    "greater",
    "greater_equal",
    "lesser",
    "lesser_equal",
    "logical_and",
    "logical_or",
    "logical_xor",
]
