"""Module: a symbol bound for training or inference on one device (``mx.mod.Module``).

The bound graph runs as one compiled forward and one compiled backward
(:class:`~gluonjax.executor.Executor`); ``update()`` applies the optimizer to every
parameter in ONE compiled call (the same update the gluon Trainer uses). With
several contexts the module runs on the first one.
"""

from __future__ import annotations

import logging
import warnings

from .. import context as _ctx
from ..base import MXNetError
from ..initializer import InitDesc, Uniform
from ..ndarray import NDArray
from ._optim import OptimizerMixin
from ._run import RunMixin, raw
from .base_module import BaseModule, check_input_names, parse_data_desc

__all__ = ["Module"]


class Module(OptimizerMixin, RunMixin, BaseModule):
    """A symbol with its parameters, trained and run batch by batch.

    Parameters
    ----------
    symbol : Symbol
    data_names, label_names : sequence of str
        Argument names fed from ``DataBatch.data`` / ``DataBatch.label``.
    logger : logging.Logger or module, default :mod:`logging`
    context : Context or list of Context
    work_load_list, group2ctxs, compression_params
        Accepted for compatibility.
    fixed_param_names : list of str, optional
        Parameters that are not trained (no gradient, no update).
    state_names : list of str, optional
        Arguments set with :meth:`set_states` (e.g. RNN states).
    """

    def __init__(
        self,
        symbol,
        data_names=("data",),
        label_names=("softmax_label",),
        logger=logging,
        context=None,
        work_load_list=None,
        fixed_param_names=None,
        state_names=None,
        group2ctxs=None,
        compression_params=None,
    ):
        super().__init__(logger=logger)
        context = _ctx.cpu() if context is None else context
        self._context = list(context) if isinstance(context, (list, tuple)) else [context]
        self._work_load_list = work_load_list or [1] * len(self._context)
        self._group2ctxs = group2ctxs
        self._compression_params = compression_params
        self._symbol = symbol
        data_names = list(data_names or [])
        label_names = list(label_names or [])
        state_names = list(state_names or [])
        fixed = list(fixed_param_names or [])
        check_input_names(symbol, data_names, "data", True)
        check_input_names(symbol, label_names, "label", False)
        check_input_names(symbol, state_names, "state", True)
        check_input_names(symbol, fixed, "fixed_param", True)
        inputs = set(data_names + label_names + state_names)
        self._param_names = [n for n in symbol.list_arguments() if n not in inputs]
        self._fixed_param_names = fixed
        self._aux_names = symbol.list_auxiliary_states()
        self._data_names, self._label_names = data_names, label_names
        self._state_names = state_names
        self._output_names = symbol.list_outputs()
        self._arg_params = self._aux_params = None
        self._params_dirty = False
        self._optimizer = self._updater = self._kvstore = None
        self._update_on_kvstore = False
        self._opt_states, self._opt_fns = {}, {}
        self._preload_opt_states = None
        self._grad_req = None
        self._exec = self._default_exec = None
        self._data_shapes = self._label_shapes = None

    # ------------------------------------------------------------ loading
    @staticmethod
    def load(prefix, epoch, load_optimizer_states=False, **kwargs):
        """A Module from a checkpoint (``prefix-symbol.json``, ``prefix-%04d.params``);
        ``kwargs`` go to the constructor. Bind it before use."""
        from ..model import load_checkpoint

        sym, args, auxs = load_checkpoint(prefix, epoch)
        mod = Module(symbol=sym, **kwargs)
        mod._arg_params, mod._aux_params = args, auxs
        mod.params_initialized = True
        if load_optimizer_states:
            mod._preload_opt_states = f"{prefix}-{int(epoch):04d}.states"
        return mod

    def save_checkpoint(self, prefix, epoch, save_optimizer_states=False, remove_amp_cast=True):
        """Write ``prefix-symbol.json``, ``prefix-%04d.params`` (and ``.states``)."""
        self._symbol.save(f"{prefix}-symbol.json", remove_amp_cast=remove_amp_cast)
        fname = f"{prefix}-{int(epoch):04d}.params"
        self.save_params(fname)
        logging.info('Saved checkpoint to "%s"', fname)
        if save_optimizer_states:
            sname = f"{prefix}-{int(epoch):04d}.states"
            self.save_optimizer_states(sname)
            logging.info('Saved optimizer state to "%s"', sname)

    # ------------------------------------------------------------ properties
    @property
    def data_names(self):
        return self._data_names

    @property
    def label_names(self):
        return self._label_names

    @property
    def output_names(self):
        return self._output_names

    @property
    def data_shapes(self):
        self._need_bind()
        return self._data_shapes

    @property
    def label_shapes(self):
        self._need_bind()
        return self._label_shapes

    @property
    def output_shapes(self):
        self._need_bind()
        return [(n, o.shape) for n, o in zip(self._output_names, self._exec.outputs, strict=False)]

    def _need_bind(self):
        if not self.binded:
            raise MXNetError("the module is not bound: call bind() first")

    # ------------------------------------------------------------ parameters
    def get_params(self):
        """``(arg_params, aux_params)``: dicts of NDArray copies of the parameters."""
        if not (self.binded and self.params_initialized):
            raise MXNetError("call bind() and init_params() before get_params()")
        if self._params_dirty:
            self._sync_params_from_devices()
        return self._arg_params, self._aux_params

    def _sync_params_from_devices(self):
        args, aux = self._exec.arg_dict, self._exec.aux_dict
        for name, arr in self._arg_params.items():
            arr._data, arr._node = args[name]._data, None
        for name, arr in self._aux_params.items():
            arr._data, arr._node = aux[name]._data, None
        self._params_dirty = False

    def init_params(
        self,
        initializer=Uniform(0.01),
        arg_params=None,
        aux_params=None,  # noqa: B008
        allow_missing=False,
        force_init=False,
        allow_extra=False,
    ):
        """Initialise parameters: from ``arg_params``/``aux_params`` where given, else
        with ``initializer`` (names sorted, as MXNet; missing names raise unless
        ``allow_missing``)."""
        if self.params_initialized and not force_init:
            warnings.warn(
                "Parameters already initialized and force_init=False. init_params call ignored.",
                stacklevel=2,
            )
            return
        self._need_bind()
        attrs = self._symbol.attr_dict()

        def fill(name, arr, given):
            if given is not None and name in given:
                src = given[name]
                if src is not arr:
                    if tuple(src.shape) != arr.shape:
                        raise MXNetError(
                            f"init_params: '{name}' has shape {tuple(src.shape)}, "
                            f"the module needs {arr.shape}"
                        )
                    arr._data = raw(src).astype(arr.dtype)
                    arr._node = None
                return
            if given is not None and not allow_missing:
                raise RuntimeError(f"{name} is not presented")
            if initializer is not None:
                initializer(InitDesc(name, attrs.get(name)), arr)

        for name, arr in sorted(self._arg_params.items()):
            fill(name, arr, arg_params)
        for name, arr in sorted(self._aux_params.items()):
            fill(name, arr, aux_params)
        self.params_initialized = True
        self._params_dirty = False
        self._exec.copy_params_from(
            self._arg_params, self._aux_params, allow_extra_params=allow_extra
        )

    def set_params(
        self, arg_params, aux_params, allow_missing=False, force_init=True, allow_extra=False
    ):
        """Set parameters from dicts of NDArray (see :meth:`init_params`)."""
        if not allow_missing:
            self.init_params(
                initializer=None,
                arg_params=arg_params,
                aux_params=aux_params,
                allow_missing=allow_missing,
                force_init=force_init,
                allow_extra=allow_extra,
            )
            return
        if self.params_initialized and not force_init:
            warnings.warn(
                "Parameters already initialized and force_init=False. set_params call ignored.",
                stacklevel=2,
            )
            return
        self._exec.copy_params_from(arg_params, aux_params, allow_extra_params=allow_extra)
        self._params_dirty = True
        self.params_initialized = True

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
        """Allocate the executor for ``data_shapes`` (and ``label_shapes``).

        Parameters
        ----------
        data_shapes, label_shapes : list of DataDesc or (name, shape)
        for_training : bool
            Without it no gradients are kept.
        inputs_need_grad : bool
            Also compute gradients of the data (:meth:`get_input_grads`).
        shared_module : Module, optional
            Share its parameters (and optimizer) instead of making new ones.
        grad_req : str or dict
        """
        if force_rebind:
            self._exec = self._default_exec = None
            self.binded = False
        if self.binded:
            self.logger.warning("Already bound, ignoring bind()")
            return
        if not for_training and inputs_need_grad:
            raise MXNetError("inputs_need_grad=True needs for_training=True")
        self.for_training, self.inputs_need_grad = for_training, inputs_need_grad
        self._grad_req = grad_req
        self._data_shapes, self._label_shapes = parse_data_desc(
            self._data_names, self._label_names, data_shapes, label_shapes
        )
        self._exec = self._default_exec = self._simple_bind(shared_module)
        if shared_module is not None:
            self.params_initialized = True
            self._arg_params = shared_module._arg_params
            self._aux_params = shared_module._aux_params
        elif self.params_initialized:
            self._exec.copy_params_from(self._arg_params, self._aux_params)
        else:
            args, aux = self._exec.arg_dict, self._exec.aux_dict
            self._arg_params = {n: NDArray(args[n]._data) for n in self._param_names}
            self._aux_params = {n: NDArray(aux[n]._data) for n in self._aux_names}
        if shared_module is not None and shared_module.optimizer_initialized:
            self.borrow_optimizer(shared_module)
        self.binded = True

    def _reqs(self):
        names = self._symbol.list_arguments()
        if not self.for_training:
            return dict.fromkeys(names, "null")
        reqs = {}
        for n in names:
            if n in self._param_names:
                base = (
                    self._grad_req.get(n, "write")
                    if isinstance(self._grad_req, dict)
                    else self._grad_req
                )
                reqs[n] = "null" if n in self._fixed_param_names else base
            elif n in self._data_names and self.inputs_need_grad:
                reqs[n] = (
                    self._grad_req.get(n, "write")
                    if isinstance(self._grad_req, dict)
                    else self._grad_req
                )
            else:
                reqs[n] = "null"
        return reqs

    def _simple_bind(self, shared_module):
        descs = list(self._data_shapes) + list(self._label_shapes or [])
        inputs = set(self._symbol.list_inputs())
        shapes = {d.name: d.shape for d in descs if d.name in inputs}
        types = {d.name: d.dtype for d in descs if d.name in inputs}
        shared = shared_module._exec if shared_module is not None else None
        return self._symbol.simple_bind(
            self._context[0],
            grad_req=self._reqs(),
            type_dict=types or None,
            shared_arg_names=self._param_names,
            shared_exec=shared,
            **shapes,
        )

    def reshape(self, data_shapes, label_shapes=None):
        """Rebind for new input shapes, keeping the parameters."""
        self._need_bind()
        self._data_shapes, self._label_shapes = parse_data_desc(
            self._data_names, self._label_names, data_shapes, label_shapes
        )
        inputs = set(self._symbol.list_inputs())
        shapes = {
            d.name: d.shape
            for d in list(self._data_shapes) + list(self._label_shapes or [])
            if d.name in inputs
        }
        new = self._default_exec.reshape(partial_shaping=True, allow_up_sizing=True, **shapes)
        old = self._default_exec.arg_dict
        for n in self._param_names:
            if new.arg_dict[n] is not old[n]:
                raise MXNetError(
                    f"reshape: the shape of parameter '{n}' would change "
                    f"from {old[n].shape} to {new.arg_dict[n].shape}"
                )
        self._exec = new
