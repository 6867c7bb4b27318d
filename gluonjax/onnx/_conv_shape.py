"""Converters of the shape ops (reshape, transpose, concat, slicing, axes)."""

from __future__ import annotations

from ._context import INT64_MAX
from ._table import converter


def _static_target(cx, node):
    """The inferred output shape as a Reshape target; one dynamic axis becomes -1."""
    out = [int(d) for d in node.out_shapes[0]]
    dynamic = [i for i, d in enumerate(out) if d == 0]
    if len(dynamic) > 1:
        raise cx.unsupported(f"a reshape to {tuple(out)} with several dynamic axes")
    for i in dynamic:
        out[i] = -1
    return out


@converter("Reshape")
def reshape(cx, node):
    a = node.attrs
    codes = list(a["shape"])
    if codes and not a["reverse"] and not any(a["target_shape"]) and all(c >= -1 for c in codes):
        target = codes  # 0 (copy) and -1 (infer) mean the same in ONNX's Reshape
        if codes.count(-1) > 1:
            target = _static_target(cx, node)
    else:  # -2, -3, -4, reverse, target_shape: the inferred shape
        target = _static_target(cx, node)
    cx.add("Reshape", [node.inputs[0], cx.ints(target, "shape")], node.outputs)


@converter("Flatten")
def flatten(cx, node):
    cx.add("Flatten", node.inputs[:1], node.outputs, axis=1)


@converter("Concat")
def concat(cx, node):
    rank = len(node.in_shapes[0])
    cx.add("Concat", node.inputs, node.outputs, axis=node.attrs["dim"] % rank)


@converter("stack")
def stack(cx, node):
    rank = len(node.in_shapes[0]) + 1
    axis = node.attrs["axis"] % rank
    parts = [cx.unsqueeze(x, [axis]) for x in node.inputs]
    cx.add("Concat", parts, node.outputs, axis=axis)


@converter("transpose")
def transpose(cx, node):
    axes = list(node.attrs["axes"])
    rank = len(node.in_shapes[0])
    perm = [ax % rank for ax in axes] if axes else list(reversed(range(rank)))
    cx.add("Transpose", node.inputs[:1], node.outputs, perm=perm)


@converter("expand_dims")
def expand_dims(cx, node):
    rank = len(node.in_shapes[0]) + 1
    cx.unsqueeze(node.inputs[0], [node.attrs["axis"] % rank], node.outputs[0])


@converter("squeeze")
def squeeze(cx, node):
    axis = node.attrs["axis"]
    rank = len(node.in_shapes[0])
    if isinstance(axis, int):
        axis = (axis,)
    if axis is not None:
        axis = [ax % rank for ax in axis]
    elif len(node.out_shapes[0]) == 1 and all(d == 1 for d in node.in_shapes[0]):
        # MXNet keeps one axis when every axis is squeezed away
        cx.add("Reshape", [node.inputs[0], cx.ints([1], "shape")], node.outputs)
        return
    cx.squeeze(node.inputs[0], axis, node.outputs[0])


@converter("slice_axis")
def slice_axis(cx, node):
    a = node.attrs
    rank = len(node.in_shapes[0])
    end = INT64_MAX if a["end"] is None else a["end"]
    cx.add(
        "Slice",
        [
            node.inputs[0],
            cx.ints([a["begin"]], "starts"),
            cx.ints([end], "ends"),
            cx.ints([a["axis"] % rank], "axes"),
        ],
        node.outputs,
    )


@converter("slice")
def slice_(cx, node):
    a = node.attrs
    begin, end = list(a["begin"]), list(a["end"])
    step = list(a["step"]) or [None] * len(begin)
    starts, ends, axes, steps = [], [], [], []
    for ax, (b, e, s) in enumerate(zip(begin, end, step)):
        s = 1 if s is None else int(s)
        if s == 0:
            raise cx.unsupported("step 0")
        if b is None:
            b = 0 if s > 0 else -1
        if e is None:
            e = INT64_MAX if s > 0 else -INT64_MAX
        starts.append(b)
        ends.append(e)
        axes.append(ax)
        steps.append(s)
    cx.add(
        "Slice",
        [
            node.inputs[0],
            cx.ints(starts, "starts"),
            cx.ints(ends, "ends"),
            cx.ints(axes, "axes"),
            cx.ints(steps, "steps"),
        ],
        node.outputs,
    )


@converter("SliceChannel")
def slice_channel(cx, node):
    a = node.attrs
    rank = len(node.in_shapes[0])
    axis, n = a["axis"] % rank, a["num_outputs"]
    size = node.in_shapes[0][axis]
    if size == 0:
        raise cx.unsupported("splitting a dynamic axis")
    pieces = node.outputs if not a["squeeze_axis"] else [cx.fresh("piece") for _ in range(n)]
    cx.split(node.inputs[0], [size // n] * n, axis, pieces)
    if a["squeeze_axis"]:
        for piece, out in zip(pieces, node.outputs):
            cx.squeeze(piece, [axis], out)


@converter("zeros_like", "ones_like")
def fill_like(cx, node):
    value = 0 if node.op.name == "zeros_like" else 1
    cx.fill_like(node.inputs[0], value, node.in_dtypes[0], node.outputs[0])


@converter("_getitem")
def getitem(cx, node):
    from .._ops.defs.getitem import parse_key

    key = parse_key(node.attrs["key"])
    if any(k[0] == "a" for k in key):
        raise cx.unsupported("indexing with an index array")
    rank = len(node.in_shapes[0])
    starts, ends, axes, steps = [], [], [], []
    axis = 0
    for k in key:
        tag = k[0]
        if tag == "e":
            axis += rank - sum(1 for j in key if j[0] in ("s", "i"))
        elif tag == "i":
            i = int(k[1])
            starts.append(i)
            ends.append(INT64_MAX if i == -1 else i + 1)
            axes.append(axis)
            steps.append(1)
            axis += 1
        elif tag == "s":
            step = 1 if k[3] is None else int(k[3])
            starts.append((0 if step > 0 else -1) if k[1] is None else int(k[1]))
            ends.append((INT64_MAX if step > 0 else -INT64_MAX) if k[2] is None else int(k[2]))
            axes.append(axis)
            steps.append(step)
            axis += 1
    x = node.inputs[0]
    if axes:
        x = cx.add(
            "Slice",
            [
                x,
                cx.ints(starts, "starts"),
                cx.ints(ends, "ends"),
                cx.ints(axes, "axes"),
                cx.ints(steps, "steps"),
            ],
        )
    # integer indices drop their axes, None adds one: the inferred shape says the result
    cx.add("Reshape", [x, cx.ints(_static_target(cx, node), "shape")], node.outputs)
