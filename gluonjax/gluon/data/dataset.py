"""Datasets: ``Dataset`` and its views (``transform``, ``filter``, ``shard``, ``take``...).

This module imports no jax (data-loader workers may load it).

Examples
--------
>>> from gluonjax.gluon.data import SimpleDataset
>>> d = SimpleDataset(list(range(10)))
>>> list(d.transform(lambda x: x * 10).take(3))
[0, 10, 20]
>>> [len(d.shard(4, i)) for i in range(4)]
[3, 3, 2, 2]
>>> list(d.filter(lambda x: x % 3 == 0))
[0, 3, 6, 9]
"""

from __future__ import annotations

import os

from ... import recordio
from ...base import ArgumentTypeError, InvalidArgumentError

__all__ = ["Dataset", "SimpleDataset", "ArrayDataset", "RecordFileDataset"]


class Dataset:
    """Base class of data sets: subclasses define ``__getitem__`` and ``__len__``.

    NDArrays, numpy arrays and lists are data sets too (a DataLoader takes them).
    """

    def __getitem__(self, idx):
        raise NotImplementedError

    def __len__(self):
        raise NotImplementedError

    def filter(self, fn):
        """The samples for which ``fn(sample)`` is true (``fn`` runs on every sample now)."""
        from .sampler import FilterSampler

        return _SampledDataset(self, FilterSampler(fn, self))

    def shard(self, num_shards, index):
        """Part ``index`` of ``num_shards`` contiguous parts (the first parts one longer).

        Shard before shuffling when each worker of a distributed job needs distinct samples.
        """
        if num_shards <= 0:
            raise InvalidArgumentError(f"Number of shards must be greater than 0, got {num_shards}")
        if not 0 <= index < num_shards:
            raise InvalidArgumentError(f"Shard index of out bound: {index} out of {num_shards}")
        length = len(self)
        shard_len, rest = divmod(length, num_shards)
        start = shard_len * index + min(index, rest)
        end = start + shard_len + (index < rest)
        from .sampler import SequentialSampler

        return _SampledDataset(self, SequentialSampler(end - start, start))

    def take(self, count):
        """The first ``count`` samples (all of them for None or a larger count)."""
        if count is None or count > len(self):
            count = len(self)
        from .sampler import SequentialSampler

        return _SampledDataset(self, SequentialSampler(count))

    def sample(self, sampler):
        """The samples at the indices ``sampler`` yields (a ``gluon.data.Sampler``)."""
        from .sampler import Sampler

        if not isinstance(sampler, Sampler):
            raise ArgumentTypeError(
                f"Invalid sampler type: {type(sampler)}. Expected gluon.data.Sampler instead."
            )
        return _SampledDataset(self, sampler)

    def transform(self, fn, lazy=True):
        """``fn(*sample)`` (or ``fn(sample)``) of each sample.

        Parameters
        ----------
        fn : callable
        lazy : bool, default True
            Transform on access; ``False`` transforms every sample now (a random
            ``fn`` would then give the same result every epoch).
        """
        trans = _LazyTransformDataset(self, fn)
        if lazy:
            return trans
        return SimpleDataset([s for s in trans])

    def transform_first(self, fn, lazy=True):
        """Like :meth:`transform`, on the first element of each sample only (e.g. the image)."""
        return self.transform(_TransformFirstClosure(fn), lazy)

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]


class SimpleDataset(Dataset):
    """A data set over anything with ``len()`` and ``[]`` (a list, an array...)."""

    def __init__(self, data):
        self._data = data

    def __len__(self):
        return len(self._data)

    def __getitem__(self, idx):
        return self._data[idx]


class _LazyTransformDataset(Dataset):
    def __init__(self, data, fn):
        self._data = data
        self._fn = fn

    def __len__(self):
        return len(self._data)

    def __getitem__(self, idx):
        item = self._data[idx]
        if isinstance(item, tuple):
            return self._fn(*item)
        return self._fn(item)


class _TransformFirstClosure:
    """``fn`` applied to the first field (a class, so it pickles for worker processes)."""

    def __init__(self, fn):
        self._fn = fn

    def __call__(self, x, *args):
        if args:
            return (self._fn(x),) + args
        return self._fn(x)


class _SampledDataset(Dataset):
    def __init__(self, dataset, sampler):
        self._dataset = dataset
        self._sampler = sampler
        self._indices = list(iter(sampler))

    def __len__(self):
        return len(self._sampler)

    def __getitem__(self, idx):
        return self._dataset[self._indices[idx]]


def _is_ndarray(x):
    return hasattr(x, "_data") and hasattr(x, "asnumpy")


class ArrayDataset(Dataset):
    """Zips data sets, lists or arrays of equal length: sample ``i`` is ``(a[i], b[i], ...)``.

    A single argument gives its samples unwrapped. A 1-D NDArray is kept as numpy
    (its samples are numbers, as in MXNet).
    """

    def __init__(self, *args):
        if not args:
            raise InvalidArgumentError("ArrayDataset needs at least 1 array")
        self._length = len(args[0])
        self._data = []
        for i, data in enumerate(args):
            if len(data) != self._length:
                raise InvalidArgumentError(
                    f"All arrays must have the same length; array[0] has length {self._length} "
                    f"while array[{i}] has {len(data)}."
                )
            if _is_ndarray(data) and len(data.shape) == 1:
                data = data.asnumpy()
            self._data.append(data)

    def __getitem__(self, idx):
        if len(self._data) == 1:
            return self._data[0][idx]
        return tuple(data[idx] for data in self._data)

    def __len__(self):
        return self._length


class RecordFileDataset(Dataset):
    """The raw records (bytes) of a RecordIO ``.rec`` file with its ``.idx`` beside it.

    Parameters
    ----------
    filename : str
        Path of the ``.rec`` file; the index is the same path with ``.idx``.
    """

    def __init__(self, filename):
        self.idx_file = os.path.splitext(filename)[0] + ".idx"
        self.filename = filename
        self._record = recordio.MXIndexedRecordIO(self.idx_file, self.filename, "r")

    def __getitem__(self, idx):
        return self._record.read_idx(self._record.keys[idx])

    def __len__(self):
        return len(self._record.keys)
