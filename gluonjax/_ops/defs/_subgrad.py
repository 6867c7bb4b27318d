"""Non-smooth functions with MXNet's subgradients at their kinks.

jax differentiates ``maximum(x, y)`` at a tie as 0.5/0.5, ``abs`` at 0 as 1 and
``clip`` at a bound as 0.5; MXNet 1.9.1 picks one subgradient instead:

* ``relu'(0) = 0`` (the gradient flows only where ``x > 0``);
* ``maximum(a, b)``: the whole gradient goes to ``a`` where ``a >= b``, else to ``b``;
  ``minimum(a, b)``: to ``a`` where ``a <= b`` (``_maximum_scalar``/``_minimum_scalar``
  likewise pass it where ``x >= s`` / ``x <= s``);
* ``abs'(0) = sign(0) = 0``;
* ``clip`` passes the gradient on its bounds (``a_min <= x <= a_max``);
* a NaN gets relu gradient NaN and no maximum/minimum gradient, as in MXNet;
* ``hypot``'s gradient at the origin is 0, the smallest subgradient (MXNet: NaN).

Training on exact zeros (a BatchNorm whose gamma starts at 0 feeds ReLU exact
zeros, as in ResNeXt) depends on these choices, so every registry op uses the
functions here instead of the jax ones. The forward values are jax's (NaN
propagates as in MXNet). Integer inputs have no gradient and use jax's functions.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax

__all__ = ["relu", "maximum", "minimum", "abs_", "clip", "hypot"]


# relu is in every conv net: its rule is written with lax primitives (no jnp wrappers),
# which keeps a training step's first trace short
@jax.custom_jvp
def _relu_f(x):
    """``max(x, 0)`` with ``relu'(0) = 0``."""
    return lax.max(x, lax.full_like(x, 0))


@_relu_f.defjvp
def _relu_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    # the gradient is the incoming one times a mask, as MXNet's kernel computes it: 1
    # where x > 0, 0 elsewhere, NaN where x is NaN (so an infinite incoming gradient
    # gives NaN where x <= 0, as in MXNet); the backward is one multiply
    zero = lax.full_like(x, 0)
    mask = lax.select(lax.ne(x, x), x, lax.select(lax.gt(x, zero), lax.full_like(x, 1), zero))
    return _relu_f(x), t * mask


@jax.custom_jvp
def _maximum_f(a, b):
    """``max(a, b)`` (broadcasting); a tie sends the gradient to ``a``."""
    return jnp.maximum(a, b)


@_maximum_f.defjvp
def _maximum_jvp(primals, tangents):
    (a, b), (ta, tb) = primals, tangents
    zero = jnp.zeros((), ta.dtype)  # a NaN operand: no gradient to either side (MXNet)
    return jnp.maximum(a, b), jnp.where(a >= b, ta, zero) + jnp.where(a < b, tb, zero)


@jax.custom_jvp
def _minimum_f(a, b):
    """``min(a, b)`` (broadcasting); a tie sends the gradient to ``a``."""
    return jnp.minimum(a, b)


@_minimum_f.defjvp
def _minimum_jvp(primals, tangents):
    (a, b), (ta, tb) = primals, tangents
    zero = jnp.zeros((), ta.dtype)
    return jnp.minimum(a, b), jnp.where(a <= b, ta, zero) + jnp.where(a > b, tb, zero)


@jax.custom_jvp
def _abs_f(x):
    """``|x|`` with ``abs'(0) = 0``."""
    return jnp.abs(x)


@_abs_f.defjvp
def _abs_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return jnp.abs(x), jnp.sign(x).astype(t.dtype) * t


@jax.custom_jvp
def _hypot_f(a, b):
    return jnp.hypot(a, b)


@_hypot_f.defjvp
def _hypot_jvp(primals, tangents):
    (a, b), (ta, tb) = primals, tangents
    h = jnp.hypot(a, b)
    safe = jnp.where(h > 0, h, 1)
    return h, jnp.where(h > 0, (a / safe) * ta + (b / safe) * tb, 0)


@jax.custom_jvp
def _clip_f(x, lo, hi):
    """``x`` clipped into ``[lo, hi]``; the gradient passes on the bounds (not past
    them) and never reaches ``lo``/``hi``."""
    return jnp.clip(x, lo, hi)


@_clip_f.defjvp
def _clip_jvp(primals, tangents):
    (x, lo, hi), (t, _, _) = primals, tangents
    outside = (x > hi) | (x < lo)
    return jnp.clip(x, lo, hi), jnp.where(outside, jnp.zeros((), t.dtype), t)


def _inexact(*xs):
    return all(jnp.issubdtype(jnp.result_type(x), jnp.inexact) for x in xs)


def relu(x):
    """``max(x, 0)`` with ``relu'(0) = 0`` (real floating inputs; others as jax's)."""
    return _relu_f(x) if jnp.issubdtype(x.dtype, jnp.floating) else jnp.maximum(x, 0)


def maximum(a, b):
    """``max(a, b)`` with broadcasting; at a tie the gradient goes to ``a``."""
    return _maximum_f(a, b) if _inexact(a, b) else jnp.maximum(a, b)


def minimum(a, b):
    """``min(a, b)`` with broadcasting; at a tie the gradient goes to ``a``."""
    return _minimum_f(a, b) if _inexact(a, b) else jnp.minimum(a, b)


def abs_(x):
    """``|x|`` with ``abs'(0) = 0``."""
    return _abs_f(x) if _inexact(x) else jnp.abs(x)


def hypot(a, b):
    """``sqrt(a**2 + b**2)``; its gradient at the origin is 0 (MXNet 1.9.1: NaN)."""
    return _hypot_f(a, b) if _inexact(a, b) else jnp.hypot(a, b)


def clip(x, lo, hi):
    """``x`` clipped into ``[lo, hi]``; the gradient passes on the bounds."""
    return _clip_f(x, lo, hi) if _inexact(x) else jnp.clip(x, lo, hi)
