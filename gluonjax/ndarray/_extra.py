"""MXNet's Python-level ``nd`` functions that are not single operators.

``moveaxis``, ``split_v2``, ``histogram``, ``onehot_encode``, ``from_numpy`` and the DLPack
exchange (``to_dlpack_for_read``/``write``, ``from_dlpack``), each built on the
registry's ops or on jax.

Examples
--------
>>> import numpy as np
>>> import gluonjax as mx
>>> mx.nd.moveaxis(mx.nd.zeros((3, 4, 5)), [0, 1], [-1, -2]).shape
(5, 4, 3)
>>> mx.nd.from_numpy(np.arange(3, dtype=np.float32)).asnumpy().tolist()
[0.0, 1.0, 2.0]
"""

from __future__ import annotations

import ctypes
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .._ops import registry as _reg
from ..base import InvalidArgumentError, MXNetError
from ._invoke import invoke
from .ndarray import NDArray

__all__ = [
    "moveaxis",
    "split_v2",
    "histogram",
    "onehot_encode",
    "from_numpy",
    "from_dlpack",
    "to_dlpack_for_read",
    "to_dlpack_for_write",
]


class AxisError(MXNetError, ValueError):
    """An axis argument out of range or repeated."""


def _axes(value, ndim, what):
    items = [value] if isinstance(value, (int, np.integer)) else list(value)
    out = []
    for a in items:
        a = int(a)
        if not -ndim <= a < ndim:
            raise AxisError(f"moveaxis: {what} axis {a} is out of range for a {ndim}-d array")
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise AxisError(f"moveaxis: repeated {what} axes {items}")
    return out


