"""``Estimator.fit`` and ``Estimator.evaluate``: the event loops."""

from __future__ import annotations

import numbers

from ....base import InvalidArgumentError
from ...data import DataLoader
from . import _fused_path

__all__ = []


def _check_loader(data, what):
    if not isinstance(data, DataLoader):
        raise InvalidArgumentError(
            f"Estimator: {what} must be a gluon.data.DataLoader, got {type(data).__name__}. "
            f"Estimator only supports Gluon DataLoader input; wrap a DataIter or NDArrays "
            f"in one, e.g. gluon.data.DataLoader(gluon.data.ArrayDataset(x, y), batch_size=32)"
        )


def _check_count(value, what):
    if value is None:
        return None
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 0:
        raise InvalidArgumentError(
            f"Estimator.fit: {what} must be a positive integer, got {value!r}"
        )
    return int(value) or None


class _Loops:
    """``fit`` and ``evaluate`` of :class:`Estimator`."""

    def evaluate(self, val_data, batch_axis=0, event_handlers=None):
        """Evaluate the model on validation data, batch by batch
        (``batch_processor.evaluate_batch``), updating ``val_metrics``.

        Parameters
        ----------
        val_data : DataLoader
            Batches of ``(data, label)``.
        batch_axis : int, default 0
            The axis split over the contexts.
        event_handlers : EventHandler or list of EventHandler, optional
            A MetricHandler and a LoggingHandler of the validation metrics are added
            unless given.
        """
        _check_loader(val_data, "val_data")
        for metric in self.val_metrics:
            metric.reset()
        handlers = self._prepare_default_validation_handlers(event_handlers)
        _, epoch_begin, batch_begin, batch_end, epoch_end, _ = self._categorize_handlers(handlers)
        for handler in epoch_begin:
            handler.epoch_begin(self)
        for batch in val_data:
            for handler in batch_begin:
                handler.batch_begin(self, batch=batch)
            _, label, pred, loss = self.batch_processor.evaluate_batch(self, batch, batch_axis)
            for handler in batch_end:
                handler.batch_end(self, batch=batch, pred=pred, label=label, loss=loss)
        for handler in epoch_end:
            handler.epoch_end(self)

    def fit(self, train_data, val_data=None, epochs=None, event_handlers=None, batches=None,
            batch_axis=0):  # fmt: skip
        """Train for ``epochs`` epochs or ``batches`` batches (exactly one of them).

        Each batch runs ``batch_processor.fit_batch`` then the batch-end handlers (the
        ``GradientUpdateHandler`` applies the update); see the class docstring for the
        fused compiled step.

        Parameters
        ----------
        train_data : DataLoader
            Batches of ``(data, label)``.
        val_data : DataLoader, optional
            Evaluated after every epoch (a ValidationHandler is added unless given).
        epochs : int, optional
        event_handlers : EventHandler or list of EventHandler, optional
            Besides these, a StoppingHandler, GradientUpdateHandler, MetricHandler and
            LoggingHandler are added unless given.
        batches : int, optional
        batch_axis : int, default 0
            The axis split over the contexts.
        """
        _check_loader(train_data, "train_data")
        if val_data is not None:
            _check_loader(val_data, "val_data")
        epochs, batches = _check_count(epochs, "epochs"), _check_count(batches, "batches")
        if (not epochs) == (not batches):
            raise InvalidArgumentError(
                f"Fit only support exactly one type of iteration, train by number of epochs "
                f"or number of batches. Please specify one and only one of: epochs or batches "
                f"(got epochs={epochs!r}, batches={batches!r})."
            )
        self.max_epoch, self.max_batch, self.batch_axis = epochs, batches, batch_axis
        try:
            self._batches_per_epoch = len(train_data)
        except TypeError:
            self._batches_per_epoch = None
        handlers = self._prepare_default_handlers(val_data, event_handlers)
        train_begin, epoch_begin, batch_begin, batch_end, epoch_end, train_end = (
            self._categorize_handlers(handlers)
        )
        fused, message = _fused_path.plan(self, handlers, batch_axis)
        self.training_path = "plain"
        self.logger.info("Training path: %s", message)
        after_update = [h for h in batch_end if fused is None or h is not fused.update_handler]

        for handler in train_begin:
            handler.train_begin(self)
        while True:
            for handler in epoch_begin:
                handler.epoch_begin(self)
            seen = 0
            stop = False
            for batch in train_data:
                seen += 1
                for handler in batch_begin:
                    handler.batch_begin(self, batch=batch)
                out = None
                if fused is not None and fused.ready:
                    out = _fused_path.run_fused(fused, batch, self.logger.info)
                    if out is None:
                        fused = None
                if out is not None:
                    self.training_path = "fused"
                    _, label, pred, loss = out
                    stop = any(
                        [
                            h.batch_end(self, batch=batch, pred=pred, label=label, loss=loss)
                            for h in after_update
                        ]
                    )
                else:
                    data, label, pred, loss = self.batch_processor.fit_batch(
                        self, batch, batch_axis
                    )
                    stop = any(
                        [
                            h.batch_end(self, batch=batch, pred=pred, label=label, loss=loss)
                            for h in batch_end
                        ]
                    )
                    if fused is not None and not fused.ready:
                        reason = fused.check_probe(data, loss, pred)
                        if reason is not None:
                            self.logger.info("Training path: %s; staying on it: %s",
                                             _fused_path.PLAIN, reason)  # fmt: skip
                            fused = None
                if stop:
                    break
            if seen == 0 and not stop:
                raise InvalidArgumentError(
                    "Estimator.fit: train_data yielded no batch in an epoch (an empty "
                    "dataset, or a last_batch='discard' loader with fewer samples than "
                    "batch_size)"
                )
            if any([h.epoch_end(self) for h in epoch_end]):
                break
        for handler in train_end:
            handler.train_end(self)
