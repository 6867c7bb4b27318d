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


def _spec(op, node, in_shapes, in_dtypes, static_key=None):
    vals = [jax.ShapeDtypeStruct(s, d) for s, d in zip(in_shapes, in_dtypes)]
    if op.random:
        vals[0:0] = [jax.ShapeDtypeStruct((2,), np.uint32), jax.ShapeDtypeStruct((), np.uint32)]
    vals.extend(node.dyn)
    try:
        res = jax.eval_shape(op.bound(node.static_key if static_key is None else static_key), *vals)
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


class _Unknown:
    """An output whose shape or dtype is unknown (None)."""

    def __init__(self, dtype, shape=None):
        self.dtype = dtype
        self.shape = shape


def _rule_dtype(op, node, attrs, ref):
    """Output dtype without running the op: its ``dtype`` attribute or the input dtype."""
    dt = attrs.get("dtype") if op.name in _DTYPE_OUT or not node.inputs else None
    return dtype_of(dt) if dt else ref


# ops whose ``dtype`` attribute is their output dtype (used when shapes are unknown)
_DTYPE_OUT = ("Cast", "amp_cast", "one_hot", "Embedding")
# MXNet keeps these parameters in float32 when the data is float16
_F32_PARAMS = {
    n: ("gamma", "beta", "moving_mean", "moving_var")
    for n in ("BatchNorm", "BatchNorm_v1", "_contrib_SyncBatchNorm")
}


# ops whose inputs all have the output's shape (MXNet infers a missing one from the others)
_SAME_SHAPE = frozenset(
    (
        "elemwise_add",
        "elemwise_sub",
        "elemwise_mul",
        "elemwise_div",
        "_maximum",
        "_minimum",
        "_power",
        "_mod",
        "_hypot",
        "_equal",
        "_not_equal",
        "_greater",
        "_greater_equal",
        "_lesser",
        "_lesser_equal",
        "_logical_and",
        "_logical_or",
        "_logical_xor",
        "add_n",
        "where",
        "_grad_add",
    )
)


def _known(shape):
    return shape is not None and all(d > 0 for d in shape)


def _in_dtype(op, attrs, name, ref):
    """The dtype an untyped variable input ``name`` takes, given the data dtype ``ref``."""
    if op.name == "Embedding" and name == "weight":
        return dtype_of(attrs["dtype"])
    if ref is not None and ref == np.float16 and name in _F32_PARAMS.get(op.name, ()):
        return np.dtype(np.float32)
    return ref


# Unknown (0) dimensions in the ``shape`` of an input-less node (``sym.zeros((0, H))``,
# the begin state of a recurrent cell) are given distinct stand-in sizes that flow
# forward through the ops; where such a size meets a real one in an op whose inputs
# must agree (``elemwise_add``...), the real size is bound to it and the walk restarts.
_STANDIN = 1 << 24


def _is_standin(d):
    return d >= _STANDIN


def created_shape(node, bind, index):
    """``(static_key, shape)`` of an input-less node with unknown dims (the ``index``-th
    such node of the graph), with bound or stand-in sizes; None for other nodes."""
    op = node.op
    if op is None or node.inputs or "shape" not in op.static_names:
        return None
    attrs = node.attr_dict()
    shape = attrs.get("shape")
    if not isinstance(shape, tuple) or all(d > 0 for d in shape):
        return None
    shape = tuple(
        d if d > 0 else bind.get((id(node), k), _STANDIN + 64 * index + k)
        for k, d in enumerate(shape)
    )
    attrs["shape"] = shape
    return tuple(attrs[k] for k in op.static_names), shape


def _unify(shapes, bind, standins, broadcast):
    """Bind stand-in dims that meet real dims in ``shapes`` (inputs that must agree)."""
    new = False
    for a in shapes:
        for b in shapes:
            if a is None or b is None or len(a) != len(b):
                continue
            for x, y in zip(a, b):
                if _is_standin(x) and not _is_standin(y) and x in standins:
                    if broadcast and y == 1:
                        continue
                    key = standins[x]
                    if key not in bind:
                        bind[key] = y
                        new = True
    return new


def _walk(sym, given_shapes, given_dtypes, bind=None):
    """{id(node): [ShapeDtypeStruct or _Unknown per output]} and var shapes/dtypes.

    ``bind`` (filled in) maps ``(id(node), dim)`` of input-less nodes' unknown dims to
    the sizes inference found for them.
    """
    bind = {} if bind is None else bind
    for _ in range(64):
        try:
            info, var_shape, var_dtype = _walk_once(sym, given_shapes, given_dtypes, bind)
        except _Restart:
            continue
        stand = lambda sh: sh is not None and any(_is_standin(d) for d in sh)  # noqa: E731
        for node_id, outs in info.items():
            info[node_id] = [_Unknown(o.dtype, None) if stand(o.shape) else o for o in outs]
        var_shape = {k: None if stand(v) else v for k, v in var_shape.items()}
        return info, var_shape, var_dtype
    raise MXNetError("shape inference did not settle the unknown (0) dimensions")


def resolve_created(sym, given_shapes):
    """``{id(node): static_key}`` for input-less nodes whose unknown (0) shape dims
    inference decides from ``given_shapes`` (how a bound graph runs ``zeros((0, H))``)."""
    bind = {}
    _walk(sym, given_shapes, {}, bind)
    out, index = {}, 0
    for node in topo(sym._outputs):
        created = created_shape(node, bind, index) if node.op is not None else None
        if created is None:
            continue
        index += 1
        if not any(_is_standin(d) for d in created[1]):
            out[id(node)] = created[0]
    return out


class _Restart(Exception):
    """A stand-in dimension got bound: walk the graph again."""


