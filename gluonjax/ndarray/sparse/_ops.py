"""MXNet's storage-type rules for ops on sparse inputs, and the sparse-aware ``nd`` functions.

Every op computes its dense value with the registry op (so autograd, ``out=`` and
errors are the registry's); when an input is sparse, the rule of that op (MXNet
1.9.1's storage type inference, checked against MXNet in ``tests/sparse``) gives
the result's storage type and, where MXNet keeps one, its pattern. Ops without a
rule give dense results from sparse inputs, as MXNet's storage fallback does.
"""

from __future__ import annotations

import numpy as np

from ..._caches import LRU, PROCESS
from ..._ops import registry as _reg
from ...base import ArgumentTypeError
from ..ndarray import NDArray
from . import _pattern as P
from . import _rules_extra as _extra
from ._array import BaseSparseNDArray, CSRNDArray, RowSparseNDArray, SparseStorageError, _Lazy

__all__ = [
    "ZERO_PRESERVING",
    "RULES",
    "sparse_aware",
    "cast_storage",
    "retain",
    "dot",
    "slice_rows",
    "binary",
    "CLASSES",
]

CLASSES = {"row_sparse": RowSparseNDArray, "csr": CSRNDArray}

#: unary ops with f(0) == 0: the result keeps the input's storage type and pattern
ZERO_PRESERVING = frozenset(
    "abs arcsin arcsinh arctan arctanh cbrt ceil degrees expm1 fix floor log1p negative "
    "radians relu rint round sign sin sinh sqrt square tan tanh trunc BlockGrad "
    "stop_gradient MakeLoss make_loss _mul_scalar _div_scalar".split()
)

_DENSE = LRU(512, "dense nd functions of sparse ops")


def _dense(name):
    """The registry's own ``nd`` function for ``name`` (dense semantics)."""
    fn = _DENSE.get(name)
    if fn is None:
        from .._generate import make_function

        fn = _DENSE.put(name, make_function(_reg.get(name)))
    return fn


def _st(x):
    return x._stype if isinstance(x, BaseSparseNDArray) else "default"


def _lazy(fn, *xs):
    """``fn`` of the patterns of ``xs``, computed when the result's pattern is first read."""
    srcs = [x._pattern_ref() for x in xs]
    if any(isinstance(s, _Lazy) for s in srcs):
        return _Lazy(fn, srcs)
    return fn(*srcs)


# ---------------------------------------------------------------- the rules
def _keep_first(ins, attrs):
    x = ins[0]
    return (type(x), x._pattern_ref()) if isinstance(x, BaseSparseNDArray) else None


def _clip(ins, attrs):
    lo, hi = attrs.get("a_min"), attrs.get("a_max")
    if lo is not None and hi is not None and float(lo) <= 0.0 <= float(hi):
        return _keep_first(ins, attrs)
    return None  # MXNet refuses; the dense result is the right value


def _zeros_like(ins, attrs):
    x = ins[0]
    if _st(x) == "row_sparse":
        return RowSparseNDArray, np.zeros(0, np.int64)
    if _st(x) == "csr":
        return CSRNDArray, (np.zeros(x.shape[0] + 1, np.int64), np.zeros(0, np.int64))
    return None


def _add_sub(ins, attrs):
    a, b = _st(ins[0]), _st(ins[1])
    if a == b == "row_sparse":  # the rows either operand stores
        return RowSparseNDArray, _lazy(np.union1d, ins[0], ins[1])
    return (CSRNDArray, None) if a == b == "csr" else None


def _mul(ins, attrs):
    (a, b), (x, y) = (_st(ins[0]), _st(ins[1])), ins
    if a != "default" and b == "default":
        return type(x), x._pattern_ref()
    if b != "default" and a == "default":
        return type(y), y._pattern_ref()
    if a == b == "row_sparse":  # MXNet keeps the rows either operand stores
        return RowSparseNDArray, _lazy(np.union1d, x, y)
    return (CSRNDArray, None) if a == b == "csr" else None


def _bcast_mul_div(ins, attrs):
    if _st(ins[0]) == "csr" and _st(ins[1]) == "default":
        return CSRNDArray, ins[0]._pattern_ref()
    return None


def _add_n(ins, attrs):
    return (RowSparseNDArray, None) if all(_st(x) == "row_sparse" for x in ins) else None


