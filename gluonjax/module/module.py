"""Module: a symbol bound for training or inference on one device (``mx.mod.Module``).

The bound graph runs as one compiled forward and one compiled backward per context
(a :class:`~gluonjax.module.executor_group.DataParallelExecutorGroup` of
:class:`~gluonjax.executor.Executor`); ``update()`` applies the optimizer to every
parameter in ONE compiled call (the same update the gluon Trainer uses). With several
contexts each gets a slice of the batch and its own copy of the parameters; their
gradients are summed and one update is copied to all (MXNet's kvstore update).
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
from .executor_group import DataParallelExecutorGroup

__all__ = ["Module"]


_STYPES = {"1": "row_sparse", "2": "csr"}  # a variable's __storage_type__ attribute


def _host_copy(arr, attrs):
    """The module's copy of a parameter, of the storage type its variable declares
    (``var(..., stype='row_sparse')``), as MXNet's ``arg_params``."""
    copy = NDArray(arr._data)
    stype = _STYPES.get(str(attrs.get("__storage_type__")), "default")
    return copy if stype == "default" else copy.tostype(stype)


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
        self._exec_group = None
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
        return self._exec_group.get_output_shapes()

    @property
    def _exec(self):
        """The first context's executor."""
        return self._exec_group.execs[0]

    @property
    def _default_exec(self):
        """The first context's executor as first bound (reshaped ones share its arrays)."""
        group = self._exec_group
        return (group._default_execs or group.execs)[0]

    def _need_bind(self):
        if not self.binded:
            raise MXNetError("the module is not bound: call bind() first")

    # ------------------------------------------------------------ parameters
    def get_params(self):
        """``(arg_params, aux_params)``: dicts of NDArray copies of the parameters."""
        if not self.params_initialized:
            raise MXNetError("call init_params() (or load parameters) before get_params()")
        if self._params_dirty:
            self._sync_params_from_devices()
        return self._arg_params, self._aux_params

    def _sync_params_from_devices(self):
        self._exec_group.get_params(self._arg_params, self._aux_params)
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
            if initializer is not None:
                initializer(InitDesc(name, attrs.get(name)), arr)

        if not allow_missing:  # check first: on an error no parameter has changed
            for own, given in ((self._arg_params, arg_params), (self._aux_params, aux_params)):
                missing = sorted(n for n in own if given is not None and n not in given)
                if missing:
                    raise MXNetError(
                        f"init_params: {missing[0]} is not presented in the given "
                        f"parameters (missing: {missing}); pass allow_missing=True to "
                        f"initialize missing ones with the initializer"
                    )
        for name, arr in sorted(self._arg_params.items()):
            fill(name, arr, arg_params)
        for name, arr in sorted(self._aux_params.items()):
            fill(name, arr, aux_params)
        self.params_initialized = True
        self._params_dirty = False
        self._exec_group.set_params(self._arg_params, self._aux_params, allow_extra=allow_extra)

    def _write_params(self, arg_params, aux_params, force_init, allow_extra):
        self._exec_group.set_params(arg_params, aux_params, allow_extra=allow_extra)
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
            self._exec_group = None
            self.binded = False
        if self.binded:
            self.logger.warning("Already bound, ignoring bind()")
            return
        if not for_training and inputs_need_grad:
            raise MXNetError("inputs_need_grad=True needs for_training=True")
        data_shapes, label_shapes = parse_data_desc(
            self._data_names, self._label_names, data_shapes, label_shapes
        )
        shared_group = None
        if shared_module is not None:
            if not (shared_module.binded and shared_module.params_initialized):
                raise MXNetError("shared_module must be bound and have initialized parameters")
            shared_group = shared_module._exec_group
        group = DataParallelExecutorGroup(
            self._symbol,
            self._context,
            self._work_load_list,
            data_shapes,
            label_shapes,
            self._param_names,
            for_training,
            inputs_need_grad,
            shared_group,
            logger=self.logger,
            fixed_param_names=self._fixed_param_names,
            grad_req=grad_req,
            state_names=self._state_names,
            group2ctxs=self._group2ctxs,
        )
        self.for_training, self.inputs_need_grad = for_training, inputs_need_grad
        self._grad_req = grad_req
        self._data_shapes, self._label_shapes = data_shapes, label_shapes
        self._exec_group = group
        self._total_exec_bytes = group._total_exec_bytes
        if shared_module is not None:
            self.params_initialized = True
            self._arg_params = shared_module._arg_params
            self._aux_params = shared_module._aux_params
        elif self.params_initialized:
            group.set_params(self._arg_params, self._aux_params)
        else:
            attrs = self._symbol.attr_dict()
            self._arg_params = {
                n: _host_copy(b[0], attrs.get(n, {}))
                for n, b in zip(self._param_names, group.param_arrays)
            }
            self._aux_params = {
                n: NDArray(b[0]._data) for n, b in zip(self._aux_names, group.aux_arrays)
            }
        if shared_module is not None and shared_module.optimizer_initialized:
            self.borrow_optimizer(shared_module)
        self.binded = True

    def reshape(self, data_shapes, label_shapes=None):
        """Rebind for new input shapes, keeping the parameters."""
        self._need_bind()
        data_shapes, label_shapes = parse_data_desc(
            self._data_names, self._label_names, data_shapes, label_shapes
        )
        group = self._exec_group
        before = [list(b) for b in group.param_arrays]
        group.reshape(data_shapes, label_shapes)
        for name, old, new in zip(self._param_names, before, group.param_arrays, strict=False):
            if any(a is not b for a, b in zip(old, new, strict=False)):
                raise MXNetError(
                    f"reshape: the shape of parameter '{name}' would change from "
                    f"{old[0].shape} to {new[0].shape}"
                )
        self._data_shapes, self._label_shapes = data_shapes, label_shapes
