"""Loss base class and the element-wise / classification losses of ``gluon.loss``.

Every loss is a :class:`HybridBlock` written only with ``F`` ops, so it runs
eagerly (``F = mx.nd``), hybridized (``F = mx.sym``) and under
``autograd.record()``. Unless noted, the result is the mean over every axis but
``batch_axis`` (shape ``(batch,)``).
"""

from __future__ import annotations

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
    "HuberLoss",
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
