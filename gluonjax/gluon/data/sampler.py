"""Samplers: the order in which a DataLoader visits a data set, and how it cuts batches.

This module imports no jax (data-loader workers may load it).

Examples
--------
>>> from gluonjax.gluon.data import SequentialSampler, BatchSampler
>>> list(BatchSampler(SequentialSampler(10), 3, "keep"))
[[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
>>> list(BatchSampler(SequentialSampler(10), 3, "discard"))
[[0, 1, 2], [3, 4, 5], [6, 7, 8]]
"""

from __future__ import annotations

import numpy as np

from ...base import InvalidArgumentError

__all__ = [
    "Sampler",
    "SequentialSampler",
    "RandomSampler",
    "FilterSampler",
    "BatchSampler",
    "IntervalSampler",
]

_LAST_BATCH = ("keep", "discard", "rollover")


class Sampler:
    """Base class: subclasses define ``__iter__`` (indices) and ``__len__``."""

    def __iter__(self):
        raise NotImplementedError

    def __len__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    """``start, start + 1, ..., start + length - 1``.

    Parameters
    ----------
    length : int
    start : int, default 0
    """

    def __init__(self, length, start=0):
        self._length = length
        self._start = start

    def __iter__(self):
        return iter(range(self._start, self._start + self._length))

    def __len__(self):
        return self._length


class RandomSampler(Sampler):
    """A random permutation of ``range(length)`` per pass (numpy's global generator).

    Parameters
    ----------
    length : int
    """

    def __init__(self, length):
        self._length = length

    def __iter__(self):
        indices = np.arange(self._length)
        np.random.shuffle(indices)
        return iter(indices)

    def __len__(self):
        return self._length


class FilterSampler(Sampler):
    """The indices of ``dataset``'s samples for which ``fn(sample)`` is true.

    Parameters
    ----------
    fn : callable
    dataset : Dataset
    """

    def __init__(self, fn, dataset):
        self._fn = fn
        self._dataset = dataset
        self._indices = [i for i, sample in enumerate(dataset) if fn(sample)]

    def __iter__(self):
        return iter(self._indices)

    def __len__(self):
        return len(self._indices)


class BatchSampler(Sampler):
    """Group the indices of ``sampler`` into lists of ``batch_size``.

    Parameters
    ----------
    sampler : Sampler
    batch_size : int
    last_batch : {'keep', 'discard', 'rollover'}
        What to do with a last, short batch: yield it, drop it, or start the
        next pass with its indices.
    """

    def __init__(self, sampler, batch_size, last_batch="keep"):
        if last_batch not in _LAST_BATCH:
            raise InvalidArgumentError(
                f"last_batch must be one of 'keep', 'discard', or 'rollover', but got {last_batch}"
            )
        self._sampler = sampler
        self._batch_size = batch_size
        self._last_batch = last_batch
        self._prev = []

    def __iter__(self):
        batch, self._prev = self._prev, []
        for i in self._sampler:
            batch.append(i)
            if len(batch) == self._batch_size:
                yield batch
                batch = []
        if batch:
            if self._last_batch == "keep":
                yield batch
            elif self._last_batch == "rollover":
                self._prev = batch

    def __len__(self):
        if self._last_batch == "keep":
            return (len(self._sampler) + self._batch_size - 1) // self._batch_size
        if self._last_batch == "discard":
            return len(self._sampler) // self._batch_size
        return (len(self._prev) + len(self._sampler)) // self._batch_size


class IntervalSampler(Sampler):
    """``0, interval, 2*interval, ...``, then (``rollover``) ``1, 1 + interval, ...`` and so on.

    MXNet 1.9.1 has it as ``gluon.contrib.data.IntervalSampler``.

    Parameters
    ----------
    length : int
    interval : int
        Must not exceed ``length``.
    rollover : bool, default True
        Go on from the skipped items until every item was visited.

    Examples
    --------
    >>> list(IntervalSampler(13, interval=3))
    [0, 3, 6, 9, 12, 1, 4, 7, 10, 2, 5, 8, 11]
    >>> s = IntervalSampler(13, interval=3, rollover=False)
    >>> list(s), len(s)
    ([0, 3, 6, 9, 12], 5)
    """

    def __init__(self, length, interval, rollover=True):
        if interval > length:
            raise InvalidArgumentError(
                f"Interval {interval} must be smaller than or equal to length {length}"
            )
        self._length = length
        self._interval = interval
        self._rollover = rollover

    def __iter__(self):
        for i in range(self._interval if self._rollover else 1):
            yield from range(i, self._length, self._interval)

    def __len__(self):
        if self._rollover:
            return self._length
        return len(range(0, self._length, self._interval))  # MXNet says `length` here
