"""Signum, LARS, SGLD, DCASGD and Test with MXNet 1.x's update rules."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .._ops.defs.optimizer_ops import (
    cast_like,
    clip,
    lars_rule,
    sgd_mom_rule,
    sgd_rule,
    signsgd_rule,
    signum_rule,
)
from ..base import MXNetError
from ._util import full_like, zeros_state
from .optimizer import Optimizer, register

__all__ = ["Signum", "LARS", "SGLD", "DCASGD", "Test"]


@register
class Signum(Optimizer):
    """signSGD / Signum (the rules of MXNet's ``signsgd_update`` / ``signum_update``).

    With momentum: ``mom = momentum*mom - (1-momentum)*(g + wd*weight)``;
    ``weight = (1 - lr*wd_lh)*weight + lr*sign(mom)``, where
    ``g = clip(rescale_grad*grad)``. Without: ``weight = (1-lr*wd)*weight - lr*sign(g)``.

    Parameters
    ----------
    learning_rate : float, default 0.01
    momentum : float, default 0.9
    wd_lh : float, default 0
        Decoupled weight decay (momentum > 0 only, as in MXNet).
    """

    _mx_single = True  # MXNet: the momentum array itself (None without momentum)

    def __init__(self, learning_rate=0.01, momentum=0.9, wd_lh=0.0, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        if wd_lh and momentum == 0.0:
            raise MXNetError(
                "Signum: wd_lh needs momentum != 0 (MXNet's signsgd_update has no wd_lh argument)"
            )
        self.momentum, self.wd_lh = momentum, wd_lh

    def create_state(self, index, weight):
        return zeros_state(weight, 1) if self.momentum != 0.0 else ()

    def step(self, weight, grad, state, lr, wd, t, key):
        if self.momentum == 0.0:
            return signsgd_rule(weight, grad, lr, wd), ()
        m, wd_lh = cast_like(weight, self.momentum, self.wd_lh)
        weight, mom = signum_rule(weight, grad, state[0], lr, wd, m, wd_lh)
        return weight, (mom,)


@register
class LARS(Optimizer):
    """LARS: SGD with momentum and a layer-wise learning-rate scale (MXNet's rule).

    ``lr_l = lr * eta*||w||/(||g|| + wd*||w|| + eps)`` when both norms are positive
    (``g = rescale_grad*grad`` before clipping), else ``lr``; parameters whose
    name (``param_idx2name``, else the index) ends in ``gamma``, ``beta`` or ``bias``
    keep ``lr``. Then MXNet's SGD(-momentum) step with ``lr_l`` and the clipped
    gradient. With ``momentum_correction`` the momentum is scaled by
    ``lr_now/lr_previous`` (the previous learning rate is kept in the state, so the
    ratio is per parameter, as in MXNet's aggregated Trainer update).

    Parameters
    ----------
    momentum : float, default 0
    lazy_update : bool, default True
        Accepted for compatibility.
    eta : float, default 0.001
    eps : float, default 0
    momentum_correction : bool, default True
    """

    clip_in_step = True
    _mp_state_first = True

    def __init__(
        self, momentum=0.0, lazy_update=True, eta=0.001, eps=0, momentum_correction=True, **kwargs
    ):
        super().__init__(**kwargs)
        self.momentum, self.lazy_update = momentum, lazy_update
        self.eta, self.eps = eta, eps
        self.momentum_correction = momentum_correction

    def _no_wd_name(self, name):
        return not name.endswith("_weight")

    def _to_mx(self, internal):
        return tuple(internal)  # the state keeps LARS's flags beside the momentum

    def create_state(self, index, weight):
        name = str(self.idx2name.get(index, index))
        use = not (name.endswith("gamma") or name.endswith("beta") or name.endswith("bias"))
        flags = (jnp.asarray(use), jnp.zeros((), jnp.float32))  # use LARS, previous lr
        return (zeros_state(weight, 1) if self.momentum != 0.0 else ()) + flags

    def step(self, weight, grad, state, lr, wd, t, key):
        use, last_lr = state[-2], state[-1]
        w_sq, g_sq = (jnp.sum(jnp.square(x.astype(jnp.float32))) for x in (weight, grad))
        lr_l = jnp.where(use, lars_rule(lr, w_sq, g_sq, wd, self.eta, self.eps), lr)
        g = clip(grad, self._clip_gradient)
        lr = jnp.asarray(lr, jnp.float32)
        if self.momentum == 0.0:
            return sgd_rule(weight, g, lr_l, wd), (use, lr)
        mom = self.momentum
        if self.momentum_correction:
            mom = mom * jnp.where(last_lr != 0, lr / jnp.where(last_lr != 0, last_lr, 1.0), 1.0)
        weight, mom = sgd_mom_rule(weight, g, state[0], lr_l, wd, mom)
        return weight, (mom, use, lr)


@register
class SGLD(Optimizer):
    """Stochastic Gradient Langevin Dynamics (MXNet's rule).

    ``weight += -lr/2 * (g + wd*weight) + N(0, sqrt(lr))`` with
    ``g = clip(rescale_grad*grad)``; the noise uses the step's random key.
    """

    def __init__(self, **kwargs):
        super().__init__(**kwargs)

    def needs_key(self):
        return True

    def step(self, weight, grad, state, lr, wd, t, key):
        noise = jax.random.normal(key, weight.shape, weight.dtype)
        return weight - lr / 2 * (grad + wd * weight) + jnp.sqrt(lr) * noise, ()


@register
class DCASGD(Optimizer):
    """Delay-compensated asynchronous SGD (MXNet's rule).

    ``mom = momentum*mom - lr*(g + wd*w + lamda*g*g*(w - w_prev))`` (``mom`` is
    the fresh step when ``momentum == 0``); ``w_prev = w``; ``w += mom``, with
    ``g = clip(rescale_grad*grad)``. MXNet 1.9.1 fails for ``momentum != 0`` on
    arrays of more than one element (it tests an array's truth value); here the
    momentum rule above is applied.

    Parameters
    ----------
    momentum : float, default 0
    lamda : float, default 0.04
    """

    def __init__(self, momentum=0.0, lamda=0.04, **kwargs):
        super().__init__(**kwargs)
        self.momentum, self.lamda = momentum, lamda
        self.weight_previous = {}

    def _to_mx(self, internal):
        """MXNet's layout: ``(momentum or None, previous weight)``."""
        internal = tuple(internal)
        return internal if len(internal) == 2 else (None,) + internal

    def _to_internal(self, state):
        return tuple(s for s in state if s is not None)

    def create_state(self, index, weight):
        prev = jnp.array(weight, copy=True)
        return ((full_like(weight),) if self.momentum != 0.0 else ()) + (prev,)

    def step(self, weight, grad, state, lr, wd, t, key):
        prev = state[-1]
        step = -lr * (grad + wd * weight + self.lamda * grad * grad * (weight - prev))
        if self.momentum == 0.0:
            return weight + step, (weight,)
        mom = self.momentum * state[0] + step
        return weight + mom, (mom, weight)


@register
class Test(Optimizer):
    """MXNet's ``Test`` optimizer, used by MXNet's own store tests.

    ``weight += rescale_grad * grad`` (no learning rate, no weight decay); the state
    is a copy of the new weight.

    Examples
    --------
    >>> import gluonjax as mx
    >>> o = mx.optimizer.create('test', rescale_grad=2.0)
    >>> w, g = mx.nd.ones((2,)), mx.nd.ones((2,))
    >>> o.update(0, w, g, o.create_state(0, w)); w.asnumpy().tolist()
    [3.0, 3.0]
    """

    __test__ = False  # not a pytest test class

    def create_state(self, index, weight):
        return zeros_state(weight, 1)

    def step(self, weight, grad, state, lr, wd, t, key):
        new = weight + grad
        return new, (new,)
