"""Spatial transformer ops: ``GridGenerator``, ``BilinearSampler``, ``SpatialTransformer``.

Grids are MXNet's: ``grid[:, 0]`` holds x and ``grid[:, 1]`` y source coordinates
normalized to [-1, 1] (-1 is the first pixel, 1 the last: ``x = (gx + 1) * (W - 1) / 2``).
Bilinear sampling reads 0 outside the input. Gradients are jax's autodiff of the same
formulas, which are MXNet's hand-written ones (the corner indices carry no gradient).
Each op has hidden outputs as in MXNet (``grid_dst``, ``grid_src``, ``tmp``); only the
first is visible.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ..registry import Attr, register

_HIGHEST = jax.lax.Precision.HIGHEST


def _target_hw(op, target_shape):
    if len(target_shape) != 2 or min(target_shape) <= 0:
        raise ValueError(
            f"{op}: target_shape must be two positive sizes (H, W), got {target_shape}; "
            f"e.g. {op}(..., target_shape=(28, 28))"
        )
    return int(target_shape[0]), int(target_shape[1])


def _step(n):
    """MXNet's ``2 / (n - 1)``: infinite for a size of 1 (the grid is then NaN there)."""
    return np.inf if n == 1 else 2.0 / (n - 1)


def affine_grid_dst(h, w, dtype, *, exact=False):
    """The (3, h * w) target grid: normalized x, y and ones, row-major over (h, w).

    ``exact`` computes it in float64 and rounds once (SpatialTransformer); otherwise
    in ``dtype`` as ``-1 + index * dtype(2 / (n - 1))`` (GridGenerator).
    """
    dt = np.dtype(dtype)
    i = np.arange(h * w)
    with np.errstate(invalid="ignore"):
        if exact:
            x = -1.0 + (i % w) * _step(w)
            y = -1.0 + (i // w) * _step(h)
        else:
            x = dt.type(-1) + (i % w).astype(dt) * dt.type(_step(w))
            y = dt.type(-1) + (i // w).astype(dt) * dt.type(_step(h))
    return np.stack([x, y, np.ones(h * w)]).astype(dt)


def _corner(data_flat, yi, xi, h, w):
    """``data[n, :, yi, xi]`` per batch and sampling point, 0 outside the input."""
    valid = (yi >= 0) & (yi < h) & (xi >= 0) & (xi < w)
    idx = jnp.where(valid, yi * w + xi, 0)
    vals = jax.vmap(lambda d, i: d[:, i])(data_flat, idx)  # (N, C, P)
    return jnp.where(valid[:, None, :], vals, jnp.zeros((), vals.dtype))


def bilinear_sample(data, grid):
    """Sample ``data`` (N, C, H, W) at ``grid`` (N, 2, P) of normalized (x, y): (N, C, P)."""
    n, c, h, w = data.shape
    gx, gy = grid[:, 0], grid[:, 1]
    x = (gx + 1) * (w - 1) / 2
    y = (gy + 1) * (h - 1) / 2
    # floor of a clipped copy: beyond one pixel outside every corner reads 0 anyway
    x0f = jax.lax.stop_gradient(jnp.floor(jnp.clip(x, -2, w + 1)))
    y0f = jax.lax.stop_gradient(jnp.floor(jnp.clip(y, -2, h + 1)))
    x0, y0 = x0f.astype(jnp.int32), y0f.astype(jnp.int32)
    wx = 1 - (x - x0f)  # weight of the left (top) corner, as MXNet
    wy = 1 - (y - y0f)
    flat = data.reshape(n, c, h * w)
    tl = _corner(flat, y0, x0, h, w)
    tr = _corner(flat, y0, x0 + 1, h, w)
    bl = _corner(flat, y0 + 1, x0, h, w)
    br = _corner(flat, y0 + 1, x0 + 1, h, w)
    wx, wy = wx[:, None, :], wy[:, None, :]
    return tl * wy * wx + tr * wy * (1 - wx) + bl * (1 - wy) * wx + br * (1 - wy) * (1 - wx)


def _check_4d(op, name, a):
    if a.ndim != 4:
        raise ValueError(f"{op}: {name} must be 4-d (N, C, H, W), got shape {a.shape}")


@register(
    "GridGenerator",
    attrs={
        "transform_type": Attr("str", choices=("affine", "warp")),
        "target_shape": Attr("shape", (0, 0)),
    },
    num_outputs=2,
    visible_outputs=1,
    output_names=("output", "grid_dst"),
)
def grid_generator(data, *, transform_type, target_shape):
    """A sampling grid for ``BilinearSampler``, shape (N, 2, H, W).

    ``affine``: ``data`` (N, 6) holds row-major 2x3 matrices applied to the normalized
    target grid of ``target_shape`` (H, W). ``warp``: ``data`` (N, 2, H, W) is an optical
    flow in pixels added to each pixel's coordinates, then normalized
    (``target_shape`` is ignored).

    Examples
    --------
    >>> import gluonjax as mx
    >>> theta = mx.nd.array([[1., 0., 0., 0., 1., 0.]])
    >>> mx.nd.GridGenerator(theta, transform_type='affine', target_shape=(2, 3))[0, 0].asnumpy()
    array([[-1.,  0.,  1.],
           [-1.,  0.,  1.]], dtype=float32)
    """
    if transform_type == "affine":
        if data.ndim != 2 or data.shape[1] != 6:
            raise ValueError(
                f"GridGenerator: affine data must be (batch, 6) matrices, got shape {data.shape}"
            )
        h, w = _target_hw("GridGenerator", target_shape)
        dst = jnp.asarray(affine_grid_dst(h, w, data.dtype))
        theta = data.reshape(data.shape[0], 2, 3)
        out = jnp.matmul(theta, dst, precision=_HIGHEST)
        return out.reshape(data.shape[0], 2, h, w), dst
    _check_4d("GridGenerator", "warp data (an optical flow)", data)
    if data.shape[1] != 2:
        raise ValueError(f"GridGenerator: warp data must be (N, 2, H, W), got shape {data.shape}")
    h, w = data.shape[2], data.shape[3]
    dt = np.dtype(data.dtype)
    xs = np.broadcast_to(np.arange(w, dtype=dt), (h, w))
    ys = np.broadcast_to(np.arange(h, dtype=dt)[:, None], (h, w))
    dst = np.stack([xs, ys])
    half = np.array([(w - 1.0) / 2.0, (h - 1.0) / 2.0], dt).reshape(1, 2, 1, 1)
    out = (data + jnp.asarray(dst)) / jnp.asarray(half) - 1  # a size of 1 divides by 0
    return out, jnp.asarray(dst)


@register(
    "BilinearSampler",
    inputs=("data", "grid"),
    attrs={"cudnn_off": Attr("bool?", None)},
    num_outputs=2,
    visible_outputs=1,
    output_names=("output", "tmp"),
)
def bilinear_sampler(data, grid, *, cudnn_off):
    """Sample ``data`` (N, C, H, W) bilinearly at ``grid`` (N, 2, Ho, Wo): (N, C, Ho, Wo).

    ``grid[:, 0]``/``grid[:, 1]`` are x/y in [-1, 1]; points outside read zeros.

    Examples
    --------
    >>> import gluonjax as mx
    >>> data = mx.nd.array([[[[0., 2.], [4., 6.]]]])
    >>> grid = mx.nd.array([[[[0.]], [[0.]]]])  # the centre
    >>> mx.nd.BilinearSampler(data, grid).asnumpy()
    array([[[[3.]]]], dtype=float32)
    """
    _check_4d("BilinearSampler", "data", data)
    _check_4d("BilinearSampler", "grid", grid)
    if grid.shape[0] != data.shape[0] or grid.shape[1] != 2:
        raise ValueError(
            f"BilinearSampler: grid must be (N, 2, H, W) with data's batch size "
            f"{data.shape[0]}, got shape {grid.shape}"
        )
    n, _, ho, wo = grid.shape
    out = bilinear_sample(data, grid.reshape(n, 2, ho * wo).astype(data.dtype))
    tmp = jax.lax.stop_gradient(jnp.transpose(grid, (0, 2, 3, 1)))
    return out.reshape(n, data.shape[1], ho, wo), tmp


@register(
    "SpatialTransformer",
    inputs=("data", "loc"),
    attrs={
        "target_shape": Attr("shape", (0, 0)),
        "transform_type": Attr("str", choices=("affine",)),
        "sampler_type": Attr("str", choices=("bilinear",)),
        "cudnn_off": Attr("bool?", None),
    },
    num_outputs=3,
    visible_outputs=1,
    output_names=("output", "grid_dst", "grid_src"),
)
def spatial_transformer(data, loc, *, target_shape, transform_type, sampler_type, cudnn_off):
    """Warp ``data`` (N, C, H, W) by the affine matrices ``loc`` (N, 6) and sample it
    bilinearly at ``target_shape`` (Ho, Wo): ``GridGenerator`` + ``BilinearSampler``.

    Examples
    --------
    >>> import gluonjax as mx
    >>> data = mx.nd.arange(16).reshape((1, 1, 4, 4))
    >>> loc = mx.nd.array([[0.5, 0., 0., 0., 0.5, 0.]])  # zoom on the centre
    >>> mx.nd.SpatialTransformer(data, loc, target_shape=(2, 2), transform_type='affine',
    ...                          sampler_type='bilinear').asnumpy()
    array([[[[ 3.75,  5.25],
             [ 9.75, 11.25]]]], dtype=float32)
    """
    _check_4d("SpatialTransformer", "data", data)
    if loc.ndim != 2 or loc.shape != (data.shape[0], 6):
        raise ValueError(
            f"SpatialTransformer: loc must be (batch, 6) = ({data.shape[0]}, 6) affine "
            f"matrices, got shape {loc.shape}"
        )
    h, w = _target_hw("SpatialTransformer", target_shape)
    dst = jnp.asarray(affine_grid_dst(h, w, data.dtype, exact=True))
    theta = loc.astype(data.dtype).reshape(data.shape[0], 2, 3)
    src = jnp.matmul(theta, dst, precision=_HIGHEST)  # (N, 2, h * w)
    out = bilinear_sample(data, src).reshape(data.shape[0], data.shape[1], h, w)
    return out, dst, src
