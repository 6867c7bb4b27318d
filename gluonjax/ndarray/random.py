"""``nd.random``: MXNet's sampling functions (``uniform``, ``normal``, ``randint``...).

Each function calls a registry op: ``_random_<dist>`` when the parameters are
numbers, ``_sample_<dist>`` (one distribution per element) when they are
NDArrays, as MXNet does. ``mx.random.seed(n)`` makes the draws reproducible.

Examples
--------
>>> import gluonjax as mx
>>> mx.nd.random.uniform(0, 1, shape=(2, 3)).shape
(2, 3)
>>> mx.nd.random.normal(mx.nd.zeros((2,)), mx.nd.ones((2,)), shape=(4,)).shape
(2, 4)
"""

from __future__ import annotations

import numbers

from .. import _rng as _random
from .._ops import registry as _reg
from ..base import OpError
from ._creation import _place
from ._invoke import invoke
from .ndarray import NDArray

__all__ = [
    "uniform",
    "normal",
    "randn",
    "randint",
    "exponential",
    "gamma",
    "poisson",
    "negative_binomial",
    "generalized_negative_binomial",
    "multinomial",
    "shuffle",
    "uniform_like",
    "normal_like",
    "exponential_like",
    "gamma_like",
    "poisson_like",
    "negative_binomial_like",
    "generalized_negative_binomial_like",
]

# dist -> (scalar attribute names of _random_<dist>, names shown in messages)
_ATTRS = {
    "uniform": ("low", "high"),
    "normal": ("loc", "scale"),
    "exponential": ("lam",),
    "gamma": ("alpha", "beta"),
    "poisson": ("lam",),
    "negative_binomial": ("k", "p"),
    "generalized_negative_binomial": ("mu", "alpha"),
}


def _check(dist, params):
    """MXNet's parameter checks for number parameters (NDArrays are not inspected)."""
    v = dict(zip(_ATTRS.get(dist, ("low", "high")), params, strict=True))
    bad = {
        "uniform": v.get("high", 0) < v.get("low", 0),
        "randint": v.get("high", 0) < v.get("low", 0),
        "normal": v.get("scale", 0) < 0,
        "exponential": v.get("lam", 1) <= 0,
        "gamma": v.get("alpha", 1) <= 0 or v.get("beta", 1) <= 0,
        "poisson": v.get("lam", 0) < 0,
        "negative_binomial": v.get("k", 1) <= 0 or not 0 < v.get("p", 1) <= 1,
        "generalized_negative_binomial": v.get("mu", 0) < 0 or v.get("alpha", 0) < 0,
    }[dist]
    if bad:
        shown = ", ".join(f"{k}={x}" for k, x in v.items())
        raise OpError(f"random.{dist}: invalid parameters {shown}")


def _helper(dist, params, shape, dtype, ctx, out, kwargs):
    """Dispatch to ``_random_<dist>`` (numbers) or ``_sample_<dist>`` (NDArrays)."""
    if all(isinstance(p, numbers.Number) for p in params):
        _check(dist, params)
        attrs = dict(zip(_ATTRS.get(dist, ("low", "high")), params, strict=True))
        attrs.update(shape=shape, dtype=dtype, **kwargs)
        with _random.drawing_on(ctx):
            res = invoke(_reg.get(f"_random_{dist}"), (), attrs, out)
        if out is None and ctx is not None:
            res = NDArray(_place(res._data, ctx))
        return res
    if all(isinstance(p, NDArray) for p in params):
        if dist == "randint":
            raise OpError("random.randint: low and high must be numbers, not NDArrays")
        return invoke(
            _reg.get(f"_sample_{dist}"),
            tuple(params),
            dict(shape=shape, dtype=dtype, **kwargs),
            out,
        )
    kinds = sorted({type(p).__name__ for p in params})
    raise OpError(
        f"random.{dist}: distribution parameters must all be numbers or all be "
        f"NDArrays, got {kinds}"
    )


def uniform(low=0, high=1, shape=(), dtype=None, ctx=None, out=None, **kwargs):
    """Samples from U[low, high); NDArray ``low``/``high`` give one distribution per element.

    Parameters
    ----------
    low, high : float or NDArray
        Bounds of the interval.
    shape : int or tuple
        Output shape (with NDArray parameters: samples per element).
    dtype : {'float16', 'float32', 'float64'}, default float32
    ctx : Context, optional
        Device of the result.
    out : NDArray, optional
        Where to store the result.
    """
    return _helper("uniform", [low, high], shape, dtype, ctx, out, kwargs)


