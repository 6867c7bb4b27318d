"""``CSRNDArray`` and ``RowSparseNDArray``: sparse storage types over a dense value.

Each sparse array is an :class:`~gluonjax.ndarray.NDArray` whose ``_data`` is the
whole dense ``jax.Array`` (every op, autograd and the hybridized path read it as
they read any array), plus a storage *pattern* kept on the host: the stored rows
(row_sparse) or ``indptr``/``indices`` (csr). ``data``, ``indices`` and ``indptr``
are read from these two. A pattern belongs to one dense value: when ``_data`` is
replaced (an in-place op, a gradient written by backward) and no new pattern
comes with it, the pattern is derived again from the non-zeros, as MXNet's
``cast_storage`` does. See ``docs/sparse.md``.
"""

from __future__ import annotations

import warnings
import weakref

import jax
import jax.numpy as jnp
import numpy as np

from ..._caches import PROCESS
from ...base import ArgumentTypeError, MXNetError
from ...context import Context
from ..ndarray import NDArray
from . import _pattern as P
from ._pattern import SparseStorageError

__all__ = [
    "BaseSparseNDArray",
    "CSRNDArray",
    "RowSparseNDArray",
    "NotSupportedForSparseNDArray",
    "SparseStorageError",
    "stype_of",
]


class NotSupportedForSparseNDArray(MXNetError, NotImplementedError):
    """An NDArray method that has no meaning for a sparse storage type."""

    def __init__(self, function, alias=None):
        what = f"{function}" + (f" ({alias})" if alias else "")
        super().__init__(
            f"Function {what} is not supported for sparse arrays (CSRNDArray, "
            f"RowSparseNDArray) and only available in NDArray; convert with "
            f".tostype('default') first"
        )


def stype_of(x):
    """``'default'``, ``'row_sparse'`` or ``'csr'`` for an NDArray; None for anything else."""
    return x.stype if isinstance(x, NDArray) else None


class _Lazy:
    """A pattern computed on first use.

    Either ``fn(dense)`` for a dense value (deriving a pattern from the non-zeros),
    or ``fn(*patterns)`` of ``sources``, each a concrete pattern or another ``_Lazy``.
    """

    __slots__ = ("fn", "sources", "dense")

    def __init__(self, fn, sources=(), dense=None):
        self.fn, self.sources, self.dense = fn, tuple(sources), dense

    def resolve(self):
        if self.dense is not None:
            return self.fn(np.asarray(self.dense))
        return self.fn(*(s.resolve() if isinstance(s, _Lazy) else s for s in self.sources))


def _binary(kind, sparse, other, reflected=False):
    from ._ops import binary

    return binary(kind, other, sparse, True) if reflected else binary(kind, sparse, other)


def _sparse_fn(name):
    from ._ops import _ops_fn

    return _ops_fn(name)


def _device_of(data):
    devs = getattr(data, "devices", None)
    return next(iter(devs())) if devs is not None else None


def _gather(data, *index):
    """``data[index]`` (host index arrays) as an NDArray on data's device: on the host for
    a CPU value (a device gather compiles one program per number of stored values)."""
    dev = _device_of(data)
    if dev is None or dev.platform == "cpu":
        return NDArray(jax.device_put(np.asarray(data)[index], dev))
    return NDArray(jnp.asarray(data)[tuple(jax.device_put(i, dev) for i in index)])


