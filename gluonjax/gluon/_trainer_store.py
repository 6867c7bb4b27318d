"""The Trainer's key-value store, with MXNet 1.9.1's rules for choosing and using one.

A Trainer on one device with a ``kvstore`` string uses no store (its update is one
compiled call). A sparse weight forces a store that applies the optimizer
(``update_on_kvstore``); a store object given by the user is used as MXNet uses it.
"""

from __future__ import annotations

import jax

from ..base import InvalidArgumentError, MXNetError

__all__ = ["StoreMixin"]


class StoreMixin:
    """The store half of :class:`~gluonjax.gluon.Trainer` (MXNet's ``_init_kvstore``,
    ``_init_params``, ``_allreduce_grads`` and the rules around them)."""

    # ------------------------------------------------------------ kvstore (MXNet's rules)
    def _contexts(self):
        for p in self._params:
            if p._data is not None or p._deferred is not None:
                return p.list_ctx()
        return [None]

    def _reset_kvstore(self):
        if self._kvstore is not None and "dist" in self._kvstore.type:
            raise MXNetError("Cannot reset distributed KVStore.")
        self._kv_initialized = False
        self._kvstore = None
        self._distributed = None
        self._update_on_kvstore = None
        self._params_to_init = list(self._params)
        self._mesh_update = None
        if _multi_process(self._kvstore_params["kvstore"]):
            # better than MXNet, which copied worker 0's values at the first step, after
            # each worker's first forward on its own initial values: copy them now (only
            # into a store of its own: a store object given by the user may be shared)
            self._init_kvstore()
            self._init_params()

    def _init_kvstore(self):
        from ..kvstore import KVStore, create_kvstore, create_sparse_kvstore

        config = self._kvstore_params
        n_dev = len(self._contexts())
        if self._contains_sparse_weight:
            kvstore, update_on_kvstore = create_sparse_kvstore(config["kvstore"])
            self._distributed = "dist" in kvstore.type
            if config["update_on_kvstore"] is False:
                raise InvalidArgumentError(
                    "Cannot set update_on_kvstore=False when sparse weights are present."
                )
        elif self._contains_sparse_grad:
            arrays = {p.name: p._data for p in self._params}
            kvstore, _ = create_kvstore(config["kvstore"], n_dev, arrays)
            self._distributed = kvstore is not None and "dist" in kvstore.type
            update_on_kvstore = self._distributed
            if config["update_on_kvstore"] is not None:
                if config["update_on_kvstore"] is False and self._distributed:
                    raise InvalidArgumentError(
                        "Cannot set update_on_kvstore=False on dist kvstore when sparse "
                        "gradients are present."
                    )
                update_on_kvstore = config["update_on_kvstore"]
            if kvstore is not None and not isinstance(kvstore, KVStore):
                raise InvalidArgumentError(
                    f"Cannot use {type(kvstore)} for multi-device training with sparse gradients"
                )
        else:
            arrays = {p.name: p._data for p in self._params}
            kvstore, update_on_kvstore = create_kvstore(config["kvstore"], n_dev, arrays)
            self._distributed = kvstore is not None and "dist" in kvstore.type
            if config["update_on_kvstore"] is not None:
                update_on_kvstore = config["update_on_kvstore"]
            if kvstore is not None and update_on_kvstore and not kvstore.is_capable("optimizer"):
                if config["update_on_kvstore"]:
                    raise InvalidArgumentError(
                        f"Please set update_on_kvstore=False when training with {type(kvstore)}"
                    )
                update_on_kvstore = False
        if kvstore is not None:
            if self._compression_params:
                kvstore.set_gradient_compression(self._compression_params)
            if update_on_kvstore:
                kvstore.set_optimizer(self._optimizer)
            self._kvstore, self._update_on_kvstore = kvstore, update_on_kvstore
        else:
            self._kvstore = self._update_on_kvstore = None
        self._kv_initialized = True

    def _init_params(self):
        keep = []
        if self._kvstore is not None:
            for p in self._params_to_init:
                if p._data is None:
                    keep.append(p)
                    continue
                i = self._param2idx[p.name]
                if p._stype != "default":
                    self._kvstore.init(i, p._data)
                else:
                    self._kvstore.broadcast(i, p._data, p.list_data())
        self._params_to_init = keep
        if not keep and self._kvstore is not None:
            from ._trainer_mesh import mesh_update_for

            self._mesh_update = mesh_update_for(self)

    def _allreduce_grads(self):
        kv = self._kvstore
        if kv is None:
            return
        mesh = self._mesh_update
        if mesh is not None and mesh.valid():  # several devices: one compiled sum
            mesh.allreduce([i for i, p in enumerate(self._params) if p.grad_req != "null"])
            return
        batched = getattr(kv, "_batched", False)  # dist stores: one collective for all keys
        b_keys, b_grads, b_outs = [], [], []
        for i, p in enumerate(self._params):
            if p.grad_req == "null":
                continue
            grads = p.list_grad()
            if batched and grads[0].stype == "default":
                b_keys.append(i)
                b_grads.append(grads)
                b_outs.append(p.list_data() if self._update_on_kvstore else grads)
            elif grads[0].stype != "default":
                kv.push(i, grads, priority=-i)
                if p._stype == "default":
                    outs = p.list_data() if self._update_on_kvstore else grads
                    kv.pull(i, outs, priority=-i, ignore_sparse=self._distributed)
                elif self._update_on_kvstore:  # gluonjax keeps the whole weight in the Parameter
                    kv.pull(i, [p._data], priority=-i, ignore_sparse=False)
            elif self._update_on_kvstore:
                kv.pushpull(i, grads, out=p.list_data(), priority=-i)
            else:
                kv.pushpull(i, grads, priority=-i)
        if b_keys:
            kv.pushpull(b_keys, b_grads, out=b_outs)

    def _update_with_kvstore(self, ignore_stale_grad):
        if not self._update_on_kvstore:
            self._update(ignore_stale_grad)
            return
        for i in self._active(ignore_stale_grad):  # the store applied the optimizer
            self._last_grad[i] = self._params[i]._data._grad._data

    def _check_local_update(self, what):
        if not self._kv_initialized:
            self._init_kvstore()
        if self._params_to_init:
            self._init_params()
        if self._kvstore is not None and self._update_on_kvstore:
            raise _LocalUpdateError(
                f"{what} when parameters are updated on kvstore is not supported. Try setting "
                f"`update_on_kvstore` to False when creating trainer."
            )


def _multi_process(kvstore):
    """Whether ``kvstore`` names a store that spans several processes."""
    return isinstance(kvstore, str) and ("dist" in kvstore.lower() or kvstore == "horovod")


class _LocalUpdateError(MXNetError, AssertionError):
    """``update``/``allreduce_grads`` on a Trainer whose store applies the optimizer."""


class _LocalUpdater:
    """``trainer._updaters[k]``: MXNet's Updater view of a Trainer that updates itself."""

    def __init__(self, trainer):
        self._trainer = trainer

    @property
    def optimizer(self):
        return self._trainer._optimizer

    @property
    def states(self):
        from ..ndarray import NDArray
        from ..optimizer.updater import _mx_state

        return {
            i: _mx_state(NDArray(x) for x in jax.tree_util.tree_leaves(s))
            for i, s in self._trainer._states.items()
        }
