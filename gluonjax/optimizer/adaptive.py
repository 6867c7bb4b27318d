"""Per-coordinate adaptive optimizers with MXNet 1.x's rules: AdaGrad, AdaDelta,
RMSProp, Ftrl, FTML.

RMSProp, Ftrl and FTML run the rules of MXNet's ``rmsprop_update``,
``rmspropalex_update``, ``ftrl_update`` and ``ftml_update``
(``gluonjax._ops.defs.optimizer_ops``). AdaGrad and AdaDelta (no MXNet dense op) are
backed by optax's ``scale_by_rss`` and ``scale_by_adadelta``, which compute exactly
MXNet's normalisation (epsilon inside the square root).
"""

from __future__ import annotations

import optax

from .._ops.defs.optimizer_ops import (
    cast_like,
    ftml_rule,
    ftrl_rule,
    rmsprop_rule,
    rmspropalex_rule,
)
from ._util import zeros_state
from .optimizer import Optimizer, register

__all__ = ["AdaGrad", "AdaDelta", "RMSProp", "Ftrl", "FTML"]


@register
class AdaGrad(Optimizer):
    """AdaGrad: ``h += g**2``; ``weight -= lr * (g/sqrt(h + eps) + wd*weight)``.

    ``g = clip(rescale_grad*grad)`` (weight decay outside the normalisation).
    Backed by ``optax.scale_by_rss(initial_accumulator_value=0, eps=eps)``.

    Parameters
    ----------
    eps : float, default 1e-7
        Added to the history under the square root (stored as ``float_stable_eps``).
    """

    def __init__(self, eps=1e-7, **kwargs):
        super().__init__(**kwargs)
        self.float_stable_eps = eps

    _mx_single = True  # MXNet: the history array itself

    def create_state(self, index, weight):
        return zeros_state(weight, 1)

    def step(self, weight, grad, state, lr, wd, t, key):
        tx = optax.scale_by_rss(initial_accumulator_value=0.0, eps=self.float_stable_eps)
        div, new = tx.update(grad, optax.ScaleByRssState(sum_of_squares=state[0]))
        return weight - lr * (div + wd * weight), (new.sum_of_squares,)


@register
class AdaDelta(Optimizer):
    """AdaDelta (MXNet's rule; the learning rate is not used).

    ``g = clip(rescale_grad*grad)``; ``acc_g = rho*acc_g + (1-rho)*g**2``;
    ``delta = sqrt(acc_delta + epsilon)/sqrt(acc_g + epsilon) * g``;
    ``acc_delta = rho*acc_delta + (1-rho)*delta**2``; ``weight -= delta + wd*weight``.
    Backed by ``optax.scale_by_adadelta(rho, epsilon)``.

    Parameters
    ----------
    rho : float, default 0.9
    epsilon : float, default 1e-5
    """

    def __init__(self, rho=0.90, epsilon=1e-5, **kwargs):
        super().__init__(**kwargs)
        self.rho, self.epsilon = rho, epsilon

    def create_state(self, index, weight):
        return zeros_state(weight, 2)

    def step(self, weight, grad, state, lr, wd, t, key):
        tx = optax.scale_by_adadelta(rho=self.rho, eps=self.epsilon)
        delta, new = tx.update(grad, optax.ScaleByAdaDeltaState(e_g=state[0], e_x=state[1]))
        return weight - (delta + wd * weight), (new.e_g, new.e_x)


