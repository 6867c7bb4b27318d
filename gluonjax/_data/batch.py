"""MXNet's ``default_batchify_fn`` on host values, and the batch values that cross processes.

``default_batchify_fn`` stacks NDArrays, recurses into tuples (a list per field)
and turns anything else (numbers, lists, numpy arrays) into one array with
``numpy.asarray``'s dtype. In a data-loader worker the arrays stay numpy inside a
:class:`Batch`, which unpickles as an NDArray in the main process.
"""

from __future__ import annotations

import sys

import numpy as np

from .host import raw


def _is_ndarray(x):
    return hasattr(x, "_data") and hasattr(x, "asnumpy")


def batchify(data, stack_nd, to_array):
    """MXNet 1.9.1's default batching of a list of samples.

    ``stack_nd(list of NDArrays)`` and ``to_array(numpy array)`` make the output arrays.
    """
    first = data[0]
    if _is_ndarray(first):
        return stack_nd(data)
    if isinstance(first, tuple):
        return [batchify(list(field), stack_nd, to_array) for field in zip(*data)]
    arr = np.asarray(data)
    return to_array(arr)


class Batch:
    """A numpy array that a worker sends; the main process receives an NDArray."""

    __slots__ = ("values",)

    def __init__(self, values):
        self.values = values

    def __reduce__(self):
        return (as_ndarray, (self.values,))


def as_ndarray(values):
    """An NDArray over ``values`` (called in the main process when a batch arrives)."""
    import jax.numpy as jnp

    return sys.modules["gluonjax.ndarray.ndarray"].NDArray(jnp.asarray(values))


IN_WORKER = [False]  # set by the worker process


def to_output(values):
    """A batch array: an NDArray on the default device, or a :class:`Batch` in a worker."""
    if IN_WORKER[0]:
        return Batch(values)
    return as_ndarray(values)


def stack_output(items):
    """Stack NDArrays (or numpy arrays) along a new first axis into a batch array."""
    if IN_WORKER[0] or all(isinstance(getattr(x, "_data", x), np.ndarray) for x in items):
        return to_output(np.stack([raw(x) for x in items]))
    import jax.numpy as jnp

    return sys.modules["gluonjax.ndarray.ndarray"].NDArray(jnp.stack([x._data for x in items]))


def default_batchify(data):
    """MXNet's ``default_batchify_fn``: NDArrays in the main process, numpy in workers."""
    return batchify(data, stack_output, to_output)
