"""``mx.sym.np`` / ``mx.sym.npx``: the NumPy-interface ops as symbol constructors (the same
registry entries as ``mx.np``, so a graph built here exports ``_np_*``/``_npi_*`` nodes)."""

from __future__ import annotations

import types

from .._ops import registry as _reg
from .._ops.attrs import _to_number
from .._ops.defs.np_ops import NP_BINARY, NP_FUNCS
from ..numpy import _array
from .symbol import Symbol, create


def _fn(public, op):
    def f(*args, name=None, attr=None, out=None, **kwargs):
        if op.variadic and args and isinstance(args[0], (list, tuple)):
            kwargs["num_args"] = len(args[0])
            args = tuple(args[0]) + tuple(args[1:])
        return create(op, args, kwargs, name=name, attr=attr, hint=public.rpartition(".")[2])

    f.__name__ = public.rpartition(".")[2]
    return f


def _binary(public):
    op, sop, rop = (_reg.get(n) for n in NP_BINARY[public])

    def f(x1, x2, name=None, out=None):
        if isinstance(x1, Symbol) and isinstance(x2, Symbol):
            return create(op, (x1, x2), {}, name=name, hint=public)
        if isinstance(x1, Symbol):
            return create(sop, (x1,), {"scalar": _to_number(x2)}, name=name, hint=public)
        return create(rop, (x2,), {"scalar": _to_number(x1)}, name=name, hint=public)

    f.__name__ = public
    return f


def namespace():
    """The ``sym.np`` module object (with ``linalg`` and ``random`` inside)."""
    np_ = types.ModuleType("gluonjax.symbol.np", "NumPy-interface ops as symbols.")
    np_.linalg = types.ModuleType("gluonjax.symbol.np.linalg")
    np_.random = types.ModuleType("gluonjax.symbol.np.random")
    for public, op_name in NP_FUNCS.items():
        mod, _, short = public.rpartition(".")
        target = getattr(np_, mod) if mod else np_
        setattr(target, short, _fn(public, _reg.get(op_name)))
    for public in NP_BINARY:
        setattr(np_, public, _binary(public))
    np_._Symbol = Symbol  # MXNet's name of the NumPy-mode symbol class
    return np_


def install():
    """Let ``mx.np``/``mx.npx`` functions build symbols when given one (their hook)."""

    def symbolic(op, args, kwargs):
        kwargs = {k: v for k, v in kwargs.items() if v is not None or k in op.attrs}
        return create(op, tuple(args), kwargs, hint=op.name)

    _array.SYMBOLIC[0] = symbolic
