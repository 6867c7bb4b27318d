"""Margin, embedding and count losses of ``gluon.loss``."""

from __future__ import annotations

import math

from ..base import InvalidArgumentError
from ._loss_core import KLDivLoss, Loss, _apply_weighting, _reshape_like

__all__ = [
    "HingeLoss",
    "SquaredHingeLoss",
    "LogisticLoss",
    "TripletLoss",
    "PoissonNLLLoss",
    "CosineEmbeddingLoss",
    "SDMLLoss",
]


class HingeLoss(Loss):
    """``max(0, margin - pred * label)`` with labels in {-1, 1}.

    Parameters
    ----------
    margin : float, default 1
    """

    def __init__(self, margin=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = _reshape_like(F, label, pred)
        loss = F.relu(self._margin - pred * label)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return self._reduce(F, loss)


class SquaredHingeLoss(Loss):
    """``max(0, margin - pred * label)**2`` with labels in {-1, 1}."""

    def __init__(self, margin=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = _reshape_like(F, label, pred)
        loss = F.square(F.relu(self._margin - pred * label))
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return self._reduce(F, loss)


class LogisticLoss(Loss):
    """``log(1 + exp(-pred * label))``.

    Parameters
    ----------
    label_format : {'signed', 'binary'}, default 'signed'
        Labels in {-1, 1} or in {0, 1}.
    """

    def __init__(self, weight=None, batch_axis=0, label_format="signed", **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        if label_format not in ("signed", "binary"):
            raise InvalidArgumentError(
                f"label_format can only be signed or binary, got {label_format!r}"
            )
        self._label_format = label_format

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = _reshape_like(F, label, pred)
        if self._label_format == "signed":
            label = (label + 1.0) / 2.0
        loss = F.relu(pred) - pred * label + F.Activation(-F.abs(pred), act_type="softrelu")
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return self._reduce(F, loss)


class TripletLoss(Loss):
    """``max(0, |pos - pred|^2 - |neg - pred|^2 + margin)``, the squares summed over
    non-batch axes.

    Parameters
    ----------
    margin : float, default 1

    Inputs: ``pred``, ``positive``, ``negative`` (reshaped to pred). Output: (batch,).
    """

    def __init__(self, margin=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F, pred, positive, negative):
        positive = _reshape_like(F, positive, pred)
        negative = _reshape_like(F, negative, pred)
        loss = F.sum(
            F.square(positive - pred) - F.square(negative - pred),
            axis=self._batch_axis,
            exclude=True,
        )
        loss = F.relu(loss + self._margin)
        return _apply_weighting(F, loss, self._weight, None)


class PoissonNLLLoss(Loss):
    """Negative log likelihood of ``target`` under a Poisson of rate ``pred``.

    Parameters
    ----------
    from_logits : bool, default True
        ``pred`` is the log rate: ``exp(pred) - target * pred``; else
        ``pred - target * log(pred + epsilon)``.
    compute_full : bool, default False
        Add the Stirling term ``t log t - t + log(2 pi t) / 2`` where ``target > 1``.

    Inputs: ``pred``, ``target``, optional ``sample_weight`` and ``epsilon``
    (default 1e-8). Output: the mean over *all* elements, shape (1,), as in MXNet.
    """

    def __init__(self, weight=None, from_logits=True, batch_axis=0, compute_full=False, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_logits = from_logits
        self._compute_full = compute_full

    def hybrid_forward(self, F, pred, target, sample_weight=None, epsilon=1e-08):
        target = _reshape_like(F, target, pred)
        if self._from_logits:
            loss = F.exp(pred) - target * pred
        else:
            loss = pred - target * F.log(pred + epsilon)
        if self._compute_full:
            stirling = target * F.log(target) - target + 0.5 * F.log(2 * math.pi * target)
            loss = loss + stirling * (target > 1)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.mean(loss)


class CosineEmbeddingLoss(Loss):
    """``1 - cos(x1, x2)`` for label 1, ``max(0, cos(x1, x2) - margin)`` for label -1.

    Parameters
    ----------
    margin : float, default 0

    Inputs: ``input1``, ``input2`` of shape (batch, dim), ``label`` (batch,) in
    {-1, 1}, optional ``sample_weight``. Output: shape (batch, 1), as in MXNet.
    """

    def __init__(self, weight=None, batch_axis=0, margin=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F, input1, input2, label, sample_weight=None):
        input1 = _reshape_like(F, input1, input2)
        label = F.reshape(label, shape=(-1, 1))
        cos_sim = self._cosine_similarity(F, input1, input2)
        loss = (1 - cos_sim) * (label == 1) + F.relu((label == -1) * (cos_sim - self._margin))
        return _apply_weighting(F, loss, self._weight, sample_weight)

    @staticmethod
    def _cosine_similarity(F, x, y, axis=-1):
        x_norm = F.reshape(F.norm(x, axis=axis), shape=(-1, 1))
        y_norm = F.reshape(F.norm(y, axis=axis), shape=(-1, 1))
        x_dot_y = F.reshape(F.sum(x * y, axis=axis), shape=(-1, 1))
        # max(|x||y|, 1e-12) without a constant input: relu(a - e) + e
        return x_dot_y / (F.relu(x_norm * y_norm - 1e-12) + 1e-12)


class SDMLLoss(Loss):
    """Smoothed deep metric learning loss on a batch of aligned pairs (x1[i], x2[i]).

    The KL divergence between the softmax of negative squared distances and a
    smoothed identity (``1 - smoothing_parameter`` on the diagonal). ``weight`` is
    accepted but, as in MXNet 1.9.1, not applied.

    Parameters
    ----------
    smoothing_parameter : float, default 0.3

    Inputs: ``x1``, ``x2`` of shape (batch, dim). Output: (batch,).
    """

    def __init__(self, smoothing_parameter=0.3, weight=1.0, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        with self.name_scope():
            self.kl_loss = KLDivLoss(from_logits=True)
        self.smoothing_parameter = smoothing_parameter

    def _compute_distances(self, F, x1, x2):
        diff = F.broadcast_sub(F.expand_dims(x1, axis=1), F.expand_dims(x2, axis=0))
        return F.sum(F.square(diff), axis=2)

    def _compute_labels(self, F, x1):
        batch_size = x1.shape[0]
        gold = F.one_hot(F.arange_like(x1, axis=0), depth=batch_size)
        s = self.smoothing_parameter
        return gold * (1 - s) + (1 - gold) * (s / (batch_size - 1))

    def hybrid_forward(self, F, x1, x2):
        if len(x1.shape) != 2 or x1.shape != x2.shape:
            raise InvalidArgumentError(
                f"SDMLLoss needs x1, x2 of one (batch, dim) shape, got {x1.shape} and {x2.shape}"
            )
        labels = self._compute_labels(F, x1)
        log_probabilities = F.log_softmax(-self._compute_distances(F, x1, x2), axis=1)
        return self.kl_loss(log_probabilities, labels)