class BaseSparseNDArray(NDArray):
    """Base class of the sparse storage types (see :class:`CSRNDArray`,
    :class:`RowSparseNDArray`). Use ``tostype`` or ``nd.sparse`` to make one."""

    __slots__ = ()
    _stype = "default"

    def __init__(self, data, pattern=None):
        self._data = data
        if pattern is not None:
            self._keep(pattern)
        PROCESS.sparse_types = _SPARSE_TYPES

    # ------------------------------------------------------------ pattern
    @staticmethod
    def _derive(dense):
        raise NotImplementedError

    def _keep(self, pattern):
        """Attach ``pattern`` (concrete or ``_Lazy``) to the current dense value."""
        try:
            ref = weakref.ref(self._data)
        except TypeError:  # a value that cannot be weakly referenced: derive on demand
            return
        self.__dict__["_sp"] = (ref, pattern)

    def _pattern_ref(self):
        """The pattern of the current value, concrete or lazy, without a host transfer."""
        sp = self.__dict__.get("_sp")
        data = self._data
        if sp is not None and sp[0]() is data:
            return sp[1]
        return _Lazy(self._derive, dense=data)

    def _pattern(self):
        """The concrete pattern of the current value (derived from it when needed)."""
        p = self._pattern_ref()
        if isinstance(p, _Lazy):
            p = p.resolve()
            self._keep(p)
        return p

    def _host_index(self, values):
        return NDArray(jax.device_put(np.asarray(values), _device_of(self._data)))

    # ------------------------------------------------------------ attributes
    @property
    def stype(self):
        return self._stype

    @property
    def size(self):
        raise NotSupportedForSparseNDArray("size", "the size of a sparse array is ambiguous")

    @property
    def _num_aux(self):
        return 1 if self._stype == "row_sparse" else 2

    @property
    def _aux_types(self):
        return [np.dtype(jax.dtypes.canonicalize_dtype(np.int64))] * self._num_aux

    def __repr__(self):
        shape = "x".join(str(d) for d in self.shape)
        return f"\n<{type(self).__name__} {shape} @{self.context}>"

    __str__ = __repr__

    def _format_problem(self, message):
        """Make ``check_format()`` raise ``message`` while the current value lasts (a
        definition given out of order, which ops accept and MXNet's check refuses)."""
        try:
            self.__dict__["_fmt"] = (weakref.ref(self._data), message)
        except TypeError:
            pass

    def check_format(self, full_check=True):
        """Raise MXNetError if the storage pattern is not valid for the shape."""
        fmt = self.__dict__.get("_fmt")
        if full_check and fmt is not None and fmt[0]() is self._data:
            raise SparseStorageError(fmt[1])
        p = self._pattern()
        if self._stype == "row_sparse":
            P.check_rows(p, self.shape)
        elif full_check:
            P.check_csr(p[0], p[1], self.shape)

    # ------------------------------------------------------------ copies
    def __reduce__(self):
        return _rebuild, (type(self), np.asarray(self._data), self._pattern())

    def __reduce_ex__(self, protocol):  # NDArray's (MXNet's dense state) would drop the pattern
        return self.__reduce__()

    def __deepcopy__(self, memo):
        return self.copy()  # the jax value is immutable: the copy may share it

    def _like(self, data, pattern=None, cls=None):
        out = (cls or type(self))(data)
        if pattern is not None:
            out._keep(pattern)
        if self._ctx is not None:  # a logical context (see context.py) stays
            out._ctx = self._ctx
        return out

    def copy(self):
        """A copy with the same storage type and pattern."""
        return self._like(self._data, self._pattern_ref())

    def detach(self):
        """The same values and pattern, cut from the tape."""
        return self._like(self._data, self._pattern_ref())

    def astype(self, dtype, copy=True):
        """A copy with another dtype and the same storage type and pattern."""
        from ..._ops.registry import dtype_of

        dt = dtype_of(dtype)
        if not copy and dt == self.dtype:
            return self
        return self._like(self._data.astype(dt), self._pattern_ref())

    def copyto(self, other):
        """Copy into ``other`` (dense or the same storage type) or onto a Context."""
        if isinstance(other, Context):
            out = self._like(jax.device_put(self._data, other.jax_device), self._pattern_ref())
            if other.is_logical:
                out._ctx = other
            return out
        if not isinstance(other, NDArray):
            raise ArgumentTypeError(f"copyto does not support type {type(other).__name__}")
        if other.stype not in ("default", self._stype):
            raise ArgumentTypeError(
                f"copyto does not support a destination of stype {other.stype!r} for a "
                f"{self._stype} array; convert with tostype() first"
            )
        if other is self:
            warnings.warn("You are attempting to copy an array to itself", RuntimeWarning, 2)
            return False
        if other.shape != self.shape:
            raise SparseStorageError(f"copyto: shape {self.shape} into shape {other.shape}")
        pattern = self._pattern_ref()
        other._data = self._data.astype(other.dtype)
        if isinstance(other, type(self)):
            other._keep(pattern)
        return other

    def tostype(self, stype):
        """A copy with storage type ``stype`` (csr <-> row_sparse is not allowed)."""
        from ._ops import cast_storage

        other = {"csr": "row_sparse", "row_sparse": "csr"}[self._stype]
        if stype == other:
            raise SparseStorageError(f"cast_storage from {self._stype} to {stype} is not supported")
        return cast_storage(self, stype=stype)

    # ------------------------------------------------------------ unsupported
    def reshape(self, *shape, **kwargs):
        raise NotSupportedForSparseNDArray("reshape")

    def _sync_copyfrom(self, source_array):
        raise NotSupportedForSparseNDArray("_sync_copyfrom")

    # ------------------------------------------------------------ operators
    def __add__(self, other):
        return _binary("add", self, other)

    def __radd__(self, other):
        return _binary("add", self, other, True)

    def __sub__(self, other):
        return _binary("sub", self, other)

    def __rsub__(self, other):
        return _binary("sub", self, other, True)

    def __mul__(self, other):
        return _binary("mul", self, other)

    def __rmul__(self, other):
        return _binary("mul", self, other, True)

    def __truediv__(self, other):
        return _binary("div", self, other)

    def __rtruediv__(self, other):
        return _binary("div", self, other, True)

    def __neg__(self):
        return _sparse_fn("negative")(self)

    def __abs__(self):
        return _sparse_fn("abs")(self)

    # ------------------------------------------------------------ in place
    def _assign(self, result):
        """``self[:] = result`` keeping this array's class (MXNet's ``copyto(self)``)."""
        pattern = result._pattern_ref() if type(result) is type(self) else None
        self._data = result._data.astype(self.dtype)
        self._node = result._node
        if pattern is not None:
            self._keep(pattern)
        return self

    def __iadd__(self, other):
        return self._assign(self + other)

    def __isub__(self, other):
        return self._assign(self - other)

    def __imul__(self, other):
        return self._assign(self * other)

    def __itruediv__(self, other):
        return self._assign(self / other)

    def _set_all(self, key, value, what):
        if not (isinstance(key, slice) and key == slice(None)):
            raise SparseStorageError(f"{what} only supports [:] for assignment, got {key!r}")
        if isinstance(value, NDArray):
            if value is not self:
                value.copyto(self)
            return True
        if isinstance(value, (np.ndarray, np.generic)):
            if value.shape != self.shape:
                raise SparseStorageError(f"cannot assign shape {value.shape} to {self.shape}")
            self._data = jnp.asarray(value, self.dtype)
            return True
        return False


