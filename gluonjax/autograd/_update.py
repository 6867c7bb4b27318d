"""Consume gradients with an update: the one entry ``Trainer``, ``compile_step`` and
``Module`` reach an optimizer's update through.

An *update* is a pure ``update(weights, grads, states, *inputs) -> (new weights, new
states)`` over lists (the optimizer builds it: ``optimizer._fused_update.make_update``).
:func:`consume` runs it compiled, on gradients that exist, or, when the gradients
still wait on a planned backward that has not run (``_deferred.pending_call``), runs
that backward and the update as ONE compiled call, delivering the backward's gradients
and deferred outputs as well, so nothing of the step stays pending.
"""

from __future__ import annotations

import jax.numpy as jnp

from .. import _compile

__all__ = ["consume"]


def consume(make_update, key, weights, grads, states, inputs, cache, pending=None):
    """``(new weights, new states)`` of the update made by ``make_update()``.

    Parameters
    ----------
    make_update : callable
        ``make_update() -> update``; called once per ``key`` (and plan) to compile.
    key : hashable
        What identifies the update among those in ``cache`` (the optimizer indices).
    weights, states : lists
    grads : list of jax arrays or None
        The gradients; None when ``pending`` gives them.
    inputs : tuple
        The update's per-step traced arguments (learning rates, counts, key...).
    cache : LRU
        Holds the compiled programs.
    pending : (FusedCall, pos) or None
        A planned backward not run yet; leaf ``pos[k]`` gives the gradient of
        ``weights[k]`` (zeros when the leaf got none).
    """
    if pending is None:
        hit = cache.get(key)
        if hit is None:
            hit = cache.put(key, _compile.jit(make_update(), "train"))
        return hit(weights, grads, states, *inputs)
    call, pos = pending
    ckey = (call.plan, key, tuple(pos))
    hit = cache.get(ckey)
    if hit is None:
        pure, update = call.plan.pure, make_update()

        def both(args, cts, ws, states, *ins):
            leaf, douts = pure(args, cts)
            gs = [jnp.zeros_like(w) if leaf[j] is None else leaf[j] for j, w in zip(pos, ws)]
            return leaf, douts, update(ws, gs, states, *ins)

        hit = cache.put(ckey, _compile.jit(both, "train"))
    return call.run_with(hit, (weights, states, *inputs))
