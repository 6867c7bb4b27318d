"""SGD and NAG with MXNet 1.x's update rules."""

from __future__ import annotations

import jax.numpy as jnp

from .optimizer import Optimizer, register

__all__ = ["SGD", "NAG"]


@register
class SGD(Optimizer):
    """Stochastic gradient descent, optionally with momentum (MXNet's rule).

    ``mom = momentum * mom - lr * (grad + wd * weight); weight += mom``; without
    momentum ``weight -= lr * (grad + wd * weight)``. The learning rate sits
    inside the momentum buffer (unlike ``optax.sgd``), so a changing lr matches MXNet.

    Parameters
    ----------
    momentum : float, default 0
    lazy_update : bool
        Accepted for compatibility (dense arrays only).
    """

    def __init__(self, momentum=0.0, lazy_update=True, **kwargs):
        super().__init__(**kwargs)
        self.momentum = momentum
        self.lazy_update = lazy_update

    def create_state(self, index, weight):
        return (jnp.zeros_like(weight),) if self.momentum != 0.0 else ()

    def step(self, weight, grad, state, lr, wd, t, key):
        g = grad + wd * weight
        if self.momentum == 0.0:
            return weight - lr * g, ()
        mom = self.momentum * state[0] - lr * g
        return weight + mom, (mom,)


@register
class NAG(Optimizer):
    """Nesterov accelerated gradient (MXNet 1.x's formulation)."""

    def __init__(self, momentum=0.0, **kwargs):
        super().__init__(**kwargs)
        self.momentum = momentum

    def create_state(self, index, weight):
        return (jnp.zeros_like(weight),) if self.momentum != 0.0 else ()

    def step(self, weight, grad, state, lr, wd, t, key):
        g = grad + wd * weight
        if self.momentum == 0.0:
            return weight - lr * g, ()
        mom = self.momentum * state[0] + g
        return weight - lr * (g + self.momentum * mom), (mom,)
