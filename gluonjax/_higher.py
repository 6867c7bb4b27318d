"""Higher-order gradients: ``autograd.grad(..., create_graph=True)``."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ._tape import Node, _raw, _toposort
from .base import MXNetError

__all__ = ["grad_create_graph"]


def grad_create_graph(heads, variables, head_grads):
    """Gradients that are themselves on the tape (for higher-order derivatives).

    The recorded graph between ``variables`` and ``heads`` is replayed as one
    pure function; its gradient becomes a new tape node whose backward is the
    VJP of that gradient function, so it can be differentiated again.
    """
    from . import autograd
    from .ndarray.ndarray import NDArray

    order = _toposort(heads)[::-1]  # inputs first
    for node in order:
        if node.replay is None:
            raise MXNetError(
                f"autograd.grad(create_graph=True) cannot differentiate through "
                f"'{node.name}' twice (custom autograd.Function); use create_graph=False"
            )
    var_pos = {id(v): k for k, v in enumerate(variables)}
    consts = [None if g is None else _raw(g) for g in head_grads]

    def forward(*vals):
        env = {}

        def value(arr):
            k = var_pos.get(id(arr))
            if k is not None:
                return vals[k]
            if arr._node is not None and (id(arr._node[0]), arr._node[1]) in env:
                return env[(id(arr._node[0]), arr._node[1])]
            return arr._data

        for node in order:
            outs = node.replay(*[value(p) for p in node.parents])
            for i, o in enumerate(outs):
                env[(id(node), i)] = o
        return [value(h) for h in heads]

    def grad_fn(*vals):
        outs, vjp_fn = jax.vjp(forward, *vals)
        cts = [jnp.ones_like(o) if c is None else c for o, c in zip(outs, consts)]
        return tuple(vjp_fn(cts))

    values = [v._data for v in variables]
    grads = grad_fn(*values)
    outs = [NDArray(g) for g in grads]
    if autograd.is_recording():
        parents = tuple(variables)

        def bwd(cts):
            return jax.vjp(grad_fn, *[p._data for p in parents])[1](tuple(cts))

        node = Node(bwd, parents, tuple(grads), "grad", replay=grad_fn)
        for i, o in enumerate(outs):
            o._node = (node, i)
    return outs
