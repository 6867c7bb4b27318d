"""Indexing ops behind ``NDArray.__getitem__`` / ``__setitem__``.

The index is a static, hashable key: ``('s', start, stop, step)`` for a slice,
``('i', n)`` for an integer, ``('n',)`` for None, ``('e',)`` for Ellipsis and
``('a',)`` for an index array passed as an extra input.
"""

from __future__ import annotations

import jax.numpy as jnp

from ..bounds import check_key
from ..registry import Attr, register


def parse_key(key):
    """The key as a tuple: a symbol JSON file stores it as its text."""
    if isinstance(key, str):
        import ast

        key = ast.literal_eval(key)
    return tuple(tuple(k) for k in key)


def build_index(key, arrays):
    key = parse_key(key)
    it = iter(arrays)
    out = []
    for k in key:
        tag = k[0]
        if tag == "s":
            out.append(slice(k[1], k[2], k[3]))
        elif tag == "i":
            out.append(k[1])
        elif tag == "n":
            out.append(None)
        elif tag == "e":
            out.append(Ellipsis)
        else:
            out.append(next(it).astype(jnp.int32))
    return tuple(out)


@register("_getitem", variadic=True, attrs={"key": Attr("raw", ())})
def getitem(data, *index, key):
    """``data[key]``; a result made 0-d by integer indices has shape (1,) as in MXNet.

    An integer index past its axis raises ``IndexError`` (checked against the static
    shape when the kernel is traced)."""
    key = parse_key(key)
    check_key(key, data.shape, "NDArray[...]")
    out = data[build_index(key, index)]
    if out.ndim == 0:
        out = out.reshape(1)
    return out


@register("_setitem", variadic=True, attrs={"key": Attr("raw", ())})
def setitem(data, value, *index, key):
    """A copy of ``data`` with ``data[key] = value`` (value broadcast to the slot)."""
    key = parse_key(key)
    check_key(key, data.shape, "NDArray[...] = value")
    idx = build_index(key, index)
    slot = data[idx].shape
    value = jnp.asarray(value, data.dtype)
    if value.shape != slot:
        size = 1
        for d in slot:
            size *= d
        value = value.reshape(slot) if value.size == size else jnp.broadcast_to(value, slot)
    return data.at[idx].set(value)
