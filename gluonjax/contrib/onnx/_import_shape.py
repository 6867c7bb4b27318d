"""The ONNX importers of the elementwise, shape, reduction and softmax ops."""

from __future__ import annotations

import numpy as np

from ... import symbol as S
from ._import import importer
from ._import_dims import reshape_target
from ._import_ops import _name


@importer("Flatten")
def flatten(g, node):
    axis = g.attrs(node).get("axis", 1)
    x = g.sym(node.input[0])
    if axis == 1:
        return S.Flatten(x, name=_name(node))
    if axis == 0:
        return S.reshape(x, shape=(1, -1), name=_name(node))
    axis %= g.rank(node.input[0])
    lead = S.reshape(x, shape=tuple([0] * axis) + (-1,))
    for _ in range(axis - 1):  # merge the leading axes pairwise
        lead = S.reshape(lead, shape=(-3, -2))
    return S.identity(lead, name=_name(node))


@importer("Concat")
def concat(g, node):
    ins = [g.sym(n) for n in node.input]
    return S.Concat(*ins, dim=int(g.attrs(node)["axis"]), num_args=len(ins), name=_name(node))


_BIN = {
    "Add": ("broadcast_add", "_plus_scalar", "_plus_scalar"),
    "Sub": ("broadcast_sub", "_minus_scalar", "_rminus_scalar"),
    "Mul": ("broadcast_mul", "_mul_scalar", "_mul_scalar"),
    "Div": ("broadcast_div", "_div_scalar", "_rdiv_scalar"),
    "Pow": ("broadcast_power", "_power_scalar", "_rpower_scalar"),
    "Max": ("broadcast_maximum", "_maximum_scalar", "_maximum_scalar"),
    "Min": ("broadcast_minimum", "_minimum_scalar", "_minimum_scalar"),
}


@importer(*_BIN)
def binary(g, node):
    if len(node.input) != 2:
        if node.op_type in ("Max", "Min") and len(node.input) > 2:
            raise g.fail(f"{node.op_type} of {len(node.input)} inputs")
        if len(node.input) == 1:
            return S.identity(g.sym(node.input[0]), name=_name(node))
    tensor_op, scalar_op, rscalar_op = _BIN[node.op_type]
    lc, rc = g.const(node.input[0]), g.const(node.input[1])
    if rc is not None and rc.size == 1 and rc.ndim <= 1 and node.input[0] not in g.consts:
        return getattr(S, scalar_op)(g.sym(node.input[0]), scalar=rc.item(), name=_name(node))
    if lc is not None and lc.size == 1 and lc.ndim <= 1 and node.input[1] not in g.consts:
        return getattr(S, rscalar_op)(g.sym(node.input[1]), scalar=lc.item(), name=_name(node))
    return getattr(S, tensor_op)(g.sym(node.input[0]), g.sym(node.input[1]), name=_name(node))


@importer("Sum")
def sum_(g, node):
    ins = [g.sym(n) for n in node.input]
    return S.add_n(*ins, num_args=len(ins), name=_name(node))


@importer("Identity", "Dropout")
def identity(g, node):
    out = S.identity(g.sym(node.input[0]), name=_name(node))
    if len(node.output) > 1 and node.output[1]:
        return [out, S.ones_like(g.sym(node.input[0]))]
    return out


@importer("Reshape")
def reshape(g, node):
    if g.attrs(node).get("allowzero", 0):
        raise g.fail("allowzero=1")
    if node.input[1] in g.shape_of:  # Reshape(x, Shape(y)): x in y's shape
        like = g.sym(g.shape_of[node.input[1]])
        return S.reshape_like(g.sym(node.input[0]), like, name=_name(node))
    shape = reshape_target(g, node.input[0], node.input[1])
    return S.reshape(g.sym(node.input[0]), shape=shape, name=_name(node))


@importer("Transpose")
def transpose(g, node):
    perm = g.attrs(node).get("perm")
    return S.transpose(g.sym(node.input[0]), axes=tuple(perm or ()), name=_name(node))


def _softmax(g, node, fn):
    a = g.attrs(node)
    axis = int(a.get("axis", -1 if g.opset >= 13 else 1))
    if g.opset < 13:  # the old Softmax flattens at axis: the same only on the last axis
        rank = g.rank(node.input[0])
        if axis % rank != rank - 1:
            raise g.fail(f"opset {g.opset} {node.op_type} on axis {axis} of a rank-{rank} input")
    return fn(g.sym(node.input[0]), axis=axis, name=_name(node))


@importer("Softmax")
def softmax(g, node):
    return _softmax(g, node, S.softmax)


@importer("LogSoftmax")
def log_softmax(g, node):
    return _softmax(g, node, S.log_softmax)


@importer("Clip")
def clip(g, node):
    a = g.attrs(node)
    lo, hi = a.get("min", -np.inf), a.get("max", np.inf)
    if len(node.input) > 1 and node.input[1]:
        lo = g.need_const(node.input[1], "min").item()
    if len(node.input) > 2 and node.input[2]:
        hi = g.need_const(node.input[2], "max").item()
    return S.clip(g.sym(node.input[0]), a_min=float(lo), a_max=float(hi), name=_name(node))


