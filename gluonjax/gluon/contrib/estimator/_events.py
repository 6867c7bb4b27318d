"""The event-handler base classes of the Estimator (one per training event)."""

from __future__ import annotations

import warnings

import numpy as np

from ....base import InvalidArgumentError

__all__ = ["TrainBegin", "TrainEnd", "EpochBegin", "EpochEnd", "BatchBegin", "BatchEnd"]


class EventHandler:
    """Base of every event handler: a handler reacts to the events whose classes it
    derives from (``TrainBegin``, ``EpochEnd``...)."""


def _check_event_handlers(handlers):
    """``handlers`` as a new list of EventHandler (one handler or a list of them)."""
    if isinstance(handlers, EventHandler):
        return [handlers]
    handlers = list(handlers or [])
    bad = [h for h in handlers if not isinstance(h, EventHandler)]
    if bad:
        raise InvalidArgumentError(
            f"handlers must be an EventHandler or a list of EventHandler "
            f"(estimator.event_handler.LoggingHandler(), ...), got {bad[0]!r} of type "
            f"{type(bad[0]).__name__}"
        )
    return handlers


class TrainBegin(EventHandler):
    """Called once before training: ``train_begin(estimator)``."""

    def train_begin(self, estimator, *args, **kwargs):
        pass


class TrainEnd(EventHandler):
    """Called once after training: ``train_end(estimator)``."""

    def train_end(self, estimator, *args, **kwargs):
        pass


class EpochBegin(EventHandler):
    """Called before each epoch: ``epoch_begin(estimator)``."""

    def epoch_begin(self, estimator, *args, **kwargs):
        pass


class EpochEnd(EventHandler):
    """Called after each epoch: ``epoch_end(estimator)``; returning True stops training."""

    def epoch_end(self, estimator, *args, **kwargs):
        return False


class BatchBegin(EventHandler):
    """Called before each batch: ``batch_begin(estimator, batch=batch)``."""

    def batch_begin(self, estimator, *args, **kwargs):
        pass


class BatchEnd(EventHandler):
    """Called after each batch: ``batch_end(estimator, batch=, pred=, label=, loss=)``;
    returning True stops training."""

    def batch_end(self, estimator, *args, **kwargs):
        return False


def _monitor_op(monitor, mode, who):
    """``np.greater`` or ``np.less``: how ``who`` decides that ``monitor`` improved.

    ``mode='auto'`` picks greater for accuracy and F1 metrics and less otherwise (with
    a warning naming the choice); an unknown mode warns and falls back to 'auto'.
    """
    if mode not in ("auto", "min", "max"):
        warnings.warn(
            f"{who} mode {mode!r} is unknown, fallback to auto mode: 'max' for accuracy and "
            f"f1 metrics, 'min' otherwise",
            RuntimeWarning,
            stacklevel=3,
        )
        mode = "auto"
    if mode == "min":
        return np.less
    if mode == "max":
        return np.greater
    name = monitor.get()[0]
    if "acc" in name.lower() or "f1" in name.lower():
        warnings.warn(
            f"`greater` operator will be used to determine if {name} has improved. Please "
            f"specify `mode='min'` to use the `less` operator. Specify `mode='max'` to "
            f"disable this warning.",
            stacklevel=3,
        )
        return np.greater
    warnings.warn(
        f"`less` operator will be used to determine if {name} has improved. Please specify "
        f"`mode='max'` to use the `greater` operator. Specify `mode='min'` to disable this "
        f"warning.",
        stacklevel=3,
    )
    return np.less
