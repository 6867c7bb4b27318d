"""``SVRGModule``: a :class:`~gluonjax.module.Module` trained with stochastic
variance-reduced gradients (Johnson & Zhang, 2013).

Every ``update_freq`` epochs the full gradient ``mu`` of a snapshot of the weights is
computed over the whole data set (:meth:`SVRGModule.update_full_grads`, run by ``fit``);
each batch then updates with ``g(w) - g(w_snapshot) + mu``, where ``g(w_snapshot)`` is
the batch's gradient at the snapshot, computed by an auxiliary Module (``_mod_aux``).
The update itself is the Module's (one compiled call), with the user's optimizer.

Examples
--------
>>> import numpy as np
>>> import gluonjax as mx
>>> from gluonjax.contrib.svrg_optimization import SVRGModule
>>> x = np.arange(8, dtype=np.float32).reshape(4, 2)
>>> it = mx.io.NDArrayIter(x, x.sum(axis=1), batch_size=2, label_name="lin_reg_label")
>>> net = mx.sym.LinearRegressionOutput(
...     mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=1, name="fc"),
...     mx.sym.Variable("lin_reg_label"))
>>> mod = SVRGModule(net, label_names=["lin_reg_label"], update_freq=2)
>>> mod.fit(it, eval_metric="mse", num_epoch=2, optimizer_params=(("learning_rate", 0.01),))
>>> sorted(mod.get_params()[0])
['fc_bias', 'fc_weight']
"""

from __future__ import annotations

import logging

from ...base import ArgumentTypeError, InvalidArgumentError
from ...module import Module
from ...module._optim import _create_kvstore
from ...ndarray import NDArray, zeros, zeros_like
from .svrg_optimizer import _SVRGOptimizer

__all__ = ["SVRGModule"]


