"""File iterators of ``mx.io``: MNISTIter, CSVIter, LibSVMIter (dense) and PrefetchingIter.

They read the whole file once with numpy and serve batches like MXNet's C++
iterators: ``round_batch=True`` fills the last batch from the start of the data
(``pad`` counts the extra samples), MNISTIter drops an incomplete last batch and
scales pixels by 1/256 as MXNet's does. Malformed files raise ``FileFormatError``
(an ``MXNetError``) naming the file and the line.
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

    def __init__(self, data, label, batch_size, round_batch, data_name, label_name, drop_last):
        super().__init__(batch_size)
        self._data, self._label = data, label
        self._round = round_batch
        self._drop_last = drop_last
        self._names = (data_name, label_name)
        self._cursor = 0
        self._batch = None

    @property
    def provide_data(self):
        return [DataDesc(self._names[0], (self.batch_size,) + self._data.shape[1:])]

    @property
    def provide_label(self):
        return [DataDesc(self._names[1], (self.batch_size,) + self._label.shape[1:])]

    def reset(self):
        self._cursor = 0

    def iter_next(self):
        n, bs, c = len(self._data), self.batch_size, self._cursor
        if c >= n or (self._drop_last and c + bs > n):
            return False
        idx = np.arange(c, c + bs)
        pad = max(0, c + bs - n)
        if pad and not self._round:
            idx = idx[: n - c]
        idx = idx % n
        self._batch = (self._data[idx], self._label[idx], pad)
        self._cursor += bs
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


class LibSVMIter(_ArrayIter):
    """A LibSVM file (``label index:value ...``) as dense float32 batches.

    MXNet returns CSR arrays; gluonjax stores every array densely. Labels come from
    the first column, or from ``label_libsvm`` (also LibSVM, ``label_shape`` wide).
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
        first, data = self._load(data_libsvm, int(np.prod(data_shape)))
        if label_libsvm:
            _, label = self._load(label_libsvm, int(np.prod(label_shape)))
        else:
            label = first
        n = len(data)
        start, end = n * part_index // num_parts, n * (part_index + 1) // num_parts
        data = data[start:end].reshape((-1,) + tuple(data_shape))
        label = label[start:end]
        super().__init__(data, label, batch_size, round_batch, "data", "softmax_label", False)

    @staticmethod
    def _load(path, width):
        def parse(line):
            fields = line.split()
            row = np.zeros(width, np.float32)
            for f in fields[1:]:
                k, v = f.split(":")
                k = int(k)
                if not 0 <= k < width:
                    raise InvalidArgumentError(f"feature index {k} is outside [0, {width})")
                row[k] = float(v)
            return float(fields[0]), row

        rows = _read_table(path, "LibSVMIter", parse)
        labels = np.asarray([r[0] for r in rows], np.float32)
        return labels, np.stack([r[1] for r in rows]) if rows else np.zeros((0, width), np.float32)


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
