"""Control-flow ops with subgraphs: ``_foreach``, ``_while_loop``, ``_cond``.

They are the nodes ``sym.contrib.foreach`` / ``while_loop`` / ``cond`` put into a
declarative graph, with MXNet 1.9.1's names and attributes (``in_data_locs``...,
written to symbol JSON). The loop body and branches are subgraphs, held in the
hidden attribute ``_subgraphs``: callables ``g(values) -> outputs`` taking their
inputs by position (the symbol layer builds them, see ``symbol/_subgraph.py``), so
this module needs no symbol code. A loop is one ``lax.scan``; ``_while_loop`` runs
``max_iterations`` steps and masks the steps after ``cond`` turns false, so it is
differentiable; ``_cond`` is ``lax.cond``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ..._step_keys import step_keys
from ..registry import Attr, register

_LOCS = Attr("shape", ())


def _n_out(attrs):
    return attrs["num_outputs"]


def _infer(attrs, shapes):
    """Input shapes the subgraphs imply (weights of an RNN cell in a loop body)."""
    return attrs["_subgraphs"][0].infer_op_inputs(attrs, shapes)


def _pred(value, what):
    if value.size != 1:
        raise ValueError(f"{what} must be a one-element array, got shape {tuple(value.shape)}")
    return value.reshape(-1)[0] != 0


def _like(new, old, what):
    if tuple(new.shape) != tuple(old.shape):
        raise ValueError(
            f"{what} changes shape from {tuple(old.shape)} to {tuple(new.shape)} in the loop "
            f"body; a loop state keeps its shape"
        )
    return new.astype(old.dtype)


@register(
    "_foreach",
    variadic=True,
    count=lambda a: a["num_args"] - 1,
    num_outputs=_n_out,
    infer_args=_infer,
    attrs={
        "num_args": Attr("int"),
        "num_outputs": Attr("int"),
        "num_out_data": Attr("int"),
        "in_state_locs": _LOCS,
        "in_data_locs": _LOCS,
        "remain_locs": _LOCS,
        "_subgraphs": Attr("raw"),
    },
)
def foreach(*args, num_args, num_outputs, num_out_data, in_state_locs, in_data_locs,
            remain_locs, _subgraphs):  # fmt: skip
    """Scan the subgraph over axis 0 of the data inputs (``sym.contrib.foreach``).

    Inputs are the data arrays, the initial states, then the remaining subgraph inputs
    (free variables); outputs are the stacked per-step outputs, then the final states.
    """
    body = _subgraphs[0]
    n_data, n_state = len(in_data_locs), len(in_state_locs)
    data, states, rest = args[:n_data], args[n_data : n_data + n_state], args[n_data + n_state :]
    if not data:
        raise ValueError("foreach needs at least one data input")
    length = data[0].shape[0] if data[0].ndim else None
    for d in data:
        if not d.ndim or d.shape[0] != length:
            raise ValueError(
                f"the data inputs must share their first dimension, got shapes "
                f"{[tuple(x.shape) for x in data]}"
            )

    def step(carry, xs):
        ss, t = carry
        vals = [None] * len(args)
        for locs, items in ((in_data_locs, xs), (in_state_locs, ss), (remain_locs, rest)):
            for loc, v in zip(locs, items):
                vals[loc] = v
        with step_keys(t):
            outs = body(vals)
        new = [_like(n, s, f"state {k}") for k, (n, s) in enumerate(zip(outs[num_out_data:], ss))]
        return (new, t + 1), list(outs[:num_out_data])

    (final, _), ys = jax.lax.scan(step, (list(states), jnp.asarray(0, jnp.int32)), list(data))
    return tuple(ys) + tuple(final)


@register(
    "_while_loop",
    variadic=True,
    count=lambda a: a["num_args"] - 2,
    num_outputs=_n_out,
    infer_args=_infer,
    attrs={
        "num_args": Attr("int"),
        "num_outputs": Attr("int"),
        "num_out_data": Attr("int"),
        "max_iterations": Attr("int"),
        "cond_input_locs": _LOCS,
        "func_input_locs": _LOCS,
        "func_var_locs": _LOCS,
        "_subgraphs": Attr("raw"),
    },
)
def while_loop(*args, num_args, num_outputs, num_out_data, max_iterations, cond_input_locs,
               func_input_locs, func_var_locs, _subgraphs):  # fmt: skip
    """Run the body subgraph while the condition subgraph is non-zero, at most
    ``max_iterations`` times (``sym.contrib.while_loop``).

    Outputs are the per-step outputs stacked to ``max_iterations`` rows (zeros after
    the loop ends), then the final loop variables.
    """
    cond_g, func_g = _subgraphs
    var_pos = [func_input_locs[loc] for loc in func_var_locs]

    def step(carry, _):
        lvars, done, t = carry
        full = list(args)
        for p, v in zip(var_pos, lvars):
            full[p] = v
        with step_keys(t):
            go = jnp.logical_and(
                jnp.logical_not(done),
                _pred(cond_g([full[i] for i in cond_input_locs])[0], "the loop condition"),
            )
            outs = func_g([full[i] for i in func_input_locs])
        new = [
            jnp.where(go, _like(n, v, f"loop variable {k}"), v)
            for k, (n, v) in enumerate(zip(outs[num_out_data:], lvars))
        ]
        ys = [jnp.where(go, y, jnp.zeros_like(y)) for y in outs[:num_out_data]]
        return (new, jnp.logical_not(go), t + 1), ys

    init = ([args[p] for p in var_pos], jnp.asarray(False), jnp.asarray(0, jnp.int32))
    (final, _, _), ys = jax.lax.scan(step, init, None, length=max_iterations)
    return tuple(ys) + tuple(final)


@register(
    "_cond",
    variadic=True,
    count=lambda a: a["num_args"] - 3,
    num_outputs=_n_out,
    infer_args=_infer,
    attrs={
        "num_args": Attr("int"),
        "num_outputs": Attr("int"),
        "cond_input_locs": _LOCS,
        "then_input_locs": _LOCS,
        "else_input_locs": _LOCS,
        "_subgraphs": Attr("raw"),
    },
)
def cond(*args, num_args, num_outputs, cond_input_locs, then_input_locs, else_input_locs,
         _subgraphs):  # fmt: skip
    """The then-subgraph if the predicate subgraph is non-zero, else the else-subgraph
    (``sym.contrib.cond``), as one ``lax.cond``."""
    pred_g, then_g, else_g = _subgraphs
    p = _pred(pred_g([args[i] for i in cond_input_locs])[0], "the condition of cond")

    def then_branch(a):
        return list(then_g([a[i] for i in then_input_locs]))

    def else_branch(a):
        outs = else_g([a[i] for i in else_input_locs])
        ref = jax.eval_shape(then_branch, a)
        return [o.astype(r.dtype) for o, r in zip(outs, ref)]

    return tuple(jax.lax.cond(p, then_branch, else_branch, list(args)))
