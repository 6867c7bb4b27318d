"""Regression and likelihood metrics: MAE, MSE, RMSE, CrossEntropy,
NegativeLogLikelihood, Perplexity, PearsonCorrelation, Loss (and Torch, Caffe)."""

from __future__ import annotations

import math

import numpy

from ..base import InvalidArgumentError
from .base import EvalMetric, _is_array, alias, check_label_shapes, register, to_numpy

__all__ = [
    "MAE",
    "MSE",
    "RMSE",
    "CrossEntropy",
    "NegativeLogLikelihood",
    "Perplexity",
    "PearsonCorrelation",
    "Loss",
    "Torch",
    "Caffe",
]


def _as_2d(label, pred):
    label, pred = to_numpy(label), to_numpy(pred)
    if label.ndim == 1:
        label = label.reshape(label.shape[0], 1)
    if pred.ndim == 1:
        pred = pred.reshape(pred.shape[0], 1)
    return label, pred


class _PerBatch(EvalMetric):
    """A regression metric averaged over update batches (one instance per array)."""

    def __init__(self, name, output_names=None, label_names=None):
        super().__init__(
            name, output_names=output_names, label_names=label_names, has_global_stats=True
        )

    @staticmethod
    def _batch_value(label, pred):
        raise NotImplementedError

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds, strict=True):
            self._add(float(self._batch_value(*_as_2d(label, pred))), 1)


@register
class MAE(_PerBatch):
    """Mean absolute error (mean over each batch, averaged over batches)."""

    def __init__(self, name="mae", output_names=None, label_names=None):
        super().__init__(name, output_names, label_names)

    @staticmethod
    def _batch_value(label, pred):
        return numpy.abs(label - pred).mean()


@register
class MSE(_PerBatch):
    """Mean squared error (mean over each batch, averaged over batches)."""

    def __init__(self, name="mse", output_names=None, label_names=None):
        super().__init__(name, output_names, label_names)

    @staticmethod
    def _batch_value(label, pred):
        return ((label - pred) ** 2.0).mean()


@register
class RMSE(_PerBatch):
    """Root mean squared error of each batch, averaged over batches."""

    def __init__(self, name="rmse", output_names=None, label_names=None):
        super().__init__(name, output_names, label_names)

    @staticmethod
    def _batch_value(label, pred):
        return numpy.sqrt(((label - pred) ** 2.0).mean())


class _PickedLogLoss(EvalMetric):
    """``-log(pred[i, label[i]] + eps)`` summed, one instance per row."""

    def __init__(self, eps, name, output_names, label_names):
        super().__init__(
            name, eps=eps, output_names=output_names, label_names=label_names, has_global_stats=True
        )
        self.eps = eps

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds, strict=True):
            label, pred = to_numpy(label).ravel(), to_numpy(pred)
            num = pred.shape[0]
            if label.shape[0] != num:
                raise InvalidArgumentError(
                    f"{type(self).__name__}: {label.shape[0]} labels for {num} predictions"
                )
            prob = pred[numpy.arange(num, dtype=numpy.int64), numpy.int64(label)]
            self._add(float((-numpy.log(prob + self.eps)).sum()), num)


@register
@alias("ce")
class CrossEntropy(_PickedLogLoss):
    """Cross entropy of class-probability predictions (N, C) and labels (N,).

    Parameters
    ----------
    eps : float, default 1e-12
    """

    def __init__(self, eps=1e-12, name="cross-entropy", output_names=None, label_names=None):
        super().__init__(eps, name, output_names, label_names)


@register
@alias("nll_loss")
class NegativeLogLikelihood(_PickedLogLoss):
    """Negative log likelihood of class-probability predictions (N, C)."""

    def __init__(self, eps=1e-12, name="nll-loss", output_names=None, label_names=None):
        super().__init__(eps, name, output_names, label_names)


