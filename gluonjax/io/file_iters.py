"""File iterators of ``mx.io``: MNISTIter, CSVIter, LibSVMIter (CSR) and PrefetchingIter.

They read the whole file once with numpy and serve batches like MXNet's C++
iterators: ``round_batch=True`` fills the last batch from the start of the data
(``pad`` counts the extra samples), MNISTIter drops an incomplete last batch and
scales pixels by 1/256 as MXNet's does. Malformed files raise ``FileFormatError``
(an ``MXNetError``) naming the file and the line.

CSVIter and LibSVMIter follow MXNet's batch loader over a pass: the data is one
cycle, and a ``reset()`` after a pass whose last batch wrapped to the start does
not rewind, so the next pass begins after the ``pad`` samples already served
(7 rows, batch 3: ``[0 1 2] [3 4 5] [6 0 1]``, then ``[2 3 4] [5 6 0]``, then
``[1 2 3] [4 5 6]``, then from 0 again). MXNet's loader runs in a prefetch thread
up to 16 batches ahead of the consumer, so a pass counts as complete once its
last batch lies within 16 batches of what was consumed, as for a ``reset()``
right after construction, or a second ``reset()`` in a row, on a short file.
With ``round_batch=False`` the last batch keeps its full size and its ``pad``
rows hold the rows of the batch before (zeros where none came before, where
MXNet leaves the memory uninitialized); every ``reset()`` rewinds.
"""

from __future__ import annotations

import queue
import threading

import numpy as np

from ..base import FileFormatError, InvalidArgumentError, MXNetError
from .base import DataBatch, DataDesc, DataIter

__all__ = ["MNISTIter", "CSVIter", "LibSVMIter", "PrefetchingIter"]


def _nd(values):
    from ..ndarray import array

    return array(values, dtype=values.dtype)


