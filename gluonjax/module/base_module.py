"""BaseModule: the training / scoring / prediction loops of the Module API."""

from __future__ import annotations

import logging
import time
import warnings

import numpy as np

from .. import metric as _metric
from ..base import InvalidArgumentError, MXNetError
from ..initializer import Uniform
from ..io import DataBatch, DataDesc, DataIter
from ..model import BatchEndParam
from ..ndarray import NDArray

__all__ = ["BaseModule"]


def _as_list(obj):
    return list(obj) if isinstance(obj, (list, tuple)) else [obj]


def check_input_names(symbol, names, typename, throw):
    """Each of ``names`` must be an argument of ``symbol`` (else raise or warn)."""
    args = symbol.list_arguments()
    for name in names:
        if name in args:
            continue
        inputs = [a for a in args if not a.endswith(("_weight", "_bias", "_gamma", "_beta"))]
        msg = (
            f"You created Module with Module(..., {typename}_names={list(names)}) but input "
            f"with name '{name}' is not found in symbol.list_arguments(). Did you mean one "
            f"of:\n\t" + "\n\t".join(inputs)
        )
        if throw:
            raise InvalidArgumentError(msg)
        warnings.warn(msg, stacklevel=3)


def _check_names_match(names, descs, kind, throw):
    actual = [d[0] for d in descs]
    if sorted(names) != sorted(actual):
        msg = (
            f"Data provided by {kind}_shapes don't match names specified by {kind}_names "
            f"({descs} vs. {names})"
        )
        if throw:
            raise InvalidArgumentError(msg)
        warnings.warn(msg, stacklevel=3)


class DataShapeError(MXNetError, TypeError):
    """A data/label shape that is not a tuple of integers."""


def _desc(d):
    d = d if isinstance(d, DataDesc) else DataDesc(*d)
    shape = d.shape
    if not isinstance(shape, (tuple, list)) or not all(
        isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in shape
    ):
        raise DataShapeError(
            f"the shape of '{d.name}' must be a tuple of integers, got {type(shape).__name__} "
            f"{shape!r}; pass e.g. ('{d.name}', (10, 10))"
        )
    if isinstance(shape, list) or any(not isinstance(x, int) for x in shape):
        d = DataDesc(d.name, tuple(int(x) for x in shape), d.dtype, d.layout)
    return d


def parse_data_desc(data_names, label_names, data_shapes, label_shapes):
    """DataDesc lists from ``[(name, shape)]`` or DataDescs, checked against the names."""
    data_shapes = [_desc(d) for d in data_shapes]
    _check_names_match(data_names, data_shapes, "data", True)
    if label_shapes is not None:
        label_shapes = [_desc(d) for d in label_shapes]
        _check_names_match(label_names, label_shapes, "label", False)
    else:
        _check_names_match(label_names, [], "label", False)
    return data_shapes, label_shapes


def _concat(arrays):
    import jax.numpy as jnp

    return NDArray(jnp.concatenate([a._data for a in arrays], axis=0))


