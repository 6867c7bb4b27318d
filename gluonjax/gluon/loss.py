"""``gluon.loss``: losses as HybridBlocks (MXNet 1.9.1 semantics).

Each loss is written with ``F`` ops only, so it runs eagerly, hybridized and
under ``autograd.record()``. Most return the mean over every axis but
``batch_axis`` (shape ``(batch,)``); see each class for the exceptions.

Examples
--------
>>> import gluonjax as mx
>>> loss = mx.gluon.loss.L2Loss()
>>> loss(mx.nd.array([[1., 2.]]), mx.nd.array([[1., 4.]])).asnumpy().tolist()
[1.0]
"""

from __future__ import annotations

import math
import numbers

from ..base import InvalidArgumentError
from .hybrid import HybridBlock

__all__ = [
    "Loss",
    "L2Loss",
    "L1Loss",
    "SigmoidBinaryCrossEntropyLoss",
    "SigmoidBCELoss",
    "SoftmaxCrossEntropyLoss",
    "SoftmaxCELoss",
    "KLDivLoss",
    "CTCLoss",
    "HuberLoss",
    "HingeLoss",
    "SquaredHingeLoss",
    "LogisticLoss",
    "TripletLoss",
    "PoissonNLLLoss",
    "CosineEmbeddingLoss",
    "SDMLLoss",
]


def _apply_weighting(F, loss, weight=None, sample_weight=None):
    """``loss * sample_weight`` (broadcast) ``* weight`` (a python number)."""
    if sample_weight is not None:
        loss = F.broadcast_mul(loss, sample_weight)
    if weight is not None:
        if isinstance(weight, bool) or not isinstance(weight, numbers.Number):
            raise InvalidArgumentError(f"weight must be a number, got {weight!r}")
        loss = loss * weight
    return loss


def _reshape_like(F, x, y):
    """``x`` reshaped to ``y``'s shape (same size)."""
    return F.reshape_like(x, y)


class Loss(HybridBlock):
    """Base class of losses.

    Parameters
    ----------
    weight : float or None
        Global scalar weight of the loss.
    batch_axis : int
        The axis kept by the reduction (the batch axis).

    ``None`` positional inputs (e.g. ``loss(pred, label, None, pos_weight)``) are
    allowed eagerly and hybridized.
    """

    _auto_jit = True  # built-in losses run eagerly as one compiled call

    def __init__(self, weight, batch_axis, **kwargs):
        super().__init__(**kwargs)
        self._weight = weight
        self._batch_axis = batch_axis
        self._none_slots = None
        self._pattern_cache = {}

    _apply_weighting = staticmethod(_apply_weighting)

    def __repr__(self):
        return f"{type(self).__name__}(batch_axis={self._batch_axis}, w={self._weight})"

    def _reduce(self, F, loss):
        return F.mean(loss, axis=self._batch_axis, exclude=True)

    # ---------------------------------------------------------- None inputs while hybridized
    def hybridize(self, active=True, **kwargs):
        self._pattern_cache = {}
        super().hybridize(active, **kwargs)

    def _clear_cached(self):
        self._pattern_cache = {}
        super()._clear_cached()

    def __call__(self, *args, **kwargs):
        for a in args:
            if a is None:
                break
        else:  # no None input (the usual call)
            return super().__call__(*args, **kwargs)
        args = list(args)
        while args and args[-1] is None:
            args.pop()
        if kwargs or not self._active or all(a is not None for a in args):
            return super().__call__(*args, **kwargs)
        # the compiled graph takes arrays only: compile one graph per None pattern
        pattern = tuple(a is None for a in args)
        plain = self._cached
        self._cached = self._pattern_cache.get(pattern)
        self._none_slots = pattern
        try:
            return super().__call__(*[a for a in args if a is not None])
        finally:
            self._pattern_cache[pattern] = self._cached
            self._cached = plain
            self._none_slots = None

    def _traced_forward(self, *args):
        if self._none_slots is None:
            return self.forward(*args)
        it = iter(args)
        full = [None if empty else next(it) for empty in self._none_slots]
        return self.forward(*full)

    def hybrid_forward(self, F, x, *args, **kwargs):
        raise NotImplementedError


