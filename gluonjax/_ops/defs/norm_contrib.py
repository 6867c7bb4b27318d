"""Batch normalization variants: ``_contrib_SyncBatchNorm``, ``_contrib_BatchNormWithReLU``
and the legacy ``BatchNorm_v1``.

All are :func:`norm.batch_norm_stats` with a twist: SyncBatchNorm takes its batch
statistics over every device's part of the batch, BatchNormWithReLU applies a ReLU
to the normalized output (MXNet fuses the two for oneDNN), BatchNorm_v1 normalizes
over axis 1 and outputs the mean and the variance (not the inverse std).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ..registry import Attr, register
from .norm import _bn_infer, _mean_var, batch_norm, batch_norm_stats

_BN_INPUTS = ("data", "gamma", "beta", "moving_mean", "moving_var")
_BN_AUX = ("moving_mean", "moving_var")


def cross_device_mean_var(data, axes, ndev, key):
    """The batch statistics of a SyncBatchNorm: over every device of every worker.

    Within one process, the step over several devices (``Trainer.compile_step``, see
    ``gluon._mesh``) sees the whole batch as ONE array sharded over the devices, so
    the statistics of ``data`` already are the whole batch's (XLA reduces across the
    devices). In a job of several processes (``python -m gluonjax.launch``) each
    worker holds its part of the global batch: the per-channel sums, element counts
    and then the sums of squared deviations from the global mean are summed over the
    workers (:func:`~gluonjax._collectives.traced_allsum`, differentiable),
    giving the mean and biased variance of the global batch, as BatchNorm on it
    (two passes, as :func:`norm._mean_var`). ``key`` names the layer, the same on
    every worker.
    """
    if jax.process_count() == 1:
        return _mean_var(data, axes)
    from ..._collectives import traced_allsum

    x32 = data.astype(jnp.promote_types(data.dtype, jnp.float32))
    count = np.array(int(np.prod([data.shape[a] for a in axes], dtype=np.int64)), np.int32)
    total, n = traced_allsum((jnp.sum(x32, axis=axes), jnp.asarray(count)), f"{key}/sum")
    n = n.astype(x32.dtype)
    mean = total / n
    dev = jnp.sum(jnp.square(x32 - jnp.expand_dims(mean, axes)), axis=axes)
    (sq,) = traced_allsum((dev,), f"{key}/sq")
    return mean, sq / n


def _bn_attrs(with_axis):
    attrs = {
        "eps": Attr("float", 1e-3),
        "momentum": Attr("float", 0.9),
        "fix_gamma": Attr("bool", True),
        "use_global_stats": Attr("bool", False),
        "output_mean_var": Attr("bool", False),
    }
    if with_axis:
        attrs.update(
            axis=Attr("int", 1),
            cudnn_off=Attr("bool", False),
            min_calib_range=Attr("float?", None),
            max_calib_range=Attr("float?", None),
        )
    return attrs


@register(
    "_contrib_SyncBatchNorm",
    inputs=_BN_INPUTS,
    aux=_BN_AUX,
    attrs={**_bn_attrs(False), "ndev": Attr("int", 1), "key": Attr("str")},
    mode=True,
    num_outputs=3,
    visible_outputs=lambda a: 3 if a["output_mean_var"] else 1,
    output_names=("output", "mean", "var"),
    infer_args=lambda a, s: _bn_infer({"axis": 1}, s),
)
def sync_batch_norm(
    data,
    gamma,
    beta,
    moving_mean,
    moving_var,
    *,
    eps,
    momentum,
    fix_gamma,
    use_global_stats,
    output_mean_var,
    ndev,
    key,
    _train=False,
):
    """Batch normalization over axis 1 with statistics shared by ``ndev`` devices.

    On one device of one process it is ``BatchNorm(axis=1)``; see
    :func:`cross_device_mean_var` for the statistics over several devices and
    workers. ``key`` identifies the layer across devices and workers.
    """
    if ndev < 1:
        raise ValueError(f"ndev must be at least 1, got {ndev}")
    sync = None
    if ndev > 1 or jax.process_count() > 1:

        def sync(data, axes):
            return cross_device_mean_var(data, axes, ndev, key)

    return batch_norm(
        data,
        gamma,
        beta,
        moving_mean,
        moving_var,
        eps=eps,
        momentum=momentum,
        fix_gamma=fix_gamma,
        use_global_stats=use_global_stats,
        output_mean_var=output_mean_var,
        axis=1,
        cudnn_off=False,
        min_calib_range=None,
        max_calib_range=None,
        _train=_train,
        **({"_sync": sync} if sync is not None else {}),
    )


@register(
    "_contrib_BatchNormWithReLU",
    inputs=_BN_INPUTS,
    aux=_BN_AUX,
    attrs=_bn_attrs(True),
    mode=True,
    num_outputs=3,
    visible_outputs=lambda a: 3 if a["output_mean_var"] else 1,
    output_names=("output", "mean", "var"),
    infer_args=_bn_infer,
)
def batch_norm_relu(data, gamma, beta, moving_mean, moving_var, *, _train=False, **attrs):
    """``relu(BatchNorm(...))``: the same attributes, statistics and updates as BatchNorm."""
    (out, mean, inv), new_aux = batch_norm(
        data, gamma, beta, moving_mean, moving_var, _train=_train, **attrs
    )
    return (jnp.where(out > 0, out, 0), mean, inv), new_aux  # gradient 0 at 0, as MXNet


def _dtype_param(data):
    """MXNet keeps BatchNorm's statistics in float32 for float16 data."""
    return jnp.float32 if data.dtype == jnp.float16 else data.dtype


