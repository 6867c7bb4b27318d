"""``gamma`` and ``gammaln`` with MXNet 1.9.1's gradients at the poles.

MXNet differentiates both with its ``psi`` (digamma), which returns the largest
double at ``x = 0, -1, -2, ...`` (``inf`` once cast to float32); jax's digamma is NaN
there. So ``gamma'(0) = gamma(0) * psi(0) = inf`` and ``gammaln'(0) = inf`` in float32,
as in MXNet, instead of NaN. Elsewhere the gradients are jax's digamma formulas.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import jax.scipy.special as jsp
import numpy as np

__all__ = ["gamma", "gammaln", "psi"]

_BIG = float(np.finfo(np.float64).max)


def psi(x):
    """Digamma with MXNet's value at the poles (the largest double, cast to x's dtype)."""
    if not jnp.issubdtype(x.dtype, jnp.floating):
        return jsp.digamma(x)
    big = _BIG if jnp.finfo(x.dtype).bits == 64 else float("inf")  # cast like MXNet's
    pole = (x <= 0) & (jnp.floor(x) == x)
    return jnp.where(pole, jnp.asarray(big, x.dtype), jsp.digamma(x))


@jax.custom_jvp
def gamma(x):
    """The gamma function (``tgamma``), with sign, for real ``x``."""
    return jnp.exp(jsp.gammaln(x)) * jnp.sign(jsp.gamma(x))


@gamma.defjvp
def _gamma_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    y = gamma(x)
    return y, t * (y * psi(x))


@jax.custom_jvp
def gammaln(x):
    """``log|gamma(x)|``."""
    return jsp.gammaln(x)


@gammaln.defjvp
def _gammaln_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return gammaln(x), t * psi(x)
