"""Gluon in NumPy mode (``npx.set_np()``, ``@use_np``, or ``mx.np.ndarray`` inputs).

A block called in NumPy mode returns ``mx.np.ndarray``; its parameters read as
``mx.np.ndarray`` (the same parameter array, seen through :class:`NpParamArray`); a
``hybrid_forward(F, x)`` runs with ``F = mx.nd`` (``F.np``, ``F.npx`` are ``mx.np``,
``mx.npx``) on arrays, eagerly and under ``hybridize()``'s trace alike.
"""

from __future__ import annotations

from ..base import MXNetError
from ..ndarray.ndarray import NDArray
from ..numpy._array import ndarray
from ..util import is_np_array
from ._param_array import ParamArray

__all__ = ["NpParamArray", "np_call", "np_view", "to_np", "param_view"]


class NpParamArray(ParamArray, ndarray):
    """A Parameter's array seen with NumPy semantics (the same object, another class)."""

    __slots__ = ()


def np_call(args=()):
    """Whether a call runs in NumPy mode (``npx.set_np()`` or ``@use_np``), as MXNet."""
    return is_np_array()


def np_inputs(args):
    """Whether a call's first input is an ``mx.np.ndarray`` (a hybridized block is traced
    with inputs of the class it was called with)."""
    return bool(args) and isinstance(args[0], ndarray)


def output_kind(block, out):
    """True when every array ``out`` holds is an ``mx.np.ndarray``, False when none is;
    a mix raises ``TypeError`` (an ``MXNetError``), as MXNet's hybridized blocks do."""
    leaves = []
    _leaves(out, leaves)
    kinds = {isinstance(a, ndarray) for a in leaves}
    if len(kinds) > 1:
        raise MixedOutputError(
            f"Block '{getattr(block, 'name', type(block).__name__)}' "
            f"({type(block).__name__}) returned both mx.np.ndarray and mx.nd.NDArray outputs; "
            f"return one kind (convert with .as_np_ndarray() / .as_nd_ndarray())"
        )
    return kinds == {True}


def _leaves(out, acc):
    if isinstance(out, NDArray):
        acc.append(out)
    elif isinstance(out, (list, tuple)):
        for o in out:
            _leaves(o, acc)


def builtin_in_np_mode(block):
    """Whether ``block`` is one of gluonjax's own layers called in NumPy mode: it answers
    ``mx.np.ndarray`` (MXNet's layers call ``npx`` ops there), eager or hybridized."""
    return is_np_array() and type(block).__module__.startswith("gluonjax.")


def finish(block, out):
    """An eager block's outputs: gluonjax's own blocks answer ``mx.np.ndarray`` in NumPy
    mode; any block's mixed outputs raise."""
    if builtin_in_np_mode(block):
        return to_np(out)
    if isinstance(out, (list, tuple)):
        output_kind(block, out)
    return out


class MixedOutputError(MXNetError, TypeError):
    """A block returned both ``mx.np.ndarray`` and ``mx.nd.NDArray`` outputs."""


def np_view(a):
    """``a`` (an NDArray) with NumPy semantics, sharing its value and tape link."""
    if isinstance(a, ndarray) or not isinstance(a, NDArray):
        return a
    if type(a) is NDArray:
        a.__class__ = ndarray
        return a
    if type(a) is ParamArray:
        return param_view(a)
    return a.as_np_ndarray()


def param_view(a):
    """A parameter array in NumPy mode: its class becomes :class:`NpParamArray`."""
    if type(a) is ParamArray:
        a.__class__ = NpParamArray
    return a


def nd_param_view(a):
    """A parameter array outside NumPy mode: back to :class:`ParamArray`."""
    if type(a) is NpParamArray:
        a.__class__ = ParamArray
    return a


def to_np(out):
    """Every NDArray in ``out`` (an array, or nested lists/tuples) as ``mx.np.ndarray``."""
    if isinstance(out, NDArray):
        return np_view(out) if not isinstance(out, ndarray) else out
    if isinstance(out, (list, tuple)):
        items = [to_np(o) for o in out]
        return type(out)(*items) if hasattr(out, "_fields") else type(out)(items)
    return out
