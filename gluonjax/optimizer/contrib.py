"""Contrib optimizers (``mx.optimizer.contrib``): ``GroupAdaGrad``.

Its rule is ``_contrib_group_adagrad_update``'s (``gluonjax._ops.defs.optimizer_contrib``),
applied like every optimizer's: inside the one compiled update of a step, or eagerly by
``update``.
"""

from __future__ import annotations

from .._ops.defs.optimizer_contrib import group_adagrad_rule
from ..base import InvalidArgumentError
from ._util import full_like
from .optimizer import Optimizer, register

__all__ = ["GroupAdaGrad"]


@register
class GroupAdaGrad(Optimizer):
    """AdaGrad with one learning rate per row of a 2-D weight.

    ``g = clip(rescale_grad*grad)``; ``history += mean(g**2, axis=1, keepdims=True)``;
    ``weight -= lr * g / sqrt(history + eps)``. The state is ``history``, of shape
    ``(rows, 1)``. With a row_sparse gradient only its rows change (the others get a zero
    gradient, which leaves weight and history as they are). Weight decay is not supported.

    Parameters
    ----------
    eps : float, default 1e-5
        Added to the history under the square root (stored as ``float_stable_eps``).

    Examples
    --------
    >>> import gluonjax as mx
    >>> opt = mx.optimizer.contrib.GroupAdaGrad(learning_rate=0.5, eps=0.0)
    >>> w, g = mx.nd.ones((2, 2)), mx.nd.ones((2, 2))
    >>> state = opt.create_state(0, w)
    >>> opt.update(0, w, g, state)
    >>> w.asnumpy().tolist(), state.asnumpy().tolist()
    ([[0.5, 0.5], [0.5, 0.5]], [[1.0], [1.0]])
    """

    _mx_single = True  # MXNet: the history array itself

    def __init__(self, eps=1e-5, **kwargs):
        super().__init__(**kwargs)
        self.float_stable_eps = eps

    def create_state(self, index, weight):
        if len(weight.shape) != 2:
            raise InvalidArgumentError(
                f"GroupAdaGrad: weight {self.idx2name.get(index, index)!r} has shape "
                f"{tuple(weight.shape)}; GroupAdaGrad updates 2-D weights only"
            )
        if self._get_wd(index) != 0:
            raise InvalidArgumentError(
                f"GroupAdaGrad: weight decay is not supported (weight "
                f"{self.idx2name.get(index, index)!r} has wd {self._get_wd(index)}); use wd=0"
            )
        return (full_like(weight, 0.0, (weight.shape[0], 1)),)

    def step(self, weight, grad, state, lr, wd, t, key):
        new, history = group_adagrad_rule(weight, grad, state[0], lr, self.float_stable_eps)
        return new, (history,)
