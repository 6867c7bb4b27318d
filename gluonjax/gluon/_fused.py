"""``Trainer.compile_step``: forward, backward and update as ONE ``jax.jit`` call.

Gives the same result as the three-line Gluon loop (record / backward / step),
with the parameters and optimizer states donated to the compiled call.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .. import random as _random
from ..autograd._state import TraceScope, _Scope
from ..ndarray.ndarray import NDArray
from ..optimizer._fused_update import _inputs, probe_inputs, reads_counts
from ._cached import _TRACER_ERRORS, _is_leaf, _raw, _tracer_message
from ._param_array import write_values
from .block import to_ndarray


class FusedStep:
    """Callable ``step(data, label, batch_size=None) -> loss`` (an NDArray per sample)."""

    def __init__(self, trainer, net, loss_fn):
        self.trainer, self.net, self.loss_fn = trainer, net, loss_fn
        self._jit = None

    def _setup(self, data):
        if any(p._data is None for p in self.net._all_params()):
            self.net._deferred_init([data]) if hasattr(self.net, "_deferred_init") else None
        seen, allp = set(), []
        for p in self.net._all_params() + self.loss_fn._all_params():
            if id(p) not in seen:
                seen.add(id(p))
                p._check()
                allp.append(p)
        tr = self.trainer
        index = {id(p): i for i, p in enumerate(tr._params)}
        self.all = allp
        self.datas = [p._data for p in allp]
        self.train_pos = [k for k, p in enumerate(allp) if id(p) in index and p.grad_req != "null"]
        self.train_idx = [index[id(allp[k])] for k in self.train_pos]
        o = tr._optimizer
        for i in self.train_idx:
            if i not in tr._states:
                tr._states[i] = o.create_state(i, tr._params[i]._data._data)
        self._jit = jax.jit(self._pure, donate_argnums=(0, 1))
        self.keyed = None  # pass a random key? (the first call traces to find out)
        self.uses_random = False
        # pass the update counts only to a rule that reads them (Adam, not SGD)
        weights = [tr._params[i]._data._data for i in self.train_idx]
        states = [tr._states[i] for i in self.train_idx]
        self.counts = reads_counts(o, self.train_idx, weights, states)

    def _pure(self, pvals, states, x, y, seed_key, counter, lrs, wds, ts, rescale, okey):
        o = self.trainer._optimizer
        pos = self.train_pos

        def loss_of(tv):
            full = list(pvals)
            for k, i in enumerate(pos):
                full[i] = tv[k]
            with (
                TraceScope(self.all, [NDArray(v) for v in full]) as scope,
                _random.traced_key(seed_key, counter) as rnd,
                _Scope(False, True),
            ):
                try:
                    out = self.net(NDArray(x))
                    loss = self.loss_fn(out, NDArray(y))
                except _TRACER_ERRORS as err:
                    from ..base import HybridizationError

                    raise HybridizationError(_tracer_message(self.net, err)) from None
                loss = jax.tree_util.tree_map(_raw, loss, is_leaf=_is_leaf)
                if rnd.used:
                    self.uses_random = True
                return jnp.sum(loss), (loss, scope.updates())

        grads, (loss, updates) = jax.grad(loss_of, has_aux=True)([pvals[i] for i in pos])
        new_p = list(pvals)
        for i, v in updates.items():
            if i not in pos:
                new_p[i] = v
        new_s = []
        for k, i in enumerate(pos):
            g = o.preprocess(grads[k], rescale)
            sub = None if okey is None else jax.random.fold_in(okey, k)  # as _update does
            t = None if ts is None else ts[k]  # None: the rule does not read it
            w, s = o.step(pvals[i], g, states[k], lrs[k], wds[k], t, sub)
            new_p[i] = w.astype(pvals[i].dtype)
            new_s.append(s)
        return new_p, new_s, loss

    def __call__(self, data, label, batch_size=None):
        if type(data) is not NDArray:
            data = to_ndarray(data)
        if type(label) is not NDArray:
            label = to_ndarray(label)
        if self._jit is None:
            self._setup(data)
        tr, o = self.trainer, self.trainer._optimizer
        batch_size = data._data.shape[0] if batch_size is None else batch_size
        o.rescale_grad = tr._scale / batch_size
        idx = self.train_idx
        all_states = tr._states
        states = [all_states[i] for i in idx]
        pvals = [d._data for d in self.datas]
        x, y = data._data, label._data
        if self.keyed is None:  # first call: a trace (no compile) tells if a key is drawn
            key, n = _random.peek()
            c = np.uint32(n & 0xFFFFFFFF)
            self._jit.trace(pvals, states, x, y, key, c, *probe_inputs(o, idx, self.counts))
            self.keyed = self.uses_random
        key = counter = None
        if self.keyed:  # as the three-line loop: the counter moves only when a key is used
            key, counter = _random.key_and_counter()
        # then the optimizer's key (SGLD), drawn as the loop's trainer.step draws it
        lrs, wds, ts, rescale, okey = _inputs(o, idx, self.counts)
        new_p, new_s, loss = self._jit(
            pvals, states, x, y, key, counter, lrs, wds, ts, rescale, okey
        )
        write_values(self.datas, new_p)
        all_states.update(zip(idx, new_s))
        return NDArray(loss) if not isinstance(loss, (list, tuple)) else loss
