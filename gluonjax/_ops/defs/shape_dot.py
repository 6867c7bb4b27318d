"""Matrix products: dot (MXNet's N-d semantics) and batch_dot."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ..registry import Attr, register

_DOT_ATTRS = {
    "transpose_a": Attr("bool", False),
    "transpose_b": Attr("bool", False),
    "forward_stype": Attr("str?", None, choices=("csr", "default", "row_sparse")),
}


def _dot_infer(attrs, shapes):
    """A weight's contracted axis from the data's (Gluon's deferred ``x.dot(w)``)."""
    a, b = shapes["lhs"], shapes.get("rhs")
    if b is None or not a:
        return {}
    k = a[0] if attrs["transpose_a"] else a[-1]
    return {"rhs": tuple(b[:-1]) + (k,) if attrs["transpose_b"] else (k,) + tuple(b[1:])}


@register("dot", inputs=("lhs", "rhs"), attrs=_DOT_ATTRS, bucket="contract", infer_args=_dot_infer)
def dot(lhs, rhs, *, transpose_a, transpose_b, forward_stype):
    """MXNet ``dot``: contract the last axis of ``lhs`` with the first axis of ``rhs``.

    ``transpose_a`` contracts lhs's *first* axis instead (output keeps lhs.shape[1:]);
    ``transpose_b`` contracts rhs's *last* axis (output keeps rhs.shape[:-1]). Output
    shape: remaining lhs axes + remaining rhs axes; 1-D x 1-D gives shape (1,).
    ``forward_stype`` is accepted and ignored (storage is always dense).
    """
    if lhs.ndim == 0 or rhs.ndim == 0:
        raise ValueError(f"dot needs at least 1-d inputs, got {lhs.shape} and {rhs.shape}")
    if lhs.ndim == 1 and rhs.ndim == 1:
        if transpose_a or transpose_b:
            raise ValueError("cannot transpose vectors")
        if lhs.shape != rhs.shape:
            raise ValueError(f"shape mismatch: {lhs.shape} x {rhs.shape}")
        return jnp.dot(lhs, rhs).reshape(1)
    la = 0 if transpose_a else lhs.ndim - 1
    ra = rhs.ndim - 1 if transpose_b else 0
    if lhs.shape[la] != rhs.shape[ra]:
        raise ValueError(
            f"shape mismatch: {lhs.shape} x {rhs.shape} "
            f"(transpose_a={transpose_a}, transpose_b={transpose_b})"
        )
    return jax.lax.dot_general(lhs, rhs, (((la,), (ra,)), ((), ())))


@register("batch_dot", inputs=("lhs", "rhs"), attrs=_DOT_ATTRS, bucket="contract")
def batch_dot(lhs, rhs, *, transpose_a, transpose_b, forward_stype):
    """Batched matrix product of (..., M, K) and (..., K, N) with equal leading dims;
    ``transpose_a``/``transpose_b`` swap the last two axes of an operand first."""
    if lhs.ndim < 3 or lhs.ndim != rhs.ndim:
        raise ValueError(f"batch_dot needs two N-d (N >= 3) inputs, got {lhs.shape}, {rhs.shape}")
    if lhs.shape[:-2] != rhs.shape[:-2]:
        raise ValueError(f"leading batch dims differ: {lhs.shape} x {rhs.shape}")
    a = jnp.swapaxes(lhs, -1, -2) if transpose_a else lhs
    b = jnp.swapaxes(rhs, -1, -2) if transpose_b else rhs
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(
            f"shape mismatch: {lhs.shape} x {rhs.shape} "
            f"(transpose_a={transpose_a}, transpose_b={transpose_b})"
        )
    nb = lhs.ndim - 2
    batch = tuple(range(nb))
    return jax.lax.dot_general(a, b, (((nb + 1,), (nb,)), (batch, batch)))
