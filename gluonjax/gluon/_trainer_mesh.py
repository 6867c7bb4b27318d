"""``Trainer.step`` for parameters on several real devices: one program over the mesh.

After the three-line loop over ``split_and_load``'s shards, every context holds its
own gradient. Instead of summing them through the store key by key (a device-to-
device copy per context and parameter) and copying the new value back into every
context, one compiled program takes each parameter's per-device gradients as one
array sharded over the mesh (no copy), sums them (XLA's all-reduce), applies the
optimizer to the replicated weights, and every context's array then points at its
device's part of the result. The result is the store's: the sum of the contexts'
gradients, one update. Used with a local store (``'local'``/``'device'``) on dense
parameters that all live on the same list of distinct devices (see
:func:`mesh_update_for`).
"""

from __future__ import annotations

import jax

from .. import _compile
from ..optimizer._fused_update import _inputs, make_update
from ._mesh import MeshState, batch_sharding, mesh_devices

__all__ = ["MeshUpdate", "mesh_update_for"]


def mesh_update_for(trainer):
    """A :class:`MeshUpdate` when ``trainer``'s step can run over a mesh, else None.

    That is: a local (one-process) store; dense parameters and gradients, each of at
    least one dimension, all initialized on the same list of distinct real devices.
    """
    kv = trainer._kvstore
    if kv is None or trainer._distributed or getattr(kv, "type", None) not in ("local", "device"):
        return None
    if trainer._contains_sparse_weight or trainer._contains_sparse_grad:
        return None
    lists = set()
    for p in trainer._params:
        if p._data is None or p._stype != "default" or p._grad_stype != "default":
            return None
        if p.grad_req != "null" and not p.shape:
            return None  # a 0-d gradient has no axis to shard
        lists.add(tuple(p.list_ctx()))
    if len(lists) != 1:
        return None
    devices = mesh_devices(list(next(iter(lists))))
    return None if devices is None else MeshUpdate(trainer, devices)


class MeshUpdate:
    """Sums the contexts' gradients and updates, as one compiled call per step."""

    def __init__(self, trainer, devices):
        self.trainer = trainer
        self._ctx_lists = [p._ctx_list for p in trainer._params]
        self.mesh = MeshState(devices)
        self.n = len(devices)
        self._fns = {}
        self._states_put = {}

    def valid(self):
        """Whether the parameters are still on the contexts this was made for."""
        return all(p._ctx_list is c for p, c in zip(self.trainer._params, self._ctx_lists))

    def _grads(self, p):
        """``p``'s per-device gradients as one array sharded over the mesh (no copy)."""
        raws = [a._grad._data for a in p._arrays()]
        shape = (raws[0].shape[0] * self.n, *raws[0].shape[1:])
        sharding = batch_sharding(self.mesh.mesh, len(shape))
        try:  # only their sum is used: which part sits on which device does not matter
            return jax.make_array_from_single_device_arrays(shape, sharding, raws)
        except (ValueError, TypeError, AttributeError):  # a gradient elsewhere, or on the host
            raws = [jax.device_put(r, d) for r, d in zip(raws, self.mesh.devices)]
            return jax.make_array_from_single_device_arrays(shape, sharding, raws)

    def _fn(self, active):
        key = tuple(active)
        hit = self._fns.get(key)
        if hit is None:
            o, n, rep = self.trainer._optimizer, self.n, self.mesh.rep
            update = make_update(o, len(active))

            def step(ws, gs, states, *ins):
                sums = [g.reshape((n, *w.shape)).sum(0) for g, w in zip(gs, ws)]
                new_w, new_s = update(ws, sums, states, *ins)
                return new_w, new_s, sums

            fn = _compile.jit(step, "train", donate_argnums=(0, 2), out_shardings=(rep, rep, rep))
            if len(self._fns) > 16:
                self._fns.clear()
            hit = self._fns[key] = fn
        return hit

    def allreduce(self, active):
        """``Trainer.allreduce_grads``: every context's gradient of ``active`` becomes
        the sum over the contexts, in one compiled call."""
        key = ("sum", len(active))
        fn = self._fns.get(key)
        if fn is None:
            n, rep = self.n, self.mesh.rep

            def total(gs):
                return [g.reshape((n, g.shape[0] // n, *g.shape[1:])).sum(0) for g in gs]

            fn = self._fns[key] = _compile.jit(total, "train", out_shardings=rep)
        params = [self.trainer._params[i] for i in active]
        self._write_grads(params, self.mesh.settle(fn([self._grads(p) for p in params])))

    @staticmethod
    def _write_grads(params, sums):
        for p, v in zip(params, sums):
            for a, part in zip(p._arrays(), v.addressable_shards):
                a._grad._data = part.data

    def step(self, active, write_grads):
        """Sum the gradients of ``active`` (trainer indices) over the devices and update.

        ``write_grads``: every context's gradient then holds the sum (the store's
        ``pushpull`` does so when the trainer updates; a store that applies the
        optimizer leaves them).
        """
        tr = self.trainer
        o, ms = tr._optimizer, self.mesh
        params = [tr._params[i] for i in active]
        gs = [self._grads(p) for p in params]
        ws = ms.values(params)
        all_states, put = tr._states, self._states_put
        states = []
        for i, w in zip(active, ws):
            s = all_states.get(i)
            if s is None or put.get(i) is not s:
                if s is None:
                    s = o.create_state(i, w)
                s = all_states[i] = ms.put(s)
            states.append(s)
        fn = self._fn(active)
        lrs, wds, ts, rescale, okey = _inputs(o, active)
        lrs, wds, rescale = ms.inputs((lrs, wds, rescale))
        new_w, new_s, sums = ms.settle(fn(ws, gs, states, lrs, wds, ts, rescale, okey))
        tr._last_grad.update((i, p._data._grad._data) for i, p in zip(active, params))
        ms.write(params, new_w)
        all_states.update(zip(active, new_s))
        put.update(zip(active, new_s))
        if write_grads:
            self._write_grads(params, sums)
            for i, p in zip(active, params):  # the summed gradient is not "fresh"
                tr._last_grad[i] = p._data._grad._data
