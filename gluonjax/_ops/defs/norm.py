"""Normalization operators: BatchNorm, LayerNorm, InstanceNorm, GroupNorm, L2Normalization, LRN."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ..registry import Attr, register
from ._bn_train import bn_train
from ._layer_norm import layer_normalize

_NORM_INPUTS = ("data", "gamma", "beta")


def _bcast(v, ndim, axis):
    shape = [1] * ndim
    shape[axis] = -1
    return v.reshape(shape)


def _norm_axis(axis, ndim, op):
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of range for {ndim}-D data")
    return axis % ndim


def _check_vec(name, v, n):
    if tuple(v.shape) != (n,):
        raise ValueError(f"{name} shape {tuple(v.shape)} does not match the expected ({n},)")


def _all_floating(*arrays):
    return all(jnp.issubdtype(a.dtype, jnp.floating) for a in arrays)


def _mean_var(x, axes):
    x32 = x.astype(jnp.promote_types(x.dtype, jnp.float32))
    mean = jnp.mean(x32, axis=axes)
    var = jnp.mean(jnp.square(x32 - jnp.expand_dims(mean, axes)), axis=axes)
    return mean, var


def _bn_infer(attrs, shapes):
    data = shapes["data"]
    c = (data[attrs["axis"] % len(data)],) if data else ()
    return {k: c for k in ("gamma", "beta", "moving_mean", "moving_var")}


@register(
    "BatchNorm",
    inputs=("data", "gamma", "beta", "moving_mean", "moving_var"),
    aux=("moving_mean", "moving_var"),
    attrs={
        "eps": Attr("float", 1e-3),
        "momentum": Attr("float", 0.9),
        "fix_gamma": Attr("bool", True),
        "use_global_stats": Attr("bool", False),
        "output_mean_var": Attr("bool", False),
        "axis": Attr("int", 1),
        "cudnn_off": Attr("bool", False),
        "min_calib_range": Attr("float?", None),
        "max_calib_range": Attr("float?", None),
    },
    mode=True,
    num_outputs=3,
    visible_outputs=lambda a: 3 if a["output_mean_var"] else 1,
    output_names=("output", "mean", "var"),
    infer_args=_bn_infer,
)
def batch_norm(
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
    axis,
    cudnn_off,
    min_calib_range,
    max_calib_range,
    _train=False,
    _sync=None,
):
    """Batch normalization over every axis but ``axis``.

    Training (and not ``use_global_stats``): batch mean/biased variance, and
    ``moving = moving * momentum + batch * (1 - momentum)``. Otherwise the moving
    statistics. ``fix_gamma`` uses gamma = 1 (its gradient is 0).
    Outputs: output, mean, inverse std ``1/sqrt(var + eps)``; returns ``(outputs, new_aux)``.
    In training the statistics take one (shifted) pass and the gradient is written by hand
    (:mod:`._bn_train`); as in MXNet 1.9.1, the mean and inverse-std outputs pass no
    gradient back (SyncBatchNorm over several devices or workers keeps jax's autodiff).
    """
    (out, mean, _var, inv), new_aux = batch_norm_stats(
        data,
        gamma,
        beta,
        moving_mean,
        moving_var,
        eps=eps,
        momentum=momentum,
        fix_gamma=fix_gamma,
        use_global_stats=use_global_stats,
        axis=axis,
        _train=_train,
        _sync=_sync,
        op="BatchNorm",
    )
    return (out, mean.astype(data.dtype), inv.astype(data.dtype)), new_aux


def batch_norm_stats(
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
    axis,
    _train,
    _sync=None,
    op="BatchNorm",
):
    """BatchNorm's computation, shared by ``BatchNorm`` and ``BatchNorm_v1``.

    Parameters
    ----------
    data, gamma, beta, moving_mean, moving_var : jax arrays
        The op's inputs and auxiliary states.
    eps, momentum, fix_gamma, use_global_stats, axis : the op's attributes.
    _train : bool
        Training mode (batch statistics unless ``use_global_stats``).
    _sync : callable or None
        SyncBatchNorm's cross-device statistics.
    op : str
        The op name errors mention.

    Returns
    -------
    ((out, mean, var, inv), new_aux)
        ``mean``/``var`` are the statistics used (batch or moving, float32 or wider),
        ``inv`` is ``1/sqrt(var + eps)``, ``new_aux`` the updated moving statistics.
    """
    ax = _norm_axis(axis, data.ndim, op)
    c = data.shape[ax]
    for name, v in (
        ("gamma", gamma),
        ("beta", beta),
        ("moving_mean", moving_mean),
        ("moving_var", moving_var),
    ):
        _check_vec(name, v, c)
    mm, mv = jax.lax.stop_gradient(moving_mean), jax.lax.stop_gradient(moving_var)
    if _train and not use_global_stats:
        # MXNet's momentum is a C float: 0.9 is 0.899999976 and 1 - momentum 0.100000024,
        # in float64 models too
        momentum = float(np.float32(momentum))

        def update(sm, sv):
            return (
                (mm * momentum + sm.astype(mm.dtype) * (1 - momentum)).astype(mm.dtype),
                (mv * momentum + sv.astype(mv.dtype) * (1 - momentum)).astype(mv.dtype),
            )

        if _sync is None and data.size and _all_floating(data, gamma, beta):
            # one-pass statistics and a hand-written gradient (see _bn_train); as in
            # MXNet, the mean and inverse-std outputs carry no gradient
            out, mean, var, inv = bn_train(data, gamma, beta, ax, float(eps), bool(fix_gamma))
            mean, inv = jax.lax.stop_gradient(mean), jax.lax.stop_gradient(inv)
            var = jax.lax.stop_gradient(var)
            return (out, mean, var, inv), update(mean, var)
        axes = tuple(i for i in range(data.ndim) if i != ax)
        # SyncBatchNorm's _sync: the statistics of every worker's batch
        mean, var = _mean_var(data, axes) if _sync is None else _sync(data, axes)
        new_aux = update(jax.lax.stop_gradient(mean), jax.lax.stop_gradient(var))
    else:
        mean, var = mm.astype(jnp.float32), mv.astype(jnp.float32)
        new_aux = (moving_mean, moving_var)
    inv = jax.lax.rsqrt(var + eps)
    scale = inv if fix_gamma else inv * gamma.astype(inv.dtype)
    out = (data - _bcast(mean, data.ndim, ax)) * _bcast(scale, data.ndim, ax)
    out = (out + _bcast(beta.astype(out.dtype), data.ndim, ax)).astype(data.dtype)
    return (out, mean, var, inv), new_aux


def _ln_infer(attrs, shapes):
    d = shapes["data"]
    return {"gamma": (d[attrs["axis"] % len(d)],), "beta": (d[attrs["axis"] % len(d)],)}


@register(
    "LayerNorm",
    inputs=_NORM_INPUTS,
    attrs={
        "axis": Attr("int", -1),
        "eps": Attr("float", 1e-5),
        "output_mean_var": Attr("bool", False),
    },
    num_outputs=3,
    visible_outputs=lambda a: 3 if a["output_mean_var"] else 1,
    output_names=("output", "mean", "std"),
    infer_args=_ln_infer,
)
def layer_norm(data, gamma, beta, *, axis, eps, output_mean_var):
    """Normalize along ``axis`` then scale by gamma and shift by beta (both (C,)).

    Outputs: output, mean and std ``sqrt(var + eps)`` (``axis`` kept with size 1); as in
    MXNet 1.9.1, the mean and std outputs pass no gradient back.
    """
    ax = _norm_axis(axis, data.ndim, "LayerNorm")
    _check_vec("gamma", gamma, data.shape[ax])
    _check_vec("beta", beta, data.shape[ax])
    if _all_floating(data, gamma, beta):
        # a hand-written gradient (see _layer_norm); mean and std pass none back, as in MXNet
        out, mean, std = layer_normalize(data, gamma, beta, ax, float(eps))
        mean, std = jax.lax.stop_gradient(mean), jax.lax.stop_gradient(std)
        return out, mean.astype(data.dtype), std.astype(data.dtype)
    mean, var = _mean_var(data, (ax,))
    mean, var = jnp.expand_dims(mean, ax), jnp.expand_dims(var, ax)
    std = jnp.sqrt(var + eps)
    out = (data - mean) / std * _bcast(gamma, data.ndim, ax) + _bcast(beta, data.ndim, ax)
    return out.astype(data.dtype), mean.astype(data.dtype), std.astype(data.dtype)


@register(
    "InstanceNorm",
    inputs=_NORM_INPUTS,
    attrs={"eps": Attr("float", 1e-3)},
    infer_args=lambda a, s: {"gamma": (s["data"][1],), "beta": (s["data"][1],)},
)
def instance_norm(data, gamma, beta, *, eps):
    """Normalize each (sample, channel) over the spatial axes of (N, C, ...) data."""
    if data.ndim < 3:
        raise ValueError(f"data must be at least 3-D (N, C, ...), got {tuple(data.shape)}")
    _check_vec("gamma", gamma, data.shape[1])
    _check_vec("beta", beta, data.shape[1])
    axes = tuple(range(2, data.ndim))
    mean, var = _mean_var(data, axes)
    mean, var = jnp.expand_dims(mean, axes), jnp.expand_dims(var, axes)
    out = (data - mean) * jax.lax.rsqrt(var + eps)
    out = out * _bcast(gamma, data.ndim, 1) + _bcast(beta, data.ndim, 1)
    return out.astype(data.dtype)


@register(
    "GroupNorm",
    inputs=_NORM_INPUTS,
    attrs={
        "num_groups": Attr("int", 1),
        "eps": Attr("float", 1e-5),
        "output_mean_var": Attr("bool", False),
    },
    num_outputs=3,
    visible_outputs=lambda a: 3 if a["output_mean_var"] else 1,
    output_names=("output", "mean", "std"),
    infer_args=lambda a, s: {"gamma": (a["num_groups"],), "beta": (a["num_groups"],)},
)
def group_norm(data, gamma, beta, *, num_groups, eps, output_mean_var):
    """Normalize (N, C, ...) data over groups of C/num_groups channels (and space).

    As in MXNet 1.9.1, gamma and beta have one entry per group: (num_groups,).
    Outputs: output, mean (N, num_groups) and std ``sqrt(var + eps)`` (N, num_groups); as
    in MXNet 1.9.1, the mean and std outputs pass no gradient back.
    """
    if data.ndim < 2 or num_groups < 1 or data.shape[1] % num_groups:
        raise ValueError(
            f"channels of data {tuple(data.shape)} must be divisible by num_groups {num_groups}"
        )
    _check_vec("gamma", gamma, num_groups)
    _check_vec("beta", beta, num_groups)
    x = data.reshape(data.shape[0], num_groups, -1)
    mean, var = _mean_var(x, (2,))
    std = jnp.sqrt(var + eps)
    out = (x - mean[..., None]) / std[..., None]
    out = out * gamma.reshape(1, -1, 1) + beta.reshape(1, -1, 1)
    # as in MXNet 1.9.1, the mean and std outputs pass no gradient back
    mean, std = jax.lax.stop_gradient(mean), jax.lax.stop_gradient(std)
    return (
        out.reshape(data.shape).astype(data.dtype),
        mean.astype(data.dtype),
        std.astype(data.dtype),
    )


@register(
    "L2Normalization",
    attrs={
        "eps": Attr("float", 1e-10),
        "mode": Attr("str", "instance", choices=("instance", "channel", "spatial")),
    },
)
def l2_normalization(data, *, eps, mode):
    """``data / sqrt(sum(data**2) + eps)``; the sum runs over every axis but 0
    (``instance``), over axis 1 (``channel``) or over axes 2.. (``spatial``)."""
    if mode == "instance":
        axes = tuple(range(1, data.ndim))
    else:
        if data.ndim < 3:
            raise ValueError(f"{mode} mode needs data of at least 3 dimensions")
        axes = (1,) if mode == "channel" else tuple(range(2, data.ndim))
    norm = jnp.sqrt(jnp.sum(jnp.square(data), axis=axes, keepdims=True) + eps)
    return data / norm


@register(
    "LRN",
    attrs={
        "alpha": Attr("float", 1e-4),
        "beta": Attr("float", 0.75),
        "knorm": Attr("float", 2.0),
        "nsize": Attr("int"),
    },
)
def lrn(data, *, alpha, beta, knorm, nsize):
    """Local response normalization across channels of (N, C, ...) data:
    ``x / (knorm + alpha / nsize * sum_{|c'-c| <= (nsize-1)//2} x[c']**2) ** beta``."""
    if data.ndim < 3:
        raise ValueError(f"data must be at least 3-D (N, C, ...), got {tuple(data.shape)}")
    half = (nsize - 1) // 2  # MXNet's window is symmetric: nsize - 1 channels for even nsize
    window = (1, 2 * half + 1) + (1,) * (data.ndim - 2)
    pads = [(0, 0), (half, half)] + [(0, 0)] * (data.ndim - 2)
    sq = jax.lax.reduce_window(
        jnp.square(data), np.zeros((), data.dtype), jax.lax.add, window, (1,) * data.ndim, pads
    )
    return data / (knorm + alpha / nsize * sq) ** beta
