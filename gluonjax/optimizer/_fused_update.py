"""One ``jax.jit``-compiled optimizer update of many weights (Trainer and Module).

The per-weight learning rates, weight decays and update counts are traced
arguments, so learning-rate schedules never recompile; one program is cached
per set of updated indices.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .. import _compile
from .. import _rng as _random

__all__ = ["apply_update", "backward_and_update", "make_update", "probe_inputs"]


def make_update(o, n):
    """The pure update of ``n`` weights with optimizer ``o``."""

    def update(ws, gs, states, lrs, wds, ts, rescale, key):
        new_w, new_s = [], []
        for k in range(n):
            g = o.preprocess(gs[k].astype(ws[k].dtype), rescale)
            sub = jax.random.fold_in(key, k) if key is not None else None
            w, s = o.step(ws[k], g, states[k], lrs[k], wds[k], ts[k], sub)
            new_w.append(w.astype(ws[k].dtype))
            new_s.append(s)
        return new_w, new_s

    return update


def _inputs(o, indices):
    """Count the update of ``indices``; the traced per-step arguments of the update.

    The update counts are always passed: a rule that does not read them (SGD) leaves the
    argument unused, and ``jax.jit`` prunes an unused argument from the compiled program
    (nothing is transferred). Finding out beforehand would cost a trace of the rule on
    the first step.
    """
    o._update_count(indices)
    lrs, wds = o.lrs_wds(indices)
    ts = np.array([o._index_update_count[i] for i in indices], np.int32)
    key = _random.next_key() if o.needs_key() else None
    return lrs, wds, ts, o.rescale_array(), key


def probe_inputs(o, indices):
    """Arguments shaped as ``_inputs``'s, for tracing: nothing counted, no key drawn."""
    lrs, wds = o.lrs_wds(indices)
    ts = np.ones(len(indices), np.int32)
    key = jax.random.PRNGKey(0) if o.needs_key() else None
    return lrs, wds, ts, o.rescale_array(), key


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
        hit = cache.put(key, _compile.jit(make_update(o, len(indices)), "train"))
    return hit(weights, grads, states, *_inputs(o, indices))


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

        hit = cache.put(key, _compile.jit(both, "train"))
    return call.run_with(hit, (weights, states, *_inputs(o, indices)))
