"""The shape and dtype passes over a symbol graph (used by :mod:`._infer`).

Shapes here are partial: ``None`` is an unknown shape, ``-1`` an unknown dimension.
Like MXNet's InferShape pass, shapes flow over the graph forward and backward
until nothing changes:

- forward, an op's outputs come from ``jax.eval_shape`` of its implementation
  once its input shapes are known; when only some dimensions are unknown the op
  is evaluated twice with different sizes in their place, and the output
  dimensions that do not move are known (``dot`` of ``(0, 3, 4)`` and ``(4, 5)``
  is ``(0, 3, 5)``);
- parameter inputs (weights, biases, BatchNorm statistics) come from the op's
  ``infer_args`` rule, probed the same way;
- the partial rules of :mod:`gluonjax._ops.shape_rules` fill unknown dimensions
  from the other side of an op (an output back to its inputs).

Two shapes that disagree raise :class:`ShapeInferenceError` naming the node.
Dtypes flow forward only: an op's output takes its ``dtype`` attribute where it
has one, else its first typed input's dtype.
"""

from __future__ import annotations

import jax
import numpy as np

from .._caches import LRU
from .._ops.graph import topo
from .._ops.registry import dtype_of, same_dtype_inputs
from .._ops.shape_rules import ShapeConflict, is_known, merge, rule_for
from ..base import DTypeError, MXNetError

__all__ = ["ShapeInferenceError", "infer_shapes", "infer_dtypes", "is_known"]

# sizes put in place of unknown dimensions to see which output dimensions depend on them
_PROBES = (53, 61)
_MAX_ROUNDS = 8


class ShapeInferenceError(MXNetError, ValueError):
    """Shapes in a symbol graph that contradict each other (or an op that rejects them)."""


# ---------------------------------------------------------------- evaluation
# (op, attributes, input shapes/dtypes) -> output shapes/dtypes, or a failure message
_CACHE = LRU(4096, "symbol shape inference")


def _eval(node, shapes, dtypes):
    """``[(shape, dtype)]`` of every output of ``node`` for fully known input shapes."""
    op = node.op
    try:
        key = (op.name, node.static_key, node.dyn, tuple(shapes), tuple(d.str for d in dtypes))
        hash(key)
    except TypeError:
        key = None
    hit = _CACHE.get(key) if key is not None else None
    if hit is not None:
        if isinstance(hit, str):  # a failure, kept as its message (no traceback kept alive)
            raise ShapeInferenceError(hit)
        return hit
    vals = [jax.ShapeDtypeStruct(s, d) for s, d in zip(shapes, dtypes, strict=True)]
    if op.random:
        vals[0:0] = [jax.ShapeDtypeStruct((2,), np.uint32), jax.ShapeDtypeStruct((), np.uint32)]
    vals.extend(node.dyn)
    try:
        res = jax.eval_shape(op.kernel(node.static_key), *vals)
    except Exception as err:  # noqa: BLE001  (any failure of the op on these shapes)
        detail = str(err).split("\n")[0]
        shown = ", ".join(str(tuple(s)) for s in shapes)
        failure = ShapeInferenceError(
            f"shape inference failed at node '{node.name}' ({op.name}) with input shapes "
            f"[{shown}]: {detail}"
        )
        if key is not None:
            _CACHE.put(key, str(failure))
        raise failure from None
    if op.aux_names(node.attr_dict()):
        res = res[0]
    res = list(res) if isinstance(res, (tuple, list)) else [res]
    out = [(tuple(int(d) for d in r.shape), np.dtype(r.dtype)) for r in res]
    if key is not None:
        _CACHE.put(key, out)
    return out


def _combine(a, b):
    """Dims that agree between two probe results; others unknown."""
    if a is None or b is None or len(a) != len(b):
        return None
    return tuple(x if x == y else -1 for x, y in zip(a, b, strict=True))


def _probed(shapes, size):
    return [tuple(size if d < 0 else d for d in s) for s in shapes]


def _forward(node, ins, dtypes):
    """Output shapes from input shapes (known, or with unknown dims probed), or None."""
    if all(is_known(s) for s in ins):
        return [s for s, _ in _eval(node, ins, dtypes)]
    if any(s is None for s in ins):
        return None
    runs = []
    for size in _PROBES:
        try:
            runs.append([s for s, _ in _eval(node, _probed(ins, size), dtypes)])
        except ShapeInferenceError:
            return None
    return [_combine(a, b) for a, b in zip(*runs, strict=True)]


