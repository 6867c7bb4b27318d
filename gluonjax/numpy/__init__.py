"""``mx.np``: MXNet's NumPy-compatible array interface (MXNet 1.9.1's ``mxnet.numpy``).

Arrays are :class:`ndarray` (an ``NDArray`` with NumPy's semantics); every function is a
registry op (``_ops.defs.np_ops``) run through the same eager path, tape and
``hybridize()`` tracing as ``mx.nd``. See docs/numpy.md for what differs from MXNet.

Examples
--------
>>> import gluonjax as mx
>>> from gluonjax import np
>>> x = np.arange(6).reshape(2, 3)
>>> np.sum(x, axis=1).tolist(), x.dtype
([3.0, 12.0], dtype('float32'))
"""

from __future__ import annotations

import numpy as _onp

from ..ndarray.ndarray import NDArray as _NDArray
from . import _funcs
from ._array import alias as _alias
from ._array import install_methods as _install_methods
from ._array import ndarray
from ._funcs import (  # noqa: F401
    FUNCS as _FUNCS,
)
from ._funcs import (  # noqa: F401 - the public functions
    append,
    arange,
    array,
    asarray,
    atleast_1d,
    atleast_2d,
    atleast_3d,
    average,
    bincount,
    blackman,
    broadcast_arrays,
    delete,
    diag_indices_from,
    dsplit,
    ediff1d,
    einsum,
    empty,
    empty_like,
    eye,
    full,
    full_like,
    hamming,
    hanning,
    histogram,
    hsplit,
    identity,
    indices,
    insert,
    linspace,
    logspace,
    may_share_memory,
    meshgrid,
    nan_to_num,
    ndim,
    nonzero,
    ones,
    ones_like,
    pad,
    percentile,
    quantile,
    resize,
    round_,
    shape,
    shares_memory,
    size,
    unique,
    unravel_index,
    vsplit,
    where,
    zeros,
    zeros_like,
)

for _name, _fn in _FUNCS.items():
    if "." not in _name and _name not in globals():
        globals()[_name] = _fn
_install_methods(dict(_FUNCS, nonzero=nonzero))

from . import linalg, random  # noqa: E402,F401
from ._array import PROTOCOL as _PROTOCOL  # noqa: E402

_PROTOCOL.update({k: v for k, v in _FUNCS.items()})
_PROTOCOL.update(
    {
        k: globals()[k]
        for k in dir()
        if not k.startswith("_")
        and callable(globals()[k])
        and k not in ("ndarray", "dtype")
        and not isinstance(globals()[k], type)
    }
)
_PROTOCOL.update({f"linalg.{k}": getattr(linalg, k) for k in linalg.__all__})
_PROTOCOL.update(product=_FUNCS["prod"], sometrue=_FUNCS["any"], abs=_FUNCS["absolute"])

# NumPy's constants and types (MXNet re-exports them)
pi, e, inf, nan, newaxis = _onp.pi, _onp.e, _onp.inf, _onp.nan, None
PZERO, NZERO, NINF, PINF, NAN = 0.0, -0.0, -_onp.inf, _onp.inf, _onp.nan
euler_gamma = _onp.euler_gamma
float16, float32, float64 = _onp.float16, _onp.float32, _onp.float64
int8, int32, int64, uint8, bool_ = _onp.int8, _onp.int32, _onp.int64, _onp.uint8, _onp.bool_
bool = _onp.bool_  # noqa: A001 - MXNet's np.bool
dtype = _onp.dtype
AxisError = _onp.exceptions.AxisError if hasattr(_onp, "exceptions") else ValueError


def _as_np_ndarray(self):
    """This array as an ``mx.np.ndarray`` sharing its memory (a view; under
    ``autograd.record()`` a recorded alias with the same tape link)."""
    return _alias(self, ndarray)


_NDArray.as_np_ndarray = _as_np_ndarray
_NDArray.as_nd_ndarray = lambda self: self
del _funcs
