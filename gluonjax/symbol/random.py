"""``sym.random``: MXNet's sampling functions for symbols (``uniform``, ``normal``...).

The same registry ops as ``nd.random``: ``_random_<dist>`` when the parameters
are numbers, ``_sample_<dist>`` (one distribution per element) when they are
Symbols. A graph draws fresh numbers on every forward; ``mx.random.seed`` before
a forward makes it reproducible.

Examples
--------
>>> import gluonjax as mx
>>> s = mx.sym.random.uniform(low=0, high=1, shape=(2, 3))
>>> s.eval()[0].shape
(2, 3)
>>> mu = mx.sym.var('mu')
>>> mx.sym.random.normal(mu, mx.sym.var('sigma'), shape=(4,)).list_arguments()
['mu', 'sigma']
"""

from __future__ import annotations

import numbers

from .._ops import registry as _reg
from ..base import OpError
from ..ndarray.random import _ATTRS, _check
from .symbol import Symbol, create

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


def _call(opname, args, kwargs, name, attr):
    op = _reg.get(opname)
    return create(op, args, kwargs, name=name, attr=attr)


def _helper(dist, params, shape, dtype, kwargs):
    name, attr = kwargs.pop("name", None), kwargs.pop("attr", None)
    kwargs.pop("ctx", None)  # a graph runs on the context it is bound to
    if all(isinstance(p, numbers.Number) for p in params):
        _check(dist, params)
        attrs = dict(zip(_ATTRS.get(dist, ("low", "high")), params, strict=True))
        attrs.update(shape=shape, dtype=dtype, **kwargs)
        return _call(f"_random_{dist}", (), attrs, name, attr)
    if all(isinstance(p, Symbol) for p in params):
        if dist == "randint":
            raise OpError("sym.random.randint: low and high must be numbers, not Symbols")
        return _call(
            f"_sample_{dist}", tuple(params), dict(shape=shape, dtype=dtype, **kwargs), name, attr
        )
    kinds = sorted({type(p).__name__ for p in params})
    raise OpError(
        f"sym.random.{dist}: distribution parameters must all be numbers or all be "
        f"Symbols, got {kinds}"
    )


def uniform(low=0, high=1, shape=(), dtype=None, **kwargs):
    """Symbol of samples from U[low, high) (Symbol bounds: one distribution per element)."""
    return _helper("uniform", [low, high], shape, dtype, kwargs)


def normal(loc=0, scale=1, shape=(), dtype=None, **kwargs):
    """Symbol of samples from N(loc, scale**2)."""
    return _helper("normal", [loc, scale], shape, dtype, kwargs)


def randn(*shape, **kwargs):
    """Normal samples of shape ``shape``: ``randn(2, 3, loc=0, scale=1)``."""
    loc = kwargs.pop("loc", 0)
    scale = kwargs.pop("scale", 1)
    dtype = kwargs.pop("dtype", None)
    return _helper("normal", [loc, scale], shape, dtype, kwargs)


def randint(low, high, shape=(), dtype=None, **kwargs):
    """Integers drawn uniformly from [low, high)."""
    return _helper("randint", [low, high], shape, dtype, kwargs)


def exponential(scale=1, shape=(), dtype=None, **kwargs):
    """Exponential samples with mean ``scale`` (rate ``1 / scale``, also per element)."""
    return _helper("exponential", [1.0 / scale], shape, dtype, kwargs)


def gamma(alpha=1, beta=1, shape=(), dtype=None, **kwargs):
    """Gamma(alpha (shape), beta (scale)) samples."""
    return _helper("gamma", [alpha, beta], shape, dtype, kwargs)


def poisson(lam=1, shape=(), dtype=None, **kwargs):
    """Poisson(lam) samples (floats)."""
    return _helper("poisson", [lam], shape, dtype, kwargs)


def negative_binomial(k=1, p=1, shape=(), dtype=None, **kwargs):
    """Failures before ``k`` successes with success probability ``p``."""
    return _helper("negative_binomial", [k, p], shape, dtype, kwargs)


def generalized_negative_binomial(mu=1, alpha=1, shape=(), dtype=None, **kwargs):
    """Negative binomial with mean ``mu`` and dispersion ``alpha``."""
    return _helper("generalized_negative_binomial", [mu, alpha], shape, dtype, kwargs)


def multinomial(data, shape=(), get_prob=False, dtype="int32", **kwargs):
    """Category indices drawn from the distributions on the last axis of ``data``."""
    name, attr = kwargs.pop("name", None), kwargs.pop("attr", None)
    return _call(
        "_sample_multinomial",
        (data,),
        dict(shape=shape, get_prob=get_prob, dtype=dtype, **kwargs),
        name,
        attr,
    )


def shuffle(data, **kwargs):
    """A random permutation of ``data`` along its first axis."""
    name, attr = kwargs.pop("name", None), kwargs.pop("attr", None)
    return _call("_shuffle", (data,), kwargs, name, attr)


def _like(dist):
    names = _ATTRS[dist]

    def fn(data=None, *args, name=None, attr=None, **kwargs):
        attrs = dict(zip(names, args, strict=False))
        attrs.update(kwargs)
        return _call(f"_random_{dist}_like", (data,), attrs, name, attr)

    fn.__name__ = fn.__qualname__ = f"{dist}_like"
    fn.__doc__ = f"Symbol of {dist.replace('_', ' ')} samples with the shape and dtype of ``data``."
    return fn


uniform_like = _like("uniform")
normal_like = _like("normal")
exponential_like = _like("exponential")
gamma_like = _like("gamma")
poisson_like = _like("poisson")
negative_binomial_like = _like("negative_binomial")
generalized_negative_binomial_like = _like("generalized_negative_binomial")
