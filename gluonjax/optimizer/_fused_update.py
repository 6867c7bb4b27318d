"""One ``jax.jit``-compiled optimizer update of many weights (Trainer and Module).

The per-weight learning rates, weight decays and update counts are traced
arguments, so learning-rate schedules never recompile; one program is cached
per set of updated indices.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend.core import Var

from .. import random as _random

__all__ = ["apply_update", "backward_and_update", "make_update", "probe_inputs", "reads_counts"]


def make_update(o, n):
    """The pure update of ``n`` weights with optimizer ``o``."""

    def update(ws, gs, states, lrs, wds, ts, rescale, key):
        new_w, new_s = [], []
        for k in range(n):
            g = o.preprocess(gs[k].astype(ws[k].dtype), rescale)
            sub = jax.random.fold_in(key, k) if key is not None else None
            t = None if ts is None else ts[k]  # None: the rule does not read it
            w, s = o.step(ws[k], g, states[k], lrs[k], wds[k], t, sub)
            new_w.append(w.astype(ws[k].dtype))
            new_s.append(s)
        return new_w, new_s

    return update


def _inputs(o, indices, counts=True):
    """Count the update of ``indices``; the traced per-step arguments of the update.

    The update counts are passed only with ``counts`` (see ``reads_counts``).
    """
    o._update_count(indices)
    lrs, wds = o.lrs_wds(indices)
    ts = np.array([o._index_update_count[i] for i in indices], np.int32) if counts else None
    key = _random.next_key() if o.needs_key() else None
    return lrs, wds, ts, o.rescale_array(), key


def probe_inputs(o, indices, counts=True):
    """Arguments shaped as ``_inputs``'s, for tracing: nothing counted, no key drawn."""
    lrs, wds = o.lrs_wds(indices)
    ts = np.ones(len(indices), np.int32) if counts else None
    key = jax.random.PRNGKey(0) if o.needs_key() else None
    return lrs, wds, ts, o.rescale_array(), key


def reads_counts(o, indices, ws, states):
    """Whether ``o``'s update of ``ws`` reads the update counts (SGD does not, Adam does).

    One trace of the rule, nothing counted or drawn: a rule that does not read them is
    passed ``ts=None`` (one argument less on every step).
    """
    update = make_update(o, len(indices))
    lrs, wds, ts, rescale, key = probe_inputs(o, indices)
    jaxpr = jax.make_jaxpr(lambda t: update(ws, ws, states, lrs, wds, t, rescale, key))(ts).jaxpr
    live = {v for v in jaxpr.outvars if isinstance(v, Var)}
    for e in reversed(jaxpr.eqns):  # what the outputs depend on (an effect keeps an eqn)
        if e.effects or any(v in live for v in e.outvars):
            live.update(v for v in e.invars if isinstance(v, Var))
    return jaxpr.invars[0] in live


def apply_update(o, indices, weights, grads, states, cache):
    """Count the update of ``indices`` and run it: ``(new_weights, new_states)``.

    Parameters
    ----------
    o : Optimizer
    indices : list of int
        Optimizer indices of the weights (for lr/wd multipliers and counts).
    weights, grads : list of jax arrays
    states : list of optimizer states (pytrees of jax arrays)
    cache : dict
        Holds the compiled programs (one per tuple of indices).
    """
    key = tuple(indices)
    hit = cache.get(key)
    if hit is None:
        update = make_update(o, len(indices))
        hit = cache.put(key, (jax.jit(update), reads_counts(o, indices, weights, states)))
    return hit[0](weights, grads, states, *_inputs(o, indices, hit[1]))


def backward_and_update(o, indices, call, pos, weights, states, cache):
    """Run a planned backward (``autograd._plan.FusedCall``) and the update as ONE call.

    ``pos[k]`` is the leaf of ``call`` whose gradient updates ``weights[k]``.
    Returns ``(new_weights, new_states)``; the call's gradients (of every leaf)
    and deferred outputs are delivered as well, so nothing of the step stays
    pending and its inputs are freed.
    """
    key = (call.plan, tuple(indices), tuple(pos))
    hit = cache.get(key)
    if hit is None:
        pure, update = call.plan.pure, make_update(o, len(indices))

        def both(args, cts, ws, states, *ins):
            leaf, douts = pure(args, cts)
            gs = [jnp.zeros_like(w) if leaf[j] is None else leaf[j] for j, w in zip(pos, ws)]
            return leaf, douts, update(ws, gs, states, *ins)

        hit = cache.put(key, (jax.jit(both), reads_counts(o, indices, weights, states)))
    return call.run_with(hit[0], (weights, states, *_inputs(o, indices, hit[1])))
