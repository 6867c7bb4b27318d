"""The ONNX importers of logic, indexing, layout and normalization ops."""

from __future__ import annotations

from ... import symbol as S
from ._import import importer
from ._import_dims import expand as expand_to
from ._import_dims import filled
from ._import_ops import _name

_CMP = {
    "Equal": "broadcast_equal",
    "Greater": "broadcast_greater",
    "Less": "broadcast_lesser",
    "GreaterOrEqual": "broadcast_greater_equal",
    "LessOrEqual": "broadcast_lesser_equal",
}
_LOGIC = {
    "And": "broadcast_logical_and",
    "Or": "broadcast_logical_or",
    "Xor": "broadcast_logical_xor",
}


# ONNX's comparisons and logic give booleans; MXNet's give 0/1 in the input's type. A
# boolean feeds only Cast, Where, Not and the logic ops in the graphs gluonjax reads, and
# each of them takes 0/1 as well, so 0/1 float32 stands for a boolean here.
@importer(*_CMP)
def compare(g, node):
    a, b = (S.Cast(g.sym(n), dtype="float32") for n in node.input[:2])
    return getattr(S, _CMP[node.op_type])(a, b, name=_name(node))


@importer(*_LOGIC)
def logic(g, node):
    a, b = (g.sym(n) for n in node.input[:2])
    return getattr(S, _LOGIC[node.op_type])(a, b, name=_name(node))


@importer("Not")
def not_(g, node):
    return S.logical_not(g.sym(node.input[0]), name=_name(node))


@importer("Where")
def where(g, node):
    cond, x, y = (g.sym(n) for n in node.input[:3])
    return S.where(S.broadcast_like(S.Cast(cond, dtype="float32"), x), x, y, name=_name(node))


@importer("HardSigmoid")
def hard_sigmoid(g, node):
    a = g.attrs(node)
    return S.hard_sigmoid(
        g.sym(node.input[0]),
        alpha=float(a.get("alpha", 0.2)),
        beta=float(a.get("beta", 0.5)),
        name=_name(node),
    )


@importer("InstanceNormalization")
def instance_norm(g, node):
    ins = [g.sym(n) for n in node.input[:3]]
    return S.InstanceNorm(*ins, eps=float(g.attrs(node).get("epsilon", 1e-5)), name=_name(node))


@importer("DepthToSpace", "SpaceToDepth")
def depth_space(g, node):
    a = g.attrs(node)
    if node.op_type == "DepthToSpace" and a.get("mode", b"DCR") not in (b"DCR", "DCR"):
        raise g.fail(f"mode {a['mode']!r} (MXNet's depth_to_space is DCR)")
    fn = S.depth_to_space if node.op_type == "DepthToSpace" else S.space_to_depth
    return fn(g.sym(node.input[0]), block_size=int(a["blocksize"]), name=_name(node))


@importer("Tile")
def tile(g, node):
    reps = g.need_const(node.input[1], "repeats")
    return S.tile(g.sym(node.input[0]), reps=tuple(int(r) for r in reps), name=_name(node))


@importer("Shape")
def shape(g, node):
    a = g.attrs(node)
    if a.get("start", 0) or a.get("end") is not None:
        raise g.fail("Shape with start or end")
    g.shape_of[node.output[0]] = node.input[0]
    return S.Cast(S.shape_array(g.sym(node.input[0])), dtype="int64", name=_name(node))


@importer("Expand")
def expand(g, node):
    if node.input[1] in g.shape_of:  # Expand(x, Shape(y)): x broadcast like y
        like = g.sym(g.shape_of[node.input[1]])
        return S.broadcast_like(g.sym(node.input[0]), like, name=_name(node))
    return expand_to(g, g.sym(node.input[0]), g.rank(node.input[0]), node.input[1], _name(node))


