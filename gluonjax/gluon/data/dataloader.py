"""``DataLoader``: mini-batches from a data set, in the main process, threads or worker processes.

With ``num_workers > 0`` the samples are loaded and batched by fresh worker
processes (:mod:`gluonjax._data.pool`), never forked from this process: a fork of
a process running jax can deadlock. The workers run the vision datasets and
transforms on numpy without importing jax, and batch with numpy into shared memory
that the main process's NDArrays then use in place (:mod:`gluonjax._data.transport`).
A worker's exception is raised here with its traceback and the index of the
sample; a worker that dies or stays silent for ``timeout`` seconds raises instead
of hanging. A data set that cannot be pickled (a lambda transform,
say) falls back to ``thread_pool=True`` with a warning.

Examples
--------
>>> import numpy as np
>>> from gluonjax.gluon.data import ArrayDataset, DataLoader
>>> data = ArrayDataset(np.arange(10, dtype=np.float32).reshape(5, 2), np.arange(5))
>>> [(x.shape, y.asnumpy().tolist()) for x, y in DataLoader(data, batch_size=2)]
[((2, 2), [0, 1]), ((2, 2), [2, 3]), ((1, 2), [4])]
"""

from __future__ import annotations

import itertools
import warnings
from multiprocessing import TimeoutError as _MPTimeout
from multiprocessing.pool import ThreadPool

import numpy as np

from ... import context
from ..._data import batch as _batch
from ..._data import pool as _pool
from ..._data.pool import DataLoaderError, DataLoaderTimeoutError
from ...base import InvalidArgumentError
from . import sampler as _sampler

__all__ = [
    "DataLoader",
    "default_batchify_fn",
    "default_mp_batchify_fn",
    "DataLoaderError",
    "DataLoaderTimeoutError",
]


def default_batchify_fn(data):
    """MXNet's default batching: stack NDArrays, recurse into tuples, ``asarray`` the rest.

    >>> default_batchify_fn([(1, 2.5), (3, 4.5)])[1].asnumpy().tolist()
    [2.5, 4.5]
    """
    return _batch.default_batchify(data)


default_mp_batchify_fn = default_batchify_fn


def _as_in_context(data, ctx):
    if hasattr(data, "as_in_context"):
        return data.as_in_context(ctx)
    if isinstance(data, (list, tuple)):
        return [_as_in_context(d, ctx) for d in data]
    return data


_KEYS = itertools.count()


def _thread_task(dataset, batchify_fn, indices):
    sample = None
    try:
        samples = []
        for i in indices:
            sample = i
            samples.append(dataset[i])
        sample = None
        return batchify_fn(samples)
    except Exception as err:
        where = f"sample {sample}" if sample is not None else f"the batch of samples {indices}"
        err.add_note(f"(raised by a DataLoader thread while loading {where})")
        raise


class _MultiWorkerIter:
    """Batches from the worker pool (or thread pool), ``prefetch`` tasks ahead, in order."""

    def __init__(self, loader, pool, threaded):
        self._loader = loader
        self._pool = pool
        self._threaded = threaded
        self._batches = iter(loader._batch_sampler)
        self._pending = []  # (key, indices, async result or None), in order
        self._token = next(_KEYS)
        self._sent = 0
        for _ in range(max(loader._prefetch, 1)):
            self._push()

    def __len__(self):
        return len(self._loader._batch_sampler)

    def _push(self):
        indices = next(self._batches, None)
        if indices is None:
            return
        key = (self._token, self._sent)
        self._sent += 1
        indices = [int(i) for i in indices]
        if self._threaded:
            res = self._pool.apply_async(
                _thread_task, (self._loader._dataset, self._loader._batchify_fn, indices)
            )
            self._pending.append((key, indices, res))
        else:
            self._pool.submit(key, indices)
            self._pending.append((key, indices, None))

    def __iter__(self):
        return self

    def __next__(self):
        self._push()
        if not self._pending:
            raise StopIteration
        key, indices, res = self._pending.pop(0)
        timeout = self._loader._timeout
        if self._threaded:
            try:
                batch = res.get(timeout)
            except _MPTimeout:
                raise DataLoaderTimeoutError(
                    f"DataLoader thread returned no batch in {timeout} s (samples {indices}); "
                    f"a slow transform needs a larger `timeout=`"
                ) from None
        else:
            batch = self._pool.get(key, timeout)
        if self._loader._pin_memory:
            batch = _as_in_context(batch, context.cpu_pinned(self._loader._pin_device_id))
        return batch

    next = __next__

    def __del__(self):
        if not self._threaded and self._pending and self._pool.broken is None:
            try:
                self._pool.discard([k for k, _, _ in self._pending])
            except Exception:  # interpreter shutdown
                pass