def _param_shapes(node, attrs, names, ins):
    """{input name: shape} from the op's ``infer_args``, unknown dims probed."""
    given = {n: s for n, s in zip(names, ins, strict=False) if s is not None}
    if "data" not in given and names and names[0] not in given:
        return {}
    runs = []
    for size in _PROBES:
        probed = {n: _probed([s], size)[0] for n, s in given.items()}
        try:
            runs.append(node.op.infer_args(attrs, probed))
        except (KeyError, IndexError, TypeError, ValueError, ZeroDivisionError, MXNetError):
            return {}
    first, second = runs
    return {n: _combine(tuple(s), tuple(second.get(n, ()))) for n, s in first.items()}


# ---------------------------------------------------------------- shape pass
class _Plan:
    __slots__ = ("node", "attrs", "names", "rule", "replaces", "entries")

    def __init__(self, node):
        self.node = node
        self.attrs = node.attr_dict()
        self.names = node.op.input_names(self.attrs, len(node.inputs))
        self.rule, self.replaces = rule_for(node.op)
        self.entries = [(id(s), i) for s, i in node.inputs]


def _conflict(node, what, old, new, err):
    return ShapeInferenceError(
        f"Error in operator {node.name} ({node.op.name}): Shape inconsistent for {what}, "
        f"Provided = {_show(old)}, inferred shape = {_show(new)} ({err})"
    )


def _show(shape):
    if shape is None:
        return "unknown"
    return "(" + ",".join("?" if d < 0 else str(d) for d in shape) + ")"


def _step(plan, shape, dtypes):
    """Refine the shapes around one op node; True if anything changed."""
    node = plan.node
    ins = [shape.get(e) for e in plan.entries]
    out_entries = [(id(node), i) for i in range(node.num_outputs)]
    outs = [shape.get(e) for e in out_entries]
    new_ins, new_outs = list(ins), list(outs)

    def put(lst, k, value, what):
        try:
            lst[k] = merge(lst[k], value)
        except ShapeConflict as err:
            raise _conflict(node, what, lst[k], value, err) from None

    if node.op.infer_args is not None and not all(is_known(s) for s in ins):
        filled = _param_shapes(node, plan.attrs, plan.names, new_ins)
        for k, n in enumerate(plan.names):
            if filled.get(n) is not None:
                put(new_ins, k, filled[n], f"input '{n}'")
    if plan.rule is not None:
        try:
            r_ins, r_outs = plan.rule(plan.attrs, plan.names, new_ins, new_outs)
        except ShapeConflict as err:
            raise ShapeInferenceError(
                f"Error in operator {node.name} ({node.op.name}): {err}"
            ) from None
        for k, s in enumerate(r_ins):
            put(new_ins, k, s, f"input '{plan.names[k]}'" if k < len(plan.names) else "input")
        for i, s in enumerate(r_outs):
            put(new_outs, i, s, f"output {i}")
    if not plan.replaces:
        in_dtypes = [dtypes.get(e) or _F32 for e in plan.entries]
        res = _forward(node, new_ins, in_dtypes)
        for i, s in enumerate(res or ()):
            if i < len(new_outs):
                put(new_outs, i, s, f"output {i}")
    changed = False
    for entries, olds, news, kind in (
        (plan.entries, ins, new_ins, "input"),
        (out_entries, outs, new_outs, "output"),
    ):
        for k, (e, old, new) in enumerate(zip(entries, olds, news, strict=True)):
            if new == old:
                continue
            try:
                merged = merge(shape.get(e), new)
            except ShapeConflict as err:
                raise _conflict(node, f"{kind} {k}", shape.get(e), new, err) from None
            if merged != shape.get(e):
                shape[e] = merged
                changed = True
    return changed


_F32 = np.dtype(np.float32)


def infer_shapes(sym, var_shapes, dtypes=None):
    """``{(id(node), output index): partial shape}`` for every entry of ``sym``'s graph.

    Parameters
    ----------
    sym : Symbol
    var_shapes : dict
        ``{variable name: partial shape}`` (None/-1 for unknowns).
    dtypes : dict, optional
        Entry dtypes (from :func:`infer_dtypes`) used when evaluating ops.
    """
    nodes = topo(sym._outputs)
    shape = {}
    for n in nodes:
        if n.op is None:
            s = var_shapes.get(n.name)
            if s is not None:
                shape[(id(n), 0)] = tuple(s)
    plans = [_Plan(n) for n in nodes if n.op is not None]
    order = plans + plans[::-1]
    done = set()
    for _ in range(_MAX_ROUNDS):
        changed = False
        for plan in order:
            if id(plan) in done:
                continue
            changed |= _step(plan, shape, dtypes or {})
            node = plan.node
            around = [shape.get(e) for e in plan.entries]
            around += [shape.get((id(node), i)) for i in range(node.num_outputs)]
            if all(is_known(s) for s in around):
                done.add(id(plan))
        if not changed:
            break
    return shape


