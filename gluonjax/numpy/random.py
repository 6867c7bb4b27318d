"""``mx.np.random``: NumPy's samplers on gluonjax's random stream (``mx.random.seed``).

Parameters may be numbers or arrays (broadcast against ``size``); the distributions with
parameters are registry ops (``_npi_uniform``...), so their samples are differentiable in
the parameters where the sampler is (``uniform``, ``normal``, ``lognormal``...)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as _np

from .. import _rng
from .._ops import registry as _reg
from .._ops.defs.np_ops import NP_FUNCS, np_dtype
from ..base import ArgumentTypeError, ShapeError
from ..ndarray.ndarray import NDArray
from ._array import call, host_value, ndarray, to_array

__all__ = [
    "seed",
    "uniform",
    "normal",
    "randint",
    "rand",
    "randn",
    "choice",
    "shuffle",
    "multinomial",
    "multivariate_normal",
    "lognormal",
    "logistic",
    "gumbel",
    "laplace",
    "exponential",
    "rayleigh",
    "weibull",
    "pareto",
    "power",
    "gamma",
    "beta",
    "chisquare",
]

_DEFAULTS = {
    "uniform": (0.0, 1.0),
    "normal": (0.0, 1.0),
    "lognormal": (0.0, 1.0),
    "logistic": (0.0, 1.0),
    "gumbel": (0.0, 1.0),
    "laplace": (0.0, 1.0),
    "exponential": (1.0,),
    "rayleigh": (1.0,),
    "weibull": (None,),
    "pareto": (None,),
    "power": (None,),
    "gamma": (None, 1.0),
    "beta": (None, None),
    "chisquare": (None,),
}


def seed(seed, ctx="all"):  # noqa: A001 - MXNet's signature
    """Seed gluonjax's random stream (``mx.random.seed``)."""
    _rng.seed(seed, ctx)


# parameters that must be > 0 (NumPy raises ValueError otherwise); "scale" may be 0
_POSITIVE = {"sigma", "scale", "a", "b", "shape", "df"}


class ParameterError(ShapeError):
    """A sampler's parameter outside its domain (NumPy's ``ValueError``)."""


def _check_positive(name, pn, v):
    if pn not in _POSITIVE or v is None:
        return
    if isinstance(v, NDArray):
        try:
            v = v.asnumpy()
        except Exception:  # noqa: BLE001 - a traced value: checked by nobody, as MXNet
            return
    zero_ok = pn in ("scale", "sigma") and name != "gamma"  # MXNet's gamma: scale > 0
    bad = _np.asarray(v) < 0 if zero_ok else _np.asarray(v) <= 0
    if bad.any():
        raise ParameterError(f"np.random.{name}: {pn} must be positive, got {v}")


def _size(size):
    if size is None:
        return None
    return (int(size),) if isinstance(size, (int, _np.integer)) else tuple(int(s) for s in size)


def _param(p, dt):
    if isinstance(p, NDArray):
        return p
    return ndarray(jnp.asarray(p, dt or jnp.float32))


def _sampler(name):
    op = _reg.get(NP_FUNCS[f"random.{name}"])
    defaults = _DEFAULTS[name]
    pnames = op.input_names({})

    def f(*args, size=None, dtype=None, ctx=None, device=None, out=None, **kwargs):
        vals = list(args[: len(pnames)])
        rest = args[len(pnames) :]
        if rest and size is None:
            size = rest[0]
        for i, pn in enumerate(pnames[len(vals) :], start=len(vals)):
            v = kwargs.pop(pn, defaults[i])
            if v is None:
                raise ShapeError(f"np.random.{name}: parameter '{pn}' is required")
            vals.append(v)
        if kwargs:  # NumPy's signature: a misspelt keyword (``shape=``) is a TypeError
            raise ArgumentTypeError(
                f"np.random.{name}() got unexpected keyword argument(s) {sorted(kwargs)}; "
                f"it takes {', '.join(pnames)}, size, dtype, ctx, device, out "
                f"(the output shape is size=)"
            )
        dt = np_dtype(dtype)
        for pn, v in zip(pnames, vals):
            _check_positive(name, pn, v)
        params = [_param(v, dt) for v in vals]
        res = call(op, params, {"size": _size(size), "dtype": dt and dt.name}, out)
        return res

    f.__name__ = name
    f.__doc__ = f"NumPy's ``random.{name}({', '.join(pnames)}, size=None, dtype=None)``."
    return f