def _walk_once(sym, given_shapes, given_dtypes, bind):
    info = {}
    standins = {}
    n_created = 0
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
            return None if out.shape is None else tuple(out.shape)

        def dtype_of_in(src, idx):
            if src.op is None:
                return var_dtype[id(src)]
            dt = info[id(src)][idx].dtype
            return None if dt is None else np.dtype(dt)

        shapes = [shape_of(s, i) for s, i in node.inputs]
        if not all(_known(s) for s in shapes) and op.infer_args is not None:
            known = {n: s for n, s in zip(names, shapes) if s is not None}
            try:
                filled = op.infer_args(attrs, known)
            except (KeyError, IndexError, TypeError, ValueError, ZeroDivisionError):
                filled = {}
            for k, ((src, _), n) in enumerate(zip(node.inputs, names)):
                if shapes[k] is None and n in filled and src.op is None:
                    var_shape[id(src)] = shapes[k] = tuple(filled[n])
        if op.name in _SAME_SHAPE and not all(_known(s) for s in shapes):
            full = next((s for s in shapes if _known(s)), None)
            for k, (src, _) in enumerate(node.inputs):
                if full is not None and shapes[k] is None and src.op is None:
                    var_shape[id(src)] = shapes[k] = full
        dtypes = [dtype_of_in(s, i) for s, i in node.inputs]
        ref = next((d for d in dtypes if d is not None), None)
        for k, ((src, _), n) in enumerate(zip(node.inputs, names)):
            if dtypes[k] is None and src.op is None:
                dtypes[k] = var_dtype[id(src)] = _in_dtype(op, attrs, n, ref)
        typed = all(d is not None for d in dtypes)
        created = created_shape(node, bind, n_created)
        if created is not None:
            n_created += 1
            for k, d in enumerate(created[1]):
                if _is_standin(d):
                    standins[d] = (id(node), k)
        if all(_known(s) for s in shapes):
            f32 = np.dtype(np.float32)
            broadcast = op.name.startswith("broadcast_")
            if (op.name in _SAME_SHAPE or broadcast) and _unify(shapes, bind, standins, broadcast):
                raise _Restart()
            try:
                res = _spec(
                    op,
                    node,
                    shapes,
                    [f32 if d is None else d for d in dtypes],
                    None if created is None else created[0],
                )
            except MXNetError:
                if _unify(shapes, bind, standins, False):
                    raise _Restart() from None
                raise
            if not typed:
                dt = _rule_dtype(op, node, attrs, ref)
                res = [_Unknown(dt, r.shape) for r in res]
            info[id(node)] = res
        else:
            info[id(node)] = [_Unknown(_rule_dtype(op, node, attrs, ref))] * node.num_outputs
    return info, var_shape, var_dtype


def _check_names(sym, given):
    names = set(sym.list_inputs())
    unknown = [k for k in given if k not in names]
    if unknown:
        raise MXNetError(
            f"unknown input name(s) {unknown}; the symbol's arguments are "
            f"{sym.list_arguments()} and auxiliary states {sym.list_auxiliary_states()}"
        )


def _results(sym, info, var_val, attr):
    nodes = {n.name: n for n in topo(sym._outputs) if n.op is None}
    args = [var_val[id(nodes[n])] for n in sym.list_arguments()]
    aux = [var_val[id(nodes[n])] for n in sym.list_auxiliary_states()]
    outs = []
    for node, idx in sym._outputs:
        outs.append(var_val[id(node)] if node.op is None else attr(info[id(node)][idx]))
    return args, outs, aux


def infer_shape(sym, args, kwargs, partial):
    """``(arg_shapes, out_shapes, aux_shapes)``; with ``partial`` unknowns are ``()``.

    As in MXNet, a 0 in a shape means an unknown dimension; a full inference that
    leaves something unknown warns and returns ``(None, None, None)``.
    """
    given = _by_position(sym, args, kwargs)
    _check_names(sym, given)
    info, var_shape, _ = _walk(sym, given, {})
    shape = lambda o: None if o.shape is None else tuple(o.shape)  # noqa: E731
    arg, out, aux = _results(sym, info, var_shape, shape)
    if not all(_known(s) for s in arg + out + aux):
        if partial:
            fix = lambda lst: [() if s is None else s for s in lst]  # noqa: E731
            return fix(arg), fix(out), fix(aux)
        unknown = [f"{n}: {s or ()}" for n, s in zip(sym.list_arguments(), arg) if not _known(s)]
        warnings.warn(
            "Cannot decide shape for the following arguments (0s in shape means unknown "
            "dimensions). Consider providing them as input:\n\t" + "\n\t".join(unknown),
            stacklevel=3,
        )
        return None, None, None
    return arg, out, aux


def infer_type(sym, args, kwargs):
    """``(arg_types, out_types, aux_types)`` as numpy type classes.

    Like MXNet, warns and returns ``(None, None, None)`` if an argument's type
    cannot be decided.
    """
    given = {k: v for k, v in _by_position(sym, args, kwargs).items() if v is not None}
    _check_names(sym, given)
    info, _, var_dtype = _walk(sym, {}, given)
    arg, out, aux = _results(sym, info, var_dtype, lambda o: o.dtype)
    if any(d is None for d in arg + out + aux):
        unknown = [f"{n}: None" for n, d in zip(sym.list_arguments(), arg) if d is None]
        warnings.warn(
            "Cannot decide type for the following arguments. Consider providing them as "
            "input:\n\t" + "\n\t".join(unknown),
            stacklevel=3,
        )
        return None, None, None
    conv = lambda lst: [np.dtype(d).type for d in lst]  # noqa: E731
    return conv(arg), conv(out), conv(aux)
