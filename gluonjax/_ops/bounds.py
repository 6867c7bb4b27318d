"""Index bounds: static checks at trace time, value checks on concrete (eager) arrays.

JAX clamps out-of-range gather indices and drops out-of-range scatter updates; MXNet
raises ``IndexError``. Integer indices are checked against the static shape (no device
sync, and only when a kernel is traced); index arrays are checked on their values only
in eager mode, where the values are known. Inside a traced (hybridized) program index
arrays follow the op's documented mode (``clip`` or ``wrap``).
"""

from __future__ import annotations

import jax
import numpy as np

from ..base import IndexOutOfRangeError


def is_concrete(x):
    """Whether ``x`` (a jax/numpy array) has known values (not a tracer)."""
    return not isinstance(x, jax.core.Tracer)


def check_int(i, axis, shape, what):
    """Raise :class:`IndexOutOfRangeError` unless ``-n <= i < n`` for ``n = shape[axis]``."""
    n = shape[axis]
    if not -n <= i < n:
        raise IndexOutOfRangeError(
            f"{what}: index {i} is out of bounds for axis {axis} with size {n} "
            f"(array shape {tuple(shape)}); valid indices are {-n}..{n - 1}"
        )


def check_values(idx, lo, hi, axis, shape, what):
    """Raise unless every value of the concrete index array ``idx`` is in ``[lo, hi)``.

    One host-side reduction; skipped for traced values.
    """
    if not is_concrete(idx) or np.size(idx) == 0:
        return
    a = np.asarray(idx)
    if a.dtype.kind == "f":
        a = np.trunc(a)
    if a.min() < lo or a.max() >= hi:
        pos = int(np.flatnonzero((a < lo) | (a >= hi))[0])
        bad = a.reshape(-1)[pos]
        at = tuple(int(i) for i in np.unravel_index(pos, a.shape))
        raise IndexOutOfRangeError(
            f"{what}: index {bad:g} is out of bounds for axis {axis} with size "
            f"{shape[axis]} (array shape {tuple(shape)}; the index array's entry {at}); "
            f"valid indices are {lo}..{hi - 1}"
        )


def key_axes(key, ndim, what, shape):
    """The input axis each entry of a static indexing key reads (None for ``None``/
    Ellipsis); raises ``IndexOutOfRangeError`` for too many indices."""
    used = sum(1 for k in key if k[0] in ("s", "i", "a"))
    if used > ndim:
        raise IndexOutOfRangeError(
            f"{what}: too many indices ({used}) for an array of shape {tuple(shape)}"
        )
    axes, ax = [], 0
    for k in key:
        if k[0] == "e":
            axes.append(None)
            ax += ndim - used
        elif k[0] == "n":
            axes.append(None)
        else:
            axes.append(ax)
            ax += 1
    return axes


def check_key(key, shape, what, arrays=()):
    """Check an NDArray indexing key: integers against ``shape`` (static); index arrays
    on their values when they are concrete."""
    axes = key_axes(key, len(shape), what, shape)
    it = iter(arrays)
    for k, ax in zip(key, axes):
        if k[0] == "i":
            check_int(k[1], ax, shape, what)
        elif k[0] == "a":
            a = next(it, None)
            if a is not None:
                n = shape[ax]
                check_values(a, -n, n, ax, shape, what)
