"""``mx.np.ndarray``: an NDArray with NumPy's semantics, as MXNet 1.9.1 defines them.

It is an ``NDArray`` subclass holding the same jax array, taped and traced the same way;
what differs is the surface: NumPy indexing (an integer removes its axis, boolean masks),
NumPy broadcasting and type promotion in operators, 0-d results, and NumPy's ``repr``.
``nd.NDArray.as_np_ndarray()`` and ``ndarray.as_nd_ndarray()`` share memory (no copy), and
basic indexing of a contiguous block (``a[1]``, ``a[2:4]``, ``a[0, 1, 2:5]``) gives a view, as
MXNet's: writing either array shows in the other.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as _np

from .._ops import registry as _reg
from .._ops.attrs import _to_number
from .._ops.defs.np_ops import NP_BINARY
from .._tape import state as _ag
from ..base import ArgumentTypeError, HostOnlyError, MXNetError, ShapeError
from ..ndarray._indexing import basic_view
from ..ndarray._invoke import check_write, invoke
from ..ndarray._view import View, alias_view
from ..ndarray.ndarray import NDArray

__all__ = ["ndarray", "as_np", "call", "binary", "to_array"]

_OP = _reg.get
_slot_get, _slot_set = NDArray.__dict__["_data"].__get__, NDArray.__dict__["_data"].__set__
_GET = _OP("_npi_getitem")
_SET = _OP("_npi_setitem")
_SCALARS = (int, float, bool, _np.number, _np.bool_)


class IndexingError(MXNetError, IndexError):
    """An index NumPy refuses (type or bound)."""


def host_value(x, what):
    """``x``'s value as a NumPy array for ``np.<what>``, whose result's shape depends on the
    values; a traced ``x`` raises :class:`HostOnlyError` (the hybridized block calling it
    then runs op by op)."""
    if isinstance(x, NDArray):
        if isinstance(x._data, jax.core.Tracer):
            raise HostOnlyError(
                f"np.{what} needs its input's values (the result's shape depends on them), "
                f"so it cannot be compiled; the hybridized block runs op by op"
            )
        return x.asnumpy()
    return x


def as_np(res):
    """Make ``invoke``'s result(s) ``mx.np.ndarray`` (the class only: the value is shared)."""
    if type(res) is NDArray:
        res.__class__ = ndarray
        return res
    if isinstance(res, (list, tuple)):
        for r in res:
            if type(r) is NDArray:
                r.__class__ = ndarray
    return res


# ``symbol`` installs its constructor here (a hook, not an upward import): an ``np``/``npx``
# function given a Symbol builds a graph node, as in a symbolic ``hybrid_forward``
SYMBOLIC = [None]


def call(op, args, kwargs, out=None):
    """Run registry op ``op`` eagerly (or traced) and return ``mx.np.ndarray`` results;
    with a Symbol among ``args``, the op's symbol instead."""
    for a in args:
        if not isinstance(a, NDArray) and hasattr(a, "_outputs") and SYMBOLIC[0] is not None:
            return SYMBOLIC[0](op, args, kwargs)
    if out is not None:
        return _into(op, invoke(op, args, kwargs), out)
    res = invoke(op, args, kwargs)
    if type(res) is NDArray:  # the common case, inline
        res.__class__ = ndarray
        return res
    return as_np(res)


def _into(op, res, out):
    """``out=``: the result must have ``out``'s shape and dtype (MXNet's rule)."""
    if isinstance(res, (list, tuple)) or not isinstance(out, NDArray):
        raise ArgumentTypeError(f"{op.name}: out= takes one array for a one-output function")
    if res.dtype != out.dtype or res.shape != out.shape:
        raise ArgumentTypeError(
            f"{op.name}: out= has shape {out.shape} and dtype {out.dtype}, the result has "
            f"shape {res.shape} and dtype {res.dtype}"
        )
    check_write(out, f"{op.name}(..., out=)")
    out._data, out._node = res._data, res._node
    return out


