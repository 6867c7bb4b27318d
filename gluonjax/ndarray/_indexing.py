"""``NDArray[key]`` and ``NDArray[key] = value`` on the registry's indexing ops."""

from __future__ import annotations

import numpy as np

from .._ops import registry as _reg
from ..base import MXNetError
from ._invoke import check_write, invoke

_GET = _reg.get("_getitem")
_SET = _reg.get("_setitem")


def _int(v, NDArray):
    if v is None:
        return None
    if isinstance(v, NDArray):
        return int(v.asscalar())
    return int(v)


def canonical(key):
    """(static key, index arrays) for a Python index expression."""
    from .ndarray import NDArray

    if not isinstance(key, tuple):
        key = (key,)
    static, arrays = [], []
    for k in key:
        if isinstance(k, slice):
            static.append(
                ("s", _int(k.start, NDArray), _int(k.stop, NDArray), _int(k.step, NDArray))
            )
        elif k is None:
            static.append(("n",))
        elif k is Ellipsis:
            static.append(("e",))
        elif isinstance(k, (bool, np.bool_)):
            raise MXNetError("boolean indexing is not supported on NDArray; use nd.where")
        elif isinstance(k, (int, np.integer)):
            static.append(("i", int(k)))
        elif isinstance(k, NDArray) and k.ndim == 0:
            static.append(("i", int(k.asscalar())))
        elif isinstance(k, (NDArray, np.ndarray, list, range)):
            static.append(("a",))
            arrays.append(k if isinstance(k, NDArray) else NDArray(np.asarray(k, np.int32)))
        else:
            raise MXNetError(
                f"NDArray index {k!r} of type {type(k).__name__} is not supported; use "
                f"integers, slices, None, Ellipsis or integer arrays"
            )
    return tuple(static), arrays


def getitem(arr, key):
    static, arrays = canonical(key)
    return invoke(_GET, (arr, *arrays), {"key": static})


def setitem(arr, key, value):
    from .ndarray import NDArray

    check_write(arr, "NDArray[...] = value")
    static, arrays = canonical(key)
    if not isinstance(value, NDArray):
        value = NDArray(np.asarray(value, dtype=arr.dtype))
    res = invoke(_SET, (arr, value, *arrays), {"key": static})
    arr._data, arr._node = res._data, res._node
