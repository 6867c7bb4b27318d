"""BatchNorm's training-mode normalization: one-pass statistics and a hand-written VJP.

:func:`bn_train` computes what jax's autodiff of the textbook formula (mean, then the
variance of ``x - mean``, then ``(x - mean) * gamma / sqrt(var + eps) + beta``) computes, in
fewer passes over the data:

- the statistics in one pass, shifted for safety: with ``K`` the first element of each
  channel (a value of the data, so ``|mean - K|`` is of the order of the standard
  deviation), ``d = x - K``, ``mean = K + sum(d) / n`` and
  ``var = max(sum(d * d) / n - (sum(d) / n) ** 2, 0)``; ``x = 1e4 + randn`` keeps float32's
  precision, where the unshifted one-pass formula loses every digit. The sums run in
  float32 for float16/bfloat16 data (float64 stays float64), as the two-pass formula did.
- the gradient by hand (``jax.custom_vjp``): with ``xhat = (x - mean) * inv`` and
  ``scale = gamma * inv`` (``inv`` under ``fix_gamma``), ``dbeta = sum(dy)``,
  ``dgamma = sum(dy * xhat)`` (0 under ``fix_gamma``) and
  ``dx = scale / n * (n * dy - dbeta - xhat * dgamma)``; every sum is per channel over every
  axis but ``axis``. ``sum(dy * xhat)`` is ``inv * (sum(dy * d) - (mean - K) * sum(dy))``: the
  residual ``d`` feeds the reduction as it is (XLA:CPU's YNNPACK reductions fuse an
  elementwise product but not a broadcast, so ``x - mean`` would be written out first).

As in MXNet 1.9.1 (``_backward_BatchNorm`` reads only the output's gradient), the gradients
of the statistics (the op's mean and inverse-std outputs) are dropped. The shift ``K`` needs
no ``stop_gradient``: only the hand-written backward is differentiated.

Timings (jax 0.10.2, XLA:CPU, a jitted ``jax.vjp`` forward + backward of the
normalization, process CPU time pinned to one core, minimum over 2 x 15 interleaved rounds,
ms; the machine was shared, so absolute numbers moved by up to 2x between runs, the rankings
did not):

=====================  ========  ================  ===============
shape, axis            autodiff  by hand, ``sum``  by hand, matvec
=====================  ========  ================  ===============
(32,64,32,32), 1       10.0      3.5               9.1
(32,128,16,16), 1      2.29      2.11              1.94
(32,512,4,4), 1        0.60      0.45              0.41
(128,256), 1           0.058     0.046             0.043
(32,32,32,64), 3       4.45      2.76              4.76
(32,4,4,512), 3        0.32      0.23              0.24
float16 (32,64,32,32)  5.9       3.3               17.9
=====================  ========  ================  ===============

"autodiff" is the former lowering; "by hand" is this module with the per-channel sums as
``jnp.sum`` over the other axes (kept) or as matrix-vector products (``ones @
x.reshape(-1, C)`` for a last channel axis, ``x.reshape(N, C, HW) @ ones`` then ``ones @``
otherwise). The products win by up to 10% on small layers and lose up to 2.7x (5.5x in
float16) on large ones, where XLA:CPU writes their elementwise operands out. Reducing
``dy * xhat`` itself instead of ``dy * d`` makes XLA write ``xhat`` out first: 4.05 against
3.5 ms on the largest shape.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

__all__ = ["bn_train"]


def _bcast(v, ndim, axis):
    shape = [1] * ndim
    shape[axis] = -1
    return v.reshape(shape)


def _channel_sums(arrays, axis):
    """Per-channel sums of each array over every axis but ``axis`` (see the timings)."""
    axes = tuple(i for i in range(arrays[0].ndim) if i != axis)
    return [jnp.sum(a, axis=axes) for a in arrays]


def _forward(data, gamma, beta, axis, eps, fix_gamma):
    ndim, n = data.ndim, data.size // data.shape[axis]
    acc = jnp.promote_types(data.dtype, jnp.float32)
    first = tuple(slice(None) if i == axis else 0 for i in range(ndim))
    shift = data[first].astype(acc)
    d = data.astype(acc) - _bcast(shift, ndim, axis)
    s1, s2 = _channel_sums((d, d * d), axis)
    dmean = s1 / n
    var = jnp.maximum(s2 / n - jnp.square(dmean), 0)
    inv = jax.lax.rsqrt(var + eps)
    scale = inv if fix_gamma else inv * gamma.astype(acc)
    out = (d - _bcast(dmean, ndim, axis)) * _bcast(scale, ndim, axis)
    out = (out + _bcast(beta.astype(acc), ndim, axis)).astype(data.dtype)
    return (out, shift + dmean, var, inv), (d, dmean, inv, gamma, beta)


@functools.partial(jax.custom_vjp, nondiff_argnums=(3, 4, 5))
def bn_train(data, gamma, beta, axis, eps, fix_gamma):
    """Batch-normalize floating ``data`` over every axis but ``axis`` (non-negative).

    Returns ``(out, mean, var, inv)``: ``out`` in ``data``'s dtype; the batch mean, biased
    variance and ``1 / sqrt(var + eps)`` per channel in the accumulation dtype (float32,
    or float64 for float64 data). Only ``out`` has a gradient.
    """
    return _forward(data, gamma, beta, axis, eps, fix_gamma)[0]


def _bn_train_fwd(data, gamma, beta, axis, eps, fix_gamma):
    return _forward(data, gamma, beta, axis, eps, fix_gamma)


def _bn_train_bwd(axis, eps, fix_gamma, res, cts):
    d, dmean, inv, gamma, beta = res
    dy = cts[0]
    ndim, n = d.ndim, d.size // d.shape[axis]
    g = dy.astype(d.dtype)
    dbeta, gd = _channel_sums((g, g * d), axis)
    dgamma = (gd - dmean * dbeta) * inv  # sum(dy * xhat), from the shifted residual d
    scale = inv if fix_gamma else inv * gamma.astype(d.dtype)
    xhat = (d - _bcast(dmean, ndim, axis)) * _bcast(inv, ndim, axis)
    dx = n * g - _bcast(dbeta, ndim, axis) - xhat * _bcast(dgamma, ndim, axis)
    dx = (dx * _bcast(scale / n, ndim, axis)).astype(dy.dtype)
    dgamma = jnp.zeros_like(gamma) if fix_gamma else dgamma.astype(gamma.dtype)
    return dx, dgamma, dbeta.astype(beta.dtype)


bn_train.defvjp(_bn_train_fwd, _bn_train_bwd)