class SVRGModule(Module):
    """A Module trained by SVRG; the arguments are :class:`Module`'s plus ``update_freq``.

    Parameters
    ----------
    symbol : Symbol
    data_names, label_names : sequence of str
    logger, context, work_load_list, fixed_param_names, state_names, group2ctxs,
    compression_params
        As for :class:`Module`.
    update_freq : int
        Compute the full gradients every ``update_freq`` epochs (in ``fit``).
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
        update_freq=None,
    ):
        if not isinstance(update_freq, int) or isinstance(update_freq, bool):
            raise ArgumentTypeError(
                f"SVRGModule: update_freq must be an integer (the number of epochs between "
                f"full-gradient computations), got {update_freq!r}"
            )
        if update_freq <= 0:
            raise InvalidArgumentError(
                f"SVRGModule: update_freq must be a positive integer, got {update_freq}"
            )
        args = (symbol, data_names, label_names, logger, context, work_load_list)
        more = (fixed_param_names, state_names, group2ctxs, compression_params)
        super().__init__(*args, *more)
        self.update_freq = update_freq
        self._mod_aux = Module(*args, *more)
        self._param_dict = None
        self._ctx_len = len(self._context)

    def _reset_bind(self):
        """Unbind both modules."""
        for m in (self, self._mod_aux):
            m.binded, m._exec_group = False, None

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
        """Bind this module and (for training) the auxiliary one; see :meth:`Module.bind`."""
        args = (data_shapes, label_shapes, for_training, inputs_need_grad, force_rebind)
        super().bind(*args, shared_module, grad_req)
        if for_training:
            self._mod_aux.bind(*args, shared_module, grad_req)

    def reshape(self, data_shapes, label_shapes=None):
        """Reshape both modules for new input shapes."""
        super().reshape(data_shapes, label_shapes=label_shapes)
        if self._mod_aux.binded:
            self._mod_aux.reshape(data_shapes, label_shapes=label_shapes)

    def init_optimizer(
        self,
        kvstore="local",
        optimizer="sgd",
        optimizer_params=(("learning_rate", 0.01),),
        force_init=False,
    ):
        """Install an :class:`_SVRGOptimizer` wrapping ``optimizer``; see
        :meth:`Module.init_optimizer`."""
        arg_params = self.get_params()[0]
        self._param_dict = [
            {k: zeros(v.shape, ctx=ctx, dtype=v.dtype) for k, v in arg_params.items()}
            for ctx in self._context
        ]
        svrg = self._create_optimizer(optimizer, kvstore, optimizer_params)
        super().init_optimizer(kvstore, svrg, force_init=force_init)

    def _create_optimizer(self, default_opt, kvstore, optimizer_params):
        """An ``_SVRGOptimizer`` with ``rescale_grad = 1/batch_size`` and indices as the
        Module's, plus one ``<name>_full`` index per parameter."""
        batch_size = self._exec_group.batch_size
        kv, on_kv = _create_kvstore(self, kvstore, self._ctx_len)
        if kv is not None and "dist" in kv.type and "_sync" in kv.type:
            batch_size *= kv.num_workers
        names = self._exec_group.param_names
        n = self._ctx_len
        if on_kv or n == 1:
            idx2name = dict(enumerate(names))
        else:
            idx2name = {i * n + k: name for k in range(n) for i, name in enumerate(names)}
        for name in self._param_dict[0]:
            idx2name[max(idx2name, default=-1) + 1] = name + "_full"
        params = dict(optimizer_params)
        params.setdefault("rescale_grad", 1.0 / batch_size)
        params["param_idx2name"] = idx2name
        return _SVRGOptimizer(default_opt, **params)

    def forward(self, data_batch, is_train=None):
        """Forward on both modules (the auxiliary one only when training)."""
        super().forward(data_batch, is_train)
        if is_train:
            self._mod_aux.forward(data_batch, is_train)

    def backward(self, out_grads=None):
        """Backward on both modules."""
        super().backward(out_grads)
        if self._mod_aux.binded:
            self._mod_aux.backward(out_grads)

    def forward_backward(self, data_batch):
        """A training forward and a backward (both modules)."""
        self.forward(data_batch, is_train=True)
        self.backward()

    def update(self):
        """Replace the gradients by SVRG's ``g(w) - g(w_snapshot) + mu`` and update."""
        self._update_svrg_gradients()
        super().update()

    def update_full_grads(self, train_data):
        """Snapshot the weights into the auxiliary module and average their gradients
        over all of ``train_data`` (the full gradient ``mu``).

        Parameters
        ----------
        train_data : DataIter
        """
        names = self._exec_group.param_names
        arg, aux = self.get_params()
        self._mod_aux.set_params(arg_params=arg, aux_params=aux)
        sums = [{k: zeros_like(v) for k, v in d.items()} for d in self._param_dict]
        train_data.reset()
        nbatch, padding = 0, 0
        for batch in train_data:
            self._mod_aux.forward(batch, is_train=True)
            self._mod_aux.backward()
            nbatch += 1
            grads = self._mod_aux._exec_group.grad_arrays
            for c in range(self._ctx_len):
                for i, name in enumerate(names):
                    if grads[i][c] is not None:
                        sums[c][name] += grads[i][c]
            padding = batch.pad or 0
        batches = nbatch - padding / train_data.batch_size
        for name in names:
            per_dev = [sums[c][name] / batches for c in range(self._ctx_len)]
            self._param_dict_set(name, per_dev)

    def _param_dict_set(self, name, per_dev):
        """Every device gets the mean of the devices' (and workers') full gradients, as
        MXNet's kvstore accumulation of the ``<name>_full`` keys gives."""
        if self._ctx_len == 1 and self._kvstore is None:
            self._param_dict[0][name] = per_dev[0]
            return
        total = sum(g._data for g in per_dev)
        kv = self._kvstore
        if kv is not None and kv.num_workers > 1:
            total = kv.allsum([total])[0]
        for c in range(self._ctx_len):
            self._param_dict[c][name] = NDArray(total / self._ctx_len).as_in_context(
                self._context[c]
            )

    def _update_svrg_gradients(self):
        names = self._exec_group.param_names
        cur, snap = self._exec_group.grad_arrays, self._mod_aux._exec_group.grad_arrays
        for c in range(self._ctx_len):
            for i, name in enumerate(names):
                g = cur[i][c]
                if g is None:
                    continue
                g[:] = g - snap[i][c] + self._param_dict[c][name]

    def _fit_epoch_begin(self, epoch, train_data):
        if epoch % self.update_freq == 0:
            self.update_full_grads(train_data)
        train_data.reset()

    def prepare(self, data_batch, sparse_row_id_fn=None):
        """Prepare both modules for ``data_batch``."""
        super().prepare(data_batch, sparse_row_id_fn=sparse_row_id_fn)
        self._mod_aux.prepare(data_batch, sparse_row_id_fn=sparse_row_id_fn)