uniform = _sampler("uniform")
normal = _sampler("normal")
lognormal = _sampler("lognormal")
logistic = _sampler("logistic")
gumbel = _sampler("gumbel")
laplace = _sampler("laplace")
exponential = _sampler("exponential")
rayleigh = _sampler("rayleigh")
weibull = _sampler("weibull")
pareto = _sampler("pareto")
power = _sampler("power")
gamma = _sampler("gamma")
beta = _sampler("beta")
chisquare = _sampler("chisquare")


def randint(low, high=None, size=None, dtype=None, ctx=None, device=None, out=None):
    if high is None:
        low, high = 0, low
    dt = np_dtype(dtype) if dtype is not None else _np.dtype(_np.int32)
    return call(
        _reg.get("_npi_random_randint"),
        (),
        {"low": int(low), "high": int(high), "size": _size(size) or (), "dtype": dt.name},
        out,
    )


def rand(*size, **kwargs):
    return uniform(0.0, 1.0, size=size, **kwargs)


def randn(*size, **kwargs):
    return normal(0.0, 1.0, size=size, **kwargs)


def choice(a, size=None, replace=True, p=None, ctx=None, device=None, out=None):
    """Samples from ``arange(a)`` (an int ``a``) or from the 1-d array ``a``."""
    if any(isinstance(x, NDArray) and isinstance(x._data, jax.core.Tracer) for x in (a, p)):
        # hybridized: the registry op draws from the traced key
        pool = to_array(a) if isinstance(a, NDArray) else ndarray(jnp.arange(int(a)))
        w = (
            to_array(p).astype(_np.float32)
            if p is not None
            else ndarray(jnp.ones(pool.shape[0], jnp.float32))
        )
        return call(_reg.get("_npi_choice"), (pool, w), {"size": _size(size), "replace": replace})
    rng = _rng.host_rng()
    pool = int(a) if isinstance(a, (int, _np.integer)) else to_array(a).asnumpy()
    probs = None if p is None else to_array(p).asnumpy().astype(_np.float64)
    if probs is not None:
        probs = probs / probs.sum()
    res = rng.choice(pool, _size(size), replace, probs)
    res = _np.asarray(res)
    if res.dtype == _np.int64:
        res = res.astype(_np.int32)
    return ndarray(jnp.asarray(res))


def shuffle(x):
    """Shuffle ``x`` along its first axis, in place."""
    perm = _rng.host_rng().permutation(x.shape[0])
    x._data = x._data[jnp.asarray(perm)]


def multinomial(n, pvals, size=None):
    rng = _rng.host_rng()
    pv = (
        host_value(to_array(pvals), "random.multinomial").astype(_np.float64)
        if isinstance(pvals, NDArray)
        else _np.asarray(pvals, _np.float64)
    )
    if pv.size == 0:  # no categories: an empty draw per sample (MXNet)
        return ndarray(jnp.zeros((_size(size) or ()) + (0,), jnp.int32))
    head = pv[:-1].sum()
    if head > 1 + 1e-5:
        raise MultinomialError(f"np.random.multinomial: sum(pvals[:-1]) = {head} > 1.0")
    if head > 1:  # float32 rounding of probabilities that sum to one
        pv[:-1] /= head
    res = rng.multinomial(int(n), pv, _size(size))
    return ndarray(jnp.asarray(res.astype(_np.int32)))


def multivariate_normal(mean, cov, size=None, check_valid=None, tol=None):
    mean, cov = to_array(mean), to_array(cov)
    dt = mean.dtype
    if dt == _np.float16:  # the factorisation in float32
        mean, cov = mean.astype("float32"), cov.astype("float32")
    batch = _np.broadcast_shapes(mean.shape, cov.shape[:-1])
    shape = (_size(size) or ()) + tuple(batch)
    z = normal(0.0, 1.0, size=shape, dtype=mean.dtype)
    chol = call(_reg.get("_npi_cholesky"), (cov,), {})
    return (mean + (chol @ z[..., None])[..., 0]).astype(dt)


def _n_sampler(name):
    base = {"uniform": uniform, "normal": normal}[name]

    def f(*args, batch_shape=None, **kwargs):
        """Samples of shape ``batch_shape + broadcast(parameters).shape`` (MXNet's
        ``npx.random.<name>_n``)."""
        params = [to_array(a) for a in args]
        bshape = _np.broadcast_shapes(*(p.shape for p in params)) if params else ()
        size = (_size(batch_shape) or ()) + tuple(bshape)
        return base(*params, size=size, **kwargs)

    f.__name__ = f"{name}_n"
    return f


uniform_n, normal_n = _n_sampler("uniform"), _n_sampler("normal")


class MultinomialError(ShapeError):
    """``pvals`` whose leading probabilities sum past 1 (NumPy's ``ValueError``)."""
