"""One ``jax.jit``-compiled optimizer update of many weights (Trainer and Module).

The per-weight learning rates, weight decays and update counts are traced
arguments, so learning-rate schedules never recompile; one program is cached
per set of updated indices.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .. import _rng as _random
from ..autograd._update import consume

__all__ = ["apply_update", "make_update", "probe_inputs"]


def make_update(o, n):
    """The pure update of ``n`` weights with optimizer ``o``: the one loop that applies an
    optimizer's rule to many weights (``Trainer``, ``compile_step``, ``Module``).

    ``ts`` may be None when the rule does not read the update counts.
    """

    def update(ws, gs, states, lrs, wds, ts, rescale, key):
        new_w, new_s = [], []
        for k in range(n):
            g = o.preprocess(gs[k].astype(ws[k].dtype), rescale)
            sub = jax.random.fold_in(key, k) if key is not None else None
            t = None if ts is None else ts[k]
            # float32 values (MXNet's C floats) in the weight's precision: a float64
            # weight's ``lr*wd`` is a float64 product, as MXNet's kernel computes it
            hp = jnp.promote_types(ws[k].dtype, jnp.float32)
            lr, wd = jnp.asarray(lrs[k], hp), jnp.asarray(wds[k], hp)
            w, s = o.step(ws[k], g, states[k], lr, wd, t, sub)
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


def apply_update(o, indices, weights, grads, states, cache, pending=None):
    """Count the update of ``indices`` and run it: ``(new_weights, new_states)``.

    Parameters
    ----------
    o : Optimizer
    indices : list of int
        Optimizer indices of the weights (for lr/wd multipliers and counts).
    weights, grads : list of jax arrays (``grads`` None when ``pending`` gives them)
    states : list of optimizer states (pytrees of jax arrays)
    cache : LRU
        Holds the compiled programs (one per tuple of indices, and plan).
    pending : (FusedCall, pos) or None
        A planned backward not run yet: it and the update run as one compiled call
        (see ``autograd._update.consume``).
    """
    return consume(
        lambda: make_update(o, len(indices)),
        tuple(indices),
        weights,
        grads,
        states,
        _inputs(o, indices),
        cache,
        pending,
    )