def to_array(x, dtype=None):
    """``x`` as an ``mx.np.ndarray`` (NDArrays are viewed, everything else converted)."""
    if isinstance(x, NDArray):
        return x if isinstance(x, ndarray) else x.as_np_ndarray()
    if hasattr(x, "_outputs"):  # a Symbol: see SYMBOLIC
        return x
    if isinstance(x, jax.Array):
        return ndarray(x)
    a = _np.asarray(x)
    if dtype is None and a.dtype == _np.float64 and not isinstance(x, _np.ndarray):
        a = a.astype(_np.float32)  # Python floats and lists: MXNet's default float32
    if dtype is not None:
        a = a.astype(dtype)
    return ndarray(jnp.asarray(a))


class UfuncArgumentError(MXNetError, NotImplementedError):
    """A NumPy ufunc argument MXNet does not support (``where=False``, ``order='C'``...)."""


_CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")


def check_ufunc_kwargs(public, kwargs):
    """NumPy's ufunc keywords as MXNet takes them: the defaults only (``where=True``,
    ``casting='same_kind'``, ``order='K'``, ``dtype=None``, ``subok=True``); other valid
    values raise ``NotImplementedError``, invalid ones ``TypeError``."""
    for k, v in kwargs.items():
        if k == "where":
            ok = v is True
        elif k == "subok":
            ok = v is True
        elif k == "casting":
            if v not in _CASTINGS:
                raise ArgumentTypeError(f"np.{public}: casting={v!r} is not one of {_CASTINGS}")
            ok = v == "same_kind"
        elif k == "order":
            ok = v == "K"
        elif k == "dtype":
            if v is not None:
                try:
                    _np.dtype(v)
                except TypeError:
                    raise ArgumentTypeError(f"np.{public}: dtype={v!r} is not a dtype") from None
            ok = v is None
        else:
            raise ArgumentTypeError(f"np.{public}() got an unexpected keyword argument '{k}'")
        if not ok:
            raise UfuncArgumentError(
                f"np.{public}: {k}={v!r} is not supported (as in MXNet); leave the default"
            )


def binary(public):
    """``f(x1, x2, out=None)`` of a binary ufunc: arrays broadcast, Python scalars keep
    the array's type where NumPy's rules for scalars say so (one op, or its scalar form)."""
    op, sop, rop = (_OP(n) for n in NP_BINARY[public])

    def f(x1, x2, out=None, **kwargs):
        if kwargs:
            check_ufunc_kwargs(public, kwargs)
        a1, a2 = isinstance(x1, NDArray), isinstance(x2, NDArray)
        if a1 and a2:
            return call(op, (x1, x2), {}, out)
        if a1 and isinstance(x2, _SCALARS):
            return call(sop, (x1,), {"scalar": _to_number(x2)}, out)
        if a2 and isinstance(x1, _SCALARS):
            return call(rop, (x2,), {"scalar": _to_number(x1)}, out)
        if x1 is None or x2 is None:
            raise ArgumentTypeError(
                f"np.{public}: operands must be arrays or numbers, got "
                f"{type(x1).__name__} and {type(x2).__name__}"
            )
        return call(op, (to_array(x1), to_array(x2)), {}, out)

    f.__name__ = f.__qualname__ = public
    f.__doc__ = f"NumPy's ``{public}`` (MXNet op ``{op.name}``)."
    return f


def _operator(public, reverse=False):
    f = binary(public)

    op = _OP(NP_BINARY[public][0])

    def method(self, other):
        if isinstance(other, NDArray):  # the common case: one op, no dispatch
            res = invoke(op, (other, self) if reverse else (self, other), {})
            if type(res) is NDArray:
                res.__class__ = ndarray
            return res
        if not isinstance(other, (_SCALARS, _np.ndarray, jax.Array, list, tuple)):
            return NotImplemented
        return f(other, self) if reverse else f(self, other)

    method.__name__ = f"__{'r' if reverse else ''}{public}__"
    return method


def _int_index(k):
    return isinstance(k, (int, _np.integer)) and not isinstance(k, (bool, _np.bool_))


