"""Small contrib and element-wise ops: hard_sigmoid, contrib.div_sqrt_dim,
contrib.index_array, contrib.index_copy. (``cumsum`` is registered by ``ndmisc``.)"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from ..registry import Attr, register


@register("hard_sigmoid", attrs={"alpha": Attr("float", 0.2), "beta": Attr("float", 0.5)})
def hard_sigmoid(data, *, alpha, beta):
    """``clip(alpha * x + beta, 0, 1)``. The gradient is ``alpha`` strictly inside
    (0, 1) and 0 on and beyond the bounds, as in MXNet.

    Examples
    --------
    >>> import gluonjax as mx
    >>> mx.nd.hard_sigmoid(mx.nd.array([-3., 0., 1., 3.])).asnumpy()
    array([0. , 0.5, 0.7, 1. ], dtype=float32)
    """
    t = jnp.asarray(alpha, data.dtype) * data + jnp.asarray(beta, data.dtype)
    zero, one = jnp.zeros((), data.dtype), jnp.ones((), data.dtype)
    return jnp.where(t <= 0, zero, jnp.where(t >= 1, one, t))


@register("_contrib_div_sqrt_dim")
def div_sqrt_dim(data):
    """``data / sqrt(data.shape[-1])`` (scaled dot-product attention's scaling)."""
    if data.ndim < 1:
        raise ValueError("div_sqrt_dim needs at least a 1-d input")
    return data / jnp.asarray(math.sqrt(data.shape[-1]), data.dtype)


@register("_contrib_index_array", attrs={"axes": Attr("shape?", None)})
def index_array(data, *, axes):
    """The index of every element: output ``data.shape + (ndim,)`` with
    ``out[i0, ..., in-1, :] = (i0, ..., in-1)``; with ``axes`` only those coordinates
    (``out[..., j] = i_axes[j]``). int64, as MXNet.

    Examples
    --------
    >>> import gluonjax as mx
    >>> mx.nd.contrib.index_array(mx.nd.ones((2, 2)))[1].asnumpy()
    array([[1, 0],
           [1, 1]])
    """
    nd = data.ndim
    chosen = range(nd) if axes is None else axes
    picked = []
    for a in chosen:
        if not -nd <= a < nd:
            raise ValueError(f"axis {a} in axes={axes} is out of range for a {nd}-d input")
        picked.append(a % nd)
    if not picked:  # a 0-d input (or axes=()): shape data.shape + (0,)
        return jnp.zeros(tuple(data.shape) + (0,), jnp.int64)
    grids = np.indices(data.shape, dtype=np.int64)
    return jnp.asarray(np.stack([grids[a] for a in picked], axis=-1))


@register("_contrib_index_copy", inputs=("old_tensor", "index_vector", "new_tensor"))
def index_copy(old_tensor, index_vector, new_tensor):
    """A copy of ``old_tensor`` whose rows ``index_vector[i]`` are ``new_tensor[i]``.

    The gradient of ``old_tensor`` is zero on the replaced rows; ``new_tensor`` gets
    the gradient of the rows it wrote; the index none.

    Examples
    --------
    >>> import gluonjax as mx
    >>> out = mx.nd.contrib.index_copy(mx.nd.zeros((3, 2)), mx.nd.array([2, 0]),
    ...                                mx.nd.array([[1., 2.], [3., 4.]]))
    >>> out.asnumpy()
    array([[3., 4.],
           [0., 0.],
           [1., 2.]], dtype=float32)
    """
    if index_vector.ndim != 1 or new_tensor.shape[0] != index_vector.shape[0]:
        raise ValueError(
            f"index_vector must be 1-d with one entry per row of new_tensor, got "
            f"{index_vector.shape} and {new_tensor.shape}"
        )
    if old_tensor.ndim != new_tensor.ndim or old_tensor.shape[1:] != new_tensor.shape[1:]:
        raise ValueError(
            f"new_tensor rows {new_tensor.shape[1:]} must match old_tensor rows "
            f"{old_tensor.shape[1:]}"
        )
    idx = jax.lax.stop_gradient(index_vector).astype(jnp.int32)
    return old_tensor.at[idx].set(new_tensor.astype(old_tensor.dtype))
