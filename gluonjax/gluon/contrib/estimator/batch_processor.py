"""``BatchProcessor``: how the Estimator trains and evaluates one batch (MXNet 1.9.1's
``gluon.contrib.estimator.batch_processor``)."""

from __future__ import annotations

from .... import autograd
from ...utils import split_and_load

__all__ = ["BatchProcessor"]


class BatchProcessor:
    """The default ``fit_batch`` / ``evaluate_batch`` of an Estimator; subclass it and
    override them (or pass any object with both methods) to customize a step.

    The default training step records the forward, runs the backward and leaves the
    update to the ``GradientUpdateHandler``.
    """

    def __init__(self):
        pass

    def _get_data_and_label(self, batch, ctx, batch_axis=0):
        data = split_and_load(batch[0], ctx_list=ctx, batch_axis=batch_axis)
        label = split_and_load(batch[1], ctx_list=ctx, batch_axis=batch_axis)
        return data, label

    def evaluate_batch(self, estimator, val_batch, batch_axis=0):
        """Evaluate ``estimator.val_net`` on a batch of validation data.

        Parameters
        ----------
        estimator : Estimator
        val_batch : tuple
            ``(data, label)`` from the validation data loader.
        batch_axis : int, default 0
            The axis split over the estimator's contexts.

        Returns
        -------
        data, label, pred, loss : lists of NDArray, one per context
        """
        data, label = self._get_data_and_label(val_batch, estimator.context, batch_axis)
        pred = [estimator.val_net(x) for x in data]
        loss = [estimator.val_loss(y_hat, y) for y_hat, y in zip(pred, label)]
        return data, label, pred, loss

    def fit_batch(self, estimator, train_batch, batch_axis=0):
        """Forward and backward of ``estimator.net`` on a batch of training data.

        Parameters
        ----------
        estimator : Estimator
        train_batch : tuple
            ``(data, label)`` from the training data loader.
        batch_axis : int, default 0
            The axis split over the estimator's contexts (``split_and_load``).

        Returns
        -------
        data, label, pred, loss : lists of NDArray, one per context
        """
        data, label = self._get_data_and_label(train_batch, estimator.context, batch_axis)
        with autograd.record():
            pred = [estimator.net(x) for x in data]
            loss = [estimator.loss(y_hat, y) for y_hat, y in zip(pred, label)]
        for lo in loss:
            lo.backward()
        return data, label, pred, loss
