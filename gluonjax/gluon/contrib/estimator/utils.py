"""Checks shared by the Estimator and its event handlers (MXNet's ``estimator.utils``)."""

from __future__ import annotations

from ....base import InvalidArgumentError
from ....metric import Accuracy, CompositeEvalMetric, EvalMetric
from ...loss import SoftmaxCrossEntropyLoss

__all__ = []


def _check_metrics(metrics):
    """``metrics`` as a list of EvalMetric (a CompositeEvalMetric is flattened).

    Parameters
    ----------
    metrics : EvalMetric, list of EvalMetric or None

    Returns
    -------
    list of EvalMetric
    """
    if isinstance(metrics, CompositeEvalMetric):
        return [m for metric in metrics.metrics for m in _check_metrics(metric)]
    if isinstance(metrics, EvalMetric):
        return [metrics]
    if metrics is None:
        return []
    if isinstance(metrics, (list, tuple)) and all(isinstance(m, EvalMetric) for m in metrics):
        return list(metrics)
    raise InvalidArgumentError(
        f"metrics must be an EvalMetric or a list of EvalMetric (mx.metric.Accuracy(), ...), "
        f"got {metrics!r} of type {type(metrics).__name__}; refer to mxnet.metric.EvalMetric"
    )


def _check_handler_metric_ref(handler, known_metrics):
    """Every metric a handler refers to (its ``metrics``/``monitor``-like attributes)
    must be one of the estimator's training or validation metric objects."""
    for attribute in dir(handler):
        if "metric" not in attribute and "monitor" not in attribute:
            continue
        reference = getattr(handler, attribute, None)
        if isinstance(reference, EvalMetric):
            _check_metric_known(handler, reference, known_metrics)
        elif isinstance(reference, (list, tuple)):
            for metric in reference:
                if isinstance(metric, EvalMetric):
                    _check_metric_known(handler, metric, known_metrics)


def _check_metric_known(handler, metric, known_metrics):
    if not any(metric is m for m in known_metrics):
        raise InvalidArgumentError(
            f"Event handler {type(handler).__name__} refers to a metric instance "
            f"{metric.name!r} ({type(metric).__name__}) outside of the known training and "
            f"validation metrics, so nothing would update it. Please use the metrics from "
            f"estimator.train_metrics and estimator.val_metrics instead."
        )


def _suggest_metric_for_loss(loss):
    """``Accuracy()`` for a softmax cross-entropy loss, else None."""
    if isinstance(loss, SoftmaxCrossEntropyLoss):
        return Accuracy()
    return None
