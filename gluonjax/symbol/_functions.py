"""Module-level ``mx.sym`` helpers MXNet defines in Python: creation functions
(``zeros``, ``ones``, ``full``, ``arange``, ``eye``) and symbol/scalar binary
functions (``maximum``, ``minimum``, ``power``/``pow``, ``hypot``).

They build the same nodes, names and attributes as MXNet 1.9.1 (e.g.
``zeros((2, 3))`` is a ``_zeros`` node named ``_zeros0`` with attributes
``shape`` and ``dtype``; ``maximum(x, 1)`` is ``_maximum_scalar`` named
``_maximumscalar0``).
"""

from __future__ import annotations

import numbers

import numpy as np

from .._ops import registry as _reg
from ..base import MXNetError
from ._create import create
from .symbol import Symbol

__all__ = ["zeros", "ones", "full", "arange", "eye", "maximum", "minimum", "power", "pow", "hypot"]


def _dtype(dtype):
    return "float32" if dtype is None else _reg.dtype_of(dtype).name


def _make(opname, kwargs, name, attr):
    # ``__layout__=...`` and other ``__key__`` arguments are node attributes, as in MXNet
    hidden = {k: v for k, v in kwargs.items() if k.startswith("__") and k.endswith("__")}
    if hidden:
        kwargs = {k: v for k, v in kwargs.items() if k not in hidden}
        attr = {**(attr or {}), **{k: str(v) for k, v in hidden.items()}}
    return create(_reg.get(opname), (), kwargs, name=name, attr=attr)


def zeros(shape, dtype=None, name=None, attr=None, **kwargs):
    """A symbol of zeros (``_zeros``)."""
    return _make("_zeros", {"shape": shape, "dtype": _dtype(dtype), **kwargs}, name, attr)


def ones(shape, dtype=None, name=None, attr=None, **kwargs):
    """A symbol of ones (``_ones``)."""
    return _make("_ones", {"shape": shape, "dtype": _dtype(dtype), **kwargs}, name, attr)


def full(shape, val, dtype=None, name=None, attr=None, **kwargs):
    """A symbol filled with ``val`` (``_full``)."""
    return _make(
        "_full", {"shape": shape, "dtype": _dtype(dtype), "value": val, **kwargs}, name, attr
    )


def arange(
    start, stop=None, step=1.0, repeat=1, infer_range=False, name=None, dtype=None, attr=None
):
    """Evenly spaced values in ``[start, stop)`` (``_arange``)."""
    kw = {
        "start": start,
        "stop": stop,
        "step": step,
        "repeat": repeat,
        "infer_range": infer_range,
        "dtype": _dtype(dtype),
    }
    return _make("_arange", kw, name, attr)


def eye(N, M=0, k=0, dtype=None, name=None, attr=None, **kwargs):
    """A 2-D symbol with ones on the k-th diagonal (``_eye``)."""
    return _make("_eye", {"N": N, "M": M, "k": k, "dtype": _dtype(dtype), **kwargs}, name, attr)


def _binary(fname, op, scalar_op, rscalar_op, pyfn):
    def fn(left, right, name=None, attr=None):
        ls, rs = isinstance(left, Symbol), isinstance(right, Symbol)
        if ls and rs:
            return create(_reg.get(op), (left, right), {}, name=name, attr=attr)
        if ls and isinstance(right, numbers.Number):
            return create(_reg.get(scalar_op), (left,), {"scalar": right}, name=name, attr=attr)
        if rs and isinstance(left, numbers.Number):
            return create(_reg.get(rscalar_op), (right,), {"scalar": left}, name=name, attr=attr)
        if isinstance(left, numbers.Number) and isinstance(right, numbers.Number):
            return pyfn(left, right)
        raise MXNetError(
            f"{fname}: types ({type(left).__name__}, {type(right).__name__}) "
            f"not supported; use Symbols or numbers"
        )

    fn.__name__ = fn.__qualname__ = fname
    fn.__doc__ = f"Element-wise ``{fname}`` of symbols and/or scalars."
    return fn


maximum = _binary("maximum", "_maximum", "_maximum_scalar", "_maximum_scalar", max)
minimum = _binary("minimum", "_minimum", "_minimum_scalar", "_minimum_scalar", min)
power = _binary("power", "_power", "_power_scalar", "_rpower_scalar", lambda a, b: a**b)
pow = power  # noqa: A001  (MXNet's name)
hypot = _binary(
    "hypot", "_hypot", "_hypot_scalar", "_hypot_scalar", lambda a, b: float(np.hypot(a, b))
)