def _key(self, key):
    """(static key, index arrays) of a NumPy index expression on ``self``."""
    if not isinstance(key, tuple):
        key = (key,)
    static, arrays = [], []
    for k in key:
        if isinstance(k, slice):
            static.append(("s", _slice_int(k.start), _slice_int(k.stop), _slice_int(k.step)))
        elif k is None:
            static.append(("n",))
        elif k is Ellipsis:
            static.append(("e",))
        elif isinstance(k, (bool, _np.bool_)):
            raise IndexingError(
                "ndarray[...]: a Python bool index is not supported (as MXNet); use a boolean "
                "array of the indexed axis's shape"
            )
        elif _int_index(k):
            static.append(("i", int(k)))
        elif _is_bool(k):
            mask = _np.asarray(host_value(k, "ndarray[boolean mask]"))
            _check_mask(self, key, mask, len([s for s in static if s[0] != "n"]))
            for idx in _np.nonzero(mask):
                static.append(("a",))
                arrays.append(ndarray(jnp.asarray(idx.astype(_np.int32))))
        elif isinstance(k, NDArray):
            if not _np.issubdtype(k.dtype, _np.integer):
                raise IndexingError(
                    f"ndarray[...]: index arrays must be integers or booleans, got {k.dtype}"
                )
            static.append(("a",))
            arrays.append(k)
        elif isinstance(k, (list, range, _np.ndarray)):
            a = _np.asarray(k)
            if a.dtype == _np.bool_:
                _check_mask(self, key, a, len([s for s in static if s[0] != "n"]))
                for idx in _np.nonzero(a):
                    static.append(("a",))
                    arrays.append(ndarray(jnp.asarray(idx.astype(_np.int32))))
                continue
            if a.size and not _np.issubdtype(a.dtype, _np.integer):
                raise IndexingError(
                    f"ndarray[...]: index arrays must be integers or booleans, got {a.dtype}"
                )
            static.append(("a",))
            arrays.append(ndarray(jnp.asarray(a.astype(_np.int32))))
        elif isinstance(k, jax.Array):
            static.append(("a",))
            arrays.append(ndarray(k))
        else:
            raise IndexingError(
                f"ndarray[...]: index {k!r} of type {type(k).__name__} is not supported; use "
                f"integers, slices, None, Ellipsis, integer or boolean arrays"
            )
    return tuple(static), arrays


def _scalar_bools(key):
    """Whether ``key`` holds a Python bool or a 0-d boolean array (NumPy reads them as an
    added axis, kept or emptied, combined with the other advanced indices)."""
    keys = key if isinstance(key, tuple) else (key,)
    return any(
        isinstance(k, (bool, _np.bool_))
        or (isinstance(k, (NDArray, _np.ndarray)) and k.ndim == 0 and k.dtype == _np.bool_)
        for k in keys
    )


def _host_positions(arr, key):
    """The flat positions ``key`` selects in ``arr``, computed by NumPy itself on the host
    (every NumPy index form); the gather/scatter on them is recorded as usual."""
    keys = key if isinstance(key, tuple) else (key,)
    host = tuple(host_value(k, "ndarray[boolean index]") for k in keys)
    try:
        pos = _np.arange(arr.size, dtype=_np.int64).reshape(arr.shape)[host]
    except IndexError as err:
        raise IndexingError(f"ndarray[...]: {err} (array of shape {arr.shape})") from None
    return ndarray(jnp.asarray(pos.astype(_np.int32)))


def _check_mask(arr, key, mask, axis):
    """A boolean index must have the shape of the axes it covers (NumPy's IndexError)."""
    if any(k is Ellipsis for k in key):
        return
    covered = arr.shape[axis : axis + mask.ndim]
    if mask.ndim == 0 or covered != mask.shape:
        raise IndexingError(
            f"ndarray[...]: boolean index of shape {mask.shape} does not match the indexed "
            f"axes {covered} (starting at axis {axis}) of the array of shape {arr.shape}"
        )


def _is_bool(k):
    return (isinstance(k, NDArray) and k.dtype == _np.bool_) or (
        isinstance(k, _np.ndarray) and k.dtype == _np.bool_
    )


def _slice_int(v):
    if v is None:
        return None
    if isinstance(v, NDArray):
        return int(v.item())
    if not _int_index(v):
        raise IndexingError(f"ndarray[...]: slice indices must be integers or None, got {v!r}")
    return int(v)


