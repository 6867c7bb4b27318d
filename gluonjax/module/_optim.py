"""Module optimizer methods: ``init_optimizer``, ``update`` (one compiled call) and
optimizer-state files.

As MXNet 1.9.1 does with its kvstore: on one device there is no kvstore and every
parameter is updated in place; on several devices (``kvstore='local'`` or
``'device'``) the gradients are summed over the devices and one update is applied
and copied to every device (``MXNET_UPDATE_ON_KVSTORE=0``, or parameters larger
than 16M elements with ``'local'``, update each device with the summed gradients
instead, each with its own states); with ``kvstore=None`` each device updates with
its own gradients. ``'dist_sync'`` (in a job started by ``python -m gluonjax.launch``)
also sums the gradients over the workers, starts every worker from worker 0's
parameters, and normalizes by the batch of all workers, as MXNet.
"""

from __future__ import annotations

import os
import warnings

import jax
import numpy as np

from .. import optimizer as _opt
from .._caches import LRU
from ..base import ArgumentTypeError, MXNetError
from ..optimizer._fused_update import apply_update
from . import _states


def _create_kvstore(module, kvstore, num_device):
    """``(kvstore object or None, update_on_kvstore)`` as MXNet's ``_create_kvstore``."""
    on_kv = bool(int(os.getenv("MXNET_UPDATE_ON_KVSTORE", "1")))
    if kvstore is None:
        return None, False
    if isinstance(kvstore, str):
        if "dist" in kvstore:
            return _dist_store(module, kvstore), on_kv
        if num_device == 1:
            return None, False
        if kvstore == "local":
            sizes = [int(np.prod(a.shape)) for a in module._arg_params.values()]
            if sizes and max(sizes) > 1024 * 1024 * 16:
                on_kv = False
        return _states.ModuleKVStore(module, kvstore), on_kv
    kind = getattr(kvstore, "type", None)
    if not isinstance(kind, str):
        raise ArgumentTypeError("kvstore must be KVStore, str or None")
    if "dist" in kind:
        return _dist_store(module, kind), on_kv
    return _states.ModuleKVStore(module, kind), on_kv


def _dist_store(module, kind):
    """The store of a Module trained across processes ('dist_sync', 'dist_device_sync')."""
    from ..kvstore.dist import _check_job, refuse_async

    if "async" in kind:
        raise refuse_async(kind)
    store = _states.ModuleKVStore(module, kind)
    _check_job(kind, store.num_workers)
    return store


def _broadcast_params(module):
    """Every worker starts from worker 0's parameters (on all its devices)."""
    group = module._exec_group
    params = [p for p in group.param_arrays if p and p[0] is not None]
    got = module._kvstore.broadcast([p[0]._data for p in params])
    for copies, value in zip(params, got, strict=True):
        for w in copies:
            w._data, w._node = jax.device_put(value, w._data.sharding), None
    module._params_dirty = True