@register(
    "BatchNorm_v1",
    inputs=_BN_INPUTS,
    aux=_BN_AUX,
    attrs=_bn_attrs(False),
    mode=True,
    num_outputs=3,
    visible_outputs=lambda a: 3 if a["output_mean_var"] else 1,
    output_names=("output", "mean", "var"),
    infer_args=lambda a, s: _bn_infer({"axis": 1}, s),
)
def batch_norm_v1(
    data, gamma, beta, moving_mean, moving_var, *, output_mean_var, _train=False, **attrs
):
    """MXNet's legacy batch normalization: ``BatchNorm`` over axis 1.

    The same normalization, gradients and moving-average update as ``BatchNorm(axis=1)``
    (MXNet updates the moving statistics in the backward pass, gluonjax in the training
    forward, as ``BatchNorm``). The extra outputs are the mean and the biased variance
    used (batch statistics in training, else the moving ones), in float32 for float16
    data; they pass no gradient back.

    Examples
    --------
    >>> import gluonjax as mx
    >>> x = mx.nd.array([[1., 2.], [3., 6.]])
    >>> g, b = mx.nd.ones((2,)), mx.nd.zeros((2,))
    >>> out, mean, var = mx.nd.BatchNorm_v1(x, g, b, mx.nd.zeros((2,)), mx.nd.ones((2,)),
    ...                                     eps=0.0, output_mean_var=True)
    >>> out.asnumpy()
    array([[1., 2.],
           [3., 6.]], dtype=float32)
    >>> var.asnumpy()
    array([1., 1.], dtype=float32)
    """
    if data.ndim < 2:
        raise ValueError(f"data must have at least 2 dims (N, C, ...), got shape {data.shape}")
    (out, mean, var, _inv), new_aux = batch_norm_stats(
        data,
        gamma,
        beta,
        moving_mean,
        moving_var,
        axis=1,
        _train=_train,
        op="BatchNorm_v1",
        **attrs,
    )
    dt = _dtype_param(data)
    stats = (jax.lax.stop_gradient(mean).astype(dt), jax.lax.stop_gradient(var).astype(dt))
    return (out, *stats), new_aux