def _comparison(dunder, scalar_op):
    """``sparse <cmp> scalar`` through ``_<cmp>_scalar`` and its storage rule (the result
    stays sparse when ``0 <cmp> scalar`` is false); array operands compare as NDArray."""
    dense = getattr(NDArray, dunder)

    def method(self, other):
        if isinstance(other, (int, float, bool, np.number)):
            return _sparse_fn(scalar_op)(self, scalar=other)
        return dense(self, other)

    method.__name__ = method.__qualname__ = dunder
    return method


for _dunder, _op in (
    ("__eq__", "_equal_scalar"),
    ("__ne__", "_not_equal_scalar"),
    ("__gt__", "_greater_scalar"),
    ("__ge__", "_greater_equal_scalar"),
    ("__lt__", "_lesser_scalar"),
    ("__le__", "_lesser_equal_scalar"),
):
    setattr(BaseSparseNDArray, _dunder, _comparison(_dunder, _op))
BaseSparseNDArray.__hash__ = NDArray.__hash__


def _rebuild(cls, dense, pattern):
    """Unpickle a sparse array (its dense value and its pattern)."""
    return cls(jnp.asarray(dense), pattern)


_SPARSE_TYPES = (BaseSparseNDArray,)  # PROCESS.sparse_types once a sparse array exists


