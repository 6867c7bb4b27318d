"""Densities of the sampling distributions: ``_random_pdf_<dist>`` (MXNet's pdf ops).

``random_pdf_normal(sample, mu, sigma)``: the parameter arrays share one shape,
which must be the leading part of ``sample``'s shape; each parameter element
applies to the samples below it. ``is_log=True`` gives the log-density. For
``dirichlet`` the last axis is the vector axis: ``alpha`` is ``(..., k)``,
``sample`` is ``(..., n, k)`` and the output ``(..., n)``.

As in MXNet, ``gamma``'s ``beta`` is a *rate* here (the samplers take a scale),
``negative_binomial``'s ``p`` enters the density as ``p**k (1-p)**x``, and the
discrete densities (poisson, negative binomials) pass no gradient to ``sample``.

Examples
--------
>>> import gluonjax as mx
>>> x = mx.nd.array([[-2, -1, 0, 1, 2]])
>>> mx.nd.random_pdf_normal(x, mx.nd.array([0]), mx.nd.array([1])).asnumpy().round(4)
array([[0.054 , 0.242 , 0.3989, 0.242 , 0.054 ]], dtype=float32)
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
from jax.scipy.special import gammaln

from ..registry import Attr, register


def _expand(sample, params, vector=False):
    """Parameters broadcast against ``sample`` (MXNet's leading-subshape rule)."""
    p0 = params[0]
    for p in params[1:]:
        if p.shape != p0.shape:
            raise ValueError(f"parameter arrays must share one shape, got {p0.shape} and {p.shape}")
    lead = p0.shape[:-1] if vector else p0.shape
    if sample.ndim < p0.ndim or sample.shape[: len(lead)] != lead:
        raise ValueError(
            f"the shape of the parameters {p0.shape} must be the leading part of the "
            f"shape of sample {sample.shape}"
        )
    if vector:
        if sample.shape[-1] != p0.shape[-1]:
            raise ValueError(
                f"sample's last axis ({sample.shape[-1]}) must match alpha's ({p0.shape[-1]})"
            )
        extra = sample.ndim - p0.ndim
        return [p.reshape(lead + (1,) * extra + p.shape[-1:]) for p in params]
    extra = sample.ndim - p0.ndim
    return [p.reshape(p.shape + (1,) * extra) for p in params]


def _uniform(x, low, high):
    return jnp.zeros_like(x) - jnp.log(high - low)


def _normal(x, mu, sigma):
    return -0.5 * jnp.square(x - mu) / jnp.square(sigma) - jnp.log(math.sqrt(2 * math.pi) * sigma)


def _gamma(x, alpha, beta):
    return alpha * jnp.log(beta) + (alpha - 1) * jnp.log(x) - beta * x - gammaln(alpha)


def _exponential(x, lam):
    return jnp.log(lam) - lam * x


def _poisson(x, lam):
    return x * jnp.log(lam) - gammaln(x + 1) - lam


def _nb(x, k, p):
    return gammaln(x + k) - gammaln(x + 1) - gammaln(k) + k * jnp.log(p) + x * jnp.log1p(-p)


def _gnb(x, mu, alpha):
    return _nb(x, 1.0 / alpha, 1.0 / (mu * alpha + 1.0))


def _dirichlet(x, alpha):
    return jnp.sum((alpha - 1) * jnp.log(x), axis=-1) + (
        gammaln(jnp.sum(alpha, axis=-1)) - jnp.sum(gammaln(alpha), axis=-1)
    )


# name -> (log density, parameter names, discrete, vector-valued samples)
_PDFS = {
    "uniform": (_uniform, ("low", "high"), False, False),
    "normal": (_normal, ("mu", "sigma"), False, False),
    "gamma": (_gamma, ("alpha", "beta"), False, False),
    "exponential": (_exponential, ("lam",), False, False),
    "poisson": (_poisson, ("lam",), True, False),
    "negative_binomial": (_nb, ("k", "p"), True, False),
    "generalized_negative_binomial": (_gnb, ("mu", "alpha"), True, False),
    "dirichlet": (_dirichlet, ("alpha",), False, True),
}


def _make(name, logpdf, params, discrete, vector):
    def impl(sample, *args, is_log):
        dt = sample.dtype
        x = jax.lax.stop_gradient(sample) if discrete else sample
        ps = _expand(x, [a.astype(dt) for a in args], vector)
        out = logpdf(x, *ps)
        if vector and sample.ndim == 1:
            out = out.reshape((1,))
        return (out if is_log else jnp.exp(out)).astype(dt)

    impl.__doc__ = (
        f"Density of ``sample`` under {name.replace('_', ' ')} distributions with parameters "
        f"{', '.join(params)} (``is_log``: the log-density).\n\nInputs: sample, "
        f"{', '.join(params)}."
    )
    register(
        f"_random_pdf_{name}",
        inputs=("sample",) + params,
        attrs={"is_log": Attr("bool", False)},
        aliases=(f"random_pdf_{name}",),
    )(impl)


for _n, (_f, _p, _d, _v) in _PDFS.items():
    _make(_n, _f, _p, _d, _v)
