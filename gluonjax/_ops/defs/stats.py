"""Counting and index ops: ``_histogram``, ``moments``, ``_ravel_multi_index`` and
``_unravel_index`` (MXNet's ``src/operator/tensor/{histogram,ravel}`` and
``src/operator/nn/moments``)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ..registry import Attr, register


# ----------------------------------------------------------------------------- histogram
def _hist_inputs(a):
    return ("data",) if a["bin_cnt"] is not None else ("data", "bins")


def _uniform_bounds(bin_cnt, lo, hi, dtype):
    """MXNet's bin edges: ``(hi * i + (bin_cnt - i) * lo) / bin_cnt`` in float64, then
    cast to the data's dtype."""
    i = np.arange(bin_cnt + 1, dtype=np.float64)
    return np.asarray((hi * i + (bin_cnt - i) * lo) / bin_cnt).astype(dtype)


def _inside(lo, hi, dtype):
    """The narrowest ``dtype`` interval holding every value ``x`` with ``lo <= x <= hi``
    compared in float64 (MXNet compares the data with the double range)."""
    dt = np.dtype(dtype)
    lo_d, hi_d = dt.type(lo), dt.type(hi)
    if float(lo_d) < lo:
        lo_d = np.nextafter(lo_d, dt.type(np.inf))
    if float(hi_d) > hi:
        hi_d = np.nextafter(hi_d, dt.type(-np.inf))
    return lo_d, hi_d


def _count(flat, edges, keep, n_bins):
    idx = jnp.searchsorted(edges, flat, side="right") - 1
    idx = jnp.minimum(idx, n_bins - 1)
    keep = keep & (idx >= 0)
    ones = keep.astype(jnp.int32)
    return jnp.zeros(n_bins, jnp.int32).at[jnp.where(keep, idx, 0)].add(ones)


@register(
    "_histogram",
    inputs=_hist_inputs,
    attrs={"bin_cnt": Attr("int?", None), "range": Attr("floats?", None)},
    num_outputs=2,
    output_names=("output0", "output1"),
    aliases=("_npi_histogram",),
)
def histogram(data, bins=None, *, bin_cnt, range):  # noqa: A002
    """Counts of the (flattened) ``data`` in bins: ``bin_cnt`` equal bins over
    ``range`` (both attributes), or the bins between the edges of the 1-d input
    ``bins``. Values outside the range are not counted; the last bin is closed.

    Returns
    -------
    (counts, edges)
        int32 counts (MXNet: int64; gluonjax runs with 64-bit types off) and the edges
        in the data's dtype. No gradient.

    Examples
    --------
    >>> import gluonjax as mx
    >>> x = mx.nd.array([0, 1, 2, 2, 3, 4])
    >>> mx.nd.histogram(x, bins=5, range=(0, 5))[0].asnumpy()
    array([1, 1, 2, 1, 1], dtype=int32)
    >>> mx.nd.histogram(x, bins=mx.nd.array([0, 2.1, 3]))[0].asnumpy()
    array([4, 1], dtype=int32)
    """
    if (bin_cnt is None) != (range is None):
        raise ValueError("give both bin_cnt and range, or neither (then the edges as 'bins')")
    flat = jax.lax.stop_gradient(data).reshape(-1)
    if bin_cnt is not None:
        if bin_cnt < 1:
            raise ValueError(f"bin_cnt must be positive, got {bin_cnt}")
        if len(range) != 2 or range[0] > range[1]:
            raise ValueError(f"range must be (low, high) with low <= high, got {range}")
        lo, hi = range
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        edges = _uniform_bounds(bin_cnt, lo, hi, data.dtype)
        lo_d, hi_d = _inside(lo, hi, data.dtype)
        keep = (flat >= lo_d) & (flat <= hi_d)
        return _count(flat, jnp.asarray(edges), keep, bin_cnt), jnp.asarray(edges)
    if bins.ndim != 1 or bins.shape[0] < 2:
        raise ValueError(f"bins must be a 1-d array of at least 2 edges, got {bins.shape}")
    edges = jax.lax.stop_gradient(bins).astype(data.dtype)
    keep = (flat >= edges[0]) & (flat <= edges[-1])
    return _count(flat, edges, keep, bins.shape[0] - 1), edges


