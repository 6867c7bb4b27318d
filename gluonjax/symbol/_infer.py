"""``Symbol.infer_shape[_partial]`` and ``Symbol.infer_type[_partial]``, MXNet 1.9.1's API.

Unknowns follow MXNet's two conventions (see :mod:`gluonjax.util`): by default a
``0`` in a shape is an unknown dimension and ``()`` an unknown shape; under
``mx.util.np_shape()`` they are ``-1`` and ``None``. The graph passes are in
:mod:`._infer_graph`.
"""

from __future__ import annotations

import ast
import warnings

import numpy as np

from .._ops.graph import topo
from .._ops.registry import dtype_of
from ..base import MXNetError
from ..util import is_np_shape
from ._infer_graph import ShapeInferenceError, infer_dtypes, infer_shapes, is_known

__all__ = [
    "infer_shape",
    "infer_type",
    "ShapeInferenceError",
    "to_internal",
    "to_user",
    "created_shape",
    "resolve_created",
]


class InferArgumentError(MXNetError, ValueError):
    """Known shapes/types given to inference in a form it cannot take."""


def to_internal(shape, np_mode=None):
    """A user's shape as an internal partial shape (None unknown, -1 unknown dims)."""
    if shape is None:
        return None
    np_mode = is_np_shape() if np_mode is None else np_mode
    shape = tuple(int(d) for d in shape)
    if np_mode:
        return shape
    if not shape:
        return None
    return tuple(-1 if d == 0 else d for d in shape)


def to_user(shape, np_mode=None):
    """An internal partial shape in the caller's convention (see module docstring)."""
    np_mode = is_np_shape() if np_mode is None else np_mode
    if np_mode:
        return shape
    if shape is None:
        return ()
    return tuple(0 if d < 0 else d for d in shape)


def _by_position(sym, args, kwargs, what):
    if args and kwargs:
        raise InferArgumentError(
            f"infer_{what}: give the known {what}s either by position or by keyword, not both"
        )
    given = dict(kwargs)
    if args:
        names = sym.list_arguments()
        if len(args) > len(names):
            raise InferArgumentError(
                f"infer_{what}: {len(args)} positional {what}s for {len(names)} arguments {names}"
            )
        for n, v in zip(names, args, strict=False):
            if v is not None:
                given[n] = v
    return given


def _check_names(sym, given, what):
    names = set(sym.list_inputs())
    unknown = [k for k in given if k not in names]
    if unknown:
        raise InferArgumentError(
            f"infer_{what}: keyword argument name(s) {unknown} not found; the symbol's "
            f"arguments are {sym.list_arguments()} and auxiliary states "
            f"{sym.list_auxiliary_states()}"
        )


def _attr_shape(node, np_mode):
    text = node.extra.get("__shape__")
    if not text:
        return None
    try:
        shape = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return None
    return to_internal(shape if isinstance(shape, tuple) else tuple(shape), np_mode)


def _entries(sym):
    """(variable nodes by name, every (node id, output index) of the graph)."""
    nodes = topo(sym._outputs)
    variables = {n.name: n for n in nodes if n.op is None}
    entries = [(id(n), i) for n in nodes for i in range(n.num_outputs)]
    return variables, entries


def _lists(sym, variables, table):
    args = [table.get((id(variables[n]), 0)) for n in sym.list_arguments()]
    aux = [table.get((id(variables[n]), 0)) for n in sym.list_auxiliary_states()]
    outs = [table.get((id(node), idx)) for node, idx in sym._outputs]
    return args, outs, aux


