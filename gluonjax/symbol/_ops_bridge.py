"""Symbol operators (+, -, *, /, **, comparisons, indexing) on registry ops."""

from __future__ import annotations

import numpy as np

from .._ops import registry as _reg
from .symbol import Symbol, _as_input, create

_SCALAR = (int, float, np.number, bool)


def _binary(elem, bcast, scalar, rscalar=None):
    elem_op, bcast_op, s_op = _reg.get(elem), _reg.get(bcast), _reg.get(scalar)
    r_op = _reg.get(rscalar) if rscalar else s_op
    hint = elem if elem.startswith("_") else None

    def pick(a, b):
        if a._value is not None and b._value is not None and a.shape != b.shape:
            return bcast_op, None
        return elem_op, hint

    def fwd(self, other):
        if isinstance(other, _SCALAR):
            return create(s_op, (self,), {"scalar": other})
        if not isinstance(other, Symbol):
            if self._value is None:
                return NotImplemented
            other = Symbol(
                _as_input(other, elem_op, "rhs")._outputs, value=getattr(other, "_data", other)
            )
        op, h = pick(self, other)
        return create(op, (self, other), {}, hint=h)

    def rev(self, other):
        if isinstance(other, _SCALAR):
            return create(r_op, (self,), {"scalar": other})
        if self._value is None:
            return NotImplemented
        other = _as_input(other, elem_op, "lhs")
        op, h = pick(other, self)
        return create(op, (other, self), {}, hint=h)

    return fwd, rev


def install():
    S = Symbol
    S.__add__, S.__radd__ = _binary("_plus", "broadcast_add", "_plus_scalar")
    S.__sub__, S.__rsub__ = _binary("_minus", "broadcast_sub", "_minus_scalar", "_rminus_scalar")
    S.__mul__, S.__rmul__ = _binary("_mul", "broadcast_mul", "_mul_scalar")
    S.__truediv__, S.__rtruediv__ = _binary("_div", "broadcast_div", "_div_scalar", "_rdiv_scalar")
    S.__mod__, S.__rmod__ = _binary("_mod", "broadcast_mod", "_mod_scalar", "_rmod_scalar")
    S.__pow__, S.__rpow__ = _binary("_power", "broadcast_power", "_power_scalar", "_rpower_scalar")
    S.__eq__, _ = _binary("_equal", "broadcast_equal", "_equal_scalar")
    S.__ne__, _ = _binary("_not_equal", "broadcast_not_equal", "_not_equal_scalar")
    S.__gt__, _ = _binary("_greater", "broadcast_greater", "_greater_scalar")
    S.__ge__, _ = _binary("_greater_equal", "broadcast_greater_equal", "_greater_equal_scalar")
    S.__lt__, _ = _binary("_lesser", "broadcast_lesser", "_lesser_scalar")
    S.__le__, _ = _binary("_lesser_equal", "broadcast_lesser_equal", "_lesser_equal_scalar")
    S.__neg__ = lambda self: create(_reg.get("_mul_scalar"), (self,), {"scalar": -1.0})
    S.__pos__ = lambda self: self
    S.__abs__ = lambda self: create(_reg.get("abs"), (self,), {})
    S.__iadd__ = lambda self, o: _inplace(self, self + o)
    S.__isub__ = lambda self, o: _inplace(self, self - o)
    S.__imul__ = lambda self, o: _inplace(self, self * o)
    S.__itruediv__ = lambda self, o: _inplace(self, self / o)
    S.__setitem__ = setitem


def _inplace(self, res):
    if res is NotImplemented:
        return res
    self._outputs, self._value = res._outputs, res._value
    return self


def getitem(sym, key):
    """``sym[key]`` on a single-output symbol: the registry's ``_getitem`` op."""
    from ..ndarray._indexing import canonical

    static, arrays = canonical(key)
    return create(_reg.get("_getitem"), (sym, *arrays), {"key": static}, hint="slice")


def setitem(sym, key, value):
    """``sym[key] = value``: the symbol now names the updated array."""
    from ..ndarray._indexing import canonical

    static, arrays = canonical(key)
    if not isinstance(value, Symbol):
        value = _as_input(np.asarray(value, sym.dtype), _reg.get("_setitem"), "value")
    res = create(_reg.get("_setitem"), (sym, value, *arrays), {"key": static}, hint="slice_assign")
    _inplace(sym, res)
