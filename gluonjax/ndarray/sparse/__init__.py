"""``mx.nd.sparse``: MXNet's sparse storage types (csr, row_sparse) and their ops.

Every sparse array keeps its whole value as a dense ``jax.Array`` and its storage
pattern (stored rows, or ``indptr``/``indices``) on the host; ops compute on the
dense value and follow MXNet 1.9.1's storage-type rules. ``docs/sparse.md`` says
what this costs and where results differ from MXNet.

Examples
--------
>>> import gluonjax as mx
>>> x = mx.nd.sparse.csr_matrix(([1.0, 2.0], [0, 2], [0, 1, 2]), shape=(2, 3))
>>> w = mx.nd.ones((3, 2))
>>> mx.nd.sparse.dot(x, w).asnumpy().tolist()
[[1.0, 1.0], [2.0, 2.0]]
>>> (x * 3).stype
'csr'
"""

from __future__ import annotations

import numbers as _numbers

from ..._ops import registry as _reg
from ...base import ArgumentTypeError
from ..ndarray import (
    _STORAGE_TYPE_STR_TO_ID,  # noqa: F401  (MXNet's name, re-exported)
    NDArray,
)
from ._array import (
    BaseSparseNDArray,
    CSRNDArray,
    NotSupportedForSparseNDArray,
    RowSparseNDArray,
    SparseStorageError,
    stype_of,
)
from ._create import array, csr_matrix, empty, row_sparse_array, zeros
from ._ops import _ALWAYS, RULES, _dense, cast_storage, dot, retain, sparse_aware

__all__ = [
    "BaseSparseNDArray",
    "CSRNDArray",
    "RowSparseNDArray",
    "NotSupportedForSparseNDArray",
    "SparseStorageError",
    "csr_matrix",
    "row_sparse_array",
    "zeros",
    "empty",
    "array",
    "cast_storage",
    "retain",
    "dot",
    "add",
    "subtract",
    "multiply",
    "divide",
    "stype_of",
]

_STORAGE_AUX_TYPES = {"row_sparse": ["int64"], "csr": ["int64", "int64"]}

#: the operators MXNet 1.9.1 lists in ``mx.nd.sparse`` (its ops with sparse kernels)
OP_NAMES = (
    "ElementWiseSum Embedding FullyConnected LinearRegressionOutput LogisticRegressionOutput "
    "MAERegressionOutput abs adagrad_update adam_update add_n arccos arccosh arcsin arcsinh "
    "arctan arctanh broadcast_add broadcast_div broadcast_minus broadcast_mul broadcast_plus "
    "broadcast_sub cbrt ceil clip concat cos cosh degrees elemwise_add elemwise_div elemwise_mul "
    "elemwise_sub exp expm1 fix floor ftrl_update gamma gammaln log log10 log1p log2 make_loss "
    "mean negative norm radians relu rint round rsqrt sgd_mom_update sgd_update sigmoid sign "
    "sin sinh slice sqrt square stop_gradient sum tan tanh trunc where zeros_like"
).split()


def _op_function(name):
    """The ``nd.sparse`` function of a registry op (sparse-aware when it has a rule)."""
    return sparse_aware(name) if name in RULES else _dense(name)


def _install_ops(namespace):
    for name in OP_NAMES:
        if name not in namespace and name in _reg._REGISTRY:
            namespace[name] = _op_function(name)


def __getattr__(name):  # an op registered after import (e.g. an optimizer update op)
    if name in OP_NAMES and name in _reg._REGISTRY:
        fn = globals()[name] = _op_function(name)
        return fn
    raise AttributeError(f"module 'gluonjax.ndarray.sparse' has no attribute {name!r}")


def _ufunc(kind, lhs, rhs):
    if isinstance(lhs, NDArray) and isinstance(rhs, NDArray):
        fam = "elemwise" if lhs.shape == rhs.shape else "broadcast"
        return _op_function(f"{fam}_{kind}")(lhs, rhs)
    if isinstance(lhs, NDArray) and isinstance(rhs, _numbers.Number):
        return lhs.__getattribute__(f"__{_DUNDER[kind]}__")(rhs)
    if isinstance(rhs, NDArray) and isinstance(lhs, _numbers.Number):
        return rhs.__getattribute__(f"__r{_DUNDER[kind]}__")(lhs)
    if isinstance(lhs, _numbers.Number) and isinstance(rhs, _numbers.Number):
        return _PY[kind](lhs, rhs)
    raise ArgumentTypeError(f"type {type(lhs).__name__} and {type(rhs).__name__} not supported")


_DUNDER = {"add": "add", "sub": "sub", "mul": "mul", "div": "truediv"}
_PY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
}


def add(lhs, rhs):
    """``lhs + rhs``: ``elemwise_add`` for one shape (row_sparse + row_sparse stays
    row_sparse, csr + csr stays csr), ``broadcast_add`` otherwise."""
    return _ufunc("add", lhs, rhs)


def subtract(lhs, rhs):
    """``lhs - rhs`` with MXNet's storage types (see :func:`add`)."""
    return _ufunc("sub", lhs, rhs)


def multiply(lhs, rhs):
    """``lhs * rhs``: ``elemwise_mul`` for one shape (a sparse operand times a dense one
    keeps the sparse storage type), ``broadcast_mul`` otherwise."""
    return _ufunc("mul", lhs, rhs)


def divide(lhs, rhs):
    """``lhs / rhs`` with MXNet's storage types (a sparse array over a scalar stays sparse)."""
    return _ufunc("div", lhs, rhs)


_install_ops(globals())


def install(namespace):
    """Make ``nd.<op>`` sparse-aware for every op with a storage rule (called by ``nd``).

    The generated function hands the call to the storage rule only once a sparse array
    exists, so dense programs pay one flag test per call.
    """
    from .._generate import make_function

    for name in RULES:
        if name in namespace and name in _reg._REGISTRY:
            aware = sparse_aware(name, _dense(name))
            if name in _ALWAYS:  # the rule decides even for dense inputs (retain refuses them)
                namespace[name] = aware
                continue
            fn = make_function(_reg.get(name), sparse_call=aware)
            fn.__name__ = fn.__qualname__ = name
            namespace[name] = fn
    namespace["cast_storage"] = cast_storage
    from ._graph import FUNCTIONS as _graph_ops  # DGL's graph ops: host code on CSR patterns

    namespace.update(_graph_ops)
    _install_fluent()


def _install_fluent():
    from ..ndarray import FLUENT

    for name in FLUENT:
        if name in RULES:
            setattr(BaseSparseNDArray, name, _fluent(sparse_aware(name)))


def _fluent(fn):
    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)

    method.__name__ = fn.__name__
    method.__doc__ = f"Fluent form of ``nd.{fn.__name__}(self, ...)`` (keeps the storage type)."
    return method
