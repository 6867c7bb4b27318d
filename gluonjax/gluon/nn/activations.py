"""Activation layers: Activation, LeakyReLU, PReLU, ELU, SELU, GELU, Swish."""

from __future__ import annotations

from ..hybrid import HybridBlock

__all__ = ["Activation"]


class Activation(HybridBlock):
    """Apply ``act_type`` ('relu', 'sigmoid', 'tanh', 'softrelu', 'softsign')."""

    _auto_jit = True

    def __init__(self, activation, **kwargs):
        self._act_type = activation
        super().__init__(**kwargs)

    def _alias(self):
        return self._act_type

    def hybrid_forward(self, F, x):
        return F.Activation(x, act_type=self._act_type, name="fwd")

    def __repr__(self):
        return f"{type(self).__name__}({self._act_type})"
