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

from ._loss_core import (
    HuberLoss,
    KLDivLoss,
    L1Loss,
    L2Loss,
    Loss,
    SigmoidBCELoss,
    SigmoidBinaryCrossEntropyLoss,
    SoftmaxCELoss,
    SoftmaxCrossEntropyLoss,
    _apply_weighting,
    _reshape_like,
)
from ._loss_ctc import CTCLoss
from ._loss_more import (
    CosineEmbeddingLoss,
    HingeLoss,
    LogisticLoss,
    PoissonNLLLoss,
    SDMLLoss,
    SquaredHingeLoss,
    TripletLoss,
)

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

_ = (_apply_weighting, _reshape_like)  # re-exported helpers