@register
class Perplexity(EvalMetric):
    """``exp`` of the mean negative log probability of the labels.

    Parameters
    ----------
    ignore_label : int or None
        Label value whose positions are not counted.
    axis : int, default -1
        Class axis of the predictions.
    """

    def __init__(
        self, ignore_label, axis=-1, name="perplexity", output_names=None, label_names=None
    ):
        super().__init__(
            name,
            ignore_label=ignore_label,
            output_names=output_names,
            label_names=label_names,
            has_global_stats=True,
        )
        self.ignore_label = ignore_label
        self.axis = axis

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        loss, num = 0.0, 0
        for label, pred in zip(labels, preds, strict=True):
            label, pred = to_numpy(label), to_numpy(pred)
            axis = self.axis % pred.ndim
            if label.size * pred.shape[axis] != pred.size:
                raise InvalidArgumentError(f"shape mismatch: {label.shape} vs. {pred.shape}")
            index = numpy.clip(label.astype("int64"), 0, pred.shape[axis] - 1)
            index = numpy.expand_dims(
                index.reshape(pred.shape[:axis] + pred.shape[axis + 1 :]), axis
            )
            prob = numpy.take_along_axis(pred, index, axis=axis).ravel().astype(numpy.float64)
            if self.ignore_label is not None:
                ignore = (label.ravel() == self.ignore_label).astype(numpy.float64)
                num -= int(ignore.sum())
                prob = prob * (1 - ignore) + ignore
            loss -= float(numpy.log(numpy.maximum(1e-10, prob)).sum())
            num += prob.size
        self._add(loss, num)

    def get(self):
        if self.num_inst == 0:
            return (self.name, float("nan"))
        return (self.name, math.exp(self.sum_metric / self.num_inst))

    def get_global(self):
        if self.global_num_inst == 0:
            return (self.name, float("nan"))
        return (self.name, math.exp(self.global_sum_metric / self.global_num_inst))


@register
@alias("pearsonr")
class PearsonCorrelation(EvalMetric):
    """Pearson correlation of predictions and labels.

    Parameters
    ----------
    average : {'macro', 'micro'}, default 'macro'
        'macro': mean of the per-batch correlations; 'micro': the correlation of
        everything seen since the last reset (streaming moments).
    """

    def __init__(self, name="pearsonr", output_names=None, label_names=None, average="macro"):
        self.average = average
        super().__init__(
            name, output_names=output_names, label_names=label_names, has_global_stats=True
        )

    def reset_micro(self):
        self._sse_p = self._mean_p = self._sse_l = self._mean_l = self._conv = 0.0
        self._pred_nums = self._label_nums = 0

    def reset(self):
        super().reset()
        if self.average == "micro":
            self.reset_micro()

    @staticmethod
    def update_variance(new_values, count, mean, m_2):
        """Streaming (count, mean, sum of squared deviations) after a batch."""
        count += len(new_values)
        delta = new_values - mean
        mean += numpy.sum(delta / count)
        m_2 += numpy.sum(delta * (new_values - mean))
        return count, mean, m_2

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds, strict=True):
            label, pred = to_numpy(label), to_numpy(pred)
            check_label_shapes(label, pred, False, True)
            label = label.ravel().astype(numpy.float64)
            pred = pred.ravel().astype(numpy.float64)
            if self.average == "macro":
                self._add(float(numpy.corrcoef(pred, label)[0, 1]), 1)
                continue
            self.num_inst += 1
            self.global_num_inst += 1
            self._label_nums, self._mean_l, self._sse_l = self.update_variance(
                label, self._label_nums, self._mean_l, self._sse_l
            )
            # co-moment with the updated label mean and the previous pred mean
            self._conv += numpy.sum((label - self._mean_l) * (pred - self._mean_p))
            self._pred_nums, self._mean_p, self._sse_p = self.update_variance(
                pred, self._pred_nums, self._mean_p, self._sse_p
            )

    def get(self):
        if self.num_inst == 0:
            return (self.name, float("nan"))
        if self.average == "macro":
            return (self.name, self.sum_metric / self.num_inst)
        return (self.name, float(self._conv / numpy.sqrt(self._sse_p * self._sse_l)))

    def get_global(self):
        if self.average == "micro":  # one set of streaming moments since reset()
            return self.get()
        return super().get_global()


@register
class Loss(EvalMetric):
    """Mean of the given loss values (labels are ignored)."""

    def __init__(self, name="loss", output_names=None, label_names=None):
        super().__init__(
            name, output_names=output_names, label_names=label_names, has_global_stats=True
        )

    def update(self, _, preds):
        if _is_array(preds):
            preds = [preds]
        for pred in preds:
            pred = to_numpy(pred)
            self._add(float(pred.sum()), pred.size)


@register
class Torch(Loss):
    """Dummy metric for torch criterions (a :class:`Loss`)."""

    def __init__(self, name="torch", output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)


@register
class Caffe(Loss):
    """Dummy metric for caffe criterions (a :class:`Loss`)."""

    def __init__(self, name="caffe", output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)