def _unique_cols(pattern):
    return np.unique(pattern[1]).astype(np.int64)


def _cols_meeting_rows(pattern, rows):
    """The columns of a csr pattern stored in any of ``rows``."""
    keep = np.isin(P.csr_row_ids(pattern[0]), rows)
    return np.unique(pattern[1][keep]).astype(np.int64)


def _full_rows_of_cols(n_rows):
    def fn(pattern):
        cols = np.unique(pattern[1]).astype(np.int64)
        indptr = np.arange(n_rows + 1, dtype=np.int64) * len(cols)
        return indptr, np.tile(cols, n_rows)

    return fn


def _dot(ins, attrs):
    lhs, rhs = ins[0], ins[1]
    a, b = _st(lhs), _st(rhs)
    ta, tb = bool(attrs.get("transpose_a")), bool(attrs.get("transpose_b"))
    forced = attrs.get("forward_stype")
    if forced in CLASSES:
        return CLASSES[forced], None
    if forced == "default":
        return None
    if a == "default" and b == "csr" and not ta and not tb:
        # every row of the result stores the columns rhs stores
        return CSRNDArray, _lazy(_full_rows_of_cols(lhs.shape[0]), rhs)
    if a == "csr" and ta and not tb and b == "default":
        # the rows of lhs.T @ rhs that can be non-zero: the columns lhs stores
        return RowSparseNDArray, _lazy(_unique_cols, lhs)
    if a == "csr" and ta and not tb and b == "row_sparse":
        return RowSparseNDArray, _lazy(_cols_meeting_rows, lhs, rhs)
    return None


def _concat(ins, attrs):
    dim = int(attrs.get("dim", 1))
    return (CSRNDArray, None) if dim == 0 and all(_st(x) == "csr" for x in ins) else None


def _slice(ins, attrs):
    x = ins[0]
    if _st(x) != "csr":
        return None
    begin, end = tuple(attrs.get("begin") or ()), tuple(attrs.get("end") or ())
    step = tuple(attrs.get("step") or ())
    rows_only = len(begin) <= 1 and all(s in (None, 1) for s in step)
    if rows_only:
        lo, hi, _ = slice(begin[0] if begin else None, end[0] if end else None).indices(x.shape[0])
        return CSRNDArray, _lazy(lambda p: P.slice_csr(p[0], p[1], lo, max(lo, hi)), x)
    return CSRNDArray, None


def _cast(ins, attrs):
    x, stype = ins[0], attrs["stype"]
    if stype == "default":
        return None
    if _st(x) == stype:
        return CLASSES[stype], x._pattern_ref()
    if _st(x) != "default":
        raise SparseStorageError(f"cast_storage from {_st(x)} to {stype} is not supported")
    return CLASSES[stype], None


def _retain(ins, attrs):
    x, idx = ins[0], ins[1]
    if _st(x) != "row_sparse":
        raise SparseStorageError(
            f"retain needs a row_sparse array, got stype {_st(x)!r}; convert it with "
            f".tostype('row_sparse')"
        )
    rows = np.unique(np.asarray(idx.asnumpy() if isinstance(idx, NDArray) else idx, np.int64))
    return RowSparseNDArray, rows[(rows >= 0) & (rows < x.shape[0])]


RULES = dict.fromkeys(ZERO_PRESERVING, _keep_first)
RULES.update(
    clip=_clip,
    zeros_like=_zeros_like,
    elemwise_add=_add_sub,
    elemwise_sub=_add_sub,
    elemwise_mul=_mul,
    broadcast_mul=_bcast_mul_div,
    broadcast_div=_bcast_mul_div,
    add_n=_add_n,
    ElementWiseSum=_add_n,
    dot=_dot,
    Concat=_concat,
    concat=_concat,
    slice=_slice,
    cast_storage=_cast,
    _sparse_retain=_retain,
)
RULES.update(_extra.RULES)
#: rules that must run even on dense inputs (they choose the output storage type)
_ALWAYS = frozenset(("cast_storage", "_sparse_retain")) | _extra.ALWAYS


def _split(op, args, kwargs):
    """(array inputs, attributes) of a call, as the registry parses them."""
    kw = {k: v for k, v in kwargs.items() if k not in ("out", "name")}
    if op.variadic:
        ins = list(args[0]) if len(args) == 1 and isinstance(args[0], (list, tuple)) else list(args)
        return ins, kw
    args = _reg.split_positional_attrs(op, args, kw)
    names = op.inputs if not callable(op.inputs) else ()
    ins = list(args) + [kw.pop(n) for n in names[len(args) :] if n in kw]
    return ins, kw


