"""Gradients flowing into each node's inputs, for executor monitors (debugging only).

MXNet's monitor callback also sees the outputs of backward operators: for each op
node, the gradient it passes to each of its inputs. :func:`node_input_grads`
recomputes them op by op (eagerly, with one ``jax.vjp`` per node), so the compiled
training path stays untouched; it only runs when a monitor is installed.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .._tape.node import with_vjp
from ._eval import run_node

__all__ = ["node_input_grads"]


def _zero_like(value):
    return jnp.zeros(np.shape(value), getattr(value, "dtype", np.float32))


def node_input_grads(graph, args, aux, seed_key, counter, heads, training):
    """``[(name, gradient)]`` for every op node's inputs, named as MXNet names its backward
    operators' outputs: ``<node>_backward_output`` (one input) or ``..._output<k>``.

    Parameters
    ----------
    graph : GraphFunction
    args, aux : dict
        Input values (as the last forward used them).
    seed_key, counter : random key of the last forward
    heads : list of arrays
        Gradients of the graph's outputs.
    training : bool
    """
    overrides = graph._deferred_keys(args, aux) if graph.deferred else {}
    env, new_aux, pulls = {}, {}, {}
    rnd, mode = graph.scope(seed_key, counter, training)
    with rnd, mode:
        for node, _names, _aux_slots in graph._plan:
            if node.op is None:
                env[(id(node), 0)] = graph.input_value(node.name, args, aux, new_aux)
                continue
            ins = [env[(id(src), idx)] for src, idx in node.inputs]

            def f(*xs, node=node):
                return tuple(run_node(node, list(xs), overrides.get(id(node)))[0])

            outs, pull = with_vjp(f, *ins)
            pulls[id(node)] = (pull, outs)
            for i, o in enumerate(outs):
                env[(id(node), i)] = o
    cts = {}
    for (node, idx), h in zip(graph.heads, heads, strict=False):
        key = (id(node), idx)
        cts[key] = cts.get(key, 0) + h
    found = []
    for node, _names, _aux in reversed(graph._plan):
        if node.op is None or id(node) not in pulls:
            continue
        pull, outs = pulls[id(node)]
        out_cts = [cts.get((id(node), i)) for i in range(len(outs))]
        if all(c is None for c in out_cts):
            continue
        out_cts = tuple(
            _zero_like(o) if c is None else jnp.asarray(c, o.dtype)
            for c, o in zip(out_cts, outs, strict=True)
        )
        in_cts = pull(out_cts)
        single = len(node.inputs) == 1
        for k, ((src, idx), ct) in enumerate(zip(node.inputs, in_cts, strict=False)):
            value = env[(id(src), idx)]
            if getattr(ct, "dtype", None) == jax.dtypes.float0:
                ct = _zero_like(value)
            suffix = "" if single else str(k)
            found.append((f"{node.name}_backward_output{suffix}", ct))
            key = (id(src), idx)
            cts[key] = ct if cts.get(key) is None else cts[key] + ct
    return found
