"""DataDesc, DataBatch and the DataIter base class."""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..base import MXNetError

__all__ = ["DataDesc", "DataBatch", "DataIter"]


class DataDesc(namedtuple("DataDesc", ["name", "shape"])):
    """``(name, shape)`` of one input, with ``dtype`` and ``layout`` attributes.

    Compares equal to the plain tuple ``(name, shape)``, as in MXNet.

    Parameters
    ----------
    name : str
    shape : tuple of int
    dtype : numpy dtype, default float32
    layout : str, default 'NCHW'
        Where the batch axis ('N') is; see :meth:`get_batch_axis`.
    """

    def __new__(cls, name, shape, dtype=np.float32, layout="NCHW"):
        ret = super().__new__(cls, name, shape)
        ret.dtype = dtype
        ret.layout = layout
        return ret

    def __repr__(self):
        return f"DataDesc[{self.name},{self.shape},{self.dtype},{self.layout}]"

    @staticmethod
    def get_batch_axis(layout):
        """Index of 'N' in ``layout`` (0 when ``layout`` is None, -1 when absent)."""
        if layout is None:
            return 0
        return layout.find("N")

    @staticmethod
    def get_list(shapes, types):
        """DataDescs from ``[(name, shape)]`` and optional ``[(name, dtype)]``."""
        if types is None:
            return [DataDesc(n, s) for n, s in shapes]
        kinds = dict(types)
        return [DataDesc(n, s, kinds[n]) for n, s in shapes]


class DataBatch:
    """One batch: lists of data and label NDArrays.

    Parameters
    ----------
    data, label : list of NDArray
    pad : int, optional
        Number of samples at the end that only fill the batch up.
    index : array, optional
    bucket_key, provide_data, provide_label : optional
        For bucketing modules and variable-shape batches.
    """

    def __init__(
        self,
        data,
        label=None,
        pad=None,
        index=None,
        bucket_key=None,
        provide_data=None,
        provide_label=None,
    ):
        if data is not None and not isinstance(data, (list, tuple)):
            raise MXNetError(
                f"DataBatch data must be a list of NDArrays, got {type(data).__name__}"
            )
        if label is not None and not isinstance(label, (list, tuple)):
            raise MXNetError(
                f"DataBatch label must be a list of NDArrays, got {type(label).__name__}"
            )
        self.data = data
        self.label = label
        self.pad = pad
        self.index = index
        self.bucket_key = bucket_key
        self.provide_data = provide_data
        self.provide_label = provide_label

    def __str__(self):
        dshapes = [d.shape for d in self.data] if self.data else None
        lshapes = [x.shape for x in self.label] if self.label else None
        return f"{type(self).__name__}: data shapes: {dshapes} label shapes: {lshapes}"


class DataIter:
    """Base class of data iterators: ``for batch in it`` until ``StopIteration``.

    Subclasses define :meth:`iter_next` and :meth:`getdata` (and :meth:`getlabel`,
    :meth:`getpad`, :meth:`getindex`), or override :meth:`next`.
    """

    def __init__(self, batch_size=0):
        self.batch_size = batch_size

    def __iter__(self):
        return self

    def reset(self):
        """Go back to the first batch."""

    def next(self):
        """The next :class:`DataBatch`; raises ``StopIteration`` at the end."""
        if self.iter_next():
            return DataBatch(
                data=self.getdata(), label=self.getlabel(), pad=self.getpad(), index=self.getindex()
            )
        raise StopIteration

    def __next__(self):
        return self.next()

    def iter_next(self):
        """Move to the next batch; False at the end."""
        raise NotImplementedError

    def getdata(self):
        raise NotImplementedError

    def getlabel(self):
        return None

    def getindex(self):
        return None

    def getpad(self):
        return 0