@importer("Pad")
def pad(g, node):
    a = g.attrs(node)
    mode = a.get("mode", b"constant")
    mode = mode.decode() if isinstance(mode, bytes) else mode
    pads = g.need_const(node.input[1], "pads").tolist() if len(node.input) > 1 else list(a["pads"])
    value = 0.0
    if len(node.input) > 2 and node.input[2]:
        value = float(g.need_const(node.input[2], "constant_value"))
    n = len(pads) // 2
    width = tuple(v for pair in zip(pads[:n], pads[n:]) for v in pair)
    return S.pad(
        g.sym(node.input[0]), mode=mode, pad_width=width, constant_value=value, name=_name(node)
    )


@importer("ArgMax", "ArgMin")
def arg_reduce(g, node):
    a = g.attrs(node)
    if a.get("select_last_index", 0):
        raise g.fail("select_last_index=1")
    fn = S.argmax if node.op_type == "ArgMax" else S.argmin
    out = fn(g.sym(node.input[0]), axis=int(a.get("axis", 0)), keepdims=bool(a.get("keepdims", 1)))
    return S.Cast(out, dtype="int64", name=_name(node))


@importer("Gather")
def gather(g, node):
    axis = int(g.attrs(node).get("axis", 0))
    # ONNX counts a negative index from the end: MXNet's take(mode='wrap')
    return S.take(
        g.sym(node.input[0]), g.sym(node.input[1]), axis=axis, mode="wrap", name=_name(node)
    )


@importer("ReduceL1", "ReduceL2")
def norm(g, node):
    a = g.attrs(node)
    axes = a.get("axes")
    if len(node.input) > 1 and node.input[1]:
        axes = g.need_const(node.input[1], "axes").tolist()
    ord_ = 1 if node.op_type == "ReduceL1" else 2
    x = g.sym(node.input[0])
    keep = bool(a.get("keepdims", 1))
    axis = tuple(int(v) for v in axes) if axes else tuple(range(g.rank(node.input[0])))
    return S.norm(x, ord=ord_, axis=axis, keepdims=keep, name=_name(node))


def _text(value, default):
    value = default if value is None else value
    return value.decode() if isinstance(value, bytes) else value


# ONNX's coordinate modes that MXNet's BilinearResize2D computes: ``align_corners``, and
# ``(dst + 0.5) * in / out - 0.5`` clamped at 0 (``half_pixel``; PyTorch's form differs
# only for an output of size 1)
_LINEAR_MODES = {"align_corners": True, "half_pixel": False, "pytorch_half_pixel": False}


def _resize_linear(g, node, a):
    coords = _text(a.get("coordinate_transformation_mode"), "half_pixel")
    if coords not in _LINEAR_MODES:
        raise g.fail(f"linear Resize with coordinate_transformation_mode {coords!r}")
    shape = g.need_shape(node.input[0], "Resize's input")
    if len(shape) != 4:
        raise g.fail(f"linear Resize of a {len(shape)}-d input (2-d images, NCHW, import)")
    sizes = g.const(node.input[3]) if len(node.input) > 3 and node.input[3] else None
    scales = g.const(node.input[2]) if len(node.input) > 2 and node.input[2] else None
    if sizes is not None and sizes.size:
        out = [int(v) for v in sizes]
    elif scales is not None and scales.size:
        out = [int(n * float(s)) for n, s in zip(shape, scales)]
    elif node.output[0] in g.shapes:  # sizes computed in the graph: shape inference's
        out = list(g.shapes[node.output[0]])
    else:
        raise g.fail("linear Resize whose sizes or scales are known only at run time")
    if out[:2] != list(shape[:2]):
        raise g.fail(f"linear Resize of the batch or channel axis ({shape} -> {out})")
    if coords == "pytorch_half_pixel" and 1 in out[2:]:
        raise g.fail("pytorch_half_pixel Resize to a size of 1")
    return S.contrib.BilinearResize2D(
        g.sym(node.input[0]),
        height=out[2],
        width=out[3],
        align_corners=_LINEAR_MODES[coords],
        name=_name(node),
    )