class DataLoader:
    """Loads a data set and returns mini-batches (MXNet 1.9.1's ``gluon.data.DataLoader``).

    Parameters
    ----------
    dataset : Dataset
        Also an NDArray, numpy array or list.
    batch_size : int
        Required unless ``batch_sampler`` is given.
    shuffle : bool, default False
        Visit the samples in a random order (numpy's global generator).
    sampler : Sampler, optional
        The order of the samples (not together with ``shuffle``).
    last_batch : {'keep', 'discard', 'rollover'}, default 'keep'
        A last short batch is returned, dropped, or its samples start the next epoch.
    batch_sampler : Sampler, optional
        Yields lists of indices; excludes batch_size, shuffle, sampler and last_batch.
    batchify_fn : callable, optional
        Turns a list of samples into a batch (default :func:`default_batchify_fn`).
    num_workers : int, default 0
        Worker processes that load and batch the samples (0: the main process).
    pin_memory : bool, default False
        Return the batches in ``cpu_pinned`` memory (the same as CPU memory here).
    pin_device_id : int, default 0
    prefetch : int, optional
        Batches requested ahead (default ``2 * num_workers``).
    thread_pool : bool, default False
        Use ``num_workers`` threads of this process instead of worker processes.
    timeout : float, default 120
        Seconds to wait for one batch from a worker before raising
        :class:`DataLoaderTimeoutError`.
    auto_reload : bool, default False
        Start prefetching the next epoch as soon as an epoch ends.
    """

    def __init__(
        self,
        dataset,
        batch_size=None,
        shuffle=False,
        sampler=None,
        last_batch=None,
        batch_sampler=None,
        batchify_fn=None,
        num_workers=0,
        pin_memory=False,
        pin_device_id=0,
        prefetch=None,
        thread_pool=False,
        timeout=120,
        auto_reload=False,
    ):
        if timeout <= 0:
            raise InvalidArgumentError(f"timeout must be positive, given {timeout}")
        self._dataset = dataset
        self._pin_memory = pin_memory
        self._pin_device_id = pin_device_id
        self._thread_pool = thread_pool
        self._timeout = timeout
        if batch_sampler is None:
            if batch_size is None:
                raise InvalidArgumentError(
                    "batch_size must be specified unless batch_sampler is specified"
                )
            if sampler is None:
                if shuffle:
                    sampler = _sampler.RandomSampler(len(dataset))
                else:
                    sampler = _sampler.SequentialSampler(len(dataset))
            elif shuffle:
                raise InvalidArgumentError("shuffle must not be specified if sampler is specified")
            batch_sampler = _sampler.BatchSampler(sampler, batch_size, last_batch or "keep")
        elif batch_size is not None or shuffle or sampler is not None or last_batch is not None:
            raise InvalidArgumentError(
                "batch_size, shuffle, sampler and last_batch must not be specified if "
                "batch_sampler is specified."
            )
        self._batch_sampler = batch_sampler
        self._num_workers = max(int(num_workers), 0)
        self._prefetch = max(0, int(prefetch) if prefetch is not None else 2 * self._num_workers)
        self._batchify_fn = default_batchify_fn if batchify_fn is None else batchify_fn
        self._pool = None
        self._payload = None
        if self._num_workers > 0 and not thread_pool:
            self._payload = self._make_payload()
            if self._payload is None:
                self._thread_pool = True
        self.auto_reload = auto_reload
        self._iter = None
        if auto_reload:
            self.refresh()

    def _make_payload(self):
        fn = None if self._batchify_fn is default_batchify_fn else self._batchify_fn
        try:
            return _pool.payload(self._dataset, fn)
        except Exception as err:
            warnings.warn(
                f"DataLoader(num_workers={self._num_workers}): the data set or batchify_fn "
                f"cannot be sent to worker processes ({type(err).__name__}: {err}); using "
                f"{self._num_workers} threads instead. Define transforms at module level "
                f"(not as lambdas or local functions) to use worker processes.",
                stacklevel=3,
            )
            return None

    def _get_pool(self):
        if self._thread_pool:
            if self._pool is None:
                self._pool = ThreadPool(self._num_workers)
            return self._pool
        if self._pool is None or self._pool.broken is not None:
            data, full = self._payload
            seed = int(np.random.randint(0, 2**31 - 1))
            self._pool = _pool.WorkerPool(self._num_workers, data, full, seed)
        return self._pool

    def _prefetch_iter(self):
        if self._num_workers == 0:
            return self._same_process_iter()
        return _MultiWorkerIter(self, self._get_pool(), self._thread_pool)

    def _same_process_iter(self):
        for indices in self._batch_sampler:
            batch = self._batchify_fn([self._dataset[i] for i in indices])
            if self._pin_memory:
                batch = _as_in_context(batch, context.cpu_pinned(self._pin_device_id))
            yield batch

    def __iter__(self):
        if self._iter is None:
            self.refresh()
        it, self._iter = self._iter, None
        yield from it
        if self._iter is None and self.auto_reload:
            self.refresh()

    def refresh(self):
        """Start (prefetching) a new pass over the data."""
        self._iter = self._prefetch_iter()

    def clean(self):
        """Drop a prefetched pass; the next ``iter()`` starts a new one."""
        self._iter = None

    def __len__(self):
        return len(self._batch_sampler)

    def __del__(self):
        pool = getattr(self, "_pool", None)
        if pool is None:
            return
        try:
            if isinstance(pool, ThreadPool):
                pool.terminate()
            else:
                pool.stop("the DataLoader was deleted")
        except Exception:  # interpreter shutdown
            pass
