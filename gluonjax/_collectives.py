"""Collectives across the processes of a ``jax.distributed`` job, on a global mesh.

Each process contributes one array per value; they become the rows of a global
``jax.Array`` sharded over a mesh of one device per process (each process's first
local device), and one ``jax.jit`` program (cached by shapes) sums them or picks
the root's row, with a replicated result; the values of one dtype are summed as one
flat buffer (one all-reduce per call). XLA runs the communication (gloo on CPU, NCCL
on GPU). Every process must call the same collectives in the same order, as
with any SPMD program.

:func:`traced_allsum` runs the same sum from inside a traced program (a jitted,
hybridized or differentiated function: SyncBatchNorm's statistics): an ordered
host callback calls the job's collective, and its gradient is the same sum of the
cotangents.
"""

from __future__ import annotations

import functools
import zlib

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from .base import MXNetError


class CollectiveMismatchError(MXNetError, RuntimeError):
    """The processes of a job called different collectives at the same point."""


__all__ = ["ProcessGroup", "process_group", "traced_allsum", "CollectiveMismatchError"]


def _sum_rows(arrays):
    """Row sums of each ``(processes, ...)`` array, as one reduction per dtype: the
    arrays of a dtype are flattened side by side so XLA runs one all-reduce for them
    (tensor fusion), then cut back to their shapes."""
    out = [None] * len(arrays)
    by_dtype = {}
    for i, a in enumerate(arrays):
        by_dtype.setdefault(a.dtype, []).append(i)
    for dtype, idx in by_dtype.items():
        flat = [arrays[i].reshape(arrays[i].shape[0], -1) for i in idx]
        total = jax.numpy.concatenate(flat, axis=1).sum(axis=0, dtype=dtype)
        start = 0
        for i in idx:
            size = int(np.prod(arrays[i].shape[1:], dtype=np.int64))
            out[i] = total[start : start + size].reshape(arrays[i].shape[1:])
            start += size
    return out


class ProcessGroup:
    """Sum and broadcast of per-process arrays across every process of the job.

    Examples
    --------
    >>> import jax.numpy as jnp
    >>> from gluonjax._collectives import process_group
    >>> g = process_group()            # one process: the identity
    >>> [a.tolist() for a in g.allsum([jnp.ones(2)])]
    [[1.0, 1.0]]
    """

    def __init__(self):
        n = jax.process_count()
        firsts = {}
        for d in jax.devices():
            p = d.process_index
            if p not in firsts or d.id < firsts[p].id:
                firsts[p] = d
        devices = [firsts[p] for p in range(n)]
        self.size = n
        self.rank = jax.process_index()
        self.device = devices[self.rank]
        mesh = Mesh(np.array(devices), ("proc",))
        self._rows = NamedSharding(mesh, P("proc"))
        replicated = NamedSharding(mesh, P())
        self._sum = jax.jit(_sum_rows, out_shardings=replicated)
        self._pick = jax.jit(
            lambda arrays, root: [a[root] for a in arrays],
            static_argnums=1,
            out_shardings=replicated,
        )

    def _local(self, x):
        """``x`` (a jax array, possibly on several local devices) on this process's device."""
        sharding = getattr(x, "sharding", None)
        if sharding is not None and sharding.is_fully_replicated:
            for shard in x.addressable_shards:
                if shard.device == self.device:
                    return shard.data
            x = x.addressable_shards[0].data
        return jax.device_put(x, self.device)

    def _global(self, x):
        row = self._local(x)[None]
        return jax.make_array_from_single_device_arrays(
            (self.size,) + row.shape[1:], self._rows, [row]
        )

    def _run(self, fn, arrays, *args):
        if self.size == 1:
            return list(arrays)
        out = fn([self._global(a) for a in arrays], *args)
        return [o.addressable_shards[0].data for o in out]

    def allsum(self, arrays):
        """The elementwise sums over all processes of ``arrays`` (a list), on this
        process's device."""
        return self._run(self._sum, arrays)

    def broadcast(self, arrays, root=0):
        """Process ``root``'s ``arrays`` on every process (every process passes arrays
        of the same shapes and dtypes)."""
        return self._run(self._pick, arrays, int(root))

    def barrier(self):
        """Return once every process has called ``barrier``."""
        if self.size > 1:
            self.allsum([jax.numpy.zeros((), np.int32)])[0].block_until_ready()