def _has_sparse(args, kwargs):
    for a in args:
        if isinstance(a, BaseSparseNDArray):
            return True
        if isinstance(a, (list, tuple)) and any(isinstance(b, BaseSparseNDArray) for b in a):
            return True
    return any(isinstance(v, BaseSparseNDArray) for v in kwargs.values())


def _attach(out, cls, pattern):
    PROCESS.sparse_types = (BaseSparseNDArray,)
    out.__class__ = cls
    if pattern is not None:
        out._keep(pattern)
    return out


def sparse_aware(name, dense_fn=None):
    """``nd.<name>`` that gives MXNet's storage type when an input is sparse."""
    op = _reg.get(name)
    rule = RULES[name]
    dense_fn = dense_fn or _dense(name)
    always = name in _ALWAYS
    compute = _csr_dot if name == "dot" else _extra.COMPUTE.get(name)
    sparse_cls = BaseSparseNDArray

    def fn(*args, **kwargs):
        if not always:
            for a in args:
                if isinstance(a, (sparse_cls, list, tuple)):
                    break
            else:
                if not kwargs or not _has_sparse((), kwargs):
                    return dense_fn(*args, **kwargs)
            if not _has_sparse(args, kwargs):
                return dense_fn(*args, **kwargs)
        ins, attrs = _split(op, args, kwargs)
        attrs = {**_defaults(op), **attrs}
        found = rule(ins, attrs)
        res = None
        if compute is not None and kwargs.get("out") is None:
            res = compute(ins, attrs)
        if res is None:
            res = dense_fn(*args, **kwargs)
        if found is None or kwargs.get("out") is not None or type(res) is not NDArray:
            return res
        return _attach(res, *found)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = dense_fn.__doc__
    return fn


def _csr_dot(ins, attrs):
    """``dot(csr, dense)`` with ``jax.experimental.sparse`` when it pays: the csr's pattern
    is known (no transfer to find it) and the csr takes no gradient; else None (dense)."""
    lhs, rhs = ins[0], ins[1]
    if (
        type(lhs) is not CSRNDArray
        or not isinstance(rhs, NDArray)
        or rhs.ndim != 2
        or attrs.get("transpose_b")
        or lhs._node is not None
        or lhs._grad_req not in (None, "null")
        or isinstance(lhs._pattern_ref(), _Lazy)
    ):
        return None
    data, indices = _bcoo_parts(lhs)
    return _dense("_sparse_csr_dot")(
        NDArray(data), NDArray(indices), rhs, shape=lhs.shape, transpose_a=attrs.get("transpose_a")
    )


def _bcoo_parts(csr):
    """The stored values and (row, col) indices of ``csr`` on its device, cached per value."""
    import weakref

    import jax

    data = csr._data
    hit = csr.__dict__.get("_bcoo")
    if hit is not None and hit[0]() is data:
        return hit[1], hit[2]
    indptr, cols = csr._pattern()
    rows = P.csr_row_ids(indptr)
    dev = next(iter(data.devices())) if hasattr(data, "devices") else None
    idx = jax.device_put(np.stack([rows, cols], axis=1).astype(np.int32), dev)
    values = jax.numpy.asarray(data)[idx[:, 0], idx[:, 1]]
    try:
        csr.__dict__["_bcoo"] = (weakref.ref(data), values, idx)
    except TypeError:
        pass
    return values, idx


def _defaults(op):
    return {k: a.default for k, a in op.attrs.items() if a.default is not _reg.REQUIRED}


# ---------------------------------------------------------------- public sparse ops
def cast_storage(data, stype, out=None, name=None):
    """The values of ``data`` in storage type ``stype`` ('default', 'row_sparse', 'csr').

    Examples
    --------
    >>> import gluonjax as mx
    >>> x = mx.nd.sparse.cast_storage(mx.nd.array([[0, 1], [0, 0]]), 'row_sparse')
    >>> x.stype, x.indices.asnumpy().tolist()
    ('row_sparse', [0])
    """
    return _ops_fn("cast_storage")(data, stype=stype, out=out, name=name)


