"""Batchify functions: how a DataLoader turns a list of samples into a batch.

``Stack``, ``Pad``, ``Append``, ``Group`` (alias ``Tuple``) and ``AsList`` (alias
``List``), as in MXNet's ``gluon.data.batchify`` and GluonNLP's. They batch with
numpy and give NDArrays (in a data-loader worker, numpy arrays that arrive in
the main process as NDArrays). This module imports no jax.

Examples
--------
>>> from gluonjax.gluon.data import batchify
>>> x, y = batchify.Group(batchify.Pad(val=-1), batchify.Stack())([([1, 2, 3], 0), ([4], 1)])
>>> x.asnumpy().tolist(), y.asnumpy().tolist()
([[1, 2, 3], [4, -1, -1]], [0, 1])
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ..._data.batch import stack_output, to_output
from ..._data.host import raw
from ...base import InvalidArgumentError

__all__ = ["Stack", "Pad", "Append", "Group", "Tuple", "AsList", "List"]


def _is_ndarray(x):
    return hasattr(x, "_data") and hasattr(x, "asnumpy")


class Stack:
    """Stack samples of one shape along a new first axis (tuples/lists: per field)."""

    def __init__(self, use_shared_mem=False):
        self._use_shared_mem = use_shared_mem

    def __call__(self, data):
        first = data[0]
        if _is_ndarray(first):
            return stack_output(data)
        if isinstance(first, (tuple, list)) and not np.isscalar(first[0]):
            return [self(list(field)) for field in zip(*data)]
        return to_output(np.asarray(data))


def _pad(arrs, pad_val, dtype, round_to, axis=None):
    if _is_ndarray(arrs[0]):
        dtype = arrs[0].dtype if dtype is None else dtype
        arrs = [raw(a) for a in arrs]
    elif not isinstance(arrs[0], np.ndarray):
        arrs = [np.asarray(a) for a in arrs]
        dtype = arrs[0].dtype if dtype is None else dtype
    else:
        dtype = arrs[0].dtype if dtype is None else dtype
    shape = list(arrs[0].shape)
    axes = range(len(shape)) if axis is None else [axis]
    for ax in axes:
        size = max(a.shape[ax] for a in arrs)
        if round_to is not None:
            size = round_to * math.ceil(size / round_to)
        shape[ax] = size
    out = np.full((len(arrs), *shape), pad_val, dtype=dtype)
    for i, a in enumerate(arrs):
        out[(i, *(slice(0, d) for d in a.shape))] = a
    return out


class Pad:
    """Pad samples with ``val`` to the largest size on every axis (or on ``axis``), then stack.

    Parameters
    ----------
    val : number, default 0
    dtype : str or numpy dtype, optional
        Default: the samples' dtype.
    round_to : int, optional
        Round each padded size up to a multiple of this.
    axis : int, optional
        Pad only this axis (GluonNLP's ``Pad(axis=...)``); default: every axis.
    pad_val : number, optional
        GluonNLP's name for ``val``.
    ret_length : bool, default False
        Also return the original lengths along ``axis`` (GluonNLP).
    """

    def __init__(
        self,
        val=None,
        dtype=None,
        round_to=None,
        use_shared_mem=False,
        axis=None,
        pad_val=None,
        ret_length=False,
    ):
        self._pad_val = val if val is not None else (pad_val if pad_val is not None else 0)
        self._dtype = dtype
        self._round_to = round_to
        self._axis = axis
        self._ret_length = ret_length
        self._warned = False

    def __call__(self, data):
        if _is_ndarray(data[0]) and not self._warned:
            self._warned = True
            warnings.warn(
                "Using Pad with NDArrays is discouraged for speed reasons: pad numpy arrays "
                "or lists instead.",
                stacklevel=2,
            )
        if not isinstance(data[0], (np.ndarray, list)) and not _is_ndarray(data[0]):
            raise NotImplementedError(
                "Pad() does not support multiple items, use Group(Pad(), Pad(), ...) instead"
            )
        out = to_output(_pad(data, self._pad_val, self._dtype, self._round_to, self._axis))
        if self._ret_length:
            ax = 0 if self._axis is None else self._axis
            lengths = np.asarray([np.shape(raw(d))[ax] for d in data], dtype=np.int32)
            return out, to_output(lengths)
        return out


class Append:
    """A list of the samples as arrays, each with a new batch axis (``expand``)."""

    def __init__(self, expand=True, batch_axis=0, use_shared_mem=False):
        self._expand = expand
        self._batch_axis = batch_axis

    def __call__(self, data):
        out = []
        for d in data:
            a = raw(d) if _is_ndarray(d) else np.asarray(d, dtype=np.float32)
            if self._expand:
                a = np.expand_dims(a, self._batch_axis)
            out.append(to_output(a))
        return out


class Group:
    """Apply the i-th batchify function to the i-th field of every sample; a tuple back.

    ``Group(f1, f2)`` or ``Group([f1, f2])``.
    """

    def __init__(self, fn, *args):
        if isinstance(fn, (list, tuple)):
            if args:
                raise InvalidArgumentError(
                    "Input pattern not understood: use Group(A, B, C) or Group([A, B, C])"
                )
            self._fn = tuple(fn)
        else:
            self._fn = (fn, *args)
        for i, f in enumerate(self._fn):
            if not callable(f):
                raise InvalidArgumentError(
                    f"Batchify functions must be callable! type(fn[{i}]) = {type(f)}"
                )

    def __call__(self, data):
        if len(data[0]) != len(self._fn):
            raise InvalidArgumentError(
                f"The number of attributes in each data sample should contain {len(self._fn)} "
                f"elements, got {len(data[0])}"
            )
        return tuple(f([sample[i] for sample in data]) for i, f in enumerate(self._fn))


Tuple = Group


class AsList:
    """The samples unchanged, as a list."""

    def __call__(self, data):
        return list(data)


List = AsList
