"""Classification metrics: Accuracy, TopKAccuracy, F1, MCC, PCC."""

from __future__ import annotations

import math

import numpy

from ..base import InvalidArgumentError
from .base import EvalMetric, alias, check_label_shapes, register, to_numpy

__all__ = ["Accuracy", "TopKAccuracy", "F1", "MCC", "PCC"]


@register
@alias("acc")
class Accuracy(EvalMetric):
    """Fraction of correct predictions.

    Parameters
    ----------
    axis : int, default 1
        Class axis of predictions: a prediction whose shape differs from its
        label's is reduced with ``argmax`` along it.
    """

    def __init__(self, axis=1, name="accuracy", output_names=None, label_names=None):
        super().__init__(
            name,
            axis=axis,
            output_names=output_names,
            label_names=label_names,
            has_global_stats=True,
        )
        self.axis = axis

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds, strict=True):
            label, pred = to_numpy(label), to_numpy(pred)
            if pred.shape != label.shape:
                pred = numpy.argmax(pred, axis=self.axis)
            pred = pred.astype("int32").ravel()
            label = label.astype("int32").ravel()
            check_label_shapes(label, pred)
            self._add(int((pred == label).sum()), len(pred))


@register
@alias("top_k_accuracy", "top_k_acc")
class TopKAccuracy(EvalMetric):
    """Fraction of labels among the ``top_k`` highest-scored classes.

    Parameters
    ----------
    top_k : int, default 1 (must be > 1; use Accuracy for 1)
    """

    def __init__(self, top_k=1, name="top_k_accuracy", output_names=None, label_names=None):
        super().__init__(
            name,
            top_k=top_k,
            output_names=output_names,
            label_names=label_names,
            has_global_stats=True,
        )
        self.top_k = top_k
        if self.top_k <= 1:
            raise InvalidArgumentError("Please use Accuracy if top_k is no more than 1")
        self.name += f"_{self.top_k}"

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds, strict=True):
            pred = to_numpy(pred).astype("float32")
            if pred.ndim > 2:
                raise InvalidArgumentError("Predictions should be no more than 2 dims")
            label = to_numpy(label).astype("int32")
            k = min(pred.shape[-1], self.top_k)
            order = numpy.argpartition(pred, -k, axis=-1)
            check_label_shapes(label, order)
            if order.ndim == 1:
                correct = int((order.ravel() == label.ravel()).sum())
            else:
                top = order[:, -k:]
                correct = int((top == label.reshape(-1, 1)).sum())
            self._add(correct, order.shape[0])


class _BinaryStats:
    """Confusion counts of a binary classifier, local and global."""

    _FIELDS = ("true_positives", "false_positives", "false_negatives", "true_negatives")

    def __init__(self):
        self.reset_stats()

    def update_binary_stats(self, label, pred):
        pred = to_numpy(pred)
        label = to_numpy(label).astype("int32")
        check_label_shapes(label, pred)
        if len(numpy.unique(label)) > 2:
            raise InvalidArgumentError(
                "binary metrics (F1, MCC) only support binary classification; "
                f"labels hold {numpy.unique(label).tolist()}"
            )
        pred_true = numpy.argmax(pred, axis=1) == 1
        label_true = label.ravel() == 1
        counts = (
            (pred_true & label_true).sum(),
            (pred_true & ~label_true).sum(),
            (~pred_true & label_true).sum(),
            (~pred_true & ~label_true).sum(),
        )
        for field, n in zip(self._FIELDS, counts, strict=True):
            setattr(self, field, getattr(self, field) + int(n))
            setattr(self, "global_" + field, getattr(self, "global_" + field) + int(n))

    def _get(self, use_global):
        prefix = "global_" if use_global else ""
        return [float(getattr(self, prefix + f)) for f in self._FIELDS]

    def _fscore(self, use_global):
        tp, fp, fn, _ = self._get(use_global)
        precision = tp / (tp + fp) if tp + fp > 0 else 0.0
        recall = tp / (tp + fn) if tp + fn > 0 else 0.0
        if precision + recall > 0:
            return 2 * precision * recall / (precision + recall)
        return 0.0

    fscore = property(lambda self: self._fscore(False))
    global_fscore = property(lambda self: self._fscore(True))
    total_examples = property(lambda self: int(sum(self._get(False))))
    global_total_examples = property(lambda self: int(sum(self._get(True))))

    def matthewscc(self, use_global=False):
        tp, fp, fn, tn = self._get(use_global)
        if tp + fp + fn + tn == 0:
            return 0.0
        denom = 1.0
        for t in (tp + fp, tp + fn, tn + fp, tn + fn):
            if t != 0:
                denom *= t
        return (tp * tn - fp * fn) / math.sqrt(denom)

    def local_reset_stats(self):
        for f in self._FIELDS:
            setattr(self, f, 0)

    def reset_stats(self):
        for f in self._FIELDS:
            setattr(self, f, 0)
            setattr(self, "global_" + f, 0)


