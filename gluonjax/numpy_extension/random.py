"""``npx.random``: MXNet's NumPy-extension samplers (``bernoulli``, ``seed``...)."""

from __future__ import annotations

import jax.numpy as jnp

from .. import _rng
from .._ops import registry as _reg
from ..base import OpError as MXNetError  # MXNetError and ValueError, as MXNet raises
from ..ndarray.ndarray import NDArray
from ..numpy._array import call, ndarray
from ..numpy.random import normal_n, uniform_n  # noqa: F401


def seed(seed, ctx="all"):  # noqa: A001 - MXNet's signature
    _rng.seed(seed, ctx)


def bernoulli(prob=None, logit=None, size=None, dtype=None, ctx=None, out=None):
    """Samples of 0/1 with probability ``prob`` (or ``sigmoid(logit)``)."""
    if (prob is None) == (logit is None):
        raise MXNetError("npx.random.bernoulli: give exactly one of prob= and logit=")
    if prob is None:
        p = logit if isinstance(logit, NDArray) else ndarray(jnp.asarray(logit, jnp.float32))
        from ..numpy import _FUNCS

        p = 1.0 / (1.0 + _FUNCS["exp"](-p))
    else:
        p = prob if isinstance(prob, NDArray) else ndarray(jnp.asarray(prob, jnp.float32))
        pv = p.asnumpy()
        if (pv < 0).any() or (pv > 1).any():
            raise MXNetError("npx.random.bernoulli: prob must be in [0, 1]")
    size = (size,) if isinstance(size, int) else size
    return call(_reg.get("_npi_bernoulli"), (p,), {"size": size, "dtype": dtype}, out)
