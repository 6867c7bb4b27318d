"""NDArrayIter (MXNet 1.9.1 batching, see :mod:`gluonjax.io`) and ResizeIter."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from ..base import ArgumentTypeError, MXNetError
from ..ndarray import NDArray
from ..ndarray import array as _nd_array
from .base import DataBatch, DataDesc, DataIter

__all__ = ["NDArrayIter", "ResizeIter", "SparseBatchError"]


class SparseBatchError(MXNetError, NotImplementedError):
    """A CSR input with a ``last_batch_handle`` other than 'discard' (as in MXNet)."""


def _is_scipy_csr(v):
    return (type(v).__module__ or "").startswith("scipy.sparse") and getattr(
        v, "format", ""
    ) == "csr"


def _rewrap(arr, value):
    """``value`` as an array of ``arr``'s storage type (a csr batch stays csr)."""
    return arr._like(value) if arr.stype != "default" else NDArray(value)


def _as_named(data, allow_empty, default_name):
    """``[(name, NDArray)]`` sorted by name, from an array, a list or a dict."""
    if data is None:
        if not allow_empty:
            raise MXNetError("NDArrayIter: data must not be None")
        data = []
    if isinstance(data, (np.ndarray, NDArray)) or hasattr(data, "__jax_array__"):
        data = [data]
    if isinstance(data, (list, tuple)):
        if not data and not allow_empty:
            raise MXNetError("NDArrayIter: data must not be an empty list")
        if len(data) == 1:
            data = {default_name: data[0]}
        else:
            data = {f"_{i}_{default_name}": d for i, d in enumerate(data)}
    if not isinstance(data, dict):
        raise ArgumentTypeError(
            "Input must be NDArray, numpy.ndarray, a list of them or dict with them as values"
        )
    out = []
    for k, v in data.items():
        if _is_scipy_csr(v):
            from ..ndarray.sparse import array as sparse_array

            v = sparse_array(v)
        if not isinstance(v, NDArray):
            try:
                v = _nd_array(np.asarray(v), dtype=np.float32)
            except (TypeError, ValueError) as err:
                raise ArgumentTypeError(
                    f"Invalid type '{type(v)}' for {k}, should be NDArray or numpy.ndarray ({err})"
                ) from None
        out.append((k, v))
    return sorted(out, key=lambda kv: kv[0])


