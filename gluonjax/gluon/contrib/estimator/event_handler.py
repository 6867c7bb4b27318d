"""The Estimator's event handlers (MXNet 1.9.1's ``gluon.contrib.estimator.event_handler``).

A handler derives from the classes of the events it reacts to (``TrainBegin``,
``EpochBegin``, ``BatchBegin``, ``BatchEnd``, ``EpochEnd``, ``TrainEnd``); handlers run
in ascending ``priority`` (0 when unset): the gradient update (-2000) first, then the
metrics and validation (-1000), user handlers (0) and logging (inf) last.
"""

from __future__ import annotations

import warnings

import numpy as np

from ....base import InvalidArgumentError
from ....metric import CompositeEvalMetric, EvalMetric
from ....metric import Loss as _LossMetric
from ._checkpoint import CheckpointHandler
from ._events import (
    BatchBegin,
    BatchEnd,
    EpochBegin,
    EpochEnd,
    EventHandler,
    TrainBegin,
    TrainEnd,
    _check_event_handlers,
    _monitor_op,
)
from ._logging import LoggingHandler
from .utils import _check_metrics

__all__ = [
    "TrainBegin",
    "TrainEnd",
    "EpochBegin",
    "EpochEnd",
    "BatchBegin",
    "BatchEnd",
    "StoppingHandler",
    "MetricHandler",
    "ValidationHandler",
    "LoggingHandler",
    "CheckpointHandler",
    "EarlyStoppingHandler",
    "GradientUpdateHandler",
]

_ = (EventHandler, _check_event_handlers)  # re-exported for the estimator


class StoppingHandler(TrainBegin, BatchEnd, EpochEnd):
    """Stop training when ``max_epoch`` epochs or ``max_batch`` batches are done
    (read from the estimator at train begin).

    Parameters
    ----------
    max_epoch : int, default None
    max_batch : int, default None
    """

    def __init__(self, max_epoch=None, max_batch=None):
        self.max_epoch, self.max_batch = max_epoch, max_batch
        self.current_batch = self.current_epoch = 0
        self.stop_training = False

    def train_begin(self, estimator, *args, **kwargs):
        self.max_epoch, self.max_batch = estimator.max_epoch, estimator.max_batch
        self.current_batch = self.current_epoch = 0
        self.stop_training = False

    def batch_end(self, estimator, *args, **kwargs):
        self.current_batch += 1
        if self.current_batch == self.max_batch:
            self.stop_training = True
        return self.stop_training

    def epoch_end(self, estimator, *args, **kwargs):
        self.current_epoch += 1
        if self.current_epoch == self.max_epoch:
            self.stop_training = True
        return self.stop_training


class MetricHandler(EpochBegin, BatchEnd):
    """Reset ``metrics`` at each epoch begin and update them at each batch end (a
    ``mx.metric.Loss`` with the batch's losses, the others with labels and predictions).

    Parameters
    ----------
    metrics : list of EvalMetric
    priority : scalar, default -1000
        Runs before the handlers that read the metrics.
    """

    def __init__(self, metrics, priority=-1000):
        self.metrics = _check_metrics(metrics)
        self.priority = priority

    def epoch_begin(self, estimator, *args, **kwargs):
        for metric in self.metrics:
            metric.reset()

    def batch_end(self, estimator, *args, **kwargs):
        pred, label, loss = kwargs["pred"], kwargs["label"], kwargs["loss"]
        for metric in self.metrics:
            if isinstance(metric, _LossMetric):
                metric.update(0, loss)
            else:
                metric.update(label, pred)


