"""The NDArray a Parameter holds: writing its value bumps a version counter.

Every Parameter keeps one ``ParamArray`` for its whole life; ``set_data``,
optimizer updates, in-place writes (``p.data()[:] = 0``), loading and
re-initialization all point it at a new jax array. A hybridized block's plain
compiled call keeps the list of parameter values it passes to ``jax.jit`` and
rebuilds it only when ``PROCESS.param_version`` moved, instead of reading every parameter
on every call. Reads stay plain slot reads; only writes pay for the counter.
"""

from __future__ import annotations

from .._caches import PROCESS
from ..ndarray.ndarray import NDArray

__all__ = ["ParamArray", "write_values", "sparse_param_array_class"]

# PROCESS.param_version is bumped after any parameter array's value (or class, see
# autograd._deferred) is written; the bump comes after the write, so a reader that saw
# the new count sees the new value. PROCESS.layout_version is bumped when a parameter
# array's shape or dtype changes (cast, loading another dtype): what a compiled call
# learned about its outputs from the parameters is then out of date.

_setattr = object.__setattr__
_set_value = NDArray.__dict__["_data"].__set__
_get_value = NDArray.__dict__["_data"].__get__


def write_values(arrays, values):
    """Point each of ``arrays`` at its new value and bump ``PROCESS.param_version`` once.

    What an optimizer step writes: one counter bump for all the parameters,
    instead of one per ``arr._data = value``.
    """
    for arr, value in zip(arrays, values):
        _set_value(arr, value)
    PROCESS.param_version += 1


class ParamArray(NDArray):
    """An NDArray owned by a Parameter (an NDArray in every other respect).

    Parameters
    ----------
    data : jax.Array
        The parameter's current value.
    """

    __slots__ = ()

    def __setattr__(self, name, value):
        if name == "_data":
            old = _layout(self)
            _setattr(self, name, value)
            if old is not None and old != _layout(self):  # not a parameter's first value
                PROCESS.layout_version += 1
            PROCESS.param_version += 1
            return
        _setattr(self, name, value)
        if name == "__class__":
            PROCESS.param_version += 1


def _layout(arr):
    try:
        value = _get_value(arr)
    except AttributeError:  # not set yet
        return None
    return (getattr(value, "shape", None), getattr(value, "dtype", None))


_SPARSE_CLASSES: dict = {}


def sparse_param_array_class(stype):
    """The ParamArray class of a sparse Parameter: a ParamArray with ``stype``'s storage."""
    cls = _SPARSE_CLASSES.get(stype)
    if cls is None:
        from ..ndarray.sparse import CSRNDArray, RowSparseNDArray

        base = {"row_sparse": RowSparseNDArray, "csr": CSRNDArray}[stype]
        name = f"{base.__name__[:-7]}ParamArray"
        cls = _SPARSE_CLASSES[stype] = type(name, (ParamArray, base), {"__slots__": ()})
    return cls
