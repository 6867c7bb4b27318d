"""The functions of ``mx.np``: generated from the op table (``_ops.defs.np_ops``), plus
creation functions and the few whose output shape depends on values (``nonzero``,
``unique``, ``bincount``...), which run on the host as MXNet's do on its CPU."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as _np

from .._ops import registry as _reg
from .._ops.defs.np_ops import NP_BINARY, NP_FUNCS, np_dtype
from ..base import ArgumentTypeError, ShapeError
from ..context import Context
from ..ndarray._view import memory_span
from ..ndarray.ndarray import NDArray
from ._array import as_np, binary, call, check_ufunc_kwargs, host_value, ndarray, to_array

_OP = _reg.get
_F32 = _np.dtype(_np.float32)
_NP_SCALARS = (int, float, bool, _np.number, _np.bool_)


def _place(arr, ctx=None, device=None):
    ctx = ctx if ctx is not None else device
    if ctx is None or not isinstance(ctx, Context) or isinstance(arr._data, jax.core.Tracer):
        return arr  # (a traced value: hybridized, the block's context decides)
    if ctx == arr.context:
        return arr
    return as_np(arr.as_in_context(ctx))


def _context_of(a):
    """``a``'s context, or None for a traced ``a`` (hybridized: the block's context)."""
    return None if isinstance(a._data, jax.core.Tracer) else a.context


def _new(value, ctx=None, device=None):
    return _place(ndarray(value), ctx, device)


def _dt(dtype, default=_F32):
    return np_dtype(dtype) if dtype is not None else default


# ----------------------------------------------------------------------------- creation
def array(object, dtype=None, ctx=None, device=None, copy=True):  # noqa: A002
    """An array from a list, a NumPy array or another array (MXNet's default dtype is
    float32 for Python data; a NumPy array keeps its dtype)."""
    if isinstance(object, NDArray):
        out = object.astype(dtype) if dtype is not None else ndarray(object._data)
        return _place(as_np(out) if type(out) is NDArray else out, ctx, device)
    if isinstance(object, (_np.ndarray, _np.generic)):
        a = _np.asarray(object, dtype=None if dtype is None else np_dtype(dtype))
    else:
        try:
            a = _np.array(object, dtype=_dt(dtype))
        except OverflowError:  # MXNet (NumPy < 1.24) wraps out-of-range Python ints
            a = _np.array(object).astype(_dt(dtype))
    return _new(jnp.asarray(a, dtype=jax.dtypes.canonicalize_dtype(a.dtype)), ctx, device)


asarray = array


def _shape(shape):
    return (int(shape),) if isinstance(shape, (int, _np.integer)) else tuple(int(s) for s in shape)


def zeros(shape, dtype=None, order="C", ctx=None, device=None):
    return _new(jnp.zeros(_shape(shape), _dt(dtype)), ctx, device)


def ones(shape, dtype=None, order="C", ctx=None, device=None):
    return _new(jnp.ones(_shape(shape), _dt(dtype)), ctx, device)


def empty(shape, dtype=None, order="C", ctx=None, device=None):
    if order != "C":
        raise NotImplementedError("np.empty: only order='C' is supported")
    return zeros(shape, dtype, order, ctx, device)


def full(shape, fill_value, dtype=None, order="C", ctx=None, device=None, out=None):
    if isinstance(fill_value, NDArray):
        dt = _dt(dtype, fill_value.dtype)
        return _new(jnp.broadcast_to(fill_value._data.astype(dt), _shape(shape)), ctx, device)
    if dtype is None and isinstance(fill_value, (bool, _np.bool_)):
        dt = _np.dtype(_np.bool_)
    else:
        dt = _dt(dtype)
    return _new(jnp.full(_shape(shape), fill_value, dt), ctx, device)


def _like(fill):
    def f(a, dtype=None, order="C", ctx=None, device=None, out=None, **kw):
        a = to_array(a)
        dt = _dt(dtype, a.dtype)
        if fill == "full":
            value = jnp.full(a.shape, kw["fill_value"], dt)
        else:
            value = (jnp.ones if fill == 1 else jnp.zeros)(a.shape, dt)
        return _new(value, ctx if ctx is not None else _context_of(a), device)

    return f


zeros_like, ones_like = _like(0), _like(1)


def empty_like(prototype, dtype=None, order="C", subok=False, shape=None):
    """A new array shaped like ``prototype`` (MXNet's signature; filled with zeros)."""
    a = to_array(prototype)
    return _new(
        jnp.zeros(a.shape if shape is None else _shape(shape), _dt(dtype, a.dtype)),
        _context_of(a),
    )


def full_like(a, fill_value, dtype=None, order="C", ctx=None, device=None, out=None):
    return _like("full")(a, dtype, order, ctx, device, fill_value=fill_value)


def arange(start, stop=None, step=1, dtype=None, ctx=None, device=None):
    """Evenly spaced values (MXNet's default dtype is float32)."""
    if stop is None:
        start, stop = 0, start
    return _new(jnp.asarray(_np.arange(start, stop, step, dtype=_dt(dtype))), ctx, device)


def linspace(
    start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, ctx=None, device=None
):
    if int(num) < 0:
        raise ShapeError(f"np.linspace: num={num} must be non-negative")
    out = jnp.linspace(start, stop, int(num), endpoint, retstep, _dt(dtype), axis)
    if retstep:
        return _new(out[0], ctx, device), out[1]
    return _new(out, ctx, device)


def logspace(
    start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0, ctx=None, device=None
):
    return _new(jnp.logspace(start, stop, int(num), endpoint, base, _dt(dtype), axis), ctx, device)


def eye(N, M=None, k=0, dtype=None, ctx=None, device=None, **kwargs):  # noqa: N803
    if N < 0 or (M is not None and M < 0):
        raise ShapeError(f"np.eye: N={N} and M={M} must be non-negative")
    return _new(jnp.eye(N, M, k, _dt(dtype)), ctx, device)


def identity(n, dtype=None, ctx=None, device=None):
    return eye(n, dtype=dtype, ctx=ctx, device=device)


def indices(dimensions, dtype=None, ctx=None, device=None):
    dt = _dt(dtype, _np.dtype(_np.int32))
    return _new(jnp.indices(tuple(dimensions), dt), ctx, device)


def meshgrid(*xi, indexing="xy", sparse=False, copy=True):
    """Coordinate arrays, as a tuple (NumPy >= 2; MXNet 1.9.1 returned a list)."""
    return tuple(
        as_np(o)
        for o in _multi(
            "meshgrid", [to_array(x).reshape(-1) for x in xi], indexing=indexing, sparse=sparse
        )
    )


def _window(name):
    def f(M, dtype=None, ctx=None, device=None):  # noqa: N803
        return _new(getattr(jnp, name)(max(int(M), 0)).astype(_dt(dtype)), ctx, device)

    f.__name__ = name
    return f


hanning, hamming, blackman = _window("hanning"), _window("hamming"), _window("blackman")


def _multi(name, arrays, **kw):
    """A jnp function of several arrays with several results, taped through ``stack``-free
    composition: each output is one traced call of the registry's ``_npi_`` kernels."""
    vals = getattr(jnp, name)(*[a._data for a in arrays], **kw)
    return [ndarray(v) for v in vals]


# ----------------------------------------------------------------------------- generated
def _generic(public, op):
    """``np.<public>(*arrays, *attributes, out=None, **kwargs)`` calling ``op``."""
    attr_names = [k for k in op.attrs if not k.startswith("_") and k != "num_args"]
    if op.variadic:

        def f(arrays, *args, out=None, **kwargs):
            arrays = [to_array(a) for a in arrays]
            kw = _attr_kwargs(public, attr_names, args, kwargs)
            kw["num_args"] = len(arrays)
            return call(op, arrays, kw, out)

    else:
        in_names = op.input_names({})
        n_in = len(in_names)

        def f(*args, out=None, ctx=None, device=None, **kwargs):
            if not kwargs and len(args) == n_in and ctx is None and device is None:
                for a in args:
                    if not isinstance(a, NDArray):
                        break
                else:  # arrays only: straight to the op
                    return call(op, args, {}, out)
            arrays = list(args[: len(in_names)])
            for name in in_names[len(arrays) :]:
                if name in kwargs:
                    arrays.append(kwargs.pop(name))
            if len(arrays) < len(in_names):
                raise ArgumentTypeError(
                    f"np.{public}: missing array argument(s) {list(in_names[len(arrays) :])}"
                )
            kw = _attr_kwargs(public, attr_names, args[len(in_names) :], kwargs)
            arrays = [a if isinstance(a, NDArray) else to_array(a) for a in arrays]
            res = call(op, arrays, kw, out)
            return _place(res, ctx, device) if not isinstance(res, list) else res

    f.__name__ = f.__qualname__ = public.rpartition(".")[2]
    f.__doc__ = f"NumPy's ``{public}`` (MXNet op ``{op.name}``)."
    return f


_ALIASES = {"min": "a_min", "max": "a_max"}  # NumPy 2's clip(a, min=, max=)


def _attr_kwargs(public, names, args, kwargs):
    if any(k in _ALIASES for k in kwargs):
        kwargs = {
            (_ALIASES[k] if k in _ALIASES and k not in names else k): v for k, v in kwargs.items()
        }
    if len(args) > len(names):
        raise ArgumentTypeError(f"np.{public}: too many positional arguments")
    kw = dict(zip(names, args))
    for k, v in kwargs.items():
        if k in ("order", "kind", "casting") and k not in names:
            continue
        if k not in names:
            raise ArgumentTypeError(
                f"np.{public}() got an unexpected keyword argument '{k}' (it takes {names})"
            )
        kw[k] = v
    for k, v in kw.items():
        if isinstance(v, NDArray):
            kw[k] = v.asnumpy().tolist()
    return kw


def _unary(public, op):
    """``np.<ufunc>(x, out=None, **ufunc keywords)``."""

    def f(x, out=None, **kwargs):
        if kwargs:
            check_ufunc_kwargs(public, kwargs)
        if not isinstance(x, NDArray):
            x = to_array(x)
        return call(op, (x,), {}, out)

    f.__name__ = f.__qualname__ = public
    f.__doc__ = f"NumPy's ``{public}`` (MXNet op ``{op.name}``)."
    return f


FUNCS = {}
for _public, _opname in NP_FUNCS.items():
    _op = _OP(_opname)
    unary = _opname.startswith("_npi_") and _op.input_names({}) == ("x",) and not _op.attrs
    FUNCS[_public] = (_unary if unary else _generic)(_public, _op)
for _public in NP_BINARY:
    FUNCS[_public] = binary(_public)


def _named_result(public, result):
    """``np.linalg.<public>`` returning NumPy's named tuple (NumPy >= 2 has them: ``EigResult``
    and the like; MXNet 1.9.1 returned a list). A tuple where NumPy has none."""
    fn = FUNCS[public]
    cls = getattr(getattr(_np.linalg, "_linalg", None), result, None)
    cls = tuple if cls is None else (lambda *xs, _c=cls: _c(*xs))

    def f(*args, **kwargs):
        res = fn(*args, **kwargs)
        return cls(*res) if isinstance(res, list) else res

    f.__name__, f.__doc__ = fn.__name__, fn.__doc__
    return f


for _public, _result in (
    ("linalg.eig", "EigResult"),
    ("linalg.eigh", "EighResult"),
    ("linalg.slogdet", "SlogdetResult"),
    ("linalg.qr", "QRResult"),
    ("linalg.svd", "SVDResult"),
):
    FUNCS[_public] = _named_result(_public, _result)


def _pinv(scalar_rcond):
    def pinv(a, rcond=1e-15, hermitian=False):
        """NumPy's ``linalg.pinv``; an array ``rcond`` (one per matrix of the stack, traced
        under ``hybridize()``) runs MXNet's ``_npi_pinv``."""
        if isinstance(rcond, NDArray) or _np.ndim(rcond) > 0:
            r = rcond if isinstance(rcond, NDArray) else to_array(rcond)
            return call(_reg.get("_npi_pinv"), (to_array(a), r), {"hermitian": hermitian})
        return scalar_rcond(a, rcond, hermitian=hermitian)

    return pinv


FUNCS["linalg.pinv"] = _pinv(FUNCS["linalg.pinv"])


def _split_like(axis_default, name, min_ndim):
    def f(ary, indices_or_sections, axis=None):
        ary = to_array(ary)
        if ary.ndim < min_ndim:
            raise ShapeError(f"np.{name}: needs an array of at least {min_ndim} dimensions")
        ax = axis_default if axis is None else axis
        if name == "hsplit" and ary.ndim == 1:
            ax = 0
        return FUNCS["split"](ary, indices_or_sections, axis=ax)

    f.__name__ = name
    return f


hsplit, vsplit, dsplit = (
    _split_like(1, "hsplit", 1),
    _split_like(0, "vsplit", 2),
    _split_like(2, "dsplit", 3),
)


def _split_out(fn):
    def f(ary, indices_or_sections, axis=0):
        if isinstance(indices_or_sections, NDArray):
            indices_or_sections = indices_or_sections.asnumpy().tolist()
        res = fn(to_array(ary), indices_or_sections, axis=axis)
        return list(res) if isinstance(res, (list, tuple)) else [res]

    f.__name__ = fn.__name__
    return f


FUNCS["split"] = _split_out(FUNCS["split"])
FUNCS["array_split"] = _split_out(FUNCS["array_split"])


def _atleast(n):
    def f(*arys):
        out = []
        for a in arys:
            a = to_array(a)
            if a.ndim < n:
                shape = {
                    1: (1,) * (1 - a.ndim) + a.shape,
                    2: ((1, 1) if a.ndim == 0 else (1, a.shape[0])),
                    3: (
                        (1, 1, 1)
                        if a.ndim == 0
                        else (1, a.shape[0], 1)
                        if a.ndim == 1
                        else a.shape + (1,)
                    ),
                }[n]
                a = FUNCS["reshape"](a, shape)
            out.append(a)
        return out[0] if len(out) == 1 else tuple(out)

    f.__name__ = f"atleast_{n}d"
    return f


atleast_1d, atleast_2d, atleast_3d = _atleast(1), _atleast(2), _atleast(3)


def broadcast_arrays(*args):
    arrays = [to_array(a) for a in args]
    shape = _np.broadcast_shapes(*(a.shape for a in arrays))
    return tuple(FUNCS["broadcast_to"](a, shape) for a in arrays)


def append(arr, values, axis=None):
    arr, values = to_array(arr), to_array(values)
    if axis is None:
        return FUNCS["concatenate"]([arr.reshape(-1), values.reshape(-1)], axis=0)
    return FUNCS["concatenate"]([arr, values], axis=axis)


def average(a, axis=None, weights=None, returned=False, out=None):
    a = to_array(a)
    if weights is None:
        return call(_OP("_npi_average_unweighted"), (a,), {"axis": axis, "returned": returned}, out)
    return call(
        _OP("_npi_average"), (a, to_array(weights)), {"axis": axis, "returned": returned}, out
    )


def where(condition, x=None, y=None):
    if x is None and y is None:
        return nonzero(condition)
    return FUNCS["where"](
        to_array(condition),
        x if isinstance(x, NDArray) else to_array(x),
        y if isinstance(y, NDArray) else to_array(y),
    )


def pad(x, pad_width, mode="constant", **kwargs):
    x = to_array(x)
    pw = _np.broadcast_to(_np.asarray(pad_width, dtype=_np.int64), (x.ndim, 2))
    return FUNCS["pad"](x, tuple(map(tuple, pw.tolist())), mode=mode, **kwargs)


def einsum(*operands, out=None, optimize=False, **kwargs):
    subscripts, arrays = operands[0], operands[1:]
    return FUNCS["einsum"](list(arrays), subscripts=subscripts, optimize=bool(optimize), out=out)


def _q_func(name):
    def f(a, q, axis=None, out=None, overwrite_input=None, interpolation="linear", keepdims=False):
        return FUNCS[name](
            to_array(a),
            to_array(q),
            axis=axis,
            interpolation=interpolation,
            keepdims=keepdims,
            out=out,
        )

    f.__name__ = name
    return f


percentile, quantile = _q_func("percentile"), _q_func("quantile")


def shape(a):
    return tuple(to_array(a).shape)


def ndim(a):
    return to_array(a).ndim


def size(a, axis=None):
    a = to_array(a)
    return a.size if axis is None else a.shape[axis]


# ----------------------------------------------------------------------------- host ops
def _host(a, what="function"):
    return host_value(to_array(a), what)


def nonzero(a):
    """Indices of the non-zero elements, one int array per axis (value-dependent size)."""
    return tuple(_from_host(i) for i in _np.nonzero(_np.atleast_1d(_host(a, "nonzero"))))


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None):
    res = _np.unique(_host(ar, "unique"), return_index, return_inverse, return_counts, axis)
    if isinstance(res, tuple):
        return tuple(_from_host(r) for r in res)
    return _from_host(res)


