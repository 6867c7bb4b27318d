"""``mx.metric``: evaluation metrics (MXNet 1.9.1 semantics), computed on the host.

``update(labels, preds)`` takes lists of (or single) NDArrays / numpy arrays.

Examples
--------
>>> import gluonjax as mx
>>> acc = mx.metric.Accuracy()
>>> acc.update([mx.nd.array([0, 1, 1])], [mx.nd.array([[0.7, 0.3], [0.2, 0.8], [0.9, 0.1]])])
>>> acc.get()
('accuracy', 0.6666666666666666)
"""

from __future__ import annotations

from ._metric.base import (
    CompositeEvalMetric,
    CustomMetric,
    EvalMetric,
    alias,
    check_label_shapes,
    create,
    np,
    register,
)
from ._metric.classification import F1, MCC, PCC, Accuracy, TopKAccuracy
from ._metric.regression import (
    MAE,
    MSE,
    RMSE,
    Caffe,
    CrossEntropy,
    Loss,
    NegativeLogLikelihood,
    PearsonCorrelation,
    Perplexity,
    Torch,
)

__all__ = [
    "EvalMetric",
    "CompositeEvalMetric",
    "CustomMetric",
    "Accuracy",
    "TopKAccuracy",
    "F1",
    "MCC",
    "PCC",
    "Perplexity",
    "MAE",
    "MSE",
    "RMSE",
    "CrossEntropy",
    "NegativeLogLikelihood",
    "PearsonCorrelation",
    "Loss",
    "Torch",
    "Caffe",
    "create",
    "register",
    "alias",
    "np",
    "check_label_shapes",
]