class _ArrayIter(DataIter):
    """Batches of in-memory numpy arrays (data, label), MXNet's round_batch rules."""

    # how many batches MXNet's prefetch thread reads ahead of the consumer
    _READ_AHEAD = 16

    def __init__(self, data, label, batch_size, round_batch, data_name, label_name, drop_last):
        super().__init__(batch_size)
        self._data, self._label = data, label
        self._round = round_batch
        self._drop_last = drop_last
        self._names = (data_name, label_name)
        self._start = 0  # row the current pass begins at
        self._cursor = 0  # rows of the current pass served
        self._served = 0  # batches of the current pass served
        self._last = None  # (data, label) of the batch served last
        self._batch = None

    @property
    def provide_data(self):
        return [DataDesc(self._names[0], (self.batch_size,) + self._data.shape[1:])]

    @property
    def provide_label(self):
        return [DataDesc(self._names[1], (self.batch_size,) + self._label.shape[1:])]

    def _pass_shape(self):
        """Number of batches of the current pass and the pad of its last batch."""
        rows = max(0, len(self._data) - self._start)
        batches = -(-rows // self.batch_size)
        return batches, batches * self.batch_size - rows

    def reset(self):
        batches, pad = self._pass_shape()
        wrapped = self._round and not self._drop_last and pad > 0
        # the loader has read the wrapping last batch: it carries on after it
        read = self._served + self._READ_AHEAD >= batches
        self._start = pad if wrapped and read else 0
        self._cursor = self._served = 0

    def iter_next(self):
        n, bs = len(self._data), self.batch_size
        c = self._start + self._cursor
        if c >= n or (self._drop_last and c + bs > n):
            return False
        idx = np.arange(c, min(c + bs, n))
        pad = bs - len(idx)
        if pad and self._round:
            if pad > n:
                raise InvalidArgumentError(
                    f"{type(self).__name__}: batch_size {bs} needs more than the {n} "
                    f"samples of the data to fill its last batch"
                )
            idx = np.concatenate([idx, np.arange(pad)])
        data, label = self._data[idx], self._label[idx]
        if pad and not self._round:
            fill = self._last or (
                np.zeros((bs,) + data.shape[1:], data.dtype),
                np.zeros((bs,) + label.shape[1:], label.dtype),
            )
            data = np.concatenate([data, fill[0][len(idx) :]])
            label = np.concatenate([label, fill[1][len(idx) :]])
        self._last = (data, label)
        self._batch = (data, label, pad)
        self._cursor += bs
        self._served += 1
        return True

    def next(self):
        if not self.iter_next():
            raise StopIteration
        return DataBatch([self.getdata()], [self.getlabel()], pad=self.getpad())

    def getdata(self):
        return _nd(self._batch[0])

    def getlabel(self):
        return _nd(self._batch[1])

    def getpad(self):
        return self._batch[2]

    def get_data(self):
        return self.getdata()


class MNISTIter(_ArrayIter):
    """MNIST idx files (``image``, ``label``) as batches of float32 images in [0, 1).

    Parameters
    ----------
    image, label : str
        idx files (gzip'd or not).
    batch_size : int, default 128
    shuffle : bool, default True
        Shuffle once, with ``seed`` (numpy's generator; MXNet's order is not reproduced).
    flat : bool, default False
        Batches of shape (batch, 784) instead of (batch, 1, 28, 28).
    seed : int, default 0
    num_parts, part_index : int
        Read only part ``part_index`` of ``num_parts``.
    """

    def __init__(
        self,
        image="./train-images-idx3-ubyte",
        label="./train-labels-idx1-ubyte",
        batch_size=128,
        shuffle=True,
        flat=False,
        seed=0,
        silent=False,
        num_parts=1,
        part_index=0,
        data_shape=None,
        input_shape=None,
        **kwargs,
    ):
        from ..gluon.data.vision.datasets import _read_idx

        labels = _read_idx(label, 2049, ()).astype(np.float32)
        images = _read_idx(image, 2051, (28, 28))
        n = len(labels)
        start, end = n * part_index // num_parts, n * (part_index + 1) // num_parts
        images = images[start:end].astype(np.float32) * np.float32(1.0 / 256.0)
        labels = labels[start:end]
        if shuffle:
            perm = np.random.RandomState(seed).permutation(len(labels))
            images, labels = images[perm], labels[perm]
        images = images.reshape(len(labels), -1) if flat else images[:, None]
        super().__init__(images, labels, batch_size, False, "data", "softmax_label", True)


def _read_table(path, what, parse_line):
    rows = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                rows.append(parse_line(line))
            except (ValueError, IndexError) as err:
                raise FileFormatError(
                    f"{what}: '{path}' line {lineno} is malformed ({err}): {line.strip()[:80]!r}"
                ) from None
    return rows


class CSVIter(_ArrayIter):
    """Rows of a CSV file reshaped to ``data_shape`` (labels from ``label_csv``, else 0).

    Parameters
    ----------
    data_csv : str
    data_shape : tuple
    label_csv : str, optional
    label_shape : tuple, default (1,)
    batch_size : int
    round_batch : bool, default True
    dtype : {'float32', 'int32', 'int64'}, default 'float32'
    """

    def __init__(
        self,
        data_csv,
        data_shape,
        label_csv=None,
        label_shape=(1,),
        batch_size=1,
        round_batch=True,
        dtype="float32",
        **kwargs,
    ):
        if dtype not in ("float32", "int32", "int64"):
            raise MXNetError(f"CSVIter: dtype must be float32, int32 or int64, got {dtype}")
        conv = float if dtype == "float32" else int
        data = self._load(data_csv, data_shape, dtype, conv)
        if label_csv:
            label = self._load(label_csv, label_shape, dtype, conv)
        else:
            label = np.zeros((len(data),) + tuple(label_shape), dtype)
        if len(label) != len(data):
            raise FileFormatError(
                f"CSVIter: '{data_csv}' has {len(data)} rows but '{label_csv}' has {len(label)}"
            )
        if tuple(label_shape) == (1,):
            label = label.reshape(len(label))
        super().__init__(data, label, batch_size, round_batch, "data", "softmax_label", False)

    @staticmethod
    def _load(path, shape, dtype, conv):
        size = int(np.prod(shape))

        def parse(line):
            vals = [conv(v) for v in line.strip().split(",")]
            if len(vals) != size:
                raise InvalidArgumentError(
                    f"{len(vals)} values, expected {size} for shape {tuple(shape)}"
                )
            return vals

        rows = _read_table(path, "CSVIter", parse)
        return np.asarray(rows, dtype=dtype).reshape((len(rows),) + tuple(shape))


class _CSRRows:
    """Rows of a CSR matrix held on the host; ``rows[idx]`` selects rows by number."""

    def __init__(self, indptr, indices, values, width):
        self.indptr, self.indices, self.values, self.width = indptr, indices, values, width

    def __len__(self):
        return len(self.indptr) - 1

    @property
    def shape(self):
        return (len(self), self.width)

    def __getitem__(self, rows):
        rows = np.arange(len(self))[rows] if isinstance(rows, slice) else np.asarray(rows)
        starts = self.indptr[rows]
        counts = self.indptr[rows + 1] - starts
        indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        take = np.repeat(starts - indptr[:-1], counts) + np.arange(indptr[-1])
        return _CSRRows(indptr, self.indices[take], self.values[take], self.width)

    def to_nd(self):
        from ..ndarray import sparse

        return sparse.csr_matrix((self.values, self.indices, self.indptr), shape=self.shape)


class LibSVMIter(_ArrayIter):
    """A LibSVM file (``label index:value ...``, zero-based indices) as CSR batches.

    ``data`` comes as a ``CSRNDArray`` of shape (batch_size, data_shape[0]) holding the
    entries the file lists (explicit zeros included). Labels come from the first column
    as a dense (batch_size,) array, or from ``label_libsvm`` (also LibSVM, ``label_shape``
    wide) as a ``CSRNDArray``. Only ``round_batch=True`` exists, as in MXNet.
    """

    def __init__(
        self,
        data_libsvm,
        data_shape,
        label_libsvm=None,
        label_shape=(1,),
        batch_size=1,
        round_batch=True,
        num_parts=1,
        part_index=0,
        **kwargs,
    ):
        if not round_batch:
            raise InvalidArgumentError(
                "LibSVMIter: round_batch=False is not supported, as in MXNet (the last batch "
                "is always filled from the start of the data)"
            )
        data_shape, label_shape = tuple(data_shape), tuple(label_shape)
        if len(data_shape) != 1:
            raise InvalidArgumentError(f"LibSVMIter: data_shape must be 1-D, got {data_shape}")
        if label_libsvm and (len(label_shape) != 1 or label_shape[0] < 2):
            raise InvalidArgumentError(
                f"LibSVMIter: label_shape must be 1-D and wider than 1 with label_libsvm, "
                f"got {label_shape}"
            )
        if not label_libsvm and int(np.prod(label_shape)) != 1:
            raise InvalidArgumentError(
                f"LibSVMIter: label_shape must be (1,) without label_libsvm, got {label_shape}"
            )
        first, data = self._load(data_libsvm, data_shape[0])
        if label_libsvm:
            label = self._load(label_libsvm, label_shape[0])[1]
            if len(label) < len(data):
                raise FileFormatError(
                    f"LibSVMIter: '{label_libsvm}' has {len(label)} rows, fewer than the "
                    f"{len(data)} of '{data_libsvm}'"
                )
        else:
            label = first
        n = len(data)
        start, end = n * part_index // num_parts, n * (part_index + 1) // num_parts
        rows = np.arange(start, end)
        super().__init__(data[rows], label[rows], batch_size, True, "data", "softmax_label", False)

    def getdata(self):
        return self._batch[0].to_nd()

    def getlabel(self):
        label = self._batch[1]
        return label.to_nd() if isinstance(label, _CSRRows) else _nd(label)

    @staticmethod
    def _load(path, width):
        def parse(line):
            fields = line.split()
            pairs = [f.split(":") for f in fields[1:]]
            idx = np.asarray([int(k) for k, _ in pairs], np.int64)
            bad = idx[(idx < 0) | (idx >= width)]
            if bad.size:
                raise InvalidArgumentError(f"feature index {bad[0]} is outside [0, {width})")
            return float(fields[0]), idx, np.asarray([float(v) for _, v in pairs], np.float32)

        rows = _read_table(path, "LibSVMIter", parse)
        labels = np.asarray([r[0] for r in rows], np.float32)
        counts = [len(r[1]) for r in rows]
        indptr = np.concatenate([[0], np.cumsum(counts, dtype=np.int64)]).astype(np.int64)
        indices = np.concatenate([r[1] for r in rows] + [np.zeros(0, np.int64)])
        values = np.concatenate([r[2] for r in rows] + [np.zeros(0, np.float32)])
        return labels, _CSRRows(indptr, indices, values, width)


class PrefetchingIter(DataIter):
    """Runs ``iters`` (one or a list) in background threads, one batch ahead.

    With several iterators a batch joins their data and labels; ``rename_data`` /
    ``rename_label`` (a dict per iterator) rename the descriptions.
    """

    def __init__(self, iters, rename_data=None, rename_label=None):
        iters = iters if isinstance(iters, list) else [iters]
        super().__init__(iters[0].batch_size)
        self.iters = iters
        self.rename_data = rename_data
        self.rename_label = rename_label
        self._queues = [queue.Queue(maxsize=1) for _ in iters]
        self._threads = []
        self._go = [threading.Event() for _ in iters]
        self.current_batch = None
        self._start()

    def _start(self):
        def run(it, q, go):
            while True:
                go.wait()
                go.clear()
                try:
                    q.put(("ok", it.next()))
                except StopIteration:
                    q.put(("end", None))
                except Exception as err:  # raised in the consumer
                    q.put(("err", err))

        for it, q, go in zip(self.iters, self._queues, self._go):
            t = threading.Thread(target=run, args=(it, q, go), daemon=True)
            t.start()
            self._threads.append(t)
            go.set()

    def _descs(self, attr, renames):
        out = []
        for i, it in enumerate(self.iters):
            for d in getattr(it, attr):
                name, shape = d[0], d[1]
                if renames:
                    name = renames[i].get(name, name)
                out.append(DataDesc(name, shape))
        return out

    @property
    def provide_data(self):
        return self._descs("provide_data", self.rename_data)

    @property
    def provide_label(self):
        return self._descs("provide_label", self.rename_label)

    def reset(self):
        for q in self._queues:  # wait for the batch in flight, then restart
            q.get()
        for it in self.iters:
            it.reset()
        for go in self._go:
            go.set()

    def iter_next(self):
        got = [q.get() for q in self._queues]
        for kind, value in got:
            if kind == "err":
                raise value
        if any(kind == "end" for kind, _ in got):
            for q, (kind, value) in zip(self._queues, got):
                q.put((kind, value))  # keep the end mark for reset()
            return False
        batches = [b for _, b in got]
        self.current_batch = DataBatch(
            sum([b.data for b in batches], []),
            sum([b.label or [] for b in batches], []),
            batches[0].pad,
            batches[0].index,
        )
        for go in self._go:
            go.set()
        return True

    def next(self):
        if self.iter_next():
            return self.current_batch
        raise StopIteration

    def getdata(self):
        return self.current_batch.data

    def getlabel(self):
        return self.current_batch.label

    def getindex(self):
        return self.current_batch.index

    def getpad(self):
        return self.current_batch.pad
