"""BucketingModule: one Module per bucket key (e.g. sequence length), sharing parameters.

``sym_gen(bucket_key)`` returns ``(symbol, data_names, label_names)``. The default
bucket's module owns the parameters and the optimizer; other buckets' modules are
bound with it as ``shared_module`` (same parameter arrays) and borrow its optimizer.
Since executors of equal graphs share compiled programs, switching back to a
bucket seen before costs no compilation.
"""

from __future__ import annotations

import logging

import numpy as np

from .. import context as _ctx
from ..base import MXNetError
from ..initializer import Uniform
from ..name import NameManager
from .base_module import BaseModule, check_input_names
from .module import Module

__all__ = ["BucketingModule"]


class BucketingModule(BaseModule):
    """Modules for inputs of varying shape, one per bucket key.

    Parameters
    ----------
    sym_gen : callable
        ``sym_gen(bucket_key) -> (symbol, data_names, label_names)``.
    default_bucket_key : hashable
        The bucket bound first (the largest, usually); it owns the parameters.
    logger, context, work_load_list, fixed_param_names, state_names, group2ctxs,
    compression_params
        As for :class:`~gluonjax.module.Module`.
    """

    def __init__(
        self,
        sym_gen,
        default_bucket_key=None,
        logger=logging,
        context=None,
        work_load_list=None,
        fixed_param_names=None,
        state_names=None,
        group2ctxs=None,
        compression_params=None,
    ):
        super().__init__(logger=logger)
        if default_bucket_key is None:
            raise MXNetError("BucketingModule needs a default_bucket_key")
        self._default_bucket_key = default_bucket_key
        self._sym_gen = sym_gen
        symbol, data_names, label_names = self._call_sym_gen(default_bucket_key)
        state_names = list(state_names or [])
        fixed_param_names = list(fixed_param_names or [])
        check_input_names(symbol, list(data_names or []), "data", True)
        check_input_names(symbol, list(label_names or []), "label", False)
        check_input_names(symbol, state_names, "state", True)
        check_input_names(symbol, fixed_param_names, "fixed_param", True)
        self._compression_params = compression_params
        self._fixed_param_names = fixed_param_names
        self._state_names = state_names
        self._context = _ctx.cpu() if context is None else context
        self._work_load_list = work_load_list
        self._group2ctxs = group2ctxs
        self._buckets = {}
        self._curr_module = None
        self._curr_bucket_key = None
        self._params_dirty = False
        self._monitor = None
        self._grad_req = None

    def _reset_bind(self):
        self.binded = False
        self._buckets = {}
        self._curr_module = None
        self._curr_bucket_key = None

    def _call_sym_gen(self, *args, **kwargs):
        with NameManager():
            return self._sym_gen(*args, **kwargs)

    def _new_module(self, symbol, data_names, label_names):
        return Module(
            symbol,
            data_names,
            label_names,
            logger=self.logger,
            context=self._context,
            work_load_list=self._work_load_list,
            fixed_param_names=self._fixed_param_names,
            state_names=self._state_names,
            group2ctxs=self._group2ctxs,
            compression_params=self._compression_params,
        )

    # ------------------------------------------------------------ properties
    @property
    def data_names(self):
        if self.binded:
            return self._curr_module.data_names
        return self._call_sym_gen(self._default_bucket_key)[1]

    @property
    def output_names(self):
        if self.binded:
            return self._curr_module.output_names
        return self._call_sym_gen(self._default_bucket_key)[0].list_outputs()

    @property
    def data_shapes(self):
        self._need_bind()
        return self._curr_module.data_shapes

    @property
    def label_shapes(self):
        self._need_bind()
        return self._curr_module.label_shapes

    @property
    def output_shapes(self):
        self._need_bind()
        return self._curr_module.output_shapes

    @property
    def symbol(self):
        """The current bucket's symbol."""
        self._need_bind()
        return self._curr_module.symbol

    def _need_bind(self):
        if not self.binded:
            raise MXNetError("the module is not bound: call bind() first")

    # ------------------------------------------------------------ parameters
    def get_params(self):
        """``(arg_params, aux_params)`` of the shared parameters."""
        if not self.params_initialized:
            raise MXNetError("call init_params() (or load parameters) before get_params()")
        self._curr_module._params_dirty = self._params_dirty
        params = self._curr_module.get_params()
        self._params_dirty = False
        return params

    def _write_params(self, arg_params, aux_params, force_init, allow_extra):
        self._curr_module.set_params(
            arg_params,
            aux_params,
            allow_missing=True,
            force_init=force_init,
            allow_extra=allow_extra,
        )
        self._params_dirty = True
        self.params_initialized = True

    def init_params(
        self,
        initializer=Uniform(0.01),  # noqa: B008  (MXNet's default)
        arg_params=None,
        aux_params=None,
        allow_missing=False,
        force_init=False,
        allow_extra=False,
    ):
        """Initialise the shared parameters (see :meth:`Module.init_params`)."""
        if self.params_initialized and not force_init:
            return
        self._need_bind()
        self._curr_module.init_params(
            initializer=initializer,
            arg_params=arg_params,
            aux_params=aux_params,
            allow_missing=allow_missing,
            force_init=force_init,
            allow_extra=allow_extra,
        )
        self._params_dirty = False
        self.params_initialized = True

    def get_states(self, merge_multi_context=True):
        return self._curr_module.get_states(merge_multi_context=merge_multi_context)

    def set_states(self, states=None, value=None):
        self._curr_module.set_states(states, value)

    # ------------------------------------------------------------ binding
    def bind(
        self,
        data_shapes,
        label_shapes=None,
        for_training=True,
        inputs_need_grad=False,
        force_rebind=False,
        shared_module=None,
        grad_req="write",
    ):
        """Bind the default bucket's module for ``data_shapes`` (its shapes)."""
        if self.params_initialized:
            arg_params, aux_params = self.get_params()
        if force_rebind:
            self._reset_bind()
        if self.binded:
            self.logger.warning("Already bound, ignoring bind()")
            return
        if shared_module is not None:
            raise MXNetError("shared_module for BucketingModule is not supported")
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self._grad_req = grad_req
        key = self._default_bucket_key
        module = self._buckets.get(key)
        if module is None:
            module = self._new_module(*self._call_sym_gen(key))
        module.bind(
            data_shapes,
            label_shapes,
            for_training,
            inputs_need_grad,
            force_rebind=False,
            shared_module=None,
            grad_req=grad_req,
        )
        self._curr_module = module
        self._curr_bucket_key = key
        self._buckets[key] = module
        self.binded = True
        if self.params_initialized:
            self.set_params(arg_params, aux_params)

    def switch_bucket(self, bucket_key, data_shapes, label_shapes=None):
        """Make ``bucket_key``'s module current, creating and binding it if needed."""
        self._need_bind()
        module = self._buckets.get(bucket_key)
        if module is None:
            module = self._new_module(*self._call_sym_gen(bucket_key))
            self._buckets[bucket_key] = module
            if self._monitor is not None:
                module.install_monitor(self._monitor)
        if not module.binded:
            module.bind(
                data_shapes,
                label_shapes,
                self._curr_module.for_training,
                self._curr_module.inputs_need_grad,
                force_rebind=False,
                shared_module=self._buckets[self._default_bucket_key],
                grad_req=self._grad_req,
            )
        self._curr_module = module
        self._curr_bucket_key = bucket_key

    # ------------------------------------------------------------ training
    def init_optimizer(
        self,
        kvstore="local",
        optimizer="sgd",
        optimizer_params=(("learning_rate", 0.01),),
        force_init=False,
    ):
        """Create the optimizer on the current module; other buckets borrow it."""
        if self.optimizer_initialized and not force_init:
            self.logger.warning("optimizer already initialized, ignoring.")
            return
        self._curr_module.init_optimizer(
            kvstore, optimizer, optimizer_params, force_init=force_init
        )
        for mod in self._buckets.values():
            if mod is not self._curr_module:
                mod.borrow_optimizer(self._curr_module)
        self.optimizer_initialized = True

    def prepare(self, data_batch, sparse_row_id_fn=None):
        """Nothing to prepare for dense parameters."""

    def forward(self, data_batch, is_train=None):
        """Switch to ``data_batch.bucket_key``'s module and run it."""
        self._check_ready()
        key = getattr(data_batch, "bucket_key", None)
        if key is None:
            key = self._curr_bucket_key
        self.switch_bucket(
            key,
            getattr(data_batch, "provide_data", None),
            getattr(data_batch, "provide_label", None),
        )
        self._curr_module.forward(data_batch, is_train=is_train)

    def backward(self, out_grads=None):
        self._check_ready()
        self._curr_module.backward(out_grads=out_grads)

    def update(self):
        """Update the shared parameters with the current bucket's gradients."""
        if not (self.binded and self.params_initialized and self.optimizer_initialized):
            raise MXNetError("call bind(), init_params() and init_optimizer() before update()")
        self._params_dirty = True
        self._curr_module.update()

    def get_outputs(self, merge_multi_context=True):
        self._check_ready()
        return self._curr_module.get_outputs(merge_multi_context=merge_multi_context)

    def get_input_grads(self, merge_multi_context=True):
        self._check_ready()
        return self._curr_module.get_input_grads(merge_multi_context=merge_multi_context)

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        self._check_ready()
        self._curr_module.update_metric(eval_metric, labels, pre_sliced)

    def install_monitor(self, mon):
        """Install ``mon`` on every bucket's executors (and on buckets made later)."""
        self._need_bind()
        self._monitor = mon
        for mod in self._buckets.values():
            mod.install_monitor(mon)

    # ------------------------------------------------------------ files
    def save_checkpoint(self, prefix, epoch, remove_amp_cast=False):
        """Write ``prefix-%04d.params``, one ``prefix-<key>-symbol.json`` per bucket and
        ``prefix.buckets`` (the integer bucket keys)."""
        from ..ndarray import array, save

        self.save_params(f"{prefix}-{int(epoch):04d}.params")
        for key in self._buckets:
            symbol, _, _ = self._call_sym_gen(key)
            symbol.save(f"{prefix}-{key}-symbol.json", remove_amp_cast=remove_amp_cast)
        save(
            f"{prefix}.buckets", array(np.array(list(self._buckets), dtype=np.int32), dtype="int32")
        )

    @staticmethod
    def load(prefix, epoch, sym_gen=None, default_bucket_key=None, **kwargs):
        """A BucketingModule from :meth:`save_checkpoint` files; bind it before use."""
        from ..model import load_params
        from ..ndarray import load
        from ..symbol import load as load_symbol

        if sym_gen is None or default_bucket_key is None:
            raise MXNetError("BucketingModule.load needs sym_gen and default_bucket_key")
        keys = [int(k) for k in load(f"{prefix}.buckets")[0].asnumpy().astype("int32")]
        mod = BucketingModule(sym_gen, default_bucket_key, **kwargs)
        for key in keys:
            _, data_names, label_names = sym_gen(key)
            symbol = load_symbol(f"{prefix}-{key}-symbol.json")
            mod._buckets[key] = mod._new_module(symbol, data_names, label_names)
            if key == default_bucket_key:
                mod._curr_module = mod._buckets[key]
        if mod._curr_module is None:
            raise MXNetError(
                f"{prefix}.buckets has no bucket {default_bucket_key!r} (it has {keys})"
            )
        arg_params, aux_params = load_params(prefix, epoch)
        mod._curr_module._arg_params = arg_params
        mod._curr_module._aux_params = aux_params
        mod._curr_module.params_initialized = True
        mod.params_initialized = True
        return mod

    @staticmethod
    def load_dict(
        sym_dict=None,
        sym_gen=None,
        default_bucket_key=None,
        arg_params=None,
        aux_params=None,
        **kwargs,
    ):
        """A BucketingModule from ``{bucket_key: symbol}`` and parameter dicts."""
        if None in (sym_dict, arg_params, aux_params, default_bucket_key):
            raise MXNetError(
                "load_dict needs sym_dict, arg_params, aux_params and default_bucket_key"
            )
        mod = BucketingModule(sym_gen, default_bucket_key, **kwargs)
        for key, symbol in sym_dict.items():
            _, data_names, label_names = sym_gen(default_bucket_key)
            mod._buckets[key] = mod._new_module(symbol, data_names, label_names)
            if key == default_bucket_key:
                mod._curr_module = mod._buckets[key]
        mod._curr_module._arg_params = arg_params
        mod._curr_module._aux_params = aux_params
        mod._curr_module.params_initialized = True
        mod.params_initialized = True
        return mod
