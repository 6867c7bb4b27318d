"""Converters of further ops: logic, indexing, creation, normalization, layout."""

from __future__ import annotations

import numpy as np

from ._conv_nn import cast
from ._conv_shape import _static_target
from ._table import converter

_LOGIC = {"logical_and": "And", "logical_or": "Or", "logical_xor": "Xor"}


def _as_bool(cx, x):
    return cx.add("Cast", [x], to=cx.onnx.TensorProto.BOOL)


@converter(*[f"broadcast_{k}" for k in _LOGIC], *[f"_{k}_scalar" for k in _LOGIC])
def logical(cx, node):
    name = node.op.name
    base = name.replace("broadcast_", "").replace("_scalar", "").lstrip("_")
    dtype = node.in_dtypes[0]
    if name.endswith("_scalar"):
        rhs = cx.const(node.attrs["scalar"], dtype, hint="scalar")
    else:
        rhs = node.inputs[1]
    res = cx.add(_LOGIC[base], [_as_bool(cx, node.inputs[0]), _as_bool(cx, rhs)])
    cast(cx, res, dtype, node.outputs[0])


@converter("logical_not")
def logical_not(cx, node):
    cast(cx, cx.add("Not", [_as_bool(cx, node.inputs[0])]), node.in_dtypes[0], node.outputs[0])


@converter("hard_sigmoid")
def hard_sigmoid(cx, node):
    a = node.attrs
    cx.add(
        "HardSigmoid", node.inputs[:1], node.outputs, alpha=float(a["alpha"]), beta=float(a["beta"])
    )


@converter("log2", "log10")
def log_base(cx, node):
    base = 2.0 if node.op.name == "log2" else 10.0
    ln = cx.add("Log", node.inputs[:1])
    cx.add("Div", [ln, cx.const(np.log(base), node.in_dtypes[0])], node.outputs)


@converter("broadcast_to", "broadcast_axis")
def broadcast_to(cx, node):
    cx.add("Expand", [node.inputs[0], cx.ints(_static_target(cx, node), "shape")], node.outputs)


@converter("broadcast_like")
def broadcast_like(cx, node):
    a = node.attrs
    if a["lhs_axes"] or a["rhs_axes"]:
        target = cx.ints(_static_target(cx, node), "shape")
    else:
        target = cx.add("Shape", [node.inputs[1]])
    cx.add("Expand", [node.inputs[0], target], node.outputs)


@converter("tile")
def tile(cx, node):
    reps, x = list(node.attrs["reps"]), node.inputs[0]
    rank = len(node.in_shapes[0])
    if len(reps) < rank:
        reps = [1] * (rank - len(reps)) + reps
    elif len(reps) > rank:
        x = cx.unsqueeze(x, list(range(len(reps) - rank)))
    cx.add("Tile", [x, cx.ints(reps, "repeats")], node.outputs)


@converter("where")
def where(cx, node):
    cond = _as_bool(cx, node.inputs[0])
    extra = len(node.in_shapes[1]) - len(node.in_shapes[0])
    if extra > 0:  # a condition per row (MXNet's where on the first axis)
        rank = len(node.in_shapes[1])
        cond = cx.unsqueeze(cond, list(range(rank - extra, rank)))
    cx.add("Where", [cond, *node.inputs[1:3]], node.outputs)
    node.out_dtypes[0] = node.in_dtypes[1]


@converter("dot")
def dot(cx, node):
    a = node.attrs
    (ls, rs), (lhs, rhs) = node.in_shapes[:2], node.inputs[:2]
    if len(ls) != 2 or len(rs) != 2:
        if a["transpose_a"] or a["transpose_b"] or 0 in ls or 0 in rs:
            raise cx.unsupported("a transposed or dynamic dot of more than 2 dimensions")
        k = ls[-1]
        lhs = cx.add("Reshape", [lhs, cx.ints([-1, k], "shape")])
        rhs = cx.add("Reshape", [rhs, cx.ints([k, -1], "shape")])
        flat = cx.add("MatMul", [lhs, rhs])
        cx.add("Reshape", [flat, cx.ints(_static_target(cx, node), "shape")], node.outputs)
        return
    if a["transpose_a"]:
        lhs = cx.add("Transpose", [lhs], perm=[1, 0])
    if a["transpose_b"]:
        rhs = cx.add("Transpose", [rhs], perm=[1, 0])
    cx.add("MatMul", [lhs, rhs], node.outputs)


def einsum_matmul(cx, node, lhs, rhs, rank, out):
    """A float64 product with a transposed operand as one Einsum (ONNX Runtime fuses
    Transpose into MatMul as FusedMatMul, which has no float64 kernel); False otherwise."""
    a = node.attrs
    if not (a["transpose_a"] or a["transpose_b"]) or np.dtype(node.in_dtypes[0]) != np.float64:
        return False
    batch = "abcdefgh"[: rank - 2]
    left = batch + ("ji" if a["transpose_a"] else "ij")
    right = batch + ("kj" if a["transpose_b"] else "jk")
    return cx.add("Einsum", [lhs, rhs], out, equation=f"{left},{right}->{batch}ik")