@importer("Resize")
def resize(g, node):
    a = g.attrs(node)
    mode = _text(a.get("mode"), "nearest")
    if mode == "linear":
        return _resize_linear(g, node, a)
    scales = g.const(node.input[2]) if len(node.input) > 2 and node.input[2] else None
    if mode != "nearest" or scales is None:
        raise g.fail(f"{mode} Resize (nearest with constant scales and linear import)")
    s = [float(v) for v in scales]
    if s[:2] != [1.0, 1.0] or len(set(s[2:])) != 1 or s[2] != int(s[2]):
        raise g.fail(f"scales {s} (one integer scale of the spatial axes)")
    return S.UpSampling(
        g.sym(node.input[0]), scale=int(s[2]), sample_type="nearest", num_args=1, name=_name(node)
    )


@importer("TopK")
def topk(g, node):
    a = g.attrs(node)
    k = int(g.need_const(node.input[1], "k").reshape(-1)[0])
    if not a.get("sorted", 1):
        raise g.fail("sorted=0")
    out = S.topk(
        g.sym(node.input[0]),
        k=k,
        axis=int(a.get("axis", -1)),
        ret_typ="both",
        is_ascend=not a.get("largest", 1),
        dtype="int64",
        name=_name(node),
    )
    return [out[0], out[1]]


@importer("OneHot")
def one_hot(g, node):
    a = g.attrs(node)
    if a.get("axis", -1) not in (-1, g.rank(node.input[0])):
        raise g.fail(f"axis={a['axis']} (MXNet's one_hot appends the new axis)")
    depth = int(g.need_const(node.input[1], "depth").reshape(-1)[0])
    off, on = (float(v) for v in g.need_const(node.input[2], "values").reshape(-1)[:2])
    idx = g.sym(node.input[0])
    # ONNX counts a negative index from the end; MXNet gives it no hot entry
    idx = S.where(S._lesser_scalar(idx, scalar=0), S._plus_scalar(idx, scalar=depth), idx)
    dtype = g.const(node.input[2]).dtype.name
    return S.one_hot(idx, depth=depth, on_value=on, off_value=off, dtype=dtype, name=_name(node))


@importer("GatherND")
def gather_nd(g, node):
    if g.attrs(node).get("batch_dims", 0):
        raise g.fail("batch_dims != 0")
    k = g.rank(node.input[1])
    idx = g.sym(node.input[1])
    if k > 1:  # ONNX's indices are (Y..., M); MXNet's (M, Y...)
        idx = S.transpose(idx, axes=(k - 1, *range(k - 1)))
    return S.gather_nd(g.sym(node.input[0]), idx, name=_name(node))


@importer("Mod")
def mod(g, node):
    a, b = g.sym(node.input[0]), g.sym(node.input[1])
    if not g.attrs(node).get("fmod", 0):  # the divisor's sign: MXNet's mod
        return S.broadcast_mod(a, b, name=_name(node))
    quotient = S.trunc(S.broadcast_div(a, b))  # C's fmod: the dividend's sign
    return S.broadcast_sub(a, S.broadcast_mul(quotient, b), name=_name(node))


@importer("ConstantOfShape")
def constant_of_shape(g, node):
    from onnx import numpy_helper

    attr = next((x for x in node.attribute if x.name == "value"), None)
    value = numpy_helper.to_array(attr.t).reshape(-1) if attr is not None else None
    fill = float(value[0]) if value is not None else 0.0
    dtype = value.dtype.name if value is not None else "float32"
    if node.input[0] in g.shape_of:  # the shape of a tensor: a tensor like it
        like = S.zeros_like(g.sym(g.shape_of[node.input[0]]))
        return S.Cast(S._plus_scalar(like, scalar=fill), dtype=dtype, name=_name(node))
    return filled(g, node.input[0], fill, dtype, _name(node))