class ValidationHandler(TrainBegin, BatchEnd, EpochEnd):
    """Run ``eval_fn`` (usually ``estimator.evaluate``) on ``val_data`` every
    ``epoch_period`` epochs and/or every ``batch_period`` batches.

    Parameters
    ----------
    val_data : DataLoader
    eval_fn : callable
        Called as ``eval_fn(val_data=, batch_axis=, event_handlers=)``.
    epoch_period : int, default 1
    batch_period : int, default None
    priority : scalar, default -1000
    event_handlers : EventHandler or list of EventHandler
        Handlers passed on to ``eval_fn``.
    """

    def __init__(
        self,
        val_data,
        eval_fn,
        epoch_period=1,
        batch_period=None,
        priority=-1000,
        event_handlers=None,
    ):
        if not callable(eval_fn):
            raise InvalidArgumentError(
                f"ValidationHandler: eval_fn must be callable (e.g. estimator.evaluate), "
                f"got {eval_fn!r}"
            )
        self.val_data, self.eval_fn = val_data, eval_fn
        self.epoch_period, self.batch_period = epoch_period, batch_period
        self.current_batch = self.current_epoch = 0
        self.priority = priority
        self.event_handlers = event_handlers

    def train_begin(self, estimator, *args, **kwargs):
        self.current_batch = self.current_epoch = 0

    def _run(self, estimator):
        self.eval_fn(
            val_data=self.val_data,
            batch_axis=estimator.batch_axis,
            event_handlers=self.event_handlers,
        )

    def batch_end(self, estimator, *args, **kwargs):
        self.current_batch += 1
        if self.batch_period and self.current_batch % self.batch_period == 0:
            self._run(estimator)

    def epoch_end(self, estimator, *args, **kwargs):
        self.current_epoch += 1
        if self.epoch_period and self.current_epoch % self.epoch_period == 0:
            self._run(estimator)


class EarlyStoppingHandler(TrainBegin, EpochEnd, TrainEnd):
    """Stop training when ``monitor`` has not improved for ``patience`` epochs.

    Parameters
    ----------
    monitor : EvalMetric
        One of ``estimator.train_metrics`` / ``estimator.val_metrics``.
    min_delta : float, default 0
        Smallest change counted as an improvement.
    patience : int, default 0
        Epochs without improvement before stopping.
    mode : {'auto', 'min', 'max'}, default 'auto'
        'auto': 'max' for accuracy and F1 metrics, 'min' otherwise.
    baseline : float, optional
        Initial value to improve on.
    """

    def __init__(self, monitor, min_delta=0, patience=0, mode="auto", baseline=None):
        if not isinstance(monitor, EvalMetric):
            raise InvalidArgumentError(
                "EarlyStoppingHandler: please provide one of the metric objects from "
                f"estimator.train_metrics and estimator.val_metrics as monitor, got {monitor!r}"
            )
        if isinstance(monitor, CompositeEvalMetric):
            raise InvalidArgumentError(
                "CompositeEvalMetric is not supported for EarlyStoppingHandler, please "
                "specify a simple metric instead."
            )
        self.monitor, self.baseline = monitor, baseline
        self.patience = patience
        self.wait = self.stopped_epoch = self.current_epoch = 0
        self.stop_training = False
        self.monitor_op = _monitor_op(monitor, mode, "EarlyStoppingHandler")
        self.min_delta = min_delta if self.monitor_op is np.greater else -min_delta
        self.best = None

    def train_begin(self, estimator, *args, **kwargs):
        self.wait = self.stopped_epoch = self.current_epoch = 0
        self.stop_training = False
        if self.baseline is not None:
            self.best = self.baseline
        else:
            self.best = np.inf if self.monitor_op is np.less else -np.inf

    def epoch_end(self, estimator, *args, **kwargs):
        name, value = self.monitor.get()
        if np.isnan(value):
            warnings.warn(
                RuntimeWarning(
                    f"{name} is not updated, make sure you pass one of the metric objects "
                    f"from estimator.train_metrics and estimator.val_metrics as monitor."
                ),
                stacklevel=2,
            )
        elif self.monitor_op(value - self.min_delta, self.best):
            self.best = value
            self.wait = 0
        else:
            self.wait += 1
            if self.wait >= self.patience:
                self.stopped_epoch = self.current_epoch
                self.stop_training = True
        self.current_epoch += 1
        return self.stop_training

    def train_end(self, estimator, *args, **kwargs):
        if self.stopped_epoch > 0:
            estimator.logger.info(
                "[Epoch %d] EarlyStoppingHandler: early stopping due to %s not improving",
                self.stopped_epoch,
                self.monitor.get()[0],
            )


class GradientUpdateHandler(BatchEnd):
    """Apply the gradients at each batch end: ``trainer.step(batch size)``, the batch
    size being the summed first dimension of the batch's losses.

    Parameters
    ----------
    priority : scalar, default -2000
        Runs first among the batch-end handlers.
    """

    def __init__(self, priority=-2000):
        self.priority = priority

    def batch_end(self, estimator, *args, **kwargs):
        loss = kwargs["loss"]
        if not isinstance(loss, (list, tuple)):
            loss = [loss]
        estimator.trainer.step(sum(int(lo.shape[0]) for lo in loss))