def infer_shape(sym, args, kwargs, partial):
    """``(arg_shapes, out_shapes, aux_shapes)`` of ``sym`` given some input shapes.

    Without ``partial``, anything left unknown makes it warn and return
    ``(None, None, None)``, as MXNet does; shapes that contradict each other
    raise :class:`ShapeInferenceError`.
    """
    np_mode = is_np_shape()
    given = _by_position(sym, args, kwargs, "shape")
    _check_names(sym, given, "shape")
    variables, entries = _entries(sym)
    var_shapes = {n: _attr_shape(v, np_mode) for n, v in variables.items()}
    for name, shape in given.items():
        if not isinstance(shape, (tuple, list)):
            raise InferArgumentError(
                f"infer_shape: the shape of '{name}' must be a tuple, got {type(shape).__name__}"
            )
        var_shapes[name] = to_internal(shape, np_mode)
    dtypes = infer_dtypes(sym, {})
    table = infer_shapes(sym, var_shapes, dtypes)
    arg, out, aux = _lists(sym, variables, table)
    complete = all(is_known(table.get(e)) for e in entries)
    if not complete and not partial:
        names = sym.list_arguments()
        unknown = [f"{n}: {to_user(s, np_mode)}" for n, s in zip(names, arg) if not is_known(s)]
        warnings.warn(
            "Cannot decide shape for the following arguments (0s in shape means unknown "
            "dimensions). Consider providing them as input:\n\t" + "\n\t".join(unknown[:10]),
            stacklevel=3,
        )
        return None, None, None
    conv = lambda lst: [to_user(s, np_mode) for s in lst]  # noqa: E731
    return conv(arg), conv(out), conv(aux)


def infer_type(sym, args, kwargs, partial=False):
    """``(arg_types, out_types, aux_types)`` as numpy type classes (None if unknown).

    Without ``partial``, an unknown type makes it warn and return
    ``(None, None, None)``, as MXNet does.
    """
    given = {k: v for k, v in _by_position(sym, args, kwargs, "type").items() if v is not None}
    _check_names(sym, given, "type")
    given = {k: dtype_of(v) for k, v in given.items()}
    variables, entries = _entries(sym)
    table = infer_dtypes(sym, given)
    arg, out, aux = _lists(sym, variables, table)
    if any(table.get(e) is None for e in entries) and not partial:
        unknown = [f"{n}: None" for n, d in zip(sym.list_arguments(), arg) if d is None]
        warnings.warn(
            "Cannot decide type for the following arguments. Consider providing them as "
            "input:\n\t" + "\n\t".join(unknown[:10]),
            stacklevel=3,
        )
        return None, None, None
    conv = lambda lst: [None if d is None else np.dtype(d).type for d in lst]  # noqa: E731
    return conv(arg), conv(out), conv(aux)


def created_shape(node, bind=None, index=0):
    """``(static_key, shape)`` of a creation node (``sym.zeros((0, H))``...) whose
    ``shape`` attribute leaves dimensions unknown, with ``bind``'s sizes
    (``{(id(node), dim): size}``) put in; None for any other node."""
    from .._ops.shape_rules import attr_shape, is_creation

    if node.op is None or not is_creation(node.op):
        return None
    attrs = node.attr_dict()
    shape = attr_shape(attrs.get("shape"))
    if shape is None or is_known(shape):
        return None
    bind = bind or {}
    shape = tuple(bind.get((id(node), k), d) for k, d in enumerate(shape))
    return node.op.parse_attrs({**node.attrs, "shape": shape})[0], shape


def resolve_created(sym, shapes, dtypes=None):
    """``{id(node): static_key}`` of the creation nodes with unknown dimensions, their
    shapes found by shape inference from the input ``shapes`` (``{name: shape}``).

    Raises :class:`ShapeInferenceError` if one stays unknown.
    """
    created = [n for n in topo(sym._outputs) if created_shape(n) is not None]
    if not created:
        return {}
    table = infer_shapes(sym, {k: tuple(v) for k, v in shapes.items()}, dtypes)
    keys = {}
    for node in created:
        shape = table.get((id(node), 0))
        if not is_known(shape):
            raise ShapeInferenceError(
                f"node '{node.name}' ({node.op.name}) has shape "
                f"{node.attr_dict().get('shape')} with unknown dimensions that shape "
                f"inference cannot find from the inputs {dict(shapes)}"
            )
        keys[id(node)] = node.op.parse_attrs({**node.attrs, "shape": shape})[0]
    return keys
