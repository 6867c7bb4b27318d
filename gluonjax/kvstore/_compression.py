"""MXNet's 2-bit gradient compression (``kv.set_gradient_compression``)."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

from .base import KVStoreError

__all__ = ["parse", "two_bit"]


def parse(params):
    """Validate ``{'type': '2bit', 'threshold': t}`` (t > 0, default 0.5)."""
    if not isinstance(params, dict):
        raise KVStoreError(
            f"gradient compression parameters must be a dict such as "
            f"{{'type': '2bit', 'threshold': 0.5}}, got {type(params).__name__}"
        )
    kind = str(params.get("type", ""))
    if kind != "2bit":
        raise KVStoreError(
            f"Unknown type for gradient compression {kind!r}; gluonjax (like MXNet 1.9.1) "
            f"supports {{'type': '2bit', 'threshold': ...}}"
        )
    try:
        threshold = float(params.get("threshold", 0.5))
    except (TypeError, ValueError):
        raise KVStoreError(f"threshold must be a number, got {params['threshold']!r}") from None
    if not threshold > 0:
        raise KVStoreError(f"threshold must be greater than 0, got {threshold}")
    return {"type": kind, "threshold": threshold}


@functools.partial(jax.jit, static_argnums=2)
def two_bit(value, residual, threshold):
    """``(quantized, new_residual)``: ``residual + value`` rounded to {-t, 0, t}."""
    acc = residual + value
    t = jnp.asarray(threshold, acc.dtype)
    q = jnp.where(acc >= t, t, jnp.where(acc <= -t, -t, jnp.zeros_like(acc)))
    return q, acc - q
