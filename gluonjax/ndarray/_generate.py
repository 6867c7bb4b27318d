"""Turn each registry op into an ``nd`` function (the only way ops reach ``nd``)."""

from __future__ import annotations

from .._caches import PROCESS
from .._ops import registry as _reg
from ..base import AttrError
from ._invoke import check_same_dtype, invoke

_SCALARS = (int, float, str, tuple, list, bool)


def make_function(op, sparse_call=None):
    """``nd.<op.name>(*inputs, out=None, name=None, **attrs)`` for one registry op.

    ``sparse_call``, when given, takes the call once a sparse array exists in the
    process (it applies MXNet's storage-type rule of the op, see ``ndarray.sparse``).
    """
    attrs = op.attrs
    has_num_args = "num_args" in attrs
    state = PROCESS

    def fn(*args, out=None, name=None, **kwargs):
        if sparse_call is not None and state.sparse_types:
            cls = state.sparse_types
            for a in args:
                if isinstance(a, cls) or (
                    type(a) in (list, tuple) and any(isinstance(b, cls) for b in a)
                ):
                    return sparse_call(*args, out=out, name=name, **kwargs)
            if kwargs and any(isinstance(v, cls) for v in kwargs.values()):
                return sparse_call(*args, out=out, name=name, **kwargs)
        if op.variadic:
            if len(args) == 1 and isinstance(args[0], (list, tuple)):
                args = tuple(args[0])
            if has_num_args and kwargs.get("num_args") in (None, 0):
                kwargs["num_args"] = len(args)
        else:
            if args and (args[-1] is None or type(args[-1]) in _SCALARS):
                kwargs = dict(kwargs)
                args = _reg.split_positional_attrs(op, args, kwargs)
            if kwargs and any(k not in attrs for k in kwargs):
                args, kwargs = _named_inputs(op, args, kwargs)
        if len(args) > 1:
            check_same_dtype(op, args)
        return invoke(op, args, kwargs, out)

    if op.eager_attrs is not None:
        fn = _with_eager_attrs(op, fn)
    fn.__name__ = fn.__qualname__ = op.name
    fn.__doc__ = _doc(op)
    return fn


def _with_eager_attrs(op, fn):
    """``fn`` that first reads the hidden attributes ``op.eager_attrs`` computes from the
    input values (an output shape that depends on them); traced inputs leave them unset."""
    import jax
    import numpy as np

    names = op.input_names(_defaults(op)) if not op.variadic else ()

    def eager(*args, **kwargs):
        given = [args[i] if i < len(args) else kwargs.get(n) for i, n in enumerate(names)]
        values = [getattr(a, "_data", a) for a in given]
        if not any(isinstance(v, jax.core.Tracer) for v in values):
            values = [None if v is None else np.asarray(v) for v in values]
            kwargs.update(op.eager_attrs(kwargs, values))
        return fn(*args, **kwargs)

    return eager


def _named_inputs(op, args, kwargs):
    attr_kw = {k: v for k, v in kwargs.items() if k in op.attrs}
    given = {k: v for k, v in kwargs.items() if k not in op.attrs}
    strays = [k for k, v in given.items() if not hasattr(v, "shape") and v is not None]
    if not any(not a.startswith("_") for a in op.attrs):
        # MXNet's ops without parameters ignore extra keyword arguments (broadcast_*(..., axis=1))
        # (a None one too, unless it names an input)
        inputs = () if op.variadic else op.input_names(_defaults(op))
        given = {
            k: v for k, v in given.items() if k not in strays and (v is not None or k in inputs)
        }
        strays = []
    if strays:  # a misspelled attribute: say so before "required attribute is missing"
        raise op.unknown_keywords(strays)
    static_key, _ = op.parse_attrs(
        {k: v for k, v in attr_kw.items() if op.attrs[k].static}
        if not op.dynamic_names
        else attr_kw
    )
    names = op.input_names(
        op.attr_dict(static_key, [op.attrs[n].default for n in op.dynamic_names])
    )
    unknown = [k for k in given if k not in names]
    if unknown:
        raise AttrError(
            f"{op.name}: unknown argument(s) {unknown}; inputs are {list(names)}, "
            f"attributes are {list(op.attrs)}"
        )
    full = list(args)
    for n in names[len(args) :]:
        if n in given:
            full.append(given[n])
        elif len(full) < len(names) and any(m in given for m in names[len(full) + 1 :]):
            full.append(None)
    return tuple(full), attr_kw


def _doc(op):
    lines = [op.doc.strip() or f"The ``{op.name}`` operator.", "", "Parameters", "----------"]
    if op.variadic:
        lines.append("*data : NDArray\n    Inputs.")
    else:
        names = op.inputs if not callable(op.inputs) else ("data", "...")
        for n in names:
            lines.append(f"{n} : NDArray\n    Input.")
    for k, a in op.attrs.items():
        if k.startswith("_"):
            continue
        default = "required" if a.default is _reg.REQUIRED else f"default {a.default!r}"
        choices = f", one of {list(a.choices)}" if a.choices else ""
        lines.append(f"{k} : {a.kind}, {default}{choices}")
    lines += ["", "Outputs", "-------", "NDArray (or a list for multi-output ops)."]
    return "\n".join(lines)


def generate(namespace):
    """Add every registry op (and alias) to ``namespace`` unless already defined."""
    for name, op in _reg.items():
        if name not in namespace:
            f = make_function(op)
            if name != op.name:
                f = _rename(f, name)
            namespace[name] = f
    return namespace


def _rename(fn, name):
    def alias(*a, **k):
        return fn(*a, **k)

    alias.__name__ = alias.__qualname__ = name
    alias.__doc__ = fn.__doc__
    return alias


def _defaults(op):
    """Attribute values for naming inputs when the call's own attrs are not parsed yet."""
    return {k: (None if a.default is _reg.REQUIRED else a.default) for k, a in op.attrs.items()}