class BaseModule:
    """The Module API's loops (``fit``, ``score``, ``predict``) over abstract
    ``bind``/``forward``/``backward``/``update`` steps that subclasses define."""

    def __init__(self, logger=logging):
        self.logger = logger
        self.binded = False
        self.for_training = False
        self.inputs_need_grad = False
        self.params_initialized = False
        self.optimizer_initialized = False
        self._symbol = None
        self._total_exec_bytes = 0

    # ------------------------------------------------------------ high level
    def set_params(
        self, arg_params, aux_params, allow_missing=False, force_init=True, allow_extra=False
    ):
        """Set parameter values (``init_params`` without an initializer when some may be
        missing; with ``allow_missing`` the given values are written as they are)."""
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
        self._write_params(arg_params, aux_params, force_init, allow_extra)

    def _write_params(self, arg_params, aux_params, force_init, allow_extra):
        """Write given values (``set_params`` with ``allow_missing``); subclasses that hold
        parameters themselves override it."""
        self.init_params(
            initializer=None,
            arg_params=arg_params,
            aux_params=aux_params,
            allow_missing=True,
            force_init=force_init,
            allow_extra=allow_extra,
        )

    def forward_backward(self, data_batch):
        """``forward(data_batch, is_train=True)`` then ``backward()``."""
        self.forward(data_batch, is_train=True)
        self.backward()

    def score(
        self,
        eval_data,
        eval_metric,
        num_batch=None,
        batch_end_callback=None,
        score_end_callback=None,
        reset=True,
        epoch=0,
        sparse_row_id_fn=None,
    ):
        """Evaluate ``eval_metric`` over ``eval_data``; returns ``[(name, value)]``."""
        self._check_ready()
        if reset:
            eval_data.reset()
        if not isinstance(eval_metric, _metric.EvalMetric):
            eval_metric = _metric.create(eval_metric)
        eval_metric.reset()
        actual = 0
        for nbatch, batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.forward(batch, is_train=False)
            self.update_metric(eval_metric, batch.label)
            if batch_end_callback is not None:
                param = BatchEndParam(
                    epoch=epoch, nbatch=nbatch, eval_metric=eval_metric, locals=locals()
                )
                for cb in _as_list(batch_end_callback):
                    cb(param)
            actual += 1
        if score_end_callback:
            param = BatchEndParam(
                epoch=epoch, nbatch=actual, eval_metric=eval_metric, locals=locals()
            )
            for cb in _as_list(score_end_callback):
                cb(param)
        return eval_metric.get_name_value()

    def iter_predict(self, eval_data, num_batch=None, reset=True, sparse_row_id_fn=None):
        """Yield ``(outputs without padding, batch index, batch)`` for each batch."""
        self._check_ready()
        if reset:
            eval_data.reset()
        for nbatch, batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.forward(batch, is_train=False)
            pad = batch.pad or 0
            outs = [NDArray(o._data[: o.shape[0] - pad]) for o in self.get_outputs()]
            yield outs, nbatch, batch

    def predict(
        self,
        eval_data,
        num_batch=None,
        merge_batches=True,
        reset=True,
        always_output_list=False,
        sparse_row_id_fn=None,
    ):
        """Outputs over ``eval_data`` (a DataIter, NDArray or numpy array).

        Padding is removed. With ``merge_batches`` the batches are concatenated:
        one NDArray for a single output (unless ``always_output_list``), else a
        list; without, a list (per batch) of lists of outputs.
        """
        self._check_ready()
        if not isinstance(eval_data, DataIter):
            import numpy as np

            if isinstance(eval_data, np.ndarray):
                from ..ndarray import array

                eval_data = array(eval_data)
            if not isinstance(eval_data, NDArray):
                raise InvalidArgumentError("eval_data must be of type NDArray or DataIter")
            self.forward(DataBatch([eval_data]), is_train=False)
            return self.get_outputs()[0]
        output_list = [outs for outs, _, _ in self.iter_predict(eval_data, num_batch, reset)]
        if not output_list or not merge_batches:
            return output_list
        n = len(output_list[0])
        if any(len(o) != n for o in output_list):
            raise MXNetError(
                "Cannot merge batches, as num of outputs is not the same in "
                "mini-batches. Maybe bucketing is used?"
            )
        merged = [_concat([o[i] for o in output_list]) for i in range(n)]
        if n == 1 and not always_output_list:
            return merged[0]
        return merged

    def fit(
        self,
        train_data,
        eval_data=None,
        eval_metric="acc",
        epoch_end_callback=None,
        batch_end_callback=None,
        kvstore="local",
        optimizer="sgd",
        optimizer_params=(("learning_rate", 0.01),),
        eval_end_callback=None,
        eval_batch_end_callback=None,
        initializer=None,
        arg_params=None,
        aux_params=None,
        allow_missing=False,
        force_rebind=False,
        force_init=False,
        begin_epoch=0,
        num_epoch=None,
        validation_metric=None,
        monitor=None,
        sparse_row_id_fn=None,
    ):
        """Train on ``train_data`` for epochs ``begin_epoch .. num_epoch - 1``.

        Binds, initialises parameters (``initializer`` defaults to
        ``Uniform(0.01)``) and the optimizer, then per epoch runs
        forward/backward/update on every batch and logs (through ``self.logger``,
        the :mod:`logging` module by default) ``Epoch[e] Train-<metric>=<value>``,
        ``Epoch[e] Time cost=<seconds>`` and, with ``eval_data``,
        ``Epoch[e] Validation-<metric>=<value>``.
        """
        if num_epoch is None:
            raise InvalidArgumentError("please specify number of epochs")
        if initializer is None:
            initializer = Uniform(0.01)
        self.bind(
            data_shapes=train_data.provide_data,
            label_shapes=train_data.provide_label,
            for_training=True,
            force_rebind=force_rebind,
        )
        if monitor is not None:
            self.install_monitor(monitor)
        self.init_params(
            initializer=initializer,
            arg_params=arg_params,
            aux_params=aux_params,
            allow_missing=allow_missing,
            force_init=force_init,
        )
        self.init_optimizer(kvstore=kvstore, optimizer=optimizer, optimizer_params=optimizer_params)
        if validation_metric is None:
            validation_metric = eval_metric
        if not isinstance(eval_metric, _metric.EvalMetric):
            eval_metric = _metric.create(eval_metric)
        for epoch in range(begin_epoch, num_epoch):
            tic = time.time()
            eval_metric.reset()
            self._fit_epoch_begin(epoch, train_data)
            name_values = []
            batches = iter(train_data)
            try:
                nxt = next(batches)
            except StopIteration:
                nxt = None
            nbatch = 0
            while nxt is not None:
                batch = nxt
                if monitor is not None:
                    monitor.tic()
                self.forward_backward(batch)
                self.update()
                self.update_metric(eval_metric, batch.label)
                try:
                    nxt = next(batches)
                except StopIteration:
                    nxt = None
                if monitor is not None:
                    monitor.toc_print()
                if nxt is None:
                    name_values = eval_metric.get_global_name_value()
                if batch_end_callback is not None:
                    param = BatchEndParam(
                        epoch=epoch, nbatch=nbatch, eval_metric=eval_metric, locals=locals()
                    )
                    for cb in _as_list(batch_end_callback):
                        cb(param)
                nbatch += 1
            for name, val in name_values:
                self.logger.info("Epoch[%d] Train-%s=%f", epoch, name, val)
            self.logger.info("Epoch[%d] Time cost=%.3f", epoch, time.time() - tic)
            arg_params_, aux_params_ = self.get_params()
            self.set_params(arg_params_, aux_params_)
            if epoch_end_callback is not None:
                for cb in _as_list(epoch_end_callback):
                    cb(epoch, self.symbol, arg_params_, aux_params_)
            if eval_data:
                res = self.score(
                    eval_data,
                    validation_metric,
                    score_end_callback=eval_end_callback,
                    batch_end_callback=eval_batch_end_callback,
                    epoch=epoch,
                )
                for name, val in res:
                    self.logger.info("Epoch[%d] Validation-%s=%f", epoch, name, val)
            train_data.reset()

    def _fit_epoch_begin(self, epoch, train_data):
        """Called by :meth:`fit` before each epoch's first batch (``SVRGModule`` computes
        its full gradients here); leaves ``train_data`` ready to iterate."""

    # ------------------------------------------------------------ parameters
    def save_params(self, fname):
        """Save parameters as an MXNet ``.params`` file (``arg:``/``aux:`` names)."""
        from ..model import save_params_file

        arg_params, aux_params = self.get_params()
        save_params_file(fname, arg_params, aux_params)

    def load_params(self, fname):
        """Load parameters saved by :meth:`save_params` (or MXNet's)."""
        from ..model import split_params
        from ..ndarray import load

        arg_params, aux_params = split_params(load(fname), fname, strict=True)
        self.set_params(arg_params, aux_params)

    def _check_ready(self):
        if not (self.binded and self.params_initialized):
            raise MXNetError("call bind() and init_params() (or fit) before using the module")

    @property
    def symbol(self):
        return self._symbol

    def install_monitor(self, mon):
        raise NotImplementedError()
