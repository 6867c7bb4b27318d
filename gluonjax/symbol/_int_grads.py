"""Gradients of integer arguments and through integer casts in an executor's backward.

MXNet gives integer arrays gradients: ``Cast``'s backward casts the head gradient to
the input's dtype, whatever the dtypes are (``Cast(int32 -> float32)`` passes the head
gradient on, truncated to int32; ``Cast(float32 -> int32)`` passes an int32 head
gradient on as float32). jax carries no cotangent through integer values, so the
backward program (which recomputes the forward inside ``jax.vjp``) runs on float32
stand-ins: integer arguments that want a gradient enter as float32 (the gradient is
cast back to their dtype), and an integer ``Cast`` gives a float32 output holding the
same integer values whose gradient is the identity (straight through). An op whose
integer form has no gradient in MXNet (``Op.int_vjp`` False: integer ``mod``) stops
the gradient of its integer inputs. The forward program is unchanged.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from ._eval import run_node

__all__ = ["float_standins", "cast_runs", "backward_runs"]

# ops whose only effect is a dtype change: their gradient is the head gradient
_CASTS = ("Cast", "amp_cast")


def _is_int(dtype):
    dt = np.dtype(dtype)
    return np.issubdtype(dt, np.integer)


def float_standins(values):
    """``values`` (name -> array) with every integer array as float32."""
    return {n: v.astype(np.float32) if _is_int(v.dtype) else v for n, v in values.items()}


def _straight(node, ins):
    """Run the cast; return its values as float32 with the identity as gradient."""
    outs, updated = run_node(node, ins)
    x = ins[0]
    if not jnp.issubdtype(x.dtype, jnp.inexact):
        return [outs[0].astype(np.float32)], updated
    xf = x.astype(np.float32)
    return [xf + jax.lax.stop_gradient(outs[0].astype(np.float32) - xf)], updated


def cast_runs(graph):
    """``{id(node): run}`` for the graph's casts to an integer dtype (see the module
    docstring); empty when it has none.

    Parameters
    ----------
    graph : GraphFunction

    Returns
    -------
    dict
        For :meth:`GraphFunction.evaluate`'s ``runs``.
    """
    runs = {}
    for node in graph.nodes:
        if node.op is None or node.op.name not in _CASTS:
            continue
        dt = node.attr_dict().get("dtype")
        try:
            if dt is not None and _is_int(dt):
                runs[id(node)] = _straight
        except TypeError:
            continue
    return runs


def _frozen(mask, node, ins):
    """Run the node with no gradient into its (really) integer inputs."""
    ins = [jax.lax.stop_gradient(x) if m else x for x, m in zip(ins, mask, strict=True)]
    return run_node(node, ins)


def backward_runs(graph, casts, values):
    """The ``runs`` of a backward recomputation on float32 stand-ins: ``casts`` (from
    :func:`cast_runs`) and, for ops without integer gradients, a stop on the inputs
    that are integers in the real graph.

    Parameters
    ----------
    graph : GraphFunction
    casts : dict
        :func:`cast_runs` of ``graph``.
    values : dict
        The real argument and auxiliary values by name (for their dtypes).

    Returns
    -------
    dict
        For :meth:`GraphFunction.evaluate`'s ``runs``.
    """
    from ._infer_graph import infer_dtypes

    dtypes = infer_dtypes(graph.symbol, {n: v.dtype for n, v in values.items()})
    runs = dict(casts)
    for node in graph.nodes:
        if node.op is None or node.op.int_vjp or id(node) in runs:
            continue
        mask = []
        for src, i in node.inputs:
            dt = dtypes.get((id(src), i))
            mask.append(dt is not None and _is_int(dt))
        if any(mask):
            runs[id(node)] = functools.partial(_frozen, mask)
    return runs