def _from_host(r):
    r = _np.asarray(r)
    return ndarray(jnp.asarray(r, jax.dtypes.canonicalize_dtype(r.dtype)))


def bincount(x, weights=None, minlength=0):
    w = None if weights is None else _host(weights)
    xs = _host(x, "bincount")
    if xs.size and xs.min() < 0:
        raise ShapeError("np.bincount: the input holds negative values")
    return _from_host(_np.bincount(xs, w, minlength))


def histogram(a, bins=10, range=None, normed=None, weights=None, density=None):  # noqa: A002
    b = _host(bins) if isinstance(bins, NDArray) else bins
    h, edges = _np.histogram(
        _host(a, "histogram"),
        b,
        range,
        weights=None if weights is None else _host(weights),
        density=density,
    )
    return _from_host(h), _from_host(edges.astype(_host(a).dtype))


def unravel_index(indices, shape, order="C"):
    """Coordinates of flat ``indices`` in an array of ``shape`` (traceable)."""
    if order != "C":
        raise NotImplementedError("np.unravel_index: only order='C' is supported")
    idx = to_array(indices)
    shape = (int(shape),) if isinstance(shape, (int, _np.integer)) else tuple(shape)
    return tuple(ndarray(i) for i in jnp.unravel_index(idx._data, shape))


