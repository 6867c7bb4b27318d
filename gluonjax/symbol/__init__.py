"""``gluonjax.sym``: Symbol, variables and every registry op as a symbol constructor.

The functions here are generated from the same op registry as ``gluonjax.nd``,
so the two namespaces always hold the same operators.
"""

from __future__ import annotations

from .. import _ops  # noqa: F401
from .._ops import registry as _reg
from . import _ops_bridge
from ._functions import (
    arange,
    eye,
    full,
    histogram,
    hypot,
    maximum,
    minimum,
    ones,
    pow,
    power,
    split_v2,
    zeros,
)
from ._json import fromjson, load, load_json
from .symbol import Group, Symbol, Variable, create, var

_ops_bridge.install()
from . import _np  # noqa: E402

np = _np.namespace()  # sym.np (F.np in a symbolic hybrid_forward)
_np.install()  # mx.np / mx.npx functions given a Symbol build symbols
Symbol.as_np_ndarray = Symbol.as_nd_ndarray = lambda self: self
from . import _bind  # noqa: E402,F401  (installs Symbol.bind/simple_bind/eval)


def _make(op, called):
    def fn(*args, name=None, attr=None, **kwargs):
        return create(op, args, kwargs, name=name, attr=attr, hint=_hint(called, op))

    fn.__name__ = fn.__qualname__ = called
    fn.__doc__ = (op.doc or "").strip() or f"Symbolic ``{called}``."
    return fn


def _hint(called, op):
    from .symbol import hint_of

    return hint_of(called)


for _n, _op in _reg.items():
    if _n not in globals():
        globals()[_n] = _make(_op, _n)


def _fluent(name_):
    from ..ndarray.ndarray import FLUENT_INPLACE

    op = _reg.get(name_)
    drop_inplace = name_ in FLUENT_INPLACE

    def method(self, *args, name=None, attr=None, **kwargs):
        if drop_inplace:
            kwargs.pop("inplace", None)
        return create(op, (self, *args), kwargs, name=name, attr=attr, hint=_hint(name_, op))

    method.__name__ = name_
    method.__doc__ = f"Fluent form of :func:`gluonjax.sym.{name_}` on this symbol."
    return method


def _install_fluent():
    from ..ndarray.ndarray import FLUENT

    names = set(_reg.list_ops())
    for n in FLUENT:
        if n in names and not hasattr(Symbol, n):
            setattr(Symbol, n, _fluent(n))

    def reshape(self, *shape, name=None, attr=None, **kwargs):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        if shape:
            kwargs["shape"] = shape
        return create(_reg.get("reshape"), (self,), kwargs, name=name, attr=attr, hint="reshape")

    Symbol.reshape = reshape

    def astype(self, dtype, name=None, attr=None):
        return create(
            _reg.get("Cast"), (self,), {"dtype": dtype}, name=name, attr=attr, hint="cast"
        )

    Symbol.astype = astype

    def split_v2_method(self, *args, **kwargs):
        return split_v2(self, *args, **kwargs)

    split_v2_method.__name__ = "split_v2"
    split_v2_method.__doc__ = "Fluent form of :func:`gluonjax.sym.split_v2` on this symbol."
    Symbol.split_v2 = split_v2_method


_install_fluent()

from . import sparse  # noqa: E402,F401  (mx.sym.sparse, after the ops above exist)

__all__ = [
    "Symbol",
    "var",
    "Variable",
    "Group",
    "load",
    "load_json",
    "fromjson",
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

from .. import contrib as _contrib_mod  # noqa: E402

contrib = _contrib_mod.namespace(__import__(__name__, fromlist=["x"]), "sym")
from . import (  # noqa: E402
    _control_flow,  # noqa: F401  (declarative foreach / while_loop / cond)
    random,  # noqa: F401
)

linalg = _contrib_mod.prefixed(
    __import__(__name__, fromlist=["x"]), "linalg", "_linalg_", "Batched linear algebra."
)
_internal = _contrib_mod.prefixed(
    __import__(__name__, fromlist=["x"]), "_internal", "", "Every operator, by its MXNet name."
)
image = _contrib_mod.prefixed(
    __import__(__name__, fromlist=["x"]), "image", "_image_", "Image operators (``_image_*``)."
)
