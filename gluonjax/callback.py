"""``mx.callback``: callbacks for ``Module.fit`` (MXNet 1.9.1 log formats).

Batch-end callbacks receive a :class:`gluonjax.model.BatchEndParam`; epoch-end
callbacks receive ``(epoch, symbol, arg_params, aux_params)``. Messages go
through :mod:`logging` (``logging.info``), so they can be silenced or redirected.
"""

from __future__ import annotations

import logging
import math
import time

__all__ = [
    "do_checkpoint",
    "module_checkpoint",
    "log_train_metric",
    "Speedometer",
    "ProgressBar",
    "LogValidationMetricsCallback",
]


def module_checkpoint(mod, prefix, period=1, save_optimizer_states=False):
    """Epoch-end callback: ``mod.save_checkpoint(prefix, epoch + 1)`` every ``period`` epochs."""
    period = max(1, int(period))

    def _callback(iter_no, sym=None, arg=None, aux=None):
        if (iter_no + 1) % period == 0:
            mod.save_checkpoint(prefix, iter_no + 1, save_optimizer_states)

    return _callback


def do_checkpoint(prefix, period=1):
    """Epoch-end callback writing ``prefix-symbol.json`` and ``prefix-%04d.params``
    (epoch numbered from 1) every ``period`` epochs."""
    from .model import save_checkpoint

    period = max(1, int(period))

    def _callback(iter_no, sym, arg, aux):
        if (iter_no + 1) % period == 0:
            save_checkpoint(prefix, iter_no + 1, sym, arg, aux)

    return _callback


def log_train_metric(period, auto_reset=False):
    """Batch-end callback logging ``Iter[e] Batch[n] Train-name=value`` every ``period``."""

    def _callback(param):
        if param.nbatch % period != 0 or param.eval_metric is None:
            return
        for name, value in param.eval_metric.get_name_value():
            logging.info("Iter[%d] Batch[%d] Train-%s=%f", param.epoch, param.nbatch, name, value)
        if auto_reset:
            param.eval_metric.reset_local()

    return _callback


class Speedometer:
    """Logs the training speed and the metric every ``frequent`` batches.

    ``Epoch[0] Batch [50-100]\\tSpeed: 1234.56 samples/sec\\taccuracy=0.900000``
    (with ``auto_reset`` the metric covers the last ``frequent`` batches and the
    range is shown; without, ``Batch [0-100]`` and the metric since the epoch began).

    Parameters
    ----------
    batch_size : int
    frequent : int, default 50
    auto_reset : bool, default True
        Reset the metric's local statistics after each log line.
    """

    def __init__(self, batch_size, frequent=50, auto_reset=True):
        self.batch_size = batch_size
        self.frequent = frequent
        self.auto_reset = auto_reset
        self.init = False
        self.tic = 0.0
        self.last_count = 0

    def __call__(self, param):
        count = param.nbatch
        if self.last_count > count:  # a new epoch began
            self.init = False
        self.last_count = count
        if not self.init:
            self.init = True
            self.tic = time.time()
            return
        if count % self.frequent != 0:
            return
        elapsed = time.time() - self.tic
        speed = self.frequent * self.batch_size / elapsed if elapsed > 0 else float("inf")
        metric = param.eval_metric
        if metric is None:
            logging.info("Iter[%d] Batch [%d]\tSpeed: %.2f samples/sec", param.epoch, count, speed)
        else:
            pairs = metric.get_name_value()
            fields = "".join("\t%s=%f" for _ in pairs)
            values = [x for pair in pairs for x in pair]
            if self.auto_reset:
                metric.reset_local()
                logging.info(
                    "Epoch[%d] Batch [%d-%d]\tSpeed: %.2f samples/sec" + fields,
                    param.epoch,
                    count - self.frequent,
                    count,
                    speed,
                    *values,
                )
            else:
                logging.info(
                    "Epoch[%d] Batch [0-%d]\tSpeed: %.2f samples/sec" + fields,
                    param.epoch,
                    count,
                    speed,
                    *values,
                )
        self.tic = time.time()


class ProgressBar:
    """Logs a text progress bar ``[===-------] 30%`` of ``nbatch / total``."""

    def __init__(self, total, length=80):
        self.bar_len = length
        self.total = total

    def __call__(self, param):
        frac = param.nbatch / float(self.total)
        filled = int(round(self.bar_len * frac))
        bar = "=" * filled + "-" * (self.bar_len - filled)
        logging.info("[%s] %s%s\r", bar, math.ceil(100.0 * frac), "%")


class LogValidationMetricsCallback:
    """Score-end callback logging ``Epoch[e] Validation-name=value``."""

    def __call__(self, param):
        if not param.eval_metric:
            return
        for name, value in param.eval_metric.get_name_value():
            logging.info("Epoch[%d] Validation-%s=%f", param.epoch, name, value)
