"""Multi-process stores on ``jax.distributed``: ``dist_sync``, ``dist_device_sync``,
``horovod``; and the refusal of ``dist_async``.

MXNet's ``dist_*`` stores send gradients to parameter servers (ps-lite) that sum them
over the workers and apply the optimizer. gluonjax has no servers: every worker sums
the pushed values across processes with one XLA collective over a global mesh
(:mod:`._collectives`) and applies the same optimizer to its own copy, so all workers
hold the same values. ``init`` and ``broadcast`` take worker 0's value, as MXNet's
servers do. Batch sizes follow MXNet: each worker calls ``trainer.step(batch_size)``
and the gradients are the sum over every worker's samples; the update is that sum
times ``rescale_grad / batch_size``. Pass the global batch size (the sum over workers)
to get the mean gradient of the whole batch.

Workers join the job when gluonjax is imported in a process started by
``python -m gluonjax.launch`` (see :mod:`gluonjax._distributed`); a store made in a
process outside a job is the single worker of a one-process job, as MXNet's
``dist_sync`` with one worker.
"""

from __future__ import annotations

import os

from .base import KVStoreBase, KVStoreError, KVStoreUnavailableError
from .kvstore import KVStore

__all__ = ["DistKVStore", "Horovod", "AsyncKVStoreError", "DIST_TYPES"]

#: the names :func:`~gluonjax.kvstore.create` makes a :class:`DistKVStore` for
DIST_TYPES = ("dist_sync", "dist_device_sync", "dist_sync_device", "dist")


class AsyncKVStoreError(KVStoreUnavailableError, ValueError):
    """``dist_async``: jax has no asynchronous parameter server."""


def _group():
    from .._collectives import process_group

    return process_group()


class DistKVStore(KVStore):
    """A synchronous store across the processes of a ``jax.distributed`` job.

    ``mx.kv.create('dist_sync')`` (or ``'dist_device_sync'``). Pushed values are summed
    over this process's values, then over every process; ``pull`` gives each worker
    the same result. Every worker must call ``init``, ``push``, ``pull``,
    ``pushpull``, ``broadcast`` and ``barrier`` with the same keys in the same order.

    Parameters
    ----------
    name : str
        The type name ``type`` reports.

    Examples
    --------
    >>> import gluonjax as mx
    >>> kv = mx.kv.create('dist_sync')     # outside a launched job: one worker
    >>> kv.rank, kv.num_workers
    (0, 1)
    >>> kv.init(0, mx.nd.ones((2,)))
    >>> kv.push(0, mx.nd.ones((2,)) * 3)
    >>> out = mx.nd.zeros((2,)); kv.pull(0, out=out); out.asnumpy().tolist()
    [3.0, 3.0]
    """

    #: the Trainer pushes every dense gradient in one call (one collective per step)
    _batched = True

    def __init__(self, name="dist_sync"):
        super().__init__(name)
        self._group = _group()
        _check_job(name, self._group.size)

    @property
    def rank(self):
        return self._group.rank

    @property
    def num_workers(self):
        return self._group.size

    def barrier(self):
        """Wait until every worker has called ``barrier``."""
        self._group.barrier()

    _barrier = barrier

    def __repr__(self):
        return (
            f"<DistKVStore {self._type!r}: worker {self.rank} of {self.num_workers}, "
            f"{len(self._store)} keys>"
        )

    def init(self, key, value):
        """Store worker 0's value of each key on every worker (MXNet: the servers keep
        the value worker 0 pushed)."""
        pairs = self._pairs(key, value, "init")
        super().init([k for k, _ in pairs], [v for _, v in pairs])
        if self.num_workers > 1:
            keys = [k for k, _ in pairs]
            got = self._group.broadcast([self._store[k]._data for k in keys], root=0)
            for k, data in zip(keys, got):
                self._write_raw(k, data)

    def _write_raw(self, key, data):
        stored = self._store[key]
        out = stored.copy()
        out._data = data.astype(stored.dtype) if data.dtype != stored.dtype else data
        self._store[key] = out

    def _allreduce(self, keys, merged):
        if self.num_workers == 1:
            return merged
        sums = self._group.allsum([m._data for m in merged])
        out = []
        for m, s in zip(merged, sums):
            r = m.copy()
            r._data = s
            out.append(r)
        return out


def _check_job(name, size, env=None):
    """Refuse to train alone when MXNet's launcher variables say there are several workers
    (e.g. a script started by MXNet's ``tools/launch.py``): each worker would silently
    train its own model."""
    env = os.environ if env is None else env
    want = env.get("DMLC_NUM_WORKER", "")
    if size == 1 and want.isdigit() and int(want) > 1:
        raise KVStoreError(
            f"kvstore '{name}': DMLC_NUM_WORKER={want} says this is one of {want} workers, "
            f"but this process is not part of a jax.distributed job, so it would train "
            f"alone. Start the workers with `python -m gluonjax.launch -n {want} python "
            f"script.py` (it sets GLUONJAX_COORDINATOR), not with MXNet's tools/launch.py."
        )


@KVStoreBase.register
class Horovod(DistKVStore):
    """``mx.kv.create('horovod')``: Horovod's allreduce semantics on ``jax.distributed``.

    MXNet's Horovod store sums gradients with an allreduce and never applies the
    optimizer (``is_capable('optimizer')`` is False: the Trainer updates locally);
    ``broadcast`` sends worker 0's value. gluonjax runs the same collectives over the
    processes started by ``python -m gluonjax.launch`` (not over Horovod's MPI ranks),
    so scripts written for ``kvstore='horovod'`` train unchanged under the launcher.
    """

    def __init__(self):
        super().__init__("horovod")

    def is_capable(self, capability):
        if capability.lower() == KVStoreBase.OPTIMIZER:
            return False
        return super().is_capable(capability)

    def set_optimizer(self, optimizer):
        raise KVStoreUnavailableError(
            "the 'horovod' store does not run an optimizer (allreduce only); use "
            "gluon.Trainer(..., kvstore='horovod'), which updates on each worker, or "
            "kvstore='dist_sync'"
        )


def refuse_async(name):
    """The error for ``dist_async``: never run it synchronously behind the user's back."""
    return AsyncKVStoreError(
        f"kvstore type '{name}' is asynchronous: MXNet's parameter servers applied each "
        f"worker's gradients as they arrived. jax has no asynchronous parameter server "
        f"(jax.distributed runs synchronous collectives), and gluonjax will not run "
        f"'{name}' synchronously in its place. Use kvstore='dist_sync' (every worker "
        f"waits for the others at each step, as 'dist_sync' in MXNet)."
    )
