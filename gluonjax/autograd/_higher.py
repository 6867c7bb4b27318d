"""Higher-order gradients: ``autograd.grad(..., create_graph=True)``.

The recorded graph between the heads and the variables it starts from is
replayed as one pure function ``F(leaves) -> heads`` (every node keeps a pure
``replay``). The requested gradients are ``G(leaves) = vjp(F)(head grads)``,
and when recording they become one GRAD node whose inputs are *all* the leaves
that need a gradient — not only the requested variables — so a gradient can be
differentiated again with respect to any of them (``d(dy/dx)/dw``).
"""

from __future__ import annotations

import jax

from .._tape.node import Kind, Node, needs_grad, pullback, toposort
from ..base import MXNetError
from ..ndarray.ndarray import NDArray

__all__ = ["grad_create_graph"]


def grad_create_graph(heads, roots, cts, variables, retain_graph):
    """Gradients of ``heads`` w.r.t. ``variables`` that are themselves on the tape.

    ``roots`` are the heads' nodes and ``cts`` their raw cotangents (None: ones), as
    ``autograd._engine`` checked them.
    """
    order = toposort(roots)[::-1] if roots else []  # inputs first
    for node in order:
        if node.replay is None:
            why = (
                "its graph was freed by an earlier backward()"
                if node.kind is Kind.FREED
                else (f"it is a {node.kind.value}, whose backward is not differentiable")
            )
            raise MXNetError(
                f"autograd.grad(create_graph=True) cannot differentiate through "
                f"'{node.name}': {why}. Use create_graph=False, or retain_graph=True on the "
                f"earlier backward()."
            )
    # the leaves the heads depend on: the variables first, then every other leaf that
    # needs a gradient (what the GRAD node's own backward reaches)
    leaves, pos = list(variables), {id(v): k for k, v in enumerate(variables)}
    for node in order:
        for e in node.inputs:
            if type(e) is not tuple and id(e) not in pos and needs_grad(e):
                pos[id(e)] = len(leaves)
                leaves.append(e)
    for h in heads:
        if h._node is None and id(h) not in pos:
            pos[id(h)] = len(leaves)
            leaves.append(h)
    steps = [(node, node.replay) for node in order]
    head_entries = [h._node or h for h in heads]

    def forward(*vals):
        env = {}

        def value(e):
            if type(e) is tuple:
                return env[(id(e[0]), e[1])]
            return vals[pos[id(e)]]

        for node, replay in steps:
            outs = replay(*[value(e) for e in node.inputs])
            for i, o in enumerate(outs):
                env[(id(node), i)] = o
        return [value(e) for e in head_entries]

    nvar = len(variables)

    def grad_fn(*vals):
        return tuple(pullback(forward, vals, list(cts))[1][:nvar])

    values = [v._data for v in leaves]
    for k, v in enumerate(variables):  # reachable from the heads?
        if not _reaches(order, heads, v):
            raise MXNetError(
                f"autograd.grad: cannot differentiate with respect to variable {k} "
                f"(shape {v.shape}): it is unreachable from the heads"
            )
    grads = grad_fn(*values)
    grads = [g if g.dtype == v.dtype else g.astype(v.dtype) for g, v in zip(grads, variables)]
    outs = [NDArray(g) for g in grads]
    if not retain_graph:
        for node in order:
            node.free()
    # the gradients are on the tape, recording or not (as in MXNet)
    avals = tuple(jax.ShapeDtypeStruct(g.shape, g.dtype) for g in grads)
    node = Node(Kind.GRAD, "grad", tuple(leaves), avals, grad_fn)

    def bwd(out_cts):
        return pullback(grad_fn, values, tuple(out_cts))[1]

    node.bwd = bwd
    for i, o in enumerate(outs):
        o._node = (node, i)
    return outs


def _reaches(order, heads, var):
    if any(h is var for h in heads):
        return True
    return any(e is var for node in order for e in node.inputs)
