"""Initializers scaled by the weight's shape: Xavier, MSRAPrelu, Orthogonal."""

from __future__ import annotations

import numpy as np

from .core import Initializer
from .registry import register
from .util import InitializerError, _assign, _sample

__all__ = ["Xavier", "MSRAPrelu", "Orthogonal"]

_RND_TYPES = ("uniform", "gaussian")
_FACTOR_TYPES = ("avg", "in", "out")


@register
class Xavier(Initializer):
    """Glorot/Xavier: variance scaled by the weight's fan-in and fan-out.

    For a weight of shape ``(out, in, *k)``: ``fan_in = in * prod(k)``,
    ``fan_out = out * prod(k)``, ``factor`` is their mean (``'avg'``), ``fan_in``
    (``'in'``) or ``fan_out`` (``'out'``) and ``scale = sqrt(magnitude / factor)``;
    values are drawn from U(-scale, scale) (``'uniform'``) or N(0, scale**2)
    (``'gaussian'``). The weight must be at least 2-D.

    Parameters
    ----------
    rnd_type : str, default 'uniform'
        ``'uniform'`` or ``'gaussian'``.
    factor_type : str, default 'avg'
        ``'avg'``, ``'in'`` or ``'out'``.
    magnitude : float, default 3
        Scale of the variance.

    Examples
    --------
    >>> import gluonjax as mx
    >>> from gluonjax import initializer as init
    >>> w = mx.nd.zeros((4, 2, 3, 3))
    >>> init.Xavier(factor_type="in", magnitude=2)(init.InitDesc("conv_weight"), w)
    >>> bool((abs(w.asnumpy()) <= (2 / 18) ** 0.5).all())
    True
    """

    def __init__(self, rnd_type="uniform", factor_type="avg", magnitude=3):
        super().__init__(rnd_type=rnd_type, factor_type=factor_type, magnitude=magnitude)
        if rnd_type not in _RND_TYPES:
            raise InitializerError(f"Unknown random type {rnd_type!r}; use one of {_RND_TYPES}")
        if factor_type not in _FACTOR_TYPES:
            raise InitializerError(
                f"Incorrect factor type {factor_type!r}; use one of {_FACTOR_TYPES}"
            )
        self.rnd_type = rnd_type
        self.factor_type = factor_type
        self.magnitude = float(magnitude)

    def _init_weight(self, name, arr):
        shape = arr.shape
        if len(shape) < 2:
            raise InitializerError(
                f"Xavier initializer cannot be applied to {str(name)!r} of shape {shape}: "
                "it needs a weight of at least 2 dimensions"
            )
        hw_scale = float(np.prod(shape[2:])) if len(shape) > 2 else 1.0
        fan_in, fan_out = shape[1] * hw_scale, shape[0] * hw_scale
        factor = {"avg": (fan_in + fan_out) / 2.0, "in": fan_in, "out": fan_out}[self.factor_type]
        scale = float(np.sqrt(self.magnitude / factor)) if factor else 0.0
        if self.rnd_type == "uniform":
            _assign(arr, _sample("uniform", shape, arr.dtype, -scale, scale))
        else:
            _assign(arr, _sample("normal", shape, arr.dtype, 0.0, scale))


@register
class MSRAPrelu(Xavier):
    """He/MSRA init for (P)ReLU nets: gaussian Xavier with ``magnitude = 2 / (1 + slope**2)``.

    Parameters
    ----------
    factor_type : str, default 'avg'
        ``'avg'``, ``'in'`` or ``'out'``.
    slope : float, default 0.25
        Initial negative slope of the PReLU units.

    Examples
    --------
    >>> import gluonjax as mx
    >>> from gluonjax import initializer as init
    >>> w = mx.nd.zeros((8, 4)); init.MSRAPrelu(slope=0.0)(init.InitDesc("fc_weight"), w)
    >>> init.MSRAPrelu(slope=0.0).magnitude
    2.0
    """

    def __init__(self, factor_type="avg", slope=0.25):
        super().__init__("gaussian", factor_type, 2.0 / (1 + slope**2))
        self._kwargs = {"factor_type": factor_type, "slope": slope}


def _orthonormal(tmp, scale, shape):
    u, _, vt = np.linalg.svd(tmp, full_matrices=False)  # on the host: nothing to compile
    res = u if u.shape == tmp.shape else vt
    return (scale * res).reshape(shape).astype(np.float32)


@register
class Orthogonal(Initializer):
    """Orthogonal matrix (Saxe et al. 2013) times ``scale``.

    The weight, viewed as ``(out, prod(rest))``, gets the orthonormal SVD factor
    of a random matrix: orthonormal rows if ``out <= prod(rest)``, else columns.

    Parameters
    ----------
    scale : float, default 1.414
        Multiplier of the orthonormal matrix.
    rand_type : str, default 'uniform'
        Random matrix to factor: ``'uniform'`` (U(-1, 1)) or ``'normal'`` (N(0, 1)).

    Examples
    --------
    >>> import numpy as np, gluonjax as mx
    >>> from gluonjax import initializer as init
    >>> w = mx.nd.zeros((3, 5)); init.Orthogonal(scale=1.0)(init.InitDesc("fc_weight"), w)
    >>> np.allclose(w.asnumpy() @ w.asnumpy().T, np.eye(3), atol=1e-5)
    True
    """

    def __init__(self, scale=1.414, rand_type="uniform"):
        super().__init__(scale=scale, rand_type=rand_type)
        if rand_type not in ("uniform", "normal"):
            raise InitializerError(f"Unknown rand_type {rand_type!r}; use 'uniform' or 'normal'")
        self.scale = scale
        self.rand_type = rand_type

    def _init_weight(self, _, arr):
        if arr.ndim < 1 or arr.size == 0:
            raise InitializerError(f"Orthogonal needs a non-empty weight, got shape {arr.shape}")
        nout, nin = arr.shape[0], int(np.prod(arr.shape[1:]))
        if self.rand_type == "uniform":
            tmp = _sample("uniform", (nout, nin), np.float32, -1.0, 1.0)
        else:
            tmp = _sample("normal", (nout, nin), np.float32, 0.0, 1.0)
        _assign(arr, _orthonormal(tmp, np.float32(self.scale), tuple(arr.shape)))
