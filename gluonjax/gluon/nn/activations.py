"""Activation layers: Activation, LeakyReLU, PReLU, ELU, SELU, GELU, Swish."""

from __future__ import annotations

from ...base import MXNetError
from ..hybrid import HybridBlock

__all__ = ["Activation", "LeakyReLU", "PReLU", "ELU", "SELU", "GELU", "Swish"]


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


class _Leaf(HybridBlock):
    """A parameter-free (or single-parameter) element-wise layer."""

    _auto_jit = True

    def __repr__(self):  # MXNet prints a childless block as 'Name(\n\n)'
        return f"{type(self).__name__}(\n\n)"


class LeakyReLU(_Leaf):
    """``x`` if ``x > 0`` else ``alpha * x``.

    Parameters
    ----------
    alpha : float
        Slope for negative inputs (>= 0).
    """

    def __init__(self, alpha, **kwargs):
        if alpha < 0:
            raise MXNetError(f"Slope coefficient for LeakyReLU must be no less than 0, got {alpha}")
        super().__init__(**kwargs)
        self._alpha = alpha

    def hybrid_forward(self, F, x):
        return F.LeakyReLU(x, act_type="leaky", slope=self._alpha, name="fwd")

    def __repr__(self):
        return f"{type(self).__name__}({self._alpha})"


_CONST_025 = object()  # stands for Constant(0.25), built lazily


class PReLU(_Leaf):
    """Parametric leaky ReLU: ``x`` if ``x > 0`` else ``alpha * x`` with a learned ``alpha``.

    Parameters
    ----------
    alpha_initializer : Initializer, default Constant(0.25)
    in_channels : int, default 1
        Number of slopes: 1 (shared) or one per channel (axis 1).
    """

    def __init__(self, alpha_initializer=_CONST_025, in_channels=1, **kwargs):
        super().__init__(**kwargs)
        if alpha_initializer is _CONST_025:
            from ... import initializer

            alpha_initializer = initializer.Constant(0.25)
        with self.name_scope():
            self.alpha = self.params.get("alpha", shape=(in_channels,), init=alpha_initializer)

    def hybrid_forward(self, F, x, alpha):
        return F.LeakyReLU(x, alpha, act_type="prelu", name="fwd")


class ELU(_Leaf):
    """Exponential linear unit: ``x`` if ``x > 0`` else ``alpha * (exp(x) - 1)``."""

    def __init__(self, alpha=1.0, **kwargs):
        super().__init__(**kwargs)
        self._alpha = alpha

    def hybrid_forward(self, F, x):
        return F.LeakyReLU(x, act_type="elu", slope=self._alpha)


class SELU(_Leaf):
    """Scaled ELU with the fixed constants of Klambauer et al. (2017)."""

    def hybrid_forward(self, F, x):
        return F.LeakyReLU(x, act_type="selu", name="fwd")


class GELU(_Leaf):
    """Gaussian error linear unit ``x * Phi(x)`` (erf form)."""

    def hybrid_forward(self, F, x):
        return F.LeakyReLU(x, act_type="gelu", name="fwd")


class Swish(_Leaf):
    """``x * sigmoid(beta * x)``."""

    def __init__(self, beta=1.0, **kwargs):
        super().__init__(**kwargs)
        self._beta = beta

    def hybrid_forward(self, F, x):
        return x * F.sigmoid(self._beta * x, name="fwd")
