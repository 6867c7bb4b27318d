"""``Estimator``: MXNet 1.9.1's Keras-like ``fit``/``evaluate`` loop for Gluon
(``gluon.contrib.estimator.estimator``)."""

from __future__ import annotations

import copy
import logging
import sys
import warnings

from ....base import EstimatorSetupError, InvalidArgumentError
from ....context import Context, cpu, gpu, num_gpus
from ....metric import Loss as _LossMetric
from ...loss import Loss
from ...trainer import Trainer
from ._loops import _Loops
from .batch_processor import BatchProcessor
from .event_handler import (
    BatchBegin,
    BatchEnd,
    EpochBegin,
    EpochEnd,
    GradientUpdateHandler,
    LoggingHandler,
    MetricHandler,
    StoppingHandler,
    TrainBegin,
    TrainEnd,
    ValidationHandler,
    _check_event_handlers,
)
from .utils import _check_handler_metric_ref, _check_metrics, _suggest_metric_for_loss

__all__ = ["Estimator"]


class Estimator(_Loops):
    """Train and evaluate a Gluon network with a few lines (Keras-like).

    Parameters
    ----------
    net : gluon.Block
        The model to train.
    loss : gluon.loss.Loss
        The training objective.
    train_metrics, val_metrics : EvalMetric or list of EvalMetric, optional
        Renamed ``'training <name>'`` / ``'validation <name>'``. Without training metrics,
        ``Accuracy`` for a softmax cross-entropy loss and a ``Loss`` metric of the loss
        are used; the validation metrics default to copies of the training ones.
    initializer : Initializer, optional
        Initializes what is not initialized yet (a warning when everything is).
    trainer : gluon.Trainer, optional
        SGD with learning rate 0.001 (and a warning) when not given.
    context : Context or list of Context, optional
        ``gpu(0)`` when there is a GPU, else ``cpu()``.
    val_net : gluon.Block, optional
        The network to validate (sharing the parameters of ``net``); ``net`` by default.
    val_loss : gluon.loss.Loss, optional
        The validation loss; ``loss`` by default.
    batch_processor : BatchProcessor, optional
        An object with ``fit_batch`` and ``evaluate_batch``.

    ``fit`` drives ``Trainer.compile_step`` (forward, backward and update in one compiled
    call) when the result is the same as the plain loop's: the default batch processor,
    one context, a hybridized net and only the built-in event handlers. Its first log
    line says which path it took. ``estimator.logger`` writes INFO lines to stdout.

    Examples
    --------
    >>> import gluonjax as mx
    >>> from gluonjax import gluon
    >>> from gluonjax.gluon.contrib.estimator import Estimator
    >>> net = gluon.nn.Dense(2)
    >>> net.initialize()
    >>> trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    >>> est = Estimator(net, gluon.loss.SoftmaxCrossEntropyLoss(), trainer=trainer)
    >>> [m.name for m in est.train_metrics], [m.name for m in est.val_metrics]
    (['training accuracy', 'training softmaxcrossentropyloss'], ['validation accuracy', \
'validation softmaxcrossentropyloss'])
    """

    logger = None

    def __init__(
        self,
        net,
        loss,
        train_metrics=None,
        val_metrics=None,
        initializer=None,
        trainer=None,
        context=None,
        val_net=None,
        val_loss=None,
        batch_processor=None,
    ):
        self.net = net
        self.loss = self._check_loss(loss)
        self._train_metrics = _check_metrics(train_metrics)
        self._val_metrics = _check_metrics(val_metrics)
        self._add_default_training_metrics()
        self._add_validation_metrics()
        self.val_loss = self.loss if val_loss is None else self._check_loss(val_loss)
        self.val_net = self.net if val_net is None else val_net
        self.logger = logging.Logger(name="Estimator", level=logging.INFO)
        self.logger.addHandler(logging.StreamHandler(sys.stdout))
        self.context = self._check_context(context)
        self._initialize(initializer)
        self.trainer = self._check_trainer(trainer)
        self.batch_processor = self._check_batch_processor(batch_processor)
        self.max_epoch = self.max_batch = None
        self.batch_axis = 0
        self.training_path = None  # 'fused' or 'plain' after fit
        self._batches_per_epoch = None
        self._fused_step = None

    # ------------------------------------------------------------------ checks
    def _check_loss(self, loss):
        if not isinstance(loss, Loss):
            raise InvalidArgumentError(
                f"loss must be a Loss (gluon.loss.L2Loss(), ...), got {loss!r}; refer to "
                f"gluon.loss.Loss"
            )
        return loss

    def _check_context(self, context):
        gpus = num_gpus()
        available = [gpu(i) for i in range(gpus)]
        if context:
            if isinstance(context, Context):
                context = [context]
            elif not (
                isinstance(context, (list, tuple)) and all(isinstance(c, Context) for c in context)
            ):
                raise InvalidArgumentError(
                    f"context must be a Context or a list of Context, for example mx.cpu() "
                    f"or [mx.gpu(0), mx.gpu(1)], got {context!r}; refer to mxnet.Context"
                )
            for ctx in context:
                if not (ctx in available or str(ctx).startswith("cpu")):
                    have = ", ".join(["mx.cpu()"] + [str(c) for c in available])
                    raise EstimatorSetupError(
                        f"Estimator: context {ctx} is not available, please make sure your "
                        f"context is in one of: {have}"
                    )
            return list(context)
        if gpus > 1:
            warnings.warn(
                "You have multiple GPUs, gpu(0) will be used by default. To utilize all your "
                "GPUs, specify context as a list of gpus, e.g. context=[mx.gpu(0), mx.gpu(1)]",
                stacklevel=3,
            )
        return [gpu(0)] if gpus > 0 else [cpu()]

    def _check_batch_processor(self, batch_processor):
        if batch_processor is None:
            return BatchProcessor()
        fit = getattr(batch_processor, "fit_batch", None)
        evaluate = getattr(batch_processor, "evaluate_batch", None)
        if not callable(fit) or not callable(evaluate):
            raise InvalidArgumentError(
                f"Customized Batch Processor must contain fit_batch() and evaluate_batch() "
                f"methods, got {type(batch_processor).__name__}"
            )
        return batch_processor

    def _initialize(self, initializer):
        if not self._is_initialized():
            if initializer:
                self.net.initialize(init=initializer, ctx=self.context)
            else:
                self.net.initialize(ctx=self.context)
        elif initializer:
            warnings.warn(
                "Network already fully initialized, skipping initialization. You don't need "
                "to pass initializer if you already initialized your net. You can use "
                "net.initialize(init=your_initializer, force_reinit=True) to force "
                "re-initialize.",
                stacklevel=3,
            )

    def _check_trainer(self, trainer):
        if not trainer:
            warnings.warn(
                "No trainer specified, default SGD optimizer with learning rate 0.001 is used.",
                stacklevel=3,
            )
            return Trainer(self.net.collect_params(), "sgd", {"learning_rate": 0.001})
        if not isinstance(trainer, Trainer):
            raise InvalidArgumentError(
                f"Trainer must be a Gluon Trainer instance, got {trainer!r}; refer to gluon.Trainer"
            )
        return trainer

    def _is_initialized(self):
        params = self.net.collect_params()
        for name in params:
            try:
                params[name].list_ctx()
            except RuntimeError:
                return False
        return True

    def _get_data_and_label(self, batch, ctx, batch_axis=0):
        return BatchProcessor()._get_data_and_label(batch, ctx, batch_axis)

    # ------------------------------------------------------------------ metrics
    def _add_default_training_metrics(self):
        if not self._train_metrics:
            suggested = _suggest_metric_for_loss(self.loss)
            if suggested:
                self._train_metrics = [suggested]
            self._train_metrics.append(_LossMetric(self.loss.name.rstrip("1234567890")))
        for metric in self._train_metrics:
            metric.name = "training " + metric.name

    def _add_validation_metrics(self):
        if not self._val_metrics:
            self._val_metrics = [copy.deepcopy(m) for m in self._train_metrics]
        for metric in self._val_metrics:
            if "training" in metric.name:
                metric.name = metric.name.replace("training", "validation")
            else:
                metric.name = "validation " + metric.name

    @property
    def train_metrics(self):
        """The training metrics (list of EvalMetric)."""
        return self._train_metrics

    @property
    def val_metrics(self):
        """The validation metrics (list of EvalMetric)."""
        return self._val_metrics

    # ------------------------------------------------------------------ handlers
    def _prepare_default_handlers(self, val_data, event_handlers):
        event_handlers = _check_event_handlers(event_handlers)
        added = [StoppingHandler(self.max_epoch, self.max_batch)]
        if not any(isinstance(h, GradientUpdateHandler) for h in event_handlers):
            added.append(GradientUpdateHandler())
        if not any(isinstance(h, MetricHandler) for h in event_handlers):
            added.append(MetricHandler(metrics=self.train_metrics))
        if not any(isinstance(h, ValidationHandler) for h in event_handlers) and val_data:
            added.append(ValidationHandler(val_data=val_data, eval_fn=self.evaluate))
        if not any(isinstance(h, LoggingHandler) for h in event_handlers):
            added.append(LoggingHandler(metrics=self.train_metrics))
        mixing = bool(event_handlers) and bool(added)
        event_handlers.extend(added)
        if mixing:  # user and default handlers together: one set of metric objects
            known = self.train_metrics + self.val_metrics
            for handler in event_handlers:
                _check_handler_metric_ref(handler, known)
        event_handlers.sort(key=lambda h: getattr(h, "priority", 0))
        return event_handlers

    def _prepare_default_validation_handlers(self, event_handlers):
        event_handlers = _check_event_handlers(event_handlers)
        added = []
        if not any(isinstance(h, MetricHandler) for h in event_handlers):
            added.append(MetricHandler(metrics=self.val_metrics))
        if not any(isinstance(h, LoggingHandler) for h in event_handlers):
            added.append(LoggingHandler(metrics=self.val_metrics))
        mixing = bool(event_handlers) and bool(added)
        event_handlers.extend(added)
        if mixing:
            for handler in event_handlers:
                _check_handler_metric_ref(handler, self.val_metrics)
        event_handlers.sort(key=lambda h: getattr(h, "priority", 0))
        return event_handlers

    def _categorize_handlers(self, event_handlers):
        """Six lists (train begin, epoch begin, batch begin, batch end, epoch end, train
        end): the handlers deriving from each event's class, in order."""
        kinds = (TrainBegin, EpochBegin, BatchBegin, BatchEnd, EpochEnd, TrainEnd)
        return tuple([h for h in event_handlers if isinstance(h, k)] for k in kinds)
