"""NDArray: the eager value of gluonjax, a mutable handle on an immutable ``jax.Array``.

In-place writes (``a[1:3] = 5``, ``a += b``) build a new jax array and point the
handle at it, so code written for MXNet's mutable arrays runs unchanged.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .. import autograd as _autograd
from .._ops import registry as _reg
from ..base import MXNetError
from ..context import context_of
from ._invoke import check_write, invoke

__all__ = ["NDArray"]

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
        devs = getattr(self._data, "devices", None)
        if devs is None:
            from ..context import current_context

            return current_context()
        return context_of(next(iter(devs())))

    ctx = context

    @property
    def stype(self):
        return "default"

    @property
    def T(self):
        return invoke(_OP("transpose"), (self,), {})

    @property
    def grad(self):
        return self._grad

    @property
    def handle(self):
        return self._data

    # ---------------------------------------------------------------- conversion
    def asnumpy(self):
        """A numpy copy (waits for the computation)."""
        return np.array(self._data)

    def asscalar(self):
        """The value of a one-element array as a Python scalar."""
        if self.size != 1:
            raise MXNetError(f"asscalar() needs an array of size 1, got shape {self.shape}")
        return self.asnumpy().reshape(()).item()

    def item(self):
        return self.asscalar()

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
            return NDArray(jax.device_put(self._data, other.jax_device))
        if other.shape != self.shape:
            raise MXNetError(f"copyto: shape {self.shape} into shape {other.shape}")
        check_write(other, "copyto")
        other._data, other._node = self._data.astype(other.dtype), None
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
            raise TypeError("len() of a 0-d NDArray")
        return self.shape[0]

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __bool__(self):
        if self.size != 1:
            raise MXNetError(
                f"the truth value of an NDArray with {self.size} elements is ambiguous"
            )
        return bool(self.asscalar())

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
        """Allocate a gradient buffer; ``backward`` writes this array's gradient there."""
        if grad_req not in ("write", "add", "null"):
            raise MXNetError(f"grad_req must be 'write', 'add' or 'null', got {grad_req!r}")
        self._grad = NDArray(jnp.zeros(self.shape, self.dtype))
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
        _autograd.backward([self], [out_grad], retain_graph, train_mode)

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
        """Reshape with MXNet's special codes (0, -1, -2, -3, -4); ``reverse`` too."""
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        if shape:
            kwargs["shape"] = shape
        return invoke(_OP("reshape"), (self,), kwargs)

    def zeros_like(self):
        return invoke(_OP("zeros_like"), (self,), {})

    def ones_like(self):
        return invoke(_OP("ones_like"), (self,), {})

    def broadcast_to(self, shape):
        return invoke(_OP("broadcast_to"), (self,), {"shape": shape})

    def tostype(self, stype):
        if stype != "default":
            raise MXNetError("gluonjax stores every array densely (stype='default')")
        return self


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


def _fluent(name):
    op = _OP(name)

    def method(self, *args, **kwargs):
        if args:
            kwargs = dict(kwargs)
            args = _reg.split_positional_attrs(op, (self, *args), kwargs)
            return invoke(op, args, kwargs)
        return invoke(op, (self,), kwargs)

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