@converter("batch_dot")
def batch_dot(cx, node):
    a = node.attrs
    lhs, rhs = node.inputs[:2]
    rank = len(node.in_shapes[0])
    if einsum_matmul(cx, node, lhs, rhs, rank, node.outputs[0]):
        return
    perm = list(range(rank))
    perm[-2:] = perm[-1], perm[-2]
    if a["transpose_a"]:
        lhs = cx.add("Transpose", [lhs], perm=perm)
    if a["transpose_b"]:
        rhs = cx.add("Transpose", [rhs], perm=perm)
    cx.add("MatMul", [lhs, rhs], node.outputs)


@converter("SwapAxis")
def swap_axis(cx, node):
    rank = len(node.in_shapes[0])
    perm = list(range(rank))
    i, j = node.attrs["dim1"] % rank, node.attrs["dim2"] % rank
    perm[i], perm[j] = perm[j], perm[i]
    cx.add("Transpose", node.inputs[:1], node.outputs, perm=perm)


def _indices(cx, idx, size, mode):
    """int64 indices into an axis of ``size``: clipped, or wrapped (``mode='wrap'``)."""
    idx = cx.add("Cast", [idx], to=cx.onnx.TensorProto.INT64)
    if mode == "wrap":
        n = cx.const(np.int64(size))
        return cx.add("Mod", [cx.add("Add", [cx.add("Mod", [idx, n]), n]), n])
    return cx.add("Clip", [idx, cx.const(np.int64(0)), cx.const(np.int64(size - 1))])


@converter("Embedding")
def embedding(cx, node):
    idx = _indices(cx, node.inputs[0], node.attrs["input_dim"], "clip")
    cx.add("Gather", [node.inputs[1], idx], node.outputs, axis=0)
    node.out_dtypes[0] = node.in_dtypes[1]  # the weight's type


@converter("take")
def take(cx, node):
    a = node.attrs
    rank = len(node.in_shapes[0])
    axis = a["axis"] % rank
    size = node.in_shapes[0][axis]
    if size == 0:
        raise cx.unsupported("take along a dynamic axis")
    mode = "clip" if a["mode"] == "raise" else a["mode"]  # graphs cannot raise: clip
    idx = _indices(cx, node.inputs[1], size, mode)
    cx.add("Gather", [node.inputs[0], idx], node.outputs, axis=axis)


@converter("one_hot")
def one_hot(cx, node):
    a = node.attrs
    idx = cx.add("Cast", [node.inputs[0]], to=cx.onnx.TensorProto.INT64)
    depth = cx.const(np.int64(a["depth"]))
    # MXNet: a negative index is all off_value; ONNX counts it from the end: move it out
    idx = cx.add("Where", [cx.add("Less", [idx, cx.const(np.int64(0))]), depth, idx])
    values = cx.const(np.asarray([a["off_value"], a["on_value"]], np.float32), hint="values")
    res = cx.add("OneHot", [idx, depth, values], axis=-1)
    cast(cx, res, a["dtype"], node.outputs[0])


@converter("argmax", "argmin")
def arg_reduce(cx, node):
    a = node.attrs
    x, axis = node.inputs[0], a["axis"]
    op_type = "ArgMax" if node.op.name == "argmax" else "ArgMin"
    if axis is None:  # over the flattened input, in MXNet's output shape
        flat = cx.add("Reshape", [x, cx.ints([-1], "shape")])
        res = cx.add(op_type, [flat], axis=0, keepdims=1)
        res = cx.add("Reshape", [res, cx.ints(_static_target(cx, node), "shape")])
    else:
        res = cx.add(op_type, [x], axis=int(axis), keepdims=int(a["keepdims"]))
    cast(cx, res, node.out_dtypes[0], node.outputs[0])


@converter("shape_array")
def shape_array(cx, node):
    cast(cx, cx.add("Shape", node.inputs[:1]), node.out_dtypes[0], node.outputs[0])


@converter("size_array")
def size_array(cx, node):
    size = cx.add("Reshape", [cx.add("Size", node.inputs[:1]), cx.ints([1], "shape")])
    cast(cx, size, node.out_dtypes[0], node.outputs[0])


@converter("_zeros", "_ones", "_full")
def filled(cx, node):
    a = node.attrs
    value = {"_zeros": 0, "_ones": 1}.get(node.op.name, a.get("value"))
    arr = np.full(tuple(a["shape"]), value, dtype=np.dtype(a["dtype"]))
    cx.add("Identity", [cx.const(arr, hint="filled")], node.outputs)


@converter("norm")
def norm(cx, node):
    a = node.attrs
    if a["ord"] not in (1, 2):
        raise cx.unsupported(f"ord={a['ord']}")
    axis = a["axis"]
    rank = len(node.in_shapes[0])
    axes = (
        None if axis is None else [ax % rank for ax in ((axis,) if isinstance(axis, int) else axis)]
    )
    op_type = "ReduceL1" if a["ord"] == 1 else "ReduceL2"
    out = node.outputs[0] if a["out_dtype"] is None else cx.fresh("norm")
    if axes is None and not a["keepdims"] and len(node.out_shapes[0]) == 1:
        total = cx.reduce(op_type, node.inputs[0], None, False)
        cx.add("Reshape", [total, cx.ints([1], "shape")], out)
    else:
        cx.reduce(op_type, node.inputs[0], axes, a["keepdims"], out)
    if a["out_dtype"] is not None:
        cast(cx, out, a["out_dtype"], node.outputs[0])