@functools.lru_cache(maxsize=1)
def _group(count):
    return ProcessGroup()


def process_group():
    """The job's :class:`ProcessGroup` (made once per process)."""
    return _group(jax.process_count())


# ---------------------------------------------------------------- inside programs
def _tag_rows(tag):
    """``[t, t*t]`` (uint32 arithmetic, as int32) for the order check of a collective."""
    t = np.uint32(tag)
    with np.errstate(over="ignore"):
        return np.array([t, t * t], np.uint32).view(np.int32)


def _check_tags(name, tag, total, size):
    """Every process passed the same tag iff ``size * sum(t*t) == sum(t)**2`` (Cauchy-
    Schwarz; checked modulo 2**32, where int32 sums wrap)."""
    s1, s2 = (int(v) for v in np.asarray(total).view(np.uint32))
    if (size * s2 - s1 * s1) % (1 << 32):
        raise CollectiveMismatchError(
            f"collective '{name}' (tag {tag}) met a different collective on another "
            f"worker: every worker must run the same layers in the same order (a "
            f"SyncBatchNorm trained on one worker only, or layers whose order differs)"
        )


def _host_allsum(name, tag, *arrays):
    g = process_group()
    got = g.allsum([jax.device_put(np.asarray(a), g.device) for a in arrays] + [_tag_rows(tag)])
    _check_tags(name, tag, got[-1], g.size)
    return tuple(np.asarray(a) for a in got[:-1])


def _callback(name, tag, arrays):
    from jax.experimental import io_callback

    shapes = tuple(jax.ShapeDtypeStruct(a.shape, a.dtype) for a in arrays)
    fn = functools.partial(_host_allsum, name, tag)
    return io_callback(fn, shapes, *arrays, ordered=True)


@functools.partial(jax.custom_vjp, nondiff_argnums=(0,))
def _allsum(name, arrays):
    return _callback(name, zlib.crc32(name.encode()), arrays)


def _allsum_fwd(name, arrays):
    return _allsum(name, arrays), None


def _allsum_bwd(name, _, cts):
    # the sum's cotangent on each process is the sum of every process's cotangent;
    # integer results have float0 cotangents (no gradient)
    diff = [c.dtype != jax.dtypes.float0 for c in cts]
    floats = tuple(c for c, d in zip(cts, diff) if d)
    back = name + "/grad"
    summed = iter(_callback(back, zlib.crc32(back.encode()), floats) if floats else ())
    return (tuple(next(summed) if d else c for c, d in zip(cts, diff)),)


_allsum.defvjp(_allsum_fwd, _allsum_bwd)


def traced_allsum(arrays, name):
    """The sums over every process of ``arrays``, from inside a traced program.

    Differentiable: the gradient with respect to this process's ``arrays`` is the
    sum over the processes of the result's cotangents (each process's loss depends
    on every process's values). Integer arrays are summed too and get no gradient.
    The call is an ordered host callback that runs :meth:`ProcessGroup.allsum`, so
    the program waits for every process there; ``name`` identifies the call site
    (a layer): when another process reaches a different one the call raises
    :class:`CollectiveMismatchError` instead of summing unrelated values. Only for
    a job of several processes; each process's program must run on one device.

    Parameters
    ----------
    arrays : sequence of jax arrays (tracers inside a program)
    name : str

    Returns
    -------
    tuple of arrays
        Of the same shapes and dtypes.
    """
    if not arrays:
        return ()
    return _allsum(str(name), tuple(arrays))
