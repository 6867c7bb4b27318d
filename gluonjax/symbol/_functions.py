"""Module-level ``mx.sym`` helpers MXNet defines in Python: creation functions
(``zeros``, ``ones``, ``full``, ``arange``, ``eye``) and symbol/scalar binary
functions (``maximum``, ``minimum``, ``power``/``pow``, ``hypot``), ``histogram`` and
``split_v2``.

They build the same nodes, names and attributes as MXNet 1.9.1 (e.g.
``zeros((2, 3))`` is a ``_zeros`` node named ``_zeros0`` with attributes
``shape`` and ``dtype``; ``maximum(x, 1)`` is ``_maximum_scalar`` named
``_maximumscalar0``).
"""

from __future__ import annotations

import numbers

import numpy as np

from .._ops import registry as _reg
from ..base import InvalidArgumentError, MXNetError
from ._create import create
from .symbol import Symbol

__all__ = [
    "zeros",
    "ones",
    "full",
    "arange",
    "eye",
    "maximum",
    "minimum",
    "power",
    "pow",
    "hypot",
    "histogram",
    "split_v2",
]


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


def histogram(a, bins=10, range=None, **kwargs):  # noqa: A002
    """Histogram of the flattened symbol ``a`` (``_histogram``, outputs counts and edges).

    Parameters
    ----------
    a : Symbol
    bins : int or Symbol
        ``bins`` equal-width bins over ``range`` (then required), or a symbol of edges.
    range : (float, float)

    Returns
    -------
    Symbol
        Two outputs: the counts and the bin edges.
    """
    op = _reg.get("_histogram")
    name, attr = kwargs.pop("name", None), kwargs.pop("attr", None)
    if isinstance(bins, Symbol):
        return create(op, (), {"data": a, "bins": bins, **kwargs}, name=name, attr=attr)
    if isinstance(bins, (int, np.integer)) and not isinstance(bins, bool):
        if range is None:
            raise InvalidArgumentError(
                "histogram: a symbolic histogram with an int bins needs range=(low, high)"
            )
        kw = {"data": a, "bin_cnt": int(bins), "range": range, **kwargs}
        return create(op, (), kw, name=name, attr=attr)
    raise InvalidArgumentError(
        f"histogram: bins must be an int or a Symbol of edges, got {type(bins).__name__}"
    )


def split_v2(ary, indices_or_sections, axis=0, squeeze_axis=False, name=None, attr=None):
    """Split symbol ``ary`` along ``axis`` (``_split_v2``).

    Parameters
    ----------
    ary : Symbol
    indices_or_sections : int or tuple of int
        ``N`` sections (the first ``len % N`` one longer), or the split points:
        ``(2, 3)`` gives ``ary[:2]``, ``ary[2:3]``, ``ary[3:]``.
    axis : int
    squeeze_axis : bool
        Drop ``axis`` from parts of length one.

    Returns
    -------
    Symbol
        One output per part.
    """
    if isinstance(indices_or_sections, (int, np.integer)) and not isinstance(
        indices_or_sections, bool
    ):
        indices, sections = (), int(indices_or_sections)
    elif isinstance(indices_or_sections, tuple):
        indices, sections = (0, *(int(i) for i in indices_or_sections)), 0
    else:
        raise InvalidArgumentError(
            "split_v2: indices_or_sections must be an int or a tuple of ints, got "
            f"{type(indices_or_sections).__name__}"
        )
    kw = {"indices": indices, "axis": axis, "squeeze_axis": squeeze_axis, "sections": sections}
    return create(_reg.get("_split_v2"), (ary,), kw, name=name, attr=attr)