def retain(data, indices=None, out=None, name=None, **kwargs):
    """Keep the rows of row_sparse ``data`` listed in ``indices``; others become zero.

    The result stores exactly the requested rows (sorted, without duplicates).

    Examples
    --------
    >>> import gluonjax as mx
    >>> x = mx.nd.array([[1, 1], [2, 2], [3, 3]]).tostype('row_sparse')
    >>> y = mx.nd.sparse.retain(x, mx.nd.array([2, 0]))
    >>> y.indices.asnumpy().tolist(), y.asnumpy().tolist()
    ([0, 2], [[1.0, 1.0], [0.0, 0.0], [3.0, 3.0]])
    """
    if kwargs:  # MXNet's operator rejects unknown arguments with an MXNetError
        raise ArgumentTypeError(
            f"sparse.retain: unknown argument(s) {sorted(kwargs)}; it takes data, indices, "
            f"out and name"
        )
    if indices is None:
        raise ArgumentTypeError("sparse.retain: missing the indices argument (row ids to keep)")
    return _ops_fn("_sparse_retain")(data, indices, out=out, name=name)


def dot(lhs, rhs, transpose_a=False, transpose_b=False, forward_stype=None, out=None, name=None):
    """Matrix product with MXNet's storage types: ``dot(csr, dense)`` is dense,
    ``dot(csr, dense, transpose_a=True)`` row_sparse, ``dot(dense, csr)`` csr.

    Examples
    --------
    >>> import gluonjax as mx
    >>> a = mx.nd.array([[0, 1], [2, 0]]).tostype('csr')
    >>> y = mx.nd.sparse.dot(a, mx.nd.ones((2, 3)), transpose_a=True)
    >>> y.stype, y.asnumpy().tolist()
    ('row_sparse', [[2.0, 2.0, 2.0], [1.0, 1.0, 1.0]])
    """
    kw = {"transpose_a": transpose_a, "transpose_b": transpose_b}
    if forward_stype is not None:
        kw["forward_stype"] = forward_stype
    return _ops_fn("dot")(lhs, rhs, out=out, name=name, **kw)


def slice_rows(csr, begin, end):
    """Rows ``[begin, end)`` of a CSRNDArray (recorded by autograd like ``nd.slice``)."""
    return _ops_fn("slice")(csr, begin=(begin,), end=(end,))


_WRAPPED = LRU(512, "sparse-aware nd functions")


def _ops_fn(name):
    fn = _WRAPPED.get(name)
    if fn is None:
        fn = _WRAPPED.put(name, sparse_aware(name))
    return fn


# ---------------------------------------------------------------- operators (x + y ...)
_SCALAR_NAME = {"add": "_plus_scalar", "sub": "_minus_scalar", "mul": "_mul_scalar",
                "div": "_div_scalar"}  # fmt: skip
_RSCALAR_NAME = {"add": "_plus_scalar", "sub": "_rminus_scalar", "mul": "_mul_scalar",
                 "div": "_rdiv_scalar"}  # fmt: skip
_SCALARS = (int, float, bool, np.number)


def binary(kind, lhs, rhs, reflected=False):
    """``lhs <kind> rhs`` (kind: add/sub/mul/div) with MXNet's storage types.

    Like MXNet, ``sparse + - * array`` of one shape uses ``elemwise_*``, other shapes
    and ``/`` use ``broadcast_*``; ``array <op> sparse`` (``reflected``) uses
    ``broadcast_*``; a scalar ``*`` or ``/`` keeps the storage type.
    """
    sparse, other = (rhs, lhs) if reflected else (lhs, rhs)
    if isinstance(other, _SCALARS):
        table = _RSCALAR_NAME if reflected else _SCALAR_NAME
        return _ops_fn_or_dense(table[kind])(sparse, scalar=other)
    if not isinstance(other, NDArray):
        import jax.numpy as jnp

        try:
            other = NDArray(jnp.asarray(other))
        except TypeError:
            return NotImplemented
    a, b = (other, sparse) if reflected else (sparse, other)
    if not reflected and kind != "div" and a.shape == b.shape:
        return _ops_fn_or_dense(f"elemwise_{kind}")(a, b)
    return _ops_fn_or_dense(f"broadcast_{kind}")(a, b)


def _ops_fn_or_dense(name):
    return _ops_fn(name) if name in RULES else _dense(name)
