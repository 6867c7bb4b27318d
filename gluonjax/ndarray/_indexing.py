"""``NDArray[key]`` and ``NDArray[key] = value`` on the registry's indexing ops."""

from __future__ import annotations

import math

import numpy as np

from .._ops import registry as _reg
from .._ops.bounds import check_key
from .._tape import state as _ag
from ..base import InvalidArgumentError, MXNetError
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


def _slice_len(start, stop, step, n):
    return len(range(*slice(start, stop, step).indices(n)))


def slices_contiguous(slc_key, shape):
    """Whether basic indexing with one slice per axis keeps a C-contiguous block."""
    if len(slc_key) != len(shape):
        raise InvalidArgumentError(f"{len(slc_key)} slices for {len(shape)} axes")
    lens = [len(range(*s.indices(n))) for s, n in zip(slc_key, shape)]
    if int(np.prod(lens)) in (0, 1):
        return True
    cut = False
    for s, n, k in zip(reversed(slc_key), reversed(shape), reversed(lens)):
        step = s.indices(n)[2]
        if k == 0:
            return True
        if k > 1 and step != 1:
            return False
        if cut:
            if k > 1:
                return False
        elif k < n:
            cut = True
    return True


def _as_slices(static, shape):
    """One slice per axis for a basic key (ints as length-one slices), or None."""
    items = [k for k in static if k[0] != "n"]
    if any(k[0] not in ("s", "i", "e") for k in items):
        return None
    n_ell = sum(k[0] == "e" for k in items)
    if n_ell > 1:
        return None
    fill = len(shape) - (len(items) - n_ell)
    if fill < 0:
        return None
    out = []
    for k in items:
        if k[0] == "e":
            out.extend([slice(None)] * fill)
        elif k[0] == "i":
            n = shape[len(out)]
            i = k[1] + n if k[1] < 0 else k[1]
            if not 0 <= i < n:
                return None
            out.append(slice(i, i + 1))
        else:
            out.append(slice(k[1], k[2], k[3]))
    if n_ell == 0:
        out.extend([slice(None)] * fill)
    return out


def getitem(arr, key):
    """``arr[key]``; a contiguous basic index gives a view sharing memory (MXNet)."""
    static, arrays = canonical(key)
    if arrays:  # index arrays: one host-side check of their values (ints: in the kernel)
        check_key(static, arr.shape, "NDArray[...]", [a._data for a in arrays])
    res = invoke(_GET, (arr, *arrays), {"key": static})
    if arrays:
        return res
    return basic_view(arr, static, res, _GET, _SET)


def basic_view(arr, static, res, get_op, set_op, cls=None):
    """``res`` (``arr[static]`` computed by ``get_op``), or a view of ``arr`` sharing its memory
    when the basic key selects a C-contiguous block and nothing is being recorded (MXNet)."""
    if res._node is not None or _ag.is_recording():
        return res
    k = (get_op.name, static, arr.shape)
    plan = _VIEW_PLANS.get(k)
    if plan is None:
        if len(_VIEW_PLANS) > 4096:
            _VIEW_PLANS.clear()
        plan = _VIEW_PLANS[k] = _view_plan(arr.shape, static, get_op, set_op)
    if plan is False:
        return res
    from ._view import View, _state

    get, put, window = plan
    view = (cls or View)(arr, get, put, window=window)
    _state(view).__dict__["_cache"] = (arr._data, res._data)
    return view


_VIEW_PLANS = {}  # (op, key, shape) -> (get kernel, put kernel, (offset, size)) or False


def _view_plan(shape, static, get_op, set_op):
    slices = _as_slices(static, shape)
    if slices is None or not slices_contiguous(slices, shape):
        return False
    ranges = [range(*s.indices(n)) for s, n in zip(slices, shape)]
    offset, stride = 0, 1
    for r, n in zip(reversed(ranges), reversed(shape)):
        offset, stride = offset + (r.start if len(r) else 0) * stride, stride * n
    get = get_op.kernel(get_op.parse_attrs({"key": static})[0])
    put = set_op.kernel(set_op.parse_attrs({"key": static})[0])
    return get, put, (offset, math.prod(len(r) for r in ranges))


def _drop_leading_ones(arr, static, value):
    """Basic indexing accepts a value with extra leading axes of length one (MXNet)."""
    target = _indexed_ndim(arr.ndim, static)
    extra = value.ndim - target
    if extra > 0 and all(d == 1 for d in value.shape[:extra]):
        return value.reshape(value.shape[extra:])
    return value


def _indexed_ndim(ndim, static):
    """The number of axes of ``arr[key]`` for a basic key."""
    used = sum(1 for k in static if k[0] in ("s", "i"))
    out = ndim - used
    for k in static:
        if k[0] == "s" or k[0] == "n":
            out += 1
    return out


def setitem(arr, key, value):
    from .ndarray import NDArray

    check_write(arr, "NDArray[...] = value")
    static, arrays = canonical(key)
    if not isinstance(value, NDArray):
        value = NDArray(np.asarray(value, dtype=arr.dtype))
    if arrays:
        check_key(static, arr.shape, "NDArray[...] = value", [a._data for a in arrays])
    if not arrays and value.ndim > 0:
        value = _drop_leading_ones(arr, static, value)
    res = invoke(_SET, (arr, value, *arrays), {"key": static})
    arr._data, arr._node = res._data, res._node