@importer("Cast")
def cast(g, node):
    from onnx import helper

    dtype = helper.tensor_dtype_to_np_dtype(g.attrs(node)["to"])
    return S.Cast(g.sym(node.input[0]), dtype=np.dtype(dtype).name, name=_name(node))


_REDUCE = {
    "ReduceSum": "sum",
    "ReduceMean": "mean",
    "ReduceMax": "max",
    "ReduceMin": "min",
    "ReduceProd": "prod",
}


@importer(*_REDUCE)
def reduce(g, node):
    a = g.attrs(node)
    axes = a.get("axes")
    if len(node.input) > 1 and node.input[1]:
        axes = g.need_const(node.input[1], "axes").tolist()
    keep = bool(a.get("keepdims", 1))
    fn = getattr(S, _REDUCE[node.op_type])
    x = g.sym(node.input[0])
    if not axes:
        if a.get("noop_with_empty_axes", 0):
            return S.identity(x, name=_name(node))
        if keep:
            return fn(x, axis=tuple(range(g.rank(node.input[0]))), keepdims=True, name=_name(node))
        return fn(x, name=_name(node))
    return fn(x, axis=tuple(int(v) for v in axes), keepdims=keep, name=_name(node))


def _axes(g, node):
    a = g.attrs(node)
    if len(node.input) > 1 and node.input[1]:
        return [int(v) for v in g.need_const(node.input[1], "axes")]
    return list(a.get("axes", []))


@importer("Unsqueeze")
def unsqueeze(g, node):
    x = g.sym(node.input[0])
    axes = _axes(g, node)
    rank = g.rank(node.input[0]) + len(axes) if any(v < 0 for v in axes) else 0
    for ax in sorted(v % rank if v < 0 else v for v in axes):
        x = S.expand_dims(x, axis=ax)
    return S.identity(x, name=_name(node))


@importer("Squeeze")
def squeeze(g, node):
    axes = _axes(g, node)
    x = g.sym(node.input[0])
    return S.squeeze(x, axis=tuple(axes) if axes else None, name=_name(node))


@importer("Slice")
def slice_(g, node):
    starts = g.need_const(node.input[1], "starts").tolist()
    ends = g.need_const(node.input[2], "ends").tolist()
    axes = (
        g.need_const(node.input[3], "axes").tolist()
        if len(node.input) > 3 and node.input[3]
        else list(range(len(starts)))
    )
    steps = (
        g.need_const(node.input[4], "steps").tolist()
        if len(node.input) > 4 and node.input[4]
        else [1] * len(starts)
    )
    x = g.sym(node.input[0])
    big = np.iinfo(np.int64).max // 2
    if any(s != 1 for s in steps):  # one slice with begin/end/step per axis
        rank = g.rank(node.input[0])
        begin, end, step = [None] * rank, [None] * rank, [None] * rank
        for b, e, ax, st in zip(starts, ends, axes, steps):
            ax %= rank
            begin[ax] = int(b) if abs(b) < big else None
            end[ax] = int(e) if abs(e) < big else None
            step[ax] = int(st)
        return S.slice(x, begin=tuple(begin), end=tuple(end), step=tuple(step), name=_name(node))
    for b, e, ax in zip(starts, ends, axes):
        x = S.slice_axis(x, axis=int(ax), begin=int(b), end=None if e >= big else int(e))
    return S.identity(x, name=_name(node))


_UNARY = {
    "Exp": "exp",
    "Log": "log",
    "Sqrt": "sqrt",
    "Abs": "abs",
    "Neg": "negative",
    "Reciprocal": "reciprocal",
    "Floor": "floor",
    "Ceil": "ceil",
    "Sin": "sin",
    "Cos": "cos",
    "Tan": "tan",
    "Asin": "arcsin",
    "Acos": "arccos",
    "Atan": "arctan",
    "Sinh": "sinh",
    "Cosh": "cosh",
    "Asinh": "arcsinh",
    "Acosh": "arccosh",
    "Atanh": "arctanh",
    "Erf": "erf",
    "Sign": "sign",
}


@importer(*_UNARY)
def unary(g, node):
    return getattr(S, _UNARY[node.op_type])(g.sym(node.input[0]), name=_name(node))


@importer("LRN")
def lrn(g, node):
    a = g.attrs(node)
    return S.LRN(
        g.sym(node.input[0]),
        nsize=int(a["size"]),
        alpha=float(a.get("alpha", 1e-4)),
        beta=float(a.get("beta", 0.75)),
        knorm=float(a.get("bias", 1.0)),
        name=_name(node),
    )


@importer("Split")
def split(g, node):
    a = g.attrs(node)
    axis = int(a.get("axis", 0))
    n = len(node.output)
    sizes = a.get("split")
    if len(node.input) > 1 and node.input[1]:
        sizes = g.need_const(node.input[1], "split").tolist()
    x = g.sym(node.input[0])
    if sizes and len(set(sizes)) != 1:  # unequal (maybe empty) pieces: MXNet's split_v2
        starts = np.cumsum([0, *sizes[:-1]]).tolist()
        out = S._internal._split_v2(
            x, indices=tuple(int(v) for v in starts), axis=axis, name=_name(node)
        )
        return [out[i] for i in range(n)]
    out = S.SliceChannel(x, num_outputs=n, axis=axis, name=_name(node))
    return [out[i] for i in range(n)]
