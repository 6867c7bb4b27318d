"""Module optimizer methods: ``init_optimizer``, ``update`` (one compiled call) and
optimizer-state files."""

from __future__ import annotations

import warnings

from .. import optimizer as _opt
from .._caches import LRU
from ..base import MXNetError
from ..io import DataDesc
from ..optimizer._fused_update import apply_update
from . import _states


class OptimizerMixin:
    """Optimizer part of :class:`~gluonjax.module.Module`."""

    def init_optimizer(
        self,
        kvstore="local",
        optimizer="sgd",
        optimizer_params=(("learning_rate", 0.01),),
        force_init=False,
    ):
        """Create the optimizer; ``rescale_grad`` defaults to ``1/batch_size``."""
        if not (self.binded and self.params_initialized):
            raise MXNetError("call bind() and init_params() before init_optimizer()")
        if self.optimizer_initialized and not force_init:
            warnings.warn("optimizer already initialized, ignoring...", stacklevel=2)
            return
        if self._params_dirty:
            self._sync_params_from_devices()
        batch_axis = DataDesc.get_batch_axis(self._data_shapes[0].layout)
        batch_size = self._data_shapes[0].shape[batch_axis]
        idx2name = dict(enumerate(self._param_names))
        if isinstance(optimizer, str):
            params = dict(optimizer_params)
            params.setdefault("rescale_grad", 1.0 / batch_size)
            optimizer = _opt.create(optimizer, sym=self._symbol, param_idx2name=idx2name, **params)
        elif isinstance(optimizer, _opt.Optimizer):
            if optimizer.rescale_grad != 1.0 / batch_size:
                warnings.warn(
                    "Optimizer created manually outside Module but rescale_grad is not "
                    f"normalized to 1.0/batch_size ({optimizer.rescale_grad} vs. "
                    f"{1.0 / batch_size}). Is this intended?",
                    stacklevel=2,
                )
            if not optimizer.idx2name:
                optimizer.idx2name = dict(idx2name)
        else:
            raise MXNetError(f"optimizer must be a name or an Optimizer, got {type(optimizer)}")
        self._optimizer = optimizer
        self._kvstore, self._update_on_kvstore = None, False
        self._opt_states, self._opt_fns = {}, LRU(64, "Module optimizer updates")
        self._updater = _states.StatesView(self)
        self.optimizer_initialized = True
        if self._preload_opt_states is not None:
            self.load_optimizer_states(self._preload_opt_states)
            self._preload_opt_states = None

    def borrow_optimizer(self, shared_module):
        """Use ``shared_module``'s optimizer and states."""
        if not shared_module.optimizer_initialized:
            raise MXNetError("the shared module has no optimizer")
        self._optimizer = shared_module._optimizer
        self._opt_states, self._opt_fns = shared_module._opt_states, shared_module._opt_fns
        self._updater = _states.StatesView(self)
        self.optimizer_initialized = True

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

    def update(self):
        """Apply the optimizer to every trainable parameter, in one compiled call."""
        if not (self.binded and self.params_initialized and self.optimizer_initialized):
            raise MXNetError("call bind(), init_params() and init_optimizer() before update()")
        self._params_dirty = True
        args, grads = self._exec.arg_dict, self._exec.grad_dict
        idx = [i for i, n in enumerate(self._param_names) if grads.get(n) is not None]
        if not idx:
            return
        o = self._optimizer
        for i in idx:
            if i not in self._opt_states:
                self._opt_states[i] = o.create_state(i, args[self._param_names[i]]._data)
        ws = [args[self._param_names[i]] for i in idx]
        gs = [grads[self._param_names[i]]._data for i in idx]
        new_w, new_s = apply_update(
            o, idx, [w._data for w in ws], gs, [self._opt_states[i] for i in idx], self._opt_fns
        )
        for i, w, nw, ns in zip(idx, ws, new_w, new_s, strict=False):
            w._data, w._node = nw, None
            self._opt_states[i] = ns