# ----------------------------------------------------------------------------- moments
@register(
    "moments",
    attrs={"axes": Attr("shape?", None), "keepdims": Attr("bool", False)},
    num_outputs=2,
    output_names=("output0", "output1"),
)
def moments(data, *, axes, keepdims):
    """Mean and (population) variance of ``data`` over ``axes``.

    Returns
    -------
    (mean, var)
        Reduced over ``axes`` (kept as length 1 with ``keepdims``); reducing every axis
        without ``keepdims`` gives shape ``(1,)``, as MXNet.

    Examples
    --------
    >>> import gluonjax as mx
    >>> mean, var = mx.nd.moments(mx.nd.array([[1, 2, 3], [4, 5, 6]]), axes=(0,))
    >>> mean.asnumpy(), var.asnumpy()
    (array([2.5, 3.5, 4.5], dtype=float32), array([2.25, 2.25, 2.25], dtype=float32))
    """
    if not axes:
        raise ValueError(
            "empty axes are not supported; for global moments pass every axis, e.g. "
            f"axes={tuple(range(data.ndim))}"
        )
    picked = []
    for a in axes:
        if not -data.ndim <= a < data.ndim:
            raise ValueError(f"axis {a} is out of range for a {data.ndim}-d input")
        picked.append(a % data.ndim)
    ax = tuple(sorted(set(picked)))
    mean = jnp.mean(data, axis=ax, keepdims=True)
    var = jnp.mean(jnp.square(data - mean), axis=ax, keepdims=True)
    if keepdims:
        return mean, var
    shape = tuple(n for i, n in enumerate(data.shape) if i not in ax) or (1,)
    return mean.reshape(shape), var.reshape(shape)


# ----------------------------------------------------------------------------- ravel
def _ravel_shape(shape, op):
    if not shape:
        raise ValueError(f"{op} needs a non-empty shape, e.g. shape=(3, 4)")
    return shape


@register("_ravel_multi_index", attrs={"shape": Attr("shape", ())}, aliases=("ravel_multi_index",))
def ravel_multi_index(data, *, shape):
    """Flat indices of the columns of ``data`` (``(len(shape), N)`` multi-indices) in an
    array of ``shape`` (row-major; the leading dimension may be -1). The result keeps
    ``data``'s dtype; float entries are truncated to integers first. No gradient.

    Examples
    --------
    >>> import gluonjax as mx
    >>> mx.nd.ravel_multi_index(mx.nd.array([[3, 6, 6], [4, 5, 1]]), shape=(7, 6)).asnumpy()
    array([22., 41., 37.], dtype=float32)
    """
    shape = _ravel_shape(shape, "ravel_multi_index")
    if data.ndim != 2 or data.shape[0] != len(shape):
        raise ValueError(
            f"data must be 2-d with {len(shape)} rows (one per entry of shape={shape}), "
            f"got {tuple(data.shape)}"
        )
    idx = jax.lax.stop_gradient(data).astype(jnp.int32)
    out = idx[0]
    for j in range(1, len(shape)):
        out = out * shape[j] + idx[j]
    return out.astype(data.dtype)


@register("_unravel_index", attrs={"shape": Attr("shape", ())}, aliases=("unravel_index",))
def unravel_index(data, *, shape):
    """Multi-indices ``(len(shape), N)`` of the flat indices ``data`` (1-d) in an array
    of ``shape`` (row-major; the leading dimension may be -1, the first row is then
    unbounded). C integer division: float entries are truncated. No gradient.

    Examples
    --------
    >>> import gluonjax as mx
    >>> mx.nd.unravel_index(mx.nd.array([22, 41, 37]), shape=(-1, 6)).asnumpy()
    array([[3., 6., 6.],
           [4., 5., 1.]], dtype=float32)
    """
    shape = _ravel_shape(shape, "unravel_index")
    if data.ndim != 1:
        raise ValueError(f"data must be 1-d flat indices, got {tuple(data.shape)}")
    idx = jax.lax.stop_gradient(data).astype(jnp.int32)
    rows = [None] * len(shape)
    for j in range(len(shape) - 1, 0, -1):
        n = jnp.asarray(shape[j], jnp.int32)
        q = jax.lax.div(idx, n)  # truncates toward zero, as C
        rows[j] = idx - q * n
        idx = q
    rows[0] = idx
    return jnp.stack(rows).astype(data.dtype)
