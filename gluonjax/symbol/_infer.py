"""Shape and type inference over a symbol graph (``infer_shape``, ``infer_type``).

Shapes flow forward with ``jax.eval_shape`` of each op's implementation; the
shapes of parameter variables (weights, biases, BatchNorm statistics) come from
the op's ``infer_args`` rule, as MXNet's shape inference fills them in.
"""

from __future__ import annotations

import ast
import warnings

import jax
import numpy as np

from .._ops.registry import dtype_of
from ..base import MXNetError
from ._node import topo


def _var_shape(node, given):
    if node.name in given:
        return tuple(int(d) for d in given[node.name])
    text = node.extra.get("__shape__")
    if text:
        shape = tuple(ast.literal_eval(text))
        if shape and all(d > 0 for d in shape):
            return shape
    return None


def _var_dtype(node, given):
    if node.name in given:
        return dtype_of(given[node.name])
    text = node.extra.get("__dtype__")
    if not text:
        return None
    from ._json import dtype_from_attr

    return dtype_from_attr(text)


def _by_position(sym, args, kwargs):
    given = dict(kwargs)
    if args:
        names = sym.list_arguments()
        for n, v in zip(names, args):
            if v is not None:
                given[n] = v
    return given


def _spec(op, node, in_shapes, in_dtypes):
    vals = [jax.ShapeDtypeStruct(s, d) for s, d in zip(in_shapes, in_dtypes)]
    if op.random:
        vals[0:0] = [jax.ShapeDtypeStruct((2,), np.uint32), jax.ShapeDtypeStruct((), np.uint32)]
    vals.extend(node.dyn)
    try:
        res = jax.eval_shape(op.bound(node.static_key), *vals)
    except MXNetError as err:
        raise MXNetError(f"shape inference failed at node '{node.name}': {err}") from None
    except Exception as err:  # noqa: BLE001
        shapes = ", ".join(str(s) for s in in_shapes)
        msg = str(err).split("\n")[0]
        raise MXNetError(
            f"shape inference failed at node '{node.name}' ({op.name}) with input shapes "
            f"[{shapes}]: {msg}"
        ) from None
    if op.aux:
        res = res[0]
    return list(res) if isinstance(res, (tuple, list)) else [res]


def _walk(sym, given_shapes, given_dtypes):
    """{id(node): [ShapeDtypeStruct or None per output]} and var shapes/dtypes."""
    info = {}
    var_shape, var_dtype = {}, {}
    for node in topo(sym._outputs):
        if node.op is None:
            var_shape[id(node)] = _var_shape(node, given_shapes)
            var_dtype[id(node)] = _var_dtype(node, given_dtypes)
            continue
        op = node.op
        attrs = node.attr_dict()
        names = op.input_names(attrs, len(node.inputs))

        def shape_of(src, idx):
            if src.op is None:
                return var_shape[id(src)]
            out = info[id(src)][idx]
            return None if out is None else tuple(out.shape)

        def dtype_of_in(src, idx):
            if src.op is None:
                return var_dtype[id(src)]
            out = info[id(src)][idx]
            return None if out is None else np.dtype(out.dtype)

        shapes = [shape_of(s, i) for s, i in node.inputs]
        if any(s is None for s in shapes) and op.infer_args is not None:
            known = {n: s for n, s in zip(names, shapes) if s is not None}
            try:
                filled = op.infer_args(attrs, known)
            except (KeyError, IndexError, TypeError, ValueError):
                filled = {}
            for k, ((src, _), n) in enumerate(zip(node.inputs, names)):
                if shapes[k] is None and n in filled and src.op is None:
                    var_shape[id(src)] = shapes[k] = tuple(filled[n])
        dtypes = [dtype_of_in(s, i) for s, i in node.inputs]
        first = next((d for d in dtypes if d is not None), np.dtype(np.float32))
        for k, ((src, _), n) in enumerate(zip(node.inputs, names)):
            if dtypes[k] is None:
                dtypes[k] = first
                if src.op is None:
                    var_dtype[id(src)] = first
        if all(s is not None for s in shapes):
            info[id(node)] = _spec(op, node, shapes, dtypes)
        else:
            info[id(node)] = [None] * node.num_outputs
    return info, var_shape, var_dtype


def _results(sym, info, var_val, attr):
    nodes = {n.name: n for n in topo(sym._outputs) if n.op is None}
    args = [var_val[id(nodes[n])] for n in sym.list_arguments()]
    aux = [var_val[id(nodes[n])] for n in sym.list_auxiliary_states()]
    outs = []
    for node, idx in sym._outputs:
        if node.op is None:
            outs.append(var_val[id(node)])
        else:
            o = info[id(node)][idx]
            outs.append(None if o is None else attr(o))
    return args, outs, aux


def infer_shape(sym, args, kwargs, partial):
    """``(arg_shapes, out_shapes, aux_shapes)``; with ``partial`` unknowns are ``()``."""
    given = _by_position(sym, args, kwargs)
    info, var_shape, _ = _walk(sym, given, {})
    arg, out, aux = _results(sym, info, var_shape, lambda o: tuple(o.shape))
    if any(s is None for s in arg + out + aux):
        if partial:
            fix = lambda lst: [() if s is None else s for s in lst]  # noqa: E731
            return fix(arg), fix(out), fix(aux)
        unknown = [n for n, s in zip(sym.list_arguments(), arg) if s is None]
        warnings.warn(
            f"infer_shape: not enough information; unknown arguments: {unknown}", stacklevel=2
        )
        return None, None, None
    return arg, out, aux


def infer_type(sym, args, kwargs):
    """``(arg_types, out_types, aux_types)`` as numpy dtypes."""
    given = _by_position(sym, args, kwargs)
    shapes = {}
    for node in topo(sym._outputs):
        if node.op is None and _var_shape(node, {}) is None:
            shapes[node.name] = None
    _, var_shape, _ = _walk(sym, {}, {})
    info, _, var_dtype = _walk(sym, {}, given)
    arg, out, aux = _results(sym, info, var_dtype, lambda o: np.dtype(o.dtype).type)
    if any(o is None for o in out):
        # shapes unknown: propagate dtypes without shapes
        out = [_forward_dtype(node, idx, var_dtype) for node, idx in sym._outputs]
    conv = lambda lst: [None if d is None else np.dtype(d).type for d in lst]  # noqa: E731
    return conv(arg), conv(out), conv(aux)


def _forward_dtype(node, idx, var_dtype, memo=None):
    memo = {} if memo is None else memo
    if node.op is None:
        return var_dtype.get(id(node))
    if id(node) in memo:
        return memo[id(node)]
    attrs = node.attr_dict()
    ins = [_forward_dtype(s, i, var_dtype, memo) for s, i in node.inputs]
    dt = attrs.get("dtype") if "dtype" in node.op.attrs else None
    res = dtype_of(dt) if dt else next((d for d in ins if d is not None), None)
    memo[id(node)] = res
    return res
