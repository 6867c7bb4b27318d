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


@converter("broadcast_axis")
def broadcast_axis(cx, node):
    cx.add("Expand", [node.inputs[0], cx.ints(_static_target(cx, node), "shape")], node.outputs)


@converter("_split_v2")
def split_v2(cx, node):
    a = node.attrs
    rank = len(node.in_shapes[0])
    axis = a["axis"] % rank
    size = _axis_size(cx, node, axis)
    if a["sections"] > 0:
        bounds = [size * i // a["sections"] for i in range(a["sections"] + 1)]
    else:
        bounds = [0, *[int(i) for i in a["indices"] if i != 0], size]
    sizes = [hi - lo for lo, hi in zip(bounds[:-1], bounds[1:])]
    pieces = node.outputs if not a["squeeze_axis"] else [cx.fresh("piece") for _ in sizes]
    cx.split(node.inputs[0], sizes, axis, pieces)
    if a["squeeze_axis"]:
        for piece, out in zip(pieces, node.outputs):
            cx.squeeze(piece, [axis], out)


@converter("_linalg_gemm2")
def gemm2(cx, node):
    a = node.attrs
    rank = len(node.in_shapes[0])
    if a["axis"] % rank != rank - 2:
        raise cx.unsupported(f"axis={a['axis']} (the matrices in the last two axes)")
    perm = list(range(rank))
    perm[-2:] = perm[-1], perm[-2]
    lhs, rhs = node.inputs[:2]
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
    values = a["start"] + a["step"] * (np.arange(n) // a["repeat"])
    arr = values.reshape(out).astype(node.out_dtypes[0])
    cx.add("Identity", [cx.const(arr, hint="arange")], node.outputs)
