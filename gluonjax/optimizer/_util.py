"""Small numeric helpers shared by the optimizer rules."""

from __future__ import annotations

import math

import jax
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


def full_like(weight, value=0.0, shape=None):
    """An array of ``value`` with ``weight``'s dtype and device (``shape`` default: its shape).

    A concrete weight gets the array from the host with ``jax.device_put``, which compiles
    nothing (``jnp.zeros_like`` compiles one XLA program per shape); a traced one gets
    ``jnp.full``.
    """
    shape = weight.shape if shape is None else shape
    if isinstance(weight, jax.core.Tracer) or not isinstance(weight, jax.Array):
        return jnp.full(shape, value, weight.dtype)
    # placed as jnp.zeros_like would: committed to the weight's device only if the weight is
    # (a committed state beside uncommitted weights changes the compiled step's signature)
    where = weight.sharding if weight.committed else None
    return jax.device_put(np.full(shape, value, weight.dtype), where)


def zeros_state(weight, n):
    """``n`` zero arrays shaped like ``weight`` (separate buffers, on its device)."""
    return tuple(full_like(weight) for _ in range(n))