def diag_indices_from(arr):
    """Indices of the main diagonal of a square array (from its static shape)."""
    a = to_array(arr)
    if a.ndim < 2 or len(set(a.shape)) != 1:
        raise ShapeError(f"np.diag_indices_from: needs a square array, got shape {a.shape}")
    return tuple(
        ndarray(jnp.arange(a.shape[0], dtype=_np.int64 if jax.config.jax_enable_x64 else _np.int32))
        for _ in range(a.ndim)
    )


def ediff1d(ary, to_end=None, to_begin=None):
    """Differences of the flattened array, with ``to_begin``/``to_end`` around them."""
    a = to_array(ary)
    parts = [FUNCS["diff"](a.reshape(-1))]
    if to_begin is not None:
        parts.insert(0, to_array(to_begin, a.dtype).reshape(-1))
    if to_end is not None:
        parts.append(to_array(to_end, a.dtype).reshape(-1))
    return parts[0] if len(parts) == 1 else FUNCS["concatenate"](parts, axis=0)


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """NaN and infinities replaced by numbers; ``copy=False`` writes into ``x`` (MXNet)."""
    res = FUNCS["nan_to_num"](to_array(x), copy=True, nan=nan, posinf=posinf, neginf=neginf)
    if copy or not isinstance(x, NDArray) or isinstance(x._data, jax.core.Tracer):
        return res  # a traced input is not written (a hybridized forward keeps its inputs)
    x[...] = res
    return x


