"""Multi-head attention matmuls on MXNet's interleaved projections
(contrib.interleaved_matmul_selfatt_qk / _valatt, encdec_qk / _valatt; gluonnlp's
BERT uses them).

Layouts (time-major): a self-attention projection ``queries_keys_values`` is
``(seq, batch, heads * 3 * head_dim)`` holding, per head, its query, key and value
slices one after the other; an encoder-decoder ``keys_values`` is
``(seq, batch, heads * 2 * head_dim)``. Attention scores are
``(batch * heads, query_seq, key_seq)``, batch-major then head.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from ..registry import Attr, register

_HEADS = {"heads": Attr("int")}


def _split(x, heads, parts, name):
    if x.ndim != 3:
        raise ValueError(f"{name} must be 3-d (seq, batch, dim), got {tuple(x.shape)}")
    seq, batch, dim = x.shape
    if heads < 1 or dim % (heads * parts):
        raise ValueError(
            f"{name} dim {dim} must be a multiple of heads * {parts} = {heads * parts}"
        )
    return x.reshape(seq, batch * heads, parts, dim // (heads * parts))


def _scale(head_dim, dtype):
    return jnp.asarray(np.float32(1.0 / np.sqrt(np.float32(head_dim))), dtype)


def _scores(q, k):
    """(seq_q, b, d), (seq_k, b, d) -> scaled (b, seq_q, seq_k)."""
    return jnp.einsum("ibd,jbd->bij", q, k) * _scale(q.shape[-1], q.dtype)


def _weighted(att, v, seq, batch):
    """(b, seq_q, seq_k), (seq_k, b, d) -> (seq_q, batch, heads * d)."""
    if att.shape[0] != v.shape[1] or att.shape[2] != v.shape[0]:
        raise ValueError(
            f"attention {tuple(att.shape)} must be (batch * heads, query_seq, "
            f"{v.shape[0]}) with batch * heads = {v.shape[1]}"
        )
    return jnp.einsum("bij,jbd->ibd", att, v).reshape(att.shape[1], batch, -1)


@register("_contrib_interleaved_matmul_selfatt_qk", inputs=("queries_keys_values",), attrs=_HEADS)
def selfatt_qk(queries_keys_values, *, heads):
    """Scaled scores ``q . k / sqrt(head_dim)`` of each head: ``(batch * heads, seq, seq)``."""
    x = _split(queries_keys_values, heads, 3, "queries_keys_values")
    return _scores(x[:, :, 0], x[:, :, 1])


@register(
    "_contrib_interleaved_matmul_selfatt_valatt",
    inputs=("queries_keys_values", "attention"),
    attrs=_HEADS,
)
def selfatt_valatt(queries_keys_values, attention, *, heads):
    """Attention-weighted values ``attention @ v`` of each head, heads concatenated:
    ``(seq, batch, heads * head_dim)``."""
    x = _split(queries_keys_values, heads, 3, "queries_keys_values")
    return _weighted(attention, x[:, :, 2], x.shape[0], queries_keys_values.shape[1])


@register("_contrib_interleaved_matmul_encdec_qk", inputs=("queries", "keys_values"), attrs=_HEADS)
def encdec_qk(queries, keys_values, *, heads):
    """Scaled scores of decoder ``queries (seq_q, batch, heads * head_dim)`` against the
    encoder keys: ``(batch * heads, seq_q, seq_k)``."""
    q = _split(queries, heads, 1, "queries")[:, :, 0]
    kv = _split(keys_values, heads, 2, "keys_values")
    if kv.shape[1] != q.shape[1] or kv.shape[-1] != q.shape[-1]:
        raise ValueError(
            f"keys_values {tuple(keys_values.shape)} does not match queries "
            f"{tuple(queries.shape)} (its last dim must be twice the queries')"
        )
    return _scores(q, kv[:, :, 0])


@register(
    "_contrib_interleaved_matmul_encdec_valatt",
    inputs=("keys_values", "attention"),
    attrs=_HEADS,
)
def encdec_valatt(keys_values, attention, *, heads):
    """Attention-weighted encoder values: ``(seq_q, batch, heads * head_dim)``."""
    kv = _split(keys_values, heads, 2, "keys_values")
    return _weighted(attention, kv[:, :, 1], kv.shape[0], keys_values.shape[1])
