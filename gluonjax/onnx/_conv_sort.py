"""Converters of sorting, repeating and shape-like ops (static shapes from inference)."""

from __future__ import annotations

import numpy as np

from ._conv_nn import cast
from ._conv_shape import _static_target
from ._table import converter


def _axis_size(cx, node, axis):
    size = node.in_shapes[0][axis]
    if size == 0:
        raise cx.unsupported("a dynamic sort axis")
    return size


def _flat_axis(cx, node, axis):
    """``(tensor, axis)``: the input flattened when ``axis`` is None, as MXNet does."""
    x = node.inputs[0]
    if axis is None:
        return cx.add("Reshape", [x, cx.ints([-1], "shape")]), 0, int(np.prod(node.in_shapes[0]))
    axis %= len(node.in_shapes[0])
    return x, axis, _axis_size(cx, node, axis)


@converter("topk")
def topk(cx, node):
    a = node.attrs
    if a["ret_typ"] not in ("indices", "value", "both"):
        raise cx.unsupported(f"ret_typ {a['ret_typ']!r}")
    x, axis, size = _flat_axis(cx, node, a["axis"])
    k = a["k"] if a["k"] > 0 else size
    values, indices = cx.add(
        "TopK",
        [x, cx.ints([k], "k")],
        n_out=2,
        axis=axis,
        largest=int(not a["is_ascend"]),
        sorted=1,
    )
    if a["ret_typ"] == "value":
        cx.add("Identity", [values], node.outputs[:1])
    elif a["ret_typ"] == "indices":
        cast(cx, indices, a["dtype"], node.outputs[0])
        node.out_dtypes[0] = np.dtype(a["dtype"])
    else:
        cx.add("Identity", [values], node.outputs[:1])
        cast(cx, indices, a["dtype"], node.outputs[1])
        node.out_dtypes[1] = np.dtype(a["dtype"])


@converter("argsort", "sort")
def argsort(cx, node):
    a = node.attrs
    x, axis, size = _flat_axis(cx, node, a["axis"])
    values, indices = cx.add(
        "TopK",
        [x, cx.ints([size], "k")],
        n_out=2,
        axis=axis,
        largest=int(not a["is_ascend"]),
        sorted=1,
    )
    if node.op.name == "sort":
        cx.add("Identity", [values], node.outputs)
    else:
        cast(cx, indices, a["dtype"], node.outputs[0])
        node.out_dtypes[0] = np.dtype(a["dtype"])


@converter("repeat")
def repeat(cx, node):
    a = node.attrs
    x, axis, _ = _flat_axis(cx, node, a["axis"])
    rank = 1 if a["axis"] is None else len(node.in_shapes[0])
    expanded = cx.unsqueeze(x, [axis + 1])
    reps = [1] * (rank + 1)
    reps[axis + 1] = a["repeats"]
    tiled = cx.add("Tile", [expanded, cx.ints(reps, "repeats")])
    cx.add("Reshape", [tiled, cx.ints(_static_target(cx, node), "shape")], node.outputs)


@converter("reshape_like")
def reshape_like(cx, node):
    cx.add("Reshape", [node.inputs[0], cx.ints(_static_target(cx, node), "shape")], node.outputs)


@converter("slice_like")
def slice_like(cx, node):
    out = list(node.out_shapes[0])
    if 0 in out:
        raise cx.unsupported("slice_like to a dynamic shape")
    n = len(out)
    cx.add(
        "Slice",
        [
            node.inputs[0],
            cx.ints([0] * n, "starts"),
            cx.ints(out, "ends"),
            cx.ints(list(range(n)), "axes"),
        ],
        node.outputs,
    )