def insert(arr, obj, values, axis=None):
    o = _host(obj) if isinstance(obj, NDArray) else obj
    a = to_array(arr)
    return call_jnp(lambda x, v: jnp.insert(x, o, v, axis), a, to_array(values, a.dtype))


def delete(arr, obj, axis=None):
    """NumPy's ``delete``; an index array ignores the indices outside ``[0, n)`` (MXNet's
    rule, NumPy's before 1.19)."""
    arr = to_array(arr)
    o = _host(obj) if isinstance(obj, NDArray) else obj
    if isinstance(o, (list, tuple, range, _np.ndarray)) and _np.ndim(o) > 0:
        o = _np.asarray(o)
        if o.dtype != _np.bool_:
            n = arr.size if axis is None else arr.shape[axis]
            o = o[(o >= 0) & (o < n)].astype(_np.int64)
    return call_jnp(lambda x: jnp.delete(x, o, axis), arr)


def call_jnp(fn, *arrays):
    """``fn`` (a jnp function that only moves or repeats elements) of ``arrays``; under
    ``record()`` it becomes a ``take`` of the flattened inputs, so gradients flow."""
    from .._tape.state import is_recording

    if not is_recording():
        return ndarray(fn(*[a._data for a in arrays]))
    # recorded: express it through registry ops (a gather of the flattened input)
    flat = [FUNCS["reshape"](a, (-1,)) for a in arrays]
    sizes = [a.size for a in arrays]
    probe = fn(
        *[
            (jnp.arange(n, dtype=jnp.int32) + sum(sizes[:i])).reshape(a.shape)
            for i, (n, a) in enumerate(zip(sizes, arrays))
        ]
    )
    src = FUNCS["concatenate"](flat, axis=0) if len(flat) > 1 else flat[0]
    return FUNCS["take"](src, ndarray(probe.astype(jnp.int32)))


def shares_memory(a, b, max_work=None):
    """Whether ``a`` and ``b`` share memory: views of one array (basic indexing of contiguous
    blocks, ``as_np_ndarray``) whose element ranges overlap."""
    if not (isinstance(a, NDArray) and isinstance(b, NDArray)):
        return False
    root_a, lo_a, hi_a = memory_span(a)
    root_b, lo_b, hi_b = memory_span(b)
    return root_a is root_b and max(lo_a, lo_b) < min(hi_a, hi_b)


may_share_memory = shares_memory


def resize(a, new_shape):
    return FUNCS["resize"](to_array(a), new_shape=_shape(new_shape))


def round_(a, decimals=0, out=None):
    return FUNCS["around"](a, decimals, out=out)
