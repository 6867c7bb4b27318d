"""Adam-family optimizers with MXNet 1.x's update rules: Adam, AdamW, Adamax, Nadam, LAMB.

Adam, AdamW and LAMB run the rules of MXNet's ``adam_update``, ``_adamw_update`` and
``lamb_update_phase1/2`` (``gluonjax._ops.defs.optimizer_ops``), which differ from optax's
(bias correction folded into the learning rate, epsilon outside the bias-corrected
square root, weight decay added to the gradient before clipping); Adamax uses
``optax.scale_by_adamax``, which computes exactly MXNet's rule; Nadam (no MXNet op) is
written out here.
"""

from __future__ import annotations

import jax.numpy as jnp
import optax

from .._ops.defs.optimizer_ops import (
    adam_rule,
    adamw_rule,
    cast_like,
    clip,
    lamb_phase1_rule,
    lamb_phase2_rule,
)
from ._util import full_like, one_minus_power, power, zeros_state
from .optimizer import Optimizer, register

__all__ = ["Adam", "AdamW", "Adamax", "Nadam", "LAMB"]


def _bias_lr(lr, beta1, beta2, t):
    """``lr * sqrt(1 - beta2**t) / (1 - beta1**t)`` (MXNet's bias correction in the lr)."""
    return lr * jnp.sqrt(one_minus_power(beta2, t)) / one_minus_power(beta1, t)


@register
class Adam(Optimizer):
    """Adam (MXNet's ``adam_update`` with the bias correction folded into lr).

    ``g = clip(rescale_grad*grad + wd*weight)``; ``m = beta1*m + (1-beta1)*g``;
    ``v = beta2*v + (1-beta2)*g**2``; ``lr_t = lr*sqrt(1-beta2**t)/(1-beta1**t)``;
    ``weight -= lr_t * m / (sqrt(v) + epsilon)``.

    Unlike ``optax.adam``, epsilon is added to ``sqrt(v)`` (not to the bias-corrected
    ``sqrt(v_hat)``) and weight decay enters the gradient before clipping. The moment
    coefficients ``1 - beta`` are float32 values, as in MXNet's kernel.

    Parameters
    ----------
    learning_rate : float, default 0.001
    beta1 : float, default 0.9
    beta2 : float, default 0.999
    epsilon : float, default 1e-8
    lazy_update : bool, default True
        With a row_sparse gradient, update only its stored rows (as MXNet).
    """

    clip_in_step = True
    lazy_rows = True

    def __init__(
        self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8, lazy_update=True, **kwargs
    ):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon
        self.lazy_update = lazy_update

    def create_state(self, index, weight):
        return zeros_state(weight, 2)

    def step(self, weight, grad, state, lr, wd, t, key):
        hyper = cast_like(weight, self.beta1, self.beta2, self.epsilon)
        lr = _bias_lr(lr, self.beta1, self.beta2, t)
        weight, *state = adam_rule(weight, grad, *state, lr, wd, *hyper, self._clip_gradient)
        return weight, tuple(state)


@register
class AdamW(Optimizer):
    """Adam with decoupled weight decay (MXNet's ``contrib.adamw_update`` rule).

    MXNet 1.9.1 has no ``AdamW`` optimizer class, only the ``_adamw_update`` op; this
    follows the convention of MXNet 2.0's ``AdamW`` and GluonNLP (which call that op
    with ``lr=1, eta=lr_t``): ``g = clip(rescale_grad*grad)`` (no wd in g);
    moments as in Adam; ``lr_t = lr*sqrt(1-beta2**t)/(1-beta1**t)`` if
    ``correct_bias`` else ``lr``;
    ``weight -= lr_t * (m / (sqrt(v) + epsilon) + wd * weight)``.

    Parameters
    ----------
    learning_rate : float, default 0.001
    beta1 : float, default 0.9
    beta2 : float, default 0.999
    epsilon : float, default 1e-6
    correct_bias : bool, default True
    """

    def __init__(
        self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-6, correct_bias=True, **kwargs
    ):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon
        self.correct_bias = correct_bias

    def create_state(self, index, weight):
        return zeros_state(weight, 2)

    def step(self, weight, grad, state, lr, wd, t, key):
        if self.correct_bias:
            lr = _bias_lr(lr, self.beta1, self.beta2, t)
        hyper = cast_like(weight, self.beta1, self.beta2, self.epsilon)
        weight, *state = adamw_rule(weight, grad, *state, 1.0, lr, wd, *hyper)
        return weight, tuple(state)