def normal(loc=0, scale=1, shape=(), dtype=None, ctx=None, out=None, **kwargs):
    """Samples from N(loc, scale**2) (``scale`` is the standard deviation)."""
    return _helper("normal", [loc, scale], shape, dtype, ctx, out, kwargs)


def randn(*shape, **kwargs):
    """Normal samples of shape ``shape``: ``randn(2, 3, loc=0, scale=1)``."""
    loc = kwargs.pop("loc", 0)
    scale = kwargs.pop("scale", 1)
    dtype = kwargs.pop("dtype", None)
    ctx = kwargs.pop("ctx", None)
    out = kwargs.pop("out", None)
    return _helper("normal", [loc, scale], shape, dtype, ctx, out, kwargs)


def randint(low, high, shape=(), dtype=None, ctx=None, out=None, **kwargs):
    """Integers drawn uniformly from [low, high) (int32 by default, or int64)."""
    return _helper("randint", [low, high], shape, dtype, ctx, out, kwargs)


def exponential(scale=1, shape=(), dtype=None, ctx=None, out=None, **kwargs):
    """Samples from the exponential distribution with mean ``scale`` (rate 1/scale)."""
    return _helper("exponential", [1.0 / scale], shape, dtype, ctx, out, kwargs)


def gamma(alpha=1, beta=1, shape=(), dtype=None, ctx=None, out=None, **kwargs):
    """Samples from Gamma(alpha (shape), beta (scale)): mean alpha*beta."""
    return _helper("gamma", [alpha, beta], shape, dtype, ctx, out, kwargs)


def poisson(lam=1, shape=(), dtype=None, ctx=None, out=None, **kwargs):
    """Samples from Poisson(lam), returned as floats (MXNet's default float32)."""
    return _helper("poisson", [lam], shape, dtype, ctx, out, kwargs)


def negative_binomial(k=1, p=1, shape=(), dtype=None, ctx=None, out=None, **kwargs):
    """Number of failures before ``k`` successes (success probability ``p``)."""
    return _helper("negative_binomial", [k, p], shape, dtype, ctx, out, kwargs)


def generalized_negative_binomial(
    mu=1, alpha=1, shape=(), dtype=None, ctx=None, out=None, **kwargs
):
    """Negative binomial with mean ``mu`` and dispersion ``alpha`` (variance mu + alpha*mu**2)."""
    return _helper("generalized_negative_binomial", [mu, alpha], shape, dtype, ctx, out, kwargs)


def multinomial(data, shape=(), get_prob=False, out=None, dtype="int32", **kwargs):
    """Category indices drawn from the distributions on the last axis of ``data``.

    Returns ``samples`` of shape ``data.shape[:-1] + shape``, or
    ``[samples, log_prob]`` with ``get_prob=True``.
    """
    return invoke(
        _reg.get("_sample_multinomial"),
        (data,),
        dict(shape=shape, get_prob=get_prob, dtype=dtype, **kwargs),
        out,
    )


def shuffle(data, **kwargs):
    """A random permutation of ``data`` along its first axis."""
    out = kwargs.pop("out", None)
    return invoke(_reg.get("_shuffle"), (data,), kwargs, out)


def _like(dist):
    names = _ATTRS[dist]

    def fn(data=None, *args, out=None, name=None, **kwargs):
        attrs = dict(zip(names, args, strict=False))
        attrs.update(kwargs)
        return invoke(_reg.get(f"_random_{dist}_like"), (data,), attrs, out)

    fn.__name__ = fn.__qualname__ = f"{dist}_like"
    fn.__doc__ = (
        f"{dist.replace('_', ' ').capitalize()} samples with the shape and dtype of "
        f"``data``; parameters {', '.join(names)} as in :func:`{dist}`."
    )
    return fn


uniform_like = _like("uniform")
normal_like = _like("normal")
exponential_like = _like("exponential")
gamma_like = _like("gamma")
poisson_like = _like("poisson")
negative_binomial_like = _like("negative_binomial")
generalized_negative_binomial_like = _like("generalized_negative_binomial")
