"""Small numeric helpers shared by the optimizer rules."""

from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np


def power(b, t):
    """``b ** t`` for a Python float ``b`` and a (possibly traced) count ``t``.

    Computed as ``exp(t * log(b))`` with ``log(b)`` in double precision, which keeps
    float32 results accurate where MXNet computes the power in Python doubles.
    """
    b = float(b)
    if b == 0.0:
        return jnp.where(jnp.asarray(t) == 0, 1.0, 0.0).astype(jnp.float32)
    if b < 0.0:
        return jnp.asarray(b, jnp.float32) ** t
    return jnp.exp(jnp.asarray(t, jnp.float32) * math.log(b))


def one_minus_power(b, t):
    """``1 - b ** t`` without the cancellation of float32 ``1 - b**t`` (``b`` near 1)."""
    b = float(b)
    if b <= 0.0:
        return 1.0 - power(b, t)
    return -jnp.expm1(jnp.asarray(t, jnp.float32) * math.log(b))


def f32_one_minus(b):
    """``1 - b`` in float32 arithmetic, as MXNet's C++ kernels compute it from a float
    parameter (``1 - float32(0.999)`` is ``0.00099998713``, not ``0.001``)."""
    return float(np.float32(1.0) - np.float32(b))


def f32_one_minus_power(b, t):
    """``1 - b ** t`` in plain float32 arithmetic, as MXNet's C++ kernels compute it."""
    return 1.0 - jnp.power(jnp.float32(b), jnp.asarray(t, jnp.float32))


def zeros_state(weight, n):
    """``n`` zero arrays shaped like ``weight``."""
    return tuple(jnp.zeros_like(weight) for _ in range(n))