class L2Loss(Loss):
    """``weight / 2 * (label - pred)**2``, mean over non-batch axes.

    Inputs: ``pred``, ``label`` (reshaped to pred), optional ``sample_weight``.
    """

    def __init__(self, weight=1.0, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = _reshape_like(F, label, pred)
        loss = F.square(label - pred)
        loss = _apply_weighting(F, loss, self._weight / 2, sample_weight)
        return self._reduce(F, loss)


class L1Loss(Loss):
    """``|label - pred|``, mean over non-batch axes."""

    def __init__(self, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = _reshape_like(F, label, pred)
        loss = F.abs(label - pred)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return self._reduce(F, loss)


class SigmoidBinaryCrossEntropyLoss(Loss):
    """Binary cross entropy of ``sigmoid(pred)`` (or of ``pred`` with ``from_sigmoid``).

    Parameters
    ----------
    from_sigmoid : bool, default False
        ``pred`` is already a probability (else logits, computed stably).

    Inputs: ``pred``, ``label`` (0/1), optional ``sample_weight`` and
    ``pos_weight`` (broadcast with ``label``; weights the positive term).
    """

    def __init__(self, from_sigmoid=False, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_sigmoid = from_sigmoid

    def hybrid_forward(self, F, pred, label, sample_weight=None, pos_weight=None):
        label = _reshape_like(F, label, pred)
        if not self._from_sigmoid:
            softplus = F.Activation(-F.abs(pred), act_type="softrelu")
            if pos_weight is None:
                loss = F.relu(pred) - pred * label + softplus
            else:
                log_weight = F.broadcast_mul(pos_weight - 1, label) + 1
                loss = pred - pred * label + F.broadcast_mul(log_weight, softplus + F.relu(-pred))
        else:
            eps = 1e-12
            pos = F.log(pred + eps) * label
            if pos_weight is not None:
                pos = F.broadcast_mul(pos, pos_weight)
            loss = -(pos + F.log(1.0 - pred + eps) * (1.0 - label))
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return self._reduce(F, loss)


SigmoidBCELoss = SigmoidBinaryCrossEntropyLoss


class SoftmaxCrossEntropyLoss(Loss):
    """Softmax cross entropy along ``axis``.

    Parameters
    ----------
    axis : int, default -1
        The class axis.
    sparse_label : bool, default True
        ``label`` holds class indices (pred's shape without ``axis``), else a
        distribution of pred's shape.
    from_logits : bool, default False
        ``pred`` is already a log-softmax.
    """

    def __init__(
        self, axis=-1, sparse_label=True, from_logits=False, weight=None, batch_axis=0, **kwargs
    ):
        super().__init__(weight, batch_axis, **kwargs)
        self._axis = axis
        self._sparse_label = sparse_label
        self._from_logits = from_logits

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        if not self._from_logits:
            pred = F.log_softmax(pred, axis=self._axis)
        if self._sparse_label:
            loss = -F.pick(pred, label, axis=self._axis, keepdims=True)
        else:
            label = _reshape_like(F, label, pred)
            loss = -F.sum(pred * label, axis=self._axis, keepdims=True)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return self._reduce(F, loss)


SoftmaxCELoss = SoftmaxCrossEntropyLoss


class KLDivLoss(Loss):
    """``label * (log(label) - pred)``, summed over non-batch axes.

    Parameters
    ----------
    from_logits : bool, default True
        ``pred`` is a log-probability; else a log-softmax along ``axis`` is applied.
    axis : int, default -1
    """

    def __init__(self, from_logits=True, axis=-1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_logits = from_logits
        self._axis = axis

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        if not self._from_logits:
            pred = F.log_softmax(pred, axis=self._axis)
        loss = label * (F.log(label + 1e-12) - pred)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.sum(loss, axis=self._batch_axis, exclude=True)


class HuberLoss(Loss):
    """Smoothed L1: ``|d| - rho/2`` where ``|d| > rho``, else ``d**2 / (2 rho)``.

    Parameters
    ----------
    rho : float, default 1
    """

    def __init__(self, rho=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._rho = rho

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = _reshape_like(F, label, pred)
        loss = F.abs(label - pred)
        loss = F.where(loss > self._rho, loss - 0.5 * self._rho, (0.5 / self._rho) * F.square(loss))
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return self._reduce(F, loss)


# ---------------------------------------------------------------- margin, embedding, count
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


# ---------------------------------------------------------------- sequences
class CTCLoss(Loss):
    """Connectionist Temporal Classification loss (blank = the last class).

    Parameters
    ----------
    layout : {'NTC', 'TNC'}, default 'NTC'
        Layout of ``pred`` (unnormalized activations; softmax is applied inside).
    label_layout : {'NT', 'TN'}, default 'NT'
        Layout of ``label``: class ids, padded with -1 unless ``label_lengths``.

    Inputs: ``pred``, ``label``, optional ``pred_lengths``, ``label_lengths``
    (batch,) and ``sample_weight``. Output: (batch,).
    """

    def __init__(self, layout="NTC", label_layout="NT", weight=None, **kwargs):
        if layout not in ("NTC", "TNC"):
            raise InvalidArgumentError(
                f"Only 'NTC' and 'TNC' layouts for pred are supported, got {layout!r}"
            )
        if label_layout not in ("NT", "TN"):
            raise InvalidArgumentError(
                f"Only 'NT' and 'TN' layouts for label are supported, got {label_layout!r}"
            )
        self._layout = layout
        self._label_layout = label_layout
        super().__init__(weight, label_layout.find("N"), **kwargs)

    def hybrid_forward(
        self, F, pred, label, pred_lengths=None, label_lengths=None, sample_weight=None
    ):
        if self._layout == "NTC":
            pred = F.swapaxes(pred, dim1=0, dim2=1)
        if self._batch_axis == 1:
            label = F.swapaxes(label, dim1=0, dim2=1)
        args = [a for a in (pred_lengths, label_lengths) if a is not None]
        loss = F.CTCLoss(
            pred,
            label,
            *args,
            use_data_lengths=pred_lengths is not None,
            use_label_lengths=label_lengths is not None,
            blank_label="last",
        )
        return _apply_weighting(F, loss, self._weight, sample_weight)
