"""``mx.io``: data descriptions, batches and iterators (arrays, MNIST, CSV, LibSVM, RecordIO).

:class:`NDArrayIter` follows MXNet 1.9.1 batch for batch: inputs are sorted by
name, numpy inputs become float32 NDArrays, and ``last_batch_handle`` is
``'pad'`` (the last batch wraps around to the start; ``pad`` counts the extra
samples), ``'discard'`` (the incomplete last batch is dropped) or
``'roll_over'`` (it is dropped and its samples start the next epoch's first
batch after ``reset()``).

Examples
--------
>>> import numpy as np, gluonjax as mx
>>> it = mx.io.NDArrayIter(np.arange(5).reshape(5, 1), np.arange(5), batch_size=2)
>>> [(b.data[0].asnumpy().ravel().tolist(), b.pad) for b in it]
[([0.0, 1.0], 0), ([2.0, 3.0], 0), ([4.0, 0.0], 1)]
"""

from __future__ import annotations

from .base import DataBatch, DataDesc, DataIter
from .file_iters import CSVIter, LibSVMIter, MNISTIter, PrefetchingIter
from .image_record_iter import ImageRecordIter
from .ndarray_iter import NDArrayIter, ResizeIter

__all__ = [
    "DataDesc",
    "DataBatch",
    "DataIter",
    "NDArrayIter",
    "ResizeIter",
    "PrefetchingIter",
    "MNISTIter",
    "CSVIter",
    "LibSVMIter",
    "ImageRecordIter",
]