@converter("Pad")
def pad(cx, node):
    a = node.attrs
    mode = {"constant": "constant", "edge": "edge", "reflect": "reflect"}.get(a["mode"])
    if mode is None:
        raise cx.unsupported(f"mode {a['mode']!r}")
    width = list(a["pad_width"])
    pads = width[0::2] + width[1::2]
    inputs = [node.inputs[0], cx.ints(pads, "pads")]
    if mode == "constant":
        inputs.append(cx.const(a["constant_value"], node.in_dtypes[0], hint="value"))
    cx.add("Pad", inputs, node.outputs, mode=mode)


@converter("L2Normalization")
def l2_normalization(cx, node):
    a = node.attrs
    rank = len(node.in_shapes[0])
    axes = {"instance": list(range(1, rank)), "channel": [1], "spatial": list(range(2, rank))}
    if a["mode"] not in axes:
        raise cx.unsupported(f"mode {a['mode']!r}")
    x, dtype = node.inputs[0], node.in_dtypes[0]
    sq = cx.reduce("ReduceSum", cx.add("Mul", [x, x]), axes[a["mode"]], True)
    denom = cx.add("Sqrt", [cx.add("Add", [sq, cx.const(a["eps"], dtype)])])
    cx.add("Div", [x, denom], node.outputs[:1])


@converter("InstanceNorm")
def instance_norm(cx, node):
    cx.add(
        "InstanceNormalization", node.inputs[:3], node.outputs[:1], epsilon=float(node.attrs["eps"])
    )


@converter("LayerNorm")
def layer_norm(cx, node):
    a = node.attrs
    if a["output_mean_var"]:
        raise cx.unsupported("output_mean_var=True")
    rank = len(node.in_shapes[0])
    axis = a["axis"] % rank
    x, gamma, beta = node.inputs[:3]
    dtype = node.in_dtypes[0]
    mean = cx.reduce("ReduceMean", x, [axis], True)
    d = cx.add("Sub", [x, mean])
    var = cx.reduce("ReduceMean", cx.add("Mul", [d, d]), [axis], True)
    y = cx.add("Div", [d, cx.add("Sqrt", [cx.add("Add", [var, cx.const(a["eps"], dtype)])])])
    if axis != rank - 1:
        shape = cx.ints([-1] + [1] * (rank - 1 - axis), "shape")
        gamma = cx.add("Reshape", [gamma, shape])
        beta = cx.add("Reshape", [beta, shape])
    cx.add("Add", [cx.add("Mul", [y, gamma]), beta], node.outputs[:1])


# the regression outputs keep their label as an (unused) graph input, as MXNet's exporter
# does (only SoftmaxOutput's label is dropped)


@converter("LogisticRegressionOutput")
def logistic_output(cx, node):
    cx.add("Sigmoid", node.inputs[:1], node.outputs)


@converter("LinearRegressionOutput", "MAERegressionOutput")
def regression_output(cx, node):
    cx.add("Identity", node.inputs[:1], node.outputs)


@converter("depth_to_space", "space_to_depth")
def depth_space(cx, node):
    op_type = "DepthToSpace" if node.op.name == "depth_to_space" else "SpaceToDepth"
    extra = {"mode": "DCR"} if op_type == "DepthToSpace" else {}
    cx.add(op_type, node.inputs[:1], node.outputs, blocksize=int(node.attrs["block_size"]), **extra)


@converter("UpSampling")
def upsampling(cx, node):
    a = node.attrs
    if a["sample_type"] != "nearest" or len(node.inputs) != 1:
        raise cx.unsupported(f"sample_type {a['sample_type']!r} with {len(node.inputs)} input(s)")
    rank = len(node.in_shapes[0])
    scales = cx.const(np.asarray([1.0, 1.0] + [float(a["scale"])] * (rank - 2), np.float32))
    roi = cx.const(np.zeros(0, np.float32), hint="roi") if cx.opset < 13 else ""
    cx.add(
        "Resize",
        [node.inputs[0], roi, scales],
        node.outputs,
        mode="nearest",
        nearest_mode="floor",
        coordinate_transformation_mode="asymmetric",
    )


@converter("reverse")
def reverse(cx, node):
    rank = len(node.in_shapes[0])
    axes = [ax % rank for ax in node.attrs["axis"]]
    big = np.iinfo(np.int64).max
    n = len(axes)
    cx.add(
        "Slice",
        [
            node.inputs[0],
            cx.ints([-1] * n, "starts"),
            cx.ints([-big] * n, "ends"),
            cx.ints(axes, "axes"),
            cx.ints([-1] * n, "steps"),
        ],
        node.outputs,
    )