PROTOCOL: dict = {}  # NumPy function name -> mx.np function (filled by gluonjax.numpy)


def _host_tree(v, fn):
    if isinstance(v, (list, tuple)):
        return type(v)(_host_tree(x, fn) for x in v)
    if isinstance(v, dict):
        return {k: _host_tree(x, fn) for k, x in v.items()}
    return fn(v)


def _on_host(func, args, kwargs):
    """``func`` of NumPy copies of the arrays, its array results back as ``mx.np.ndarray``."""
    name = getattr(func, "__name__", "function")
    a = _host_tree(args, lambda v: host_value(v, name))
    k = _host_tree(kwargs, lambda v: host_value(v, name))
    res = func(*a, **k)
    return _host_tree(res, lambda v: to_array(v) if isinstance(v, _np.ndarray) else v)


class ndarray(NDArray):  # noqa: N801 - MXNet's (and NumPy's) name
    """An array with NumPy's semantics (MXNet's ``mx.np.ndarray``).

    Examples
    --------
    >>> import gluonjax as mx
    >>> a = mx.np.array([[1, 2], [3, 4]])
    >>> a.dtype, a[1].shape, a[a > 2].tolist()
    (dtype('float32'), (2,), [3.0, 4.0])
    >>> (a.sum(axis=0) / 2).tolist()
    [2.0, 3.0]
    """

    __slots__ = ()

    def __init__(self, data):
        _slot_set(self, data)

    # A view (``a[1]``, ``as_np_ndarray()``) is an ndarray whose slot holds a ``View``: the
    # window on the base array that reads and writes go through (``ndarray._view``).
    def _read(self):
        v = _slot_get(self)
        return v._data if v.__class__ is View else v

    def _write(self, value):
        try:
            v = _slot_get(self)
        except AttributeError:  # a new object (copy, unpickling)
            v = None
        if v.__class__ is View:
            v._data = value
        else:
            _slot_set(self, value)

    _data = property(_read, _write)
    del _read, _write

    def _copy_as(self):
        return ndarray if type(self) is ndarray else NDArray._copy_as(self)

    # ------------------------------------------------------------------ conversion
    def as_nd_ndarray(self):
        """This array as an ``nd.NDArray`` sharing its memory (a view; under
        ``autograd.record()`` a recorded alias with the same tape link)."""
        return alias(self, NDArray)

    def as_np_ndarray(self):
        return self

    def item(self, *args):
        """The element as a Python scalar (``a.item()`` of a one-element array)."""
        return self.asnumpy().item(*args)

    def tolist(self):
        return self.asnumpy().tolist()

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        """A copy with another dtype (``copy=False`` returns ``self`` when it matches)."""
        from .._ops.defs.np_ops import np_dtype

        dt = np_dtype(dtype) if dtype is not None else _np.dtype(_np.float32)  # MXNet: None
        if not copy and dt == self.dtype:
            return self
        return call(_OP("Cast"), (self,), {"dtype": dt.name})

    def copy(self, order="C"):
        if order != "C":
            raise NotImplementedError(f"ndarray.copy: order={order!r}; only 'C' is supported")
        return call(_OP("_np_copy"), (self,), {})

    def detach(self):
        return ndarray(self._data)

    @property
    def grad(self):
        g = NDArray.grad.fget(self)
        if g is not None and type(g) is not ndarray:
            g._data  # noqa: B018 - a pending gradient settles into its own class first
            if type(g) is NDArray:
                g.__class__ = ndarray
        return g

    @property
    def T(self):
        return self.transpose()

    def __array__(self, dtype=None, copy=None):
        a = _np.asarray(self._data)
        return a.astype(dtype) if dtype is not None else a

    # ------------------------------------------------------------------ NumPy protocols
    def __array_function__(self, func, types, args, kwargs):
        """``numpy.f(mx_array)`` runs ``mx.np.f`` (NEP 18), or NumPy on copies when mx.np
        has no ``f``; results are ``mx.np.ndarray``."""
        mod = getattr(func, "__module__", "") or ""
        name = ("linalg." if "linalg" in mod else "") + func.__name__
        fn = PROTOCOL.get(name)
        if fn is not None:
            return fn(*args, **kwargs)
        return _on_host(func, args, kwargs)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """``numpy.ufunc(mx_array, ...)`` runs ``mx.np``'s function of the ufunc (NEP 13)."""
        fn = PROTOCOL.get(ufunc.__name__) if method == "__call__" else None
        if fn is not None and "out" not in kwargs:
            return fn(*inputs, **kwargs)
        return _on_host(getattr(ufunc, method), inputs, kwargs)

    # ------------------------------------------------------------------ display
    def __repr__(self):
        text = repr(self.asnumpy())
        dt = self.dtype
        if "dtype=" in text:
            if dt == _np.float32:
                text = text[: text.rindex(",")] + ")"
        elif dt not in (_np.float32, _np.bool_):
            text = text[:-1] + f", dtype={dt})"
        ctx = self.context
        if ctx.device_type != "cpu":
            text = text[:-1] + f", ctx={ctx})"
        return text

    def __str__(self):
        text = str(self.asnumpy())
        ctx = self.context
        return text if ctx.device_type == "cpu" else f"{text} @{ctx}"

    def __format__(self, spec):
        if self.ndim == 0:
            return format(self.asnumpy()[()], spec)
        if spec:
            raise TypeError(f"unsupported format string passed to ndarray.__format__: {spec!r}")
        return str(self)

    # ------------------------------------------------------------------ python protocol
    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of unsized object (a 0-d mx.np.ndarray)")
        return self.shape[0]

    def __bool__(self):
        n = self.size
        if n != 1:
            if n == 0:
                return False
            raise ValueError(
                f"The truth value of an array with more than one element (shape {self.shape}) "
                f"is ambiguous. Use a.any() or a.all()"
            )
        return bool(self.asnumpy().reshape(-1)[0])

    def __index__(self):
        if self.size != 1 or not _np.issubdtype(self.dtype, _np.integer):
            raise TypeError("only integer scalar arrays can be converted to a scalar index")
        return int(self.item())

    def __hash__(self):
        return id(self)

    # ------------------------------------------------------------------ indexing
    def __getitem__(self, key):
        if key is Ellipsis or (isinstance(key, tuple) and not key):
            return call(_GET, (self,), {"key": (("e",),)})
        if _scalar_bools(key):
            pos = _host_positions(self, key)
            return call(_GET, (self.reshape(-1), pos), {"key": (("a",),)})
        static, arrays = _key(self, key)
        res = call(_GET, (self, *arrays), {"key": static})
        if arrays or not isinstance(res, NDArray):
            return res
        return basic_view(self, static, res, _GET, _SET, _np_view)

    def __setitem__(self, key, value):
        check_write(self, "ndarray[...] = value")
        if not isinstance(value, NDArray):
            if isinstance(value, _SCALARS):
                value = ndarray(jnp.asarray(value, self.dtype))
            else:
                value = to_array(value, self.dtype)
        if _scalar_bools(key):
            pos = _host_positions(self, key)
            value = value.astype(self.dtype) if value.dtype != self.dtype else value
            flat = invoke(
                _SET,
                (
                    self.reshape(-1),
                    call(_OP("_npi_broadcast_to"), (value,), {"shape": pos.shape}),
                    pos,
                ),
                {"key": (("a",),)},
            )
            res = invoke(_OP("_np_reshape"), (flat,), {"newshape": self.shape})
        else:
            static, arrays = _key(self, key)
            res = invoke(_SET, (self, value, *arrays), {"key": static})
        self._data, self._node = res._data, res._node

    # ------------------------------------------------------------------ operators
    __add__, __radd__ = _operator("add"), _operator("add", True)
    __sub__, __rsub__ = _operator("subtract"), _operator("subtract", True)
    __mul__, __rmul__ = _operator("multiply"), _operator("multiply", True)
    __truediv__, __rtruediv__ = _operator("true_divide"), _operator("true_divide", True)
    __mod__, __rmod__ = _operator("mod"), _operator("mod", True)
    __pow__, __rpow__ = _operator("power"), _operator("power", True)
    __and__, __rand__ = _operator("bitwise_and"), _operator("bitwise_and", True)
    __or__, __ror__ = _operator("bitwise_or"), _operator("bitwise_or", True)
    __xor__, __rxor__ = _operator("bitwise_xor"), _operator("bitwise_xor", True)
    __lt__, __le__ = _operator("less"), _operator("less_equal")
    __gt__, __ge__ = _operator("greater"), _operator("greater_equal")
    _eq, _ne = _operator("equal"), _operator("not_equal")

    def __eq__(self, other):
        return False if other is None else self._eq(other)

    def __ne__(self, other):
        return True if other is None else self._ne(other)

    def __floordiv__(self, other):
        return (
            (self - (self % other)) / other
            if _np.issubdtype(self.dtype, _np.inexact)
            else call(_OP("_npi_true_divide"), (self, to_array(other)), {})
            .floor()
            .astype(self.dtype)
        )

    def __neg__(self):
        return call(_OP("_npi_negative"), (self,), {})

    def __abs__(self):
        return call(_OP("_npi_absolute"), (self,), {})

    def __invert__(self):
        return call(_OP("_npi_bitwise_not"), (self,), {})

    def __matmul__(self, other):
        return call(_OP("_npi_matmul"), (self, to_array(other)), {})

    def __rmatmul__(self, other):
        return call(_OP("_npi_matmul"), (to_array(other), self), {})

    def _inplace(self, method, other, symbol):
        check_write(self, f"'{symbol}'")
        result = method(other)
        if result is NotImplemented:
            return result
        if result.dtype != self.dtype and not _np.can_cast(result.dtype, self.dtype, "same_kind"):
            raise ShapeError(
                f"'{symbol}': cannot cast the result of dtype {result.dtype} to the array's "
                f"dtype {self.dtype} with casting rule 'same_kind'"
            )
        self._data, self._node = result._data.astype(self.dtype), result._node
        return self  # NDArray's __iadd__ ... call this _inplace

    # ------------------------------------------------------------------ shape methods
    def reshape(self, *shape, order="C", **kwargs):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        shape = kwargs.pop("newshape", kwargs.pop("shape", shape))
        if kwargs:
            raise ArgumentTypeError(f"ndarray.reshape: unexpected arguments {sorted(kwargs)}")
        if order != "C":
            raise NotImplementedError("ndarray.reshape: only order='C' is supported")
        return call(_OP("_np_reshape"), (self,), {"newshape": shape})

    def flatten(self, order="C"):
        return self.reshape(-1, order=order)