class _BinaryMetric(EvalMetric):
    """F1 / MCC: 'macro' averages per-update scores, 'micro' scores all counts."""

    def __init__(self, name, output_names, label_names, average):
        self.average = average
        self.metrics = _BinaryStats()
        super().__init__(
            name, output_names=output_names, label_names=label_names, has_global_stats=True
        )

    def _score(self, use_global):
        raise NotImplementedError

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds, strict=True):
            self.metrics.update_binary_stats(label, pred)
        if self.average == "macro":
            self.sum_metric += self._score(False)
            self.global_sum_metric += self._score(True)
            self.num_inst += 1
            self.global_num_inst += 1
            self.metrics.reset_stats()
        else:
            self.sum_metric = self._score(False) * self.metrics.total_examples
            self.global_sum_metric = self._score(True) * self.metrics.global_total_examples
            self.num_inst = self.metrics.total_examples
            self.global_num_inst = self.metrics.global_total_examples

    def reset(self):
        super().reset()
        self.metrics.reset_stats()

    def reset_local(self):
        super().reset_local()
        self.metrics.local_reset_stats()


@register
class F1(_BinaryMetric):
    """F1 score of a binary classifier (class 1 positive; preds (N, 2) scores).

    Parameters
    ----------
    average : {'macro', 'micro'}, default 'macro'
    """

    def __init__(self, name="f1", output_names=None, label_names=None, average="macro"):
        super().__init__(name, output_names, label_names, average)

    def _score(self, use_global):
        return self.metrics._fscore(use_global)


@register
class MCC(_BinaryMetric):
    """Matthews correlation coefficient of a binary classifier.

    Parameters
    ----------
    average : {'macro', 'micro'}, default 'macro'
    """

    def __init__(self, name="mcc", output_names=None, label_names=None, average="macro"):
        super().__init__(name, output_names, label_names, average)

    @property
    def _average(self):
        return self.average

    def _score(self, use_global):
        return self.metrics.matthewscc(use_global)


@register
class PCC(EvalMetric):
    """Multi-class Matthews correlation from a confusion matrix that grows with
    the largest class seen."""

    def __init__(self, name="pcc", output_names=None, label_names=None, has_global_stats=True):
        self.k = 2
        super().__init__(
            name=name,
            output_names=output_names,
            label_names=label_names,
            has_global_stats=has_global_stats,
        )

    def _grow(self, inc):
        self.lcm = numpy.pad(self.lcm, ((0, inc), (0, inc)))
        self.gcm = numpy.pad(self.gcm, ((0, inc), (0, inc)))
        self.k += inc

    @staticmethod
    def _calc_mcc(cmat):
        n = cmat.sum()
        x, y = cmat.sum(axis=1), cmat.sum(axis=0)
        cov_xx, cov_yy = numpy.sum(x * (n - x)), numpy.sum(y * (n - y))
        if cov_xx == 0 or cov_yy == 0:
            return float("nan")
        cov_xy = numpy.sum(cmat.diagonal() * n - x * y)
        return cov_xy / (cov_xx * cov_yy) ** 0.5

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds, strict=True):
            label = to_numpy(label).astype("int32")
            pred = to_numpy(pred)
            pred = pred.argmax(axis=1) if pred.shape != label.shape else pred.astype("int32")
            n = max(pred.max(), label.max())
            if n >= self.k:
                self._grow(int(n) + 1 - self.k)
            bcm = numpy.zeros((self.k, self.k))
            numpy.add.at(bcm, (pred.ravel(), label.ravel()), 1)
            self.lcm += bcm
            self.gcm += bcm
        self.num_inst += 1
        self.global_num_inst += 1

    sum_metric = property(
        lambda self: self._calc_mcc(self.lcm) * self.num_inst, lambda self, v: None
    )
    global_sum_metric = property(
        lambda self: self._calc_mcc(self.gcm) * self.global_num_inst, lambda self, v: None
    )

    def reset(self):
        self.global_num_inst = 0.0
        self.gcm = numpy.zeros((self.k, self.k))
        self.reset_local()

    def reset_local(self):
        self.num_inst = 0.0
        self.lcm = numpy.zeros((self.k, self.k))
