"""Sparse arrays built from an invalid definition (MXNet builds them; ``check_format`` fails).

MXNet 1.9.1's ``csr_matrix((data, indices, indptr))`` and ``row_sparse_array((data,
indices))`` copy the three arrays as given; only ``check_format()`` says that, e.g., an
``indptr`` decreases. gluonjax keeps every sparse value dense underneath, and an invalid
definition has no dense value: such an array keeps its definition (``data``,
``indices``, ``indptr``, ``shape``, ``dtype``, ``context`` and ``check_format`` work), and
everything that needs its values raises :class:`SparseStorageError` naming the problem,
instead of computing with a guessed value. Assigning a whole value (``a[:] = b``) makes
it a valid array again.

Examples
--------
>>> import gluonjax as mx
>>> a = mx.nd.sparse.csr_matrix(([7, 8, 9], [0, 2, 1], [0, 5, 2, 3]), shape=(3, 4))
>>> a.indptr.asnumpy().tolist()
[0, 5, 2, 3]
>>> try:
...     a.check_format()
... except mx.MXNetError as err:
...     print(type(err).__name__)
SparseStorageError
"""

from __future__ import annotations

import jax
import numpy as np

from ..ndarray import NDArray
from . import _pattern as P
from ._array import CSRNDArray, RowSparseNDArray, SparseStorageError

__all__ = ["malformed"]

_SLOT = NDArray.__dict__["_data"]  # the slot holding the dense value of every NDArray


class _Malformed:
    """Mixin over CSRNDArray / RowSparseNDArray: the definition without a dense value."""

    __slots__ = ()

    @property
    def _data(self):
        raise SparseStorageError(
            f"this {self._stype} array of shape {self.shape} has an invalid definition "
            f"({self.__dict__['_bad'][4]}) and so no value; check_format() reports it. "
            f"Build it again from valid arrays"
        )

    @_data.setter
    def _data(self, value):  # a whole new value: a valid array again
        self.__dict__.pop("_bad", None)
        self.__class__ = self.__class__.__mro__[2]
        _SLOT.__set__(self, value)

    @property
    def shape(self):
        return self.__dict__["_bad"][0]

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def dtype(self):
        return self.__dict__["_bad"][1]

    @property
    def context(self):
        return self.__dict__["_bad"][2]

    ctx = context

    def _raw(self, i):
        return NDArray(jax.device_put(self.__dict__["_bad"][3][i], self.context.jax_device))

    def _pattern(self):
        bad = self.__dict__["_bad"]
        return bad[3][1] if self._stype == "row_sparse" else (bad[3][2], bad[3][1])

    def _pattern_ref(self):
        return self._pattern()

    @property
    def data(self):
        return self._raw(0)

    @property
    def indices(self):
        return self._raw(1)

    @property
    def indptr(self):
        if self._stype != "csr":
            raise AttributeError("a RowSparseNDArray has no indptr")
        return self._raw(2)

    def __repr__(self):
        shape = "x".join(str(d) for d in self.shape)
        return f"\n<{type(self).__mro__[2].__name__} {shape} @{self.context}>"

    __str__ = __repr__

    def __setitem__(self, key, value):
        """``a[:] = value`` gives the array a whole value (and makes it valid)."""
        bad = self.__dict__["_bad"]
        self._data = jax.device_put(np.zeros(bad[0], bad[1]), self.context.jax_device)
        try:
            type(self).__setitem__(self, key, value)  # the valid class now
        except BaseException:
            self.__class__ = _MALFORMED[self._stype]
            self.__dict__["_bad"] = bad
            raise

    def check_format(self, full_check=True):
        """Raise SparseStorageError: the definition is not a valid array of this shape."""
        data, indices = self.__dict__["_bad"][3][:2]
        if self._stype == "csr":
            indptr = self.__dict__["_bad"][3][2]
            if len(indptr) != self.shape[0] + 1 or len(indices) != len(data):
                raise SparseStorageError(f"csr array: {self.__dict__['_bad'][4]}")
            if full_check:
                P.check_csr(indptr, indices, self.shape)
        else:
            if len(indices) != len(data):
                raise SparseStorageError(f"row_sparse array: {self.__dict__['_bad'][4]}")
            if full_check:
                P.check_rows(indices, self.shape)


class MalformedCSRNDArray(_Malformed, CSRNDArray):
    """A CSRNDArray whose ``(data, indices, indptr)`` is invalid (see the module)."""

    __slots__ = ()


class MalformedRowSparseNDArray(_Malformed, RowSparseNDArray):
    """A RowSparseNDArray whose ``(data, indices)`` is invalid (see the module)."""

    __slots__ = ()


_MALFORMED = {"csr": MalformedCSRNDArray, "row_sparse": MalformedRowSparseNDArray}


def malformed(stype, shape, dtype, ctx, arrays, reason):
    """A sparse array that keeps the invalid definition ``arrays`` (data, indices[, indptr]).

    Parameters
    ----------
    stype : str
        'csr' or 'row_sparse'.
    shape : tuple of int
    dtype : numpy dtype
    ctx : Context
    arrays : tuple of numpy.ndarray
        ``(data, indices, indptr)`` for csr, ``(data, indices)`` for row_sparse.
    reason : str
        What is wrong with them (shown by every error).

    Returns
    -------
    MalformedCSRNDArray or MalformedRowSparseNDArray
    """
    out = object.__new__(_MALFORMED[stype])
    out.__dict__["_bad"] = (tuple(shape), np.dtype(dtype), ctx, tuple(arrays), reason)
    return out