_ndarray_ops = ndarray  # the class the methods below are installed on


def install_methods(funcs):
    """Attach NumPy's array methods (``a.sum()``, ``a.transpose()``...) from ``funcs``."""
    for name in (
        "sum prod mean max min all any std var argmax argmin cumsum nonzero repeat swapaxes "
        "take sort argsort clip round squeeze ravel diagonal trace dot tile flip"
    ).split():
        fn = funcs.get(name)
        if fn is not None and name not in ndarray.__dict__:
            setattr(ndarray, name, _method(fn))

    def transpose(self, *axes):
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            axes = axes[0]
        return funcs["transpose"](self, axes or None)

    ndarray.transpose = transpose
    for name in ("exp log sqrt abs sin cos tanh sign floor ceil square").split():
        fn = funcs.get(name)
        if fn is not None and name not in ndarray.__dict__:
            setattr(ndarray, name, _method(fn))


def _method(fn):
    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)

    method.__name__ = fn.__name__
    method.__doc__ = f"``np.{fn.__name__}(self, ...)``."
    return method


def _np_view(base, get, put, window=None):
    """An ``mx.np.ndarray`` sharing memory with ``base`` (its slot holds the ``View``)."""
    out = ndarray.__new__(ndarray)
    _slot_set(out, View(base, get, put, window))
    return out


def view_state(x):
    """The ``View`` behind an ``mx.np.ndarray`` view, or None."""
    v = _slot_get(x)
    return v if v.__class__ is View else None


def alias(x, cls):
    """``x`` seen as class ``cls`` (``NDArray`` or ``ndarray``), sharing its memory."""
    if x._node is not None or _ag.is_recording():
        out = cls(x._data)
        out._node = x._node
        return out
    return alias_view(x, _np_view if cls is ndarray else View)
