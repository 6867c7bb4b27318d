"""MXNet's NumPy-style binary functions on NDArrays or numbers (``nd.add``, ``nd.maximum``...).

Each dispatches, as MXNet's do, to a registry op: ``broadcast_<op>`` for two
NDArrays, ``_<op>_scalar`` (or its reversed form) for an NDArray and a number,
and plain Python arithmetic for two numbers.

Examples
--------
>>> import gluonjax as mx
>>> mx.nd.maximum(mx.nd.array([1, 5]), 3).asnumpy().tolist()
[3.0, 5.0]
>>> mx.nd.subtract(10, mx.nd.array([1, 2])).asnumpy().tolist()
[9.0, 8.0]
>>> mx.nd.power(2, 3)
8
"""

from __future__ import annotations

import operator

import numpy as np

from .._ops import registry as _reg
from ..base import ArgumentTypeError
from ._invoke import invoke
from .ndarray import NDArray

__all__ = [
    "add",
    "subtract",
    "multiply",
    "divide",
    "true_divide",
    "modulo",
    "power",
    "maximum",
    "minimum",
    "equal",
    "not_equal",
    "greater",
    "greater_equal",
    "lesser",
    "lesser_equal",
    "logical_and",
    "logical_or",
    "logical_xor",
]

_NUM = (int, float, np.generic)


def _cmp(fn):
    return lambda a, b: 1 if fn(a, b) else 0


def _make(name, array_op, py_fn, scalar_op, rscalar_op=None, doc=""):
    bop = _reg.get(array_op)
    sop = _reg.get(scalar_op)
    rop = _reg.get(rscalar_op) if rscalar_op else sop

    def fn(lhs, rhs):
        if isinstance(lhs, _NUM):
            if isinstance(rhs, _NUM):
                return py_fn(lhs, rhs)
            if isinstance(rhs, NDArray):
                return invoke(rop, (rhs,), {"scalar": lhs})
        elif isinstance(lhs, NDArray):
            if isinstance(rhs, _NUM):
                return invoke(sop, (lhs,), {"scalar": rhs})
            if isinstance(rhs, NDArray):
                return invoke(bop, (lhs, rhs), {})
        raise ArgumentTypeError(
            f"nd.{name}: operands must be NDArrays or numbers, got "
            f"{type(lhs).__name__} and {type(rhs).__name__}"
        )

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (
        f"{doc} of ``lhs`` and ``rhs`` (NDArrays broadcast; numbers allowed on either "
        f"side).\n\nParameters\n----------\nlhs, rhs : NDArray or number\n\nReturns\n"
        f"-------\nNDArray, or a number when both operands are numbers."
    )
    return fn


add = _make("add", "broadcast_add", operator.add, "_plus_scalar", doc="Element-wise sum")
subtract = _make(
    "subtract",
    "broadcast_sub",
    operator.sub,
    "_minus_scalar",
    "_rminus_scalar",
    doc="Element-wise difference",
)
multiply = _make(
    "multiply", "broadcast_mul", operator.mul, "_mul_scalar", doc="Element-wise product"
)
divide = _make(
    "divide",
    "broadcast_div",
    operator.truediv,
    "_div_scalar",
    "_rdiv_scalar",
    doc="Element-wise quotient",
)
true_divide = divide
modulo = _make(
    "modulo",
    "broadcast_mod",
    operator.mod,
    "_mod_scalar",
    "_rmod_scalar",
    doc="Element-wise modulo",
)
power = _make(
    "power",
    "broadcast_power",
    operator.pow,
    "_power_scalar",
    "_rpower_scalar",
    doc="Element-wise power",
)
maximum = _make("maximum", "broadcast_maximum", max, "_maximum_scalar", doc="Element-wise maximum")
minimum = _make("minimum", "broadcast_minimum", min, "_minimum_scalar", doc="Element-wise minimum")
equal = _make("equal", "broadcast_equal", _cmp(operator.eq), "_equal_scalar", doc="1/0: equality")
not_equal = _make(
    "not_equal",
    "broadcast_not_equal",
    _cmp(operator.ne),
    "_not_equal_scalar",
    doc="1/0: inequality",
)
greater = _make(
    "greater",
    "broadcast_greater",
    _cmp(operator.gt),
    "_greater_scalar",
    "_lesser_scalar",
    doc="1/0: lhs > rhs",
)
greater_equal = _make(
    "greater_equal",
    "broadcast_greater_equal",
    _cmp(operator.ge),
    "_greater_equal_scalar",
    "_lesser_equal_scalar",
    doc="1/0: lhs >= rhs",
)
lesser = _make(
    "lesser",
    "broadcast_lesser",
    _cmp(operator.lt),
    "_lesser_scalar",
    "_greater_scalar",
    doc="1/0: lhs < rhs",
)
lesser_equal = _make(
    "lesser_equal",
    "broadcast_lesser_equal",
    _cmp(operator.le),
    "_lesser_equal_scalar",
    "_greater_equal_scalar",
    doc="1/0: lhs <= rhs",
)
logical_and = _make(
    "logical_and",
    "broadcast_logical_and",
    _cmp(lambda a, b: a and b),
    "_logical_and_scalar",
    doc="1/0: both non-zero",
)
logical_or = _make(
    "logical_or",
    "broadcast_logical_or",
    _cmp(lambda a, b: a or b),
    "_logical_or_scalar",
    doc="1/0: either non-zero",
)
logical_xor = _make(
    "logical_xor",
    "broadcast_logical_xor",
    _cmp(lambda a, b: bool(a) != bool(b)),
    "_logical_xor_scalar",
    doc="1/0: exactly one non-zero",
)
