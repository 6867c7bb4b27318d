"""``mx.contrib.svrg_optimization``: stochastic variance-reduced gradient (SVRG) training
of a symbolic Module: :class:`~.svrg_module.SVRGModule` and its optimizer wrapper
:class:`~.svrg_optimizer._SVRGOptimizer`."""

from . import svrg_module, svrg_optimizer
from .svrg_module import SVRGModule

__all__ = ["svrg_module", "svrg_optimizer", "SVRGModule"]
