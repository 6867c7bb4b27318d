"""LayerNorm's normalization with a hand-written VJP.

:func:`layer_normalize` computes what jax's autodiff of LayerNorm computed (the same
two-pass statistics, in float32 for float16/bfloat16 data, and the same output expression)
and writes the gradient by hand (``jax.custom_vjp``): with ``xhat = (x - mean) / std`` and
``gd = dy * gamma``, ``dx = (gd - mean(gd) - xhat * mean(gd * xhat)) / std`` (means along
``axis``), ``dgamma = sum(dy * xhat)`` and ``dbeta = sum(dy)`` (sums over every other axis).
As in MXNet 1.9.1 (``_backward_LayerNorm`` reads only the output's gradient), the mean and
std outputs pass no gradient back.

Timings (jax 0.10.2, XLA:CPU, a jitted ``jax.vjp`` forward + backward of the op, float32,
process CPU time pinned to one core, minimum over 15 interleaved rounds, ms), autodiff
against this: (4096, 768) 29.5 -> 10.8, (32, 128, 256) 3.3 -> 2.6, (32, 197, 384) 27.0 ->
9.1. One-pass shifted statistics (as BatchNorm's, :mod:`._bn_train`) tied with the two-pass
ones, which are kept. The same treatment of InstanceNorm and GroupNorm did not pay: between
-7% and +13% depending on the shape (InstanceNorm (32, 256, 8, 8) 1.54 -> 1.77, GroupNorm
(32, 64, 32, 32) with 32 groups 7.0 -> 6.2, (32, 256, 8, 8) with 8 groups 0.78 -> 0.82), so
they keep jax's autodiff.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

__all__ = ["layer_normalize"]


def _bcast(v, ndim, axis):
    shape = [1] * ndim
    shape[axis] = -1
    return v.reshape(shape)


def _forward(data, gamma, beta, axis, eps):
    x = data.astype(jnp.promote_types(data.dtype, jnp.float32))
    mean = jnp.mean(x, axis=axis, keepdims=True)
    var = jnp.mean(jnp.square(x - mean), axis=axis, keepdims=True)
    std = jnp.sqrt(var + eps)
    out = (data - mean) / std * _bcast(gamma, data.ndim, axis) + _bcast(beta, data.ndim, axis)
    return (out.astype(data.dtype), mean, std), (data, mean, std, gamma, beta)


@functools.partial(jax.custom_vjp, nondiff_argnums=(3, 4))
def layer_normalize(data, gamma, beta, axis, eps):
    """``(data - mean) / std * gamma + beta`` along ``axis`` (non-negative), ``gamma`` and
    ``beta`` of shape ``(data.shape[axis],)``.

    Returns ``(out, mean, std)``: ``out`` in ``data``'s dtype, ``mean`` and
    ``std = sqrt(var + eps)`` with ``axis`` kept (size 1) in the accumulation dtype. Only
    ``out`` has a gradient.
    """
    return _forward(data, gamma, beta, axis, eps)[0]


def _layer_normalize_fwd(data, gamma, beta, axis, eps):
    return _forward(data, gamma, beta, axis, eps)


def _layer_normalize_bwd(axis, eps, res, cts):
    data, mean, std, gamma, beta = res
    dy = cts[0]
    acc, ndim, n = mean.dtype, data.ndim, data.shape[axis]
    inv = 1 / std
    xhat = (data.astype(acc) - mean) * inv
    g = dy.astype(acc)
    others = tuple(i for i in range(ndim) if i != axis)
    dgamma = jnp.sum(g * xhat, axis=others)
    dbeta = jnp.sum(g, axis=others)
    gd = g * _bcast(gamma.astype(acc), ndim, axis)
    s1 = jnp.sum(gd, axis=axis, keepdims=True)
    s2 = jnp.sum(gd * xhat, axis=axis, keepdims=True)
    dx = (inv / n) * (n * gd - s1 - xhat * s2)
    return dx.astype(data.dtype), dgamma.astype(gamma.dtype), dbeta.astype(beta.dtype)


layer_normalize.defvjp(_layer_normalize_fwd, _layer_normalize_bwd)
