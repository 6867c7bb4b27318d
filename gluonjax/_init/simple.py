"""Constant and elementwise-random initializers, Bilinear and LSTMBias."""

from __future__ import annotations

import json

import jax.numpy as jnp
import numpy as np

from ..ndarray.ndarray import NDArray
from .core import Initializer
from .registry import alias, register
from .util import InitializerError, _assign, _json_default, _sample

__all__ = ["Zero", "One", "Constant", "Uniform", "Normal", "Bilinear", "LSTMBias"]


@register
@alias("zeros")
class Zero(Initializer):
    """Fill with 0 (names ``'zero'``, ``'zeros'``).

    Examples
    --------
    >>> import gluonjax as mx
    >>> from gluonjax import initializer as init
    >>> w = mx.nd.ones((2,)); init.Zero()(init.InitDesc("w_weight"), w)
    >>> w.asnumpy().tolist()
    [0.0, 0.0]
    """

    def __init__(self):
        super().__init__()

    def _init_weight(self, _, arr):
        _assign(arr, 0.0)


@register
@alias("ones")
class One(Initializer):
    """Fill with 1 (names ``'one'``, ``'ones'``).

    Examples
    --------
    >>> import gluonjax as mx
    >>> from gluonjax import initializer as init
    >>> w = mx.nd.zeros((2,)); init.One()(init.InitDesc("w_weight"), w)
    >>> w.asnumpy().tolist()
    [1.0, 1.0]
    """

    def __init__(self):
        super().__init__()

    def _init_weight(self, _, arr):
        _assign(arr, 1.0)


@register
class Constant(Initializer):
    """Fill with a value.

    Parameters
    ----------
    value : float or array_like
        A scalar, or an array (NDArray, NumPy, list) broadcast to the weight's shape.

    Examples
    --------
    >>> import gluonjax as mx
    >>> from gluonjax import initializer as init
    >>> w = mx.nd.zeros((2, 2)); init.Constant([1, 2])(init.InitDesc("w_weight"), w)
    >>> w.asnumpy().tolist()
    [[1.0, 2.0], [1.0, 2.0]]
    """

    def __init__(self, value):
        super().__init__(value=value)
        self.value = value

    def _init_weight(self, _, arr):
        _assign(arr, self.value)

    def dumps(self):
        """``'["constant", {"value": ...}]'``; as MXNet, an array value is stored back into
        ``_kwargs`` as a nested list (so ``_kwargs`` itself becomes JSON-able)."""
        val = self._kwargs["value"]
        if not np.isscalar(val):
            val = _json_default(val) if not isinstance(val, list) else val
            self._kwargs["value"] = val
        return json.dumps(["constant", self._kwargs], default=_json_default)

    def __eq__(self, other):
        if not isinstance(other, Initializer):
            return NotImplemented
        if type(self) is not type(other):
            return False
        a, b = self.value, other.value
        if isinstance(a, NDArray):
            a = a.asnumpy()
        if isinstance(b, NDArray):
            b = b.asnumpy()
        return bool(np.array_equal(np.asarray(a), np.asarray(b)))

    __hash__ = None


@register
class Uniform(Initializer):
    """Draw each weight from U(-scale, scale).

    Parameters
    ----------
    scale : float, default 0.07
        Bound of the interval.

    Examples
    --------
    >>> import gluonjax as mx
    >>> from gluonjax import initializer as init
    >>> w = mx.nd.zeros((3, 4)); init.Uniform(0.1)(init.InitDesc("fc_weight"), w)
    >>> bool((abs(w.asnumpy()) <= 0.1).all())
    True
    """

    def __init__(self, scale=0.07):
        super().__init__(scale=scale)
        self.scale = scale

    def _init_weight(self, _, arr):
        _assign(arr, _sample("uniform", arr.shape, arr.dtype, -self.scale, self.scale))


@register
class Normal(Initializer):
    """Draw each weight from N(0, sigma**2).

    Parameters
    ----------
    sigma : float, default 0.01
        Standard deviation.

    Examples
    --------
    >>> import gluonjax as mx
    >>> from gluonjax import initializer as init
    >>> w = mx.nd.zeros((3, 4)); init.Normal(0.5)(init.InitDesc("fc_weight"), w)
    >>> w.shape, w.dtype
    ((3, 4), dtype('float32'))
    """

    def __init__(self, sigma=0.01):
        super().__init__(sigma=sigma)
        self.sigma = sigma

    def _init_weight(self, _, arr):
        _assign(arr, _sample("normal", arr.shape, arr.dtype, 0.0, self.sigma))


def bilinear_kernel(shape):
    """The bilinear upsampling kernel of a 4-D ``(out, in, h, w)`` weight (float32)."""
    if len(shape) != 4:
        raise InitializerError(f"Bilinear needs a 4-D (out, in, h, w) weight, got shape {shape}")
    f = np.ceil(shape[3] / 2.0)
    c = (2 * f - 1 - f % 2) / (2.0 * f)
    x = 1 - np.abs(np.arange(shape[3]) / f - c)
    y = 1 - np.abs(np.arange(shape[2]) / f - c)
    return np.broadcast_to(np.outer(y, x).astype(np.float32), shape)


@register
class Bilinear(Initializer):
    """Bilinear-interpolation kernel, for Deconvolution upsampling weights.

    With ``f = ceil(w / 2)`` and ``c = (2f - 1 - f % 2) / (2f)``, entry
    ``(.., y, x)`` is ``(1 - |x/f - c|) * (1 - |y/f - c|)``; the weight must be 4-D.

    Examples
    --------
    >>> import gluonjax as mx
    >>> from gluonjax import initializer as init
    >>> w = mx.nd.zeros((1, 1, 2, 4)); init.Bilinear()(init.InitDesc("up_weight"), w)
    >>> w.asnumpy()[0, 0].tolist()
    [[0.0625, 0.1875, 0.1875, 0.0625], [0.1875, 0.5625, 0.5625, 0.1875]]
    """

    def __init__(self):
        super().__init__()

    def _init_weight(self, _, arr):
        _assign(arr, bilinear_kernel(arr.shape))


@register
class LSTMBias(Initializer):
    """LSTM bias: 0 except the forget gate (2nd of the i, f, c, o quarters).

    Parameters
    ----------
    forget_bias : float, default 1.0
        Value of the forget-gate quarter ``arr[n:2n]``, ``n = arr.shape[0] // 4``.

    Examples
    --------
    >>> import gluonjax as mx
    >>> from gluonjax import initializer as init
    >>> b = mx.nd.ones((8,))
    >>> desc = init.InitDesc("lstm_i2h_bias", {"__init__": init.LSTMBias(2.0).dumps()})
    >>> init.Uniform()(desc, b)
    >>> b.asnumpy().tolist()
    [0.0, 0.0, 2.0, 2.0, 0.0, 0.0, 0.0, 0.0]
    """

    def __init__(self, forget_bias=1.0):
        super().__init__(forget_bias=forget_bias)
        self.forget_bias = forget_bias

    def _init_weight(self, name, arr):
        n = arr.shape[0] // 4 if arr.ndim else 0
        vals = jnp.zeros(arr.shape, arr.dtype)
        _assign(arr, vals.at[n : 2 * n].set(self.forget_bias) if arr.ndim else vals)
