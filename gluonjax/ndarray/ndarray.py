"""NDArray: the eager value of gluonjax, a mutable handle on an immutable ``jax.Array``.

In-place writes (``a[1:3] = 5``, ``a += b``) build a new jax array and point the
handle at it, so code written for MXNet's mutable arrays runs unchanged.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .._caches import PROCESS
from .._ops import buckets as _buckets
from .._ops import registry as _reg
from .._tape import state as _tape
from ..base import ArgumentTypeError, InvalidArgumentError, MXNetError
from ..context import context_of
from ._invoke import _CLS as _invoke_cls
from ._invoke import check_same_dtype, check_write, invoke

__all__ = ["NDArray", "TruthValueError"]

# MXNet's module-level names (libraries and MXNet's tests import them from here)
py_slice = slice
_DTYPE_NP_TO_MX = {
    None: -1,
    np.float32: 0,
    np.float64: 1,
    np.float16: 2,
    np.uint8: 3,
    np.int32: 4,
    np.int8: 5,
    np.int64: 6,
    np.bool_: 7,
}
_DTYPE_MX_TO_NP = {v: k for k, v in _DTYPE_NP_TO_MX.items()}
_GRAD_REQ_MAP = {"null": 0, "write": 1, "add": 3}


class TruthValueError(MXNetError, ValueError):
    """``bool()`` of an NDArray with more than one element."""


# MXNet's storage type ids (``mx.nd.ndarray._STORAGE_TYPE_STR_TO_ID``); see ndarray.sparse
_STORAGE_TYPE_UNDEFINED = -1
_STORAGE_TYPE_DEFAULT = 0
_STORAGE_TYPE_ROW_SPARSE = 1
_STORAGE_TYPE_CSR = 2
_STORAGE_TYPE_STR_TO_ID = {
    "undefined": _STORAGE_TYPE_UNDEFINED,
    "default": _STORAGE_TYPE_DEFAULT,
    "row_sparse": _STORAGE_TYPE_ROW_SPARSE,
    "csr": _STORAGE_TYPE_CSR,
}
_STORAGE_TYPE_ID_TO_STR = {v: k for k, v in _STORAGE_TYPE_STR_TO_ID.items()}

_OP = _reg.get


def _op(name):
    op = _OP(name)
    return lambda *a, **k: invoke(op, a, k)


_bin = {}


def _binary(name, scalar_name, rscalar_name=None):
    bop, sop = _OP(f"broadcast_{name}" if not name.startswith("_") else name), _OP(scalar_name)
    rop = _OP(rscalar_name) if rscalar_name else sop

    def fwd(self, other):
        if isinstance(other, NDArray):
            if other.dtype != self.dtype:
                check_same_dtype(bop, (self, other))
            return invoke(bop, (self, other), {})
        if isinstance(other, (int, float, np.number, bool)):
            return invoke(sop, (self,), {"scalar": other})
        if isinstance(other, (np.ndarray, jax.Array)):
            return invoke(bop, (self, NDArray(jnp.asarray(other))), {})
        return NotImplemented

    def rev(self, other):
        if isinstance(other, (int, float, np.number, bool)):
            return invoke(rop, (self,), {"scalar": other})
        if isinstance(other, (np.ndarray, jax.Array)):
            return invoke(bop, (NDArray(jnp.asarray(other)), self), {})
        return NotImplemented

    return fwd, rev


class NDArray:
    """An n-dimensional array on a device, with MXNet 1.x's methods.

    Examples
    --------
    >>> import gluonjax as mx
    >>> a = mx.nd.ones((2, 3))
    >>> a[0, 1:] = 5
    >>> (a * 2).asnumpy().tolist()
    [[2.0, 10.0, 10.0], [2.0, 2.0, 2.0]]
    >>> a
    <BLANKLINE>
    [[1. 5. 5.]
     [1. 1. 1.]]
    <NDArray 2x3 @cpu(0)>
    """

    # ``_data`` is a slot; the autograd fields default to None at class level and only
    # arrays that take part in autograd get their own values (cheaper construction)
    __slots__ = ("_data", "__dict__", "__weakref__")
    __array_priority__ = 1000.0
    _grad = None
    _grad_req = None
    _node = None
    _ctx = None  # a logical context (``cpu(i)`` beyond jax's devices) this array is on
    _stype = "default"

    def __init__(self, data):
        self._data = data

    # ---------------------------------------------------------------- properties
    @property
    def shape(self):
        return tuple(self._data.shape)

    @property
    def dtype(self):
        return np.dtype(self._data.dtype)

    @property
    def size(self):
        return int(np.prod(self._data.shape, dtype=np.int64))

    @property
    def ndim(self):
        return self._data.ndim

    @property
    def context(self):
        if self._ctx is not None:
            return self._ctx
        devs = getattr(self._data, "devices", None)
        if devs is None:
            from ..context import current_context

            return current_context()
        return context_of(next(iter(devs())))

    ctx = context

    @property
    def stype(self):
        """The storage type: 'default' (dense), 'row_sparse' or 'csr' (see ndarray.sparse)."""
        return self._stype

    @property
    def T(self):
        return invoke(_OP("transpose"), (self,), {})

    @property
    def grad(self):
        if self._grad_req == "null" and self.__dict__.get("_null_at") != PROCESS.backwards:
            return None  # grad_req='null': None once a backward has run, as in MXNet
        return self._grad

    @property
    def handle(self):
        return self._data

    # ---------------------------------------------------------------- conversion
    def asnumpy(self):
        """A numpy copy (waits for the computation)."""
        return np.array(self._data)

    def asscalar(self):
        """The value of a one-element array as a NumPy scalar of its dtype (as MXNet)."""
        if self.size != 1:
            raise InvalidArgumentError(
                f"asscalar() needs an array of size 1, got shape {self.shape}; "
                f"index one element first (x[i].asscalar())"
            )
        return self.asnumpy().reshape(-1)[0]

    def item(self):
        """The value of a one-element array as a Python scalar."""
        return self.asscalar().item()

    def __array__(self, dtype=None, copy=None):
        a = np.asarray(self._data)
        return a.astype(dtype) if dtype is not None else a

    def __jax_array__(self):
        return self._data

    def astype(self, dtype, copy=True):
        """A copy with another dtype (``copy=False`` returns self if it matches)."""
        dt = _reg.dtype_of(dtype)
        if not copy and dt == self.dtype:
            return self
        return invoke(_OP("Cast"), (self,), {"dtype": dt.name})

    def copy(self):
        return NDArray(self._data)

    def copyto(self, other):
        """Copy into ``other`` (an NDArray, same shape) or to a Context."""
        from ..context import Context

        if isinstance(other, Context):
            out = invoke(_OP("_copy"), (self,), {})  # recorded: gradients flow back
            out._data = jax.device_put(out._data, other.jax_device)
            if other.is_logical:
                out._ctx = other
            return out
        if other.shape != self.shape:
            raise MXNetError(f"copyto: shape {self.shape} into shape {other.shape}")
        check_write(other, "copyto")
        res = invoke(_OP("_copy"), (self,), {})
        value = res._data.astype(other.dtype)
        devs = getattr(other._data, "devices", None)
        if devs is not None and devs() != value.devices():  # the target's device stays
            value = jax.device_put(value, next(iter(devs())))
        other._data, other._node = value, res._node
        return other

    def as_in_context(self, context):
        if context == self.context:
            return self
        return self.copyto(context)

    as_in_ctx = as_in_context

    def wait_to_read(self):
        self._data.block_until_ready()

    def tolist(self):
        return self.asnumpy().tolist()

    def __len__(self):
        if not self.shape:
            raise ArgumentTypeError("len() of a 0-d NDArray")
        return self.shape[0]

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __bool__(self):
        n = self.size
        if n == 0:
            return False  # as MXNet (with a deprecation warning there)
        if n != 1:
            raise TruthValueError(
                f"the truth value of an NDArray with {n} elements (shape {self.shape}) is "
                f"ambiguous; use a.asnumpy().any() or a.asnumpy().all()"
            )
        return bool(self.asscalar())

    # ---------------------------------------------------------------- pickling
    def __getstate__(self):
        """MXNet's pickled state: ``{'handle': bytes}`` of the array in MXNet's format."""
        from .._io.ndformat import write_one

        return {"handle": bytearray(write_one(self.asnumpy()))}

    def __setstate__(self, state):
        """Restore from :meth:`__getstate__` (MXNet's raw array bytes; nothing is
        unpickled from them). An array saved on a GPU loads on the CPU."""
        from .._io.ndformat import read_one

        handle = state.get("handle") if isinstance(state, dict) else None
        if handle is None:
            raise MXNetError("NDArray.__setstate__ needs {'handle': bytes} (MXNet's state)")
        arr = read_one(bytes(handle), source="pickled NDArray")
        self._data = jnp.asarray(arr.astype(jax.dtypes.canonicalize_dtype(arr.dtype)))

    def _copy_as(self):
        """The class a copy gets: views and deferred arrays copy as plain NDArrays."""
        cls = type(self)
        return NDArray if isinstance(getattr(cls, "_data", None), property) else cls

    def __reduce_ex__(self, protocol):
        return _restore, (self._copy_as(), self.__getstate__())

    def __copy__(self):
        cls = self._copy_as()
        new = NDArray.__new__(cls)
        new._data = self._data
        if cls is type(self):
            new.__dict__.update(self.__dict__)
        return new

    def __deepcopy__(self, memo):
        import copy

        cls = self._copy_as()
        new = NDArray.__new__(cls)
        new._data = self._data  # jax arrays are immutable: sharing is a copy
        if cls is type(self):
            new.__dict__.update(copy.deepcopy(self.__dict__, memo))
        return new

    # ---------------------------------------------------------------- dlpack
    def to_dlpack_for_read(self):
        """A DLPack capsule of this array (for reading, e.g. by ``torch.from_dlpack``)."""
        self._data.block_until_ready()
        return self._data.__dlpack__()

    def to_dlpack_for_write(self):
        """A DLPack capsule of this array. jax arrays are immutable: a consumer's writes
        are not seen by this NDArray."""
        return self.to_dlpack_for_read()

    def __float__(self):
        return float(self.asscalar())

    def __int__(self):
        return int(self.asscalar())

    def __index__(self):
        return int(self.asscalar())

    def __hash__(self):
        return id(self)

    # ---------------------------------------------------------------- display
    def __repr__(self):
        shape = "x".join(str(d) for d in self.shape)
        return f"\n{self.asnumpy()}\n<NDArray {shape} @{self.context}>"

    def __str__(self):
        return self.__repr__()

    # ---------------------------------------------------------------- autograd
    def attach_grad(self, grad_req="write", stype=None):
        """Allocate a gradient buffer; ``backward`` writes this array's gradient there.

        ``stype`` is the gradient's storage type (default: this array's, as in MXNet).
        """
        if grad_req not in ("write", "add", "null"):
            raise MXNetError(f"grad_req must be 'write', 'add' or 'null', got {grad_req!r}")
        stype = self.stype if stype is None else stype
        if grad_req == "null":  # MXNet: a zero buffer until a backward runs, then None
            self.__dict__["_null_at"] = PROCESS.backwards
        if stype == "default":
            self._grad = NDArray(_buckets.filled(self.shape, self.dtype, 0))  # no program
        else:
            from .sparse import zeros as sparse_zeros

            self._grad = sparse_zeros(stype, self.shape, self.context, self.dtype)
        self._grad_req = grad_req
        self._node = None
        self.__dict__["_fresh"] = False

    @property
    def _fresh_grad(self):
        """Whether a backward wrote this variable's gradient since it was last reset
        (MXNet's flag; ``Trainer`` and users reset it after using the gradient)."""
        return self.__dict__.get("_fresh", False)

    @_fresh_grad.setter
    def _fresh_grad(self, value):
        self.__dict__["_fresh"] = bool(value)

    def _accumulate_grad(self, ct):
        self.__dict__["_fresh"] = True
        if self._grad_req == "add" and self._grad is not None:
            self._grad._data = self._grad._data + ct
        elif self._grad_req == "write":
            if self._grad is None:
                self._grad = NDArray(ct)
            else:
                g = self._grad
                g._data = ct if ct.dtype == g._data.dtype else ct.astype(g._data.dtype)

    def detach(self):
        """The same values, cut from the tape."""
        return NDArray(self._data)

    def backward(self, out_grad=None, retain_graph=False, train_mode=True):
        """Differentiate this array (see ``autograd.backward``)."""
        PROCESS.backward([self], [out_grad], retain_graph, train_mode)

    # ---------------------------------------------------------------- indexing
    def __getitem__(self, key):
        from ._indexing import getitem

        return getitem(self, key)

    def __setitem__(self, key, value):
        from ._indexing import setitem

        setitem(self, key, value)

    # ---------------------------------------------------------------- arithmetic
    __add__, __radd__ = _binary("add", "_plus_scalar")
    __sub__, __rsub__ = _binary("sub", "_minus_scalar", "_rminus_scalar")
    __mul__, __rmul__ = _binary("mul", "_mul_scalar")
    __truediv__, __rtruediv__ = _binary("div", "_div_scalar", "_rdiv_scalar")
    __mod__, __rmod__ = _binary("mod", "_mod_scalar", "_rmod_scalar")
    __pow__, __rpow__ = _binary("power", "_power_scalar", "_rpower_scalar")
    __eq__, _ = _binary("equal", "_equal_scalar")
    __ne__, _ = _binary("not_equal", "_not_equal_scalar")
    __gt__, _ = _binary("greater", "_greater_scalar")
    __ge__, _ = _binary("greater_equal", "_greater_equal_scalar")
    __lt__, _ = _binary("lesser", "_lesser_scalar")
    __le__, _ = _binary("lesser_equal", "_lesser_equal_scalar")
    del _

    def __neg__(self):
        return invoke(_OP("negative"), (self,), {})

    def __pos__(self):
        return self

    def __abs__(self):
        return invoke(_OP("abs"), (self,), {})

    def __div__(self, other):
        return self.__truediv__(other)

    def __matmul__(self, other):
        return invoke(_OP("dot"), (self, other), {})

    def _inplace(self, method, other, symbol):
        check_write(self, f"'{symbol}'")
        result = method(other)
        if result is NotImplemented:
            return result
        self._data, self._node = result._data.astype(self.dtype), result._node
        return self

    def __iadd__(self, other):
        return self._inplace(self.__add__, other, "+=")

    def __isub__(self, other):
        return self._inplace(self.__sub__, other, "-=")

    def __imul__(self, other):
        return self._inplace(self.__mul__, other, "*=")

    def __itruediv__(self, other):
        return self._inplace(self.__truediv__, other, "/=")

    def __imod__(self, other):
        return self._inplace(self.__mod__, other, "%=")

    # ---------------------------------------------------------------- shape helpers
    def reshape(self, *shape, **kwargs):
        """Reshape with MXNet's special codes (0, -1, -2, -3, -4); ``reverse`` too.

        As in MXNet the result shares memory with this array (a view: writes to
        either show in the other), except under ``autograd.record()``, where the
        reshape is recorded.
        """
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        if shape:
            kwargs["shape"] = shape
        res = invoke(_OP("reshape"), (self,), kwargs)
        if res._node is not None or _tape.is_recording():
            return res
        from ._view import reshape_view

        return reshape_view(self, res.shape)

    def _maybe_view(self, name, kwargs):
        """``flatten``/``squeeze``/``expand_dims``: a view with ``inplace=True`` (MXNet)."""
        inplace = kwargs.pop("inplace", False)
        res = invoke(_OP(name), (self,), kwargs)
        if not inplace or res._node is not None or _tape.is_recording():
            return res
        from ._view import reshape_view

        return reshape_view(self, res.shape)

    def flatten(self, inplace=False, **kwargs):
        """Collapse all axes but the first; ``inplace=True`` returns a view (shares memory)."""
        return self._maybe_view("Flatten", dict(kwargs, inplace=inplace))

    def squeeze(self, axis=None, inplace=False, **kwargs):
        """Remove axes of length one; ``inplace=True`` returns a view (shares memory)."""
        return self._maybe_view("squeeze", dict(kwargs, axis=axis, inplace=inplace))

    def expand_dims(self, axis, inplace=False, **kwargs):
        """Insert an axis of length one; ``inplace=True`` returns a view (shares memory)."""
        return self._maybe_view("expand_dims", dict(kwargs, axis=axis, inplace=inplace))

    def split_v2(self, indices_or_sections, axis=0, squeeze_axis=False):
        """Split into pieces along ``axis`` (see ``nd.split_v2``)."""
        from ._extra import split_v2

        return split_v2(self, indices_or_sections, axis=axis, squeeze_axis=squeeze_axis)

    def moveaxis(self, source, destination):
        """Move axes to new positions (see ``nd.moveaxis``)."""
        from ._extra import moveaxis

        return moveaxis(self, source, destination)

    @staticmethod
    def _basic_indexing_slice_is_contiguous(slc_key, shape):
        """Whether ``a[slc_key]`` (one slice per axis) of a C-contiguous array of ``shape``
        is one contiguous block: going from the last axis to the first, once an axis is
        cut to a proper subset every earlier axis may keep at most one element."""
        from ._indexing import slices_contiguous

        return slices_contiguous(slc_key, shape)

    def zeros_like(self):
        return invoke(_OP("zeros_like"), (self,), {})

    def ones_like(self):
        return invoke(_OP("ones_like"), (self,), {})

    def broadcast_to(self, shape):
        return invoke(_OP("broadcast_to"), (self,), {"shape": shape})

    def tostype(self, stype):
        """A copy with storage type ``stype`` ('default', 'row_sparse' or 'csr').

        Examples
        --------
        >>> import gluonjax as mx
        >>> x = mx.nd.array([[0, 2], [0, 0]]).tostype('csr')
        >>> x.stype, x.data.asnumpy().tolist()
        ('csr', [2.0])
        """
        from .sparse import cast_storage

        return cast_storage(self, stype=stype)


_invoke_cls[0] = NDArray  # the eager path reads the class here (no import per call)


def _restore(cls, state):
    """Unpickle an NDArray from MXNet's state (see ``NDArray.__getstate__``)."""
    obj = NDArray.__new__(cls)
    obj.__setstate__(state)
    return obj


# Fluent methods: x.sum(axis=1), x.exp(), x.softmax() ... each is the registry op.
FLUENT = (
    "sum mean max min prod nansum nanprod norm argmax argmin argmax_channel topk sort argsort "
    "exp expm1 log log1p log2 log10 sqrt rsqrt cbrt rcbrt square abs sign reciprocal sin cos "
    "tan arcsin arccos arctan sinh cosh tanh arcsinh arccosh arctanh degrees radians floor ceil "
    "round rint trunc fix relu sigmoid softmax log_softmax softmin clip transpose expand_dims "
    "squeeze flatten tile repeat flip swapaxes split slice slice_axis slice_like take pick "
    "one_hot broadcast_like broadcast_axes reshape_like diag pad shape_array size_array "
    "depth_to_space space_to_depth dot zeros_like ones_like broadcast_to"
).split()


# MXNet's ``x.squeeze(inplace=True)`` (and flatten, expand_dims) returns a view sharing
# x's memory; jax arrays are immutable, so here it is the same values in a new array.
FLUENT_INPLACE = ("squeeze", "flatten", "expand_dims")


def _fluent(name):
    op = _OP(name)
    drop_inplace = name in FLUENT_INPLACE

    def method(self, *args, out=None, **kwargs):
        if drop_inplace:
            kwargs.pop("inplace", None)
        args = (self, *args)
        if len(args) > 1:
            kwargs = dict(kwargs)
            args = _reg.split_positional_attrs(op, args, kwargs)
        if kwargs and any(k not in op.attrs for k in kwargs):  # inputs by name: shape_like=..
            from ._generate import _named_inputs

            args, kwargs = _named_inputs(op, args, kwargs)
        return invoke(op, args, kwargs, out)

    method.__name__ = name
    method.__doc__ = f"Fluent form of ``nd.{name}(self, ...)``."
    return method


def install_fluent():
    """Attach fluent methods for every registered op in FLUENT (called by nd)."""
    names = set(_reg.list_ops())
    for name in FLUENT:
        if name in names and not hasattr(NDArray, name):
            setattr(NDArray, name, _fluent(name))
    if "Cast" in names and not hasattr(NDArray, "cast"):
        NDArray.cast = lambda self, dtype: self.astype(dtype)