# ---------------------------------------------------------------- dtype pass
# ops whose ``dtype`` attribute is their output dtype
_DTYPE_OUT = ("Cast", "amp_cast", "one_hot", "Embedding")
_INT64_OUT = ("shape_array", "size_array")
# MXNet keeps these parameters in float32 when the data is float16
_F32_PARAMS = {
    n: ("gamma", "beta", "moving_mean", "moving_var")
    for n in ("BatchNorm", "BatchNorm_v1", "_contrib_SyncBatchNorm", "_contrib_BatchNormWithReLU")
}


def _out_dtypes(op, node, attrs, ref):
    """Each output's dtype: most ops give their data's; the exceptions are MXNet's."""
    n = node.num_outputs
    name = op.name
    if name in _INT64_OUT:
        return [np.dtype(np.int64)] * n
    dt = attrs.get("dtype")
    if name in ("argsort", "topk"):  # the indices take ``dtype``; values the data's
        idx = dtype_of(dt or "float32")
        if name == "argsort" or attrs.get("ret_typ") == "indices":
            return [idx] * n
        return [ref, idx] if attrs.get("ret_typ") == "both" else [ref] * n
    if name == "_sample_multinomial":  # the draws, then (get_prob) their log-likelihoods
        return [dtype_of(dt or "int32"), ref][:n]
    if op.random and (not node.inputs or name.startswith("_sample_")):
        # draws default to float32 (randint int32); Dropout and *_like keep the data's
        return [dtype_of(dt or ("int32" if name == "_random_randint" else "float32"))] * n
    if name in _DTYPE_OUT or not node.inputs:
        return [dtype_of(dt) if dt else ref] * n
    if name in ("softmax", "log_softmax", "softmin") and dt:
        return [dtype_of(dt)] * n
    return [ref] * n


def _in_dtype(op, attrs, name, ref):
    """The dtype an untyped variable input ``name`` takes, given the data dtype ``ref``."""
    if op.name == "Embedding" and name == "weight":
        return dtype_of(attrs["dtype"])
    if ref is not None and ref == np.float16 and name in _F32_PARAMS.get(op.name, ()):
        return np.dtype(np.float32)
    return ref


def infer_dtypes(sym, var_dtypes):
    """``{(id(node), output index): numpy dtype or None}`` over ``sym``'s graph.

    Variables take ``var_dtypes[name]``, else their ``__dtype__`` attribute, else
    the dtype the op they feed gives them (the data's dtype; float32 for
    BatchNorm statistics of float16 data, ``dtype`` for an Embedding weight).
    """
    from ._json import dtype_from_attr

    dtypes = {}
    for node in topo(sym._outputs):
        if node.op is None:
            if node.name in var_dtypes:
                dtypes[(id(node), 0)] = dtype_of(var_dtypes[node.name])
            elif node.extra.get("__dtype__"):
                dtypes[(id(node), 0)] = dtype_from_attr(node.extra["__dtype__"])
            continue
        op, attrs = node.op, node.attr_dict()
        names = op.input_names(attrs, len(node.inputs))
        ins = [(id(s), i) for s, i in node.inputs]
        ref = next((dtypes[e] for e in ins if dtypes.get(e) is not None), None)
        for (src, _), e, n in zip(node.inputs, ins, names, strict=False):
            if dtypes.get(e) is None and src.op is None:
                dtypes[e] = _in_dtype(op, attrs, n, ref)
        if len(ins) > 1 and same_dtype_inputs(op):
            known = [dtypes.get(e) for e in ins]
            if len({d for d in known if d is not None}) > 1:
                shown = {n: None if d is None else np.dtype(d).name for n, d in zip(names, known)}
                raise DTypeError(
                    f"type inference failed at node '{node.name}' ({op.name}): its inputs must "
                    f"have one dtype (as in MXNet), got {shown}; cast one of them "
                    f"(sym.Cast(x, dtype=...)) or give the variables one dtype"
                )
        for i, out in enumerate(_out_dtypes(op, node, attrs, ref)):
            dtypes[(id(node), i)] = out
    return dtypes