class CSRNDArray(BaseSparseNDArray):
    """A 2-D array in compressed sparse row format.

    The column indices of row ``i`` are ``indices[indptr[i]:indptr[i+1]]``, their
    values ``data[indptr[i]:indptr[i+1]]``.

    Examples
    --------
    >>> import gluonjax as mx
    >>> a = mx.nd.array([[0, 1, 0], [2, 0, 0], [0, 0, 0], [0, 0, 3]]).tostype('csr')
    >>> a.data.asnumpy().tolist(), a.indices.asnumpy().tolist(), a.indptr.asnumpy().tolist()
    ([1.0, 2.0, 3.0], [1, 0, 2], [0, 1, 2, 2, 3])
    >>> a[1:3].asnumpy().tolist()
    [[2.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
    """

    __slots__ = ()
    _stype = "csr"

    @staticmethod
    def _derive(dense):
        return P.csr_from_dense(dense)

    @property
    def indptr(self):
        """The row offsets (``shape[0] + 1`` entries), as an NDArray."""
        return self._host_index(self._pattern()[0])

    @property
    def indices(self):
        """The column index of each stored element, as an NDArray."""
        return self._host_index(self._pattern()[1])

    @property
    def data(self):
        """The stored values, row by row, as an NDArray."""
        indptr, indices = self._pattern()
        return _gather(self._data, P.csr_row_ids(indptr), indices)

    @indptr.setter
    def indptr(self, value):
        raise NotSupportedForSparseNDArray("indptr setter")

    @indices.setter
    def indices(self, value):
        raise NotSupportedForSparseNDArray("indices setter")

    @data.setter
    def data(self, value):
        raise NotSupportedForSparseNDArray("data setter")

    def asscipy(self):
        """A ``scipy.sparse.csr_matrix`` with the same values and pattern."""
        try:
            import scipy.sparse as spsp
        except ImportError:
            raise MXNetError("asscipy() needs scipy: pip install scipy") from None
        indptr, indices = self._pattern()
        return spsp.csr_matrix(
            (self.data.asnumpy(), indices, indptr), shape=self.shape, dtype=self.dtype
        )

    def __getitem__(self, key):
        n = self.shape[0]
        if isinstance(key, tuple):
            if not key or any(k != slice(None) for k in key[1:]):
                raise SparseStorageError(
                    "CSRNDArray supports indexing on the first axis only "
                    f"(an int or a contiguous slice), got {key!r}"
                )
            key = key[0]
        if isinstance(key, (int, np.integer)):
            begin = int(key) + n if key < 0 else int(key)
            if not 0 <= begin < n:
                raise IndexError(f"index {key} is out of bounds for a CSRNDArray of {n} rows")
            return self._rows(begin, begin + 1)
        if isinstance(key, slice):
            if key.step not in (None, 1):
                raise SparseStorageError("CSRNDArray only supports continuous slicing on axis 0")
            if key.start is None and key.stop is None:
                return self
            begin, end, _ = key.indices(n)
            return self._rows(begin, max(begin, end))
        raise SparseStorageError(f"CSRNDArray cannot be indexed with {key!r}")

    def _rows(self, begin, end):
        from ._ops import slice_rows

        return slice_rows(self, begin, end)

    def __setitem__(self, key, value):
        if not self._set_all(key, value, "CSRNDArray"):
            if isinstance(value, (int, float, np.number)):
                raise SparseStorageError("Assigning numeric types to CSRNDArray is not supported")
            raise ArgumentTypeError(f"cannot assign a {type(value).__name__} to a CSRNDArray")


class RowSparseNDArray(BaseSparseNDArray):
    """An array that stores a set of rows (slices along the first axis).

    ``dense[indices[i]] = data[i]``; every other row is zero.

    Examples
    --------
    >>> import gluonjax as mx
    >>> a = mx.nd.array([[1, 2, 3], [0, 0, 0], [4, 0, 5]]).tostype('row_sparse')
    >>> a.indices.asnumpy().tolist(), a.data.asnumpy().tolist()
    ([0, 2], [[1.0, 2.0, 3.0], [4.0, 0.0, 5.0]])
    """

    __slots__ = ()
    _stype = "row_sparse"

    @staticmethod
    def _derive(dense):
        return P.rows_from_dense(dense)

    @property
    def indices(self):
        """The stored row indices (sorted), as an NDArray."""
        return self._host_index(self._pattern())

    @property
    def data(self):
        """The stored rows, shape ``(len(indices),) + shape[1:]``, as an NDArray."""
        return _gather(self._data, self._pattern())

    @indices.setter
    def indices(self, value):
        raise NotSupportedForSparseNDArray("indices setter")

    @data.setter
    def data(self, value):
        raise NotSupportedForSparseNDArray("data setter")

    def retain(self, indices):
        """Fluent form of ``nd.sparse.retain(self, indices)``."""
        from ._ops import retain

        return retain(self, indices)

    def __getitem__(self, key):
        if isinstance(key, slice) and key == slice(None):
            return self
        raise SparseStorageError(f"RowSparseNDArray only supports [:] for indexing, got {key!r}")

    def __setitem__(self, key, value):
        if self._set_all(key, value, "RowSparseNDArray"):
            return
        if isinstance(value, (int, float, np.number, bool)):
            self._data = jnp.full(self.shape, value, self.dtype)
            self._keep(np.arange(self.shape[0], dtype=np.int64))
            return
        raise ArgumentTypeError(f"cannot assign a {type(value).__name__} to a RowSparseNDArray")
