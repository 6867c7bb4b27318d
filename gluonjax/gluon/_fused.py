"""``Trainer.compile_step``: forward, backward and update as ONE ``jax.jit`` call.

Gives the same result as the three-line Gluon loop (record / backward / step),
with the parameters and optimizer states donated to the compiled call.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .. import _compile
from .. import _rng as _random
from .._tape.node import pullback
from ..ndarray.ndarray import NDArray
from ..optimizer._fused_update import _inputs, make_update, probe_inputs
from ._cached import pure_call
from ._param_array import write_values
from .block import to_ndarray


class FusedStep:
    """Callable ``step(data, label, batch_size=None) -> loss`` (an NDArray per sample);
    with ``return_output=True`` it returns ``(loss, output)``, ``output`` being the
    net's forward output of this step (before the update, as the three-line loop's).

    On parameters initialized on several real devices, ``data``/``label`` are the
    whole batch or its shards (``split_and_load``'s list) and the step is one
    program over the devices' mesh (see :mod:`._mesh`).
    """

    mesh = None  # a MeshState when the parameters live on several real devices
    dist = False  # sum the gradients over the workers of a multi-process job

    def __init__(self, trainer, net, loss_fn, return_output=False):
        self.trainer, self.net, self.loss_fn = trainer, net, loss_fn
        self.return_output = bool(return_output)  # fixed: the compiled program depends on it
        self._jit = None
        self._copied = ()  # parameters with per-context copies outside a mesh

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
        self.dist = self._setup_dist()
        self._setup_contexts(allp)
        if self.mesh is None:
            self._jit = _compile.jit(self._pure, "train", donate_argnums=(0, 1))
        else:  # one program over the mesh: parameters and states stay replicated
            rep = self.mesh.rep
            self._jit = _compile.jit(
                self._pure, "train", donate_argnums=(0, 1), out_shardings=(rep, rep, None)
            )
            for i in self.train_idx:
                tr._states[i] = self.mesh.put(tr._states[i])
        self.keyed = None  # pass a random key? (the first call traces to find out)
        self.uses_random = False

    def _setup_dist(self):
        """Whether the step runs in a job of several processes with a multi-process
        store ('dist_sync', 'horovod', ...): the gradients are then summed over the
        workers inside the compiled step (one collective), as the store would."""
        from ..kvstore.dist import DistKVStore

        tr = self.trainer
        if jax.process_count() == 1:
            return False
        if not tr._kv_initialized and isinstance(tr._kvstore_params["kvstore"], DistKVStore):
            tr._init_kvstore()  # a store object given by the user: MXNet's first step
        if not isinstance(tr._kvstore, DistKVStore):
            return False
        if tr._params_to_init:  # worker 0's initial values on every worker, now
            tr._init_params()
        tr._update_on_kvstore = False  # the step applies the optimizer and keeps its states
        return True

    def _setup_contexts(self, allp):
        """A mesh when every parameter is on the same list of distinct real devices."""
        from ._mesh import MeshState, mesh_devices

        lists = {tuple(p.list_ctx()) for p in allp}
        devices = mesh_devices(list(next(iter(lists)))) if len(lists) == 1 else None
        if devices is not None and self.dist:
            from ..base import MXNetError

            raise MXNetError(
                f"compile_step: the parameters are on {len(devices)} devices of this worker, "
                f"in a job of {jax.process_count()} workers; a compiled step over several "
                f"devices per worker is not supported yet. Run one worker per device "
                f"(python -m gluonjax.launch --gpus-per-worker 1), or train with the "
                f"record/backward/trainer.step loop."
            )
        if devices is not None:
            self.mesh = MeshState(devices)
            self._states_put = None
            tr = self.trainer
            if not tr._kv_initialized:
                tr._init_kvstore()
            if tr._params_to_init:
                tr._init_params()
            if tr._update_on_kvstore and tr._mesh_update is None and not tr._distributed:
                # XLA sums the gradients inside the compiled step, which then applies the
                # optimizer itself: the trainer keeps (and saves) the optimizer states
                tr._update_on_kvstore = False
        else:
            self._copied = [p for p in allp if p._copies]

    def _pure(self, pvals, states, x, y, seed_key, counter, lrs, wds, ts, rescale, okey):
        o = self.trainer._optimizer
        pos = self.train_pos
        if wds is None and rescale is None:  # MeshState.packed: [*lrs, *wds, rescale]
            m = len(pos)
            lrs, wds, rescale = lrs[:m], lrs[m : 2 * m], lrs[2 * m]

        def loss_of(tv):
            full = list(pvals)
            for k, i in enumerate(pos):
                full[i] = tv[k]
            res, updates, used = pure_call(
                self.net, self.all, full, seed_key, counter, True, lambda: self._forward(x, y)
            )
            if used:
                self.uses_random = True
            return jnp.sum(res[0] if self.return_output else res), (res, updates)

        _, (grads,), (loss, updates) = pullback(loss_of, ([pvals[i] for i in pos],), None, True)
        if self.dist:  # the sum over the workers (trainer.step's store does the same)
            from .._collectives import traced_allsum

            grads = list(traced_allsum(tuple(grads), "compile_step/gradients"))
        new_p = list(pvals)
        for i, v in updates.items():
            if i not in pos:
                new_p[i] = v
        update = make_update(o, len(pos))  # ts None: the rule does not read the counts
        new_w, new_s = update([pvals[i] for i in pos], grads, states, lrs, wds, ts, rescale, okey)
        for w, i in zip(new_w, pos):
            new_p[i] = w
        return new_p, new_s, loss

    def _forward(self, x, y):
        out = self.net(NDArray(x))
        loss = self.loss_fn(out, NDArray(y))
        return (loss, out) if self.return_output else loss

    def _result(self, res):
        if self.return_output:
            loss, out = res
            return NDArray(loss), jax.tree_util.tree_map(NDArray, out)
        return NDArray(res) if not isinstance(res, (list, tuple)) else res

    def __call__(self, data, label, batch_size=None):
        if self.mesh is not None:
            return self._call_mesh(data, label, batch_size)
        if type(data) is not NDArray:
            data = _as_batch(data)
        if type(label) is not NDArray:
            label = _as_batch(label)
        if self._jit is None:
            self._setup(data)
            if self.mesh is not None:
                return self._call_mesh(data, label, batch_size)
        tr = self.trainer
        batch_size = data._data.shape[0] if batch_size is None else batch_size
        all_states = tr._states
        states = [all_states[i] for i in self.train_idx]
        new_p, loss = self._launch(
            [d._data for d in self.datas], states, data._data, label._data, batch_size
        )
        write_values(self.datas, new_p)
        for p in self._copied:  # logical contexts: every copy takes the new value
            p._sync_copies()
        return self._result(loss)

    def _call_mesh(self, data, label, batch_size):
        """The step over the mesh: the batch sharded along it, parameters replicated."""
        ms = self.mesh
        x = ms.batch(data if isinstance(data, (list, tuple)) else to_ndarray(data))
        y = ms.batch(label if isinstance(label, (list, tuple)) else to_ndarray(label))
        batch_size = x.shape[0] if batch_size is None else batch_size
        all_states = self.trainer._states
        states = [all_states[i] for i in self.train_idx]
        put = self._states_put
        if put is None or any(a is not b for a, b in zip(states, put)):
            states = [ms.put(st) for st in states]  # loaded or made outside this step
        new_p, loss = ms.settle(self._launch(ms.values(self.all), states, x, y, batch_size))
        ms.write(self.all, new_p)
        self._states_put = [all_states[i] for i in self.train_idx]
        return self._result(loss)

    def _launch(self, pvals, states, x, y, batch_size):
        """Run the compiled step; store the new optimizer states, return (params, loss)."""
        tr, o = self.trainer, self.trainer._optimizer
        o.rescale_grad = tr._scale / batch_size
        idx = self.train_idx
        if self.keyed is None:  # first call: a trace (no compile) tells if a key is drawn
            key, n = _random.peek()
            c = np.uint32(n & 0xFFFFFFFF)
            self._jit.trace(pvals, states, x, y, key, c, *probe_inputs(o, idx))
            self.keyed = self.uses_random
        key = counter = None
        if self.keyed:  # as the three-line loop: the counter moves only when a key is used
            key, counter = _random.key_and_counter()
        # then the optimizer's key (SGLD), drawn as the loop's trainer.step draws it
        lrs, wds, ts, rescale, okey = _inputs(o, idx)
        if self.mesh is not None:  # on the mesh once, not resharded on every call
            packed = self.mesh.packed(lrs, wds, rescale)
            if packed is None:
                lrs, wds, rescale = self.mesh.inputs((lrs, wds, rescale))
            else:  # one input instead of three
                lrs, wds, rescale = packed, None, None
        new_p, new_s, loss = self._jit(
            pvals, states, x, y, key, counter, lrs, wds, ts, rescale, okey
        )
        tr._states.update(zip(idx, new_s))
        return new_p, loss


def _as_batch(data):
    """An NDArray of ``data``; a list of shards (outside a mesh) is joined along axis 0."""
    if isinstance(data, (list, tuple)) and data and isinstance(data[0], NDArray):
        if len(data) == 1:
            return data[0]
        try:  # the shards of logical contexts share one device
            return NDArray(jnp.concatenate([d._data for d in data]))
        except ValueError:  # shards on several devices: joined on the host
            return NDArray(np.concatenate([np.asarray(d._data) for d in data]))
    return to_ndarray(data)