class OptimizerMixin:
    """Optimizer part of :class:`~gluonjax.module.Module`."""

    def init_optimizer(
        self,
        kvstore="local",
        optimizer="sgd",
        optimizer_params=(("learning_rate", 0.01),),
        force_init=False,
    ):
        """Create the optimizer; ``rescale_grad`` defaults to ``1/batch_size``.

        Parameters
        ----------
        kvstore : str, KVStore or None, default 'local'
            How several devices combine their gradients (see the module docstring).
        optimizer : str or Optimizer
        optimizer_params : dict or pairs
        force_init : bool
            Replace an existing optimizer.
        """
        if not (self.binded and self.params_initialized):
            raise MXNetError("call bind() and init_params() before init_optimizer()")
        if self.optimizer_initialized and not force_init:
            self.logger.warning("optimizer already initialized, ignoring...")
            return
        if self._params_dirty:
            self._sync_params_from_devices()
        ndev = len(self._context)
        kv, on_kv = _create_kvstore(self, kvstore, ndev)
        batch_size = self._exec_group.batch_size
        if kv is not None and "dist" in kv.type:
            if "_sync" in kv.type:  # MXNet: the batch of a step is every worker's batch
                batch_size *= kv.num_workers
            self._kvstore = kv
            _broadcast_params(self)  # MXNet only with update_on_kvstore; always here
        names = self._exec_group.param_names
        if on_kv or ndev == 1:
            idx2name = dict(enumerate(names))
        else:
            idx2name = {i * ndev + k: n for k in range(ndev) for i, n in enumerate(names)}
        if isinstance(optimizer, str):
            params = dict(optimizer_params)
            params.setdefault("rescale_grad", 1.0 / batch_size)
            optimizer = _opt.create(optimizer, sym=self._symbol, param_idx2name=idx2name, **params)
        elif isinstance(optimizer, _opt.Optimizer):
            if optimizer.rescale_grad != 1.0 / batch_size:
                warnings.warn(
                    "Optimizer created manually outside Module but rescale_grad is not "
                    f"normalized to 1.0/batch_size/num_workers ({optimizer.rescale_grad} vs. "
                    f"{1.0 / batch_size}). Is this intended?",
                    stacklevel=2,
                )
            if not optimizer.idx2name:
                optimizer.idx2name = dict(idx2name)
        else:
            raise MXNetError(f"optimizer must be a name or an Optimizer, got {type(optimizer)}")
        self._optimizer = optimizer
        self._kvstore, self._update_on_kvstore = kv, on_kv
        self._opt_states, self._opt_fns = {}, LRU(64, "Module optimizer updates")
        self._updater = None if on_kv else _states.StatesView(self)
        self.optimizer_initialized = True
        if self._preload_opt_states is not None:
            self.load_optimizer_states(self._preload_opt_states)
            self._preload_opt_states = None

    def borrow_optimizer(self, shared_module):
        """Use ``shared_module``'s optimizer, kvstore and states (bucketing)."""
        if not shared_module.optimizer_initialized:
            raise MXNetError("the shared module has no optimizer")
        self._optimizer = shared_module._optimizer
        self._kvstore = shared_module._kvstore
        self._update_on_kvstore = shared_module._update_on_kvstore
        self._opt_states, self._opt_fns = shared_module._opt_states, shared_module._opt_fns
        self._updater = shared_module._updater
        self.optimizer_initialized = True

    def _state_devices(self):
        """How many devices share one parameter's state index range (see ``update``)."""
        ndev = len(self._exec_group.execs)
        return 1 if self._update_on_kvstore or ndev == 1 else ndev

    def save_optimizer_states(self, fname):
        """Save the optimizer states to ``fname``."""
        if not self.optimizer_initialized:
            raise MXNetError("init_optimizer() first")
        _states.save(self, fname)

    def load_optimizer_states(self, fname):
        """Load optimizer states saved by :meth:`save_optimizer_states`."""
        if not self.optimizer_initialized:
            raise MXNetError("init_optimizer() first")
        _states.load(self, fname)

    def _apply(self, indices, weights, grads):
        o = self._optimizer
        for i, w in zip(indices, weights, strict=True):
            if i not in self._opt_states:
                self._opt_states[i] = o.create_state(i, w._data)
        new_w, new_s = apply_update(
            o,
            indices,
            [w._data for w in weights],
            grads,
            [self._opt_states[i] for i in indices],
            self._opt_fns,
        )
        for i, w, nw, ns in zip(indices, weights, new_w, new_s, strict=True):
            w._data, w._node = nw, None
            self._opt_states[i] = ns

    def update(self):
        """Apply the optimizer to every trainable parameter, in one compiled call."""
        if not (self.binded and self.params_initialized and self.optimizer_initialized):
            raise MXNetError("call bind(), init_params() and init_optimizer() before update()")
        self._params_dirty = True
        group = self._exec_group
        params, grads = group.param_arrays, group.grad_arrays or []
        idx = [i for i, g in enumerate(grads) if g[0] is not None]
        if not idx:
            return
        ndev = len(group.execs)
        kv = self._kvstore
        if ndev == 1 and kv is None:
            self._apply(idx, [params[i][0] for i in idx], [grads[i][0]._data for i in idx])
            return
        summed = None
        if kv is not None:
            summed = [sum(g._data for g in grads[i]) for i in idx]
            summed = dict(zip(idx, kv.allsum(summed) if kv.num_workers > 1 else summed))
        if self._update_on_kvstore:
            self._apply(idx, [params[i][0] for i in idx], [summed[i] for i in idx])
            for i in idx:
                for w in params[i][1:]:
                    w._data, w._node = params[i][0]._data, None
            return
        for k in range(ndev):
            g = [summed[i] if summed is not None else grads[i][k]._data for i in idx]
            self._apply([i * ndev + k for i in idx], [params[i][k] for i in idx], g)
