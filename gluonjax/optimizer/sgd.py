"""SGD and NAG with MXNet 1.x's update rules (those of ``sgd_update``, ``sgd_mom_update``
and ``nag_mom_update``)."""

from __future__ import annotations

from .._ops.defs.optimizer_ops import cast_like, nag_rule, sgd_mom_rule, sgd_rule
from ._util import full_like
from .optimizer import Optimizer, register

__all__ = ["SGD", "NAG"]


@register
class SGD(Optimizer):
    """Stochastic gradient descent, optionally with momentum (MXNet's rule).

    ``mom = momentum*mom - lr*wd*weight - lr*grad; weight += mom``; without
    momentum ``weight = (1 - lr*wd)*weight - lr*grad``. The learning rate sits
    inside the momentum buffer (unlike ``optax.sgd``), so a changing lr matches MXNet.

    Parameters
    ----------
    momentum : float, default 0
    lazy_update : bool
        With a row_sparse gradient, update only its stored rows (as MXNet).
    """

    lazy_rows = True
    _mx_single = True  # MXNet: the momentum array itself (None without momentum)
    _mp_state_first = True  # MXNet: (momentum, weight32)

    def __init__(self, momentum=0.0, lazy_update=True, **kwargs):
        super().__init__(**kwargs)
        self.momentum = momentum
        self.lazy_update = lazy_update

    def create_state(self, index, weight):
        return (full_like(weight),) if self.momentum != 0.0 else ()

    def step(self, weight, grad, state, lr, wd, t, key):
        if self.momentum == 0.0:
            return sgd_rule(weight, grad, lr, wd), ()
        (m,) = cast_like(weight, self.momentum)  # a C float in MXNet's kernel
        weight, mom = sgd_mom_rule(weight, grad, state[0], lr, wd, m)
        return weight, (mom,)


@register
class NAG(Optimizer):
    """Nesterov accelerated gradient (MXNet 1.9.1's ``nag_mom_update`` as the optimizer runs it).

    ``g = grad + wd*weight``; ``mom = momentum*mom - lr*g``;
    ``weight += momentum*mom - lr*g``. The learning rate sits inside the momentum
    buffer, so a changing lr matches MXNet. The optimizer runs the op in place
    (``out=weight``) and the kernel reads the weight again when storing the
    momentum, so the stored momentum uses the *updated* weight in its decay term:
    ``mom = momentum*mom_old - lr*(grad + wd*new_weight)``; reproduced here.

    Parameters
    ----------
    momentum : float, default 0
    """

    _mx_single = True
    _mp_state_first = True

    def __init__(self, momentum=0.0, **kwargs):
        super().__init__(**kwargs)
        self.momentum = momentum

    def create_state(self, index, weight):
        return (full_like(weight),) if self.momentum != 0.0 else ()

    def step(self, weight, grad, state, lr, wd, t, key):
        if self.momentum == 0.0:
            return sgd_rule(weight, grad, lr, wd), ()
        (m,) = cast_like(weight, self.momentum)
        weight, mom = nag_rule(weight, grad, state[0], lr, wd, m, reread=True)
        return weight, (mom,)
