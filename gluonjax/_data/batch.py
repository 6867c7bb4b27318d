"""MXNet's ``default_batchify_fn`` on host values, and the batch values that cross processes.

``default_batchify_fn`` stacks NDArrays, recurses into tuples (a list per field)
and turns anything else (numbers, lists, numpy arrays) into one array with
``numpy.asarray``'s dtype. In a data-loader worker the arrays stay numpy inside a
:class:`Batch`, which unpickles as an NDArray in the main process.

Batches are made in 64-byte aligned numpy buffers (:func:`aligned_empty`) that
nobody else holds: on the CPU, jax then wraps such a buffer without copying it
(``jax.device_put``), where ``jnp.asarray`` of an unaligned array copies it slowly
(about 0.1 s for a batch of 64 float32 images of 224x224).
"""

from __future__ import annotations

import collections
import mmap
import sys
import weakref

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
    if isinstance(first, np.ndarray) and all(isinstance(d, np.ndarray) for d in data):
        return stack_nd(data)  # np.asarray of numpy arrays is their stack (made faster)
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
        return (_received, (self.values,))


_ALIGN = 64  # what XLA's CPU client needs to use a host buffer in place


def aligned_empty(shape, dtype):
    """An uninitialised C-contiguous numpy array whose data starts on a 64-byte boundary."""
    dtype = np.dtype(dtype)
    shape = tuple(int(s) for s in shape)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    buf = np.empty(nbytes + _ALIGN, np.uint8)
    start = -buf.ctypes.data % _ALIGN
    return buf[start : start + nbytes].view(dtype).reshape(shape)


class BufferPool:
    """Batch memory that is reused once the batches on it are gone.

    Fresh memory costs a page fault per 4 KiB at its first write (about 10 ms for a
    batch of 64 float32 images of 224x224); a buffer taken again does not. ``take``
    gives an array on a page-aligned anonymous mapping; the per-batch array it is
    made from is the numpy base of every array derived from it, and the base that
    jax keeps alive while it uses the memory in place. When that array dies, the
    mapping returns to the pool; at most ``keep`` idle mappings are kept.
    """

    def __init__(self, keep=4):
        self._idle = collections.deque()  # appended to by finalizers, from any thread
        self._keep = keep

    def take(self, shape, dtype):
        """An uninitialised C-contiguous array (aligned to a page) for a new batch."""
        dtype = np.dtype(dtype)
        shape = tuple(int(s) for s in shape)
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        if nbytes == 0:
            return np.empty(shape, dtype)
        mem = None
        for _ in range(len(self._idle)):
            try:
                cand = self._idle.popleft()
            except IndexError:
                break
            if nbytes <= len(cand) <= 2 * nbytes + mmap.PAGESIZE:
                mem = cand
                break
            self._idle.append(cand)
        while len(self._idle) > self._keep:
            try:
                self._idle.popleft()
            except IndexError:
                break
        if mem is None:
            mem = mmap.mmap(-1, nbytes)
        owner = np.frombuffer(mem, np.uint8, count=nbytes)
        weakref.finalize(owner, self._idle.append, mem)
        return owner.view(dtype).reshape(shape)


def is_aligned(values):
    return values.flags.c_contiguous and values.ctypes.data % _ALIGN == 0


def as_ndarray(values, fresh=False):
    """An NDArray with the values of the numpy array ``values`` (in the main process).

    ``fresh=True`` says that nobody else holds ``values`` or writes to it later: an
    aligned one (see :func:`aligned_empty`) then becomes the NDArray's memory on the
    CPU. Otherwise the values are copied (into an aligned buffer when large).
    """
    import jax
    import jax.numpy as jnp

    nd = sys.modules["gluonjax.ndarray.ndarray"].NDArray
    if values.nbytes < (1 << 16):
        return nd(jnp.asarray(values))  # small: a copy (the dtype kept, as MXNet)
    if not (fresh and is_aligned(values)):
        out = aligned_empty(values.shape, values.dtype)
        np.copyto(out, values)
        values = out
    return nd(jax.device_put(values))


def _received(values):
    """Unpickling a :class:`Batch` in the main process: its buffer is ours alone.

    On a shared-memory slot (:mod:`.transport`) that holds only while ``values.base``
    is the per-batch array on the slot's mmap, which lives as long as the batch does;
    if numpy ever made the mapping's buffer itself the base, the values are copied.
    """
    return as_ndarray(values, fresh=isinstance(values.base, np.ndarray))


IN_WORKER = [False]  # set by the worker process


def to_output(values):
    """A batch array: an NDArray on the default device, or a :class:`Batch` in a worker."""
    if IN_WORKER[0]:
        return Batch(values)
    return as_ndarray(values)


def stack_output(items):
    """Stack NDArrays (or numpy arrays) along a new first axis into a batch array."""
    if IN_WORKER[0] or all(isinstance(getattr(x, "_data", x), np.ndarray) for x in items):
        arrays = [raw(x) for x in items]
        first = arrays[0]
        if any(a.shape != first.shape or a.dtype != first.dtype for a in arrays):
            return to_output(np.stack(arrays))  # numpy's error or type promotion
        shape = (len(arrays),) + first.shape
        if IN_WORKER[0]:  # stacked straight into shared memory (see .transport)
            from .transport import shared_empty

            return Batch(np.stack(arrays, out=shared_empty(shape, first.dtype)))
        out = aligned_empty(shape, first.dtype)
        return as_ndarray(np.stack(arrays, out=out), fresh=True)
    import jax.numpy as jnp

    return sys.modules["gluonjax.ndarray.ndarray"].NDArray(jnp.stack([x._data for x in items]))


def default_batchify(data):
    """MXNet's ``default_batchify_fn``: NDArrays in the main process, numpy in workers."""
    return batchify(data, stack_output, to_output)