class NDArrayIter(DataIter):
    """Batches of in-memory arrays (see the module docstring for ``last_batch_handle``).

    Parameters
    ----------
    data : array, list of arrays or dict name -> array
        Arrays share the first (sample) axis. A list of several is named
        ``_0_data``, ``_1_data``...; a dict is ordered by name.
    label : same kinds as ``data``, optional
    batch_size : int, default 1
    shuffle : bool, default False
        Shuffle the samples (with numpy's global generator) at every reset.
    last_batch_handle : {'pad', 'discard', 'roll_over'}, default 'pad'
    data_name, label_name : str
        Names of a single data / label array.
    """

    def __init__(
        self,
        data,
        label=None,
        batch_size=1,
        shuffle=False,
        last_batch_handle="pad",
        data_name="data",
        label_name="softmax_label",
    ):
        super().__init__(batch_size)
        if last_batch_handle not in ("pad", "discard", "roll_over"):
            raise MXNetError(
                f"last_batch_handle must be 'pad', 'discard' or 'roll_over', "
                f"got {last_batch_handle!r}"
            )
        self.data = _as_named(data, False, data_name)
        self.label = _as_named(label, True, label_name)
        if last_batch_handle != "discard" and any(
            a.stype == "csr" for _, a in self.data + self.label
        ):
            raise SparseBatchError(
                "`NDArrayIter` only supports ``CSRNDArray`` with `last_batch_handle` set to "
                "`discard`."
            )
        self.num_data = self.data[0][1].shape[0]
        for name, arr in self.data + self.label:
            # as MXNet, the first data array sets the count; longer arrays are read up to it
            if arr.shape[0] < self.num_data:
                raise MXNetError(
                    f"NDArrayIter: '{name}' has {arr.shape[0]} samples, fewer than the "
                    f"{self.num_data} of '{self.data[0][0]}'"
                )
        self.idx = np.arange(self.num_data)
        self.shuffle = shuffle
        self.last_batch_handle = last_batch_handle
        self.cursor = -batch_size
        self._cache_data = None
        self._cache_label = None
        self.reset()
        self.data_list = [x[1] for x in self.data] + [x[1] for x in self.label]
        self.num_source = len(self.data_list)

    @property
    def provide_data(self):
        return [
            DataDesc(k, (self.batch_size,) + tuple(v.shape[1:]), v.dtype.type) for k, v in self.data
        ]

    @property
    def provide_label(self):
        return [
            DataDesc(k, (self.batch_size,) + tuple(v.shape[1:]), v.dtype.type)
            for k, v in self.label
        ]

    def _shuffle(self):
        np.random.shuffle(self.idx)
        perm = jnp.asarray(self.idx)
        self.data = [(k, _rewrap(v, v._data[perm])) for k, v in self.data]
        self.label = [(k, _rewrap(v, v._data[perm])) for k, v in self.label]

    def hard_reset(self):
        """Start over, dropping any samples kept for ``roll_over``."""
        if self.shuffle:
            self._shuffle()
        self.cursor = -self.batch_size
        self._cache_data = None
        self._cache_label = None

    def reset(self):
        if self.shuffle:
            self._shuffle()
        n, bs = self.num_data, self.batch_size
        if self.last_batch_handle == "roll_over" and n - bs < self.cursor < n:
            # the samples left over from the last batch start the next epoch
            self.cursor = self.cursor - n - bs
        else:
            self.cursor = -bs

    def iter_next(self):
        self.cursor += self.batch_size
        return self.cursor < self.num_data

    def next(self):
        if not self.iter_next():
            raise StopIteration
        data, label = self.getdata(), self.getlabel()
        if data[0].shape[0] != self.batch_size:
            self._cache_data, self._cache_label = data, label
            raise StopIteration
        return DataBatch(data=data, label=label, pad=self.getpad(), index=None)

    @staticmethod
    def _slice(source, start, end):
        return [_rewrap(arr, arr._data[start:end]) for _, arr in source]

    @staticmethod
    def _concat(first, second):
        return [
            NDArray(jnp.concatenate([a._data, b._data], axis=0))
            for a, b in zip(first, second, strict=False)
        ]

    def _batch(self, source, is_label):
        if self.cursor >= self.num_data:
            raise MXNetError("DataIter needs reset.")
        c, bs, n = self.cursor, self.batch_size, self.num_data
        if self.last_batch_handle == "roll_over" and -bs < c < 0:
            cached = self._cache_label if is_label else self._cache_data
            if cached is None:
                raise MXNetError("NDArrayIter: no samples were kept from the last epoch")
            if is_label:
                self._cache_label = None
            else:
                self._cache_data = None
            return self._concat(cached, self._slice(source, 0, c + bs))
        if self.last_batch_handle == "pad" and c + bs > n:
            return self._concat(self._slice(source, c, n), self._slice(source, 0, c + bs - n))
        return self._slice(source, c, min(c + bs, n))

    def getdata(self):
        return self._batch(self.data, False)

    def getlabel(self):
        return self._batch(self.label, True)

    def getpad(self):
        c, bs, n = self.cursor, self.batch_size, self.num_data
        if self.last_batch_handle == "pad" and c + bs > n:
            return c + bs - n
        if self.last_batch_handle == "roll_over" and -bs < c < 0:
            return -c  # as MXNet 1.9.1 reports it for the rolled-over batch
        return 0


class ResizeIter(DataIter):
    """Wraps ``data_iter`` to give exactly ``size`` batches per epoch (restarting it).

    Parameters
    ----------
    data_iter : DataIter
    size : int
    reset_internal : bool, default True
        Reset the inner iterator on :meth:`reset`.
    """

    def __init__(self, data_iter, size, reset_internal=True):
        super().__init__(data_iter.batch_size)
        self.data_iter = data_iter
        self.size = size
        self.reset_internal = reset_internal
        self.cur = 0
        self.current_batch = None
        self.provide_data = data_iter.provide_data
        self.provide_label = data_iter.provide_label
        self.default_bucket_key = getattr(data_iter, "default_bucket_key", None)

    def reset(self):
        self.cur = 0
        if self.reset_internal:
            self.data_iter.reset()

    def iter_next(self):
        if self.cur == self.size:
            return False
        try:
            self.current_batch = self.data_iter.next()
        except StopIteration:
            self.data_iter.reset()
            self.current_batch = self.data_iter.next()
        self.cur += 1
        return True

    def getdata(self):
        return self.current_batch.data

    def getlabel(self):
        return self.current_batch.label

    def getindex(self):
        return self.current_batch.index

    def getpad(self):
        return self.current_batch.pad