@register
class Adamax(Optimizer):
    """AdaMax (Adam with the infinity norm), MXNet's rule via ``optax.scale_by_adamax``.

    ``g = clip(rescale_grad*grad + wd*weight)``; ``m = beta1*m + (1-beta1)*g``;
    ``u = max(beta2*u, |g|)``; ``weight -= lr/(1-beta1**t) * m/u``. optax's transform
    with ``eps=0`` is exactly this; its step count is set from ``t``.

    Parameters
    ----------
    learning_rate : float, default 0.002
    beta1 : float, default 0.9
    beta2 : float, default 0.999
    """

    clip_in_step = True

    def __init__(self, learning_rate=0.002, beta1=0.9, beta2=0.999, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1, self.beta2 = beta1, beta2

    def create_state(self, index, weight):
        return zeros_state(weight, 2)

    def step(self, weight, grad, state, lr, wd, t, key):
        g = clip(grad + wd * weight, self._clip_gradient)
        tx = optax.scale_by_adamax(b1=self.beta1, b2=self.beta2, eps=0.0)
        count = jnp.asarray(t, jnp.int32) - 1
        upd, new = tx.update(g, optax.ScaleByAdamState(count=count, mu=state[0], nu=state[1]))
        return weight - lr * upd, (new.mu, new.nu)


@register
class Nadam(Optimizer):
    """Nesterov Adam (MXNet's rule).

    ``g = clip(rescale_grad*grad + wd*weight)``;
    ``mom_t = beta1*(1 - 0.5*0.96**(t*schedule_decay))``; ``sched *= mom_t``;
    ``m``, ``v`` as in Adam; ``m_bar = (1-mom_t)*g/(1-sched) +
    mom_{t+1}*m/(1-sched*mom_{t+1})``;
    ``weight -= lr * m_bar / (sqrt(v/(1-beta2**t)) + epsilon)``.

    The momentum schedule product is kept per parameter (in the state). MXNet 1.9.1
    keeps one product on the optimizer and multiplies it at every parameter's update,
    so with several parameters its schedule advances once per parameter; both agree
    for a single parameter (or one optimizer per parameter).

    Parameters
    ----------
    learning_rate : float, default 0.001
    beta1 : float, default 0.9
    beta2 : float, default 0.999
    epsilon : float, default 1e-8
    schedule_decay : float, default 0.004
    """

    clip_in_step = True

    def __init__(
        self,
        learning_rate=0.001,
        beta1=0.9,
        beta2=0.999,
        epsilon=1e-8,
        schedule_decay=0.004,
        **kwargs,
    ):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon
        self.schedule_decay = schedule_decay
        self.m_schedule = 1.0

    def create_state(self, index, weight):
        return zeros_state(weight, 2) + (full_like(weight, 1.0, ()),)

    def step(self, weight, grad, state, lr, wd, t, key):
        g = clip(grad + wd * weight, self._clip_gradient)
        mean, var, sched = state
        t = jnp.asarray(t, jnp.float32)
        mom_t = self.beta1 * (1.0 - 0.5 * power(0.96, t * self.schedule_decay))
        mom_t1 = self.beta1 * (1.0 - 0.5 * power(0.96, (t + 1.0) * self.schedule_decay))
        sched = (sched * mom_t).astype(state[2].dtype)
        sched_next = sched * mom_t1
        mean = self.beta1 * mean + (1.0 - self.beta1) * g
        var = self.beta2 * var + (1.0 - self.beta2) * g * g
        g_prime = g / (1.0 - sched)
        m_prime = mean / (1.0 - sched_next)
        v_prime = var / one_minus_power(self.beta2, t)
        m_bar = (1.0 - mom_t) * g_prime + mom_t1 * m_prime
        return weight - lr * m_bar / (jnp.sqrt(v_prime) + self.epsilon), (mean, var, sched)


@register
class LAMB(Optimizer):
    """LAMB (MXNet's ``lamb_update_phase1``/``phase2``).

    ``g = clip(rescale_grad*grad)``; ``m``, ``v`` as in Adam; with ``bias_correction``
    ``m /= 1-beta1**t``, ``v /= 1-beta2**t``; ``u = m/(sqrt(v)+epsilon) + wd*weight``;
    ``r1 = ||weight||`` clipped to ``[lower_bound, upper_bound]`` (where set),
    ``r2 = ||u||``; ``weight -= lr * (r1/r2 if r1 > 0 and r2 > 0 else 1) * u``.
    The bias terms ``1 - beta**t`` are computed in float32, as MXNet's kernel does.

    Parameters
    ----------
    learning_rate : float, default 0.001
    beta1 : float, default 0.9
    beta2 : float, default 0.999
    epsilon : float, default 1e-6
    lower_bound, upper_bound : float, optional
        Bounds for the weight norm ``r1``.
    bias_correction : bool, default True
    """

    def __init__(
        self,
        learning_rate=0.001,
        beta1=0.9,
        beta2=0.999,
        epsilon=1e-6,
        lower_bound=None,
        upper_bound=None,
        bias_correction=True,
        **kwargs,
    ):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon
        self.lower_bound, self.upper_bound = lower_bound, upper_bound
        self.bias_correction = bias_correction

    def create_state(self, index, weight):
        return zeros_state(weight, 2)

    def step(self, weight, grad, state, lr, wd, t, key):
        hyper = cast_like(weight, self.beta1, self.beta2, self.epsilon, t)
        d, *state = lamb_phase1_rule(weight, grad, *state, *hyper, self.bias_correction, wd)
        r1, r2 = jnp.linalg.norm(weight.ravel()), jnp.linalg.norm(d.ravel())
        bounds = (self.lower_bound or -1.0, self.upper_bound or -1.0)  # unset: off
        return lamb_phase2_rule(weight, d, r1, r2, lr, *bounds), tuple(state)
