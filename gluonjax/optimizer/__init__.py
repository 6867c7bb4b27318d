"""``mx.optimizer``: optimizers by MXNet name, with MXNet 1.x's update rules."""

from .optimizer import Optimizer, create, preprocess_grad, register
from .sgd import NAG, SGD

__all__ = ["Optimizer", "create", "register", "preprocess_grad", "SGD", "NAG"]
