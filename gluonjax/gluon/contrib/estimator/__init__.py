"""``gluon.contrib.estimator``: the Keras-like ``Estimator.fit`` loop of MXNet 1.9.1,
its event handlers and batch processor."""

from . import batch_processor, estimator, event_handler
from .batch_processor import *  # noqa: F403
from .batch_processor import __all__ as _bp_all
from .estimator import *  # noqa: F403
from .estimator import __all__ as _est_all
from .event_handler import *  # noqa: F403
from .event_handler import __all__ as _eh_all

__all__ = ["batch_processor", "estimator", "event_handler", *_est_all, *_eh_all, *_bp_all]