@converter("_split_v2")
def split_v2(cx, node):
    a = node.attrs
    rank = len(node.in_shapes[0])
    axis = a["axis"] % rank
    size = _axis_size(cx, node, axis)
    x = node.inputs[0]
    if a["sections"] > 0:
        bounds = [size * i // a["sections"] for i in range(a["sections"] + 1)]
    else:  # output i is [indices[i], indices[i + 1]) (the last one up to the end), as MXNet
        bounds = [int(i) for i in a["indices"]] + [size]
        if bounds[0]:
            x = cx.add(
                "Slice",
                [x, cx.ints([bounds[0]], "starts"), cx.ints([size], "ends"), cx.ints([axis])],
            )
    sizes = [hi - lo for lo, hi in zip(bounds[:-1], bounds[1:])]
    pieces = node.outputs if not a["squeeze_axis"] else [cx.fresh("piece") for _ in sizes]
    cx.split(x, sizes, axis, pieces)
    if a["squeeze_axis"]:
        for piece, out in zip(pieces, node.outputs):
            cx.squeeze(piece, [axis], out)


@converter("_linalg_gemm2")
def gemm2(cx, node):
    a = node.attrs
    rank = len(node.in_shapes[0])
    if a["axis"] % rank != rank - 2:
        raise cx.unsupported(f"axis={a['axis']} (the matrices in the last two axes)")
    lhs, rhs = node.inputs[:2]
    from ._conv_more import einsum_matmul

    prod = einsum_matmul(cx, node, lhs, rhs, rank, None)
    if prod:
        alpha = cx.const(a["alpha"], node.in_dtypes[0], hint="alpha")
        cx.add("Mul", [prod, alpha], node.outputs)
        return
    perm = list(range(rank))
    perm[-2:] = perm[-1], perm[-2]
    if a["transpose_a"]:
        lhs = cx.add("Transpose", [lhs], perm=perm)
    if a["transpose_b"]:
        rhs = cx.add("Transpose", [rhs], perm=perm)
    prod = cx.add("MatMul", [lhs, rhs])
    cx.add("Mul", [prod, cx.const(a["alpha"], node.in_dtypes[0], hint="alpha")], node.outputs)


@converter("_contrib_arange_like", "_arange")
def arange_like(cx, node):
    out = list(node.out_shapes[0])
    if 0 in out:
        raise cx.unsupported("arange_like of a dynamic shape")
    a = node.attrs
    n = int(np.prod(out))
    # arange(n) without stop counts from 0 to n, as range(n)
    start = 0 if node.op.name == "_arange" and a.get("stop") is None else a["start"]
    values = start + a["step"] * (np.arange(n) // a["repeat"])
    arr = values.reshape(out).astype(node.out_dtypes[0])
    cx.add("Identity", [cx.const(arr, hint="arange")], node.outputs)


@converter("gather_nd")
def gather_nd(cx, node):
    k = len(node.in_shapes[1])
    idx = cx.add("Cast", [node.inputs[1]], to=cx.onnx.TensorProto.INT64)
    if k > 1:  # MXNet's indices are (M, Y...); ONNX's (Y..., M)
        idx = cx.add("Transpose", [idx], perm=[*range(1, k), 0])
    cx.add("GatherND", [node.inputs[0], idx], node.outputs)


@converter("_rnn_param_concat")
def rnn_param_concat(cx, node):
    rank = len(node.in_shapes[0])
    cx.add("Concat", node.inputs, node.outputs, axis=node.attrs["dim"] % rank)


@converter("_contrib_div_sqrt_dim")
def div_sqrt_dim(cx, node):
    dim = node.in_shapes[0][-1]
    if dim == 0:
        raise cx.unsupported("a dynamic last axis")
    scale = cx.const(np.sqrt(dim), node.in_dtypes[0], hint="sqrt_dim")
    cx.add("Div", [node.inputs[0], scale], node.outputs)


def _mod(cx, lhs, rhs, dtype, out):
    """Python's (and MXNet's) modulo: the result has the divisor's sign."""
    if np.issubdtype(np.dtype(dtype), np.integer):
        # MXNet gives 0 for a zero divisor; ONNX Runtime's integer Mod would trap
        zero = cx.const(0, dtype)
        is_zero = cx.add("Equal", [rhs, zero])
        safe = cx.add("Where", [is_zero, cx.const(1, dtype), rhs])
        res = cx.add("Mod", [lhs, safe], fmod=0)
        return cx.add("Where", [is_zero, cx.add("Mul", [res, zero]), res], out)
    r = cx.add("Mod", [lhs, rhs], fmod=1)
    zero = cx.const(0, dtype)
    differ = cx.add("Xor", [cx.add("Less", [r, zero]), cx.add("Less", [rhs, zero])])
    fix = cx.add("And", [cx.add("Not", [cx.add("Equal", [r, zero])]), differ])
    return cx.add("Where", [fix, cx.add("Add", [r, rhs]), r], out)


@converter("broadcast_mod", "_mod")
def mod(cx, node):
    _mod(cx, node.inputs[0], node.inputs[1], node.in_dtypes[0], node.outputs[0])


@converter("_mod_scalar", "_rmod_scalar")
def mod_scalar(cx, node):
    dtype = node.in_dtypes[0]
    s = cx.const(node.attrs["scalar"], dtype, hint="scalar")
    args = (s, node.inputs[0]) if node.op.name == "_rmod_scalar" else (node.inputs[0], s)
    _mod(cx, *args, dtype, node.outputs[0])


@converter("SequenceMask")
def sequence_mask(cx, node):
    a = node.attrs
    if not a["use_sequence_length"]:
        cx.add("Identity", node.inputs[:1], node.outputs)
        return
    shape, dtype = node.in_shapes[0], node.in_dtypes[0]
    axis = a["axis"] % len(shape)
    if axis not in (0, 1) or shape[axis] == 0:
        raise cx.unsupported(f"axis {a['axis']} of a static length (axis 0 or 1)")
    steps = np.arange(shape[axis]).reshape([-1, 1] if axis == 0 else [1, -1])
    lengths = cx.add("Cast", [node.inputs[1]], to=cx.onnx.TensorProto.INT64)
    if axis == 1:  # (batch, time): lengths run along axis 0
        lengths = cx.unsqueeze(lengths, [1])
    keep = cx.add("Less", [cx.const(steps.astype(np.int64), hint="steps"), lengths])
    keep = cx.unsqueeze(keep, list(range(2, len(shape)))) if len(shape) > 2 else keep
    value = cx.const(a["value"], dtype, hint="value")
    cx.add("Where", [keep, node.inputs[0], value], node.outputs)
