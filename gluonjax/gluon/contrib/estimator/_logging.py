"""``LoggingHandler``: MXNet's training log lines, and a progress bar on a terminal."""

from __future__ import annotations

import logging
import numbers
import time

from ...._progress import ProgressBar
from ....base import InvalidArgumentError
from ._events import BatchBegin, BatchEnd, EpochBegin, EpochEnd, TrainBegin, TrainEnd
from .utils import _check_metrics

__all__ = ["LoggingHandler"]

_REDRAW_S = 0.1  # the progress bar is redrawn at most this often


class LoggingHandler(TrainBegin, TrainEnd, EpochBegin, EpochEnd, BatchBegin, BatchEnd):
    """Log the optimizer, the learning rate, the metrics and the times of training (the
    default handler of every ``Estimator.fit`` and ``evaluate``).

    Lines go to ``estimator.logger`` in MXNet 1.9.1's format (``[Epoch 0] Finished in
    0.123s, training accuracy: 0.5000, ...``). While a training epoch runs and the
    logger writes to a terminal, a progress bar shows the batches done, the metrics and
    the throughput (samples/s) in place; the epoch's log line replaces it.

    Parameters
    ----------
    log_interval : int or 'epoch', default 'epoch'
        'epoch': log the metrics at each epoch end; an integer k: also every k batches.
    metrics : list of EvalMetric
        The metrics to log.
    priority : scalar, default inf
        Runs last, once every other handler updated its state.
    progress_bar : bool or 'auto', default 'auto'
        Draw the bar: 'auto' when the logger's stream is a terminal and ``log_interval``
        is 'epoch'; True wherever the logger writes to a stream; False never.
    """

    def __init__(self, log_interval="epoch", metrics=None, priority=float("inf"), **kwargs):
        progress_bar = kwargs.pop("progress_bar", "auto")
        if kwargs:
            raise InvalidArgumentError(
                f"LoggingHandler: unknown argument(s) {sorted(kwargs)}; it takes log_interval, "
                f"metrics, priority and progress_bar"
            )
        interval_ok = isinstance(log_interval, numbers.Integral) and not isinstance(
            log_interval, bool
        )
        if not interval_ok and log_interval != "epoch":
            raise InvalidArgumentError(
                f"log_interval must be either an integer or string 'epoch', got {log_interval!r}"
            )
        if progress_bar not in (True, False, "auto"):
            raise InvalidArgumentError(
                f"LoggingHandler: progress_bar must be True, False or 'auto', got {progress_bar!r}"
            )
        self.metrics = _check_metrics(metrics)
        self.priority = priority
        self.log_interval = int(log_interval) if interval_ok else log_interval
        self.progress_bar = progress_bar
        self.batch_index = self.current_epoch = self.processed_samples = 0
        self.log_interval_time = 0
        self.train_start = self.epoch_start = self.batch_start = time.time()
        self._bar = None
        self._epoch_samples = 0
        self._drawn = 0.0

    # ------------------------------------------------------------------ train
    def train_begin(self, estimator, *args, **kwargs):
        self.train_start = time.time()
        trainer = estimator.trainer
        estimator.logger.info(
            "Training begin: using optimizer %s with current learning rate %.4f ",
            type(trainer.optimizer).__name__,
            trainer.learning_rate,
        )
        if estimator.max_epoch:
            estimator.logger.info("Train for %d epochs.", estimator.max_epoch)
        else:
            estimator.logger.info("Train for %d batches.", estimator.max_batch)
        self.current_epoch = self.batch_index = self.processed_samples = 0
        self.log_interval_time = 0

    def train_end(self, estimator, *args, **kwargs):
        self._clear_bar()
        self._bar = None
        estimator.logger.removeFilter(self._filter)
        took = time.time() - self.train_start
        msg = f"Train finished using total {int(took)}s with {self.current_epoch} epochs. "
        estimator.logger.info(self._with_metrics(msg))

    # ------------------------------------------------------------------ batches
    def batch_begin(self, estimator, *args, **kwargs):
        if isinstance(self.log_interval, int):
            self.batch_start = time.time()

    def batch_end(self, estimator, *args, **kwargs):
        samples = _batch_samples(kwargs.get("batch"), getattr(estimator, "batch_axis", 0))
        self._epoch_samples += samples
        if isinstance(self.log_interval, int):
            self.processed_samples += samples
            self.log_interval_time += time.time() - self.batch_start
            if self.batch_index % self.log_interval == 0:
                msg = (
                    f"[Epoch {self.current_epoch}][Batch {self.batch_index}]"
                    f"[Samples {self.processed_samples}] "
                    f"time/interval: {self.log_interval_time:.3f}s "
                )
                self.log_interval_time = 0
                self._clear_bar()
                estimator.logger.info(self._with_metrics(msg))
        self.batch_index += 1
        self._draw_bar()

    # ------------------------------------------------------------------ epochs
    def epoch_begin(self, estimator, *args, **kwargs):
        self.epoch_start = time.time()
        self._epoch_samples = 0
        if self._is_training():
            estimator.logger.info(
                "[Epoch %d] Begin, current learning rate: %.4f",
                self.current_epoch,
                estimator.trainer.learning_rate,
            )
            self._open_bar(estimator)
        else:
            estimator.logger.info("Validation Begin")

    def epoch_end(self, estimator, *args, **kwargs):
        self._clear_bar()
        took = time.time() - self.epoch_start
        msg = f"[Epoch {self.current_epoch}] Finished in {took:.3f}s, "
        estimator.logger.info(self._with_metrics(msg))
        self.current_epoch += 1
        self.batch_index = 0

    # ------------------------------------------------------------------ helpers
    def _is_training(self):
        return any("training" in m.name for m in self.metrics)

    def _with_metrics(self, msg):
        for metric in self.metrics:
            name, value = metric.get()
            msg += f"{name}: {value:.4f}, "
        return msg.rstrip(", ")

    def _open_bar(self, estimator):
        self._bar = None
        if self.progress_bar is False:
            return
        if self.progress_bar == "auto" and self.log_interval != "epoch":
            return
        stream = _logger_stream(estimator.logger)
        if stream is None:
            return
        isatty = getattr(stream, "isatty", None)
        tty = bool(isatty is not None and isatty())
        if self.progress_bar == "auto" and not tty:
            return
        total = getattr(estimator, "_batches_per_epoch", None)
        self._bar = ProgressBar(total, f"[Epoch {self.current_epoch}]", stream=stream)
        self._bar.tty = True  # drawn in place (the caller asked for it, or a terminal)
        self._drawn = 0.0
        if self._filter not in estimator.logger.filters:  # any log line erases the bar first
            estimator.logger.addFilter(self._filter)

    def _filter(self, record):
        self._clear_bar()
        return True

    def _draw_bar(self):
        bar = self._bar
        if bar is None:
            return
        now = time.perf_counter()
        if now - self._drawn < _REDRAW_S:
            return
        self._drawn = now
        speed = self._epoch_samples / max(time.time() - self.epoch_start, 1e-9)
        parts = [f"{name}: {value:.4f}" for name, value in (m.get() for m in self.metrics)]
        parts.append(f"{speed:.0f} samples/s")
        bar.update(self.batch_index, ", ".join(parts))

    def _clear_bar(self):
        if self._bar is not None:
            self._bar.clear()


def _logger_stream(logger):
    """The stream of the logger's first console handler (not a file), or None."""
    for handler in logger.handlers:
        if isinstance(handler, logging.StreamHandler) and not isinstance(
            handler, logging.FileHandler
        ):
            return handler.stream
    return None


def _batch_samples(batch, axis):
    """Samples in a batch: the size of its data along the batch axis."""
    if batch is None:
        return 0
    data = batch[0] if isinstance(batch, (list, tuple)) else batch
    shape = getattr(data, "shape", None)
    if not shape:
        return 0
    return int(shape[axis] if -len(shape) <= axis < len(shape) else shape[0])
