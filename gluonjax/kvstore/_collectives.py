"""Collectives across the processes of a ``jax.distributed`` job, on a global mesh.

Each process contributes one array per value; they become the rows of a global
``jax.Array`` sharded over a mesh of one device per process (each process's first
local device), and one ``jax.jit`` program (cached by shapes) sums them or picks
the root's row, with a replicated result; the values of one dtype are summed as one
flat buffer (one all-reduce per call). XLA runs the communication (gloo on CPU, NCCL
on GPU). Every process must call the same collectives in the same order, as
with any SPMD program.
"""

from __future__ import annotations

import functools

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

__all__ = ["ProcessGroup", "process_group"]


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
    >>> from gluonjax.kvstore._collectives import process_group
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
