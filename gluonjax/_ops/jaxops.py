"""``jax.<primitive>`` graph nodes: plain jax code inside an exported forward.

A Gluon-2 style ``forward`` may use ``jax.numpy`` directly. Its primitives
(``add``, ``dot_general``, ``reshape``...) become symbol nodes whose op is
``jax.<primitive>`` and whose attributes are the primitive's parameters, each a
JSON string (tuples as lists, dtypes as ``{"dtype": "float32"}``, enums and
named tuples tagged by their jax type). :func:`load_op` rebuilds a runnable
:class:`~gluonjax._ops.registry.Op` that calls ``primitive.bind(*args, **params)``;
the symbol JSON reader finds it through ``NODE_LOADERS["jax."]``.

Scalar literal operands (``max(x, 0.0)``) are kept in the ``literals``
attribute; multi-result primitives (``sort``, ``split``) carry ``num_outputs``.
"""

from __future__ import annotations

import enum
import functools
import importlib
import json
import math

import jax
import numpy as np

from .._caches import memo
from ..base import MXNetError
from .registry import REQUIRED, Attr, Op

__all__ = ["PREFIX", "primitive", "encode_params", "decode_params", "load_op", "op_for"]

PREFIX = "jax."
_RESERVED = ("literals", "num_outputs")
# Primitives whose parameters hold sub-programs or side effects: never a jax.* node.
_UNSUPPORTED = {
    "cond",
    "while",
    "scan",
    "linear_solve",
    "custom_linear_solve",
    "rng_bit_generator",
    "rng_uniform",
    "after_all",
    "create_token",
    "device_put",
    "sharding_constraint",
}


class ExportError(MXNetError):
    """A traced forward cannot be written as a symbol graph."""


@functools.cache
def _table():
    import jax.lax as lax

    out = {}
    for attr in dir(lax):
        p = getattr(lax, attr)
        if attr.endswith("_p") and hasattr(p, "bind") and hasattr(p, "name"):
            out.setdefault(p.name, p)
    return out


def primitive(name):
    """The jax primitive called ``name``; :class:`ExportError` if it cannot be a node."""
    p = _table().get(name)
    if p is None or name in _UNSUPPORTED:
        raise ExportError(
            f"jax primitive '{name}' cannot be written to a symbol graph (control flow, "
            f"random bits and sub-programs have no MXNet JSON form). Move this code out of "
            f"the exported forward, or write it with registry ops (F.where, F.contrib.*)."
        )
    return p


# ----------------------------------------------------------------------------- params <-> JSON
def _encode(v, where):
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        v = float(v)
        return v if math.isfinite(v) else {"float": repr(v)}
    if isinstance(v, np.dtype) or (isinstance(v, type) and issubclass(v, np.generic)):
        return {"dtype": np.dtype(v).name}
    if isinstance(v, enum.Enum):
        return {"enum": _qualname(type(v), where), "name": v.name}
    if isinstance(v, tuple) and hasattr(type(v), "_fields"):
        return {"namedtuple": _qualname(type(v), where), "fields": [_encode(x, where) for x in v]}
    if isinstance(v, (tuple, list)):
        return [_encode(x, where) for x in v]
    raise ExportError(f"{where}: parameter value {v!r} ({type(v).__name__}) has no JSON form")


def _qualname(cls, where):
    mod = cls.__module__
    if not mod.startswith("jax"):
        raise ExportError(f"{where}: parameter type {cls.__name__} is not a jax type")
    return f"{mod}:{cls.__qualname__}"


def _resolve(qual):
    mod, _, name = qual.partition(":")
    if not mod.startswith("jax"):
        raise MXNetError(f"jax node parameter names a non-jax type {qual!r}")
    obj = importlib.import_module(mod)
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def _decode(v):
    if isinstance(v, list):
        return tuple(_decode(x) for x in v)
    if isinstance(v, dict):
        if "dtype" in v:
            return np.dtype(v["dtype"])
        if "float" in v:
            return float(v["float"])
        if "enum" in v:
            return getattr(_resolve(v["enum"]), v["name"])
        if "namedtuple" in v:
            return _resolve(v["namedtuple"])(*[_decode(x) for x in v["fields"]])
        raise MXNetError(f"unknown tagged value {v!r} in a jax node parameter")
    return v


def encode_params(prim_name, params):
    """``{name: JSON string}`` for a primitive's parameters."""
    bad = [k for k in params if k in _RESERVED]
    if bad:
        raise ExportError(f"jax primitive '{prim_name}' has reserved parameter names {bad}")
    return {
        k: json.dumps(_encode(v, f"jax.{prim_name}[{k}]"), sort_keys=True)
        for k, v in sorted(params.items())
    }


@memo(512, "jax node parameters")
def decode_params(items):
    """Parameters from a tuple of ``(name, JSON string)`` pairs."""
    return {k: _decode(json.loads(s)) for k, s in items}


def encode_literals(lits):
    """``literals`` attribute: ``[[position, value, dtype], ...]`` for scalar operands."""
    return json.dumps(
        [
            [i, _encode(np.asarray(v).item(), "literal"), np.dtype(np.asarray(v).dtype).name]
            for i, v in lits
        ]
    )


@memo(512, "jax node literals")
def _decode_literals(text):
    return tuple((int(i), np.asarray(_decode(v), dtype=dt)) for i, v, dt in json.loads(text))


# ----------------------------------------------------------------------------- runnable ops
def _make_impl(prim):
    def impl(*args, **attrs):
        lits = _decode_literals(attrs.pop("literals", "[]"))
        attrs.pop("num_outputs", None)
        params = decode_params(tuple(sorted(attrs.items())))
        vals = list(args)
        for i, v in lits:
            vals.insert(i, v)
        out = prim.bind(*vals, **params)
        return tuple(out) if prim.multiple_results else out

    return impl


@memo(1024, "jax node ops")
def op_for(prim_name, attr_names):
    """The (unregistered) Op ``jax.<prim_name>`` with string attributes ``attr_names``."""
    prim = primitive(prim_name)
    attrs = {k: Attr("str", "[]" if k == "literals" else REQUIRED) for k in attr_names}
    nout = (lambda a: int(a.get("num_outputs", 1))) if prim.multiple_results else 1
    op = Op(
        name=PREFIX + prim_name,
        impl=_make_impl(prim),
        attrs=attrs,
        variadic=True,
        num_outputs=nout,
        doc=f"jax primitive {prim_name} (exported plain jax code)",
    )
    return op


def load_op(name, attrs):
    """``NODE_LOADERS`` entry: the Op for a ``jax.<primitive>`` node with these attributes."""
    if not name.startswith(PREFIX):
        raise MXNetError(f"not a jax node op: {name!r}")
    prim_name = name[len(PREFIX) :]
    keys = tuple(sorted(k for k in (attrs or {}) if not (k.startswith("__") and k.endswith("__"))))
    return op_for(prim_name, keys)


def fold(prim, params, values):
    """Evaluate a primitive on constant operands (NumPy in, NumPy out)."""
    with jax.ensure_compile_time_eval():
        out = prim.bind(*[jax.numpy.asarray(v) for v in values], **params)
    if prim.multiple_results:
        return [np.asarray(o) for o in out]
    return [np.asarray(out)]