@register
class RMSProp(Optimizer):
    """RMSProp, Tieleman & Hinton's or (``centered=True``) Graves's version.

    ``g = clip(rescale_grad*grad + wd*weight)``; ``n = gamma1*n + (1-gamma1)*g**2``.
    Plain: ``weight -= lr * g/sqrt(n + epsilon)`` (``rmsprop_update``).
    Centered: ``gm = gamma1*gm + (1-gamma1)*g``;
    ``delta = gamma2*delta - lr * g/sqrt(n - gm**2 + epsilon)`` (``rmspropalex_update``,
    the learning rate inside the momentum buffer); ``weight += delta``. Then weights are
    clipped to ``±clip_weights``.

    Parameters
    ----------
    learning_rate : float, default 0.001
    gamma1 : float, default 0.9
    gamma2 : float, default 0.9
        Momentum (centered version only).
    epsilon : float, default 1e-8
    centered : bool, default False
    clip_weights : float, optional
    """

    clip_in_step = True

    def __init__(
        self,
        learning_rate=0.001,
        gamma1=0.9,
        gamma2=0.9,
        epsilon=1e-8,
        centered=False,
        clip_weights=None,
        **kwargs,
    ):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.gamma1, self.gamma2, self.epsilon = gamma1, gamma2, epsilon
        self.centered, self.clip_weights = centered, clip_weights

    def create_state(self, index, weight):
        return zeros_state(weight, 3 if self.centered else 1)

    def step(self, weight, grad, state, lr, wd, t, key):
        g1, g2, eps = cast_like(weight, self.gamma1, self.gamma2, self.epsilon)
        clips = (self._clip_gradient, self.clip_weights or None)
        if not self.centered:
            weight, n = rmsprop_rule(weight, grad, *state, lr, wd, g1, eps, *clips)
            return weight, (n,)
        weight, *state = rmspropalex_rule(weight, grad, *state, lr, wd, g1, g2, eps, *clips)
        return weight, tuple(state)


@register
class Ftrl(Optimizer):
    """FTRL-proximal (MXNet's ``ftrl_update``).

    ``g = clip(rescale_grad*grad)``;
    ``z += g - (sqrt(n + g**2) - sqrt(n)) * weight / lr``; ``n += g**2``;
    ``weight = (sign(z)*lamda1 - z) / ((beta + sqrt(n))/lr + wd) * (|z| > lamda1)``.

    Parameters
    ----------
    lamda1 : float, default 0.01
        L1 regularisation strength.
    learning_rate : float, default 0.1
    beta : float, default 1
    """

    # MXNet's ftrl_update on a row_sparse gradient updates only its stored rows (always:
    # Ftrl has no lazy_update argument)
    lazy_rows = True
    lazy_update = True

    def __init__(self, lamda1=0.01, learning_rate=0.1, beta=1, **kwargs):
        super().__init__(**kwargs)
        self.lamda1, self.beta = lamda1, beta
        self.lr = learning_rate

    def create_state(self, index, weight):
        return zeros_state(weight, 2)

    def step(self, weight, grad, state, lr, wd, t, key):
        weight, *state = ftrl_rule(weight, grad, *state, lr, wd, self.lamda1, self.beta)
        return weight, tuple(state)


@register
class FTML(Optimizer):
    """FTML, Follow The Moving Leader (MXNet's ``ftml_update``).

    ``g = clip(rescale_grad*grad + wd*weight)``; ``v = beta2*v + (1-beta2)*g**2``;
    ``d_t = (1-beta1**t)/lr * (sqrt(v/(1-beta2**t)) + epsilon)``;
    ``z = beta1*z + (1-beta1)*g - (d_t - beta1*d)*weight``; ``weight = -z/d_t``.
    ``1 - beta**t`` is computed in plain float32 as MXNet's kernel does (its rounding
    for ``beta2`` near 1 is visible at float32 tolerance).

    Parameters
    ----------
    beta1 : float, default 0.6
    beta2 : float, default 0.999
    epsilon : float, default 1e-8
    """

    clip_in_step = True

    def __init__(self, beta1=0.6, beta2=0.999, epsilon=1e-8, **kwargs):
        super().__init__(**kwargs)
        self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon

    def create_state(self, index, weight):
        return zeros_state(weight, 3)  # d, v, z

    def step(self, weight, grad, state, lr, wd, t, key):
        hyper = cast_like(weight, self.beta1, self.beta2, self.epsilon, t)
        weight, *state = ftml_rule(weight, grad, *state, lr, wd, *hyper, self._clip_gradient)
        return weight, tuple(state)
