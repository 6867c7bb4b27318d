"""Normalization layers: BatchNorm, LayerNorm, InstanceNorm, GroupNorm."""

from __future__ import annotations

import numpy as np

from ..hybrid import HybridBlock

__all__ = ["BatchNorm", "BatchNormReLU", "LayerNorm", "InstanceNorm", "GroupNorm"]


class _Norm(HybridBlock):
    _auto_jit = True

    def _norm_params(self, in_channels, center, scale, beta_init, gamma_init, shape=None):
        shape = shape if shape is not None else (in_channels,)
        self.gamma = self.params.get(
            "gamma",
            grad_req="write" if scale else "null",
            shape=shape,
            init=gamma_init,
            allow_deferred_init=True,
            differentiable=scale,
        )
        self.beta = self.params.get(
            "beta",
            grad_req="write" if center else "null",
            shape=shape,
            init=beta_init,
            allow_deferred_init=True,
            differentiable=center,
        )


class BatchNorm(_Norm):
    """Batch normalization; running statistics update in training mode.

    Parameters
    ----------
    axis : int, default 1
        The channel axis.
    momentum : float, default 0.9
    epsilon : float, default 1e-5
    center, scale : bool
        Learn beta / gamma.
    use_global_stats : bool
        Always use the running statistics.
    in_channels : int, default 0 (inferred)
    """

    def __init__(
        self,
        axis=1,
        momentum=0.9,
        epsilon=1e-5,
        center=True,
        scale=True,
        use_global_stats=False,
        beta_initializer="zeros",
        gamma_initializer="ones",
        running_mean_initializer="zeros",
        running_variance_initializer="ones",
        in_channels=0,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self._kwargs = {
            "axis": axis,
            "eps": epsilon,
            "momentum": momentum,
            "fix_gamma": not scale,
            "use_global_stats": use_global_stats,
        }
        self.in_channels = in_channels
        with self.name_scope():
            self._norm_params(in_channels, center, scale, beta_initializer, gamma_initializer)
            self.running_mean = self.params.get(
                "running_mean",
                grad_req="null",
                shape=(in_channels,),
                init=running_mean_initializer,
                allow_deferred_init=True,
                differentiable=False,
            )
            self.running_var = self.params.get(
                "running_var",
                grad_req="null",
                shape=(in_channels,),
                init=running_variance_initializer,
                allow_deferred_init=True,
                differentiable=False,
            )

    def cast(self, dtype):
        if np.dtype(dtype).name == "float16":
            dtype = "float32"
        super().cast(dtype)

    def hybrid_forward(self, F, x, gamma, beta, running_mean, running_var):
        return F.BatchNorm(x, gamma, beta, running_mean, running_var, name="fwd", **self._kwargs)

    def __repr__(self):
        k = self._kwargs
        ch = self.gamma.shape[0] if self.gamma.shape and self.gamma.shape[0] else None
        return (
            f"{type(self).__name__}(axis={k['axis']}, eps={k['eps']}, momentum={k['momentum']}, "
            f"fix_gamma={k['fix_gamma']}, use_global_stats={k['use_global_stats']}, "
            f"in_channels={ch})"
        )


class BatchNormReLU(BatchNorm):
    """BatchNorm followed by ReLU, as one op (``_contrib_BatchNormWithReLU``).

    Parameters are those of :class:`BatchNorm`; the running statistics are the
    BatchNorm's (before the ReLU).

    Examples
    --------
    >>> import gluonjax as mx
    >>> bn = mx.gluon.nn.BatchNormReLU(in_channels=2); bn.initialize()
    >>> bn(mx.nd.array([[-1.0, 2.0]])).asnumpy().tolist()
    [[0.0, 1.9999899864196777]]
    """

    def hybrid_forward(self, F, x, gamma, beta, running_mean, running_var):
        return F.contrib.BatchNormWithReLU(
            x, gamma, beta, running_mean, running_var, name="fwd", **self._kwargs
        )


class LayerNorm(_Norm):
    """Layer normalization over ``axis`` (default the last)."""

    def __init__(
        self,
        axis=-1,
        epsilon=1e-5,
        center=True,
        scale=True,
        beta_initializer="zeros",
        gamma_initializer="ones",
        in_channels=0,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self._kwargs = {"eps": epsilon, "axis": axis}
        self._desc = {"center": center, "scale": scale}
        with self.name_scope():
            self._norm_params(in_channels, center, scale, beta_initializer, gamma_initializer)

    def hybrid_forward(self, F, x, gamma, beta):
        return F.LayerNorm(x, gamma, beta, **self._kwargs)

    def __repr__(self):
        return _norm_repr(self, ("eps", "axis"), ("center", "scale"), in_channels=True)


class InstanceNorm(_Norm):
    """Instance normalization (per sample and channel)."""

    def __init__(
        self,
        axis=1,
        epsilon=1e-5,
        center=True,
        scale=False,
        beta_initializer="zeros",
        gamma_initializer="ones",
        in_channels=0,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self._kwargs = {"eps": epsilon}
        self._axis = axis
        self._desc = {"axis": axis, "center": center, "scale": scale}
        with self.name_scope():
            self._norm_params(in_channels, center, scale, beta_initializer, gamma_initializer)

    def hybrid_forward(self, F, x, gamma, beta):
        if self._axis == 1:
            return F.InstanceNorm(x, gamma, beta, name="fwd", **self._kwargs)
        x = x.swapaxes(1, self._axis)
        return F.InstanceNorm(x, gamma, beta, name="fwd", **self._kwargs).swapaxes(1, self._axis)

    def __repr__(self):
        return _norm_repr(self, ("eps",), ("axis", "center", "scale"), in_channels=True)


class GroupNorm(_Norm):
    """Group normalization with ``num_groups`` channel groups."""

    def __init__(
        self,
        num_groups=1,
        epsilon=1e-5,
        center=True,
        scale=True,
        beta_initializer="zeros",
        gamma_initializer="ones",
        in_channels=0,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self._kwargs = {"eps": epsilon, "num_groups": num_groups}
        self._desc = {"center": center, "scale": scale}
        with self.name_scope():
            self._norm_params(in_channels, center, scale, beta_initializer, gamma_initializer)

    def hybrid_forward(self, F, x, gamma, beta):
        return F.GroupNorm(x, gamma, beta, name="fwd", **self._kwargs)

    def __repr__(self):
        return _norm_repr(self, ("eps", "num_groups"), ("center", "scale"), in_channels=False)


def _norm_repr(block, kw_keys, desc_keys, in_channels):
    """MXNet's repr of the normalization layers: ``LayerNorm(eps=1e-05, axis=-1, ...)``."""
    parts = [f"{k}={block._kwargs[k]}" for k in kw_keys]
    parts += [f"{k}={block._desc[k]}" for k in desc_keys]
    if in_channels:
        shape = block.gamma.shape
        parts.append(f"in_channels={shape[0] if shape else 0}")
    return f"{type(block).__name__}({', '.join(parts)})"