def moveaxis(tensor, source, destination):
    """Move axes ``source`` to positions ``destination``, keeping the others in order.

    Parameters
    ----------
    tensor : NDArray
    source, destination : int or sequence of int
        Unique axes (negative counts from the end), as many destinations as sources.

    Returns
    -------
    NDArray
        ``transpose`` of ``tensor``.
    """
    src = _axes(source, tensor.ndim, "source")
    dst = _axes(destination, tensor.ndim, "destination")
    if len(src) != len(dst):
        raise AxisError(
            f"moveaxis: {len(src)} source axes but {len(dst)} destination axes; give as many"
        )
    order = [n for n in range(tensor.ndim) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return invoke(_reg.get("transpose"), (tensor,), {"axes": tuple(order)})


def split_v2(ary, indices_or_sections, axis=0, squeeze_axis=False):
    """Split ``ary`` along ``axis`` into equal parts (an int) or at indices (a tuple).

    Parameters
    ----------
    ary : NDArray
    indices_or_sections : int or tuple of int
        ``N`` equal parts (the axis must divide), or the split points: ``(2, 3)``
        gives ``ary[:2]``, ``ary[2:3]``, ``ary[3:]`` (increasing, within the axis).
    axis : int
    squeeze_axis : bool
        Drop ``axis`` from parts of length one.

    Returns
    -------
    list of NDArray (one NDArray for a single part)
    """
    n = ary.shape[axis]
    if isinstance(indices_or_sections, (int, np.integer)):
        sections = int(indices_or_sections)
        if sections <= 0 or n % sections:
            raise InvalidArgumentError(
                f"split_v2: axis {axis} of length {n} does not split into {sections} equal parts"
            )
        indices = [i * (n // sections) for i in range(sections)]
    elif isinstance(indices_or_sections, tuple):
        indices = [0] + [int(i) for i in indices_or_sections]
    else:
        raise InvalidArgumentError(
            "split_v2: indices_or_sections must be an int or a tuple of ints, got "
            f"{type(indices_or_sections).__name__}"
        )
    return invoke(
        _reg.get("_split_v2"),
        (ary,),
        {"indices": tuple(indices), "axis": axis, "squeeze_axis": squeeze_axis},
    )


def histogram(a, bins=10, range=None):  # noqa: A002
    """Histogram of the flattened ``a``.

    Parameters
    ----------
    a : NDArray
    bins : int or NDArray
        ``bins`` equal-width bins over ``range``, or the 1-d array of bin edges (the
        last bin includes its right edge).
    range : (float, float), optional
        The bins' span for an int ``bins``; without it NumPy computes the histogram
        over ``(a.min(), a.max())``, as MXNet does (with a warning).

    Returns
    -------
    (NDArray, NDArray)
        The counts (int32) and the bin edges.
    """
    if isinstance(bins, NDArray):
        return invoke(_reg.get("_histogram"), (a, bins), {})
    if isinstance(bins, (int, np.integer)) and not isinstance(bins, bool):
        if range is None:
            warnings.warn(
                "histogram: range is not specified, using numpy's result to ensure "
                "consistency with numpy",
                stacklevel=2,
            )
            counts, edges = np.histogram(a.asnumpy(), bins=int(bins))
            return NDArray(jnp.asarray(counts.astype(np.int32))), NDArray(jnp.asarray(edges))
        return invoke(_reg.get("_histogram"), (a,), {"bin_cnt": int(bins), "range": range})
    raise InvalidArgumentError(
        f"histogram: bins must be an int or an NDArray of edges, got {type(bins).__name__}"
    )


def onehot_encode(indices, out):
    """Write the one-hot rows of ``indices`` into ``out`` (shape ``(n, depth)``); returns
    ``out``. MXNet's legacy form of ``one_hot``."""
    return invoke(_reg.get("_onehot_encode"), (indices, out), {}, out)


def from_numpy(ndarray, zero_copy=True, array_cls=NDArray):
    """An NDArray with the values of a C-contiguous NumPy array.

    MXNet shares the NumPy buffer when ``zero_copy`` (and makes the NumPy array
    read-only). gluonjax arrays are immutable jax arrays, so the values are copied in
    either case and later writes to either side are not shared; ``zero_copy`` still
    requires a C-contiguous array, as in MXNet.
    """
    if not isinstance(ndarray, np.ndarray):
        raise MXNetError(f"from_numpy needs a numpy.ndarray, got {type(ndarray).__name__}")
    if zero_copy and not ndarray.flags["C_CONTIGUOUS"]:
        raise InvalidArgumentError(
            "from_numpy(zero_copy=True) needs a C-contiguous array; pass "
            "np.ascontiguousarray(x) or zero_copy=False"
        )
    arr = np.require(ndarray, requirements="C")
    data = jnp.asarray(arr.astype(jax.dtypes.canonicalize_dtype(arr.dtype), copy=False))
    return array_cls(data)


class _Capsule:
    """Presents a bare DLPack capsule through the ``__dlpack__`` protocol jax expects."""

    def __init__(self, capsule):
        self._capsule = capsule

    def __dlpack__(self, stream=None, **kwargs):
        return self._capsule

    def __dlpack_device__(self):
        return _capsule_device(self._capsule)


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLTensorHead(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice)]


def _capsule_device(capsule):
    """``(device_type, device_id)`` stored in a 'dltensor' capsule (read-only access)."""
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    ptr = get(capsule, b"dltensor")
    head = _DLTensorHead.from_address(ptr)
    return head.device.device_type, head.device.device_id


def from_dlpack(dlpack):
    """An NDArray from a DLPack capsule or any object with ``__dlpack__`` (a torch or
    NumPy array...). The capsule is consumed, as the protocol requires."""
    src = dlpack if hasattr(dlpack, "__dlpack__") else _Capsule(dlpack)
    try:
        data = jax.dlpack.from_dlpack(src)
    except (TypeError, ValueError, RuntimeError) as err:
        raise MXNetError(f"from_dlpack: cannot import this DLPack tensor ({err})") from None
    return NDArray(data)


def to_dlpack_for_read(data):
    """A DLPack capsule of NDArray ``data`` (see ``NDArray.to_dlpack_for_read``)."""
    return data.to_dlpack_for_read()


def to_dlpack_for_write(data):
    """A DLPack capsule of NDArray ``data`` (see ``NDArray.to_dlpack_for_write``)."""
    return data.to_dlpack_for_write()
