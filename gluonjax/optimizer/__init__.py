"""``mx.optimizer``: optimizers by MXNet name, with MXNet 1.x's update rules."""

from . import contrib
from .adam import LAMB, Adam, Adamax, AdamW, Nadam
from .adaptive import FTML, AdaDelta, AdaGrad, Ftrl, RMSProp
from .misc import DCASGD, LARS, SGLD, Signum, Test
from .optimizer import Optimizer, create, preprocess_grad, register
from .sgd import NAG, SGD
from .updater import Updater, get_updater

__all__ = [
    "contrib",
    "Optimizer",
    "create",
    "register",
    "preprocess_grad",
    "SGD",
    "NAG",
    "Adam",
    "AdamW",
    "Adamax",
    "Nadam",
    "LAMB",
    "AdaGrad",
    "AdaDelta",
    "RMSProp",
    "Ftrl",
    "FTML",
    "Signum",
    "LARS",
    "SGLD",
    "DCASGD",
    "Test",
    "Updater",
    "get_updater",
]
