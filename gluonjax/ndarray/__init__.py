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

from .. import _ops  # noqa: F401  (registers the ops)
from ._creation import arange, array, empty, eye, from_jax, full, linspace, ones, zeros
from ._generate import generate as _generate
from .ndarray import NDArray
from .ndarray import install_fluent as _install_fluent

_generate(globals())
_install_fluent()

from .. import contrib as _contrib_mod  # noqa: E402
from . import random  # noqa: E402

contrib = _contrib_mod.namespace(__import__(__name__, fromlist=["x"]), "nd")
image = _contrib_mod.prefixed(
    __import__(__name__, fromlist=["x"]), "_image_", "image", "Image operators (``_image_*``)."
)
from ._io import load, save  # noqa: E402


def waitall():
    """Wait for every pending computation (jax's async dispatch)."""
    _jax.effects_barrier()
    for a in _jax.live_arrays():
        a.block_until_ready()


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
    "random_normal",
    "random_uniform",
]
