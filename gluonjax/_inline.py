"""Evaluate a traced program with its nested ``jit`` calls inlined.

A hybridized block's forward is traced once into a jaxpr in which every registry op is a
named ``jit`` call (``FullyConnected__gj3``: the jaxpr -> MXNet JSON converter reads those
names), and jax's own ``jnp`` functions are ``jit`` calls too. Re-evaluating that jaxpr
inside a training step (under ``jax.vjp``, in the fused backward + update) with
``jaxpr_as_fun`` re-binds each call: jax then linearizes, transposes and lowers every
call as a sub-function, which costs tracing and lowering time on the first step (about a
quarter of both for an MLP) and gives the same compiled program as the flat one (XLA
inlines the calls first thing).

:func:`inline_fun` evaluates the equations of a call in place instead. A call is inlined
only when it is plain: no sharding, layout, donation or compiler option is attached to
it (none of those is dropped); any other call is bound as it is.
"""

from __future__ import annotations

from jax.extend.core import DropVar, Literal
from jax.extend.core.primitives import jit_p

__all__ = ["inline_fun"]


def _unspecified(s):
    return type(s).__name__ == "UnspecifiedValue"


def _plain(params):
    """Whether a ``jit`` equation carries nothing but its program (safe to inline)."""
    return (
        all(_unspecified(s) for s in params.get("in_shardings", ()))
        and all(_unspecified(s) for s in params.get("out_shardings", ()))
        and all(x is None for x in params.get("in_layouts", ()))
        and all(x is None for x in params.get("out_layouts", ()))
        and not any(params.get("donated_invars", ()))
        and not params.get("compiler_options_kvs")
    )


def _run(jaxpr, consts, args):
    env = {}

    def read(v):
        return v.val if isinstance(v, Literal) else env[v]

    env.update(zip(jaxpr.constvars, consts))
    env.update(zip(jaxpr.invars, args))
    for eqn in jaxpr.eqns:
        vals = [read(v) for v in eqn.invars]
        if eqn.primitive is jit_p and _plain(eqn.params):
            inner = eqn.params["jaxpr"]
            with eqn.ctx.manager:
                outs = _run(inner.jaxpr, inner.consts, vals)
        else:
            with eqn.ctx.manager:
                outs = eqn.primitive.bind(*vals, **eqn.primitive.get_bind_params(eqn.params))
            if not eqn.primitive.multiple_results:
                outs = (outs,)
        for v, o in zip(eqn.outvars, outs):
            if not isinstance(v, DropVar):
                env[v] = o
    return [read(v) for v in jaxpr.outvars]


def inline_fun(closed):
    """``jaxpr_as_fun(closed)`` with its plain nested ``jit`` calls evaluated in place.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> closed = jax.make_jaxpr(lambda x: jax.nn.log_softmax(x) * 2)(jnp.ones(3))
    >>> [e.primitive.name for e in closed.jaxpr.eqns]
    ['jit', 'mul']
    >>> flat = jax.make_jaxpr(inline_fun(closed))(jnp.ones(3))
    >>> [e.primitive.name for e in flat.eqns][-2:], 'jit' in [e.primitive.name for e in flat.eqns]
    (['sub', 'mul'], False)
    """
    jaxpr, consts = closed.jaxpr, closed.consts
    return lambda *args: _run(jaxpr, consts, args)
